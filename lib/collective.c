/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public collective entry points: argument checks shared by every
 * algorithm, then hand-off to the algorithm's module.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void ftc_coll_args_init(ftc_coll_args_t *a)
{
    if (a == NULL)
        return;
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->algo = FTC_ALGO_CORRECTED;
    a->root = 0;
    a->f = 1;
    a->dtype = FTC_INT32;
    a->op = FTC_SUM;
    a->fault_info = FTC_FAULT_LIST;
    a->correction = FTC_CORRECTION_CHECKED;
    a->distance = 2;
    a->bcast_tree.kind = FTC_TREE_BINOMIAL;
    a->bcast_tree.k = 2;
}

const char *ftc_coll_name(ftc_coll_t coll)
{
    switch (coll) {
    case FTC_COLL_REDUCE: return "reduce";
    case FTC_COLL_BCAST: return "bcast";
    case FTC_COLL_ALLREDUCE: return "allreduce";
    case FTC_COLL_FINALIZE: return "finalize";
    }
    return "?";
}

const char *ftc_algo_name(ftc_algo_t algo)
{
    switch (algo) {
    case FTC_ALGO_CORRECTED: return "corrected";
    case FTC_ALGO_TREE: return "tree";
    }
    return "?";
}

int ftc_algo_parse(const char *name, ftc_algo_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    if (strcmp(name, "corrected") == 0)
        *out = FTC_ALGO_CORRECTED;
    else if (strcmp(name, "tree") == 0)
        *out = FTC_ALGO_TREE;
    else
        return FTC_EINVAL;
    return FTC_OK;
}

int ftc_fault_info_parse(const char *name, ftc_fault_info_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    if (strcmp(name, "list") == 0)
        *out = FTC_FAULT_LIST;
    else if (strcmp(name, "count") == 0)
        *out = FTC_FAULT_COUNT;
    else if (strcmp(name, "bit") == 0)
        *out = FTC_FAULT_BIT;
    else
        return FTC_EINVAL;
    return FTC_OK;
}

int ftc_correction_parse(const char *name, ftc_correction_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    if (strcmp(name, "opportunistic") == 0)
        *out = FTC_CORRECTION_OPPORTUNISTIC;
    else if (strcmp(name, "checked") == 0)
        *out = FTC_CORRECTION_CHECKED;
    else
        return FTC_EINVAL;
    return FTC_OK;
}

static int check_args(const ftc_group_t *g, const ftc_coll_args_t *a,
                      ftc_coll_t coll)
{
    if (g == NULL || a == NULL || a->size != sizeof(ftc_coll_args_t))
        return FTC_EINVAL;
    if (a->deliver == NULL || a->checked > 1)
        return FTC_EINVAL;
    if (a->algo != FTC_ALGO_CORRECTED && a->algo != FTC_ALGO_TREE)
        return FTC_EINVAL;
    if (a->root >= g->n || a->f >= g->n)
        return FTC_EINVAL;
    size_t esize = ftc_dtype_size(a->dtype);
    if (esize == 0)
        return FTC_EINVAL;
    if (a->count > FTC_WIRE_MAX_PAYLOAD / 4 / esize)
        return FTC_EOVERFLOW; /* value plus an accepted copy must fit */
    if (coll != FTC_COLL_BCAST) {
        int rc = ftc_op_check(a->op, a->dtype, a->user_fn);
        if (rc != FTC_OK)
            return rc;
    }
    bool is_root = g->me == a->root;
    bool needs_input = coll != FTC_COLL_BCAST || is_root;
    bool needs_output = coll != FTC_COLL_REDUCE || is_root;
    if (a->count > 0 && needs_input && a->sendbuf == NULL)
        return FTC_EINVAL;
    if (a->count > 0 && needs_output && a->recvbuf == NULL)
        return FTC_EINVAL;
    if (a->algo == FTC_ALGO_CORRECTED && coll != FTC_COLL_BCAST) {
        if (a->fault_info != FTC_FAULT_LIST && a->fault_info != FTC_FAULT_COUNT
            && a->fault_info != FTC_FAULT_BIT)
            return FTC_EINVAL;
    }
    if (coll != FTC_COLL_REDUCE) {
        if (ftc_tree_check(&a->bcast_tree) != FTC_OK)
            return FTC_EINVAL;
        if (a->algo == FTC_ALGO_CORRECTED) {
            if (a->correction != FTC_CORRECTION_OPPORTUNISTIC
                && a->correction != FTC_CORRECTION_CHECKED)
                return FTC_EINVAL;
            if (a->correction == FTC_CORRECTION_OPPORTUNISTIC
                && a->distance == 0 && g->n > 1)
                return FTC_EINVAL;
        }
    }
    return FTC_OK;
}

