/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libfabric backend's internals, shared by its files:
 *   transport.c  life cycle: fi_getinfo, the objects, receive buffers
 *   address.c    the address blob, the exchange, the address vector
 *   send.c       the send op: inject, copy, zero-copy, per-peer queues
 *   progress.c   the event loop: CQ, reports, the core's timer, waiting
 *   connect.c    eager connection set-up: a hello to every peer
 *   procmon.c    local peers' exits through pidfds
 *   config.c     defaults, environment overrides and their knob table
 * The clock, log, timerfd, core timer, grace reporter and send queue are
 * the backends' common ones (backends/common).
 */
#ifndef FTC_OFI_INTERNAL_H
#define FTC_OFI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_ofi.h"

#include "clock.h"
#include "core_timer.h"
#include "pid_watch.h"
#include "grace.h"
#include "log.h"
#include "progress.h"
#include "rank_set.h"
#include "send_queue.h"
#include "spin.h"
#include "timerfd.h"

/* What an epoll entry stands for: the kind in the high 32 bits of its
 * data, a peer's rank in the low ones. */
enum {
    FTC_OFI_TAG_CQ = 1,
    FTC_OFI_TAG_TIMER = 2,
    FTC_OFI_TAG_PIDFD = 3
};

/*
 * Every message on the wire starts with this backend's header, integers
 * little-endian:
 *
 *     0  sequence number of the message on its ordered pair of ranks, u32
 *     4  the sender's rank, u32
 *     8  the job token, u64
 *
 * Providers order the matching of messages (FI_ORDER_SAS) but not their
 * completions: tcp;ofi_rxm completes a long (segmented or rendezvous)
 * message after a short one sent behind it. The receiver puts each pair
 * back in order. RDM endpoints do not authenticate the source: anyone who
 * has a rank's address can send to it. The token keeps such strangers out
 * of the pairs' sequences (a stranger claiming rank r with a sequence
 * number ahead of the pair's would be held for ever, or desynchronise the
 * pair): only messages with the job's token are sequenced (on_recv in
 * progress.c).
 */
#define FTC_OFI_HDR 16u
#define FTC_OFI_HDR_TOKEN 8u    /* offset of the job token */
/* In the sender field: a backend message (the eager connect's hello),
 * header only, never sequenced nor given to the core. Ranks are below
 * 2^31 (config_ok). */
#define FTC_OFI_HELLO_FLAG 0x80000000u

/* A message waiting: a copy the backend owns, header included (cookie
 * NULL), or, for zero-copy, a reference to the core's bytes (cookie set,
 * completed with ftc_transport_send_done; the header is built when it is
 * posted). Copies keep their bytes in data[], so a queued copy can be
 * handed to a tx slot without copying again. The same type holds received
 * messages that arrived ahead of their turn. The message and queue types
 * are the common ones (ftc_bk_qmsg_t, ftc_bk_send_queue_t:
 * backends/common/send_queue.h). */

/* A send in flight. The fi_context2 comes first: libfabric owns it until
 * the completion (FI_CONTEXT/FI_CONTEXT2 modes). */
typedef struct ftc_ofi_tx {
    struct fi_context2 fctx;
    uint32_t dest;
    int32_t next_free;          /* free list link; -1 ends it */
    size_t len;
    void *cookie;               /* zero-copy: the core's, else NULL */
    ftc_bk_qmsg_t *owned;      /* a long copy, freed on completion */
    struct fid_mr *mr;          /* per-send registration (FI_MR_LOCAL) */
    bool busy;
    bool hello;                 /* the eager connect's hello to dest */
} ftc_ofi_tx_t;

/* A posted receive buffer. */
typedef struct ftc_ofi_rx {
    struct fi_context2 fctx;
    unsigned char *buf;
    bool posted;
} ftc_ofi_rx_t;

typedef enum ftc_ofi_peer_state {
    FTC_OFI_PEER_OK = 0,
    FTC_OFI_PEER_LOST,          /* report pending (exit_drain.c) */
    FTC_OFI_PEER_FAILED         /* reported to the core: final */
} ftc_ofi_peer_state_t;

/* The eager connect's hello to a peer (connect.c). */
typedef enum ftc_ofi_hello {
    FTC_OFI_HELLO_NONE = 0,     /* not connecting (lazy, or done with) */
    FTC_OFI_HELLO_UNSENT,       /* the provider has not taken it yet */
    FTC_OFI_HELLO_POSTED,       /* taken: waiting for its completion */
    FTC_OFI_HELLO_DONE          /* completed: connected */
} ftc_ofi_hello_t;

