/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pre-order positions (preorder.h).
 */
#include <stdlib.h>

#include "algo/ftco/preorder.h"

/* x's children into local (64) or a buffer the caller frees; NULL when
 * out of memory. */
static uint32_t *children(const ftc_tree_t *tree, uint32_t n, uint32_t x,
                          uint32_t *local, uint32_t *cnt)
{
    *cnt = ftc_tree_children(tree, n, x, local, 64);
    if (*cnt <= 64)
        return local;
    uint32_t *list = malloc(sizeof(uint32_t) * *cnt);
    if (list != NULL)
        (void)ftc_tree_children(tree, n, x, list, *cnt);
    return list;
}

uint32_t ftco_preorder_pos(const ftc_tree_t *tree, uint32_t n, uint32_t x)
{
    /* From x up: at each step, the parent's position plus one plus the
     * subtrees of the siblings before. */
    uint64_t pos = 0;
    while (x != 0) {
        uint32_t parent = (uint32_t)ftc_tree_parent(tree, n, x);
        uint32_t local[64], cnt;
        uint32_t *kids = children(tree, n, parent, local, &cnt);
        if (kids == NULL)
            return UINT32_MAX;
        pos += 1;
        for (uint32_t i = 0; i < cnt && kids[i] != x; i++)
            pos += ftc_tree_subtree_size(tree, n, kids[i]);
        if (kids != local)
            free(kids);
        x = parent;
    }
    return (uint32_t)pos;
}

uint32_t ftco_preorder_rank(const ftc_tree_t *tree, uint32_t n, uint32_t p)
{
    uint32_t x = 0;
    uint64_t at = 0; /* x's position */
    while (at != p) {
        uint32_t local[64], cnt;
        uint32_t *kids = children(tree, n, x, local, &cnt);
        if (kids == NULL)
            return UINT32_MAX;
        uint64_t first = at + 1;
        uint32_t next = UINT32_MAX;
        for (uint32_t i = 0; i < cnt; i++) {
            uint64_t size = ftc_tree_subtree_size(tree, n, kids[i]);
            if (p < first + size) {
                next = kids[i];
                break;
            }
            first += size;
        }
        if (kids != local)
            free(kids);
        if (next == UINT32_MAX)
            return UINT32_MAX; /* p >= n */
        x = next;
        at = first;
    }
    return x;
}
