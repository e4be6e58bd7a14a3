/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every process must end, and well before the iteration cap when nothing
 * holds it back: PCF on the full graph of 128 with two random crashes
 * (ftcoll-sim --algo pcf -n 128 --neighbours full --crashes 2
 * --crash-window 300 --seed S, S = 1, 2, 3; the same draw as the
 * simulator's). There an echo takes a degree's worth of iterations and
 * more, beyond the 256 iterations of estimate history, and before the
 * fix (lib/algo/gossip/op.c: anchor_aging_pushes, convergence_step's
 * drift across iterations without an estimate, echo_overdue) the pushes
 * waiting for it counted as far off, or infinitely far after an
 * iteration without positive weight, so their senders said UNSETTLED and
 * no process delivered before the cap: every one of six seeds ran to a
 * 6000-iteration cap, and the n = 256 run of seed 1 to the 20000 one
 * (docs/gossip.md, "Mass in flight").
 *
 * Asserted per seed:
 * - the family's checker passes (every live process delivers the value
 *   the docs promise, to c(n) * target; mass conserved);
 * - both drawn crashes happened (at the drawn send or at the rank's
 *   delivery);
 * - the slowest process delivered within a fifth of the default cap
 *   (measured: 1532 to 1793 iterations).
 */
#include <stdio.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/gossip.h"
#include "check.h"
#include "gossip_checker.h"

#define N 128
#define CRASHES 2
#define WINDOW 300
#define SEEDS 3

int main(void)
{
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        gc_run_t run;
        gc_run_init(&run, N);
        run.algo = FTC_ALGO_PCF;
        run.params.neighbours = FTC_NEIGHBOURS_FULL;
        run.seed = seed;
        /* ftcoll-sim's draw, so that a failing seed replays with the
         * command above */
        gc_draw_crashes(&run, CRASHES, WINDOW);
        uint64_t cap = run.params.max_iterations ? run.params.max_iterations
                                                 : 20000;
        gc_outcome_t o;
        gc_check(&run, &o);
        printf("seed %llu: slowest process %llu iterations, %u crashed, "
               "error %.3g\n",
               (unsigned long long)seed,
               (unsigned long long)o.max_iterations, o.crashed,
               o.max_rel_error);
        CHECK_MSG(o.ok, "seed %llu: %s", (unsigned long long)seed, o.why);
        CHECK_MSG(o.crashed == CRASHES && o.missed_crashes == 0,
                  "seed %llu: both crashes happened (%u, %u missed)",
                  (unsigned long long)seed, o.crashed, o.missed_crashes);
        CHECK_MSG(o.max_iterations <= cap / 5,
                  "seed %llu: slowest process at %llu iterations, the cap "
                  "%llu",
                  (unsigned long long)seed,
                  (unsigned long long)o.max_iterations,
                  (unsigned long long)cap);
    }
    return check_report();
}
