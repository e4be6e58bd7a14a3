/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The backends as ftcoll-bench drives them: one table per backend
 * (bench_transport_zmq.c, bench_transport_ucx.c, bench_transport_ofi.c),
 * compiled in when meson found the backend's library. The bench picks one
 * by name (FTCOLL_BACKEND, which ftcoll-run --backend sets), so that every
 * backend runs the same checked collectives, the same fault plans and the
 * same conformance suite (tests/conformance).
 *
 * Each table wraps the backend's own public API (ftcoll_zmq.h,
 * ftcoll_ucx.h, ftcoll_ofi.h): set-up from the environment, the address
 * swap through the bootstrap, progress, teardown, what it counted, and a
 * raw ping-pong of the same transport outside ftcoll, so that the bench
 * can print the transport's floor beside the collective's latency in one
 * run.
 */
#ifndef FTCOLL_BENCH_TRANSPORT_H
#define FTCOLL_BENCH_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_bootstrap.h"

typedef struct bench_backend {
    /* As FTCOLL_BACKEND and ftcoll-run --backend spell it. */
    const char *name;

    /*
     * Create the backend for this rank from the environment (its own
     * FTCOLL_<BACKEND>_* variables and the library's: UCX_*, FI_*) and
     * swap addresses through boot. *out is the backend object. FTC_OK, or
     * a negative ftc_error_t with a message in err that says what is
     * missing and how to get it.
     */
    int (*open)(ftc_bootstrap_t *boot, void **out, char *err, size_t errlen);

    /* The core's ops and their transport argument (the backend's own
     * object, e.g. the ftc_ucx_t), and routing of its events to ctx. */
    const ftc_transport_ops_t *(*ops)(void);
    void *(*ops_arg)(void *t);
    /* The longest message the backend object sends (its ops'
     * max_msg_size: the core segments to fit), or 0 for no limit.
     * Optional (NULL: no limit). */
    size_t (*max_msg)(void *t);
    void (*attach)(void *t, ftc_context_t *ctx);

    /* As ftc_<backend>_progress: events handled, or < 0. */
    int (*progress)(void *t, int timeout_ms);

    /* The job is ending: let sends in flight leave, and stop logging
     * peers that go away (they are exiting, not failing). The bench
     * still progresses a little after it, then destroys the context. */
    void (*drain)(void *t);

    /* After ftc_context_destroy. */
    void (*destroy)(void *t);

    /* One line: the backend and the transport it runs on
     * ("ucx 1.13.1 posix/memory", "libfabric shm", "zmq tcp"). */
    void (*describe)(void *t, char *buf, size_t len);

    /*
     * The members of the summary's "transport" JSON object, without the
     * braces: at least "name", "stranger" (messages from no member of the
     * job) and "peers_failed" (failures the backend itself reported),
     * written with json_members_begin() (json.h) so that strings are
     * escaped. ftcoll-bench adds "reports" from peer_report.
     */
    void (*stats_json)(void *t, char *buf, size_t len);

    /* Whether the backend itself reported rank r failed: how (its own
     * words) and when (*t_ns, CLOCK_MONOTONIC), else NULL. */
    const char *(*peer_report)(void *t, uint32_t r, uint64_t *t_ns);

    /*
     * The raw transport, outside ftcoll: ranks 0 and 1 bounce size bytes
     * iters + warmup times; rank 0 writes iters one-way latencies
     * (round trip / 2, ns) to lat_ns. Every rank calls it (it swaps
     * addresses through boot); ranks above 1 only take part in the swap
     * and the closing barrier. title gets what was measured. FTC_OK, or
     * < 0 with a message in err.
     */
    int (*pingpong)(ftc_bootstrap_t *boot, size_t size, uint64_t warmup,
                    uint64_t iters, uint64_t *lat_ns, char *title,
                    size_t title_len, char *err, size_t errlen);
} bench_backend_t;

/*
 * The backend called name, or NULL with a message in err: a backend this
 * build left out (with the Debian package and the meson option that bring
 * it), or a name that is no backend (with the list of those built in).
 * name NULL or "" picks the first built in (zmq, ucx, libfabric).
 */
const bench_backend_t *bench_backend_find(const char *name, char *err,
                                          size_t errlen);

/* The backends built in, separated by ", ". */
void bench_backend_list(char *buf, size_t len);

/* CLOCK_MONOTONIC in ns: the clock of every t_ns the bench prints. */
uint64_t bench_now_ns(void);

/*
 * The allgather each backend's open() exchanges addresses with: the
 * bootstrap's, and then, after the last of the exchange's `rounds`
 * allgathers (bench_exchange_begin(rounds) first: UCX swaps lengths, then
 * addresses), when bench_die_after_exchange names a rank, that rank
 * SIGKILLs itself (its address published, nobody connected to it yet) and the others wait until ftcoll-run has reaped it (dead.<rank> in
 * the file rendezvous) before they go on to connect: to an address whose
 * owner is dead. A failure like any other for the survivors. Needs
 * ftcoll-run; gives up (non-zero) after timeout_s.
 */
extern int64_t bench_die_after_exchange;   /* a rank, or -1 */
extern double bench_die_wait_s;            /* the survivors' bound */
void bench_exchange_begin(unsigned rounds);
int bench_exchange_allgather(void *boot, const void *mine, size_t len,
                             void *all);

/* The tables, where built. */
extern const bench_backend_t bench_backend_zmq;
extern const bench_backend_t bench_backend_ucx;
extern const bench_backend_t bench_backend_ofi;

#endif
