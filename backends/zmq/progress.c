/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event loop of the ZeroMQ backend. One pass:
 *
 *   1. ask epoll what is ready; read monitor events (they only change
 *      peer states) and clear DEALER signals as they come;
 *   2. drain the ROUTER into the core (at most a batch per pass);
 *   3. feed messages this rank sent to itself;
 *   4. hand queued sends to ZeroMQ;
 *   5. report peers whose grace period is over;
 *   6. fire the core's timer if it is due.
 *
 * Messages come before reports (2 before 5) so a peer's last words reach
 * the core before its death does: a lost peer whose connection to our
 * ROUTER is still open is reported only once that connection has ended
 * and the ROUTER was read to EAGAIN after it (inbound.c); the grace
 * period covers a peer that never sent us anything. ZeroMQ signals its descriptors
 * on edges, so a pass never stops reading a socket until it says EAGAIN,
 * except the ROUTER at the batch limit, which stays marked for the next
 * pass.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <zmq.h>

#include "zmq_internal.h"

enum {
    ROUTER_BATCH = 1024,    /* messages per pass: others get a turn */
    MAX_PASSES = 8,         /* per progress call while work keeps coming */
    EPOLL_BATCH = 64
};

/* Step 1. Returns the number of peer state changes. */
static int collect(ftc_zmq_t *z, int timeout_ms)
{
    int changed = 0;
    struct epoll_event evs[EPOLL_BATCH];
    for (;;) {
        int n = epoll_wait(z->epfd, evs, EPOLL_BATCH, timeout_ms);
        if (n <= 0)
            return changed;   /* nothing, or EINTR: the caller loops */
        timeout_ms = 0;
        for (int i = 0; i < n; i++) {
            uint32_t tag = (uint32_t)(evs[i].data.u64 >> 32);
            uint32_t r = (uint32_t)evs[i].data.u64;
            switch (tag) {
            case FTC_ZMQ_TAG_ROUTER:
                z->router_dirty = true;
                break;
            case FTC_ZMQ_TAG_TIMER: {
                if (ftc_bk_timerfd_clear(z->tfd))
                    z->tfd_deadline = UINT64_MAX;   /* spent: re-arm anew */
                break;
            }
            case FTC_ZMQ_TAG_DEALER: {
                /* Reading ZMQ_EVENTS processes the socket's commands,
                 * which is what clears its descriptor. */
                int events;
                size_t len = sizeof(events);
                if (z->peers[r].dealer != NULL)
                    (void)zmq_getsockopt(z->peers[r].dealer, ZMQ_EVENTS,
                                         &events, &len);
                break;
            }
            case FTC_ZMQ_TAG_MONITOR:
                changed += ftc_zmq_peer_read_events(z, r);
                break;
            case FTC_ZMQ_TAG_ROUTER_MONITOR:
                ftc_zmq_inbound_read_events(z);
                break;
            default:
                break;
            }
        }
        if (n < EPOLL_BATCH)
            return changed;
    }
}

/* The rank a routing id names, or FTC_RANK_UNKNOWN for a stranger (wrong
 * form, another job's token, a rank out of range, ourselves). */
static uint32_t identity_rank(const ftc_zmq_t *z, zmq_msg_t *id)
{
    if (zmq_msg_size(id) != FTC_ZMQ_ID_LEN)
        return FTC_RANK_UNKNOWN;
    const unsigned char *d = zmq_msg_data(id);
    if (d[0] != FTC_ZMQ_ID_MARK || memcmp(d + 5, z->id_token, 8) != 0)
        return FTC_RANK_UNKNOWN;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++)
        r |= (uint32_t)d[1 + i] << (8 * i);
    if (r >= z->cfg.nranks || r == z->cfg.rank)
        return FTC_RANK_UNKNOWN;
    return r;
}

static void feed(ftc_zmq_t *z, uint32_t src, const void *buf, size_t len)
{
    z->stats.msgs_received++;
    z->stats.bytes_received += len;
    if (src == FTC_RANK_UNKNOWN)
        z->stats.msgs_stranger++;
    if (ftc_transport_recv(z->ctx, src, buf, len) != FTC_OK)
        z->stats.msgs_rejected++;
}