int ftc_op_setup(ftc_group_t *g, const ftc_coll_args_t *args, ftc_coll_t coll,
                 ftc_cop_t *op, const ftc_op_vtable_t *vt)
{
    op->vt = vt;
    op->group = g;
    op->coll = coll;
    op->args = *args;
    op->args.sendbuf = NULL;
    op->seq = g->next_seq;
    op->nbytes = (size_t)args->count * ftc_dtype_size(args->dtype);
    uint32_t variant = args->algo == FTC_ALGO_CORRECTED
                           ? (uint32_t)args->fault_info << 8
                                 | (uint32_t)args->correction << 4
                           : 0;
    uint32_t bcast_variant = coll == FTC_COLL_REDUCE
                                 ? 0
                                 : (uint32_t)args->bcast_tree.kind << 16
                                       ^ args->bcast_tree.k << 20
                                       ^ (args->correction
                                                  == FTC_CORRECTION_OPPORTUNISTIC
                                              ? args->distance << 24
                                              : 0);
    op->signature = ftc_wire_signature(
        (uint32_t)coll, (uint32_t)args->algo,
        args->root, args->f,
        (uint32_t)args->dtype, coll == FTC_COLL_BCAST ? 0 : (uint32_t)args->op,
        args->count, variant ^ bcast_variant ^ (args->checked ? 1u << 30 : 0));
    op->comp.status = FTC_OK;
    op->comp.recvbuf = args->recvbuf;
    op->comp.stats.root = args->root;
    return FTC_OK;
}

void ftc_op_register(ftc_cop_t *op)
{
    ftc_group_t *g = op->group;
    g->next_seq++;
    op->next = g->ops;
    op->prev = NULL;
    if (g->ops != NULL)
        g->ops->prev = op;
    g->ops = op;
}

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

void *ftc_op_new(ftc_group_t *g, size_t size, size_t space)
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
    } else {
        block = malloc(total);
        if (block == NULL)
            return NULL;
    }
    memset(block, 0, size);
    ftc_cop_t *op = (ftc_cop_t *)block;
    op->group = g;
    op->mem_block = total;
    op->mem_next = block + head;
    op->mem_end = block + total;
    return block;
}

void ftc_op_delete(ftc_cop_t *op)
{
    ftc_group_t *g = op->group;
    ftc_op_free_storage(op);
    /* Keep the larger block: it fits more kinds of operation. */
    if (g->spare_op == NULL || g->spare_op_size < op->mem_block) {
        free(g->spare_op);
        g->spare_op = op;
        g->spare_op_size = op->mem_block;
        return;
    }
    free(op);
}

void *ftc_op_alloc_chunk(ftc_cop_t *op, size_t n)
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

void *ftc_op_zalloc(ftc_cop_t *op, size_t n)
{
    void *p = ftc_op_alloc(op, n);
    if (p != NULL)
        memset(p, 0, n > 0 ? n : 1);
    return p;
}

void ftc_op_free_storage(ftc_cop_t *op)
{
    if (op->deadline != 0) {
        op->group->ctx->timed_ops--;
        op->deadline = 0;
    }
    free(op->comp_failed);
    op->comp_failed = NULL;
    while (op->mem_chunks != NULL) {
        ftc_mem_chunk_t *c = op->mem_chunks;
        op->mem_chunks = c->h.next;
        free(c);
    }
    op->mem_next = op->mem_end = NULL;
}

static uint32_t bit_length(uint32_t x)
{
    uint32_t b = 0;
    for (; x != 0; x >>= 1)
        b++;
    return b;
}

