/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pure rank arithmetic the algorithms share, beside the public tree
 * functions of ftcoll/topology.h.
 */
#ifndef FTC_TOPO_TOPO_H
#define FTC_TOPO_TOPO_H

#include <stdint.h>

#include "ftcoll/topology.h"

#pragma GCC visibility push(hidden)

/* Rank relative to a root (the root is logical rank 0), and back. */
static inline uint32_t ftc_logical(uint32_t grank, uint32_t root, uint32_t n)
{
    return (uint32_t)(((uint64_t)grank + n - root) % n);
}

static inline uint32_t ftc_physical(uint32_t logical, uint32_t root, uint32_t n)
{
    return (uint32_t)(((uint64_t)logical + root) % n);
}

static inline uint32_t ftc_bit_length32(uint32_t x)
{
    uint32_t b = 0;
    for (; x != 0; x >>= 1)
        b++;
    return b;
}

/* How many children a rank can have in tree over n ranks: exact bounds
 * for the binomial, k-ary and I(f) trees, a guess for the others (an
 * estimate of space only: see core/op.h). Inline: every operation's
 * create asks. */
static inline uint32_t ftc_tree_children_bound(const ftc_tree_t *tree, uint32_t n)
{
    switch (tree->kind) {
    case FTC_TREE_KARY:
        return tree->k;
    case FTC_TREE_KARY_MULTIROOT:
        /* rank 0: the other k - 1 roots, then its own k children */
        return 2 * tree->k - 1;
    case FTC_TREE_IF:
        return tree->k >= 1 ? tree->k + 1 : 2;
    default:
        /* Binomial: at most log2(n) rounded up; Lame trees are shallower
         * and wider, and an underestimate only costs a chunk. */
        return ftc_bit_length32(n);
    }
}

/* What space estimates assume: a few children, at most the bound. */
static inline uint32_t ftc_tree_children_guess(const ftc_tree_t *tree, uint32_t n)
{
    /* Most ranks of a binomial or Lame tree have a child or two, only a
     * few near the root have log2(n): plan for few, and let those take
     * a chunk, rather than give every operation room for log2(n). */
    uint32_t b = ftc_tree_children_bound(tree, n);
    return b < 4 ? b : 4;
}

#pragma GCC visibility pop

#endif
