/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX backend's internals, shared by its files:
 *   transport.c  life cycle, the ops table, addresses, stats
 *   endpoint.c   one UCP endpoint per peer: create, error callback, close
 *   progress.c   the event loop: worker, event queue, reports, timer
 *   event.c      the queue of what callbacks saw, fed after progress
 *   handshake.c  every endpoint wired up before the first collective
 *   config.c     defaults, environment, knob table, what UCX_TLS can do
 *   exit_watch.c local peers' exits through pidfds
 * The clock, log, timerfd, core timer and grace reporter are the
 * backends' common ones (backends/common).
 */
#ifndef FTC_UCX_INTERNAL_H
#define FTC_UCX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_ucx.h"

#include "clock.h"
#include "core_timer.h"
#include "grace.h"
#include "log.h"
#include "pid_watch.h"
#include "spin.h"
#include "timerfd.h"

/* Our active-message id; the AM header is the sender's rank (u32 LE) and
 * the job token (u64 LE). */
#define FTC_UCX_AM_ID 0x4654u
#define FTC_UCX_HDR_LEN 12
/* The set-up handshake's HELLO (handshake.c): same header, no payload. */
#define FTC_UCX_HELLO_AM_ID 0x4655u

/* Messages up to this size are copied into the event itself. */
#define FTC_UCX_EV_INLINE 232

typedef enum ftc_ucx_ev_kind {
    FTC_UCX_EV_RECV = 1,        /* a message for the core */
    FTC_UCX_EV_SEND = 2         /* a send in flight, then its completion */
} ftc_ucx_ev_kind_t;

/*
 * One thing a callback saw, queued until ucp_worker_progress() returns.
 * A send's event is allocated when the send goes in flight (it is the
 * request's user data) and queued when UCX completes it.
 */
typedef struct ftc_ucx_ev {
    struct ftc_ucx_ev *next, *prev;  /* queue (next) or in-flight list */
    struct ftc_ucx *u;          /* SEND: the completion callback's way back */
    ftc_ucx_ev_kind_t kind;
    uint32_t peer;              /* source (RECV) or destination (SEND) */
    int status;                 /* SEND: FTC_OK or FTC_ETRANSPORT */
    void *cookie;               /* SEND: the core's */
    size_t len;
    const void *data;           /* RECV: inline, heap or UCX's descriptor */
    void *heap;                 /* RECV: malloc'd copy to free, or NULL */
    void *desc;                 /* RECV: UCX data to ucp_am_data_release */
    unsigned char inl[FTC_UCX_EV_INLINE];
} ftc_ucx_ev_t;

typedef struct ftc_ucx_evq {
    ftc_ucx_ev_t *head, *tail;
    size_t count;
} ftc_ucx_evq_t;

typedef enum ftc_ucx_peer_state {
    FTC_UCX_PEER_IDLE = 0,      /* no endpoint yet */
    FTC_UCX_PEER_UP,            /* an endpoint exists */
    FTC_UCX_PEER_LOST,          /* dead or unreachable: report pending */
    FTC_UCX_PEER_FAILED         /* reported to the core: final */
} ftc_ucx_peer_state_t;

typedef struct ftc_ucx_peer {
    struct ftc_ucx *u;          /* the error callback's way back */
    uint32_t rank;
    void *addr;                 /* the peer's worker address (copy) */
    size_t addrlen;
    ucp_ep_h ep;                /* NULL while IDLE and once closed */
    ftc_ucx_peer_state_t state;
    bool watched;
    bool close_pending;         /* ep to force-close in progress */
    bool hello_seen;            /* its set-up HELLO arrived */
    bool hello_sent;            /* ours to it completed (wire-up done) */
    bool hello_pending;         /* ours to it is in flight */
    bool shm;                   /* ep's AM lane is shared memory */
    size_t inflight_bytes;
    int pidfd;                  /* its process, if on this host; else -1 */
    uint64_t detected_ns, reported_ns;
    char transport[48];
    char error[64];
} ftc_ucx_peer_t;

struct ftc_ucx {
    ftc_ucx_config_t cfg;
    /* Only tcp reaches the peers (UCX_TLS at creation): cost_hints. */
    bool costly_messages;
    unsigned char hdr[FTC_UCX_HDR_LEN];   /* ours: lives as long as u */
    unsigned char token[8];

