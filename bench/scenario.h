/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A scenario: one collective run by n ranks on the loopback backend or on
 * the LogP simulator backend (docs/simulator.md), with a fault schedule,
 * recording what every rank delivered. ftcoll-sim, the property checker
 * and the benchmarks share it.
 */
#ifndef FTC_BENCH_SCENARIO_H
#define FTC_BENCH_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll/mitigation.h"
#include "sim_ftco.h"

typedef enum ftc_input_kind {
    FTC_INPUT_RANK,     /* every element = rank */
    FTC_INPUT_POW2,     /* every element = 2^rank (integers, n <= 63) */
    FTC_INPUT_CONST,    /* every element = value */
    FTC_INPUT_RANDOM,   /* seeded per (seed, rank, element) */
    FTC_INPUT_UNIT,     /* checker: count = n + 2; element r = 1, element n
                           = 1, element n+1 = r + 1, others 0 (sum only) */
    FTC_INPUT_ALLBUT    /* every bit set but bit r mod width (integers):
                           an AND names its contributors (sim_ulfm.c) */
} ftc_input_kind_t;

typedef struct ftc_crash {
    uint32_t rank;
    uint64_t after_sends; /* 0: right after init, before any send */
} ftc_crash_t;

#define FTC_SCENARIO_MAX_FAULTS 64

typedef enum ftc_sim_model {
    FTC_MODEL_LOOPBACK = 0, /* ns, latency + serialised send cost */
    FTC_MODEL_LOGP = 1      /* LogP time units (backends/logp) */
} ftc_sim_model_t;

typedef enum ftc_spread_kind {
    FTC_SPREAD_UNIFORM = 0, /* start uniformly in [0, start_spread_ns] */
    FTC_SPREAD_NORMAL = 1   /* start = round(3s + s*Z), Z ~ N(0,1), clamped
                               to [0, 6s], s = start_spread_ns */
} ftc_spread_kind_t;

/* LogP inbound queue policy: FIFO, or by message kind (kind_class). */
typedef enum ftc_sim_queue {
    FTC_QUEUE_FIFO = 0,
    FTC_QUEUE_KIND = 1
} ftc_sim_queue_t;

typedef struct ftc_scenario {
    ftc_coll_t coll;
    ftc_coll_args_t args;   /* algo, root, f, op, dtype, count */
    /* The corrected family's parameters; the tree family takes its
     * bcast_tree (ftc_scenario_params). */
    ftc_corrected_params_t corrected;
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
    uint64_t segment_size;      /* ftc_config_t's; 0: the library default */
    uint64_t start_spread_ns;   /* arrival spread, see spread_kind */
    uint64_t max_events;        /* safety bound; 0 = max(50M, 400 n) */

    /* --- the LogP simulator and fault models (ftc_scenario_init's
     * defaults keep the loopback behaviour unchanged) --- */
    ftc_sim_model_t model;
    uint64_t logp_L, logp_o, logp_g;    /* LogP: time units */
    uint32_t parallelism;               /* LogP: 1 or 2 (0 = 1) */
    ftc_sim_queue_t queue;              /* LogP inbound queue policy */
    uint8_t kind_class[16];             /* KIND: class per wire kind,
                                           lower first */
    ftc_spread_kind_t spread_kind;
    /* Random faults, drawn with fault_seed (distinct ranks, never one of
     * fail[]; never the root when protect_root): random_fail ranks fail
     * before the operation, random_crash ranks crash at uniformly random
     * times in [0, crash_window]. */
    uint32_t random_fail, random_crash;
    uint64_t crash_window;
    bool protect_root;
    uint64_t fault_seed;
    /* Per-rank results kept small for huge n: no failed_list copies. */
    bool lean;
    /* LogP: one line per CPU activity and per delivery ("T RANK what
     * PEER"), for small runs and the docs; NULL: none. */
    FILE *trace;
    /* The ftco family's parameters (args.algo == FTC_ALGO_FTCO), and under
     * LogP its service-distance function (sim_ftco.h). */
    ftc_ftco_params_t ftco;
    ftc_sim_service_t service;
    /* LogP: a late starter's CPU is not held until its start: it receives
     * before (the core keeps what belongs to the operation and answers
     * keepalive probes), as Margolin & Barak's Appendix B assumes of a
     * process not yet in the operation. Default false (held). */
    bool prestart_receives;
    /* LogP: a queued DATA of the family is sent before the CPU receives
     * (ftcoll_logp.h, sends_first), as Margolin & Barak's Algorithm 1
     * passes DATA on before it reads its queue (set by sim_ftco.c for
     * ftco unless receives_first asks for flogsim's order). */
    bool data_sends_first, receives_first;
    /* agree, shrink: the agreement's failure-free round (sim_ulfm.c). */
    ftc_agree_round_t agree_round;
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
    uint32_t failed_count;  /* as delivered */
    void *value;            /* nbytes, valid when delivered with a result */
    bool has_value;
    uint64_t finish_ns;     /* LogP: end of its last send or receive (or
                               its delivery, if later); loopback: delivery */
    uint32_t max_inbound;   /* LogP: longest inbound queue */
    /* The ulfm scenarios (sim_ulfm.c): a shrink's new group as delivered
     * (members only up to 4096 ranks), and whether the group was
     * invalidated here at the end of the run. */
    bool new_group, new_members_ok, invalidated;
    uint32_t new_id, new_epoch, new_size;
    uint32_t *new_members;
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

    /* Summary over the non-failed ranks (see docs/simulator.md). */
    uint64_t reach_ns;      /* last delivery of a live rank */
    uint64_t finish_ns;     /* last live rank finishes */
    uint64_t first_finish_ns;
    uint32_t live;          /* ranks that never failed */
    uint32_t undelivered;   /* live ranks that never delivered */
    uint32_t bad_status;    /* live ranks that delivered an error */
    uint64_t max_rank_sends;/* most messages one rank sent */
    uint64_t messages_at_reach; /* LogP: messages that had left their
                                   sender by reach_ns, the work Margolin &
                                   Barak count (they stop when the last
                                   process finishes, before the leaves'
                                   last ACKs) */
    uint32_t max_inbound;   /* longest inbound queue (LogP) */
    uint32_t max_inbound_rank;
    /* LogP: Margolin & Barak's measures (sim_paper_metrics.h): a process
     * finishes when it has delivered and its last DATA left. */
    uint64_t finish_time_last;   /* latest finish of a live non-root */
    uint64_t finish_time_first;  /* earliest finish of a live process */
    uint64_t messages_by_finish; /* sent up to each sender's own finish */
    uint32_t paper_max_queue;    /* longest inbound queue of a live
                                    process up to its own finish */
    uint32_t paper_max_queue_rank;
    uint64_t backend_bytes; /* the world's own memory after the run */
    double wall_setup_s, wall_run_s, wall_teardown_s; /* host seconds */
    void *slab;             /* storage behind inputs and values */
} ftc_scenario_result_t;

