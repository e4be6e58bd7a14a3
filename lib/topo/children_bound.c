/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How many children a rank can have in a tree: the space an operation
 * plans for its children.
 */
#include "topo/topo.h"

static uint32_t bit_length(uint32_t x)
{
    uint32_t b = 0;
    for (; x != 0; x >>= 1)
        b++;
    return b;
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
