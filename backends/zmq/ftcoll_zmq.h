/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ZeroMQ backend: the transport ops of include/ftcoll/transport.h over
 * libzmq TCP, for real processes. docs/backends.md walks through it.
 *
 * Sockets. Each rank binds one ROUTER (default tcp://127.0.0.1:*, an
 * ephemeral port) on which it receives everything, and connects one DEALER
 * per peer it talks to, lazily (on the first send to the peer, or when the
 * core starts watching it). The DEALER's routing id names the sender:
 * 'F', its rank (u32 little-endian), the job token (u64 little-endian). A
 * connection whose routing id is anything else is a stranger: its messages
 * reach the core as FTC_RANK_UNKNOWN, where the decoder drops and counts
 * them (ftc_context_counters). One TCP connection per ordered pair keeps
 * each pair's messages in order, as transport.h requires.
 *
 * Failure reports. Every DEALER is monitored (zmq_socket_monitor). A
 * connection that was up and goes down (the peer's process died, or a ZMTP
 * heartbeat timed out because it hangs) is reported to the core through
 * ftc_transport_peer_failed() once the peer's own connection to our
 * ROUTER has ended and the ROUTER has been read after that: the peer's
 * last messages travel on that other connection and must be handed over
 * before its death is, however late this process runs (a SIGSTOP, a
 * loaded machine). A peer that never connected to us is reported after
 * disconnect_grace_ms instead. A peer that
 * cannot be reached at all (connection refused or timed out
 * connect_retries times in a row, a handshake with something that is not
 * a ZMTP peer) is reported too. Deaths are reported for any peer, watched
 * or not; watch() only makes sure there is a connection to lose. Reports
 * are final, as in the core. The core's own keepalive (suspect and probe
 * timeouts) remains the detector of last resort.
 *
 * Progress and threads. Everything happens in ftc_zmq_progress(), on the
 * caller's thread: it reads monitor events and messages, fires the core's
 * timer, and feeds the core (ftc_transport_recv, _timer_fired,
 * _peer_failed). ZeroMQ's own I/O thread moves the bytes. A backend and
 * its context are used from one thread at a time (the embedder's lock or
 * loop serialises them), and ftc_zmq_progress() must not be called from
 * inside a deliver callback (such a call returns 0 and does nothing).
 *
 * Embedding in an event loop. ftc_zmq_fd() is an epoll descriptor that
 * becomes readable when any socket may have work or the core's timer is
 * due. ZeroMQ signals edges, not levels: once the descriptor is readable,
 * call ftc_zmq_progress(z, 0) until it returns 0, then poll again.
 * Without an event loop, call ftc_zmq_progress(z, timeout_ms) in a loop:
 * it blocks at most timeout_ms (-1: until something happens) when there
 * is nothing to do.
 *
 * Sends never block: a message ZeroMQ cannot take at once (its high-water
 * mark is reached) waits in a per-peer queue that progress flushes. A
 * queue that would exceed max_queued_bytes means the peer does not read;
 * the send then fails and the core declares the peer failed.
 *
 * Life cycle:
 *
 *     ftc_zmq_config_init(&zc); zc.rank = r; zc.nranks = n; ...
 *     ftc_zmq_create(&zc, &z);
 *     ftc_zmq_exchange(z, allgather, arg);     or endpoint_address +
 *                                              set_peers by hand
 *     ftc_context_create(r, n, ftc_zmq_ops(), z, &cfg, &ctx);
 *     ftc_zmq_attach(z, ctx);
 *     ... collectives, ftc_zmq_progress() ...
 *     ftc_context_destroy(ctx);               the core calls the ops while
 *     ftc_zmq_destroy(z);                     it ends: destroy z last
 *
 * Linux only (epoll, timerfd).
 */
#ifndef FTCOLL_ZMQ_H
#define FTCOLL_ZMQ_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/context.h"
#include "ftcoll/knob.h"
#include "ftcoll/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_zmq ftc_zmq_t;

/* Longest endpoint address, terminating NUL included. */
#define FTC_ZMQ_ADDR_MAX 128

/* Receives one line of diagnostics (no trailing newline). */
typedef void (*ftc_zmq_log_fn)(void *arg, const char *msg);

