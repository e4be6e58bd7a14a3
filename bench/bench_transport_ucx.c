/* SPDX-License-Identifier: BSD-3-Clause */
/* ftcoll-bench over the UCX backend (backends/ucx/ftcoll_ucx.h); the raw
 * comparison is a UCP active-message ping-pong on a worker of its own,
 * with the same UCX_* settings and error-handling mode as the backend. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "bench_transport.h"
#include "ftcoll_ucx.h"
#include "json.h"

/* The backend's network devices, for the raw ping-pong (which runs
 * after the backend was opened) to use the same ones. */
static char g_net_devices[256];

typedef struct ucx_bench {
    ftc_ucx_t *u;
    uint32_t n, rank;
    bool quiet;
    ftc_ucx_peer_info_t pi;     /* the last peer_report's answer */
} ucx_bench_t;

static void on_log(void *arg, const char *msg)
{
    const ucx_bench_t *t = arg;
    if (!t->quiet)
        fprintf(stderr, "ftcoll-ucx: %s\n", msg);
}

static int ub_open(ftc_bootstrap_t *boot, void **out, char *err,
                   size_t errlen)
{
    ucx_bench_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return FTC_ENOMEM;
    t->n = ftc_bootstrap_size(boot);
    t->rank = ftc_bootstrap_rank(boot);
    ftc_ucx_config_t uc;
    ftc_ucx_config_init(&uc);
    uc.rank = t->rank;
    uc.nranks = t->n;
    uc.job_token = ftc_bootstrap_job_token(boot);
    /* Listen on loopback only when every rank is on this host. */
    uc.single_host = ftc_bootstrap_single_host(boot);
    uc.log = on_log;
    uc.log_arg = t;
    int rc = ftc_ucx_config_from_env(&uc, err, errlen);
    if (rc == FTC_OK) {
        rc = ftc_ucx_create(&uc, &t->u);
        if (rc != FTC_OK)
            snprintf(err, errlen, "the UCX backend did not start (%s): "
                     "the line above says why; docs/ucx.md lists "
                     "the settings per transport",
                     ftc_err_name(rc));
    }
    if (rc == FTC_OK) {
        snprintf(g_net_devices, sizeof(g_net_devices), "%s",
                 ftc_ucx_net_devices(t->u));
        bench_exchange_begin(2);
        rc = ftc_ucx_exchange(t->u, bench_exchange_allgather, boot);
        if (rc != FTC_OK)
            snprintf(err, errlen, "UCX address exchange: %s",
                     ftc_bootstrap_error(boot)[0] ? ftc_bootstrap_error(boot)
                                                  : ftc_strerror(rc));
    }
    if (rc != FTC_OK) {
        ftc_ucx_destroy(t->u);
        free(t);
        return rc;
    }
    *out = t;
    return FTC_OK;
}

static void *ub_ops_arg(void *t)
{
    return ((ucx_bench_t *)t)->u;
}

static void ub_attach(void *t, ftc_context_t *ctx)
{
    ftc_ucx_attach(((ucx_bench_t *)t)->u, ctx);
}

static int ub_progress(void *t, int timeout_ms)
{
    return ftc_ucx_progress(((ucx_bench_t *)t)->u, timeout_ms);
}

static void ub_drain(void *arg)
{
    ucx_bench_t *t = arg;
    t->quiet = true;
    ftc_ucx_flush(t->u, 1000);
}

static void ub_destroy(void *arg)
{
    ucx_bench_t *t = arg;
    if (t == NULL)
        return;
    ftc_ucx_destroy(t->u);
    free(t);
}

/* The transport UCX chose for the first peer it connected to. */
static void ub_describe(void *arg, char *buf, size_t len)
{
    ucx_bench_t *t = arg;
    const char *tl = "";
    ftc_ucx_peer_info_t pi;
    for (uint32_t r = 0; r < t->n && *tl == '\0'; r++)
        if (r != t->rank && ftc_ucx_peer_info(t->u, r, &pi) == FTC_OK
            && pi.transport[0] != '\0')
            tl = pi.transport;
    snprintf(buf, len, "ucx %s %s", ftc_ucx_version(), *tl ? tl : "-");
}

