/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX backend's life cycle, its transport ops, its addresses and its
 * counters. The contract is in ftcoll_ucx.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ucx_internal.h"

void ftc_ucx_kick(ftc_ucx_t *u)
{
    if (u->kicked || u->kfd < 0)
        return;
    uint64_t one = 1;
    if (write(u->kfd, &one, sizeof(one)) == (ssize_t)sizeof(one))
        u->kicked = true;
}

uint64_t ftc_ucx_next_deadline(const ftc_ucx_t *u)
{
    uint64_t want = ftc_bk_core_timer_next(&u->timer);
    uint64_t report = ftc_bk_grace_next(&u->lost);
    if (report < want)
        want = report;
    if (u->cfg.max_sleep_ms > 0) {
        uint64_t t = ftc_bk_now_ns()
                     + (uint64_t)u->cfg.max_sleep_ms * 1000000u;
        if (t < want)
            want = t;
    }
    return want;
}

void ftc_ucx_rearm(ftc_ucx_t *u)
{
    if (u->tfd < 0)
        return;
    uint64_t want = ftc_ucx_next_deadline(u);
    if (want == u->tfd_deadline)
        return;
    ftc_bk_timerfd_set(u->tfd, want);
    u->tfd_deadline = want;
}

/* --- The transport ops -------------------------------------------------- */

static int queue_self(ftc_ucx_t *u, const void *buf, size_t len)
{
    ftc_ucx_ev_t *ev = ftc_ucx_ev_alloc(u);
    if (ev == NULL)
        return FTC_ENOMEM;
    ev->kind = FTC_UCX_EV_RECV;
    ev->peer = u->cfg.rank;
    if (ftc_ucx_ev_copy(ev, buf, len) != 0) {
        ftc_ucx_ev_free(u, ev);
        return FTC_ENOMEM;
    }
    /* Fed back from progress: never into the core from an op. */
    ftc_ucx_evq_push(&u->self_q, ev);
    if (u->fd_armed)
        ftc_ucx_kick(u);
    return FTC_SEND_INLINE;
}

/*
 * A send to a peer whose death is known here but not yet reported to the
 * core. Failing it (an error return) would make the core hold the peer
 * failed at once, before the messages that peer sent before it died,
 * still queued in this pass, reach the core: the core then drops them
 * as stale. Among them may be the notice that this process was excluded
 * (a process stopped until its peers exited answers their late probes
 * first, and over tcp UCX times out its endpoints in the same pass).
 * So the message is dropped as sent (a send to a dead peer may succeed:
 * the transport contract), and the death reaches the core through the
 * report, after the peer's last messages (progress.c).
 */
static int drop_for_lost(ftc_ucx_t *u)
{
    u->stats.send_errors++;
    return FTC_SEND_INLINE;
}

static int ut_send(void *tp, uint32_t dest, const void *buf, size_t len,
                   void *cookie)
{
    ftc_ucx_t *u = tp;
    if (dest >= u->cfg.nranks || (buf == NULL && len > 0))
        return FTC_EINVAL;
    if (dest == u->cfg.rank)
        return queue_self(u, buf, len);
    ftc_ucx_peer_t *p = &u->peers[dest];
    if (p->state == FTC_UCX_PEER_FAILED) {
        u->stats.send_errors++;
        return FTC_ETRANSPORT;      /* dead, and the core knows */
    }
    if (p->state == FTC_UCX_PEER_LOST)
        return drop_for_lost(u);
    if (p->ep == NULL && ftc_ucx_peer_connect(u, dest, NULL) != 0) {
        ftc_ucx_peer_lost(u, dest, 0, "unreachable");
        return drop_for_lost(u);
    }
    if (p->inflight_bytes + len > u->cfg.max_inflight_bytes) {
        ftc_ucx_peer_lost(u, dest, 0, "does not read (max_inflight_bytes)");
        return drop_for_lost(u);
    }
    /* Most small sends complete inside ucp_am_send_nbx (shared memory,
     * eager): they need no event. One is made only for a send UCX keeps,
     * and its pointer goes into the request's own space (request_size,
     * open_ucx), which send_cb reads. The event must exist before the
     * call, though: once UCX has the message there is no way back. */
    if (ftc_ucx_ev_reserve(u) != 0)
        return FTC_ENOMEM;
    const ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
        .flags = UCP_AM_SEND_FLAG_EAGER,
        .cb.send = ftc_ucx_send_cb,
    };
    /* The header lives in u: valid however long the send takes. */
    ucs_status_ptr_t sp = ucp_am_send_nbx(p->ep, FTC_UCX_AM_ID, u->hdr,
                                          FTC_UCX_HDR_LEN, buf, len, &prm);
    u->stats.msgs_sent++;
    u->stats.bytes_sent += len;
    if (sp == NULL) {
        u->stats.sends_inline++;
        return FTC_SEND_INLINE;
    }
    if (UCS_PTR_IS_ERR(sp)) {
        ftc_ucx_peer_lost(u, dest, 0, ucs_status_string(UCS_PTR_STATUS(sp)));
        return drop_for_lost(u);
    }
    /* UCX calls send_cb from a later ucp_worker_progress, never before
     * this returns: the request's space is ours to fill now. */
    ftc_ucx_ev_t *ev = ftc_ucx_ev_alloc(u);     /* reserved: not NULL */
    ev->u = u;
    ev->kind = FTC_UCX_EV_SEND;
    ev->peer = dest;
    ev->cookie = cookie;
    ev->len = len;
    *(ftc_ucx_ev_t **)sp = ev;
    /* In flight: UCX keeps buf; send_cb queues the completion. */
    ev->next = u->inflight.next;
    ev->prev = &u->inflight;
    u->inflight.next->prev = ev;
    u->inflight.next = ev;
    u->ninflight++;
    p->inflight_bytes += len;
    if (u->fd_armed)
        ftc_ucx_kick(u);
    return FTC_OK;
}

