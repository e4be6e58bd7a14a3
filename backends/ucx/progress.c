/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event loop of the UCX backend. One pass:
 *
 *   1. ucp_worker_progress(): the AM callback feeds a received message to
 *      the core at once (ftc_transport_recv) when nothing is queued ahead
 *      of it, else queues it; the send callback queues completions, the
 *      error callback marks peers lost;
 *   2. feed the queued events to the core, in the order UCX delivered
 *      them (ftc_transport_recv, ftc_transport_send_done);
 *   3. feed messages this rank sent to itself;
 *   4. force-close the endpoints of lost peers;
 *   5. report lost peers whose grace period is over
 *      (ftc_transport_peer_failed);
 *   6. fire the core's timer if it is due.
 *
 * The core is fed only from a pass: from the AM callback while a pass
 * runs the worker (UCX bars only ucp_worker_progress there; the core's
 * sends are allowed, and a nested ftc_ucx_progress returns at once), or
 * after ucp_worker_progress() has returned; never from an op, and never
 * from a callback that ftc_ucx_arm, the handshake or destroy runs the
 * worker for (their messages wait in the queue). A queued message is fed
 * before any later one, so each pair keeps UCX's order. Messages come
 * before reports (1 and 2 before 5), and the worker is drained before any
 * report, so a peer's last messages reach the core before its death does.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "ucx_internal.h"

enum {
    WORKER_SPINS = 64,      /* ucp_worker_progress calls per pass, at most */
    ARM_TRIES = 4,          /* passes before giving up on arming */
    SPIN_CLOCK_EVERY = 16   /* idle passes between clock reads in a spin */
};

/* How long a wait naps between polls of the worker when it cannot sleep
 * on the descriptor: no wake-up support, or a send waiting for room in a
 * peer's shared-memory FIFO (below, wait_and_pass). 50 and 100 us did
 * alike for a 4 MiB allreduce over UCX sm at n = 4; a yield did worse. */
#define NAP_NS 50000u

/* --- Callbacks (inside ucp_worker_progress) ----------------------------- */

static void feed(ftc_ucx_t *u, uint32_t src, const void *buf, size_t len)
{
    u->stats.msgs_received++;
    u->stats.bytes_received += len;
    if (src == FTC_RANK_UNKNOWN)
        u->stats.msgs_stranger++;
    if (ftc_transport_recv(u->ctx, src, buf, len) != FTC_OK)
        u->stats.msgs_rejected++;
}

uint32_t ftc_ucx_header_rank(const ftc_ucx_t *u, const void *header,
                             size_t header_length)
{
    if (header == NULL || header_length != FTC_UCX_HDR_LEN)
        return FTC_RANK_UNKNOWN;
    const unsigned char *h = header;
    if (memcmp(h + 4, u->token, 8) != 0)
        return FTC_RANK_UNKNOWN;
    uint32_t r = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16
                 | (uint32_t)h[3] << 24;
    if (r >= u->cfg.nranks || r == u->cfg.rank)
        return FTC_RANK_UNKNOWN;
    return r;
}

ucs_status_t ftc_ucx_am_recv_cb(void *arg, const void *header,
                                size_t header_length, void *data,
                                size_t length,
                                const ucp_am_recv_param_t *param)
{
    ftc_ucx_t *u = arg;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        /* We send eager only (rendezvous could overtake an earlier eager
         * message of the same pair); whoever sent this is not us. Returning
         * UCS_OK drops it. */
        u->stats.msgs_dropped++;
        return UCS_OK;
    }
    uint32_t peer = ftc_ucx_header_rank(u, header, header_length);
    if (u->feeding_direct && u->events.count == 0) {
        /* The fast path: a pass of ours runs the worker (feeding_direct) and
         * nothing this worker handed over earlier waits in the queue, so
         * the core can take the message now, from UCX's buffer, with no
         * event, copy or second hop; it copies what it keeps. UCX allows
         * sends from here (only ucp_worker_progress is barred, and a
         * nested ftc_ucx_progress returns at once). A queued message
         * must go first: the pair's order. */
        u->fed_direct++;
        feed(u, peer, data, length);
        return UCS_OK;
    }
    ftc_ucx_ev_t *ev = ftc_ucx_ev_alloc(u);
    if (ev == NULL) {
        u->stats.msgs_dropped++;
        return UCS_OK;
    }
    ev->kind = FTC_UCX_EV_RECV;
    ev->peer = peer;
    ucs_status_t ret = UCS_OK;
    if (length > sizeof(ev->inl)
        && (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA)) {
        /* Keep UCX's buffer instead of copying; released after feeding. */
        ev->desc = data;
        ev->data = data;
        ev->len = length;
        ret = UCS_INPROGRESS;
    } else if (ftc_ucx_ev_copy(ev, data, length) != 0) {
        ftc_ucx_ev_free(u, ev);
        u->stats.msgs_dropped++;
        return UCS_OK;
    }
    ftc_ucx_evq_push(&u->events, ev);
    return ret;
}

