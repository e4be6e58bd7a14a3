/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ZeroMQ backend's internals, shared by its files:
 *   transport.c  life cycle, the ops table, addresses
 *   peer.c       one DEALER per peer: connect, monitor events, send queue
 *   progress.c   the event loop: ROUTER, reports, the core's timer
 *   inbound.c    each peer's connection to our ROUTER, drained before
 *                the peer's loss is reported
 *   config.c     defaults, environment overrides and their knob table
 * The clock, log, timerfd, core timer, grace reporter and send queue are
 * the backends' common ones (backends/common).
 */
#ifndef FTC_ZMQ_INTERNAL_H
#define FTC_ZMQ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_zmq.h"
#include "clock.h"
#include "core_timer.h"
#include "grace.h"
#include "log.h"
#include "progress.h"
#include "rank_set.h"
#include "send_queue.h"
#include "timerfd.h"

/* Routing id of a rank's DEALER: 'F', rank (u32 LE), job token (u64 LE).
 * ROUTER ids may not start with a zero byte (ZeroMQ reserves those). */
#define FTC_ZMQ_ID_LEN 13
#define FTC_ZMQ_ID_MARK 'F'

/* What an epoll entry stands for: the kind in the high 32 bits of its
 * data, a peer's rank in the low ones. */
enum {
    FTC_ZMQ_TAG_ROUTER = 1,
    FTC_ZMQ_TAG_TIMER = 2,
    FTC_ZMQ_TAG_DEALER = 3,
    FTC_ZMQ_TAG_MONITOR = 4,
    FTC_ZMQ_TAG_ROUTER_MONITOR = 5
};

typedef enum ftc_zmq_peer_state {
    FTC_ZMQ_PEER_IDLE = 0,      /* no DEALER yet */
    FTC_ZMQ_PEER_CONNECTING,    /* DEALER exists, never connected */
    FTC_ZMQ_PEER_UP,            /* a connection is (or was just) up */
    FTC_ZMQ_PEER_LOST,          /* lost or unreachable: report pending */
    FTC_ZMQ_PEER_FAILED         /* reported to the core: final */
} ftc_zmq_peer_state_t;

typedef struct ftc_zmq_peer {
    char addr[FTC_ZMQ_ADDR_MAX];
    void *dealer;               /* NULL while IDLE (and for this rank) */
    void *mon;                  /* PAIR that receives the DEALER's events */
    ftc_zmq_peer_state_t state;
    bool ever_up;               /* a connection succeeded once */
    bool handshaken;            /* ... and finished its ZMTP handshake */
    uint32_t failed_attempts;   /* before ever_up */
    uint64_t lost_ns;           /* when the loss was seen (0: never) */
    uint64_t reported_ns;       /* when the core was told (0: not yet) */
    char why[64];               /* what was seen, for ftc_zmq_peer_info */
    /* Its connection to our ROUTER (inbound.c): the descriptor its last
     * message came on (-1: none yet), open until the ROUTER's monitor
     * says that descriptor disconnected. */
    int in_fd;
    bool in_open;
    ftc_bk_send_queue_t q;     /* sends ZeroMQ could not take yet */
} ftc_zmq_peer_t;

struct ftc_zmq {
    ftc_zmq_config_t cfg;
    char bind_endpoint[FTC_ZMQ_ADDR_MAX];
    char advertise_host[FTC_ZMQ_ADDR_MAX];
    char endpoint[FTC_ZMQ_ADDR_MAX];     /* ours, as peers connect to it */
    unsigned char id_token[8];           /* job token, little-endian */

    void *zctx;
    void *router;
    void *router_mon;           /* PAIR that receives the ROUTER's events */
    /* Inbound connections accepted, nothing read from them yet: their
     * descriptors (inbound.c). */
    int *anon;
    uint32_t nanon, capanon;
    int epfd;                   /* the descriptor the embedder polls */
    int tfd;                    /* timerfd for the earliest deadline */
    uint64_t tfd_deadline;      /* what tfd is armed for; UINT64_MAX: not
                                   armed, or fired and read */

