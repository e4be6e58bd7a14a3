/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback backend: N ranks of one job in one process, connected by an
 * in-memory network that runs on virtual time (nanoseconds). It is
 * single-threaded and deterministic: a run is a function of the
 * configuration (seed included), of the fault-injection calls and of what
 * the cores do. The unit tests and the simulator drive the core through it.
 *
 * Life cycle, for each rank r of a world w:
 *
 *     ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(w, r), ...)
 *     ftc_lb_attach(w, r, ctx)          before the world runs
 *     ... start collectives, inject faults, ftc_lb_run(w, ...) ...
 *     ftc_context_destroy(ctx)          the world must still exist: the
 *                                       core calls its ops while it ends
 *     ftc_lb_world_destroy(w)           last
 *
 * A rank without an attached context is absent: events for it are dropped
 * (and counted in ftc_lb_stats_t.dropped_unattached).
 *
 * The entry points of the core (ftc_transport_recv and the others) are
 * called only from ftc_lb_run(), ftc_lb_run_until() and ftc_lb_step(),
 * never from inside a transport operation (transport.h). Everything else
 * here, fault injection included, may be called at any time, also from a
 * user callback that runs inside ftc_lb_run(); ftc_lb_run(), ftc_lb_step()
 * and ftc_lb_run_until() do nothing when called from inside one of them.
 *
 * The network. A send copies the bytes and returns FTC_OK; the rank's sends
 * complete one after the other, each send_cost_ns after the previous one
 * (or after it was issued, if the rank was idle). The message arrives
 * latency_ns + [0, jitter_ns] + the sender's extra delay after it was
 * issued, and never before an earlier message of the same (source,
 * destination) pair: each pair is FIFO. Fault injection may drop or corrupt
 * messages (beyond transport.h's promise of a reliable network: for tests
 * of the decoder and of the timeout paths).
 *
 * A deafened rank (ftc_lb_deafen) hears nothing any more but still runs
 * and is heard: a fault injection for the core's rule on processes cut
 * off from their group.
 *
 * Failures are fail-stop. A crashed rank's context gets no event at all any
 * more: no message, completion, timer or failure report. Its own sends go
 * nowhere (they return FTC_SEND_INLINE); its other operations are harmless.
 * Messages it sent before it crashed are still delivered; messages to it
 * are dropped. A rank that watches a crashed peer is told
 * (ftc_transport_peer_failed) detect_delay_ns after the crash (its own, if
 * ftc_lb_set_detect_delay gave it one), or when it starts watching if that
 * is later.
 *
 * Out of memory inside an op or a fault injection call aborts the process
 * with a message: a silently lost timer or message would falsify the run.
 */
#ifndef FTCOLL_LOOPBACK_H
#define FTCOLL_LOOPBACK_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/context.h"
#include "ftcoll/error.h"
#include "ftcoll/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_lb_world ftc_lb_world_t;

typedef struct ftc_lb_config {
    uint32_t n;                /* ranks, 1 <= n < 2^31 */
    uint64_t seed;             /* for jitter, drops and corruption */
    uint64_t latency_ns;       /* base one-way latency; default 1000 */
    uint64_t jitter_ns;        /* extra delay, uniform in [0, jitter_ns]
                                  per message; default 0 */
    uint64_t send_cost_ns;     /* time from a send to its send_done, sends of
                                  one rank serialised; default 100 */
    uint64_t detect_delay_ns;  /* how long the transport takes to report a
                                  watched peer's crash; UINT64_MAX: never, so
                                  only the core's keepalives detect it;
                                  default 50000 */
    double drop_prob;          /* per message, in [0, 1]; default 0 */
    double corrupt_prob;       /* per message, in [0, 1]: one random bit
                                  flipped; default 0 */
    size_t corrupt_skip;       /* the flipped bit lies at or past this byte
                                  (a shorter message is left alone): to
                                  corrupt payloads and not headers;
                                  default 0 */
} ftc_lb_config_t;

