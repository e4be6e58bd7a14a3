/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX backend: the transport ops of include/ftcoll/transport.h over
 * UCP active messages, for real processes on InfiniBand (rc, ud, dc), TCP
 * and shared memory. docs/ucx.md has the settings per transport and what
 * each one reports when a peer dies.
 *
 * Endpoints. Each rank has one UCP worker; ranks swap worker addresses
 * out of band (ftc_ucx_exchange) and create one endpoint per peer, to all
 * peers at once (eager_connect, the default) or on the first send or
 * watch. With eager endpoints ftc_ucx_exchange ends with a handshake
 * (ftc_ucx_handshake) that finishes UCX's wire-up of every endpoint
 * before the first collective. Every endpoint asks for
 * UCP_ERR_HANDLING_MODE_PEER, so UCX only picks transports that can
 * report a dead peer: with UCX_TLS=sm that
 * needs UCX_MM_ERROR_HANDLING=y, and ftc_ucx_create says so instead of
 * letting the first endpoint fail with "Destination is unreachable".
 * Messages are eager active messages (never rendezvous, so each pair's
 * messages arrive in order, as transport.h requires); a 12-byte AM header
 * carries the sender's rank and the job token, and a message with another
 * token reaches the core as FTC_RANK_UNKNOWN, where the decoder drops it.
 *
 * Failure reports. The endpoint's error callback (a peer's process died:
 * over tcp its sockets closed; over shared memory UCX's keepalive found
 * its process gone -- once reaped: a zombie still looks alive) marks the
 * peer lost; after failure_grace_ms the backend
 * reports it to the core with ftc_transport_peer_failed(), for any peer,
 * watched or not, and closes the endpoint. A hung (stopped) peer is never
 * reported by UCX: the core's keepalive (suspect and probe timeouts)
 * catches it. Reports are final, as in the core.
 *
 * Sends. ucp_am_send_nbx on the core's buffer: done at once means
 * FTC_SEND_INLINE; otherwise UCX keeps the buffer and the completion
 * reaches the core, through ftc_transport_send_done(), from a later
 * ftc_ucx_progress(). A peer with more than max_inflight_bytes of such
 * sends does not read: the send fails and the core declares it failed.
 *
 * Progress and threads. UCX runs callbacks only inside
 * ucp_worker_progress(), which only ftc_ucx_progress() calls; callbacks
 * queue what they see, and ftc_ucx_progress() feeds the core after
 * ucp_worker_progress() has returned (messages first, then failure
 * reports, then the core's timer). The ops never progress the worker and
 * never call back into the core. A backend and its context are used from
 * one thread at a time (UCS_THREAD_MODE_SINGLE), and ftc_ucx_progress()
 * called from inside a deliver callback returns 0 and does nothing.
 *
 * Embedding in an event loop. ftc_ucx_fd() is an epoll descriptor that
 * becomes readable when the UCP worker has events (ucp_worker_get_efd),
 * the core's timer is due, or an op queued work. UCX's rule applies:
 * call ftc_ucx_progress(u, 0) until it returns 0, then ftc_ucx_arm(u);
 * poll the descriptor only if that returned FTC_OK, else progress again.
 * Without an event loop call ftc_ucx_progress(u, timeout_ms): it
 * busy-polls (spin_us, adaptive by default), then sleeps at most timeout_ms (-1: no limit) when
 * there is nothing to do. Sleeps are cut to max_sleep_ms so UCX's own
 * keepalive, which runs only inside ucp_worker_progress(), keeps
 * running.
 *
 * Life cycle:
 *
 *     ftc_ucx_config_init(&uc); uc.rank = r; uc.nranks = n; ...
 *     ftc_ucx_config_from_env(&uc, err, sizeof(err));
 *     ftc_ucx_create(&uc, &u);
 *     ftc_ucx_exchange(u, allgather, arg);     or ftc_ucx_address +
 *                                              ftc_ucx_set_peers by hand
 *     ftc_context_create(r, n, ftc_ucx_ops(), u, &cfg, &ctx);
 *     ftc_ucx_attach(u, ctx);
 *     ... collectives, ftc_ucx_progress() ...
 *     ftc_ucx_flush(u, 1000);                 let sends in flight finish
 *     ftc_context_destroy(ctx);               the core calls the ops while
 *     ftc_ucx_destroy(u);                     it ends: destroy u last
 *
 * Between ftc_context_destroy and ftc_ucx_destroy call nothing else: the
 * core has freed the buffers of sends still in flight, and
 * ftc_ucx_destroy cancels them (UCP_EP_CLOSE_FLAG_FORCE) without reading
 * them.
 *
 * Linux only (epoll, timerfd, eventfd).
 */
#ifndef FTCOLL_UCX_H
#define FTCOLL_UCX_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/context.h"
#include "ftcoll/knob.h"
#include "ftcoll/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_ucx ftc_ucx_t;

/* Receives one line of diagnostics (no trailing newline). */
typedef void (*ftc_ucx_log_fn)(void *arg, const char *msg);

typedef struct ftc_ucx_config {
    size_t size;                /* sizeof(ftc_ucx_config_t); config_init */
    uint32_t rank, nranks;      /* this process, of nranks (required) */
    /* Put in every AM header; use the core's job token
     * (ftc_config_t.job_token). */
    uint64_t job_token;
    /* 1: create every endpoint when the peers are set, so a transport
     * that cannot reach a peer is an error of ftc_ucx_exchange; 0: on the
     * first send to (or watch of) a peer, which costs O(peers talked to)
     * instead of O(n) endpoints. Default 1. */
    int eager_connect;
    /* Delay between UCX's report of a dead peer and the core's; default
     * 0. The worker is always drained first, so a peer's last messages
     * reach the core before its death does. */
    int failure_grace_ms;
    /* ftc_ucx_progress with a timeout busy-polls this long before it
     * sleeps. Default -1: adaptive, up to 50 us (doubled after a spin that
     * found work, halved after one that ran out), and up to 1000 us when
     * the job has more ranks on this host than this process has CPUs,
     * where every idle pass of a spin, and an idle
     * ftc_ucx_progress(u, 0), yields the CPU. 0: sleep at once. A spin
     * set > 0 is kept when oversubscribed, and yields there. */
    int spin_us;
    /* Longest single sleep inside ftc_ucx_progress, and the longest the
     * descriptor of ftc_ucx_fd stays quiet, so that UCX's keepalive (the
     * failure detector of shared memory) runs; 0: no limit. Default 100. */
    int max_sleep_ms;
    /* Per peer; beyond it the peer is taken as not reading. Default
     * 64 MiB. */
    size_t max_inflight_bytes;
    /* ftc_ucx_destroy waits at most this long for endpoints to close;
     * default 200. */
    int close_timeout_ms;
    ftc_ucx_log_fn log;         /* NULL: silent */
    void *log_arg;
    /* Where the ranks run: 1 every rank on this host, 0 on several
     * hosts, -1 unknown (default; ftc_bootstrap_single_host gives it).
     * With 1, network transports listen on the loopback interface only:
     * UCX_NET_DEVICES becomes "lo" plus this host's InfiniBand ports
     * (/sys/class/infiniband), unless net_devices or UCX_NET_DEVICES
     * choose the devices. With 0, devices that are loopback only are
     * refused (FTC_EINVAL): the other hosts could not connect. */
    int single_host;
    /* UCX_NET_DEVICES for this backend's UCP context ("eth0",
     * "mlx5_0:1,ib0", ...; copied by ftc_ucx_create), or NULL: UCX's own
     * UCX_NET_DEVICES, else as single_host says, else every device. */
    const char *net_devices;
    /* With eager_connect, ftc_ucx_exchange ends with ftc_ucx_handshake
     * (below) with this timeout; 0: no handshake. Default 30000. */
    int handshake_timeout_ms;
    /* Ranks of the job on this host, for the wait's spin: more than the
     * CPUs this process may run on turns it off (and an idle progress
     * call with timeout 0 yields the CPU). 0 (default): the launcher's
     * local size from the environment (Open MPI, PMIx, MPICH, Slurm),
     * else every rank when single_host is 1, else unknown (spin). */
    uint32_t local_ranks;
    /* Over shared memory, a stopped process's receive FIFO fills with
     * UCX's keepalive traffic (every peer, every UCX_KEEPALIVE_INTERVAL);
     * once full, its peers' messages wait in their own UCX and are lost
     * when they exit, among them the notice that it was excluded. The
     * FIFO is sized so that a process stopped this long still has room
     * for that notice (docs/ucx.md); 0 (default): UCX's own size. Not
     * applied when UCX_SYSV_FIFO_SIZE, UCX_POSIX_FIFO_SIZE or
     * UCX_MM_FIFO_SIZE is set. Off by default because UCX takes its own
     * FIFO size for its peers' FIFOs: every process on the host that
     * talks to this one over shared memory must end with the same size
     * (the same n, UCX_KEEPALIVE_INTERVAL and setting on every rank;
     * another UCX program at UCX's default corrupts the FIFO). Setting
     * UCX_MM_FIFO_SIZE for every process is the simpler way. */
    int stop_cover_ms;
    /* 1 (default): ftc_ucx_exchange passes each rank's process identity
     * with its address, and a peer on this host is reported failed as
     * soon as its process exits (a pidfd), not after UCX's keepalive
     * (over shared memory, one UCX_KEEPALIVE_INTERVAL); 0: UCX's reports
     * only, and no identity is sent. Ranks may differ: a rank's identity
     * is recognised by its magic word, a rank without one is reached
     * and reported by UCX alone. Peers set with ftc_ucx_set_peers are
     * not watched. */
    int exit_watch;
} ftc_ucx_config_t;

/* Defaults as above; rank 0, nranks 0 (set them). */
void ftc_ucx_config_init(ftc_ucx_config_t *cfg);

/* Every environment variable ftc_ucx_config_from_env reads, with its
 * default and meaning; the last entry's name is NULL. */
const ftc_knob_t *ftc_ucx_knobs(void);

/*
 * Override cfg from the environment, for launcher-started programs:
 * FTCOLL_UCX_CONNECT (eager|lazy), FTCOLL_UCX_GRACE_MS,
 * FTCOLL_UCX_SPIN_US, FTCOLL_UCX_MAX_SLEEP_MS, FTCOLL_UCX_MAX_INFLIGHT
 * (bytes), FTCOLL_UCX_CLOSE_TIMEOUT_MS, FTCOLL_UCX_HANDSHAKE_MS,
 * FTCOLL_UCX_NET_DEVICES,
 * FTCOLL_SINGLE_HOST (1 or 0: single_host). UCX reads its own UCX_*
 * variables (UCX_TLS, UCX_NET_DEVICES, UCX_KEEPALIVE_INTERVAL,
 * UCX_MM_ERROR_HANDLING, ...) as it always does. Returns FTC_OK, or
 * FTC_EINVAL naming the bad variable in err.
 */
int ftc_ucx_config_from_env(ftc_ucx_config_t *cfg, char *err, size_t errlen);

/*
 * Create the UCP context and worker. FTC_EINVAL (bad config), FTC_ENOMEM,
 * FTC_ENOTSUP (UCX_TLS names only transports that cannot report a dead
 * peer as configured, e.g. UCX_TLS=sm without UCX_MM_ERROR_HANDLING=y),
 * FTC_ETRANSPORT (UCX refused: no usable transport or device, ...). The
 * log says what is missing and how to get it.
 */
int ftc_ucx_create(const ftc_ucx_config_t *cfg, ftc_ucx_t **out);

/* Frees everything; see the life cycle above. NULL is a no-op. */
void ftc_ucx_destroy(ftc_ucx_t *u);

/* The ops table for ftc_context_create (u is the `transport` argument). */
const ftc_transport_ops_t *ftc_ucx_ops(void);

/* This rank's UCP worker address, *len bytes; owned by u. */
const void *ftc_ucx_address(const ftc_ucx_t *u, size_t *len);

/*
 * Every rank's worker address, addrs[r] of lens[r] bytes for r < nranks
 * (this rank's is ignored). Copied. With eager_connect, creates the
 * endpoints: FTC_ETRANSPORT (logged, with the likely cause) if UCX has no
 * transport to some peer that can report failures. A peer that refuses
 * or does not answer (it died after it published its address; over tcp
 * on one host UCX calls that "Destination is unreachable" too) is no
 * error here: it is reported to the core as failed, as a peer dying
 * later would be. May be called once. Then call ftc_ucx_handshake on
 * every rank (ftc_ucx_exchange does both).
 */
int ftc_ucx_set_peers(ftc_ucx_t *u, const void *const *addrs,
                      const size_t *lens);

/*
 * Swap addresses with an out-of-band allgather (two rounds: lengths, then
 * addresses padded to the longest) and set the peers. The callback has
 * the shape of ftc_allgather_fn (backends/bootstrap): it contributes len
 * bytes and writes every rank's len bytes, in rank order, to all; 0 on
 * success. FTC_ETRANSPORT if it failed, or as ftc_ucx_set_peers.
 */
int ftc_ucx_exchange(ftc_ucx_t *u,
                     int (*allgather)(void *arg, const void *mine,
                                      size_t len, void *all),
                     void *arg);

/*
 * Finish UCX's wire-up of every endpoint before the first collective:
 * send each peer a HELLO and progress the worker until every peer's HELLO
 * has arrived and ours has gone out, which UCP allows only once the
 * endpoint's wire-up is done. Collective: every rank calls it after
 * ftc_ucx_set_peers (ftc_ucx_exchange does, with eager_connect). Without
 * it the wire-up runs during the first collectives, and UCX 1.13 aborts
 * a process when a peer dies while a wire-up message to that peer is
 * still queued on shared memory (docs/ucx.md). A peer lost meanwhile is
 * not waited for; one that neither answers nor dies within timeout_ms is
 * reported failed. Lazy endpoints connected later are not covered.
 * FTC_OK, or FTC_EINVAL (no peers set, timeout_ms < 0).
 */
int ftc_ucx_handshake(ftc_ucx_t *u, int timeout_ms);

/* Route events to ctx, created on u with ftc_ucx_ops(); NULL detaches.
 * Before the first progress call. */
void ftc_ucx_attach(ftc_ucx_t *u, ftc_context_t *ctx);

/* The descriptor to poll for readability, or -1 if the transports in use
 * have no wake-up support (then poll ftc_ucx_progress). */
int ftc_ucx_fd(const ftc_ucx_t *u);

/*
 * Drive the worker and feed the core: received messages, send
 * completions, failure reports, the core's timer. If nothing was ready,
 * wait up to timeout_ms (0: not at all, -1: no limit) for something and
 * handle it. One pass: it returns as soon as it handled something, so a
 * caller waiting for its collective acts on the delivery at once (call
 * again for more). Returns the number of events handled (0: nothing
 * happened), or FTC_EINVAL when no context is attached. Deliver callbacks
 * run from here.
 */
int ftc_ucx_progress(ftc_ucx_t *u, int timeout_ms);

/*
 * Before polling ftc_ucx_fd(): arm the worker (ucp_worker_arm) and the
 * timer. FTC_OK: the descriptor will become readable when there is work;
 * 1: there is work already, call ftc_ucx_progress again; FTC_EINVAL: no
 * context, or no descriptor (ftc_ucx_fd() is -1). While a send waits for
 * room in a peer's shared-memory FIFO UCX cannot arm (only the peer's
 * reading makes room, and that wakes nobody): then FTC_OK, and the
 * descriptor becomes readable after a short nap (50 us) to poll again.
 */
int ftc_ucx_arm(ftc_ucx_t *u);

/*
 * Progress until no send of this backend is in flight, at most
 * timeout_ms (-1: no limit). Returns how many are still in flight (0:
 * all done), or FTC_EINVAL. Call it before ftc_context_destroy.
 */
int ftc_ucx_flush(ftc_ucx_t *u, int timeout_ms);

/* What the backend has counted since it was created. */
typedef struct ftc_ucx_stats {
    uint64_t msgs_sent, msgs_received, bytes_sent, bytes_received;
    uint64_t sends_inline;      /* UCX was done with the buffer at once */
    uint64_t sends_deferred;    /* completed later (ftc_transport_send_done) */
    uint64_t send_errors;       /* refused, or completed with an error */
    uint64_t msgs_rejected;     /* received, refused by the core's decoder */
    uint64_t msgs_stranger;     /* received with an unknown header/token */
    uint64_t msgs_dropped;      /* received but lost: no memory, rendezvous */
    uint64_t eps_created;
    uint64_t ep_errors;         /* UCX error callbacks */
    uint64_t peers_failed;      /* ftc_transport_peer_failed reports */
    uint64_t worker_progress;   /* ucp_worker_progress calls */
    uint64_t sleeps;            /* waits on the descriptor, and naps
                                   between polls (no descriptor, or a send
                                   waiting for a peer's FIFO) */
} ftc_ucx_stats_t;

void ftc_ucx_stats(const ftc_ucx_t *u, ftc_ucx_stats_t *out);

/* What this backend knows about one peer. */
typedef struct ftc_ucx_peer_info {
    int connected;              /* an endpoint exists */
    int reported;               /* reported failed to the core */
    /* The transport/device of the endpoint's active-message lane as UCX
     * chose it ("tcp/lo", "posix/memory", "rc_mlx5/mlx5_0:1"), or "". */
    char transport[48];
    /* UCX's words for the failure ("Connection reset by remote peer",
     * "Endpoint timeout", ...), or "" if none. */
    char error[64];
    uint64_t detected_ns;       /* CLOCK_MONOTONIC of the error callback */
    uint64_t reported_ns;       /* ... of the report to the core */
} ftc_ucx_peer_info_t;

/* FTC_OK, or FTC_EINVAL (bad peer). */
int ftc_ucx_peer_info(const ftc_ucx_t *u, uint32_t peer,
                      ftc_ucx_peer_info_t *out);

/* 1 if this backend has reported peer failed, 0 if not. */
int ftc_ucx_peer_reported(const ftc_ucx_t *u, uint32_t peer);

/* The network devices this backend's UCP context uses, as
 * UCX_NET_DEVICES says them ("lo", "eth0", "lo,mlx5_0:1"), or "" for
 * UCX's default (every device). */
const char *ftc_ucx_net_devices(const ftc_ucx_t *u);

/* The UCX library's version string, e.g. "1.13.1". */
const char *ftc_ucx_version(void);

#ifdef __cplusplus
}
#endif
#endif
