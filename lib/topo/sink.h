/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the tree files share: a sink that collects children, and bit
 * arithmetic. Ranks are computed in uint64_t (topo/topology.c says why).
 */
#ifndef FTC_TOPO_SINK_H
#define FTC_TOPO_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/topology.h"

/* ---- helpers ---------------------------------------------------------- */

/* Collects children: stores the first max, counts all. */
typedef struct sink {
    uint32_t *out;
    uint32_t max;
    uint32_t count;
} sink_t;

static inline void emit(sink_t *s, uint64_t rank)
{
    if (s->count < s->max)
        s->out[s->count] = (uint32_t)rank;
    s->count++;
}

static inline bool sink_full(const sink_t *s)
{
    return s->count >= s->max;
}

static inline unsigned bit_length(uint64_t x)
{
    unsigned b = 0;
    while (x != 0) {
        b++;
        x >>= 1;
    }
    return b;
}

static inline uint64_t lowbit(uint64_t x)
{
    return x & (~x + 1);
}

static inline uint64_t highbit(uint64_t x)
{
    return x == 0 ? 0 : (uint64_t)1 << (bit_length(x) - 1);
}

#endif
