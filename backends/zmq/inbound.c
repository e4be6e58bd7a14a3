/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Each peer's inbound connection (its DEALER to our ROUTER), followed so
 * that a peer's death is reported only after its last messages.
 *
 * A peer's messages and the loss we report travel on two connections:
 * it sends on its DEALER to our ROUTER, we see it die on our DEALER to
 * its ROUTER. ZeroMQ's I/O thread handles the two in no set order, so
 * after the DEALER's DISCONNECTED the peer's last messages may still be
 * in the kernel, unread (a process resumed from SIGSTOP finds both at
 * once, and a busy machine may not run the I/O thread for a while). A
 * notice of exclusion among them, read after the report, comes from a
 * peer the core already holds failed and may be ignored (core/dispatch.c).
 *
 * So: every message tells us the descriptor of the connection it came
 * on (ZMQ_SRCFD); the ROUTER's monitor tells us when a descriptor
 * disconnects. ZeroMQ's engine only sees the end of a connection after
 * it has decoded and handed over everything before it, so once the
 * ROUTER's DISCONNECTED is read, reading the ROUTER to EAGAIN has fed
 * the core all of that peer's messages. A lost peer whose inbound
 * connection is still open waits for that (bounded by
 * ftc_zmq_inbound_wait_ns, for a connection that never ends); the
 * report step runs only in a pass that read the ROUTER to EAGAIN.
 *
 * A connection nothing was read from yet names nobody: the ROUTER's
 * ACCEPTED gives its descriptor, and it stays anonymous until its first
 * message. Every DEALER's first message is an empty hello (peer.c), so
 * a peer's connection is named as soon as this rank reads, even when the
 * peer only watches. While a connection is anonymous it may be a lost
 * peer's, holding its last words: a lost peer with no connection of its
 * own known waits until no anonymous one is open.
 */
#include <stdlib.h>

#include <zmq.h>

#include "zmq_internal.h"

#define ROUTER_MON_EP "inproc://ftc-mon-router"

int ftc_zmq_inbound_open(ftc_zmq_t *z)
{
    for (uint32_t r = 0; r < z->cfg.nranks; r++)
        z->peers[r].in_fd = -1;
    if (zmq_socket_monitor(z->router, ROUTER_MON_EP,
                           ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED)
        != 0)
        return -1;
    z->router_mon = zmq_socket(z->zctx, ZMQ_PAIR);
    if (z->router_mon == NULL)
        return -1;
    int zero = 0;
    (void)zmq_setsockopt(z->router_mon, ZMQ_LINGER, &zero, sizeof(zero));
    if (zmq_connect(z->router_mon, ROUTER_MON_EP) != 0
        || ftc_zmq_epoll_add(z, z->router_mon, FTC_ZMQ_TAG_ROUTER_MONITOR, 0)
               != 0)
        return -1;
    /* Edge-signalled, like every ZeroMQ descriptor: read to EAGAIN once
     * so the first event arms it. */
    ftc_zmq_inbound_read_events(z);
    return 0;
}

void ftc_zmq_inbound_close(ftc_zmq_t *z)
{
    if (z->router != NULL)
        (void)zmq_socket_monitor(z->router, NULL, 0);
    if (z->router_mon != NULL)
        zmq_close(z->router_mon);
    z->router_mon = NULL;
    free(z->anon);
    z->anon = NULL;
    z->nanon = z->capanon = 0;
}

uint64_t ftc_zmq_inbound_wait_ns(const ftc_zmq_t *z)
{
    /* With heartbeats on, the ROUTER's own heartbeat ends a silent
     * connection by then; without, a dead process's kernel closes it at
     * once, and the bound only covers a peer that closed its ROUTER and
     * lives on. The core's keepalive stays the detector of last resort. */
    int ms = z->cfg.heartbeat_timeout_ms > 0 ? z->cfg.heartbeat_timeout_ms
                                             : 10000;
    return (uint64_t)ms * 1000000u;
}

/* The inbound connection on descriptor fd has ended: its messages are in
 * the ROUTER. A peer waiting for that is reported after the next read
 * to EAGAIN. (A descriptor reused by another peer's new connection before
 * this event is read ends that one's wait too: it falls back to the
 * grace period, as before this rule.) */
/* Report peer r at the next read to EAGAIN, if it waits for that. */
static void release(ftc_zmq_t *z, uint32_t r, uint64_t now)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    if (p->state == FTC_ZMQ_PEER_LOST && p->reported_ns == 0
        && z->lost.due_ns[r] > now) {
        /* Still on the list (grace.h): only its time moves. */
        z->lost.due_ns[r] = now;
        ftc_zmq_rearm(z);
    }
}

/* fd is named or gone: off the anonymous list. When the last anonymous
 * connection goes, lost peers with no connection of their own known
 * wait no more. */
static void anon_remove(ftc_zmq_t *z, int fd)
{
    for (uint32_t i = 0; i < z->nanon; i++) {
        if (z->anon[i] != fd)
            continue;
        z->anon[i] = z->anon[--z->nanon];
        if (z->nanon > 0)
            return;
        uint64_t now = ftc_bk_now_ns();
        for (uint32_t r = 0; r < z->cfg.nranks; r++)
            if (!z->peers[r].in_open)
                release(z, r, now);
        z->router_dirty = true;
        return;
    }
}

static void anon_add(ftc_zmq_t *z, int fd)
{
    if (z->nanon == z->capanon) {
        uint32_t cap = z->capanon ? 2 * z->capanon : 16;
        int *a = realloc(z->anon, cap * sizeof(*a));
        if (a == NULL)
            return;     /* unfollowed: its peer falls back to the grace */
        z->anon = a;
        z->capanon = cap;
    }
    z->anon[z->nanon++] = fd;
}

bool ftc_zmq_inbound_anonymous(const ftc_zmq_t *z)
{
    return z->nanon > 0;
}

static void inbound_ended(ftc_zmq_t *z, int fd)
{
    uint64_t now = ftc_bk_now_ns();
    anon_remove(z, fd);
    for (uint32_t r = 0; r < z->cfg.nranks; r++) {
        ftc_zmq_peer_t *p = &z->peers[r];
        if (!p->in_open || p->in_fd != fd)
            continue;
        p->in_open = false;
        p->in_fd = -1;
        release(z, r, now);
    }
    z->router_dirty = true;     /* read it to EAGAIN before any report */
}

void ftc_zmq_inbound_read_events(ftc_zmq_t *z)
{
    if (z->router_mon == NULL)
        return;
    uint16_t event;
    uint32_t value;
    while (ftc_zmq_monitor_next(z->router_mon, &event, &value)) {
        if (event == ZMQ_EVENT_ACCEPTED)
            anon_add(z, (int)value);
        else if (event == ZMQ_EVENT_DISCONNECTED)
            inbound_ended(z, (int)value);
    }
}

void ftc_zmq_inbound_seen(ftc_zmq_t *z, uint32_t src, int fd)
{
    if (fd < 0)
        return;
    /* Named before it leaves the anonymous list: a lost src then keeps
     * waiting, for this connection's end. A stranger's is named too, as
     * nobody we report. */
    if (src < z->cfg.nranks) {
        z->peers[src].in_fd = fd;
        z->peers[src].in_open = true;
    }
    if (z->nanon > 0)
        anon_remove(z, fd);
}
