/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event loop of the libfabric backend. One pass:
 *
 *   1. ask epoll what is ready: the timerfd, local peers' pidfds (an
 *      exit starts the drain of that peer's last messages,
 *      exit_drain.c), the CQ's wait descriptor;
 *   2. read the CQ (at most a batch per pass): received messages go to
 *      the core in their pair's order (early ones wait, see on_recv, and
 *      so do those read by the eager connect before ftc_ofi_attach) and
 *      their buffers are posted again; peers' connection hellos are
 *      noted and dropped; send completions free their slots
 *      (zero-copy ones end with ftc_transport_send_done); an error entry
 *      for a send names its destination, which is reported;
 *   3. feed messages this rank sent to itself;
 *   4. retry queued sends (dropping those to peers known dead);
 *   5. end the drains that are over, report peers that are due;
 *   6. fire the core's timer if it is due.
 *
 * Messages come before reports (2 before 5) so a peer's last words reach
 * the core before its death does. The core may send from inside any
 * entry point, which can queue more work or lose more peers: loops index
 * the lists and never hold pointers across a call into the core.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "ofi_internal.h"

enum {
    CQ_BATCH = 32,          /* entries per fi_cq_read */
    CQ_PER_PASS = 512,      /* entries per pass: others get a turn */
    EPOLL_BATCH = 64,
    TRYWAIT_ROUNDS = 8,
    CQ_MISSED_MAX = 3,      /* see check_cq_fd */
    CQ_SPURIOUS_MAX = 2000
};

/* Without a CQ descriptor, a waiting progress call spins this long, then
 * naps NAP_NS at a time. */
#define SPIN_NS 1000000u
#define NAP_NS 100000u
/* Busy passes look at epoll this often, and at the clock to know it
 * every COLLECT_CLOCK_PASSES passes (a pass is well under a microsecond,
 * a precise clock read 20-60 ns). */
#define COLLECT_EVERY_NS 200000u
#define COLLECT_CLOCK_PASSES 16u

void ftc_ofi_peer_lost(ftc_ofi_t *z, uint32_t r, ftc_ofi_detect_t how,
                       uint64_t delay_ns, const char *why)
{
    ftc_ofi_peer_t *p = &z->peers[r];
    if (p->state != FTC_OFI_PEER_OK)
        return;
    ftc_ofi_logf(z, "rank %u: rank %u failed (%s: %s)", z->cfg.rank, r,
                 ftc_ofi_detect_name(how), why);
    p->state = FTC_OFI_PEER_LOST;
    p->detect = (uint8_t)how;
    p->lost_ns = ftc_bk_now_ns();
    ftc_bk_grace_add(&z->lost, r,
                     delay_ns == UINT64_MAX ? UINT64_MAX
                                            : p->lost_ns + delay_ns);
    (void)ftc_ofi_rearm(z);
}

