/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One DEALER per peer we talk to: created on first use, monitored from
 * birth, and the source of this backend's failure reports.
 *
 * What the monitor tells us, and what we make of it:
 *   CONNECTED                    the peer is up (a TCP connection exists)
 *   DISCONNECTED after CONNECTED the peer's process died, or a heartbeat
 *                                timed out: report once its connection
 *                                to our ROUTER has ended and been read
 *                                (inbound.c), or after the grace period
 *                                if it never sent us anything
 *   CONNECT_RETRIED,             an attempt failed (refused, timed out,
 *   HANDSHAKE_FAILED_*           not a ZMTP peer); before the first
 *                                success, connect_retries of them make the
 *                                peer unreachable: report it at once
 * The peer's address came from the bootstrap, after it had bound its
 * ROUTER, so a refused connection means its socket is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "zmq_internal.h"

static void set_int(void *sock, int opt, int v)
{
    /* Options with valid values on a fresh socket cannot fail. */
    (void)zmq_setsockopt(sock, opt, &v, sizeof(v));
}

static void make_routing_id(const ftc_zmq_t *z, unsigned char id[FTC_ZMQ_ID_LEN])
{
    uint32_t r = z->cfg.rank;
    id[0] = FTC_ZMQ_ID_MARK;
    for (int i = 0; i < 4; i++)
        id[1 + i] = (unsigned char)(r >> (8 * i));
    memcpy(id + 5, z->id_token, 8);
}

void ftc_zmq_peer_lost(ftc_zmq_t *z, uint32_t r, uint64_t delay_ns,
                       const char *why)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    if (p->state == FTC_ZMQ_PEER_LOST || p->state == FTC_ZMQ_PEER_FAILED)
        return;
    ftc_zmq_logf(z, "rank %u: peer %u (%s): %s", z->cfg.rank, r, p->addr, why);
    p->state = FTC_ZMQ_PEER_LOST;
    p->lost_ns = ftc_bk_now_ns();
    snprintf(p->why, sizeof(p->why), "%s", why);
    /* Its messages still open on our ROUTER go first: the report waits
     * for that connection's end (inbound.c), not for a clock. The
     * ROUTER's events are read first: the peer's connection was accepted
     * long before this loss, but its event may still wait unread. */
    ftc_zmq_inbound_read_events(z);
    if (p->in_open || ftc_zmq_inbound_anonymous(z))
        delay_ns = ftc_zmq_inbound_wait_ns(z);
    ftc_bk_grace_add(&z->lost, r, p->lost_ns + delay_ns);
    ftc_zmq_rearm(z);
}

