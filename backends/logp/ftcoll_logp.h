/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LogP backend: a loopback with a cost model. N ranks of one job in
 * one process, on virtual time counted in integer LogP "time units", each
 * rank with a CPU that sends and receives at LogP cost. It runs the real
 * core (the same state machines as every other backend) and is what
 * ftcoll-sim's --model logp uses to simulate 65,536 ranks and beyond. The
 * model, exactly (docs/simulator.md has the long form with examples):
 *
 *  - Parameters: L (latency), o (CPU overhead per send and per receive),
 *    g (gap), P = n, and the parallelism: 1, a rank's CPU does one thing
 *    at a time; 2, it has a send unit and a receive unit that may be busy
 *    at the same time.
 *  - A send the core issues is queued on the sender's CPU (FIFO). When the
 *    send unit is free it takes the next one and is busy for max(o, g); at
 *    the end of that the message leaves ("departs") and the core's
 *    send_done is due. The message arrives at the destination L later.
 *  - An arrived message waits in the receiver's inbound queue until its
 *    receive unit is free; receiving it costs o, and the core gets the
 *    bytes (ftc_transport_recv) at the end of those o units.
 *  - Choosing the next thing a free CPU does at time t, after every
 *    arrival, timer, failure report and crash of time t and after the core
 *    handled this rank's send or receive that ended at t: (1) receive the
 *    next inbound message; then, only when the inbound queue is empty
 *    (parallelism 1) or on the send unit (parallelism 2), (2) hand a due
 *    send completion to the core, which may queue more sends, and (3)
 *    start the next queued send. Receives take priority over sends, and a
 *    send completion is seen by the core only when the CPU would otherwise
 *    go idle: flogsim's rules. Unless sends_first() names sends that go
 *    before receives and before other sends (Margolin & Barak's order:
 *    ftc_logp_config_t). Simultaneous arrivals queue in departure
 *    order (ties among simultaneous departures: deterministic, unspecified).
 *  - The inbound queue is FIFO, or ordered by a class the embedder's
 *    classify() gives each message (lower first; FIFO within a class;
 *    never ahead of an earlier message of the same sender, which keeps
 *    the transport contract's per-pair order).
 *  - Optionally (service()), a receive takes the first queued message of
 *    a sender at a chosen distance rather than the head.
 *  - Timers, failure reports and the core's own bookkeeping cost nothing.
 *  - now() is the virtual time in units: the core's timeouts
 *    (ftc_config_t) count in the same units.
 *
 * Failures are fail-stop. A crashed rank's context gets no event any more.
 * Messages that departed before the crash are still delivered; its queued
 * sends, the send in progress and its inbound queue are lost; messages
 * that arrive for it are dropped. A rank that watches a crashed peer is
 * told detect_delay after the crash (or when it starts watching, if that
 * is later).
 *
 * Life cycle, as the loopback's (ftcoll_loopback.h): create the world;
 * per rank ftc_context_create(r, n, ftc_logp_ops(),
 * ftc_logp_endpoint(w, r), ...) and ftc_logp_attach(); run; destroy the
 * contexts; destroy the world. The core's entry points are called only
 * from ftc_logp_run() and ftc_logp_run_until().
 *
 * Cost: O(1) per event for events within the calendar window (a ring of
 * time buckets), O(log) for far ones (timers); a watch or unwatch costs
 * O(peers the rank watches); a crash during an operation costs O(ranks +
 * watches) (before it, O(1)). Memory: 196 bytes per rank, plus 16 per
 * watch beyond two, and what is queued (messages of up to 96 payload bytes come from a pool of
 * 128-byte blocks). Out of memory inside an op aborts with a message.
 */
#ifndef FTCOLL_LOGP_H
#define FTCOLL_LOGP_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/context.h"
#include "ftcoll/error.h"
#include "ftcoll/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_logp_world ftc_logp_world_t;

typedef enum ftc_logp_queue {
    FTC_LOGP_QUEUE_FIFO = 0,     /* inbound messages in arrival order */
    FTC_LOGP_QUEUE_PRIORITY = 1  /* by classify(), lower class first */
} ftc_logp_queue_t;

/* The class of a message (its raw bytes as sent); lower is handled
 * first. Called once per message, when it is sent. */
typedef unsigned (*ftc_logp_classify_fn)(const void *buf, size_t len,
                                         void *arg);

/* What a rank's CPU did, for ftc_logp_config_t.trace. */
typedef enum ftc_logp_trace_kind {
    FTC_LOGP_SEND_START,  /* peer: destination */
    FTC_LOGP_SEND_END,    /* the message departs; peer: destination */
    FTC_LOGP_RECV_START,  /* peer: source */
    FTC_LOGP_RECV_END,    /* handed to the core; peer: source */
    FTC_LOGP_CRASH,       /* peer: unused */
    FTC_LOGP_ARRIVE       /* trace_msg only: the message joins rank's
                             inbound queue; peer: source */
} ftc_logp_trace_kind_t;

typedef void (*ftc_logp_trace_fn)(void *arg, uint64_t time, uint32_t rank,
                                  ftc_logp_trace_kind_t what, uint32_t peer);

/* One message event with the message's bytes (as sent), for an embedder
 * that measures by what a message is: SEND_END (rank the sender, the
 * message departs), ARRIVE (rank the receiver, it joins the inbound
 * queue of a live rank) and RECV_START (it leaves that queue). */
typedef void (*ftc_logp_trace_msg_fn)(void *arg, uint64_t time, uint32_t rank,
                                      ftc_logp_trace_kind_t what,
                                      uint32_t peer, const void *buf,
                                      size_t len);

typedef struct ftc_logp_config {
    uint32_t n;               /* ranks (P), 1 <= n < 2^31 */
    uint64_t L, o, g;         /* time units; default 2, 1, 1 */
    uint32_t parallelism;     /* 1 or 2; default 1 */
    ftc_logp_queue_t queue;   /* default FIFO */
    ftc_logp_classify_fn classify;  /* PRIORITY only (required then) */
    void *classify_arg;
    uint64_t detect_delay;    /* time units from a crash to the report to a
                                 watcher; UINT64_MAX: never (keepalives
                                 only); default 100 */
    ftc_logp_trace_fn trace;  /* every CPU activity, or NULL */
    ftc_logp_trace_msg_fn trace_msg; /* message events with bytes, or NULL;
                                        called with trace_arg, after trace */
    void *trace_arg;
    /* A receive choice by sender (Margolin & Barak's service distance,
     * Algorithm 1), or NULL. Before each receive, service(arg, rank)
     * names a distance d; the rank takes the first queued message (in
     * queue order, so by class under PRIORITY) whose sender has
     * distance(arg, rank, src) == d, else the head of the queue. d = 0
     * takes the head. The first message of a sender in the queue is its
     * earliest, so per-pair order still holds. Costs O(queue) per receive
     * when set. Both or neither. */
    unsigned (*service)(void *arg, uint32_t rank);
    unsigned (*distance)(void *arg, uint32_t rank, uint32_t src);
    void *service_arg;
    /* Which sends go first, or NULL: the send queue is FIFO and receives
     * come first (flogsim's rules above). Asked once per message when it
     * is sent. Such a message leaves before the messages queued ahead of
     * it, unless one of them is for the same destination (per-pair order
     * holds), and while one is queued a free CPU (parallelism 1) sends
     * before it receives: Margolin & Barak's Algorithm 1 passes DATA on
     * (tree_progress) before it answers or reads anything. */
    int (*sends_first)(const void *buf, size_t len, void *arg);
    void *sends_first_arg;
} ftc_logp_config_t;

/* Per-rank figures since the world was created. */
typedef struct ftc_logp_rank_stats {
    uint64_t sends;           /* handed to send() while alive */
    uint64_t departed;        /* sends that left (completed) */
    uint64_t received;        /* messages handed to the core */
    uint64_t busy;            /* units its CPU spent sending and receiving */
    uint64_t last_busy_end;   /* end of its last send or receive; 0: none */
    uint32_t max_inbound;     /* longest its inbound queue was */
} ftc_logp_rank_stats_t;

typedef struct ftc_logp_stats {
    uint64_t events;              /* events and CPU decisions handled */
    uint64_t messages_sent;       /* as ftc_logp_messages_sent() */
    uint64_t messages_delivered;  /* handed to ftc_transport_recv */
    uint64_t messages_rejected;   /* ... which returned an error */
    uint64_t dropped_dead;        /* destination crashed before receiving */
    uint64_t lost_in_sender;      /* queued or in progress at a crash */
    uint64_t dropped_unattached;  /* for a rank without a context */
    uint64_t peer_failed_reports;
    uint64_t timer_fires;
    uint32_t max_inbound;         /* longest inbound queue of any rank */
    uint32_t max_inbound_rank;    /* ... whose */
    uint64_t max_live_events;     /* most events queued at once */
} ftc_logp_stats_t;

/* Defaults as listed above; n = 0: set it. */
void ftc_logp_config_init(ftc_logp_config_t *cfg);

/* FTC_EINVAL (with no world) if cfg or out is NULL, n is 0 or >= 2^31,
 * parallelism is not 1 or 2, or PRIORITY has no classify; FTC_ENOMEM. */
int ftc_logp_world_create(const ftc_logp_config_t *cfg,
                          ftc_logp_world_t **out);

/* Frees the world and what is still queued; destroy the contexts first.
 * NULL is a no-op. */
void ftc_logp_world_destroy(ftc_logp_world_t *w);

/* The ops table for ftc_context_create (no progress op). */
const ftc_transport_ops_t *ftc_logp_ops(void);

/* Rank's endpoint, the `transport` argument of ftc_context_create; NULL if
 * rank >= n. */
void *ftc_logp_endpoint(ftc_logp_world_t *w, uint32_t rank);

/* Route rank's events to ctx (created on rank's endpoint); NULL detaches. */
void ftc_logp_attach(ftc_logp_world_t *w, uint32_t rank, ftc_context_t *ctx);

/* Rank's CPU is busy with other work until time t (arrival imbalance):
 * its messages wait in its inbound queue, its sends in its send queue. */
void ftc_logp_hold(ftc_logp_world_t *w, uint32_t rank, uint64_t t);

/* --- Fault injection ---------------------------------------------------- */

/* Crash rank now; before a collective starts, a pre-operational failure. */
void ftc_logp_crash(ftc_logp_world_t *w, uint32_t rank);

/* Crash rank at time t (now, if t is in the past). */
void ftc_logp_crash_at(ftc_logp_world_t *w, uint32_t rank, uint64_t t);

/* Crash rank when its k-th send counted from this call departs: that
 * message leaves, nothing after it does, and its completion is not
 * delivered. k = 0 crashes now. */
void ftc_logp_crash_after_sends(ftc_logp_world_t *w, uint32_t rank,
                                uint64_t k);

int ftc_logp_is_crashed(const ftc_logp_world_t *w, uint32_t rank);

/* Time of rank's crash; UINT64_MAX if it has not crashed. */
uint64_t ftc_logp_crash_time(const ftc_logp_world_t *w, uint32_t rank);

/* --- Running ------------------------------------------------------------ */

/* Handle events in time order until none is left or max_events were
 * handled; returns how many were. */
uint64_t ftc_logp_run(ftc_logp_world_t *w, uint64_t max_events);

/* As ftc_logp_run, but only events due at or before t; then set the clock
 * to t if it is behind. */
uint64_t ftc_logp_run_until(ftc_logp_world_t *w, uint64_t t,
                            uint64_t max_events);

/* Virtual time in units. */
uint64_t ftc_logp_now(const ftc_logp_world_t *w);

/* Messages handed to send() by live ranks. */
uint64_t ftc_logp_messages_sent(const ftc_logp_world_t *w);

void ftc_logp_stats(const ftc_logp_world_t *w, ftc_logp_stats_t *out);
void ftc_logp_rank_stats(const ftc_logp_world_t *w, uint32_t rank,
                         ftc_logp_rank_stats_t *out);

/* Bytes the world holds for its ranks, queues and events right now (for
 * the memory report; messages counted with their payloads). */
size_t ftc_logp_memory(const ftc_logp_world_t *w);

#ifdef __cplusplus
}
#endif
#endif
