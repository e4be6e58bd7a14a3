/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A scenario: one collective run by n ranks on the loopback backend, with
 * a fault schedule, recording what every rank delivered. ftcoll-sim, the
 * property checker and the benchmarks share it.
 */
#ifndef FTC_BENCH_SCENARIO_H
#define FTC_BENCH_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"

typedef enum ftc_input_kind {
    FTC_INPUT_RANK,     /* every element = rank */
    FTC_INPUT_POW2,     /* every element = 2^rank (integers, n <= 63) */
    FTC_INPUT_CONST,    /* every element = value */
    FTC_INPUT_RANDOM,   /* seeded per (seed, rank, element) */
    FTC_INPUT_UNIT      /* checker: count = n + 2; element r = 1, element n
                           = 1, element n+1 = r + 1, others 0 (sum only) */
} ftc_input_kind_t;

typedef struct ftc_crash {
    uint32_t rank;
    uint64_t after_sends; /* 0: right after init, before any send */
} ftc_crash_t;

#define FTC_SCENARIO_MAX_FAULTS 64

typedef struct ftc_scenario {
    ftc_coll_t coll;
    ftc_coll_args_t args;   /* algo, root, f, op, dtype, count, variants */
    uint32_t n;
    ftc_input_kind_t input;
    double input_value;     /* CONST */
    uint64_t input_seed;    /* RANDOM */
    uint64_t seed;          /* loopback RNG */
    uint32_t nfail;
    uint32_t fail[FTC_SCENARIO_MAX_FAULTS];     /* before the operation */
    uint32_t ncrash;
    ftc_crash_t crash[FTC_SCENARIO_MAX_FAULTS]; /* during it */
    uint64_t latency_ns, jitter_ns, send_cost_ns;
    uint64_t detect_delay_ns;   /* UINT64_MAX: keepalive probes only */
    uint64_t suspect_timeout_ns, probe_timeout_ns;
    uint64_t start_spread_ns;   /* ranks start uniformly in [0, spread] */
    uint64_t max_events;        /* safety bound; 0 = 50M */
} ftc_scenario_t;

typedef struct ftc_rank_result {
    bool failed;          /* crashed at some point (before or during) */
    bool pre_failed;      /* crashed before the operation */
    uint32_t delivered;   /* number of deliver calls (must be <= 1) */
    int status;
    uint64_t start_ns, deliver_ns;
    ftc_stats_t stats;
    uint32_t nfailed_list;
    uint32_t *failed_list;  /* as delivered */
    void *value;            /* nbytes, valid when delivered with a result */
    bool has_value;
} ftc_rank_result_t;

typedef struct ftc_scenario_result {
    uint32_t n;
    size_t nbytes;
    uint64_t messages;      /* handed to the transport by live ranks */
    uint64_t time_ns;       /* virtual time of the last delivery */
    uint64_t events;
    bool hit_event_limit;
    ftc_counters_t totals;  /* summed over ranks */
    ftc_rank_result_t *ranks;
    void **inputs;          /* each rank's input (nbytes) */
} ftc_scenario_result_t;

/* Defaults: allreduce, corrected, n 8, f 1, int64 sum, count 1, input
 * rank, latency 1 us, send cost 100 ns, transport reports failures after
 * 50 us, suspect after 1 ms, probe expires after 2 ms. */
void ftc_scenario_init(ftc_scenario_t *s);

/* Runs to quiescence. Returns FTC_OK (the result describes what happened,
 * good or bad) or an error for an impossible scenario (FTC_EINVAL with a
 * message in err, which may be NULL). */
int ftc_scenario_run(const ftc_scenario_t *s, ftc_scenario_result_t *res,
                     char *err, size_t errlen);

void ftc_scenario_result_free(ftc_scenario_result_t *res);

/* Fill buf (count elements of dtype) with rank's input. */
int ftc_scenario_input(const ftc_scenario_t *s, uint32_t rank, void *buf);

#endif