static void close_pidfd(ftc_ofi_t *z, uint32_t r)
{
    ftc_ofi_peer_t *p = &z->peers[r];
    if (p->pidfd < 0)
        return;
    (void)epoll_ctl(z->epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
    close(p->pidfd);
    p->pidfd = -1;
}

/* Step 1. Returns the number of peers found dead. */
int ftc_ofi_collect(ftc_ofi_t *z, int timeout_ms)
{
    int changed = 0;
    struct epoll_event evs[EPOLL_BATCH];
    z->last_epoll = -1;
    for (;;) {
        int n = epoll_wait(z->epfd, evs, EPOLL_BATCH, timeout_ms);
        if (n < 0 && errno == EINTR && timeout_ms != 0) {
            /* A signal ended the sleep (after SIGSTOP and SIGCONT epoll
             * fails so even without a handler): look at what is ready
             * now, so that a peer that exited meanwhile is known before
             * its last messages are read, as after any wake-up. */
            timeout_ms = 0;
            continue;
        }
        if (z->last_epoll < 0)
            z->last_epoll = n;
        if (n <= 0)
            return changed;   /* nothing: the caller loops */
        timeout_ms = 0;
        for (int i = 0; i < n; i++) {
            uint32_t tag = (uint32_t)(evs[i].data.u64 >> 32);
            uint32_t r = (uint32_t)evs[i].data.u64;
            switch (tag) {
            case FTC_OFI_TAG_TIMER: {
                if (ftc_bk_timerfd_clear(z->tfd))
                    z->tfd_deadline = UINT64_MAX;   /* spent: re-arm anew */
                break;
            }
            case FTC_OFI_TAG_PIDFD:
                /* Readable once, for good: stop watching, then report. */
                close_pidfd(z, r);
                ftc_ofi_exit_seen(z, r);
                changed++;
                break;
            default:
                z->cq_signaled = true;   /* the CQ: read below */
                break;
            }
        }
        if (n < EPOLL_BATCH)
            return changed;
    }
}

static bool is_rx(const ftc_ofi_t *z, const void *c)
{
    const char *p = c;
    return p >= (const char *)z->rx && p < (const char *)(z->rx + z->nrx);
}

static bool is_tx(const ftc_ofi_t *z, const void *c)
{
    const char *p = c;
    return p >= (const char *)z->tx && p < (const char *)(z->tx + z->ntx);
}

static void repost(ftc_ofi_t *z, ftc_ofi_rx_t *rx)
{
    rx->posted = false;
    if (ftc_ofi_post_recv(z, rx) != 0)
        z->rx_unposted++;   /* ftc_ofi_repost tries again each pass */
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

void ftc_ofi_held_clear(ftc_ofi_peer_t *p)
{
    while (p->held != NULL) {
        ftc_bk_qmsg_t *m = p->held;
        p->held = m->next;
        free(m);
    }
}

/* wire: header and payload. The core copies what it keeps. */
static void deliver(ftc_ofi_t *z, uint32_t from, const unsigned char *wire,
                    size_t len)
{
    if (z->ctx == NULL)
        return;   /* before attach: only strangers get here (dropped) */
    z->stats.msgs_received++;
    z->stats.bytes_received += len - FTC_OFI_HDR;
    if (ftc_transport_recv(z->ctx, from, wire + FTC_OFI_HDR,
                           len - FTC_OFI_HDR) != FTC_OK)
        z->stats.msgs_rejected++;
}

/* Keep a copy of a message that completed ahead of its turn (or before
 * there was a core to give it to), in sequence order. */
static void hold(ftc_ofi_t *z, ftc_ofi_peer_t *p, uint32_t seq,
                 const unsigned char *wire, size_t len, bool early)
{
    ftc_bk_qmsg_t *m = ftc_bk_qmsg_new(len);
    if (m == NULL) {
        /* Cannot keep it: the pair would wait for ever. Lose it as a
         * failure would, and let the keepalive sort it out. */
        z->stats.msgs_bad_header++;
        return;
    }
    m->seq = seq;
    m->len = len;
    memcpy(m->data, wire, len);
    ftc_bk_qmsg_t **pp = &p->held;
    while (*pp != NULL && (int32_t)((*pp)->seq - seq) < 0)
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
    if (early)
        z->stats.msgs_reordered++;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/*
 * Anyone who has our address can send to us: RDM endpoints do not
 * authenticate the source. Only a message with the job's token takes part
 * in its pair's sequence; anything else is a stranger's, which must not
 * touch any pair (a claimed rank and a sequence number ahead of the
 * pair's would be held for ever, or shift the pair). Strangers' messages
 * long enough to carry a header go to the core as FTC_RANK_UNKNOWN, whose
 * decoder drops and counts them (as the UCX backend does); shorter ones
 * are dropped here.
 */
static void on_recv(ftc_ofi_t *z, ftc_ofi_rx_t *rx, size_t len, fi_addr_t src)
{
    const unsigned char *b = rx->buf;
    if (len < FTC_OFI_HDR) {
        z->stats.msgs_stranger++;
        repost(z, rx);
        return;
    }
    if (get_u64(b + FTC_OFI_HDR_TOKEN) != z->cfg.job_token) {
        z->stats.msgs_stranger++;
        deliver(z, FTC_RANK_UNKNOWN, b, len);
        repost(z, rx);
        return;
    }
    uint32_t seq = get_u32(b);
    uint32_t from = get_u32(b + 4);
    if ((from & FTC_OFI_HELLO_FLAG) != 0 && len == FTC_OFI_HDR) {
        /* A peer's eager-connect hello (connect.c): noted, never
         * sequenced nor given to the core. */
        from &= ~FTC_OFI_HELLO_FLAG;
        if (from < z->cfg.nranks)
            z->peers[from].hello_in = true;
        repost(z, rx);
        return;
    }
    bool ok = from < z->cfg.nranks && from != z->cfg.rank;
    if (ok && z->has_source) {
        if (src == FI_ADDR_NOTAVAIL)
            z->stats.msgs_unknown_src++;
        else if (src != z->peers[from].fi_addr)
            ok = false;   /* the provider knows better than the header */
    }
    if (!ok) {
        z->stats.msgs_bad_header++;
        repost(z, rx);
        return;
    }
    ftc_ofi_peer_t *p = &z->peers[from];
    p->drain_heard = true;   /* its drain (exit_drain.c) goes on */
    int32_t ahead = (int32_t)(seq - p->rx_next);
    if (ahead > 0 || (ahead == 0 && z->ctx == NULL)) {
        /* Early, or read during the eager connect, before there is a
         * core to take it: held (release_held delivers it). */
        hold(z, p, seq, b, len, ahead > 0);
        if (z->ctx == NULL)
            z->held_before_attach = true;
        repost(z, rx);
        return;
    }
    if (ahead < 0) {
        z->stats.msgs_bad_header++;   /* a duplicate: never from a
                                         reliable provider */
        repost(z, rx);
        return;
    }
    p->rx_next++;
    deliver(z, from, b, len);
    repost(z, rx);
    /* The ones that were waiting for it. */
    while (p->held != NULL && p->held->seq == p->rx_next) {
        ftc_bk_qmsg_t *m = p->held;
        p->held = m->next;
        p->rx_next++;
        deliver(z, from, m->data, m->len);
        free(m);
    }
}

/* Deliver what was held because it arrived before ftc_ofi_attach. */
static int release_held(ftc_ofi_t *z)
{
    int n = 0;
    z->held_before_attach = false;
    for (uint32_t r = 0; r < z->cfg.nranks; r++) {
        ftc_ofi_peer_t *p = &z->peers[r];
        while (p->held != NULL && p->held->seq == p->rx_next) {
            ftc_bk_qmsg_t *m = p->held;
            p->held = m->next;
            p->rx_next++;
            deliver(z, r, m->data, m->len);
            free(m);
            n++;
        }
    }
    return n;
}

static void on_send_done(ftc_ofi_t *z, ftc_ofi_tx_t *t)
{
    if (t->hello && z->peers[t->dest].hello == FTC_OFI_HELLO_POSTED)
        z->peers[t->dest].hello = FTC_OFI_HELLO_DONE;
    void *cookie = t->cookie;
    ftc_ofi_tx_release(z, t);
    if (cookie != NULL)
        ftc_transport_send_done(z->ctx, cookie, FTC_OK);
}

static void on_error(ftc_ofi_t *z)
{
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof(err));
    if (fi_cq_readerr(z->cq, &err, 0) != 1)
        return;
    z->stats.cq_errors++;
    char detail[256];
    const char *pe = fi_cq_strerror(z->cq, err.prov_errno, err.err_data,
                                    detail, sizeof(detail));
    if (is_rx(z, err.op_context)) {
        ftc_ofi_rx_t *rx = err.op_context;
        if (err.err == FI_ECANCELED) {
            rx->posted = false;
            return;   /* closing */
        }
        ftc_ofi_logf(z, "rank %u: receive failed: %s%s%s (%zu bytes; "
                        "max_msg_size %zu: do all ranks use the same?)",
                     z->cfg.rank, fi_strerror(err.err), pe ? ": " : "",
                     pe ? pe : "", err.len, z->cfg.max_msg_size);
        /* A lost message breaks its pair's sequence: that peer's later
         * messages wait for it for ever, and the keepalive declares the
         * peer failed, as it must (the pair lost a message). */
        repost(z, rx);
        return;
    }
    if (is_tx(z, err.op_context)) {
        ftc_ofi_tx_t *t = err.op_context;
        uint32_t dest = t->dest;
        void *cookie = t->cookie;
        ftc_ofi_tx_release(z, t);
        char why[384];
        snprintf(why, sizeof(why), "a send to it completed with %s%s%s",
                 fi_strerror(err.err), pe ? ": " : "", pe ? pe : "");
        /* No grace: the provider has given up on the peer already. */
        ftc_ofi_peer_lost(z, dest, FTC_OFI_DETECT_CQ_ERROR, 0, why);
        if (cookie != NULL)
            ftc_transport_send_done(z->ctx, cookie, FTC_ETRANSPORT);
        return;
    }
    ftc_ofi_logf(z, "rank %u: CQ error without a known operation: %s%s%s",
                 z->cfg.rank, fi_strerror(err.err), pe ? ": " : "",
                 pe ? pe : "");
}

/* Step 2. */
int ftc_ofi_read_cq(ftc_ofi_t *z)
{
    int handled = 0;
    struct fi_cq_msg_entry e[CQ_BATCH];
    fi_addr_t src[CQ_BATCH];
    /* Read to empty: the last read returned less than it asked for. */
    z->cq_emptied = false;
    while (handled < CQ_PER_PASS) {
        ssize_t n = z->has_source ? fi_cq_readfrom(z->cq, e, CQ_BATCH, src)
                                  : fi_cq_read(z->cq, e, CQ_BATCH);
        if (n == -FI_EAGAIN) {
            z->cq_emptied = true;
            break;
        }
        if (n == -FI_EAVAIL) {
            on_error(z);
            handled++;
            continue;
        }
        if (n < 0) {
            ftc_ofi_logf(z, "rank %u: fi_cq_read: %s", z->cfg.rank,
                         fi_strerror((int)-n));
            /* Nothing more to read this pass: an exit's drain must not
             * wait for a read that keeps failing. */
            z->cq_emptied = true;
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            void *c = e[i].op_context;
            if (is_rx(z, c))
                on_recv(z, c, e[i].len,
                        z->has_source ? src[i] : FI_ADDR_NOTAVAIL);
            else if (is_tx(z, c))
                on_send_done(z, c);
        }
        handled += (int)n;
        if (n < CQ_BATCH) {
            z->cq_emptied = true;
            break;
        }
    }
    return handled;
}

/* Step 4, for one peer with queued sends: retry them, or drop them when
 * the peer is known dead (the core may have declared it on its own). */
static int flush_peer(void *arg, uint32_t r, bool *keep)
{
    ftc_ofi_t *z = arg;
    ftc_ofi_peer_t *p = &z->peers[r];
    int sent = 0;
    if (p->q.count > 0) {
        if (p->state == FTC_OFI_PEER_FAILED || ftc_context_is_failed(z->ctx, r))
            ftc_ofi_drop_queue(z, r, FTC_EPEER_FAILED);
        else
            sent = ftc_ofi_flush_peer(z, r);
    }
    *keep = p->q.count > 0;
    return sent;
}

/* Step 5, for one peer whose report is due. */
static void mark_failed(void *arg, uint32_t r, uint64_t now)
{
    ftc_ofi_t *z = arg;
    ftc_ofi_peer_t *p = &z->peers[r];
    p->state = FTC_OFI_PEER_FAILED;
    p->reported_ns = now;
    z->stats.peers_failed++;
    close_pidfd(z, r);
    ftc_ofi_held_clear(p);
    ftc_ofi_drop_queue(z, r, FTC_EPEER_FAILED);
}

static bool collect_due(ftc_ofi_t *z)
{
    if (++z->passes_unclocked < COLLECT_CLOCK_PASSES)
        return false;
    z->passes_unclocked = 0;
    return ftc_bk_now_ns() >= z->next_collect_ns;
}

static int pass(ftc_ofi_t *z, int timeout_ms)
{
    /* A pass that does not sleep needs epoll only for the exit monitor's
     * pidfds: the CQ is read anyway, timers and reports are checked
     * against the clock. Ask it now and then, not on every call: a
     * system call per poll is most of shm's latency. */
    int n = 0;
    if (timeout_ms != 0 && ftc_ofi_rearm(z))
        timeout_ms = 0;   /* something is due: look, do not sleep */
    if (timeout_ms != 0 || collect_due(z)) {
        n = ftc_ofi_collect(z, timeout_ms);
        z->next_collect_ns = ftc_bk_now_ns() + COLLECT_EVERY_NS;
        z->passes_unclocked = 0;
    }
    if (z->held_before_attach)
        n += release_held(z);
    z->last_cq = ftc_ofi_read_cq(z);
    n += z->last_cq;
    if (z->rx_unposted > 0)
        (void)ftc_ofi_repost(z);
    /* Step 3. The calls only when there is something for them: a pass
     * runs for every poll, and these are almost always empty. */
    if (z->self_q.count > 0)
        n += ftc_bk_sq_feed_self(&z->self_q, z->ctx, z->cfg.rank,
                                 &z->stats.msgs_received,
                                 &z->stats.bytes_received,
                                 &z->stats.msgs_rejected);
    if (z->queued.count > 0)
        n += ftc_bk_rank_set_sweep(&z->queued, flush_peer, z);
    if (z->ndraining > 0)
        ftc_ofi_drain_step(z);
    if (z->lost.count > 0)
        n += ftc_bk_grace_report_due(&z->lost, ftc_bk_now_ns(), z->ctx,
                                     mark_failed, z);
    /* Step 6. */
    if (timeout_ms != 0)
        ftc_bk_core_timer_recheck(&z->timer);   /* we may have slept */
    n += ftc_bk_core_timer_fire_due(&z->timer, z->ctx);
    return n;
}

/*
 * Is the CQ's descriptor worth sleeping on? Two ways it is not, both seen
 * here: it stays quiet while completions arrive (we would sleep through
 * them), or it stays readable with nothing to read (net and net;ofi_rxm
 * 1.17: we would spin through epoll against the provider's own progress
 * thread). Either, repeated, makes us poll the CQ instead.
 */
static void check_cq_fd(ftc_ofi_t *z, int events)
{
    const char *why = NULL;
    if (z->cq_signaled == (z->last_cq > 0)) {
        z->cq_missed = 0;
        return;
    }
    if (!z->cq_signaled) {
        /* Only a sleep that ran its full course counts: a completion
         * that lands just after another wake-up proves nothing. */
        if (z->last_epoll == 0 && ++z->cq_missed >= CQ_MISSED_MAX)
            why = "stayed quiet while completions arrived";
    } else if (events == 0) {
        if (++z->cq_missed >= CQ_SPURIOUS_MAX)
            why = "stays readable with nothing to read";
    }
    if (why != NULL) {
        z->cq_sleep_ok = false;
        ftc_ofi_logf(z, "rank %u: the CQ wait descriptor of %s %s (%u times "
                        "in a row): polling the CQ instead", z->cfg.rank,
                     z->provider, why, z->cq_missed);
    }
}

/* Safe to sleep on the CQ's descriptor? */
static bool can_sleep(ftc_ofi_t *z)
{
    struct fid *f = &z->cq->fid;
    return z->cq_sleep_ok && fi_trywait(z->fabric, &f, 1) == FI_SUCCESS;
}

static void nap(void)
{
    struct timespec ts = {0, NAP_NS};
    nanosleep(&ts, NULL);
}

/* Nothing was ready: wait up to timeout_ms (-1 for ever) for something. */
static int wait_for_work(ftc_ofi_t *z, int timeout_ms)
{
    uint64_t start = ftc_bk_now_ns();
    uint64_t end = timeout_ms < 0 ? UINT64_MAX
                                  : start + (uint64_t)timeout_ms * 1000000u;
    /* First a short spin (common/spin.h): a wake-up from epoll would cost
     * every hop several microseconds. */
    uint64_t budget = ftc_bk_spin_budget(&z->spin);
    if (budget > 0) {
        uint64_t spin_end = start + budget;
        if (spin_end > end)
            spin_end = end;
        for (unsigned i = 1;; i++) {
            int n = pass(z, 0);
            if (n > 0) {
                ftc_bk_spin_adapt(&z->spin, true, ftc_bk_now_ns() - start);
                return n;
            }
            if (ftc_bk_spin_idle_pass(&z->spin, i, COLLECT_CLOCK_PASSES,
                                      spin_end))
                break;
        }
        ftc_bk_spin_adapt(&z->spin, false, 0);
    }
    for (;;) {
        uint64_t now = ftc_bk_now_ns();
        if (now >= end)
            return 0;
        int n;
        if (can_sleep(z)) {
            /* epoll also wakes us for the core's timer and exits. */
            int ms = end == UINT64_MAX
                         ? -1
                         : (int)((end - now + 999999u) / 1000000u);
            z->cq_signaled = false;
            n = pass(z, ms);
            check_cq_fd(z, n);
        } else {
            n = pass(z, 0);
            /* A drain counts passes: no nap between them. */
            if (n == 0 && !z->cq_sleep_ok && z->ndraining == 0) {
                if (now - start < SPIN_NS)
                    sched_yield();
                else
                    nap();
            }
        }
        if (n > 0)
            return n;
    }
}

int ftc_ofi_progress(ftc_ofi_t *z, int timeout_ms)
{
    if (z == NULL || z->ctx == NULL)
        return FTC_EINVAL;
    if (z->in_progress)
        return 0;   /* called from a deliver callback: the outer call runs */
    z->in_progress = true;
    /* One pass, not more while work keeps coming (the UCX backend's
     * rule, docs/ucx.md): a pass reads the CQ until it is empty, so a
     * second one almost always finds nothing, and costs a fi_cq_read with
     * the provider's progress (~360 instructions on shm) and the pass
     * (~225): on shm at n = 2 every message paid for 1.5 such passes. A
     * caller that got work calls again; one waiting for its delivery gets
     * control back at once. */
    int total = pass(z, 0);
    if (total == 0 && timeout_ms != 0) {
        total = wait_for_work(z, timeout_ms);
    } else if (total == 0 && z->cq_sleep_ok) {
        /* Returning 0 promises the embedder it may sleep on the fd. */
        bool safe = false;
        for (int i = 0; i < TRYWAIT_ROUNDS && !safe && total == 0; i++) {
            safe = can_sleep(z);
            if (!safe)
                total += pass(z, 0);
        }
        if (!safe && total == 0)
            total = 1;   /* the provider is busy: call again */
    }
    /* Returning 0 lets the embedder sleep on ftc_ofi_fd(): its timer
     * must be set, and nothing may be due already. */
    if (total == 0 && ftc_ofi_rearm(z))
        total = 1;
    if (total == 0 && timeout_ms == 0)
        ftc_bk_spin_idle(&z->spin);     /* yields when oversubscribed */
    z->in_progress = false;
    return total;
}