uint32_t *ftc_op_tree_children(ftc_cop_t *op, const ftc_tree_t *tree,
                               uint32_t n, uint32_t r, uint32_t *count)
{
    /* Through the stack, so that one pass through the topology gives
     * both the count and the list (a second only for a wide node). */
    uint32_t tmp[64];
    uint32_t k = ftc_tree_children(tree, n, r, tmp, 64);
    uint32_t *c = ftc_op_alloc(op, sizeof(uint32_t) * k);
    if (c == NULL)
        return NULL;
    if (k <= 64)
        memcpy(c, tmp, sizeof(uint32_t) * k);
    else
        k = ftc_tree_children(tree, n, r, c, k);
    *count = k;
    return c;
}

uint32_t ftc_tree_children_guess(const ftc_tree_t *tree, uint32_t n)
{
    /* Most ranks of a binomial or Lame tree have a child or two, only a
     * few near the root have log2(n): plan for few, and let those take
     * a chunk, rather than give every operation room for log2(n). */
    uint32_t b = ftc_tree_children_bound(tree, n);
    return b < 4 ? b : 4;
}

uint32_t ftc_tree_children_bound(const ftc_tree_t *tree, uint32_t n)
{
    switch (tree->kind) {
    case FTC_TREE_KARY:
        return tree->k;
    case FTC_TREE_IF:
        return tree->k >= 1 ? tree->k + 1 : 2;
    default:
        /* Binomial: at most log2(n) rounded up; Lame trees are shallower
         * and wider, and an underestimate only costs a chunk. */
        return bit_length(n);
    }
}

/* Start the operation itself (no checked-mode pairing). */
static int start_op(ftc_group_t *g, const ftc_coll_args_t *args,
                    ftc_coll_t coll, ftc_cop_t **op)
{
    if (args->algo == FTC_ALGO_TREE)
        return ftc_tree_op_create(g, args, coll, op);
    if (coll == FTC_COLL_REDUCE)
        return ftc_reduce_op_create(g, args, op);
    if (coll == FTC_COLL_BCAST)
        return ftc_bcast_op_create(g, args, op);
    return ftc_allreduce_op_create(g, args, op);
}

static int init_common(ftc_group_t *g, const ftc_coll_args_t *args,
                       ftc_coll_t coll, uint64_t *seq)
{
    if (g == NULL)
        return FTC_EINVAL;
    if (g->ctx->excluded)
        return FTC_EEXCLUDED;
    /* A caller built against an older, smaller struct: the fields it
     * knows, defaults (zero) for the rest. */
    ftc_coll_args_t full;
    if (args != NULL && args->size >= FTC_COLL_ARGS_SIZE_0_1
        && args->size < sizeof(full)) {
        memset(&full, 0, sizeof(full));
        memcpy(&full, args, args->size);
        full.size = sizeof(full);
        args = &full;
    }
    /* A checked call takes two places; a refused one too, so that the
     * sequence stays aligned with the members whose call went through. */
    bool checked = args != NULL && args->size == sizeof(*args)
                   && args->checked == 1;
    int rc = check_args(g, args, coll);
    ftc_cop_t *op = NULL;
    uint64_t my_seq = g->next_seq;
    if (rc == FTC_OK)
        rc = checked ? ftc_checked_start(g, args, coll, start_op, &op)
                     : start_op(g, args, coll, &op);
    if (rc != FTC_OK) {
        /* The peers started (or will start) this operation: it takes its
         * place in the sequence here too, and they learn that it ended
         * (FTC_EPEER_INVALID), instead of waiting on this process for
         * ever (docs/semantics.md, "Usage errors between peers"). */
        while (g->next_seq < my_seq + (checked ? 2 : 1))
            ftc_group_refused(g, rc);
        ftc_ctx_after_init(g->ctx);
        return rc;
    }
    ftc_op_started(op);
    if (seq != NULL)
        *seq = my_seq;
    ftc_ctx_after_init(g->ctx);
    return FTC_OK;
}

int ftc_init_reduce(ftc_group_t *group, const ftc_coll_args_t *args,
                    uint64_t *seq)
{
    return init_common(group, args, FTC_COLL_REDUCE, seq);
}

int ftc_init_bcast(ftc_group_t *group, const ftc_coll_args_t *args,
                   uint64_t *seq)
{
    return init_common(group, args, FTC_COLL_BCAST, seq);
}

int ftc_init_allreduce(ftc_group_t *group, const ftc_coll_args_t *args,
                       uint64_t *seq)
{
    return init_common(group, args, FTC_COLL_ALLREDUCE, seq);
}
