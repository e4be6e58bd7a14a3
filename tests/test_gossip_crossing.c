/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Push-flow over links 10 to 20 periods long, where every message crosses
 * several others (lib/algo/gossip/push_flow.c, "Crossings"; docs/gossip.md,
 * "Links slower than the period"): n = 6, full graph, 100-200 us links
 * against the 10 us period, 5 % loss (ftcoll-sim --algo push-flow
 * --latency-ns 100000 --jitter-ns 100000 --loss 0.05 -n 6), 30 seeds.
 *
 * Asserted per run:
 * - no mass is ever created: at every iteration of every process, the
 *   weight it holds is between 0 and the n shares of the run. Mass on
 *   the wire is what pushes not yet applied took away, never negative,
 *   once a crossing resolves to one end's view. With Figure 1 as
 *   written (the latest message overwrites the link's flow) in its
 *   place, this test fails 79 of its 180 checks: held weight from -86
 *   to 103 shares over the runs, 26 runs at the cap, 23 with a process
 *   holding no positive weight there (FTC_ETIMEDOUT);
 * - every process passes the local test before the 20000-iteration cap;
 * - the family's checker passes (every process delivers the aggregate to
 *   c(n) * target, mass conserved at the end);
 * - the regime happened: the loss dropped messages, and some link had
 *   several of a process's messages unechoed at once (a round trip of
 *   several periods, so that messages crossed).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/gossip.h"
#include "algo/gossip/gossip.h"
#include "check.h"
#include "gossip_checker.h"

#define N 6
#define RUNS 30

typedef struct watch {
    double low, high;        /* held weight seen, in shares */
    uint32_t most_unechoed;  /* messages sent on a link beyond its echo */
} watch_t;

static watch_t W;

static void on_tick(const ftc_gossip_op_t *g, void *arg)
{
    (void)arg;
    double e[2];
    if (g->m != 2)
        return; /* one value and the weight */
    g->rules->mass(g, e);
    double shares = e[1] / g->weight_unit;
    if (shares < W.low)
        W.low = shares;
    if (shares > W.high)
        W.high = shares;
    for (uint32_t i = 0; i < g->nlinks; i++) {
        uint32_t ahead = g->links[i].echo.sent - g->links[i].echo.echoed;
        if (ahead > W.most_unechoed)
            W.most_unechoed = ahead;
    }
}

static void test_crossing(void)
{
    uint32_t capped_runs = 0;
    double lowest = INFINITY, highest = -INFINITY;
    for (uint64_t seed = 1; seed <= RUNS; seed++) {
        gc_run_t run;
        gc_run_init(&run, N);
        run.algo = FTC_ALGO_PUSH_FLOW;
        run.seed = seed;
        run.drop_prob = 0.05;
        run.latency_ns = 100000;
        run.jitter_ns = 100000;
        CHECK_MSG(run.latency_ns >= 10 * run.params.period_ns,
                  "links at least ten periods long");
        W = (watch_t){.low = INFINITY, .high = -INFINITY};
        /* The checker sets its own tick observer only for traces, cuts
         * and slow processes, none of which this run has. */
        ftc_gossip_set_tick_observer(on_tick, NULL);
        gc_outcome_t o;
        gc_check(&run, &o);
        ftc_gossip_set_tick_observer(NULL, NULL);
        bool capped = o.max_iterations >= run.params.max_iterations;
        capped_runs += capped;
        lowest = W.low < lowest ? W.low : lowest;
        highest = W.high > highest ? W.high : highest;
        CHECK_MSG(o.ok, "seed %llu: %s", (unsigned long long)seed, o.why);
        CHECK_MSG(!capped,
                  "seed %llu: a process reached the %llu-iteration cap",
                  (unsigned long long)seed,
                  (unsigned long long)run.params.max_iterations);
        CHECK_MSG(W.low >= -1e-9 && W.high <= N * (1.0 + 1e-9),
                  "seed %llu: held weight between 0 and %u shares (saw "
                  "%.3g to %.3g)", (unsigned long long)seed, N, W.low,
                  W.high);
        CHECK_MSG(o.dropped > 0, "seed %llu: the loss happened",
                  (unsigned long long)seed);
        CHECK_MSG(W.most_unechoed >= 3,
                  "seed %llu: messages crossed (at most %u unechoed on a "
                  "link)", (unsigned long long)seed, W.most_unechoed);
    }
    printf("push-flow, n %d, 100-200 us links, 5%% loss: %u of %d runs at "
           "the cap; held weight %.3g to %.3g shares\n", N, capped_runs,
           RUNS, lowest, highest);
}

int main(void)
{
    test_crossing();
    return check_report();
}
