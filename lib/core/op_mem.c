/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An operation's memory: one block for the operation and its buffers,
 * chunks beyond it, kept by the group for the next operation (core/op.h
 * says why).
 */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"


/* A chunk of operation memory taken when the first space ran out; the
 * header is padded so that what follows is aligned for any type. */
typedef struct ftc_mem_chunk {
    union {
        struct ftc_mem_chunk *next;
        max_align_t align;
    } h;
} ftc_mem_chunk_t;

/* Smallest chunk taken: a few later allocations fit in it too. */
enum { MEM_CHUNK_MIN = 256 };

void *ftc_cop_new(ftc_group_t *g, size_t size, size_t space)
{
    return ftc_cop_new_prefix(g, size, size, space);
}

void *ftc_cop_new_prefix(ftc_group_t *g, size_t size, size_t zeroed,
                         size_t space)
{
    size_t head = ftc_mem_round(size);
    space = ftc_mem_round(space);
    if (space > SIZE_MAX - head)
        return NULL;
    size_t total = head + space;
    uint8_t *block;
    if (g->spare_op != NULL && g->spare_op_size >= total) {
        block = g->spare_op;
        total = g->spare_op_size;
        g->spare_op = NULL;
        g->spare_is_template = false;
    } else {
        block = malloc(total);
        if (block == NULL)
            return NULL;
    }
    if (zeroed < sizeof(ftc_cop_t))
        zeroed = sizeof(ftc_cop_t);
    memset(block, 0, zeroed < size ? zeroed : size);
    ftc_cop_t *op = (ftc_cop_t *)block;
    op->group = g;
    op->mem_block = total;
    op->mem_next = block + head;
    op->mem_end = block + total;
    return block;
}

static void delete_op(ftc_cop_t *op, bool as_template)
{
    ftc_group_t *g = op->group;
    ftc_cop_free_storage(op);
    /* Keep the larger block: it fits more kinds of operation. */
    if (g->spare_op == NULL) {
        g->spare_op = op;       /* the common case: the block just taken */
        g->spare_op_size = op->mem_block;
        g->spare_is_template = as_template;
        return;
    }
    if (g->spare_op_size < op->mem_block) {
        free(g->spare_op);
        g->spare_op = op;
        g->spare_op_size = op->mem_block;
        g->spare_is_template = as_template;
        return;
    }
    free(op);
}

void ftc_cop_delete(ftc_cop_t *op)
{
    delete_op(op, false);
}

void ftc_cop_delete_template(ftc_cop_t *op)
{
    delete_op(op, true);
}

void *ftc_cop_alloc_chunk(ftc_cop_t *op, size_t n)
{
    size_t need = ftc_mem_round(n > 0 ? n : 1);
    if (need < n)
        return NULL;
    size_t size = need > MEM_CHUNK_MIN ? need : MEM_CHUNK_MIN;
    if (size > SIZE_MAX - sizeof(ftc_mem_chunk_t))
        return NULL;
    ftc_mem_chunk_t *c = malloc(sizeof(*c) + size);
    if (c == NULL)
        return NULL;
    c->h.next = op->mem_chunks;
    op->mem_chunks = c;
    uint8_t *p = (uint8_t *)(c + 1);
    /* Keep carving from whichever block has more room left. */
    if (op->mem_next == NULL
        || size - need > (size_t)(op->mem_end - op->mem_next)) {
        op->mem_next = p + need;
        op->mem_end = p + size;
    }
    return p;
}

void *ftc_cop_zalloc_big(ftc_cop_t *op, size_t n)
{
    void *p = ftc_cop_alloc(op, n);
    if (p != NULL)
        memset(p, 0, n > 0 ? n : 1);
    return p;
}

void ftc_cop_free_storage(ftc_cop_t *op)
{
    ftc_cop_timeout_cancel(op);
    ftc_cop_timer_cancel(op);
    if (op->comp_failed != NULL) {
        free(op->comp_failed);
        op->comp_failed = NULL;
    }
    while (op->mem_chunks != NULL) {
        ftc_mem_chunk_t *c = op->mem_chunks;
        op->mem_chunks = c->h.next;
        free(c);
    }
    op->mem_next = op->mem_end = NULL;
}
