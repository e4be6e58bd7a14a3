/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xoshiro256** and splitmix64 (Blackman and Vigna, public domain reference
 * algorithms, re-implemented here).
 */
#include "rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void ftc_lb_rng_seed(ftc_lb_rng_t *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
}

uint64_t ftc_lb_rng_next(ftc_lb_rng_t *rng)
{
    uint64_t *s = rng->s;
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

uint64_t ftc_lb_rng_upto(ftc_lb_rng_t *rng, uint64_t bound)
{
    if (bound == UINT64_MAX)
        return ftc_lb_rng_next(rng);
    /* Rejection sampling: a plain modulo would favour small values, and the
     * 128-bit multiply trick is not ISO C. */
    uint64_t range = bound + 1;
    uint64_t limit = UINT64_MAX - (UINT64_MAX % range + 1) % range;
    uint64_t x;
    do
        x = ftc_lb_rng_next(rng);
    while (x > limit);
    return x % range;
}

int ftc_lb_rng_chance(ftc_lb_rng_t *rng, double p)
{
    if (!(p > 0.0))
        return 0;
    if (p >= 1.0)
        return 1;
    /* 53 random bits: every double in [0, 1) this can produce is exact. */
    double u = (double)(ftc_lb_rng_next(rng) >> 11) * 0x1.0p-53;
    return u < p;
}
