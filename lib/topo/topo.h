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

/* How many children a rank can have in tree over n ranks: exact bounds
 * for the binomial, k-ary and I(f) trees, a guess for the others (an
 * estimate of space only: see core/op.h). */
uint32_t ftc_tree_children_bound(const ftc_tree_t *tree, uint32_t n);
/* What space estimates assume: a few children, at most the bound. */
uint32_t ftc_tree_children_guess(const ftc_tree_t *tree, uint32_t n);

#pragma GCC visibility pop

#endif