static void ut_timer_arm(void *tp, uint64_t deadline_ns)
{
    ftc_ucx_t *u = tp;
    ftc_bk_core_timer_arm(&u->timer, deadline_ns);
    if (u->fd_armed)
        ftc_ucx_rearm(u);   /* the poller sleeps: move its alarm */
}

static void ut_timer_cancel(void *tp)
{
    ftc_ucx_t *u = tp;
    /* A stale timerfd wake-up is harmless. */
    ftc_bk_core_timer_cancel(&u->timer);
}

/* Reports do not depend on watching (a death is a death); a watch only
 * makes sure an endpoint exists whose error we would see. */
static void ut_watch(void *tp, uint32_t peer)
{
    ftc_ucx_t *u = tp;
    if (peer >= u->cfg.nranks || peer == u->cfg.rank)
        return;
    ftc_ucx_peer_t *p = &u->peers[peer];
    p->watched = true;
    if (p->state == FTC_UCX_PEER_IDLE && u->peers_set
        && ftc_ucx_peer_connect(u, peer, NULL) != 0)
        ftc_ucx_peer_lost(u, peer, 0, "unreachable");
}

static void ut_unwatch(void *tp, uint32_t peer)
{
    ftc_ucx_t *u = tp;
    if (peer < u->cfg.nranks)
        u->peers[peer].watched = false;
}

static int ut_progress(void *tp)
{
    return ftc_ucx_progress(tp, 0);
}

/* UCX_TLS as the backend was created with (transport.h, cost_hints). */
static uint32_t ut_cost_hints(void *tp)
{
    const ftc_ucx_t *u = tp;
    return u->costly_messages ? FTC_TRANSPORT_COSTLY_MESSAGES : 0;
}

static const ftc_transport_ops_t ut_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = ut_send,
    .timer_arm = ut_timer_arm,
    .timer_cancel = ut_timer_cancel,
    .now = ftc_bk_now_op,
    .watch = ut_watch,
    .unwatch = ut_unwatch,
    .progress = ut_progress,
    .cost_hints = ut_cost_hints,
};

const ftc_transport_ops_t *ftc_ucx_ops(void)
{
    return &ut_ops;
}

/* --- Life cycle --------------------------------------------------------- */

static int config_ok(const ftc_ucx_config_t *c)
{
    return c->size >= sizeof(ftc_ucx_config_t) && c->nranks > 0
           && c->nranks <= INT32_MAX && c->rank < c->nranks
           && c->failure_grace_ms >= 0 && c->spin_us >= -1
           && c->max_sleep_ms >= 0 && c->max_inflight_bytes > 0
           && c->close_timeout_ms >= 0 && c->handshake_timeout_ms >= 0
           && c->single_host >= -1
           && c->single_host <= 1;
}