typedef struct ftc_zmq_config {
    size_t size;                /* sizeof(ftc_zmq_config_t); config_init */
    uint32_t rank, nranks;      /* this process, of nranks (required) */
    /* Put in every routing id; a connection with another token is a
     * stranger. Use the core's job token (ftc_config_t.job_token). */
    uint64_t job_token;
    /* What the ROUTER binds, any zmq_bind() endpoint; default
     * "tcp://127.0.0.1:*". "tcp://eth0:*" binds an interface's address.
     * When it binds a wildcard address (tcp://0.0.0.0:*), the advertised
     * address uses advertise_host, or the host name if that is NULL. */
    const char *bind_endpoint;
    const char *advertise_host;
    /* ZMTP heartbeats on every connection: a peer silent for
     * heartbeat_timeout_ms (a hung process, a cut link) loses its
     * connection and is reported failed. 0 turns them off. Defaults 1000
     * and 10000: longer than the core's adaptive keepalive, which should
     * be the one to judge a peer slowed by a busy machine. */
    int heartbeat_ivl_ms, heartbeat_timeout_ms;
    int reconnect_ivl_ms;       /* ZMQ_RECONNECT_IVL; default 10 */
    int connect_timeout_ms;     /* ZMQ_CONNECT_TIMEOUT; default 1000 */
    /* Failed attempts, before the first success, after which a peer is
     * reported unreachable; default 3. */
    int connect_retries;
    /* Delay between a lost connection and its report, for a peer that
     * never connected to this rank (one that did is reported once its
     * connection has ended and been read); default 2. */
    int disconnect_grace_ms;
    size_t max_queued_bytes;    /* per peer, beyond ZeroMQ's; default 64 MiB */
    int sndhwm, rcvhwm;         /* messages; defaults 10000 and 100000 */
    /* ftc_zmq_destroy waits at most this long for queued messages to live
     * peers to leave (ZMQ_LINGER); messages to failed peers are dropped at
     * once. Default 500. */
    int linger_ms;
    ftc_zmq_log_fn log;         /* NULL: silent */
    void *log_arg;
    /* Where the ranks run: 1 every rank on this host, 0 on several
     * hosts, -1 unknown (default; ftc_bootstrap_single_host gives it).
     * bind_endpoint decides where the ROUTER listens in every case (its
     * default, 127.0.0.1, is right for one host); with 0, an endpoint
     * only this host can reach (127.0.0.0/8, ::1, ipc://) is refused
     * with FTC_EINVAL: the other hosts could not connect. */
    int single_host;
    /* The largest collective buffer the job sends (count x element size),
     * in bytes; 0: no limit. It bounds the largest message a rank takes:
     * ftc_zmq_max_message(), set as ZMQ_MAXMSGSIZE on the ROUTER, so that
     * a frame above it (from anyone who can connect) is refused from its
     * header and its connection closed, instead of ZeroMQ allocating it
     * whole (a 256 MiB frame used to grow a rank by 272 MB). A send above
     * it fails with FTC_EOVERFLOW, logged (the receiver would have dropped
     * the connection anyway). Give the core ftc_zmq_max_message() as the
     * ops' max_msg_size and it never sends one: longer payloads go in
     * segments, so collectives of any size run. Set the same value on
     * every rank. Default 32 MiB (a largest message of 64 MiB and a few
     * bytes, as large as max_queued_bytes lets a peer's queue hold). */
    size_t max_payload;
    /* 1: connect a DEALER to every peer when the peers are set, and
     * return from ftc_zmq_set_peers (and ftc_zmq_exchange) once each
     * has finished its ZMTP handshake or been found unreachable. A
     * peer's connection whose handshake is done carries its messages
     * into this process's kernel even while this process is stopped
     * (SIGSTOP): an exclusion notice then reaches it, to read when it
     * resumes. Made only on demand (0, the default), a connection to a
     * stopped process cannot finish its handshake, and what is sent on
     * it is dropped when the sender exits; the notice then comes from
     * the peers that had sent to it before it stopped, which the core
     * has tell it (lib/core/notice.c). n - 1 connections per rank. */
    int eager_connect;
} ftc_zmq_config_t;

/* Defaults as above; rank 0, nranks 0 (set them). */
void ftc_zmq_config_init(ftc_zmq_config_t *cfg);

/* Every environment variable ftc_zmq_config_from_env reads, with its
 * default and meaning; the last entry's name is NULL. */
const ftc_knob_t *ftc_zmq_knobs(void);

/*
 * Override cfg from the environment, for launcher-started programs:
 * FTCOLL_ZMQ_BIND, FTCOLL_ZMQ_HOST (advertise_host),
 * FTCOLL_ZMQ_HEARTBEAT_MS, FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS,
 * FTCOLL_ZMQ_CONNECT_RETRIES, FTCOLL_ZMQ_GRACE_MS, FTCOLL_ZMQ_LINGER_MS,
 * FTCOLL_SINGLE_HOST (1 or 0: single_host), FTCOLL_ZMQ_MAX_PAYLOAD (bytes,
 * 0 for no limit: max_payload), FTCOLL_ZMQ_CONNECT (eager or lazy:
 * eager_connect).
 * Returns FTC_OK, or FTC_EINVAL naming the bad variable in err.
 */
int ftc_zmq_config_from_env(ftc_zmq_config_t *cfg, char *err, size_t errlen);