void ftc_ucx_send_cb(void *request, ucs_status_t status, void *user_data)
{
    (void)user_data;
    ftc_ucx_ev_t *ev = *(ftc_ucx_ev_t **)request;
    ftc_ucx_t *u = ev->u;
    /* Off the in-flight list, onto the queue. */
    ev->prev->next = ev->next;
    ev->next->prev = ev->prev;
    u->ninflight--;
    if (ev->peer < u->cfg.nranks)
        u->peers[ev->peer].inflight_bytes -= ev->len;
    ev->status = status == UCS_OK ? FTC_OK : FTC_ETRANSPORT;
    if (status != UCS_OK)
        u->stats.send_errors++;
    ucp_request_free(request);
    ftc_ucx_evq_push(&u->events, ev);
}

/* --- One pass ------------------------------------------------------------ */

/* Step 2. Only what is queued now: the core's sends queue nothing here
 * (their completions come from a later ucp_worker_progress). */
static int dispatch_events(ftc_ucx_t *u)
{
    int n = 0;
    size_t batch = u->events.count;
    for (size_t i = 0; i < batch; i++) {
        ftc_ucx_ev_t *ev = ftc_ucx_evq_pop(&u->events);
        if (ev == NULL)
            break;
        if (ev->kind == FTC_UCX_EV_RECV) {
            feed(u, ev->peer, ev->data, ev->len);
            ftc_ucx_ev_release(u, ev);
        } else {
            u->stats.sends_deferred++;
            ftc_transport_send_done(u->ctx, ev->cookie, ev->status);
        }
        ftc_ucx_ev_free(u, ev);
        n++;
    }
    return n;
}

/* Step 3. */
static int drain_self(ftc_ucx_t *u)
{
    int n = 0;
    size_t batch = u->self_q.count;  /* feeding may queue more */
    for (size_t i = 0; i < batch; i++) {
        ftc_ucx_ev_t *ev = ftc_ucx_evq_pop(&u->self_q);
        feed(u, u->cfg.rank, ev->data, ev->len);
        ftc_ucx_ev_release(u, ev);
        ftc_ucx_ev_free(u, ev);
        n++;
    }
    return n;
}

/* Step 5, for one peer whose grace period is over. */
static void mark_failed(void *arg, uint32_t r, uint64_t now)
{
    ftc_ucx_t *u = arg;
    u->peers[r].state = FTC_UCX_PEER_FAILED;
    u->peers[r].reported_ns = now;
    u->stats.peers_failed++;
}

/* Clear the timerfd and eventfd once they may have fired (a busy poller
 * that never arms them reads no clock here). */
static void clear_fds(ftc_ucx_t *u)
{
    uint64_t v;
    /* The embedder may have slept on our descriptor since ftc_ucx_arm:
     * the core's deadline may have come. */
    if (u->fd_armed) {
        ftc_bk_core_timer_recheck(&u->timer);
        u->check_exits = true;  /* a peer's exit may be what woke it */
    }
    if (u->kicked) {
        (void)!read(u->kfd, &v, sizeof(v));
        u->kicked = false;
    }
    if (ftc_bk_due(u->tfd_deadline)) {
        (void)!read(u->tfd, &v, sizeof(v));
        u->tfd_deadline = UINT64_MAX;
    }
    u->fd_armed = false;
}

