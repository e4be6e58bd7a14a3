/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Up-correction groups (reduce paper 4.2): consecutive logical ranks in
 * groups of f+1, the root joining the last group when it is not full.
 */
#include "topo/sink.h"

/* ---- up-correction groups (reduce paper 4.2) -------------------------- */

uint32_t ftc_upcorr_group(uint32_t f, uint32_t n, uint32_t p, uint32_t *out,
                          uint32_t max)
{
    if (p >= n)
        return 0;
    if (out == NULL)
        max = 0;
    uint64_t size = (uint64_t)f + 1;
    uint64_t last = n >= 2 ? (uint64_t)(n - 2) / size : 0;
    bool root_joins = n >= 2 && (uint64_t)(n - 1) % size != 0;
    uint64_t group;
    if (p == 0) {
        if (!root_joins) {
            if (max > 0)
                out[0] = 0;
            return 1;
        }
        group = last;
    } else {
        group = (p - 1) / size;
    }
    sink_t sink = {out, max, 0};
    if (root_joins && group == last)
        emit(&sink, 0);
    uint64_t lo = group * size + 1;
    uint64_t hi = lo + size; /* exclusive */
    if (hi > n)
        hi = n;
    for (uint64_t q = lo; q < hi; q++)
        emit(&sink, q);
    return sink.count;
}