    ucp_context_h ucp;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t address_len;
    int efd;                    /* UCX's, or -1 without wake-up support */
    int epfd;                   /* what the embedder polls */
    int tfd;                    /* timerfd: the earliest deadline */
    int kfd;                    /* eventfd: an op queued work */
    uint64_t tfd_deadline;      /* what tfd is set to; UINT64_MAX none */
    bool fd_armed;              /* progress returned idle: fds must wake */
    bool kicked;                /* kfd was written since */

    ftc_context_t *ctx;
    ftc_ucx_peer_t *peers;      /* nranks entries */
    bool peers_set;
    ftc_bk_grace_t lost;        /* ranks with a pending report */
    void **closing;             /* ep close requests not done yet */
    size_t nclosing, capclosing;

    ftc_ucx_evq_t events;       /* from callbacks, in arrival order */
    /* A pass's ucp_worker_progress runs: the AM callback may feed the
     * core at once (progress.c). False for every other caller of the
     * worker (arm, handshake, destroy), whose messages are queued. */
    bool feeding_direct;
    unsigned fed_direct;        /* messages fed so in this pass */
    /* Peers without an open shared-memory endpoint; the fast path runs
     * only at 0 (progress.c). */
    uint32_t peers_not_shm;
    ftc_ucx_evq_t self_q;       /* messages to our own rank */
    ftc_ucx_ev_t inflight;      /* sentinel of the sends in flight */
    size_t ninflight;
    ftc_ucx_ev_t *free_evs;     /* recycled events */
    size_t nfree;

    ftc_bk_core_timer_t timer;  /* the core's */
    ftc_bk_spin_t spin;         /* a blocking wait's spin (common/spin.h) */
    bool in_progress;
    bool closing_down;          /* ftc_ucx_destroy runs */
    bool diag_logged;           /* the unreachable diagnosis, once */
    char net_devices[256];      /* in effect, "" for UCX's default */
    bool set_net_devices;       /* we set them (ucp_config_modify) */

    ftc_ucx_stats_t stats;

    /* exit_watch.c */
    ftc_bk_identity_t self_id;
    int xfd;                    /* epoll set of the peers' pidfds, or -1 */
    uint32_t npidfds;
    unsigned passes_unclocked;  /* passes since the clock was read */
    uint64_t next_exit_check_ns;
    bool check_exits;           /* after a sleep: look at once */
    bool exits_clock_now;       /* after a short nap: read the clock */
};

/* transport.c */
#define ftc_ucx_logf(u, ...) \
    ftc_bk_logf((u)->cfg.log, (u)->cfg.log_arg, __VA_ARGS__)
/* Write the eventfd once so a poller of ftc_ucx_fd wakes up. */
void ftc_ucx_kick(ftc_ucx_t *u);
/* Set the timerfd for the earliest of the core's deadline, pending
 * reports and max_sleep_ms from now. */
void ftc_ucx_rearm(ftc_ucx_t *u);
/* The earliest deadline we must wake for, UINT64_MAX if none. */
uint64_t ftc_ucx_next_deadline(const ftc_ucx_t *u);

/* event.c */
ftc_ucx_ev_t *ftc_ucx_ev_alloc(ftc_ucx_t *u);
/* Make sure the next ftc_ucx_ev_alloc cannot fail (one event on the
 * free list). 0, or -1 when out of memory. */
int ftc_ucx_ev_reserve(ftc_ucx_t *u);
void ftc_ucx_ev_free(ftc_ucx_t *u, ftc_ucx_ev_t *ev);
void ftc_ucx_evq_push(ftc_ucx_evq_t *q, ftc_ucx_ev_t *ev);
ftc_ucx_ev_t *ftc_ucx_evq_pop(ftc_ucx_evq_t *q);
/* Free every event of q (their UCX descriptors too, if release). */
void ftc_ucx_evq_clear(ftc_ucx_t *u, ftc_ucx_evq_t *q, bool release);
/* Fill a RECV event with a copy of data (inline or heap). 0, or -1
 * when out of memory. */
int ftc_ucx_ev_copy(ftc_ucx_ev_t *ev, const void *data, size_t len);
/* Give a RECV event's storage back (heap copy or UCX descriptor). */
void ftc_ucx_ev_release(ftc_ucx_t *u, ftc_ucx_ev_t *ev);

/* endpoint.c */
/* Create the endpoint to r if there is none: UCS_OK (0), or UCX's error
 * (logged, with the likely cause); UCS_ERR_CANCELED when r is already
 * lost. *setup_error (if not NULL) tells whose fault an error is: true
 * for ours (no transport of ours reaches r's address, no memory, bad
 * parameters: the same for every attempt), false for r's (it refused or
 * did not answer: it died after it published its address), which the
 * caller reports as a failure. */