/* Step 2. */
static int drain_router(ftc_zmq_t *z)
{
    int handled = 0;
    if (!z->router_dirty)
        return 0;
    for (int i = 0; i < ROUTER_BATCH; i++) {
        zmq_msg_t id;
        zmq_msg_init(&id);
        if (zmq_msg_recv(&id, z->router, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&id);
            z->router_dirty = false;
            return handled;
        }
        uint32_t src = identity_rank(z, &id);
        int more = zmq_msg_more(&id);
        zmq_msg_close(&id);
        /* ftcoll sends one frame per message; a stranger's extra frames
         * are fed one by one, for the decoder to judge. */
        while (more) {
            zmq_msg_t body;
            zmq_msg_init(&body);
            if (zmq_msg_recv(&body, z->router, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&body);
                break;
            }
            more = zmq_msg_more(&body);
            ftc_zmq_inbound_seen(z, src, zmq_msg_get(&body, ZMQ_SRCFD));
            /* A rank's empty hello only names its connection (peer.c). */
            if (src != FTC_RANK_UNKNOWN && zmq_msg_size(&body) == 0) {
                zmq_msg_close(&body);
                continue;
            }
            feed(z, src, zmq_msg_data(&body), zmq_msg_size(&body));
            zmq_msg_close(&body);
            handled++;
        }
    }
    return handled;
}

/* Step 4, for one peer with queued sends. */
static int flush_peer(void *arg, uint32_t r, bool *keep)
{
    ftc_zmq_t *z = arg;
    ftc_zmq_peer_t *p = &z->peers[r];
    int sent = ftc_zmq_peer_flush(z, r);
    if (p->q.count == 0 || p->dealer == NULL) {
        ftc_bk_sq_clear(&p->q);
        *keep = false;
    }
    return sent;
}

/* Step 5, for one peer whose grace period is over. */
static void mark_failed(void *arg, uint32_t r, uint64_t now)
{
    ftc_zmq_t *z = arg;
    z->peers[r].state = FTC_ZMQ_PEER_FAILED;
    z->peers[r].reported_ns = now;
    z->stats.peers_failed++;
}

static int pass(ftc_zmq_t *z, int timeout_ms)
{
    int n = collect(z, timeout_ms);
    n += drain_router(z);
    /* Step 3. */
    n += ftc_bk_sq_feed_self(&z->self_q, z->ctx, z->cfg.rank,
                             &z->stats.msgs_received,
                             &z->stats.bytes_received,
                             &z->stats.msgs_rejected);
    n += ftc_bk_rank_set_sweep(&z->queued, flush_peer, z);
    /* Reports only after the ROUTER was read to EAGAIN: what a lost
     * peer's ended connection held is in the core first (inbound.c). */
    if (z->lost.count > 0 && !z->router_dirty)
        n += ftc_bk_grace_report_due(&z->lost, ftc_bk_now_ns(), z->ctx,
                                     mark_failed, z);
    /* Step 6. A pass here polls sockets (system calls) anyway: the
     * clock is asked on every one, not every 16th (core_timer.h). */
    ftc_bk_core_timer_recheck(&z->timer);
    n += ftc_bk_core_timer_fire_due(&z->timer, z->ctx);
    return n;
}

static int busy_pass(void *z)
{
    return pass(z, 0);
}

int ftc_zmq_progress(ftc_zmq_t *z, int timeout_ms)
{
    if (z == NULL || z->ctx == NULL)
        return FTC_EINVAL;
    if (z->in_progress)
        return 0;   /* called from a deliver callback: the outer call runs */
    z->in_progress = true;
    int total = ftc_bk_run_passes(busy_pass, z, MAX_PASSES);
    /* Block only when there was nothing to do: the timerfd in the epoll
     * set wakes us for the core's deadline and pending reports. */
    if (total == 0 && timeout_ms != 0) {
        ftc_zmq_sync_timerfd(z);
        total = pass(z, timeout_ms);
    }
    /* The embedder may poll our descriptor next. */
    ftc_zmq_sync_timerfd(z);
    z->in_progress = false;
    return total;
}
