/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams: many collectives on one group, run by n ranks on the loopback
 * backend, with crashes placed by progress (which operation of the stream,
 * and after how many of the rank's own sends in it), and a checker that
 * asserts every operation's properties (docs/semantics.md) AND the API's
 * own promises about what a result holds.
 *
 * Why a separate runner from scenario.h: the one-operation checker cannot
 * see what goes wrong between operations: operation k+1's messages
 * arriving while k is still deciding at a laggard, a lingering operation
 * serving a later round, the known-failed set carried from one operation
 * to the next, a rank exiting right after its last delivery.
 *
 * Inputs identify their contributors exactly: operation k at rank r sends
 * count = n + 2 int64 elements, element r = 1, element n = 1 and element
 * n + 1 = k + 1 (a sum over a set S then has 1 at the members of S, |S|,
 * and (k + 1) |S|: a duplicate, an input of another operation or a lost
 * contribution all show).
 */
#ifndef FTC_BENCH_STREAM_H
#define FTC_BENCH_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"

#define FTC_STREAM_MAX_FAULTS 16
#define FTC_STREAM_MAX_OPS 64

/* Rank crashes once it has sent after_sends messages counted from the
 * moment it started operation op (0: as it starts op, before any send of
 * it; a crash point past the rank's sends lands in a later operation or
 * never: `landed` tells). op = FTC_STREAM_BEFORE: before the stream. */
#define FTC_STREAM_BEFORE UINT32_MAX
typedef struct ftc_stream_fault {
    uint32_t rank;
    uint32_t op;
    uint64_t after_sends;
} ftc_stream_fault_t;

typedef struct ftc_stream {
    /* Operation k runs colls[k % ncolls] (cycling through the list). */
    ftc_coll_t colls[4];
    uint32_t ncolls;
    ftc_coll_args_t args;   /* algo, f, root0 */
    ftc_corrected_params_t corrected; /* fault_info, correction, ... */
    bool rotate_root;       /* operation k's root is (root + k) mod n */
    uint32_t n;
    uint32_t nops;          /* operations in the stream */
    uint32_t window;        /* operations in flight per rank (1: one after
                               the other, each started from the previous
                               one's deliver callback) */
    /* After its last delivery a rank leaves: it calls ftc_group_finalize
     * (when finalize is set) and exits (crashes, as a process that ends)
     * once that delivered; without finalize it exits at once. Exits are
     * not failures for the checker: every operation had delivered. */
    bool exit_after_last;
    bool finalize;
    uint64_t seed, latency_ns, jitter_ns, send_cost_ns;
    uint64_t detect_delay_ns;   /* UINT64_MAX: keepalives only */
    /* NULL, or n delays: rank r's transport reports a crash
     * detect_delay_by_rank[r] after it (ftc_lb_set_detect_delay), so
     * survivors learn of one death at different times. */
    const uint64_t *detect_delay_by_rank;
    uint64_t suspect_timeout_ns, probe_timeout_ns;
    uint64_t segment_size;      /* ftc_config_t's; 0: the library default */
    uint32_t nfaults;
    ftc_stream_fault_t faults[FTC_STREAM_MAX_FAULTS];
    uint64_t max_events;        /* 0: 20M */
    /* Assert that no process ever waited on a live peer long enough to
     * probe it: with every crash reported by the transport, a stall of a
     * suspect timeout is a latency bug (a laggard that the others only
     * join when its probe reaches them). */
    bool no_stall;
} ftc_stream_t;

typedef struct ftc_stream_delivery {
    uint32_t count;         /* deliver calls (must be <= 1) */
    int status;
    bool has_value;
    uint64_t at_ns;
    uint32_t nfailed;
    uint32_t *failed;       /* as delivered */
    uint32_t failed_count;
    int64_t *value;         /* n + 2 elements when has_value */
} ftc_stream_delivery_t;

typedef struct ftc_stream_result {
    uint32_t n, nops;
    bool hit_event_limit;
    int init_error;         /* first ftc_init_* refusal, FTC_OK if none */
    uint64_t events, messages, end_ns;
    uint64_t probes;        /* keepalive probes sent, all ranks */
    /* Per rank: crashed (a scheduled fault or none), exited (left after
     * its last delivery: not a failure), the operation it was in when it
     * crashed (started ops - 1), the faults that landed. */
    bool *crashed, *exited;
    uint32_t *started;      /* operations started */
    uint32_t *crash_op;     /* FTC_STREAM_BEFORE: before the stream */
    bool landed[FTC_STREAM_MAX_FAULTS];
    uint64_t *sends_in_op;  /* [rank * nops + op]: sends counted from the
                               start of op to the start of op + 1 */
    ftc_stream_delivery_t *d;  /* [rank * nops + op] */
} ftc_stream_result_t;

void ftc_stream_init(ftc_stream_t *s);
int ftc_stream_run(const ftc_stream_t *s, ftc_stream_result_t *res,
                   char *err, size_t errlen);
void ftc_stream_result_free(ftc_stream_result_t *res);

/* Operation k's collective and root. */
ftc_coll_t ftc_stream_coll(const ftc_stream_t *s, uint32_t k);
uint32_t ftc_stream_root(const ftc_stream_t *s, uint32_t k);

/* Number of violated properties; the first is described in msg. */
int ftc_stream_check(const ftc_stream_t *s, const ftc_stream_result_t *res,
                     char *msg, size_t msglen);

/* One line of ftcoll-sim-like flags that describe s (for repro output). */
void ftc_stream_describe(const ftc_stream_t *s, char *buf, size_t len);

#endif