static void ub_stats_json(void *arg, char *buf, size_t len)
{
    ucx_bench_t *t = arg;
    ftc_ucx_stats_t s;
    ftc_ucx_stats(t->u, &s);
    char tl[96];
    ub_describe(t, tl, sizeof(tl));
    json_t j;
    json_to_buffer(&j, buf, len);
    json_members_begin(&j);
    json_key(&j, "name");
    json_string(&j, "ucx");
    json_key(&j, "lane");
    json_string(&j, tl);
    json_key(&j, "stranger");
    json_uint(&j, s.msgs_stranger);
    json_key(&j, "rejected");
    json_uint(&j, s.msgs_rejected);
    json_key(&j, "peers_failed");
    json_uint(&j, s.peers_failed);
    json_key(&j, "ep_errors");
    json_uint(&j, s.ep_errors);
    json_key(&j, "send_errors");
    json_uint(&j, s.send_errors);
    json_key(&j, "deferred");
    json_uint(&j, s.sends_deferred);
}

static const char *ub_peer_report(void *arg, uint32_t r, uint64_t *t_ns)
{
    ucx_bench_t *t = arg;
    if (ftc_ucx_peer_info(t->u, r, &t->pi) != FTC_OK || !t->pi.reported)
        return NULL;
    *t_ns = t->pi.detected_ns;
    return t->pi.error;
}

/* --- Raw UCP active-message ping-pong ----------------------------------- */

enum { PP_AM_ID = 7, PP_ADDR_PAD = 4096 };

static uint64_t pp_got;

static ucs_status_t pp_recv(void *arg, const void *header, size_t hlen,
                            void *data, size_t len,
                            const ucp_am_recv_param_t *param)
{
    (void)arg; (void)header; (void)hlen; (void)data; (void)len; (void)param;
    pp_got++;
    return UCS_OK;
}

static void pp_err(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    (void)arg; (void)ep; (void)st;
}

static ucs_status_t pp_wait(ucp_worker_h w, ucs_status_ptr_t sp)
{
    if (sp == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(sp))
        return UCS_PTR_STATUS(sp);
    ucs_status_t st;
    while ((st = ucp_request_check_status(sp)) == UCS_INPROGRESS)
        ucp_worker_progress(w);
    ucp_request_free(sp);
    return st;
}

