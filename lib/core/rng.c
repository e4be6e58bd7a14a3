/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded randomness for the operations (gossip partners, jitter): a
 * SplitMix64 stream per context (Steele, Lea & Flood), seeded from the
 * configured seed and the rank. No clock, no OS entropy: the core stays
 * sans-I/O and a run is reproducible from its seed.
 *
 * Why SplitMix64 and not xoshiro256**: its state is one word, and a
 * simulator hosts 65,536 contexts and more (xoshiro's 32 bytes were 1 %
 * of a process's memory there); its output passes BigCrush, which is all
 * partner selection and jitter need.
 */
#include "core/op.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void ftc_ctx_rng_seed(ftc_context_t *ctx, uint64_t seed)
{
    /* Distinct ranks start far apart on the sequence. */
    ctx->rng = mix(seed ^ mix((uint64_t)ctx->rank + 1));
}

uint64_t ftc_cop_random(ftc_cop_t *op)
{
    ftc_context_t *ctx = op->group->ctx;
    ctx->rng += UINT64_C(0x9e3779b97f4a7c15);
    return mix(ctx->rng);
}

uint64_t ftc_cop_random_below(ftc_cop_t *op, uint64_t bound)
{
    /* Rejection of the low residues: unbiased, one draw almost always. */
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t r = ftc_cop_random(op);
        if (r >= threshold)
            return r % bound;
    }
}
