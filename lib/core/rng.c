/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded randomness for the operations (gossip partners, jitter): a
 * xoshiro256** stream per context (Blackman & Vigna), its state filled by
 * splitmix64 from the configured seed and the rank. No clock, no OS
 * entropy: the core stays sans-I/O and a run is reproducible from its
 * seed.
 */
#include "core/op.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void ftc_ctx_rng_seed(ftc_context_t *ctx, uint64_t seed)
{
    uint64_t x = seed ^ ((uint64_t)ctx->rank * UINT64_C(0xd1b54a32d192ed03));
    for (int i = 0; i < 4; i++)
        ctx->rng[i] = splitmix64(&x);
}

static uint64_t next(uint64_t *s)
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t ftc_cop_random(ftc_cop_t *op)
{
    return next(op->group->ctx->rng);
}

uint64_t ftc_cop_random_below(ftc_cop_t *op, uint64_t bound)
{
    /* Lemire's rejection: unbiased, one draw almost always. */
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t r = ftc_cop_random(op);
        if (r >= threshold)
            return r % bound;
    }
}
