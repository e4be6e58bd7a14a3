/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-bench --coll agree|shrink: the failure-mitigation calls
 * (ftcoll/mitigation.h) over real processes, each result checked here
 * and printed for the caller to compare across ranks (bench_ulfm.c says
 * what is checked and what is printed). ftcoll_bench.c keeps the options,
 * the set-up, the faults it shares with the collectives (--kill, --stop,
 * --cue, --hold, --gate) and the summary; it hands this file a host.
 */
#ifndef FTCOLL_BENCH_ULFM_H
#define FTCOLL_BENCH_ULFM_H

#include <stdbool.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"
#include "json.h"

/* A planned death of a rank at an iteration, as ftcoll-bench plans it. */
typedef struct bench_ulfm_fault {
    uint32_t rank;
    uint64_t iter;
    bool mid;           /* inside the iteration (--crash, --crash-sends) */
    uint64_t mid_us;    /* --crash: progress this long after the start */
    uint64_t sends;     /* --crash-sends: die once this many sends of the
                           iteration's agreement are out (as the call that
                           made the last returns), or at its delivery if
                           it sends fewer (0: not this kind) */
    bool in_shrink;     /* --crash-sends R@G:K:shrink: of its shrink */
} bench_ulfm_fault_t;

/* What ftcoll-bench gives this file. */
typedef struct bench_ulfm_host {
    ftc_context_t *ctx;
    ftc_group_t *group;         /* the job's group; shrink replaces it */
    uint32_t rank, n;
    int (*progress)(void *t, int timeout_ms);
    void *t;
    bool spin;                  /* --wait spin */
    double op_timeout_s;        /* a longer operation is a hang */
    uint64_t iters, warmup;
    uint32_t f;                 /* the allreduces' tolerance */
    bool with_allreduce;        /* an 8-byte allreduce after each agree */
    ftc_agree_round_t agree_round;  /* --agree-round, set on the group */
    int64_t invalidate_rank;    /* --invalidate R@G, or -1 */
    uint64_t invalidate_iter;
    const bench_ulfm_fault_t *faults;
    uint32_t nfaults;
    const uint32_t *victims;    /* may die any time (from outside) */
    uint32_t nvictims;
    /* Before iteration g: cues, holds and gates (false: this rank learnt
     * it was excluded), then a --kill or --stop planned for g. */
    bool (*before_iteration)(void *arg, uint64_t g);
    void (*die_before)(void *arg, uint64_t g);
    void *arg;
} bench_ulfm_host_t;

/* The tallies ftcoll-bench prints in its summary. */
typedef struct bench_ulfm_tally {
    uint64_t completed, ok, errors, wrong;
    uint64_t digest;
    bool excluded;
    ftc_group_t *group;         /* the group at the end (a shrunk one) */
    uint64_t lat_ns_sum;        /* measured iterations' agree latency */
    uint64_t lat_count;
    uint64_t *lat_ns;           /* per measured iteration (malloc) */
} bench_ulfm_tally_t;

/* Parses the arguments of --crash-sends R@G:K; false if malformed. */
bool bench_ulfm_parse_crash_sends(const char *s, bench_ulfm_fault_t *out);

/*
 * Wrap the transport's send so that this file can count sends (for
 * --crash-sends): call before ftc_context_create with the ops and their
 * argument, which it replaces.
 */
void bench_ulfm_wrap_send(ftc_transport_ops_t *ops, void **ops_arg);

/* Run the stream of iterations; the caller prints *tally's share of the
 * summary, and this file prints its own line ({"rank":R,"ulfm":{...}}). */
void bench_ulfm_run(const bench_ulfm_host_t *h, bool shrink,
                    bench_ulfm_tally_t *tally);

/* The old groups that shrink replaced: destroyed at the very end. */
void bench_ulfm_cleanup(void);

#endif
