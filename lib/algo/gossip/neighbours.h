/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process's neighbourhood N_i for the gossip family: pure functions of
 * (rank, n, parameters), and the checks that refuse a neighbourhood no
 * gossip can converge on (empty, disconnected, asymmetric).
 */
#ifndef FTC_ALGO_GOSSIP_NEIGHBOURS_H
#define FTC_ALGO_GOSSIP_NEIGHBOURS_H

#include <stdint.h>

#include "ftcoll/gossip.h"

#pragma GCC visibility push(hidden)

/* How many neighbours rank r has (0 for a bad rank or shape). */
uint32_t ftc_gossip_degree(const ftc_gossip_params_t *p, uint32_t n,
                           uint32_t r);

/* Rank r's neighbours into out (room for ftc_gossip_degree), ascending;
 * returns how many. */
uint32_t ftc_gossip_neighbours(const ftc_gossip_params_t *p, uint32_t n,
                               uint32_t r, uint32_t *out);

/* FTC_OK, or FTC_EINVAL when the neighbourhood cannot be used at n: an
 * unknown kind, a hypercube whose n is not a power of two, a torus whose
 * sides do not multiply to n, an overlay that is missing, asymmetric,
 * has a self-loop, a repeat or a rank out of range, or any neighbourhood
 * that is empty (n > 1) or disconnected. *why names the problem. */
int ftc_gossip_neighbours_check(const ftc_gossip_params_t *p, uint32_t n,
                                const char **why);

#pragma GCC visibility pop

#endif
