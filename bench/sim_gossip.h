/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-sim's gossip family (bench/sim_gossip.c): ftcoll_sim.c hands the
 * whole command line over when --algo names a gossip algorithm.
 */
#ifndef FTC_BENCH_SIM_GOSSIP_H
#define FTC_BENCH_SIM_GOSSIP_H

#include <stdbool.h>

/* true when argv's --algo is push-sum, push-flow or pcf. */
bool ftc_sim_gossip_wanted(int argc, char **argv);

/* The gossip simulator's main: exit status 0, 1 (a run failed the
 * family's checker) or 2 (a bad command line). */
int ftc_sim_gossip_main(int argc, char **argv);

#endif
