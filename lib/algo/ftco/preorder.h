/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pre-order positions of a tree's ranks: the root is 0, and each child
 * follows its parent, its earlier siblings' subtrees first (children in
 * ftc_tree_children order). Every subtree is then the interval
 * [pos(x), pos(x) + subtree size), which is what lets contributor sets be
 * interval lists (rset.h).
 *
 * Both directions cost O(depth x children) calls of the pure tree
 * functions and no allocation beyond a buffer for a rank with more than
 * 64 children; callers keep the positions they need more than once.
 */
#ifndef FTC_ALGO_FTCO_PREORDER_H
#define FTC_ALGO_FTCO_PREORDER_H

#include <stdint.h>

#include "ftcoll/topology.h"

#pragma GCC visibility push(hidden)

/* The position of logical rank x (< n); UINT32_MAX when out of memory. */
uint32_t ftco_preorder_pos(const ftc_tree_t *tree, uint32_t n, uint32_t x);

/* The logical rank at position p (< n); UINT32_MAX when out of memory. */
uint32_t ftco_preorder_rank(const ftc_tree_t *tree, uint32_t n, uint32_t p);

#pragma GCC visibility pop

#endif