static int epoll_add(int epfd, int fd)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int open_fds(ftc_ucx_t *u)
{
    u->epfd = epoll_create1(EPOLL_CLOEXEC);
    u->tfd = ftc_bk_timerfd_open();
    u->kfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (u->epfd < 0 || u->tfd < 0 || u->kfd < 0 || epoll_add(u->epfd, u->tfd)
        || epoll_add(u->epfd, u->kfd)
        || (u->efd >= 0 && epoll_add(u->epfd, u->efd) != 0)) {
        ftc_ucx_logf(u, "rank %u: epoll/timerfd/eventfd: %s", u->cfg.rank,
                     strerror(errno));
        return -1;
    }
    return ftc_ucx_exits_open(u);
}

static int open_ucx(ftc_ucx_t *u)
{
    char why[768];
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        ftc_ucx_logf(u, "rank %u: UCX configuration: %s (check the UCX_* "
                        "variables)", u->cfg.rank, ucs_status_string(st));
        return -1;
    }
    if (u->set_net_devices) {
        st = ucp_config_modify(config, "NET_DEVICES", u->net_devices);
        if (st != UCS_OK) {
            ftc_ucx_logf(u, "rank %u: UCX_NET_DEVICES=%s: %s", u->cfg.rank,
                         u->net_devices, ucs_status_string(st));
            ucp_config_release(config);
            return -1;
        }
    }
    uint32_t fifo = ftc_ucx_fifo_size(u);
    if (fifo != 0) {
        char v[16];
        snprintf(v, sizeof(v), "%u", fifo);
        /* UCX applies a transport's setting given here by its name in
         * the shared table of sysv and posix (MM_), not by theirs. */
        if (ucp_config_modify(config, "MM_FIFO_SIZE", v) != UCS_OK)
            ftc_ucx_logf(u, "rank %u: note: could not set UCX's shared-"
                            "memory FIFO size to %s: a process stopped for "
                            "long may miss its exclusion notice "
                            "(docs/ucx.md)", u->cfg.rank, v);
    }
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES
                        | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS
                        | UCP_PARAM_FIELD_NAME
                        | UCP_PARAM_FIELD_REQUEST_SIZE;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    /* Room in every request for the SEND event of a send UCX keeps
     * (ut_send): no event, hence no free-list round, for the others. */
    params.request_size = sizeof(ftc_ucx_ev_t *);
    params.estimated_num_eps = u->cfg.nranks;
    params.name = "ftcoll";
    st = ucp_init(&params, config, &u->ucp);
    ucp_config_release(config);
    if (st != UCS_OK) {
        u->ucp = NULL;
        ftc_ucx_explain_init(u, st, why, sizeof(why));
        ftc_ucx_logf(u, "rank %u: ucp_init: %s", u->cfg.rank, why);
        return -1;
    }

    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(u->ucp, &wp, &u->worker);
    if (st != UCS_OK) {
        u->worker = NULL;
        ftc_ucx_explain_init(u, st, why, sizeof(why));
        ftc_ucx_logf(u, "rank %u: ucp_worker_create: %s", u->cfg.rank, why);
        return -1;
    }
    st = ucp_worker_get_address(u->worker, &u->address, &u->address_len);
    if (st != UCS_OK) {
        u->address = NULL;
        ftc_ucx_logf(u, "rank %u: ucp_worker_get_address: %s", u->cfg.rank,
                     ucs_status_string(st));
        return -1;
    }
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID
                    | UCP_AM_HANDLER_PARAM_FIELD_CB
                    | UCP_AM_HANDLER_PARAM_FIELD_ARG
                    | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = FTC_UCX_AM_ID;
    hp.cb = ftc_ucx_am_recv_cb;
    hp.arg = u;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    st = ucp_worker_set_am_recv_handler(u->worker, &hp);
    if (st != UCS_OK) {
        ftc_ucx_logf(u, "rank %u: ucp_worker_set_am_recv_handler: %s",
                     u->cfg.rank, ucs_status_string(st));
        return -1;
    }
    hp.id = FTC_UCX_HELLO_AM_ID;
    hp.cb = ftc_ucx_hello_recv_cb;
    st = ucp_worker_set_am_recv_handler(u->worker, &hp);
    if (st != UCS_OK) {
        ftc_ucx_logf(u, "rank %u: ucp_worker_set_am_recv_handler (hello): %s",
                     u->cfg.rank, ucs_status_string(st));
        return -1;
    }
    st = ucp_worker_get_efd(u->worker, &u->efd);
    if (st != UCS_OK) {
        u->efd = -1;
        ftc_ucx_logf(u, "rank %u: note: the transports in use have no "
                        "wake-up events (%s): ftc_ucx_fd() is -1 and "
                        "waiting polls the worker", u->cfg.rank,
                     ucs_status_string(st));
    }
    return 0;
}