static int pass(ftc_ucx_t *u)
{
    clear_fds(u);
    /* Before the worker: a peer found gone makes this pass drain it. */
    ftc_ucx_exits_poll(u);
    /* One call, then feed what it found: a second call only to learn
     * that there is nothing more costs a message its latency (~40 ns
     * over shared memory), and the caller comes back at once. Drain the
     * worker (call until 0) when the call made progress but found nothing
     * for us, because a pass that returns 0 lets the caller arm the
     * worker and sleep, which UCX allows only after a 0; and before a
     * peer is reported dead, so that the messages it sent before it died
     * reach the core first. */
    u->stats.worker_progress++;
    u->fed_direct = 0;
    /* Only while every peer is reached over shared memory: UCX 1.13's tcp
     * aborts (tcp_iface.c: "ep->conn_state != CLOSED") when the core,
     * fed from inside the tcp interface's event loop, sends towards a
     * peer whose connection has just failed, as the conformance suite's
     * kills do; the shared-memory interfaces read their FIFO without
     * such state. Otherwise messages take the queue, as before. */
    u->feeding_direct = u->peers_not_shm == 0;
    if (ucp_worker_progress(u->worker) != 0
        && (u->lost.count > 0
            || (u->fed_direct == 0 && u->events.count == 0
                && u->self_q.count == 0))) {
        for (int i = 1; i < WORKER_SPINS; i++) {
            u->stats.worker_progress++;
            if (ucp_worker_progress(u->worker) == 0)
                break;
        }
    }
    u->feeding_direct = false;
    int n = (int)u->fed_direct;
    n += dispatch_events(u);
    n += drain_self(u);
    if (u->lost.count > 0)      /* only lost peers' endpoints close */
        ftc_ucx_close_pending(u);
    if (u->nclosing > 0)
        ftc_ucx_reap_closing(u);
    if (u->lost.count > 0)
        n += ftc_bk_grace_report_due(&u->lost, ftc_bk_now_ns(), u->ctx,
                                     mark_failed, u);
    n += ftc_bk_core_timer_fire_due(&u->timer, u->ctx);
    return n;
}

/* --- Waiting ------------------------------------------------------------- */

/* ucp_worker_arm: UCS_OK (the efd will wake us), UCS_ERR_BUSY (events are
 * pending: progress again). Without an efd there is nothing to arm. */
static ucs_status_t arm_worker(ftc_ucx_t *u)
{
    if (u->efd < 0)
        return UCS_OK;
    return ucp_worker_arm(u->worker);
}

/* Give the CPU away for NAP_NS (or until deadline, if sooner), then let
 * the next pass poll the worker. */
static void nap(ftc_ucx_t *u, uint64_t now, uint64_t deadline)
{
    uint64_t d = deadline > now ? deadline - now : 0;
    if (d > NAP_NS)
        d = NAP_NS;
    u->stats.sleeps++;
    ftc_bk_core_timer_recheck(&u->timer);
    struct timespec ts = {0, (long)d};
    nanosleep(&ts, NULL);
    u->exits_clock_now = true;
}

static void sleep_until(ftc_ucx_t *u, uint64_t deadline)
{
    uint64_t now = ftc_bk_now_ns();
    /* Asleep or not, the deadline may have come: the next pass looks. */
    ftc_bk_core_timer_recheck(&u->timer);
    if (deadline <= now)
        return;
    /* Sends in flight over shared memory move only when this process
     * progresses the worker (the peer draining its FIFO wakes nobody
     * here): sleeping on the fd until a deadline would hold a large
     * message, and every keepalive answer behind it, for that long. */
    if (u->epfd < 0 || u->efd < 0 || u->ninflight > 0) {
        nap(u, now, deadline);
        return;
    }
    u->stats.sleeps++;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    int timeout = deadline == UINT64_MAX || ms > INT32_MAX ? -1 : (int)ms;
    /* One slot for each descriptor in the set (timerfd, eventfd, the
     * worker's, the exit watch's): level-triggered, a readable exit
     * watch is always among what the wait returns. */
    struct epoll_event evs[4];
    int n = epoll_wait(u->epfd, evs, 4, timeout);
    /* Look at the exits only when their descriptor is what woke us (or
     * the wait failed, and we cannot tell): a look for nothing is a
     * system call on every wake-up, one in seven of a wake-up's over
     * UCX tcp. */
    if (n < 0)
        u->check_exits = true;
    for (int i = 0; i < n; i++)
        if (evs[i].data.fd == u->xfd)
            u->check_exits = true;
}