typedef struct ftc_ofi_peer {
    /* Its address vector entry, FI_ADDR_NOTAVAIL until inserted or when
     * the provider could not take its address (address.c): usually its
     * rank, but not after a peer the provider lost at insertion. */
    fi_addr_t fi_addr;
    ftc_bk_send_queue_t q;          /* sends the provider could not take */
    uint32_t tx_seq;            /* sequence number of our next message */
    uint32_t rx_next;           /* sequence number we deliver next */
    ftc_bk_qmsg_t *held;       /* arrived early, by sequence number */
    int pidfd;                  /* local peer's process, or -1 */
    uint8_t state;              /* ftc_ofi_peer_state_t */
    uint8_t detect;             /* ftc_ofi_detect_t of the report */
    uint8_t hello;              /* ftc_ofi_hello_t of our hello to it */
    bool hello_in;              /* its hello to us has arrived */
    bool eager;                 /* its blob says it connects eagerly */
    uint32_t watched;           /* watch() - unwatch() */
    uint64_t reported_ns;       /* FAILED: when it was told */
    /* LOST by its exit: the CQ is still being drained of its last
     * messages (exit_drain.c). heard: a message of its was read in this
     * pass; quiet: passes in a row that emptied the CQ without one. */
    bool draining;
    bool drain_heard;
    uint8_t drain_quiet;
    uint64_t lost_ns;           /* LOST: when it was found */
} ftc_ofi_peer_t;

struct ftc_ofi {
    ftc_ofi_config_t cfg;
    char provider[FTC_OFI_PROV_MAX];
    char node[256], service[64], domain_name[128];
    char describe[512];

    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    bool has_source;            /* FI_SOURCE granted: fi_cq_readfrom */
    bool mr_local;              /* register what we hand the provider */
    bool mr_endpoint;           /* ... and bind it to the endpoint */
    size_t inject_size;
    uint64_t mr_key_next;       /* requested keys without FI_MR_PROV_KEY */

    size_t iov_limit;
    unsigned char *scratch;     /* header + message for fi_inject */
    /* The header's bytes after the sequence number (sender, job token),
     * the same in every message: written once (ftc_ofi_create). */
    unsigned char hdr_tail[FTC_OFI_HDR - 4];

    /* Receive buffers: rx_depth x rx_size in one allocation. */
    size_t rx_size;             /* max_msg_size + FTC_OFI_HDR */
    ftc_ofi_rx_t *rx;
    uint32_t nrx;
    unsigned char *rx_mem;
    struct fid_mr *rx_mr;
    void *rx_desc;
    uint32_t rx_unposted;       /* buffers whose repost said -FI_EAGAIN */

    /* Send slots, each with a small bounce buffer (copy_small bytes). */
    ftc_ofi_tx_t *tx;
    uint32_t ntx;
    int32_t tx_free;
    uint32_t tx_busy;
    unsigned char *tx_mem;
    struct fid_mr *tx_mr;
    void *tx_desc;
    size_t copy_small;

    /* Addresses. */
    unsigned char blob[FTC_OFI_BLOB_SIZE];
    bool peers_set;
    uint64_t boot_token;        /* hash of this host's boot id */

    /* Descriptors. */
    int epfd;                   /* what the embedder polls */
    int tfd;                    /* timerfd for the earliest deadline */
    int cq_fd;                  /* the CQ's wait fd, or -1 */
    /* Sleeping on cq_fd is safe: it has one, and it has not been seen to
     * miss completions (net and net;ofi_rxm 1.17 do: then we poll). */
    bool cq_sleep_ok;
    bool cq_signaled;           /* the last epoll saw cq_fd readable */
    int last_epoll;             /* events the last epoll_wait returned */
    uint32_t cq_missed;         /* wake-ups in a row that cq_fd missed */
    int last_cq;                /* completions read by the last pass */
    uint64_t next_collect_ns;   /* when a busy pass next asks epoll */
    uint32_t passes_unclocked;  /* busy passes since the clock was read */
    ftc_bk_spin_t spin;         /* a blocking wait's spin (common/spin.h) */
    uint64_t tfd_deadline;      /* what tfd is armed for; UINT64_MAX none */

    ftc_context_t *ctx;
    ftc_ofi_peer_t *peers;      /* nranks entries */

    /* Peers with a pending report, and peers with queued sends: ranks,
     * at most nranks each. */
    ftc_bk_grace_t lost;
    ftc_bk_rank_set_t queued;
    uint32_t ndraining;         /* lost peers whose CQ drain is not over */
    bool cq_emptied;            /* the last pass read the CQ to empty */

    ftc_bk_send_queue_t self_q;     /* messages to our own rank */

    ftc_bk_core_timer_t timer;  /* the core's */
    bool in_progress;
    /* Messages read before ftc_ofi_attach (during the eager connect) wait
     * in their peers' held lists for the first progress call. */
    bool held_before_attach;

    ftc_ofi_stats_t stats;
};

