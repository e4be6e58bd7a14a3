/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip family's property checker: one allreduce on the loopback
 * under a fault schedule, then the properties of docs/gossip.md asserted
 * on the outcome (bench/gossip_checker.c).
 */
#ifndef FTC_BENCH_GOSSIP_CHECKER_H
#define FTC_BENCH_GOSSIP_CHECKER_H

#include <stdbool.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/gossip.h"

#include <stdio.h>

#define GC_MAX_CRASH 4
#define GC_MAX_CUT 4

typedef struct gc_crash {
    uint32_t rank;
    bool before;      /* crashed before the operation starts */
    uint64_t after;   /* else: right after its after-th send (>= 1) */
} gc_crash_t;

/* A permanent link failure: the link a-b cut as a ends its after-th
 * iteration (0: before the operation starts), the paper's "failure after
 * 75 iterations". Both ends live on. */
typedef struct gc_cut {
    uint32_t a, b;
    uint64_t after;
    bool reported;    /* both ends' transports report the cut at once
                         (ftc_lb_cut_link_reported: the paper's handling
                         at that iteration); else only the keepalive
                         finds it */
} gc_cut_t;

typedef struct gc_run {
    ftc_algo_t algo;
    uint32_t n;
    ftc_gossip_params_t params;  /* report is the checker's */
    ftc_dtype_t dtype;
    uint32_t count;
    uint64_t seed;
    double drop_prob;            /* loopback message loss */
    double flip_prob;            /* loopback: one bit flipped per message,
                                    with the checksum off, so the flip
                                    reaches the algorithm */
    uint32_t ncrash;
    gc_crash_t crash[GC_MAX_CRASH];
    uint32_t crash_or_at_delivery; /* bit i: crash[i] also lands at its
                                    rank's delivery if the rank delivers
                                    before that send (a rank sends little
                                    after it delivers, so a drawn send
                                    could never come) */
    uint64_t suspect_ns, probe_ns; /* the keepalive (0: the core's
                                    defaults); a cut link is found only by
                                    it, so a run with cuts wants a few
                                    periods here */
    uint64_t latency_ns, jitter_ns; /* the loopback's (0: its defaults, 1 us
                                    and none); real links are slower than
                                    the 10 us period, with many messages in
                                    flight per link */
    uint64_t max_events;         /* the run must end within (0: 4e8) */
    uint32_t nslow;              /* ranks 0 .. nslow - 1 send late: */
    uint64_t slow_ns;            /* this much on top of the latency, as
                                    processes descheduled on a loaded host
                                    answer late while the others run, */
    uint64_t slow_iterations;    /* until they end this iteration (0: for
                                    the whole run) */
    uint64_t spread_ns;          /* each process starts at a seeded time in
                                    [0, spread_ns] (real processes never
                                    start together) */
    uint32_t ncut;
    gc_cut_t cut[GC_MAX_CUT];
    FILE *trace;                 /* non-NULL: every trace_every-th
                                    iteration, "iteration max min" of the
                                    live processes' relative errors
                                    against the aggregate over everyone */
    uint32_t trace_every;        /* iterations; 0 counts as 1 */
    bool mixed_signs;            /* inputs in [-1, 1) instead of [1, 2) */
    bool accuracy_recorded_only; /* measure max_rel_error, do not assert
                                    it (or the mass account): bit flips
                                    at a rate the floating point does not
                                    survive (docs/gossip.md) */
    double plant_rel;            /* tests of the checker itself: after the
                                    run, plant_rank's result is moved by
                                    this much relative to it, a wrong
                                    answer the checks must catch (0: none) */
    uint32_t plant_rank;
} gc_run_t;

typedef struct gc_outcome {
    bool ok;                     /* every property held */
    char why[256];               /* the first that did not */
    uint64_t sends[64];          /* per rank, for n <= 64 */
    uint64_t messages;           /* all sends of the run */
    uint64_t messages_after_delivery; /* sends after the last live
                                    process delivered: the ending's cost
                                    (answers, the DONE handshake) */
    uint64_t max_iterations;     /* the largest report.iterations */
    uint32_t at_floor;           /* live processes whose local test
                                    passed at push-flow's rounding floor,
                                    above the target (report.converged 2) */
    double max_floor;            /* the largest such floor reported */
    uint32_t at_cap;             /* live processes stopped by
                                    max_iterations (report.converged 0,
                                    iterations at the cap), whatever
                                    their status */
    double max_rel_error;        /* largest error of a live process
                                    against the value it must agree with */
    uint32_t crashed;            /* ranks that did crash */
    uint32_t missed_crashes;     /* scheduled after a send the rank never
                                    made (it did not crash) */
    uint32_t cuts_done;          /* scheduled link cuts that happened */
    uint64_t dropped_cut;        /* messages lost on cut links */
    uint64_t dropped;            /* messages the loopback lost */
    uint64_t flipped;            /* messages the loopback corrupted */
    uint64_t dropped_badmsg;     /* ... that the receivers' decoding or the
                                    family's checks dropped */
    bool late_failure;           /* a crash or cut after the first
                                    delivery */
    double max_err_vs_all;       /* largest error of a live process's
                                    value against the aggregate over
                                    every process (OK statuses) */
    uint32_t unnoticed_failed_links; /* PCF: links to a crashed neighbour
                                    that a survivor never excluded (it had
                                    stopped before the crash, and watched
                                    nobody) */
    uint32_t cancel_pairs_checked; /* PCF: failed links whose two ends'
                                    records of what they cancelled were
                                    compared (same round) ... */
    uint32_t cancel_pairs_skipped; /* ... and those whose rounds differ
                                    by a round change in flight */
    uint32_t ended_ok;           /* live processes whose status was FTC_OK, */
    uint32_t ended_peer_failed;  /* FTC_EPEER_FAILED, */
    uint32_t ended_timedout;     /* FTC_ETIMEDOUT, */
    uint32_t ended_other;        /* anything else (at_cap: those of them
                                    stopped by the cap) */
    double survivors_weight;     /* PCF with EXCLUDE_FLOWS after failures:
                                    the weight of V (the survivors' weights
                                    less what they cancelled on failed
                                    links) in shares of one process; NAN
                                    otherwise */
} gc_outcome_t;

/* splitmix64: the next value of the stream *s. The checker draws its
 * inputs and start times with it; ftcoll-sim its random crashes. */
uint64_t gc_splitmix(uint64_t *s);

/* Add count random crashes to run (ftcoll-sim --crashes, and tests that
 * replay its seeds): distinct ranks not already listed, each after a
 * send drawn from [1, window] with run->seed, or at the rank's delivery
 * if that comes first (crash_or_at_delivery). */
void gc_draw_crashes(gc_run_t *run, uint32_t count, uint64_t window);

/* Defaults: PCF, full neighbourhood, average of one double, seed 1. */
void gc_run_init(gc_run_t *run, uint32_t n);

/* Run it and check. The tolerance is c(n) * target with c(n) = 4 n
 * (docs/gossip.md). */
void gc_check(const gc_run_t *run, gc_outcome_t *out);

#endif