/*
 * Create the backend and bind its ROUTER. FTC_EINVAL (bad config),
 * FTC_ENOMEM, FTC_ETRANSPORT (ZeroMQ refused: the bind failed, ...; the
 * log says why).
 */
int ftc_zmq_create(const ftc_zmq_config_t *cfg, ftc_zmq_t **out);

/* Frees everything; see linger_ms. The context must be destroyed first.
 * NULL is a no-op. */
void ftc_zmq_destroy(ftc_zmq_t *z);

/* The ops table for ftc_context_create (z is the `transport` argument). */
const ftc_transport_ops_t *ftc_zmq_ops(void);

/*
 * The largest message this rank accepts and sends, in bytes (0: no
 * limit): what a core message of a collective of max_payload bytes can
 * come to. 2 x max_payload (a reduce message carries the value and, after
 * an allreduce root failed, the result accepted in an earlier round),
 * 8 bytes per rank (two lists of failed ranks) and 256 (the 64-byte wire
 * header, the accepted result's headers, slack).
 */
size_t ftc_zmq_max_message(const ftc_zmq_t *z);

/* Where the ROUTER listens, e.g. "tcp://127.0.0.1:40123". */
const char *ftc_zmq_endpoint_address(const ftc_zmq_t *z);

/*
 * Every rank's address, addrs[0 .. nranks-1] (this rank's is ignored).
 * Copied. Checked for form only (tcp://host:port or ipc://path); an
 * address that cannot be reached surfaces later, as a failure report.
 * FTC_EINVAL names the first bad one in the log. May be called once.
 */
int ftc_zmq_set_peers(ftc_zmq_t *z, const char *const *addrs);

/*
 * Swap addresses with an out-of-band allgather and set the peers. The
 * callback has the shape of ftc_allgather_fn (backends/bootstrap): it
 * contributes len bytes and writes every rank's len bytes, in rank order,
 * to all; 0 on success. Returns FTC_ETRANSPORT if it failed.
 */
int ftc_zmq_exchange(ftc_zmq_t *z,
                     int (*allgather)(void *arg, const void *mine,
                                      size_t len, void *all),
                     void *arg);

/* Route events to ctx, created on z with ftc_zmq_ops(). Before the first
 * progress call. */
void ftc_zmq_attach(ftc_zmq_t *z, ftc_context_t *ctx);

/* The descriptor to poll for readability; see the top of this file. */
int ftc_zmq_fd(const ftc_zmq_t *z);

/*
 * Handle what is ready: monitor events, messages, queued sends, due
 * failure reports, the core's timer. If nothing was, wait up to
 * timeout_ms (0: not at all, -1: no limit) for something and handle it.
 * Returns the number of events handled (0: nothing happened), or
 * FTC_EINVAL when no context is attached. Deliver callbacks run from here.
 */
int ftc_zmq_progress(ftc_zmq_t *z, int timeout_ms);

/* What the backend has counted since it was created. */
typedef struct ftc_zmq_stats {
    uint64_t msgs_sent, msgs_received, bytes_sent, bytes_received;
    uint64_t msgs_queued;       /* sends that waited in the local queue */
    uint64_t msgs_dropped;      /* to failed peers whose queue was full, or
                                   queued when the core declared the peer
                                   failed (peer_down) */
    uint64_t msgs_rejected;     /* received, refused by the core's decoder */
    uint64_t msgs_stranger;     /* received on a connection with an unknown
                                   routing id */
    uint64_t connects;          /* DEALERs created */
    uint64_t disconnects;       /* established connections lost */
    uint64_t connect_failures;  /* attempts refused, timed out, or failed
                                   handshakes */
    uint64_t peers_failed;      /* ftc_transport_peer_failed reports */
} ftc_zmq_stats_t;

void ftc_zmq_stats(const ftc_zmq_t *z, ftc_zmq_stats_t *out);

/* 1 if this backend has reported peer failed, 0 if not. */
int ftc_zmq_peer_reported(const ftc_zmq_t *z, uint32_t peer);

/* What this backend saw of one peer's failure. */
typedef struct ftc_zmq_peer_info {
    int reported;               /* reported failed to the core */
    /* What was seen ("connection lost", "unreachable (...)", a ZMTP
     * handshake failure), or "" if nothing. Heartbeat timeouts show as
     * "connection lost". */
    char error[64];
    uint64_t detected_ns;       /* CLOCK_MONOTONIC of the loss, or 0 */
    uint64_t reported_ns;       /* ... of the report to the core, or 0 */
} ftc_zmq_peer_info_t;

/* FTC_OK, or FTC_EINVAL (bad peer). */
int ftc_zmq_peer_info(const ftc_zmq_t *z, uint32_t peer,
                      ftc_zmq_peer_info_t *out);

#ifdef __cplusplus
}
#endif
#endif