int ftc_ucx_create(const ftc_ucx_config_t *cfg, ftc_ucx_t **out)
{
    if (out == NULL)
        return FTC_EINVAL;
    *out = NULL;
    if (cfg == NULL || !config_ok(cfg))
        return FTC_EINVAL;

    ftc_ucx_t *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return FTC_ENOMEM;
    u->cfg = *cfg;
    u->efd = u->epfd = u->tfd = u->kfd = u->xfd = -1;
    u->tfd_deadline = UINT64_MAX;
    ftc_bk_spin_init(&u->spin, cfg->spin_us,
                     cfg->local_ranks > 0
                         ? cfg->local_ranks
                         : ftc_bk_local_ranks(cfg->nranks, cfg->single_host));
    u->inflight.next = u->inflight.prev = &u->inflight;
    u->peers_not_shm = cfg->nranks - 1;
    for (int i = 0; i < 4; i++)
        u->hdr[i] = (unsigned char)(cfg->rank >> (8 * i));
    for (int i = 0; i < 8; i++)
        u->token[i] = (unsigned char)(cfg->job_token >> (8 * i));
    memcpy(u->hdr + 4, u->token, 8);

    int rc = FTC_ENOMEM;
    u->peers = calloc(cfg->nranks, sizeof(*u->peers));
    if (u->peers == NULL || ftc_bk_grace_init(&u->lost, cfg->nranks) != 0)
        goto err;
    for (uint32_t r = 0; r < cfg->nranks; r++) {
        u->peers[r].u = u;
        u->peers[r].rank = r;
        u->peers[r].pidfd = -1;
    }
    rc = FTC_ENOTSUP;
    if (ftc_ucx_check_env(u) != 0)
        goto err;
    u->costly_messages = ftc_ucx_costly_messages();
    rc = FTC_EINVAL;
    int dev_rc = ftc_ucx_choose_devices(u);
    u->cfg.net_devices = NULL;      /* copied into u->net_devices */
    if (dev_rc != 0)
        goto err;
    rc = FTC_ETRANSPORT;
    if (open_ucx(u) != 0 || open_fds(u) != 0)
        goto err;
    *out = u;
    return FTC_OK;

err:
    ftc_ucx_destroy(u);
    return rc;
}

/* Sends UCX has not completed when we close are cancelled: a peer that
 * does not read (stopped, its shared-memory FIFO full) never gets them.
 * Say so, naming the peers: it explains what such a peer sees later. */
static void log_unsent(const ftc_ucx_t *u)
{
    if (u->ninflight == 0)
        return;
    char who[128];
    size_t at = 0;
    who[0] = '\0';
    for (uint32_t r = 0; r < u->cfg.nranks && at + 12 < sizeof(who); r++)
        if (u->peers[r].inflight_bytes > 0)
            at += (size_t)snprintf(who + at, sizeof(who) - at, "%s%u",
                                   at > 0 ? "," : "", r);
    ftc_ucx_logf(u, "rank %u: %zu send(s) not taken by UCX at close, to "
                    "rank(s) %s: cancelled", u->cfg.rank, u->ninflight,
                 who);
}

void ftc_ucx_destroy(ftc_ucx_t *u)
{
    if (u == NULL)
        return;
    u->closing_down = true;
    u->ctx = NULL;      /* nothing reaches the core from here on */
    if (u->worker != NULL && u->peers != NULL) {
        log_unsent(u);
        /* Force: no flush towards the dead, and in-flight sends (whose
         * buffers the core may have freed) are cancelled, not read. */
        ftc_ucx_close_all(u);
        uint64_t end = ftc_bk_now_ns()
                       + (uint64_t)u->cfg.close_timeout_ms * 1000000u;
        while (ftc_ucx_reap_closing(u) > 0 && ftc_bk_now_ns() < end)
            ucp_worker_progress(u->worker);
        ftc_ucx_evq_clear(u, &u->events, true);
    }
    if (u->nclosing > 0)
        ftc_ucx_logf(u, "rank %u: %zu endpoint(s) did not close within "
                        "%d ms", u->cfg.rank, u->nclosing,
                     u->cfg.close_timeout_ms);
    free(u->closing);
    if (u->address != NULL)
        ucp_worker_release_address(u->worker, u->address);
    if (u->worker != NULL)
        ucp_worker_destroy(u->worker);
    u->worker = NULL;
    if (u->ucp != NULL)
        ucp_cleanup(u->ucp);
    /* Whatever the worker queued while it went away, and sends it never
     * completed: their UCX side is gone with it. */
    ftc_ucx_evq_clear(u, &u->events, false);
    ftc_ucx_evq_clear(u, &u->self_q, false);
    while (u->inflight.next != &u->inflight) {
        ftc_ucx_ev_t *ev = u->inflight.next;
        u->inflight.next = ev->next;
        free(ev);
    }
    while (u->free_evs != NULL) {
        ftc_ucx_ev_t *ev = u->free_evs;
        u->free_evs = ev->next;
        free(ev);
    }
    ftc_ucx_exits_close(u);
    if (u->epfd >= 0)
        close(u->epfd);
    if (u->tfd >= 0)
        close(u->tfd);
    if (u->kfd >= 0)
        close(u->kfd);
    if (u->peers != NULL)
        for (uint32_t r = 0; r < u->cfg.nranks; r++)
            free(u->peers[r].addr);
    free(u->peers);
    ftc_bk_grace_fini(&u->lost);
    free(u);
}

