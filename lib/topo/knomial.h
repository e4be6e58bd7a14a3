/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interleaved k-nomial tree (Margolin & Barak 5.2.1): the binomial
 * tree's generalisation, where each rank forwards to up to k - 1 children
 * per round. k = 2 is the interleaved binomial tree.
 *
 * Write r in base k with j(r) digits (j(0) = 0). The children of r are
 * r + c*k^m for m >= j(r) and c = 1 .. k-1, so r's subtree is the residue
 * class of r modulo k^j(r) from r on, and the parent of r drops its
 * leading digit. Children come smallest step first: those are the ones
 * with the largest subtrees, which a broadcast serves first.
 *
 * Static inline, read only by topo/topology.c, like the other kinds.
 */
#ifndef FTC_TOPO_KNOMIAL_H
#define FTC_TOPO_KNOMIAL_H

#include "topo/sink.h"

/* k^j(r): the smallest power of k above r (1 for r = 0). */
static inline uint64_t knomial_span(uint64_t k, uint64_t r)
{
    uint64_t p = 1;
    while (p <= r)
        p *= k;
    return p;
}

static inline int64_t knomial_parent(uint64_t k, uint64_t r)
{
    return (int64_t)(r % (knomial_span(k, r) / k));
}

static inline void knomial_children(uint64_t k, uint64_t n, uint64_t r,
                                    sink_t *out)
{
    for (uint64_t step = knomial_span(k, r); r + step < n; step *= k)
        for (uint64_t c = 1; c < k && r + c * step < n; c++)
            emit(out, r + c * step);
}

static inline uint64_t knomial_subtree(uint64_t k, uint64_t n, uint64_t r)
{
    return (n - 1 - r) / knomial_span(k, r) + 1;
}

/* The root's child above r: its lowest non-zero base-k digit, in place. */
static inline uint64_t knomial_root_child(uint64_t k, uint64_t r)
{
    uint64_t p = 1;
    while ((r / p) % k == 0)
        p *= k;
    return ((r / p) % k) * p;
}

#endif