int ftc_ucx_peer_connect(ftc_ucx_t *u, uint32_t r, bool *setup_error);
/* r is dead or unreachable: report it after delay_ns and close its
 * endpoint on the next pass. why is kept (copied). */
void ftc_ucx_peer_lost(ftc_ucx_t *u, uint32_t r, uint64_t delay_ns,
                       const char *why);
/* Force-close the endpoints of lost peers; returns how many. */
int ftc_ucx_close_pending(ftc_ucx_t *u);
/* Force-close every endpoint (destroy). */
void ftc_ucx_close_all(ftc_ucx_t *u);
/* Free the close requests UCX has finished; returns how many remain. */
size_t ftc_ucx_reap_closing(ftc_ucx_t *u);
/* The ep's active-message transport/device as UCX chose it, into out. */
void ftc_ucx_ep_transport(ucp_ep_h ep, char *out, size_t outlen);

/* progress.c */
/* The sender's rank from an AM header of ours (rank, job token), or
 * FTC_RANK_UNKNOWN if it is not one or names no peer. */
uint32_t ftc_ucx_header_rank(const ftc_ucx_t *u, const void *header,
                             size_t header_length);
/* The AM receive callback (set on the worker by ftc_ucx_create). */
ucs_status_t ftc_ucx_am_recv_cb(void *arg, const void *header,
                                size_t header_length, void *data,
                                size_t length,
                                const ucp_am_recv_param_t *param);
/* The send completion callback. The SEND event is not user_data but the
 * first word of the request's own space (ucp_params.request_size): ut_send
 * makes one only for a send UCX did not complete at once. */
void ftc_ucx_send_cb(void *request, ucs_status_t status, void *user_data);

/* handshake.c */
/* The HELLO receive callback (set on the worker by ftc_ucx_create). */
ucs_status_t ftc_ucx_hello_recv_cb(void *arg, const void *header,
                                   size_t header_length, void *data,
                                   size_t length,
                                   const ucp_am_recv_param_t *param);

/* exit_watch.c */
/* Open the epoll set of pidfds and add it to epfd. 0, or -1 (logged). */
int ftc_ucx_exits_open(ftc_ucx_t *u);
/* This process's identity, packed (FTC_BK_IDENTITY_LEN bytes). */
void ftc_ucx_exits_identity(const ftc_ucx_t *u, unsigned char *out);
/* Watch r's process from its packed identity: a pidfd if it runs on
 * this host, a report at once if it is gone, nothing otherwise. */
void ftc_ucx_exits_watch(ftc_ucx_t *u, uint32_t r, const unsigned char *id);
/* Once a millisecond, or at once after a sleep: mark the peers whose
 * process exited lost. Returns how many. */
int ftc_ucx_exits_poll(ftc_ucx_t *u);
/* Close every pidfd and the set (destroy). */
void ftc_ucx_exits_close(ftc_ucx_t *u);

/* config.c */
/* What UCX_TLS and the MM settings allow; logs notes. 0 fine; -1 only
 * transports that cannot report failures (FTC_ENOTSUP), with the
 * explanation logged. */
int ftc_ucx_check_env(const ftc_ucx_t *u);
/* Whether UCX_TLS leaves tcp as the only way to the peers: the context's
 * FTC_TRANSPORT_COSTLY_MESSAGES (transport.h, cost_hints). */
bool ftc_ucx_costly_messages(void);
/* UCX_NET_DEVICES for the context, from cfg.net_devices, UCX's own
 * variable or cfg.single_host (see ftcoll_ucx.h) into u->net_devices and
 * u->set_net_devices. 0, or -1 (logged) for devices a multi-host job
 * cannot use. */
int ftc_ucx_choose_devices(ftc_ucx_t *u);
/* The shared-memory receive FIFO size (elements) that keeps room for
 * an exclusion notice through cfg.stop_cover_ms of stop, or 0 to leave
 * UCX's (no shared memory, set by the user, or enough already). */
uint32_t ftc_ucx_fifo_size(const ftc_ucx_t *u);
/* The likely reason an endpoint to a peer could not be created. */
void ftc_ucx_explain_unreachable(const ftc_ucx_t *u, char *out, size_t len);
/* Why ucp_init / ucp_worker_create failed, in words a user can act on. */
void ftc_ucx_explain_init(const ftc_ucx_t *u, ucs_status_t st, char *out,
                          size_t len);

#endif
