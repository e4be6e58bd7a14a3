/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ZeroMQ backend's life cycle, its transport ops and its addresses.
 * The contract is in ftcoll_zmq.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "zmq_internal.h"

/* The earliest thing we must wake up for: the core's deadline or a
 * pending report. */
static uint64_t next_deadline(const ftc_zmq_t *z)
{
    uint64_t want = ftc_bk_core_timer_next(&z->timer);
    uint64_t report = ftc_bk_grace_next(&z->lost);
    return report < want ? report : want;
}

void ftc_zmq_sync_timerfd(ftc_zmq_t *z)
{
    uint64_t want = next_deadline(z);
    /* Only ever move the wake-up earlier: the core re-arms on almost
     * every message, mostly to later times, and waking early once costs
     * less than a system call each time. */
    if (want >= z->tfd_deadline)
        return;
    ftc_bk_timerfd_set(z->tfd, want);
    z->tfd_deadline = want;
}

void ftc_zmq_rearm(ftc_zmq_t *z)
{
    /* Inside progress the loop checks deadlines itself and syncs the
     * timerfd once, before it blocks or returns. */
    if (!z->in_progress)
        ftc_zmq_sync_timerfd(z);
}

int ftc_zmq_epoll_add(ftc_zmq_t *z, void *sock, uint32_t tag, uint32_t rank)
{
    int fd;
    size_t len = sizeof(fd);
    if (zmq_getsockopt(sock, ZMQ_FD, &fd, &len) != 0)
        return -1;
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u64 = (uint64_t)tag << 32 | rank;
    return epoll_ctl(z->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* --- The transport ops -------------------------------------------------- */

static int zt_send(void *tp, uint32_t dest, const void *buf, size_t len,
                   void *cookie)
{
    ftc_zmq_t *z = tp;
    (void)cookie;
    if (dest >= z->cfg.nranks || (buf == NULL && len > 0))
        return FTC_EINVAL;
    if (dest == z->cfg.rank) {
        /* Fed back from progress: never into the core from an op. Outside
         * progress, make the descriptor readable so an embedder that polls
         * it comes to fetch the message. */
        if (ftc_bk_sq_push(&z->self_q, buf, len) != 0)
            return FTC_ENOMEM;
        if (!z->in_progress) {
            ftc_bk_timerfd_set(z->tfd, 0);
            z->tfd_deadline = 0;
        }
        return FTC_SEND_INLINE;
    }
    if (z->max_msg != 0 && len > z->max_msg) {
        /* The receiver's ROUTER would close the connection on it. */
        if (!z->oversize_logged)
            ftc_zmq_logf(z, "rank %u: a message of %zu bytes to rank %u is "
                            "longer than any rank accepts (%zu bytes, from "
                            "max_payload = %zu: FTCOLL_ZMQ_MAX_PAYLOAD, the "
                            "same on every rank): refused",
                         z->cfg.rank, len, dest, z->max_msg,
                         z->cfg.max_payload);
        z->oversize_logged = true;
        return FTC_EOVERFLOW;
    }
    return ftc_zmq_peer_send(z, dest, buf, len);
}

static void zt_timer_arm(void *tp, uint64_t deadline_ns)
{
    ftc_zmq_t *z = tp;
    ftc_bk_core_timer_arm(&z->timer, deadline_ns);
    ftc_zmq_rearm(z);
}

static void zt_timer_cancel(void *tp)
{
    ftc_zmq_t *z = tp;
    ftc_bk_core_timer_cancel(&z->timer);
    ftc_zmq_rearm(z);
}

/* Reports do not depend on watching (a death is a death); a watch only
 * makes sure a connection exists whose loss we would see. */
static void zt_watch(void *tp, uint32_t peer)
{
    ftc_zmq_t *z = tp;
    if (peer >= z->cfg.nranks || peer == z->cfg.rank)
        return;
    if (z->peers[peer].dealer == NULL && ftc_zmq_peer_open(z, peer) != 0)
        ftc_zmq_peer_lost(z, peer, 0, "cannot connect");
}

/* Nothing to undo: the connection stays, for later sends and reports. */
static void zt_unwatch(void *tp, uint32_t peer)
{
    (void)tp;
    (void)peer;
}

/* The core declared peer failed. What still waits in our queue for it
 * would only hold memory until destroy: drop it (counted in
 * msgs_dropped). The connection stays: a peer that was only slow still
 * gets the core's exclusion notice over it. */
static void zt_peer_down(void *tp, uint32_t peer)
{
    ftc_zmq_t *z = tp;
    if (peer >= z->cfg.nranks || peer == z->cfg.rank)
        return;
    ftc_zmq_peer_t *p = &z->peers[peer];
    z->stats.msgs_dropped += p->q.count;
    ftc_bk_sq_clear(&p->q);   /* progress takes it off the queued set */
}

static int zt_progress(void *tp)
{
    return ftc_zmq_progress(tp, 0);
}

/* Every ZeroMQ message crosses a kernel socket (tcp:// or ipc://): a
 * system call on each side (transport.h, cost_hints). */
static uint32_t zt_cost_hints(void *tp)
{
    (void)tp;
    return FTC_TRANSPORT_COSTLY_MESSAGES;
}

static const ftc_transport_ops_t zt_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = zt_send,
    .timer_arm = zt_timer_arm,
    .timer_cancel = zt_timer_cancel,
    .now = ftc_bk_now_op,
    .watch = zt_watch,
    .unwatch = zt_unwatch,
    .progress = zt_progress,
    .peer_down = zt_peer_down,
    .cost_hints = zt_cost_hints,
};

const ftc_transport_ops_t *ftc_zmq_ops(void)
{
    return &zt_ops;
}

/* --- Life cycle --------------------------------------------------------- */

static int copy_str(char *dst, const char *src)
{
    if (src == NULL) {
        dst[0] = '\0';
        return 0;
    }
    size_t n = strlen(src);
    if (n >= FTC_ZMQ_ADDR_MAX)
        return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

static int config_ok(const ftc_zmq_config_t *c)
{
    return c->size >= sizeof(ftc_zmq_config_t) && c->nranks > 0
           && c->nranks <= INT32_MAX && c->rank < c->nranks
           && c->heartbeat_ivl_ms >= 0 && c->heartbeat_timeout_ms >= 0
           && (c->heartbeat_ivl_ms == 0 || c->heartbeat_timeout_ms > 0)
           && c->reconnect_ivl_ms > 0 && c->connect_timeout_ms >= 0
           && c->connect_retries > 0 && c->disconnect_grace_ms >= 0
           && c->max_queued_bytes > 0 && c->sndhwm >= 0 && c->rcvhwm >= 0
           && c->linger_ms >= 0 && c->bind_endpoint != NULL
           && c->single_host >= -1 && c->single_host <= 1
           && c->max_payload <= SIZE_MAX / 4
           && (c->eager_connect == 0 || c->eager_connect == 1);
}

/* ZMQ_LAST_ENDPOINT of a wildcard bind says 0.0.0.0: peers need a name. */
static int advertise(ftc_zmq_t *z, const char *last)
{
    const char *wild[] = {"tcp://0.0.0.0:", "tcp://[::]:"};
    for (size_t i = 0; i < 2; i++) {
        size_t k = strlen(wild[i]);
        if (strncmp(last, wild[i], k) != 0)
            continue;
        char host[FTC_ZMQ_ADDR_MAX];
        if (z->advertise_host[0] != '\0')
            snprintf(host, sizeof(host), "%s", z->advertise_host);
        else if (gethostname(host, sizeof(host)) != 0)
            return -1;
        host[sizeof(host) - 1] = '\0';
        int n = snprintf(z->endpoint, sizeof(z->endpoint), "tcp://%s:%s", host,
                         last + k);
        return n > 0 && (size_t)n < sizeof(z->endpoint) ? 0 : -1;
    }
    return copy_str(z->endpoint, last);
}

static void set_int(void *sock, int opt, int v)
{
    (void)zmq_setsockopt(sock, opt, &v, sizeof(v));
}

/* See ftc_zmq_max_message in ftcoll_zmq.h. */
static size_t max_message(const ftc_zmq_config_t *c)
{
    if (c->max_payload == 0)
        return 0;
    size_t m = 2 * c->max_payload + 256;    /* config_ok: no overflow */
    size_t lists = (size_t)8 * c->nranks;
    return m > SIZE_MAX - lists ? SIZE_MAX : m + lists;
}

size_t ftc_zmq_max_message(const ftc_zmq_t *z)
{
    return z != NULL ? z->max_msg : 0;
}

int ftc_zmq_create(const ftc_zmq_config_t *cfg, ftc_zmq_t **out)
{
    if (out == NULL)
        return FTC_EINVAL;
    *out = NULL;
    if (cfg == NULL || !config_ok(cfg))
        return FTC_EINVAL;

    ftc_zmq_t *z = calloc(1, sizeof(*z));
    if (z == NULL)
        return FTC_ENOMEM;
    z->cfg = *cfg;
    z->epfd = z->tfd = -1;
    z->tfd_deadline = UINT64_MAX;
    if (copy_str(z->bind_endpoint, cfg->bind_endpoint) != 0
        || copy_str(z->advertise_host, cfg->advertise_host) != 0) {
        free(z);
        return FTC_EINVAL;
    }
    /* The copies own the strings now; the caller's may go away. */
    z->cfg.bind_endpoint = z->bind_endpoint;
    z->cfg.advertise_host = z->advertise_host;
    for (int i = 0; i < 8; i++)
        z->id_token[i] = (unsigned char)(cfg->job_token >> (8 * i));
    ftc_bk_sq_init(&z->self_q);

    int rc = FTC_ENOMEM;
    z->peers = calloc(cfg->nranks, sizeof(*z->peers));
    int lost_rc = ftc_bk_grace_init(&z->lost, cfg->nranks);
    int queued_rc = ftc_bk_rank_set_init(&z->queued, cfg->nranks);
    if (z->peers == NULL || lost_rc != 0 || queued_rc != 0)
        goto err;
    for (uint32_t r = 0; r < cfg->nranks; r++)
        ftc_bk_sq_init(&z->peers[r].q);

    rc = FTC_ETRANSPORT;
    z->epfd = epoll_create1(EPOLL_CLOEXEC);
    z->tfd = ftc_bk_timerfd_open();
    if (z->epfd < 0 || z->tfd < 0) {
        ftc_zmq_logf(z, "epoll/timerfd: %s", strerror(errno));
        goto err;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u64 = (uint64_t)FTC_ZMQ_TAG_TIMER << 32;
    if (epoll_ctl(z->epfd, EPOLL_CTL_ADD, z->tfd, &ev) != 0)
        goto err;

    z->zctx = zmq_ctx_new();
    if (z->zctx == NULL)
        goto err_zmq;
    /* ftc_zmq_destroy bounds every socket's linger itself; never let a
     * forgotten one make zmq_ctx_term wait forever. */
    (void)zmq_ctx_set(z->zctx, ZMQ_BLOCKY, 0);
    z->router = zmq_socket(z->zctx, ZMQ_ROUTER);
    if (z->router == NULL)
        goto err_zmq;
    set_int(z->router, ZMQ_LINGER, 0);
    set_int(z->router, ZMQ_RCVHWM, cfg->rcvhwm);
    /* A rank that reconnects (after a heartbeat timeout, say) takes over
     * its routing id instead of being refused as a duplicate. */
    set_int(z->router, ZMQ_ROUTER_HANDOVER, 1);
    /* No frame above the largest message a rank of this job sends: ZeroMQ
     * refuses it from its header and closes that connection, before it
     * allocates anything for it. */
    z->max_msg = max_message(cfg);
    int64_t maxmsg = z->max_msg == 0 || z->max_msg > (size_t)INT64_MAX
                         ? -1
                         : (int64_t)z->max_msg;
    if (zmq_setsockopt(z->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg))
        != 0)
        goto err_zmq;
    if (cfg->heartbeat_ivl_ms > 0) {
        set_int(z->router, ZMQ_HEARTBEAT_IVL, cfg->heartbeat_ivl_ms);
        set_int(z->router, ZMQ_HEARTBEAT_TIMEOUT, cfg->heartbeat_timeout_ms);
        set_int(z->router, ZMQ_HEARTBEAT_TTL, cfg->heartbeat_timeout_ms);
    }
    if (zmq_bind(z->router, z->bind_endpoint) != 0) {
        ftc_zmq_logf(z, "rank %u: cannot bind %s: %s", cfg->rank,
                     z->bind_endpoint, zmq_strerror(zmq_errno()));
        goto err;
    }
    char last[FTC_ZMQ_ADDR_MAX];
    size_t len = sizeof(last);
    if (zmq_getsockopt(z->router, ZMQ_LAST_ENDPOINT, last, &len) != 0
        || advertise(z, last) != 0)
        goto err_zmq;
    if (cfg->single_host == 0
        && (strncmp(last, "tcp://127.", 10) == 0
            || strncmp(last, "tcp://[::1]:", 12) == 0
            || strncmp(last, "ipc://", 6) == 0)) {
        ftc_zmq_logf(z, "rank %u: the job spans hosts (single_host = 0, "
                        "FTCOLL_SINGLE_HOST) but the ROUTER listens on %s, "
                        "which only this host reaches. Bind the interface "
                        "the other hosts reach: FTCOLL_ZMQ_BIND='tcp://eth0:*' "
                        "(or tcp://0.0.0.0:* with FTCOLL_ZMQ_HOST)",
                     cfg->rank, last);
        rc = FTC_EINVAL;
        goto err;
    }
    if (ftc_zmq_epoll_add(z, z->router, FTC_ZMQ_TAG_ROUTER, 0) != 0
        || ftc_zmq_inbound_open(z) != 0)
        goto err_zmq;
    z->router_dirty = true;
    *out = z;
    return FTC_OK;

err_zmq:
    ftc_zmq_logf(z, "rank %u: zmq: %s", cfg->rank, zmq_strerror(zmq_errno()));
err:
    ftc_zmq_destroy(z);
    return rc;
}

/* Give queued messages to live peers a bounded chance to leave. */
static void drain_queues(ftc_zmq_t *z)
{
    uint64_t end = ftc_bk_now_ns() + (uint64_t)z->cfg.linger_ms * 1000000u;
    for (;;) {
        size_t left = 0;
        for (uint32_t i = 0; i < z->queued.count; i++) {
            uint32_t r = z->queued.ranks[i];
            ftc_zmq_peer_t *p = &z->peers[r];
            if (p->state == FTC_ZMQ_PEER_FAILED || p->state == FTC_ZMQ_PEER_LOST)
                continue;
            ftc_zmq_peer_flush(z, r);
            left += p->q.count;
        }
        if (left == 0 || ftc_bk_now_ns() >= end)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

void ftc_zmq_destroy(ftc_zmq_t *z)
{
    if (z == NULL)
        return;
    if (z->peers != NULL) {
        drain_queues(z);
        for (uint32_t r = 0; r < z->cfg.nranks; r++) {
            ftc_zmq_peer_t *p = &z->peers[r];
            bool dead = p->state == FTC_ZMQ_PEER_FAILED
                        || p->state == FTC_ZMQ_PEER_LOST;
            ftc_zmq_peer_close(z, r, dead ? 0 : z->cfg.linger_ms);
        }
    }
    ftc_zmq_inbound_close(z);
    if (z->router != NULL)
        zmq_close(z->router);
    if (z->zctx != NULL)
        zmq_ctx_term(z->zctx);
    if (z->tfd >= 0)
        close(z->tfd);
    if (z->epfd >= 0)
        close(z->epfd);
    ftc_bk_sq_clear(&z->self_q);
    free(z->peers);
    ftc_bk_grace_fini(&z->lost);
    ftc_bk_rank_set_fini(&z->queued);
    free(z);
}

const char *ftc_zmq_endpoint_address(const ftc_zmq_t *z)
{
    return z != NULL ? z->endpoint : NULL;
}

/* tcp://host:port (port numeric) or ipc://path: anything else cannot be
 * a peer's ROUTER. */
static int address_ok(const char *a)
{
    if (strncmp(a, "ipc://", 6) == 0)
        return a[6] != '\0';
    if (strncmp(a, "tcp://", 6) != 0)
        return 0;
    const char *colon = strrchr(a + 6, ':');
    if (colon == NULL || colon == a + 6 || colon[1] == '\0')
        return 0;
    for (const char *c = colon + 1; *c != '\0'; c++)
        if (*c < '0' || *c > '9')
            return 0;
    long port = strtol(colon + 1, NULL, 10);
    return port > 0 && port < 65536;
}

int ftc_zmq_set_peers(ftc_zmq_t *z, const char *const *addrs)
{
    if (z == NULL || addrs == NULL || z->peers_set)
        return FTC_EINVAL;
    for (uint32_t r = 0; r < z->cfg.nranks; r++) {
        if (r == z->cfg.rank)
            continue;
        const char *a = addrs[r];
        if (a == NULL || strlen(a) >= FTC_ZMQ_ADDR_MAX || !address_ok(a)) {
            ftc_zmq_logf(z, "rank %u: bad address for rank %u: '%s'",
                         z->cfg.rank, r, a != NULL ? a : "(null)");
            return FTC_EINVAL;
        }
    }
    for (uint32_t r = 0; r < z->cfg.nranks; r++)
        if (r != z->cfg.rank)
            (void)copy_str(z->peers[r].addr, addrs[r]);
    (void)copy_str(z->peers[z->cfg.rank].addr, z->endpoint);
    z->peers_set = true;
    if (z->cfg.eager_connect)
        ftc_zmq_peer_connect_all(z);
    return FTC_OK;
}

int ftc_zmq_exchange(ftc_zmq_t *z,
                     int (*allgather)(void *arg, const void *mine,
                                      size_t len, void *all),
                     void *arg)
{
    if (z == NULL || allgather == NULL)
        return FTC_EINVAL;
    size_t n = z->cfg.nranks;
    char mine[FTC_ZMQ_ADDR_MAX];
    memset(mine, 0, sizeof(mine));
    memcpy(mine, z->endpoint, strlen(z->endpoint));
    char *all = calloc(n, FTC_ZMQ_ADDR_MAX);
    const char **addrs = calloc(n, sizeof(*addrs));
    int rc = FTC_ENOMEM;
    if (all == NULL || addrs == NULL)
        goto out;
    rc = FTC_ETRANSPORT;
    if (allgather(arg, mine, FTC_ZMQ_ADDR_MAX, all) != 0) {
        ftc_zmq_logf(z, "rank %u: address exchange failed", z->cfg.rank);
        goto out;
    }
    for (size_t r = 0; r < n; r++) {
        char *a = all + r * FTC_ZMQ_ADDR_MAX;
        a[FTC_ZMQ_ADDR_MAX - 1] = '\0';   /* never trust the other side */
        addrs[r] = a;
    }
    rc = ftc_zmq_set_peers(z, addrs);
out:
    free(addrs);
    free(all);
    return rc;
}

void ftc_zmq_attach(ftc_zmq_t *z, ftc_context_t *ctx)
{
    if (z != NULL)
        z->ctx = ctx;
}

int ftc_zmq_fd(const ftc_zmq_t *z)
{
    return z != NULL ? z->epfd : -1;
}

void ftc_zmq_stats(const ftc_zmq_t *z, ftc_zmq_stats_t *out)
{
    if (out == NULL)
        return;
    if (z == NULL)
        memset(out, 0, sizeof(*out));
    else
        *out = z->stats;
}

int ftc_zmq_peer_reported(const ftc_zmq_t *z, uint32_t peer)
{
    return z != NULL && peer < z->cfg.nranks
           && z->peers[peer].state == FTC_ZMQ_PEER_FAILED;
}

int ftc_zmq_peer_info(const ftc_zmq_t *z, uint32_t peer,
                      ftc_zmq_peer_info_t *out)
{
    if (z == NULL || out == NULL || peer >= z->cfg.nranks)
        return FTC_EINVAL;
    const ftc_zmq_peer_t *p = &z->peers[peer];
    memset(out, 0, sizeof(*out));
    out->reported = p->state == FTC_ZMQ_PEER_FAILED;
    snprintf(out->error, sizeof(out->error), "%s", p->why);
    out->detected_ns = p->lost_ns;
    out->reported_ns = p->reported_ns;
    return FTC_OK;
}