/* --- Addresses ---------------------------------------------------------- */

const void *ftc_ucx_address(const ftc_ucx_t *u, size_t *len)
{
    if (u == NULL)
        return NULL;
    if (len != NULL)
        *len = u->address_len;
    return u->address;
}

int ftc_ucx_set_peers(ftc_ucx_t *u, const void *const *addrs,
                      const size_t *lens)
{
    if (u == NULL || addrs == NULL || lens == NULL || u->peers_set)
        return FTC_EINVAL;
    for (uint32_t r = 0; r < u->cfg.nranks; r++) {
        if (r == u->cfg.rank)
            continue;
        if (addrs[r] == NULL || lens[r] == 0) {
            ftc_ucx_logf(u, "rank %u: no address for rank %u", u->cfg.rank, r);
            return FTC_EINVAL;
        }
    }
    for (uint32_t r = 0; r < u->cfg.nranks; r++) {
        if (r == u->cfg.rank)
            continue;
        u->peers[r].addr = malloc(lens[r]);
        if (u->peers[r].addr == NULL)
            return FTC_ENOMEM;
        memcpy(u->peers[r].addr, addrs[r], lens[r]);
        u->peers[r].addrlen = lens[r];
    }
    u->peers_set = true;
    if (!u->cfg.eager_connect)
        return FTC_OK;
    /* No transport of ours that reaches a peer's address is a
     * configuration error; a peer that refuses or does not answer (it
     * died after it published its address: over tcp on one host its
     * connect() is refused at once and UCX says "Destination is
     * unreachable" too) is a failure like any other, for the core to
     * route around. ftc_ucx_peer_connect tells the two apart. */
    for (uint32_t r = 0; r < u->cfg.nranks; r++) {
        if (r == u->cfg.rank)
            continue;
        bool ours = false;
        int st = ftc_ucx_peer_connect(u, r, &ours);
        if (st != UCS_OK && ours)
            return FTC_ETRANSPORT;
        if (st != UCS_OK)
            ftc_ucx_peer_lost(u, r, 0, ucs_status_string((ucs_status_t)st));
    }
    return FTC_OK;
}

