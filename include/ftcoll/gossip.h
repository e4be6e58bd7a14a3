/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip family (Niederbrucker, Strakova & Gansterer; docs/gossip.md):
 * all-to-all sum or average of float and double vectors by randomized
 * neighbour exchanges, to a target accuracy. Three algorithms, each its
 * own id: push-sum (no tolerance), push-flow and push-cancel-flow (PCF),
 * which tolerate message loss and node failures. Allreduce only, op
 * FTC_SUM; whether the result is the sum or the average is the aggregate
 * below. Pass a ftc_gossip_params_t as ftc_coll_args_t.params; NULL means
 * the defaults.
 */
#ifndef FTCOLL_GOSSIP_H
#define FTCOLL_GOSSIP_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/collective.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The family's ids in the registry (ftcoll/algo.h) and on the wire. */
#define FTC_ALGO_PUSH_SUM ((ftc_algo_t)5)  /* "push-sum" (Kempe et al.) */
#define FTC_ALGO_PUSH_FLOW ((ftc_algo_t)6) /* "push-flow" (Figure 1) */
#define FTC_ALGO_PCF ((ftc_algo_t)7)       /* "pcf": push-cancel-flow
                                              (Figure 5) */

/* What the weights make of the values (the paper's (x_i, w_i)). */
typedef enum ftc_gossip_aggregate {
    FTC_GOSSIP_AVERAGE = 1, /* weight 1 everywhere: the mean */
    FTC_GOSSIP_SUM = 2      /* weight 1 at args.root only: the sum */
} ftc_gossip_aggregate_t;

/* Whom a process exchanges with (its neighbourhood N_i). */
typedef enum ftc_gossip_neighbours {
    FTC_NEIGHBOURS_FULL = 1,      /* every other member */
    FTC_NEIGHBOURS_HYPERCUBE = 2, /* ranks differing in one bit; n a power
                                     of two */
    FTC_NEIGHBOURS_TORUS3D = 3,   /* torus[0] x torus[1] x torus[2] with
                                     wrap-around, rank = x + X*(y + Y*z) */
    FTC_NEIGHBOURS_RING = 4,      /* r-1 and r+1 modulo n */
    FTC_NEIGHBOURS_BUS = 5,       /* r-1 and r+1, no wrap (the paper's
                                     Figure 2) */
    FTC_NEIGHBOURS_OVERLAY = 6    /* the caller's graph (overlay_index,
                                     overlay_adj) */
} ftc_gossip_neighbours_t;

/* How a process picks the neighbour of each iteration. */
typedef enum ftc_gossip_partner {
    FTC_PARTNER_RANDOM = 1,     /* uniform, from the context's seeded
                                   stream (ftc_config_t.seed) */
    FTC_PARTNER_ROUND_ROBIN = 2 /* each neighbour in turn */
} ftc_gossip_partner_t;

/* What PCF does with a failed neighbour's link (push-flow always does
 * the second; docs/gossip.md, "Failures"). */
typedef enum ftc_gossip_exclusion {
    /* The paper's PCF: zero the link's flows, keep what was cancelled on
     * it. No fall-back: after a failure late in the run the result stays
     * the aggregate over everyone (to the target); after an early one it
     * is the survivors' inputs less what they had cancelled with the
     * failed process, which is no aggregate of anything (its weight may
     * even be negative: no value exists, and the operation ends with
     * FTC_EPEER_FAILED once the process's weight stayed non-positive for
     * 8 windows of the local test after it learned of a failure, or at
     * max_iterations with FTC_ETIMEDOUT where it never learned of one;
     * docs/gossip.md, "When no value exists"). */
    FTC_GOSSIP_EXCLUDE_FLOWS = 1,
    /* Also undo what was cancelled: the result is the exact aggregate over
     * the survivors, at the price of push-flow's fall-back. */
    FTC_GOSSIP_EXCLUDE_ALL = 2
} ftc_gossip_exclusion_t;