int ftc_zmq_peer_open(ftc_zmq_t *z, uint32_t r)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    if (p->dealer != NULL)
        return 0;
    if (p->addr[0] == '\0') {
        ftc_zmq_logf(z, "rank %u: no address for peer %u (set_peers?)",
                     z->cfg.rank, r);
        return -1;
    }

    char mon_ep[64];
    snprintf(mon_ep, sizeof(mon_ep), "inproc://ftc-mon-%u", r);
    unsigned char id[FTC_ZMQ_ID_LEN];
    make_routing_id(z, id);

    void *m = NULL;
    void *d = zmq_socket(z->zctx, ZMQ_DEALER);
    if (d == NULL)
        goto err_log;
    (void)zmq_setsockopt(d, ZMQ_ROUTING_ID, id, sizeof(id));
    set_int(d, ZMQ_LINGER, 0);
    set_int(d, ZMQ_SNDHWM, z->cfg.sndhwm);
    /* No message comes back on a DEALER in this protocol, and it is never
     * read: whatever listens at a peer's address must not be able to fill
     * it with large frames. The limit covers ZMTP's command frames too
     * (the peer's READY with its metadata, heartbeats): a few hundred
     * bytes. */
    int64_t small = 4096;
    (void)zmq_setsockopt(d, ZMQ_MAXMSGSIZE, &small, sizeof(small));
    set_int(d, ZMQ_RECONNECT_IVL, z->cfg.reconnect_ivl_ms);
    set_int(d, ZMQ_RECONNECT_IVL_MAX, 1000);
    set_int(d, ZMQ_CONNECT_TIMEOUT, z->cfg.connect_timeout_ms);
    /* A connection that never completes its handshake (a hung peer's
     * kernel accepts it) must end too, or nothing would be reported. */
    int hs = z->cfg.heartbeat_timeout_ms > 0 ? z->cfg.heartbeat_timeout_ms
                                             : 30000;
    set_int(d, ZMQ_HANDSHAKE_IVL, hs);
    if (z->cfg.heartbeat_ivl_ms > 0) {
        set_int(d, ZMQ_HEARTBEAT_IVL, z->cfg.heartbeat_ivl_ms);
        set_int(d, ZMQ_HEARTBEAT_TIMEOUT, z->cfg.heartbeat_timeout_ms);
        set_int(d, ZMQ_HEARTBEAT_TTL, z->cfg.heartbeat_timeout_ms);
    }
    if (zmq_socket_monitor(d, mon_ep,
                           ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED
                               | ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                               | ZMQ_EVENT_DISCONNECTED
                               | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                               | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                               | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
        goto err_close;
    m = zmq_socket(z->zctx, ZMQ_PAIR);
    if (m == NULL)
        goto err_close;
    set_int(m, ZMQ_LINGER, 0);
    /* Connect to the monitor before the DEALER connects: events sent
     * while nobody listens are lost. */
    if (zmq_connect(m, mon_ep) != 0)
        goto err_close;
    if (zmq_connect(d, p->addr) != 0)
        goto err_close;
    /* The hello: an empty first message that names this connection to
     * the peer's ROUTER before anything else needs to (inbound.c). It
     * waits in the DEALER's pipe until the connection is up. */
    if (zmq_send(d, "", 0, ZMQ_DONTWAIT) < 0)
        goto err_close;
    p->dealer = d;
    p->mon = m;
    if (ftc_zmq_epoll_add(z, d, FTC_ZMQ_TAG_DEALER, r) != 0
        || ftc_zmq_epoll_add(z, m, FTC_ZMQ_TAG_MONITOR, r) != 0) {
        p->dealer = p->mon = NULL;
        goto err_close;
    }
    p->state = FTC_ZMQ_PEER_CONNECTING;
    z->stats.connects++;
    /* ZMQ_FD fires on edges: a socket nobody has read yet never arms it.
     * Read until EAGAIN now, so the first event does signal. */
    (void)ftc_zmq_peer_read_events(z, r);
    return 0;

err_close:
    ftc_zmq_logf(z, "rank %u: cannot connect to peer %u at %s: %s",
                 z->cfg.rank, r, p->addr, zmq_strerror(zmq_errno()));
    if (m != NULL)
        zmq_close(m);
    (void)zmq_socket_monitor(d, NULL, 0);
    zmq_close(d);
    return -1;
err_log:
    ftc_zmq_logf(z, "rank %u: zmq_socket: %s", z->cfg.rank,
                 zmq_strerror(zmq_errno()));
    return -1;
}

void ftc_zmq_peer_close(ftc_zmq_t *z, uint32_t r, int linger_ms)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    if (p->dealer != NULL) {
        (void)zmq_socket_monitor(p->dealer, NULL, 0);
        set_int(p->dealer, ZMQ_LINGER, linger_ms);
        zmq_close(p->dealer);
        p->dealer = NULL;
    }
    if (p->mon != NULL) {
        zmq_close(p->mon);
        p->mon = NULL;
    }
    ftc_bk_sq_clear(&p->q);
}

/* One attempt to connect failed. */
static int attempt_failed(ftc_zmq_t *z, uint32_t r, const char *what)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    z->stats.connect_failures++;
    if (p->ever_up || p->state != FTC_ZMQ_PEER_CONNECTING)
        return 0;
    if (++p->failed_attempts < (uint32_t)z->cfg.connect_retries)
        return 0;
    char why[160];
    snprintf(why, sizeof(why), "unreachable (%u attempts: %s)",
             p->failed_attempts, what);
    ftc_zmq_peer_lost(z, r, 0, why);
    return 1;
}

static int handle_event(ftc_zmq_t *z, uint32_t r, uint16_t event,
                        uint32_t value)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    switch (event) {
    case ZMQ_EVENT_CONNECTED:
        p->ever_up = true;
        if (p->state == FTC_ZMQ_PEER_CONNECTING) {
            p->state = FTC_ZMQ_PEER_UP;
            return 1;
        }
        return 0;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        p->handshaken = true;
        return 0;
    case ZMQ_EVENT_DISCONNECTED:
        if (!p->ever_up)
            return attempt_failed(z, r, "disconnected during handshake");
        z->stats.disconnects++;
        ftc_zmq_peer_lost(z, r,
                          (uint64_t)z->cfg.disconnect_grace_ms * 1000000u,
                          "connection lost");
        return 1;
    case ZMQ_EVENT_CONNECT_RETRIED:
        return attempt_failed(z, r, "connection refused or timed out");
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: {
        char what[64];
        snprintf(what, sizeof(what), "ZMTP handshake failed (0x%x)", value);
        if (p->ever_up) {
            ftc_zmq_peer_lost(z, r, 0, what);
            return 1;
        }
        return attempt_failed(z, r, what);
    }
    default:
        return 0;
    }
}

