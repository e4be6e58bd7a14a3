/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-root trees (Margolin & Barak 5.2.1): m = min(k, n) roots, fully
 * connected, each the root of its own k-ary or k-nomial tree.
 *
 * Root j (0 <= j < m) owns the residue class j mod m: rank r sits at
 * position q = r / m of tree j = r mod m, a tree over the n_j positions of
 * that class, numbered as the single-root interleaved trees number theirs.
 * So every subtree below a root is a residue class again (one failure
 * leaves gaps of length one), and each root's tree has about n / k ranks
 * instead of n.
 *
 * As a tree function (one parent per rank) the roots hang off rank 0:
 * ftc_tree_parent(j) = 0 for 1 <= j < m, and rank 0's children are the
 * other roots first (they carry the largest subtrees), then its own
 * tree's. That is how the roots' full connection reads as a tree: rank 0
 * reaches every other root in one hop and every root reaches rank 0 in
 * one; the algorithms' rules for a failed root (its first live child
 * replaces it) then hand the roots' role from root to root, in order.
 * ftc_tree_root_count says how many roots a tree has.
 *
 * Static inline, read only by topo/topology.c, like the other kinds.
 */
#ifndef FTC_TOPO_MULTIROOT_H
#define FTC_TOPO_MULTIROOT_H

#include "topo/kary.h"
#include "topo/knomial.h"
#include "topo/sink.h"

static inline uint64_t multiroot_count(uint64_t k, uint64_t n)
{
    return k < n ? k : n;
}

/* Positions in root j's tree: the ranks j, j + m, j + 2m, ... below n. */
static inline uint64_t multiroot_class_size(uint64_t m, uint64_t n, uint64_t j)
{
    return (n - 1 - j) / m + 1;
}

static inline uint64_t multiroot_pos_parent(bool knomial, uint64_t k,
                                            uint64_t q)
{
    return knomial ? (uint64_t)knomial_parent(k, q) : kary_parent(k, q);
}

static inline int64_t multiroot_parent(bool knomial, uint64_t k, uint64_t n,
                                       uint64_t r)
{
    uint64_t m = multiroot_count(k, n);
    uint64_t j = r % m, q = r / m;
    if (r == 0)
        return -1;
    if (q == 0)
        return 0;
    return (int64_t)(j + m * multiroot_pos_parent(knomial, k, q));
}

static inline void multiroot_children(bool knomial, uint64_t k, uint64_t n,
                                      uint64_t r, sink_t *out)
{
    uint64_t m = multiroot_count(k, n);
    uint64_t j = r % m, q = r / m, size = multiroot_class_size(m, n, j);
    if (r == 0)
        for (uint64_t other = 1; other < m; other++)
            emit(out, other);
    if (!knomial) {
        kary_children(k, size, q, m, j, out);
        return;
    }
    for (uint64_t step = knomial_span(k, q); q + step < size; step *= k)
        for (uint64_t c = 1; c < k && q + c * step < size; c++)
            emit(out, (q + c * step) * m + j);
}

static inline uint64_t multiroot_subtree(bool knomial, uint64_t k, uint64_t n,
                                         uint64_t r)
{
    uint64_t m = multiroot_count(k, n);
    uint64_t j = r % m, q = r / m, size = multiroot_class_size(m, n, j);
    if (r == 0)
        return n;
    if (q == 0)
        return size;
    return knomial ? knomial_subtree(k, size, q) : kary_subtree(k, size, q);
}

/* The child of rank 0 above r: r's root, or, in rank 0's own tree, the
 * child of position 0 above r's position. */
static inline uint64_t multiroot_root_child(bool knomial, uint64_t k,
                                            uint64_t n, uint64_t r)
{
    uint64_t m = multiroot_count(k, n);
    uint64_t j = r % m, q = r / m;
    if (j != 0)
        return j;
    return m * (knomial ? knomial_root_child(k, q) : kary_root_child(k, q));
}

#endif
