/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binomial trees: the interleaved one (docs/corrected.md §1.1) and the
 * MPICH-style in-order one, for comparison.
 *
 * Static inline, read only by topo/topology.c: the public functions switch
 * on the kind, and these stay inlined into them as they were before the
 * split.
 */
#ifndef FTC_TOPO_BINOMIAL_H
#define FTC_TOPO_BINOMIAL_H

#include "topo/sink.h"

/* ---- interleaved binomial (2.2) --------------------------------------- */

/* Children r + 2^j for j >= bl(r): r's subtree is the residue class of r
 * modulo 2^bl(r), and the root's child 2^j owns the ranks whose lowest set
 * bit is j. */

static inline int64_t binomial_parent(uint64_t r)
{
    return (int64_t)(r ^ highbit(r));
}

static inline void binomial_children(uint64_t n, uint64_t r, sink_t *out)
{
    for (uint64_t step = (uint64_t)1 << bit_length(r); r + step < n;
         step <<= 1)
        emit(out, r + step);
}

static inline uint64_t binomial_subtree(uint64_t n, uint64_t r)
{
    return ((n - 1 - r) >> bit_length(r)) + 1;
}

/* ---- in-order binomial (MPICH style, for comparison) ------------------ */

/* r's subtree is the contiguous block [r, r + lowbit(r)), which is why one
 * failure of a root child leaves a gap of about n/2 on the ring. */

static inline int64_t inorder_parent(uint64_t r)
{
    return (int64_t)(r - lowbit(r));
}

static inline void inorder_children(uint64_t n, uint64_t r, sink_t *out)
{
    uint64_t step = r == 0 ? highbit(n - 1) : lowbit(r) >> 1;
    for (; step != 0; step >>= 1)
        if (r + step < n)
            emit(out, r + step);
}

static inline uint64_t inorder_subtree(uint64_t n, uint64_t r)
{
    uint64_t block = lowbit(r);
    return block < n - r ? block : n - r;
}

#endif