bool ftc_zmq_monitor_next(void *mon, uint16_t *event, uint32_t *value)
{
    /* An event is two frames: u16 event, u32 value; then the endpoint,
     * which no caller needs. */
    zmq_msg_t head, ep;
    zmq_msg_init(&head);
    if (zmq_msg_recv(&head, mon, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&head);
        return false;
    }
    *event = 0;
    *value = 0;
    if (zmq_msg_size(&head) >= 6) {
        const unsigned char *d = zmq_msg_data(&head);
        memcpy(event, d, 2);
        memcpy(value, d + 2, 4);
    }
    int more = zmq_msg_more(&head);
    zmq_msg_close(&head);
    while (more) {
        zmq_msg_init(&ep);
        if (zmq_msg_recv(&ep, mon, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&ep);
            break;
        }
        more = zmq_msg_more(&ep);
        zmq_msg_close(&ep);
    }
    return true;
}

int ftc_zmq_peer_read_events(ftc_zmq_t *z, uint32_t r)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    int changed = 0;
    if (p->mon == NULL)
        return 0;
    uint16_t event;
    uint32_t value;
    while (ftc_zmq_monitor_next(p->mon, &event, &value))
        changed += handle_event(z, r, event, value);
    return changed;
}

void ftc_zmq_peer_connect_all(ftc_zmq_t *z)
{
    for (uint32_t r = 0; r < z->cfg.nranks; r++)
        if (r != z->cfg.rank && ftc_zmq_peer_open(z, r) != 0)
            ftc_zmq_peer_lost(z, r, 0, "cannot connect");
    /* The peers bound their ROUTERs before their addresses were
     * published, and ZeroMQ's I/O threads answer handshakes whether or
     * not anyone calls progress: each ends, handshaken or unreachable
     * (connect_retries attempts of connect_timeout_ms), well within the
     * bound, which only guards against a peer that accepts and hangs. */
    uint64_t end = ftc_bk_now_ns()
                   + ((uint64_t)z->cfg.connect_timeout_ms
                          * (uint64_t)(z->cfg.connect_retries + 1)
                      + 1000u) * 1000000u;
    for (;;) {
        bool waiting = false;
        for (uint32_t r = 0; r < z->cfg.nranks; r++) {
            ftc_zmq_peer_t *p = &z->peers[r];
            if (p->dealer == NULL || p->handshaken
                || p->state == FTC_ZMQ_PEER_LOST
                || p->state == FTC_ZMQ_PEER_FAILED)
                continue;
            (void)ftc_zmq_peer_read_events(z, r);
            waiting |= !p->handshaken && p->state != FTC_ZMQ_PEER_LOST;
        }
        if (!waiting || ftc_bk_now_ns() >= end)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

int ftc_zmq_peer_flush(ftc_zmq_t *z, uint32_t r)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    int sent = 0;
    ftc_bk_qmsg_t *m;
    while (p->dealer != NULL && (m = ftc_bk_sq_peek(&p->q)) != NULL) {
        if (zmq_send(p->dealer, m->data, m->len, ZMQ_DONTWAIT) < 0)
            break;
        z->stats.msgs_sent++;
        z->stats.bytes_sent += m->len;
        ftc_bk_sq_pop(&p->q);
        sent++;
    }
    return sent;
}

int ftc_zmq_peer_send(ftc_zmq_t *z, uint32_t r, const void *buf, size_t len)
{
    ftc_zmq_peer_t *p = &z->peers[r];
    if (p->dealer == NULL && ftc_zmq_peer_open(z, r) != 0)
        return FTC_ETRANSPORT;
    /* Behind queued messages: wait in line, or the pair would reorder. */
    if (p->q.count == 0) {
        if (zmq_send(p->dealer, buf, len, ZMQ_DONTWAIT) >= 0) {
            z->stats.msgs_sent++;
            z->stats.bytes_sent += len;
            return FTC_SEND_INLINE;
        }
        if (zmq_errno() != EAGAIN) {
            ftc_zmq_logf(z, "rank %u: send to peer %u: %s", z->cfg.rank, r,
                         zmq_strerror(zmq_errno()));
            return FTC_ETRANSPORT;
        }
    }
    if (p->q.bytes + len > z->cfg.max_queued_bytes) {
        if (p->state == FTC_ZMQ_PEER_FAILED || p->state == FTC_ZMQ_PEER_LOST) {
            /* Best effort to the dead (transport.h: completion never
             * means delivery). */
            z->stats.msgs_dropped++;
            return FTC_SEND_INLINE;
        }
        ftc_zmq_logf(z, "rank %u: peer %u reads nothing: %zu bytes queued",
                     z->cfg.rank, r, p->q.bytes);
        return FTC_ETRANSPORT;
    }
    if (ftc_bk_sq_push(&p->q, buf, len) != 0)
        return FTC_ENOMEM;
    z->stats.msgs_queued++;
    ftc_bk_rank_set_add(&z->queued, r);
    return FTC_SEND_INLINE;
}
