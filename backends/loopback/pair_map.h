/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hash map from a pair of ranks to a 64-bit value, holding only the pairs
 * that were stored: the loopback keeps per-link and per-watch state for the
 * few pairs that talk, where an n x n table would not fit at 64K ranks.
 * Open addressing with linear probing; removal shifts entries back instead
 * of leaving tombstones. Internal to the loopback backend.
 */
#ifndef FTC_LB_PAIR_MAP_H
#define FTC_LB_PAIR_MAP_H

#include <stddef.h>
#include <stdint.h>

/* Ranks are below 2^31, so no pair's key is all ones: that marks a free
 * slot and keeps slots at 16 bytes (the FIFO map holds a slot per pair
 * that ever talked, and cache misses dominate). */
#define FTC_LB_PAIR_FREE UINT64_MAX

typedef struct ftc_lb_pair_slot {
    uint64_t key;          /* a << 32 | b, or FTC_LB_PAIR_FREE */
    uint64_t value;
} ftc_lb_pair_slot_t;

typedef struct ftc_lb_pair_map {
    ftc_lb_pair_slot_t *slots;
    size_t cap;            /* 0 or a power of two */
    size_t len;
} ftc_lb_pair_map_t;

void ftc_lb_map_init(ftc_lb_pair_map_t *m);
void ftc_lb_map_fini(ftc_lb_pair_map_t *m);

/* a and b are ranks: below 2^31. */

/* The value stored for (a, b) into *value: 1 if there is one, else 0. */
int ftc_lb_map_get(const ftc_lb_pair_map_t *m, uint32_t a, uint32_t b,
                   uint64_t *value);

/* Stores or replaces the value of (a, b). Returns 0, or -1 if out of
 * memory (then the map is unchanged). */
int ftc_lb_map_put(ftc_lb_pair_map_t *m, uint32_t a, uint32_t b,
                   uint64_t value);

/* Forgets (a, b). Returns 1 if it was there, else 0. */
int ftc_lb_map_remove(ftc_lb_pair_map_t *m, uint32_t a, uint32_t b);

#endif
