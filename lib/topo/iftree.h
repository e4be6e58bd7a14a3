/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I(f) tree of the reduce paper: the root has f+1 children.
 *
 * Static inline, read only by topo/topology.c: the public functions switch
 * on the kind, and these stay inlined into them as they were before the
 * split.
 */
#ifndef FTC_TOPO_IFTREE_H
#define FTC_TOPO_IFTREE_H

#include "topo/kary.h"
#include "topo/sink.h"

/* ---- I(f) tree (reduce paper) ----------------------------------------- */

/*
 * The root has f+1 children; child j+1 owns the class of ranks p with
 * (p-1) mod (f+1) == j, and each class is an interleaved m-ary tree over
 * the positions q = (p-1) / (f+1). m = f+1 makes the whole tree the
 * interleaved (f+1)-ary tree; for f = 0 that would be a chain of depth n,
 * so the single class is made binary instead.
 */
typedef struct if_class {
    uint64_t stride; /* f + 1 */
    uint64_t arity;  /* m */
    uint64_t j;      /* class: the root child j+1 owns it */
    uint64_t q;      /* position within the class */
    uint64_t size;   /* positions in the class */
} if_class_t;

static inline if_class_t if_class(uint64_t f, uint64_t n, uint64_t p)
{
    if_class_t c;
    c.stride = f + 1;
    c.arity = f >= 1 ? f + 1 : 2;
    c.j = (p - 1) % c.stride;
    c.q = (p - 1) / c.stride;
    c.size = (n - 1 - c.j + c.stride - 1) / c.stride;
    return c;
}

static inline int64_t if_parent(uint64_t f, uint64_t n, uint64_t p)
{
    if_class_t c = if_class(f, n, p);
    if (c.q == 0)
        return 0;
    return (int64_t)(kary_parent(c.arity, c.q) * c.stride + c.j + 1);
}

static inline void if_children(uint64_t f, uint64_t n, uint64_t p, sink_t *out)
{
    if (p == 0) {
        /* The children 1..min(f+1, n-1) are the k-ary root's children. */
        kary_children(f + 1, n, 0, 1, 0, out);
        return;
    }
    if_class_t c = if_class(f, n, p);
    kary_children(c.arity, c.size, c.q, c.stride, c.j + 1, out);
}

static inline uint64_t if_subtree(uint64_t f, uint64_t n, uint64_t p)
{
    if_class_t c = if_class(f, n, p);
    return kary_subtree(c.arity, c.size, c.q);
}

#endif