/* What the world has counted since it was created. */
typedef struct ftc_lb_stats {
    uint64_t events;             /* events handed to cores (and scheduled
                                    crashes) */
    uint64_t messages_sent;      /* as ftc_lb_messages_sent() */
    uint64_t messages_delivered; /* handed to ftc_transport_recv */
    uint64_t messages_rejected;  /* ... which returned an error */
    uint64_t messages_injected;  /* by ftc_lb_inject */
    uint64_t dropped_random;     /* lost to drop_prob */
    uint64_t corrupted;          /* a bit flipped by corrupt_prob */
    uint64_t dropped_dead;       /* destination crashed before arrival */
    uint64_t dropped_unattached; /* events for a rank without a context */
    uint64_t peer_failed_reports;/* ftc_transport_peer_failed calls */
    uint64_t dropped_deaf;       /* arrived at a deafened rank */
    uint64_t dropped_cut;        /* sent over, or in flight on, a cut link */
} ftc_lb_stats_t;

/* Defaults as listed above; n = 0 and seed = 0: set n. */
void ftc_lb_config_init(ftc_lb_config_t *cfg);

/* FTC_EINVAL if cfg or out is NULL, n is 0 or >= 2^31, or a probability is
 * not in [0, 1]; FTC_ENOMEM. */
int ftc_lb_world_create(const ftc_lb_config_t *cfg, ftc_lb_world_t **out);

/* Frees the world and the messages still in flight; contexts are the
 * caller's, and must be destroyed first. NULL is a no-op. */
void ftc_lb_world_destroy(ftc_lb_world_t *w);

/* The ops table for ftc_context_create (progress is NULL: the loopback is
 * driven from outside, by ftc_lb_run). */
const ftc_transport_ops_t *ftc_lb_ops(void);

/* Rank's endpoint: the `transport` argument of ftc_context_create. Valid
 * until the world is destroyed; NULL if rank >= n. */
void *ftc_lb_endpoint(ftc_lb_world_t *w, uint32_t rank);

/* Route rank's events to ctx, which must have been created on rank's
 * endpoint. NULL detaches (the rank is then absent). */
void ftc_lb_attach(ftc_lb_world_t *w, uint32_t rank, ftc_context_t *ctx);

/* --- Fault injection ---------------------------------------------------- */

/* Crash rank now. Before a collective starts, this is a pre-operational
 * failure. Crashing a crashed rank does nothing. */
void ftc_lb_crash(ftc_lb_world_t *w, uint32_t rank);

/* Crash rank at virtual time at_ns (now, if at_ns is in the past). Among
 * events due at the same time, those scheduled earlier run first. */
void ftc_lb_crash_at(ftc_lb_world_t *w, uint32_t rank, uint64_t at_ns);

/* Crash rank right after its k-th send counted from this call: the k-th
 * message goes out, nothing after it does. The crashing send returns
 * FTC_SEND_INLINE (the dead rank is owed no completion). k = 0 crashes
 * now. A later call replaces the count. */
void ftc_lb_crash_after_sends(ftc_lb_world_t *w, uint32_t rank, uint64_t k);

int ftc_lb_is_crashed(const ftc_lb_world_t *w, uint32_t rank);

/* Deafen rank: from now on every message that arrives for it is dropped
 * (counted in ftc_lb_stats_t.dropped_deaf), for good, while it keeps
 * running, sending and being heard. Nothing reports this to anyone. It is
 * the receiver whose shared-memory FIFO holds a slot a dying writer never
 * filled (docs/backends.md section 7): a fault beyond transport.h's
 * reliable network, for the core's "cut off" rule. Messages already
 * handed to it are not taken back; those in flight are dropped. */
void ftc_lb_deafen(ftc_lb_world_t *w, uint32_t rank);

/* Deafen rank right after its k-th send counted from this call (the k-th
 * message still goes out and is heard); k = 0 deafens now. A later call
 * replaces the count. */
void ftc_lb_deafen_after_sends(ftc_lb_world_t *w, uint32_t rank, uint64_t k);

int ftc_lb_is_deaf(const ftc_lb_world_t *w, uint32_t rank);