/* Access of the buffers we register (FI_MR_LOCAL). A provider may move a
 * long message by RMA between registered buffers (rxm's rendezvous reads
 * the sender's buffer with the key of the descriptor we pass): a plain
 * FI_SEND registration stalls such a message for ever. */
#define FTC_OFI_SEND_ACCESS (FI_SEND | FI_READ | FI_REMOTE_READ)
#define FTC_OFI_RECV_ACCESS (FI_RECV | FI_WRITE | FI_REMOTE_WRITE)

/* While sends wait in a queue, progress retries them at least this
 * often, even with nothing else to do (the timerfd wakes a sleeper). */
#define FTC_OFI_RETRY_NS 1000000u

/* transport.c */
#define ftc_ofi_logf(z, ...) \
    ftc_bk_logf((z)->cfg.log, (z)->cfg.log_arg, __VA_ARGS__)
/* Set the timerfd for the next deadline (core timer, pending reports,
 * send retries). true if one is due already: run a pass, do not sleep. */
bool ftc_ofi_rearm(ftc_ofi_t *z);
/* Register buf for the provider: FI_SUCCESS or a negative fi_errno. */
int ftc_ofi_mr_reg(ftc_ofi_t *z, void *buf, size_t len, uint64_t access,
                   struct fid_mr **mr);

/* Post one receive buffer: 0 or a negative fi_errno. */
int ftc_ofi_post_recv(ftc_ofi_t *z, ftc_ofi_rx_t *r);
/* Post every receive buffer not posted yet; -FI_EAGAIN leaves the rest
 * for the next progress call. 0 or a negative fi_errno. */
int ftc_ofi_repost(ftc_ofi_t *z);

/* address.c */
void ftc_ofi_blob_build(ftc_ofi_t *z, const void *addr, size_t addrlen);

/* send.c */
int ftc_ofi_send(ftc_ofi_t *z, uint32_t dest, const void *buf, size_t len,
                 void *cookie);
/* Hand r's queued messages to the provider while it takes them; returns
 * how many it took. */
int ftc_ofi_flush_peer(ftc_ofi_t *z, uint32_t r);
/* Post the eager connect's hello to r (fi_send, for its completion):
 * 0, -FI_EAGAIN (try again), or another negative fi_errno. */
int ftc_ofi_post_hello(ftc_ofi_t *z, uint32_t r);
/* Release a completed (or failed) tx slot. */
void ftc_ofi_tx_release(ftc_ofi_t *z, ftc_ofi_tx_t *t);
/* Drop r's queue: copies are freed, zero-copy sends are completed to the
 * core with status (from progress only). */
void ftc_ofi_drop_queue(ftc_ofi_t *z, uint32_t r, int status);

/* progress.c */
/* Step 1 of a pass: epoll (timer, pidfds, CQ descriptor); returns the
 * number of peers found dead. */
int ftc_ofi_collect(ftc_ofi_t *z, int timeout_ms);
/* Step 2: read the CQ; returns the entries handled. Before
 * ftc_ofi_attach, messages are held for the core, not delivered. */
int ftc_ofi_read_cq(ftc_ofi_t *z);
/* Free the messages held for their turn. */
void ftc_ofi_held_clear(ftc_ofi_peer_t *p);
/* r is gone: report it after delay_ns, noting how it was found. */
void ftc_ofi_peer_lost(ftc_ofi_t *z, uint32_t r, ftc_ofi_detect_t how,
                       uint64_t delay_ns, const char *why);

/* exit_drain.c */
/* r's process has exited: report it once the CQ has been drained of its
 * last messages (and report_grace_ms has passed). */
void ftc_ofi_exit_seen(ftc_ofi_t *z, uint32_t r);
/* After a pass's CQ read: end the drains that are over. */
void ftc_ofi_drain_step(ftc_ofi_t *z);

/* connect.c */
/* Connect to every peer (eager_connect): see ftcoll_ofi.h. */
void ftc_ofi_connect_all(ftc_ofi_t *z);

/* procmon.c */
/* This process's identity for the blob: pid, start time (clock ticks
 * since boot), pid namespace (inode), boot id. */
void ftc_ofi_self_identity(uint32_t *pid, uint64_t *starttime,
                           uint64_t *pidns, char boot_id[48]);
/* A pidfd for pid if it is the process that started at starttime;
 * FTC_OFI_PID_GONE if that process is certainly gone (no such pid, or a
 * process that started at another time has it now); FTC_OFI_PID_UNKNOWN
 * if we cannot tell. The caller has checked that pid is in our pid
 * namespace on our boot. */
#define FTC_OFI_PID_UNKNOWN FTC_BK_PID_UNKNOWN
#define FTC_OFI_PID_GONE FTC_BK_PID_GONE
int ftc_ofi_pidfd_open(uint32_t pid, uint64_t starttime);

#endif