static int wait_and_pass(ftc_ucx_t *u, int timeout_ms)
{
    uint64_t start = ftc_bk_now_ns();
    uint64_t end = timeout_ms < 0 ? UINT64_MAX
                                  : start + (uint64_t)timeout_ms * 1000000u;
    uint64_t budget = ftc_bk_spin_budget(&u->spin);
    if (budget > 0) {
        uint64_t spin_end = start + budget;
        if (spin_end > end)
            spin_end = end;
        /* An idle pass is ~100 ns: the clock (20-60 ns a read) is asked
         * every SPIN_CLOCK_EVERY passes, not on each. */
        for (unsigned i = 1;; i++) {
            int n = pass(u);
            if (n > 0) {
                ftc_bk_spin_adapt(&u->spin, true, ftc_bk_now_ns() - start);
                return n;
            }
            if (ftc_bk_spin_idle_pass(&u->spin, i, SPIN_CLOCK_EVERY,
                                      spin_end))
                break;
        }
        ftc_bk_spin_adapt(&u->spin, false, 0);
    }
    for (;;) {
        uint64_t now = ftc_bk_now_ns();
        if (now >= end)
            return 0;
        if (arm_worker(u) == UCS_ERR_BUSY) {
            int n = pass(u);
            if (n > 0)
                return n;
            /* UCX's shared-memory transports refuse to arm while a send
             * waits for room in a peer's FIFO (their pending queue is
             * not empty), and that room appears only when the peer reads,
             * which wakes nobody here. Arming again at once made this a
             * busy loop for as long as a large message was on its way:
             * on a host with more ranks than CPUs it held the CPU the
             * reading peer needed, and a 4 MiB allreduce at n = 4 took
             * 3 to 4 times as long (docs/ucx.md, "Large messages over
             * shared memory"). Nap and poll instead, as when the worker
             * has no descriptor. */
            if (u->ninflight > 0) {
                now = ftc_bk_now_ns();
                nap(u, now, end);
            }
            continue;
        }
        uint64_t d = ftc_ucx_next_deadline(u);
        sleep_until(u, d < end ? d : end);
        int n = pass(u);
        if (n > 0)
            return n;
    }
}

int ftc_ucx_progress(ftc_ucx_t *u, int timeout_ms)
{
    if (u == NULL || u->ctx == NULL || u->worker == NULL)
        return FTC_EINVAL;
    if (u->in_progress)
        return 0;   /* called from a deliver callback: the outer call runs */
    u->in_progress = true;
    /* One pass, not more while work keeps coming: a pass drains what the
     * worker had, and a caller that waits for a delivery (the usual loop:
     * progress until my collective is done, start the next) must get
     * control back at once. Looping here until idle cost the next
     * collective's start a few passes: a 2-rank corrected f=1 allreduce
     * over shared memory took 2.3 us instead of 1.8. */
    int total = pass(u);
    if (total == 0 && timeout_ms != 0)
        total = wait_and_pass(u, timeout_ms);
    else if (total == 0)
        ftc_bk_spin_idle(&u->spin);     /* yields when oversubscribed */
    u->in_progress = false;
    return total;
}

int ftc_ucx_arm(ftc_ucx_t *u)
{
    if (u == NULL || u->ctx == NULL || u->worker == NULL || u->epfd < 0
        || u->efd < 0)
        return FTC_EINVAL;
    if (u->in_progress)
        return 1;
    for (int i = 0; i < ARM_TRIES; i++) {
        if (u->events.count > 0 || u->self_q.count > 0)
            return 1;
        if (arm_worker(u) == UCS_OK) {
            u->fd_armed = true;
            ftc_ucx_rearm(u);
            return FTC_OK;
        }
        /* Busy: UCX has events. Let the worker run their callbacks; if
         * they queued anything, the caller must progress. */
        for (int k = 0; k < WORKER_SPINS; k++) {
            u->stats.worker_progress++;
            if (ucp_worker_progress(u->worker) == 0)
                break;
        }
    }
    if (u->ninflight > 0 && u->events.count == 0 && u->self_q.count == 0) {
        /* Busy only because a send waits for room in a peer's FIFO
         * (wait_and_pass says why that never wakes us): let the
         * embedder sleep one nap on the timerfd, not spin on us. */
        uint64_t want = ftc_ucx_next_deadline(u);
        uint64_t nap_end = ftc_bk_now_ns() + NAP_NS;
        if (nap_end < want)
            want = nap_end;
        ftc_bk_timerfd_set(u->tfd, want);
        u->tfd_deadline = want;
        u->fd_armed = true;
        return FTC_OK;
    }
    return 1;
}

int ftc_ucx_flush(ftc_ucx_t *u, int timeout_ms)
{
    if (u == NULL || u->ctx == NULL)
        return FTC_EINVAL;
    uint64_t end = timeout_ms < 0 ? UINT64_MAX
                                  : ftc_bk_now_ns()
                                        + (uint64_t)timeout_ms * 1000000u;
    while (u->ninflight > 0 || u->events.count > 0 || u->self_q.count > 0) {
        if (ftc_bk_now_ns() >= end)
            break;
        int rc = ftc_ucx_progress(u, 1);
        if (rc < 0)
            return rc;
        if (u->in_progress)
            break;      /* from a deliver callback: cannot progress here */
    }
    return (int)u->ninflight;
}