/* Cut the link between ranks a and b, both ways and for good: every
 * message sent over it from now on, and every one still in flight on it,
 * is dropped (counted in ftc_lb_stats_t.dropped_cut). Both ranks keep
 * running and talking to everyone else; nothing reports the cut to
 * anyone, as with a broken cable or route: only silence tells (the
 * core's keepalive probes cross the same link). A permanent link failure
 * for the gossip family (docs/gossip.md). a == b or a rank out of range:
 * nothing. */
void ftc_lb_cut_link(ftc_lb_world_t *w, uint32_t a, uint32_t b);

/* Cut the link a-b as ftc_lb_cut_link does, and have each end's transport
 * report the other failed (ftc_transport_peer_failed) at once, as a
 * transport that sees the link break on both sides would (a connection
 * reset): both ends exclude each other in the same instant of virtual
 * time, which is how the gossip paper's Figure 4 handles a link failure.
 * An end that does not watch the other now is told when it starts to.
 * Both ends live on, and nobody else is told. a == b or a rank out of
 * range: nothing. */
void ftc_lb_cut_link_reported(ftc_lb_world_t *w, uint32_t a, uint32_t b);

/* Cut the link a-b right after a's k-th send counted from this call (that
 * message still goes out); k = 0 cuts now. One pending cut per rank a: a
 * later call replaces it. */
void ftc_lb_cut_link_after_sends(ftc_lb_world_t *w, uint32_t a, uint32_t b,
                                 uint64_t k);

int ftc_lb_is_cut(const ftc_lb_world_t *w, uint32_t a, uint32_t b);

/* Messages rank sends from now on take extra_ns longer to arrive (a slow
 * process or link). Pair FIFO order still holds. */
void ftc_lb_set_delay(ftc_lb_world_t *w, uint32_t rank, uint64_t extra_ns);

/* Reports to rank of peers' crashes take delay_ns after the crash (or come
 * when rank starts watching, if that is later) instead of the world's
 * detect_delay_ns; UINT64_MAX: never. Real transports notice a death at
 * each survivor at a different time (a keepalive per process, a
 * connection reset racing the traffic); this spreads the reports the same
 * way. Applies to crashes from now on and to watches started later. */
void ftc_lb_set_detect_delay(ftc_lb_world_t *w, uint32_t rank,
                             uint64_t delay_ns);

/* Deliver a copy of len raw bytes to dest at virtual time at_ns (now, if in
 * the past) as if claimed_src (a rank or FTC_RANK_UNKNOWN) had sent them;
 * no latency, FIFO, drop or corruption applies. For garbage and foreign
 * traffic. Not counted as sent. */
void ftc_lb_inject(ftc_lb_world_t *w, uint32_t dest, uint32_t claimed_src,
                   const void *buf, size_t len, uint64_t at_ns);

/* --- Running ------------------------------------------------------------ */

/* Handle events in (time, scheduling order) until none is left or
 * max_events were handled; returns how many were. Entries that have become
 * moot (a replaced timer, an event for a crashed rank) are discarded
 * without counting and without advancing the clock. */
uint64_t ftc_lb_run(ftc_lb_world_t *w, uint64_t max_events);

/* As ftc_lb_run, but handle only events due at or before t_ns, then set
 * the clock to t_ns if it is behind. */
uint64_t ftc_lb_run_until(ftc_lb_world_t *w, uint64_t t_ns,
                          uint64_t max_events);

/* Handle one event: 1, or 0 if there is none. */
int ftc_lb_step(ftc_lb_world_t *w);

/* 1 if the event handled last handed a message to a core (claimed source
 * in *src, receiving rank in *dest), else 0: lets a test that steps the
 * world tell which message changed a context's state. */
int ftc_lb_last_arrival(const ftc_lb_world_t *w, uint32_t *src,
                        uint32_t *dest);

/* Virtual time: that of the event being or last handled. */
uint64_t ftc_lb_now(const ftc_lb_world_t *w);

/* Messages handed to send() by live ranks, the one whose send crashes its
 * rank (ftc_lb_crash_after_sends) included, sends after a crash excluded. */
uint64_t ftc_lb_messages_sent(const ftc_lb_world_t *w);
uint64_t ftc_lb_rank_messages_sent(const ftc_lb_world_t *w, uint32_t rank);

void ftc_lb_stats(const ftc_lb_world_t *w, ftc_lb_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
