/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libfabric backend: the transport ops of include/ftcoll/transport.h
 * over one libfabric reliable-datagram (FI_EP_RDM) endpoint, for real
 * processes. docs/libfabric.md has the provider notes and measurements.
 *
 * Endpoint. fi_getinfo asks for FI_EP_RDM, FI_MSG, FI_AV_TABLE,
 * FI_THREAD_DOMAIN and send-after-send ordering (transport.h wants each
 * pair's messages in order), plus FI_SOURCE if use_fi_source is set. The
 * provider is cfg.provider if set, else the FI_PROVIDER environment
 * variable's choice, else libfabric's first. A provider that is not
 * available makes create fail with FTC_ENOTSUP and a log line naming the
 * RDM providers that are. Before its first fi_getinfo the backend sets
 * FI_OFI_RXM_MSG_RX_SIZE=256 (fi_rxm(7)) if the provider asked for names
 * tcp or none is asked for, and the variable is unset: with rxm's 4096
 * its receive buffer pool grows by 17 MB, zeroed, inside fi_cq_read the
 * first time it must hold a message (hundreds of ms here; see
 * docs/libfabric.md, "Connections and rxm's buffers"). libfabric reads it
 * once, at the process's first fi_getinfo.
 *
 * Addresses. Every rank's fi_getname() address travels, in a fixed-size
 * blob that also names the provider, through an out-of-band allgather
 * (ftc_ofi_exchange) and is inserted into the address vector in rank
 * order; each peer keeps the fi_addr_t it is given. Ranks on another
 * provider are refused with a message naming both. A peer whose address
 * libfabric cannot take or loses (it died after the exchange) is
 * reported failed, FTC_OFI_DETECT_ADDRESS, not a set-up error.
 *
 * Messages. Each rank pre-posts rx_depth receive buffers of max_msg_size
 * (+ 16) bytes (default 64 KiB: 64 x 64 KiB = 4 MiB per process); a send
 * longer than max_msg_size is refused (FTC_EOVERFLOW, logged). Give the
 * core ftc_ofi_max_msg_size() as the ops' max_msg_size (in a copy of
 * ftc_ofi_ops()) and it never sends one: it cuts longer payloads into
 * segments that fit, so collectives of any size run. Every message
 * carries a 16-byte backend header: its sequence number on the pair of
 * ranks, the sender's rank and the job token. Providers order the
 * matching of messages (FI_ORDER_SAS) but not their completions
 * (tcp;ofi_rxm completes a long message after a short one sent behind
 * it), so the receiver holds early arrivals until their turn. The header
 * also names the sender (passed to ftc_transport_recv, which checks it
 * against the core's own header); with use_fi_source the provider's word
 * must agree too. RDM endpoints do not authenticate the source, so the
 * token decides who takes part: a message shorter than the header is
 * dropped, and one with another token is handed to the core as
 * FTC_RANK_UNKNOWN (whose decoder drops and counts it) without touching
 * any pair's sequence; both count as msgs_stranger. Only messages with
 * the job's token are sequenced.
 *
 * Connections. Connection-oriented providers connect to a peer on the
 * first send to it, and tcp;ofi_rxm (libfabric 1.17) progresses the
 * peer's side of that only while the peer reads its CQ, at most every
 * FI_OFI_RXM_CM_PROGRESS_INTERVAL (10 ms), and not at all while the peer
 * sleeps: the CQ's wait descriptor does not wake for a connection
 * request. A first message to a peer that waits on its own receives
 * could take a hundred ms or more, long enough for the core's keepalive
 * to declare a healthy rank failed (docs/libfabric.md, "Connections and
 * rxm's buffers").
 * So by default (eager_connect) ftc_ofi_set_peers sends every peer a
 * hello, a header-only message that the receiver drops, and polls the CQ
 * (never sleeping on its descriptor) until every hello has completed:
 * a completion needs the connection, which needs the peer's process to
 * accept it. A peer that does not within connect_timeout_ms is reported
 * failed (FTC_OFI_DETECT_CONNECT); one whose process exits meanwhile, or
 * is gone already (a local peer whose pid no longer exists), as any exit. Connections are then in place before the first collective,
 * as the UCX backend's eager endpoints are.
 *
 * Sends never block and never make the core wait for a completion: a
 * message (header included) of at most the provider's inject size goes
 * out with fi_inject; a longer one is copied into a backend buffer and
 * sent with fi_send, and send returns FTC_SEND_INLINE either way. Only
 * when zcopy_min is set do messages of at least that size go out from the
 * core's own buffer (send returns FTC_OK, and ftc_transport_send_done
 * follows from progress); see zcopy_min below for why that is off by
 * default. A send the provider cannot take now (-FI_EAGAIN, or every tx
 * slot busy) waits in a per-peer queue that progress retries, behind
 * which later sends to that peer wait too.
 *
 * Failure reports. RDM endpoints have no notion of a failed peer, so this
 * backend reports what it can and the core's keepalive does the rest:
 *  - a send completion with an error names its destination: the peer is
 *    reported failed (verbs;ofi_rxm, cxi and efa give up on a dead peer
 *    this way; tcp;ofi_rxm here practically never does);
 *  - a send the provider refuses outright (not -FI_EAGAIN) returns an
 *    error, which the core treats as the peer's failure;
 *  - a peer on this host (same boot id and pid namespace) is watched
 *    through a pidfd, checked against the process's start time so a
 *    recycled pid is never mistaken for it: its exit (SIGKILL included),
 *    seen within milliseconds, is reported once the CQ has been drained
 *    of the messages it wrote before dying (read to empty several passes
 *    in a row with none of its; no time involved), and report_grace_ms
 *    (default 0) has passed; a peer gone already when its address
 *    arrives, at once. This covers
 *    shm, whose sends keep succeeding into a dead peer's memory, and tcp,
 *    where the provider often says nothing. A hung (SIGSTOPped) peer
 *    does not exit: only the keepalive finds it;
 *  - a peer whose address the provider refuses or loses at set-up
 *    (ftc_ofi_set_peers) is reported failed.
 * Reports are for any peer, watched or not, and final. watch() and
 * unwatch() only keep count.
 *
 * Progress and threads. Everything happens in ftc_ofi_progress(), on the
 * caller's thread: it reads the CQ, feeds messages to the core, retries
 * queued sends, reports failures and fires the core's timer. A backend
 * and its context are used from one thread at a time, and
 * ftc_ofi_progress() must not be called from inside a deliver callback
 * (such a call returns 0 and does nothing). Keep calling it after your
 * collectives have delivered, while the job lives: the others may still
 * need this process's corrections and probe answers, and shm cannot even
 * connect to a process that does not progress. A barrier of your own that
 * blocks without progressing can stall them until the keepalive excludes
 * someone. While sends wait in a queue, progress retries them at least
 * every millisecond (the descriptor below wakes you for it).
 *
 * Embedding in an event loop. ftc_ofi_fd() is an epoll descriptor that
 * becomes readable when the CQ may have work (FI_WAIT_FD), the core's
 * timer is due, or a local peer exits. Call ftc_ofi_progress(z, 0) until
 * it returns 0; it then has also checked (fi_trywait) that blocking is
 * safe, and you may poll the descriptor. Providers without a usable CQ
 * wait descriptor give ftc_ofi_can_block() == 0: shm and udp;ofi_rxd have
 * none, and one that is seen to stay readable with nothing to read (net,
 * net;ofi_rxm 1.17) or quiet while completions arrive is given up at run
 * time (logged). The descriptor then still wakes you for timers and
 * exits, but the CQ must be polled, so call progress(z, 0) in your loop
 * instead of sleeping. Without an event loop call
 * ftc_ofi_progress(z, timeout_ms): it waits at most
 * timeout_ms (-1: until something happens) when there is nothing to do,
 * sleeping on the descriptor when it can, else polling (spinning for a
 * while, then napping 100 us at a time).
 *
 * Life cycle:
 *
 *     ftc_ofi_config_init(&oc); oc.rank = r; oc.nranks = n; ...
 *     ftc_ofi_config_from_env(&oc, err, sizeof(err));   optional
 *     ftc_ofi_create(&oc, &z);
 *     ftc_ofi_exchange(z, allgather, arg);     or ftc_ofi_local_blob +
 *                                              ftc_ofi_set_peers by hand
 *     ftc_context_create(r, n, ftc_ofi_ops(), z, &cfg, &ctx);
 *     ftc_ofi_attach(z, ctx);
 *     ... collectives, ftc_ofi_progress() ...
 *     ftc_context_destroy(ctx);               the core calls the ops while
 *     ftc_ofi_destroy(z);                     it ends: destroy z last, and
 *                                             right after (no progress in
 *                                             between)
 *
 * Linux only (epoll, timerfd, pidfd).
 */
#ifndef FTCOLL_OFI_H
#define FTCOLL_OFI_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/context.h"
#include "ftcoll/knob.h"
#include "ftcoll/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_ofi ftc_ofi_t;

/* Longest fi_getname() address the blob can carry. */
#define FTC_OFI_ADDR_MAX 256
/* Longest provider name (e.g. "tcp;ofi_rxm"), NUL included. */
#define FTC_OFI_PROV_MAX 64
/* Size of the address blob every rank contributes to the exchange. */
#define FTC_OFI_BLOB_SIZE 424

/* Receives one line of diagnostics (no trailing newline). */
typedef void (*ftc_ofi_log_fn)(void *arg, const char *msg);

typedef struct ftc_ofi_config {
    size_t size;                /* sizeof(ftc_ofi_config_t); config_init */
    uint32_t rank, nranks;      /* this process, of nranks (required) */
    /* Carried in the address blob: a blob with another token is refused
     * (a rendezvous shared by two jobs). Use the core's job token. */
    uint64_t job_token;
    /* fi_getinfo's provider name, e.g. "tcp;ofi_rxm", "shm",
     * "verbs;ofi_rxm", "cxi", "efa", "psm3". NULL: libfabric's first
     * choice among what FI_PROVIDER allows. */
    const char *provider;
    /* fi_getinfo's node and service, passed with FI_SOURCE: the local
     * address to bind (e.g. "127.0.0.1" or an interface's address) and
     * port. NULL: the provider's default interface, an ephemeral port.
     * Ignored by providers that do not use IP addresses (shm). */
    const char *node;
    const char *service;
    /* fi_getinfo's domain name, e.g. "mlx5_0" or "lo". NULL: any. */
    const char *domain;
    /* Longest message, in bytes, and the size of each receive buffer;
     * default 65536. */
    size_t max_msg_size;
    /* Receive buffers pre-posted; default 64 (capped at the provider's
     * rx size). */
    uint32_t rx_depth;
    /* Sends in flight at once; default 256 (capped at the provider's tx
     * size). More wait in the per-peer queue. */
    uint32_t tx_depth;
    /* Inject size to ask the provider for when its default is smaller
     * (tcp;ofi_rxm offers 64 bytes, less than one ftcoll header plus an
     * 8-byte value); default 256. 0: take the provider's. */
    size_t inject_size;
    /* 0 (default): every send is copied (or injected) and returns
     * FTC_SEND_INLINE. N > 0: messages of at least N bytes are sent from
     * the core's buffer and completed with ftc_transport_send_done. Off by
     * default because a provider may never complete a large send to a
     * dead peer (shm's CMA and rxm's rendezvous wait for the receiver),
     * and the core cannot free that buffer or move on from it until it
     * does; with copies the backend holds the bytes instead. */
    size_t zcopy_min;
    /* Bytes a peer's send queue may hold before the send fails (and the
     * core declares the peer failed); default 64 MiB. */
    size_t max_queued_bytes;
    /* Ask for FI_SOURCE and drop a message whose backend header names
     * another sender than the provider does. Default 0: the header
     * already names the sender (and the core checks it against its own),
     * and FI_SOURCE costs shm 0.2 us a message here. */
    int use_fi_source;
    int use_wait_fd;            /* ask for an FI_WAIT_FD CQ; default 1 */
    int pid_monitor;            /* watch local peers' exits; default 1 */
    /* Least delay between a local peer's exit and its report; default 0.
     * The peer's last messages are read first whatever it is: the report
     * waits until the CQ has been read to empty several passes in a row
     * without one of its messages. (It was a fixed 2 ms, the only wait.) */
    int report_grace_ms;
    /* Test aid: register buffers as if the provider wanted FI_MR_LOCAL;
     * default 0. */
    int force_mr_local;
    ftc_ofi_log_fn log;         /* NULL: silent */
    void *log_arg;
    /* (Appended: the fields above keep their offsets.) */
    /* 1 (default): ftc_ofi_set_peers connects to every peer before it
     * returns, by sending each a hello and reading the CQ until every
     * hello has completed (see "Connections" at the top); 0: connections
     * are made on the first send to a peer, as the provider does them. */
    int eager_connect;
    /* How long ftc_ofi_set_peers waits for the hellos, in ms; a peer
     * whose hello has not completed by then is reported failed
     * (FTC_OFI_DETECT_CONNECT); default 10000. */
    int connect_timeout_ms;
    /* Where the ranks run: 1 every rank on this host, 0 on several
     * hosts, -1 unknown (default; ftc_bootstrap_single_host gives it).
     * With 1 and no node, IP providers (tcp, net, udp, ...) bind
     * 127.0.0.1 (node "127.0.0.1" with FI_SOURCE) unless a provider
     * interface variable (FI_TCP_IFACE, FI_NET_IFACE, FI_UDP_IFACE,
     * FI_SOCKETS_IFACE, FI_VERBS_IFACE) chooses; a provider that cannot
     * bind it (verbs) is asked again without. With 0, an endpoint bound
     * to a loopback address is refused (FTC_EINVAL): the other hosts
     * could not connect. */
    int single_host;
    /* Ranks of the job on this host, for the wait's spin: more than the
     * CPUs this process may run on turns it off (and an idle progress
     * call with timeout 0 yields the CPU). 0 (default): the launcher's
     * local size from the environment (Open MPI, PMIx, MPICH, Slurm),
     * else every rank when single_host is 1, else unknown (spin). */
    uint32_t local_ranks;
} ftc_ofi_config_t;

/* Defaults as above; rank 0, nranks 0 (set them). */
void ftc_ofi_config_init(ftc_ofi_config_t *cfg);

/* Every environment variable ftc_ofi_config_from_env reads, with its
 * default and meaning; the last entry's name is NULL. */
const ftc_knob_t *ftc_ofi_knobs(void);

/*
 * Override cfg from the environment, for launcher-started programs:
 * FTCOLL_OFI_PROVIDER (else FI_PROVIDER applies inside libfabric),
 * FTCOLL_OFI_NODE, FTCOLL_OFI_SERVICE, FTCOLL_OFI_DOMAIN,
 * FTCOLL_OFI_MAX_MSG, FTCOLL_OFI_RX_DEPTH, FTCOLL_OFI_TX_DEPTH,
 * FTCOLL_OFI_INJECT, FTCOLL_OFI_ZCOPY_MIN, FTCOLL_OFI_FI_SOURCE (0/1),
 * FTCOLL_OFI_WAIT_FD (0/1), FTCOLL_OFI_PID_MONITOR (0/1),
 * FTCOLL_OFI_GRACE_MS, FTCOLL_OFI_MR_LOCAL (0/1), FTCOLL_OFI_CONNECT
 * (eager|lazy), FTCOLL_OFI_CONNECT_MS, FTCOLL_SINGLE_HOST (1 or 0:
 * single_host). The strings are not
 * copied: they live in the environment. Returns FTC_OK, or FTC_EINVAL
 * naming the bad variable in err.
 */
int ftc_ofi_config_from_env(ftc_ofi_config_t *cfg, char *err, size_t errlen);

/*
 * Open the fabric, domain, address vector, CQ and endpoint, and post the
 * receive buffers. FTC_EINVAL (bad config), FTC_ENOMEM, FTC_ENOTSUP (no
 * provider matches: the log names the available ones), FTC_ETRANSPORT
 * (libfabric refused a step; the log says which and why).
 */
int ftc_ofi_create(const ftc_ofi_config_t *cfg, ftc_ofi_t **out);

/* Closes everything. The context must be destroyed first. NULL is a
 * no-op. */
void ftc_ofi_destroy(ftc_ofi_t *z);

/* The ops table for ftc_context_create (z is the `transport` argument). */
const ftc_transport_ops_t *ftc_ofi_ops(void);

/* This rank's blob of FTC_OFI_BLOB_SIZE bytes for the exchange. */
const void *ftc_ofi_local_blob(const ftc_ofi_t *z);

/*
 * Every rank's blob, nranks x FTC_OFI_BLOB_SIZE bytes in rank order, as
 * an allgather of ftc_ofi_local_blob() produces it. Checks each (format,
 * rank, job token, same provider), inserts the addresses into the address
 * vector and opens the pidfds of local peers. FTC_EINVAL names the first
 * bad blob in the log; FTC_ETRANSPORT if libfabric refused our own
 * address or left it unclear which rank an entry leads to. A peer whose
 * address it refused or lost is reported failed (FTC_OFI_DETECT_ADDRESS,
 * or FTC_OFI_DETECT_EXIT when the exit monitor saw it gone first).
 * With eager_connect (the default) it then connects to every peer, which
 * takes every rank calling it at about the same time (as after the
 * exchange's allgather), and returns once all are connected, or after
 * connect_timeout_ms with the silent peers reported failed (from the
 * first progress call after ftc_ofi_attach). Messages that arrive
 * meanwhile are kept for the core. May be called once.
 */
int ftc_ofi_set_peers(ftc_ofi_t *z, const void *blobs);

/*
 * Swap blobs with an out-of-band allgather and set the peers. The
 * callback has the shape of ftc_allgather_fn (backends/bootstrap). Returns
 * FTC_ETRANSPORT if it failed.
 */
int ftc_ofi_exchange(ftc_ofi_t *z,
                     int (*allgather)(void *arg, const void *mine,
                                      size_t len, void *all),
                     void *arg);

/* Route events to ctx, created on z with ftc_ofi_ops(); NULL detaches.
 * Before the first progress call. */
void ftc_ofi_attach(ftc_ofi_t *z, ftc_context_t *ctx);

/* The descriptor to poll for readability; see the top of this file. */
int ftc_ofi_fd(const ftc_ofi_t *z);

/* 1 if the CQ has a wait descriptor, so that sleeping on ftc_ofi_fd()
 * cannot miss a message; 0 if the CQ must be polled. */
int ftc_ofi_can_block(const ftc_ofi_t *z);

/*
 * Handle what is ready: completions, queued sends, due failure reports,
 * the core's timer. If nothing was, wait up to timeout_ms (0: not at all,
 * -1: no limit) for something and handle it. Returns the number of events
 * handled (0: nothing happened), or FTC_EINVAL when no context is
 * attached. Deliver callbacks run from here.
 */
int ftc_ofi_progress(ftc_ofi_t *z, int timeout_ms);

/* The provider in use, e.g. "tcp;ofi_rxm", and a one-line description
 * (provider, fabric, domain, inject size, FI_SOURCE, wait fd, MR mode). */
const char *ftc_ofi_provider(const ftc_ofi_t *z);
const char *ftc_ofi_describe(const ftc_ofi_t *z);

/* The largest message send accepts (cfg.max_msg_size). */
size_t ftc_ofi_max_msg_size(const ftc_ofi_t *z);

/*
 * The RDM providers libfabric offers here for FI_MSG, separated by ", "
 * (as FI_PROVIDER may restrict them), into buf; returns how many. Useful
 * in error messages and to pick a provider in tests.
 */
int ftc_ofi_available_providers(char *buf, size_t len);

/* 1 if provider (as in cfg.provider) can open an RDM endpoint here. */
int ftc_ofi_provider_available(const char *provider);

/* How a peer's failure reached this backend. */
typedef enum ftc_ofi_detect {
    FTC_OFI_DETECT_NONE = 0,      /* not reported by the backend */
    FTC_OFI_DETECT_CQ_ERROR = 1,  /* a send to it completed in error */
    FTC_OFI_DETECT_EXIT = 2,      /* local peer's process exited (pidfd) */
    FTC_OFI_DETECT_SEND = 3,      /* the provider refused a send to it */
    FTC_OFI_DETECT_CONNECT = 4,   /* eager connect: no answer in time */
    FTC_OFI_DETECT_ADDRESS = 5    /* its address could not be inserted in
                                     the address vector (gone at set-up) */
} ftc_ofi_detect_t;

/* Whether the backend has reported peer failed, how, and when (on the
 * clock of the now op) if when_ns is not NULL. */
ftc_ofi_detect_t ftc_ofi_peer_reported(const ftc_ofi_t *z, uint32_t peer,
                                       uint64_t *when_ns);

const char *ftc_ofi_detect_name(ftc_ofi_detect_t d);

/* What the backend has counted since it was created. */
typedef struct ftc_ofi_stats {
    uint64_t msgs_sent, msgs_received, bytes_sent, bytes_received;
    uint64_t msgs_injected;     /* fi_inject */
    uint64_t msgs_copied;       /* fi_send from a backend copy */
    uint64_t msgs_zcopy;        /* fi_send from the core's buffer */
    uint64_t msgs_queued;       /* sends that waited in a peer queue */
    uint64_t eagain;            /* -FI_EAGAIN from the provider */
    uint64_t msgs_oversize;     /* refused: longer than max_msg_size */
    uint64_t msgs_rejected;     /* received, refused by the core's decoder */
    uint64_t msgs_unknown_src;  /* received without a known source */
    uint64_t msgs_dropped;      /* queued to peers reported dead: dropped */
    uint64_t msgs_reordered;    /* completed ahead of their turn: held */
    uint64_t msgs_bad_header;   /* backend header wrong (or FI_SOURCE
                                   disagrees): dropped */
    uint64_t cq_errors;         /* error entries read from the CQ */
    uint64_t peers_failed;      /* ftc_transport_peer_failed reports */
    uint64_t max_queue_depth;   /* largest per-peer queue seen */
    /* Received without this job's backend header: shorter than it
     * (dropped), or with another job token (handed to the core as
     * FTC_RANK_UNKNOWN, never sequenced). Last, for ABI growth. */
    uint64_t msgs_stranger;
    /* Time ftc_ofi_set_peers spent connecting (eager_connect), ns. */
    uint64_t connect_ns;
} ftc_ofi_stats_t;

void ftc_ofi_stats(const ftc_ofi_t *z, ftc_ofi_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