    ftc_context_t *ctx;
    ftc_zmq_peer_t *peers;      /* nranks entries */
    bool peers_set;

    /* Peers with a pending report, and peers with queued sends: ranks,
     * at most nranks each, so they never grow while an op runs. */
    ftc_bk_grace_t lost;
    ftc_bk_rank_set_t queued;

    ftc_bk_send_queue_t self_q; /* messages to our own rank */

    size_t max_msg;             /* ftc_zmq_max_message(); 0: no limit */
    bool oversize_logged;

    bool router_dirty;
    ftc_bk_core_timer_t timer;  /* the core's */
    bool in_progress;

    ftc_zmq_stats_t stats;
};

/* transport.c */
#define ftc_zmq_logf(z, ...) \
    ftc_bk_logf((z)->cfg.log, (z)->cfg.log_arg, __VA_ARGS__)
/* A deadline changed: make sure the timerfd fires no later than the
 * earliest of the core's deadline and the pending reports (now, or at the
 * end of the progress call that is running). */
void ftc_zmq_rearm(ftc_zmq_t *z);
void ftc_zmq_sync_timerfd(ftc_zmq_t *z);
int ftc_zmq_epoll_add(ftc_zmq_t *z, void *sock, uint32_t tag, uint32_t rank);

/* peer.c */
/* Create, monitor and connect the DEALER to rank r if there is none.
 * 0, or -1 (logged) when ZeroMQ refused. */
int ftc_zmq_peer_open(ftc_zmq_t *z, uint32_t r);
/* Close r's sockets; queued messages leave within linger_ms (0: drop). */
void ftc_zmq_peer_close(ftc_zmq_t *z, uint32_t r, int linger_ms);
/* Read r's monitor events; returns how many changed r's state. */
/* The next event a socket monitor holds (its event and value), read
 * without waiting; false when there is none. */
bool ftc_zmq_monitor_next(void *mon, uint16_t *event, uint32_t *value);
int ftc_zmq_peer_read_events(ftc_zmq_t *z, uint32_t r);
/* eager_connect: a DEALER to every peer, and wait until each has
 * finished its handshake or was found unreachable. */
void ftc_zmq_peer_connect_all(ftc_zmq_t *z);
/* Hand r's queued messages to ZeroMQ while it takes them; returns how
 * many it took. */
int ftc_zmq_peer_flush(ftc_zmq_t *z, uint32_t r);
/* Send or queue one message to r: FTC_SEND_INLINE or a negative error. */
int ftc_zmq_peer_send(ftc_zmq_t *z, uint32_t r, const void *buf, size_t len);
/* r is gone or unreachable: report it after delay_ns. */
void ftc_zmq_peer_lost(ftc_zmq_t *z, uint32_t r, uint64_t delay_ns,
                       const char *why);

/* inbound.c */
/* Monitor the ROUTER's connections. 0, or -1 when ZeroMQ refused. */
int ftc_zmq_inbound_open(ftc_zmq_t *z);
void ftc_zmq_inbound_close(ftc_zmq_t *z);
/* A message from rank src came on descriptor fd (ZMQ_SRCFD). */
void ftc_zmq_inbound_seen(ftc_zmq_t *z, uint32_t src, int fd);
/* Is an inbound connection open that nothing was read from yet? */
bool ftc_zmq_inbound_anonymous(const ftc_zmq_t *z);
/* Read the ROUTER's monitor events: ended connections release the
 * reports that waited for them. */
void ftc_zmq_inbound_read_events(ftc_zmq_t *z);
/* How long a lost peer's report waits for its inbound connection to end
 * at most. */
uint64_t ftc_zmq_inbound_wait_ns(const ftc_zmq_t *z);

#endif
