/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * splitmix64 (Steele, Lea & Flood 2014): a test's seeded stream of
 * 64-bit values, independent of the library's own generator so that a
 * test's inputs do not move when the code under test changes.
 */
#ifndef FTCOLL_TESTS_SPLITMIX_H
#define FTCOLL_TESTS_SPLITMIX_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

#endif
