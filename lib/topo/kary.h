/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interleaved k-ary tree (docs/corrected.md §1.2).
 *
 * Static inline, read only by topo/topology.c: the public functions switch
 * on the kind, and these stay inlined into them as they were before the
 * split.
 */
#ifndef FTC_TOPO_KARY_H
#define FTC_TOPO_KARY_H

#include "topo/sink.h"

/* ---- interleaved k-ary (2.3) ------------------------------------------ */

/*
 * Level l holds k^l ranks starting at 1 + k + ... + k^(l-1). The children
 * of r are r + c*k^l (c = 1..k), so r's subtree is the residue class of r
 * modulo k^l from r on. These helpers take the tree's size and a position
 * in it, because the I(f) tree reuses them on its per-class trees.
 */
typedef struct kary_level {
    uint64_t first; /* first position of the level */
    uint64_t width; /* k^level */
} kary_level_t;

static inline kary_level_t kary_level(uint64_t k, uint64_t q)
{
    kary_level_t lv = {0, 1};
    if (k == 1) {
        /* A chain: one position per level, and the loop below would take
         * q steps. */
        lv.first = q;
        return lv;
    }
    /* width <= q < 2^32 before each multiplication, so no overflow. */
    while (q - lv.first >= lv.width) {
        lv.first += lv.width;
        lv.width *= k;
    }
    return lv;
}

static inline uint64_t kary_parent(uint64_t k, uint64_t q)
{
    kary_level_t lv = kary_level(k, q);
    uint64_t up_width = lv.width / k;
    uint64_t up_first = lv.first - up_width;
    return up_first + (q - lv.first) % up_width;
}

/* Emits the children of position q as ranks q' * scale + offset. Wide
 * trees can have billions of children, so the count is computed, and only
 * the ones that fit are enumerated. */
static inline void kary_children(uint64_t k, uint64_t size, uint64_t q,
                          uint64_t scale, uint64_t offset, sink_t *out)
{
    kary_level_t lv = kary_level(k, q);
    uint64_t count = (size - 1 - q) / lv.width;
    if (count > k)
        count = k;
    uint64_t done = out->count + count;
    for (uint64_t i = 1; i <= count && !sink_full(out); i++)
        emit(out, (q + i * lv.width) * scale + offset);
    out->count = (uint32_t)done;
}

static inline uint64_t kary_subtree(uint64_t k, uint64_t size, uint64_t q)
{
    return (size - 1 - q) / kary_level(k, q).width + 1;
}

static inline uint64_t kary_root_child(uint64_t k, uint64_t r)
{
    return (r - 1) % k + 1;
}

#endif