static int ub_pingpong(ftc_bootstrap_t *boot, size_t size, uint64_t warmup,
                       uint64_t iters, uint64_t *lat_ns, char *title,
                       size_t title_len, char *err, size_t errlen)
{
    uint32_t rank = ftc_bootstrap_rank(boot), n = ftc_bootstrap_size(boot);
    ucp_context_h ucp = NULL;
    ucp_worker_h w = NULL;
    ucp_ep_h ep = NULL;
    ucp_address_t *addr = NULL;
    size_t alen = 0;
    unsigned char *mine = calloc(1, PP_ADDR_PAD);
    unsigned char *all = calloc(n, PP_ADDR_PAD);
    char *buf = calloc(1, size);
    int rc = FTC_ETRANSPORT;
    snprintf(title, title_len, "raw UCP active-message ping-pong (same "
             "UCX_* settings, UCP_ERR_HANDLING_MODE_PEER)");
    if (mine == NULL || all == NULL || buf == NULL) {
        rc = FTC_ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }

    ucp_params_t pp;
    memset(&pp, 0, sizeof(pp));
    pp.field_mask = UCP_PARAM_FIELD_FEATURES;
    pp.features = UCP_FEATURE_AM;
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st == UCS_OK) {
        if (g_net_devices[0] != '\0')
            st = ucp_config_modify(config, "NET_DEVICES", g_net_devices);
        if (st == UCS_OK)
            st = ucp_init(&pp, config, &ucp);
        ucp_config_release(config);
    }
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (st == UCS_OK)
        st = ucp_worker_create(ucp, &wp, &w);
    if (st == UCS_OK)
        st = ucp_worker_get_address(w, &addr, &alen);
    if (st != UCS_OK || alen > PP_ADDR_PAD - sizeof(alen)) {
        snprintf(err, errlen, "ping-pong: UCX set-up: %s",
                 ucs_status_string(st));
        goto out;
    }
    memcpy(mine, &alen, sizeof(alen));
    memcpy(mine + sizeof(alen), addr, alen);
    if (ftc_bootstrap_allgather(boot, mine, PP_ADDR_PAD, all) != 0) {
        snprintf(err, errlen, "%s", ftc_bootstrap_error(boot));
        goto out;
    }
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID
                    | UCP_AM_HANDLER_PARAM_FIELD_CB
                    | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = PP_AM_ID;
    hp.cb = pp_recv;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    if (ucp_worker_set_am_recv_handler(w, &hp) != UCS_OK) {
        snprintf(err, errlen, "ping-pong: no AM handler");
        goto out;
    }
    if (rank <= 1) {
        ucp_ep_params_t ep_params;
        memset(&ep_params, 0, sizeof(ep_params));
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                               | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                               | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep_params.address = (const ucp_address_t *)(
            all + (size_t)(1 - rank) * PP_ADDR_PAD + sizeof(alen));
        ep_params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep_params.err_handler.cb = pp_err;
        st = ucp_ep_create(w, &ep_params, &ep);
        if (st != UCS_OK) {
            snprintf(err, errlen, "ping-pong: endpoint: %s",
                     ucs_status_string(st));
            goto out;
        }
        ucp_request_param_t rp;
        memset(&rp, 0, sizeof(rp));
        rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        rp.flags = UCP_AM_SEND_FLAG_EAGER;
        pp_got = 0;
        for (uint64_t i = 0; i < warmup + iters; i++) {
            uint64_t t0 = bench_now_ns();
            if (rank == 1)
                while (pp_got <= i)
                    ucp_worker_progress(w);
            st = pp_wait(w, ucp_am_send_nbx(ep, PP_AM_ID, NULL, 0, buf,
                                            size, &rp));
            if (rank == 0)
                while (pp_got <= i && st == UCS_OK)
                    ucp_worker_progress(w);
            if (st != UCS_OK) {
                snprintf(err, errlen, "ping-pong: send: %s",
                         ucs_status_string(st));
                goto out;
            }
            if (i >= warmup)
                lat_ns[i - warmup] = (bench_now_ns() - t0) / 2;
        }
        /* Let the last reply leave before the endpoint closes. */
        uint64_t end = bench_now_ns() + 20000000u;
        while (bench_now_ns() < end)
            ucp_worker_progress(w);
    }
    rc = FTC_OK;
out:
    if (ep != NULL) {
        ucp_request_param_t cp;
        memset(&cp, 0, sizeof(cp));
        cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        cp.flags = UCP_EP_CLOSE_FLAG_FORCE;
        pp_wait(w, ucp_ep_close_nbx(ep, &cp));
    }
    if (addr != NULL)
        ucp_worker_release_address(w, addr);
    if (w != NULL)
        ucp_worker_destroy(w);
    if (ucp != NULL)
        ucp_cleanup(ucp);
    free(mine);
    free(all);
    free(buf);
    return rc;
}

const bench_backend_t bench_backend_ucx = {
    .name = "ucx",
    .open = ub_open,
    .ops = ftc_ucx_ops,
    .ops_arg = ub_ops_arg,
    .attach = ub_attach,
    .progress = ub_progress,
    .drain = ub_drain,
    .destroy = ub_destroy,
    .describe = ub_describe,
    .stats_json = ub_stats_json,
    .peer_report = ub_peer_report,
    .pingpong = ub_pingpong,
};
