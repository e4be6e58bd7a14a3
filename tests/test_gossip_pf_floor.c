/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Push-flow's rounding floor (docs/gossip.md, "Push-flow's rounding
 * floor"; lib/algo/gossip/op.c, quiet_threshold). A push-flow process's
 * mass is its input minus the sum of its flows, and the flows are nets of
 * every push of the run on their links: on the full graph of 64 they
 * round the estimate to 2e-14 and more, so after it converged it moved by
 * more than the default 1e-14 target in about one iteration of six, the
 * local test (a window, then a push from each of 63 neighbours, about 300
 * iterations, without a move) nearly never passed, and every process ran
 * to the 20000-iteration cap (ftcoll-sim --algo push-flow -n 64
 * --neighbours full: seeds 1-3 at the cap, 2.2e-14 to 6.3e-14 off).
 * Changes within four times the floor now count as quiet, and a process
 * whose test passed only so says it did not reach the target
 * (report.converged FTC_GOSSIP_AT_FLOOR).
 *
 * Asserted, seeds 1-3 (the simulator's draw: ftcoll-sim --algo push-flow
 * -n N --neighbours full --seed S):
 * - n = 64: the family's checker passes (every process delivers within
 *   c(n) * target of the average, mass conserved, the report consistent);
 *   no process at the cap, the slowest within a tenth of it (measured 444
 *   to 460 iterations); some process says AT_FLOOR, with an
 *   error_estimate above the target;
 * - n = 16, where the target is within reach (degree 15): the checker
 *   passes and most processes say AT_TARGET: the floor does not claim the
 *   runs it was not needed for (measured: 0 to 2 of 16 at the floor, with
 *   the same iterations as without the floor).
 * With the floor off (no rounding_floor in push-flow's rules) the n = 64
 * checks fail, 9 of 15; with a floor 64 times looser than op.c's the
 * n = 16 ones do (15 or 16 of 16 at the floor).
 */
#include <stdio.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/gossip.h"
#include "check.h"
#include "gossip_checker.h"

#define SEEDS 3

static void run_full(uint32_t n, uint64_t seed, gc_outcome_t *o)
{
    gc_run_t run;
    gc_run_init(&run, n);
    run.algo = FTC_ALGO_PUSH_FLOW;
    run.params.neighbours = FTC_NEIGHBOURS_FULL;
    run.seed = seed;
    gc_check(&run, o);
    printf("n %u seed %llu: slowest process %llu iterations, %u at the "
           "floor (largest %.3g), %u at the cap, error %.3g\n",
           n, (unsigned long long)seed,
           (unsigned long long)o->max_iterations, o->at_floor, o->max_floor,
           o->at_cap, o->max_rel_error);
}

int main(void)
{
    const double target = 1e-14; /* the default for double */
    const uint64_t cap = 20000;  /* the default max_iterations */
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        gc_outcome_t o;
        run_full(64, seed, &o);
        CHECK_MSG(o.ok, "n 64 seed %llu: %s", (unsigned long long)seed,
                  o.why);
        CHECK_MSG(o.at_cap == 0 && o.max_iterations <= cap / 10,
                  "n 64 seed %llu: %u processes at the cap, the slowest "
                  "at %llu iterations",
                  (unsigned long long)seed, o.at_cap,
                  (unsigned long long)o.max_iterations);
        CHECK_MSG(o.at_floor > 0 && o.max_floor > target,
                  "n 64 seed %llu: %u processes say the target was not "
                  "reached (largest error estimate %.3g)",
                  (unsigned long long)seed, o.at_floor, o.max_floor);

        run_full(16, seed, &o);
        CHECK_MSG(o.ok, "n 16 seed %llu: %s", (unsigned long long)seed,
                  o.why);
        CHECK_MSG(o.at_cap == 0 && o.at_floor <= 16 / 4,
                  "n 16 seed %llu: %u processes at the floor, %u at the "
                  "cap",
                  (unsigned long long)seed, o.at_floor, o.at_cap);
    }
    return check_report();
}