int ftc_ucx_exchange(ftc_ucx_t *u,
                     int (*allgather)(void *arg, const void *mine,
                                      size_t len, void *all),
                     void *arg)
{
    if (u == NULL || allgather == NULL)
        return FTC_EINVAL;
    size_t n = u->cfg.nranks;
    int rc = FTC_ENOMEM;
    /* Each rank's blob: its UCX address, then its process identity, so
     * that peers on this host can watch its exit (exit_watch.c). */
    const size_t idlen = u->cfg.exit_watch ? FTC_BK_IDENTITY_LEN : 0;
    size_t blob_len = u->address_len + idlen;
    unsigned char mine_len[4];
    for (int i = 0; i < 4; i++)
        mine_len[i] = (unsigned char)(blob_len >> (8 * i));
    unsigned char *lens_raw = calloc(n, 4);
    size_t *lens = calloc(n, sizeof(*lens));
    const void **addrs = calloc(n, sizeof(*addrs));
    unsigned char *mine = NULL, *all = NULL;
    bool *has_id = calloc(n, sizeof(*has_id));
    if (lens_raw == NULL || lens == NULL || addrs == NULL || has_id == NULL)
        goto out;
    rc = FTC_ETRANSPORT;
    if (allgather(arg, mine_len, 4, lens_raw) != 0) {
        ftc_ucx_logf(u, "rank %u: address exchange failed", u->cfg.rank);
        goto out;
    }
    size_t max = 0;
    for (size_t r = 0; r < n; r++) {
        const unsigned char *l = lens_raw + 4 * r;
        lens[r] = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16
                  | (size_t)l[3] << 24;
        if (lens[r] > max)
            max = lens[r];
    }
    if (max == 0 || max > (1u << 20)) {
        ftc_ucx_logf(u, "rank %u: implausible address length %zu",
                     u->cfg.rank, max);
        goto out;
    }
    rc = FTC_ENOMEM;
    mine = calloc(1, max);
    all = calloc(n, max);
    if (mine == NULL || all == NULL)
        goto out;
    memcpy(mine, u->address, u->address_len);
    if (idlen > 0)
        ftc_ucx_exits_identity(u, mine + u->address_len);
    rc = FTC_ETRANSPORT;
    if (allgather(arg, mine, max, all) != 0) {
        ftc_ucx_logf(u, "rank %u: address exchange failed", u->cfg.rank);
        goto out;
    }
    /* A blob ends with an identity only if its rank watches exits too
     * (the same setting everywhere is the rule; a rank without it must
     * still be reachable): strip what is one, watch those ranks. */
    ftc_bk_identity_t id;
    for (size_t r = 0; r < n; r++) {
        addrs[r] = all + r * max;
        has_id[r] = r != u->cfg.rank && lens[r] > FTC_BK_IDENTITY_LEN
                    && ftc_bk_identity_unpack(all + r * max + lens[r]
                                                  - FTC_BK_IDENTITY_LEN,
                                              &id) == 0;
        if (has_id[r])
            lens[r] -= FTC_BK_IDENTITY_LEN;
    }
    rc = ftc_ucx_set_peers(u, addrs, lens);
    for (size_t r = 0; rc == FTC_OK && idlen > 0 && r < n; r++)
        if (has_id[r])
            ftc_ucx_exits_watch(u, (uint32_t)r, all + r * max + lens[r]);
    /* Every rank is here: finish UCX's wire-up of every endpoint now, not
     * during the first collectives (handshake.c says why). */
    if (rc == FTC_OK && u->cfg.eager_connect && u->cfg.handshake_timeout_ms > 0)
        rc = ftc_ucx_handshake(u, u->cfg.handshake_timeout_ms);
out:
    free(has_id);
    free(all);
    free(mine);
    free(addrs);
    free(lens);
    free(lens_raw);
    return rc;
}

void ftc_ucx_attach(ftc_ucx_t *u, ftc_context_t *ctx)
{
    if (u != NULL)
        u->ctx = ctx;
}

int ftc_ucx_fd(const ftc_ucx_t *u)
{
    return u != NULL && u->efd >= 0 ? u->epfd : -1;
}

/* --- Introspection ------------------------------------------------------ */

void ftc_ucx_stats(const ftc_ucx_t *u, ftc_ucx_stats_t *out)
{
    if (out == NULL)
        return;
    if (u == NULL)
        memset(out, 0, sizeof(*out));
    else
        *out = u->stats;
}

int ftc_ucx_peer_info(const ftc_ucx_t *u, uint32_t peer,
                      ftc_ucx_peer_info_t *out)
{
    if (u == NULL || out == NULL || peer >= u->cfg.nranks)
        return FTC_EINVAL;
    const ftc_ucx_peer_t *p = &u->peers[peer];
    memset(out, 0, sizeof(*out));
    out->connected = p->ep != NULL;
    out->reported = p->state == FTC_UCX_PEER_FAILED;
    snprintf(out->transport, sizeof(out->transport), "%s", p->transport);
    snprintf(out->error, sizeof(out->error), "%s", p->error);
    out->detected_ns = p->detected_ns;
    out->reported_ns = p->reported_ns;
    return FTC_OK;
}

int ftc_ucx_peer_reported(const ftc_ucx_t *u, uint32_t peer)
{
    return u != NULL && peer < u->cfg.nranks
           && u->peers[peer].state == FTC_UCX_PEER_FAILED;
}

const char *ftc_ucx_net_devices(const ftc_ucx_t *u)
{
    return u != NULL ? u->net_devices : "";
}

const char *ftc_ucx_version(void)
{
    return ucp_get_version_string();
}