/* Defaults: allreduce, corrected, n 8, f 1, int64 sum, count 1, input
 * rank, latency 1 us, send cost 100 ns, transport reports failures after
 * 50 us, suspect after 1 ms, probe expires after 2 ms; loopback model. */
void ftc_scenario_init(ftc_scenario_t *s);

/* Switch s to the LogP model with its defaults: L 2, o 1, g 1,
 * parallelism 1, FIFO; in time units, failure reports after 100, suspect
 * after 1000, probe expires after 2000. */
void ftc_scenario_use_logp(ftc_scenario_t *s);

/* The default class per message kind for FTC_QUEUE_KIND: tree data
 * (bcast, tree-up, up-correction, abort, nudge) first, then corrections,
 * then control. */
void ftc_scenario_default_kind_classes(uint8_t cls[16]);

/* Runs to quiescence. Returns FTC_OK (the result describes what happened,
 * good or bad) or an error for an impossible scenario (FTC_EINVAL with a
 * message in err, which may be NULL). */
int ftc_scenario_run(const ftc_scenario_t *s, ftc_scenario_result_t *res,
                     char *err, size_t errlen);

void ftc_scenario_result_free(ftc_scenario_result_t *res);

/* The random faults a run of s draws (from fault_seed alone, whatever the
 * algorithm): distinct ranks, none already in fail[], never the root when
 * protected. Fills pre (random_fail ranks) and crash_rank, crash_time
 * (random_crash ranks and their times). FTC_OK, FTC_EINVAL (with err) or
 * FTC_ENOMEM. */
int ftc_scenario_draw_faults(const ftc_scenario_t *s, uint32_t *pre,
                             uint32_t *crash_rank, uint64_t *crash_time,
                             char *err, size_t errlen);

/* Fill buf (count elements of dtype) with rank's input. */
int ftc_scenario_input(const ftc_scenario_t *s, uint32_t rank, void *buf);

/* args.params for a run of family algo with these corrected parameters:
 * cp itself, or tp filled from it for the tree family. */
static inline const void *ftc_scenario_params(ftc_algo_t algo,
                                              const ftc_corrected_params_t *cp,
                                              ftc_tree_params_t *tp)
{
    if (algo != FTC_ALGO_TREE)
        return cp;
    ftc_tree_params_init(tp);
    tp->bcast_tree = cp->bcast_tree;
    return tp;
}

#endif
