/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Choosing the k-nomial radix (Margolin & Barak 5.2.1): the fault-free
 * broadcast latency of the interleaved k-nomial tree in the paper's LogP
 * step model, and the k that minimises it.
 *
 * The model (5.2): a process does one thing per overhead o, send or
 * receive; a message sent is in the receiver's queue L + o later and is
 * handled in the receiver's next step. So a process that has the value
 * at time t hands it to its i-th child (send order) at
 * t + i*o + L + o: a hop costs L + 2o, and each earlier sibling o more.
 * A reduce is the same tree walked the other way, so the same k serves
 * both.
 *
 * Pure and allocation-free, like the trees: the walk recurses along the
 * tree (depth at most the number of base-k digits of n) and visits each
 * rank once.
 */
#include "ftcoll/error.h"
#include "ftcoll/topology.h"

#include "topo/knomial.h"

/* The latest arrival in r's subtree, r having the value at t. */
static uint64_t subtree_latency(uint64_t k, uint64_t n, uint64_t r, uint64_t t,
                                uint64_t L, uint64_t o)
{
    uint64_t latest = t, i = 0;
    for (uint64_t step = knomial_span(k, r); r + step < n; step *= k)
        for (uint64_t c = 1; c < k && r + c * step < n; c++) {
            i++;
            uint64_t tc = subtree_latency(k, n, r + c * step,
                                          t + i * o + L + o, L, o);
            if (tc > latest)
                latest = tc;
        }
    return latest;
}

int ftc_tree_knomial_latency(uint32_t n, uint32_t k, uint32_t L, uint32_t o,
                             uint64_t *out)
{
    if (n == 0 || k < 2 || o == 0 || out == NULL)
        return FTC_EINVAL;
    *out = subtree_latency(k, n, 0, 0, L, o);
    return FTC_OK;
}

int ftc_tree_knomial_best_k(uint32_t n, uint32_t L, uint32_t o, uint32_t *k)
{
    if (n == 0 || o == 0 || k == NULL)
        return FTC_EINVAL;
    uint32_t kmax = n - 1 < FTC_KNOMIAL_K_SEARCH_MAX ? n - 1
                                                    : FTC_KNOMIAL_K_SEARCH_MAX;
    uint32_t best = 2;
    uint64_t best_t = UINT64_MAX;
    for (uint32_t c = 2; c <= kmax; c++) {
        uint64_t t;
        (void)ftc_tree_knomial_latency(n, c, L, o, &t);
        if (t < best_t) {
            best_t = t;
            best = c;
        }
    }
    *k = best;
    return FTC_OK;
}
