/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback's random numbers: xoshiro256** seeded through splitmix64, so
 * that every seed (0 included) gives a well-mixed state and a run is a pure
 * function of its seed. Internal to the loopback backend.
 */
#ifndef FTC_LB_RNG_H
#define FTC_LB_RNG_H

#include <stdint.h>

typedef struct ftc_lb_rng {
    uint64_t s[4];
} ftc_lb_rng_t;

void ftc_lb_rng_seed(ftc_lb_rng_t *rng, uint64_t seed);

/* 64 uniformly random bits. */
uint64_t ftc_lb_rng_next(ftc_lb_rng_t *rng);

/* Uniform in [0, bound], both ends included (bound may be UINT64_MAX). */
uint64_t ftc_lb_rng_upto(ftc_lb_rng_t *rng, uint64_t bound);

/* 1 with probability p (p <= 0: never, p >= 1: always), else 0. */
int ftc_lb_rng_chance(ftc_lb_rng_t *rng, double p);

#endif