/* How a process's local test ended (ftc_gossip_report_t.converged). */
typedef enum ftc_gossip_outcome {
    /* max_iterations stopped it: the estimate is still the best this
     * process has. */
    FTC_GOSSIP_AT_CAP = 0,
    /* The test passed at the target. */
    FTC_GOSSIP_AT_TARGET = 1,
    /* Push-flow: the test passed, but at the accuracy to which the
     * process's arithmetic resolves its estimate, which was above the
     * target (its flows, sums over the whole run, round to more than
     * that; docs/gossip.md, "Push-flow's rounding floor"). The target
     * was not reached: error_estimate is the largest change above the
     * target that the test let pass as rounding. */
    FTC_GOSSIP_AT_FLOOR = 2
} ftc_gossip_outcome_t;

/* What a process learned about its own run, written just before its
 * deliver callback when params.report is set. */
typedef struct ftc_gossip_report {
    uint64_t iterations;     /* iterations run before delivering */
    double error_estimate;   /* the local convergence test's last value:
                                the largest change of the estimate, relative
                                to its largest element, between two
                                iterations that received something;
                                infinity before any estimate exists; at
                                FTC_GOSSIP_AT_FLOOR, the largest change
                                above the target that the test let pass
                                as rounding since the estimate last
                                moved */
    uint32_t converged;      /* an ftc_gossip_outcome_t: 1 the test passed
                                at the target; 2 (push-flow) it passed at
                                the rounding floor, above the target;
                                0 max_iterations stopped it */
    uint32_t neighbours_lost;/* neighbours found failed before delivery */
} ftc_gossip_report_t;

typedef struct ftc_gossip_params {
    size_t size;            /* sizeof(ftc_gossip_params_t); a smaller
                               (older) size gets defaults for the fields
                               it lacks */
    ftc_gossip_aggregate_t aggregate;   /* default average */
    ftc_gossip_neighbours_t neighbours; /* default full */
    uint32_t torus[3];      /* torus3d's sides, product = group size */
    /* Overlay, as compressed rows: rank r's neighbours are
     * overlay_adj[overlay_index[r] .. overlay_index[r+1]-1], group ranks;
     * overlay_index has n + 1 entries. Symmetric (j lists i when i lists
     * j), no self-loops or repeats, connected. Read during the call. */
    const uint32_t *overlay_index;
    const uint32_t *overlay_adj;
    ftc_gossip_partner_t partner;       /* default random */
    /* Target relative accuracy of the local test; 0: 1e-14 for double,
     * 1e-6 for float. Must not be below the dtype's epsilon. */
    double target;
    /* Consecutive receiving iterations whose change stays within target
     * before a process delivers; 0: 8 + 2 * ceil(log2 n). */
    uint32_t stable;
    uint64_t max_iterations;/* cap on iterations before delivery; default
                               20000 */
    uint64_t period_ns;     /* transport time between two iterations of a
                               process; default 10000 */
    /* PCF only: 1 for the bit-flip-tolerant variant (section III: flows
     * are summed afresh for every estimate instead of kept in a running
     * sum, so a corrupted flow leaves no trace once overwritten). */
    uint32_t bitflip_tolerant;
    ftc_gossip_exclusion_t exclusion;   /* PCF; default flows (the paper) */
    /* Where to write this process's ftc_gossip_report_t (NULL: nowhere).
     * Must stay valid until deliver. */
    ftc_gossip_report_t *report;
} ftc_gossip_params_t;

/* The defaults: average, full, random partner, target 0 (by dtype),
 * stable 0 (by n), 20000 iterations, 10 us period, not bit-flip
 * tolerant, exclusion of flows, no report. */
void ftc_gossip_params_init(ftc_gossip_params_t *params);

/* Whether params can run algo (one of the three above) on a group of n
 * with dtype and op: FTC_OK, or FTC_EINVAL with *why (when why is not
 * NULL) naming the argument and the rule, e.g. "op: gossip computes sums
 * and averages only". ftc_init_allreduce runs the same check and returns
 * FTC_EINVAL; call this to learn why. */
int ftc_gossip_params_check(const ftc_gossip_params_t *params, ftc_algo_t algo,
                            uint32_t n, ftc_dtype_t dtype, ftc_op_t op,
                            const char **why);

#ifdef __cplusplus
}
#endif
#endif
