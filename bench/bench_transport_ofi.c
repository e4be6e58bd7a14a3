/* SPDX-License-Identifier: BSD-3-Clause */
/* ftcoll-bench over the libfabric backend (backends/libfabric/ftcoll_ofi.h);
 * the raw comparison is a ping-pong on an FI_EP_RDM endpoint of its own,
 * same provider, polling the CQ: what fi_pingpong measures. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "bench_transport.h"
#include "ftcoll_ofi.h"
#include "ofi_rdm_endpoint.h"
#include "json.h"

typedef struct ofi_bench {
    ftc_ofi_t *z;
    uint32_t n;
    bool quiet;
} ofi_bench_t;

static void on_log(void *arg, const char *msg)
{
    const ofi_bench_t *t = arg;
    if (!t->quiet)
        fprintf(stderr, "ftcoll-ofi: %s\n", msg);
}

static int fb_open(ftc_bootstrap_t *boot, void **out, char *err,
                   size_t errlen)
{
    ofi_bench_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return FTC_ENOMEM;
    t->n = ftc_bootstrap_size(boot);
    ftc_ofi_config_t oc;
    ftc_ofi_config_init(&oc);
    oc.rank = ftc_bootstrap_rank(boot);
    oc.nranks = t->n;
    oc.job_token = ftc_bootstrap_job_token(boot);
    /* Bind loopback only when every rank is on this host. */
    oc.single_host = ftc_bootstrap_single_host(boot);
    oc.log = on_log;
    oc.log_arg = t;
    int rc = ftc_ofi_config_from_env(&oc, err, errlen);
    if (rc == FTC_OK) {
        rc = ftc_ofi_create(&oc, &t->z);
        if (rc != FTC_OK)
            snprintf(err, errlen, "the libfabric backend did not start (%s): "
                     "the line above says why; docs/libfabric.md "
                     "lists the providers",
                     ftc_err_name(rc));
    }
    if (rc == FTC_OK) {
        bench_exchange_begin(1);
        rc = ftc_ofi_exchange(t->z, bench_exchange_allgather, boot);
        if (rc != FTC_OK)
            snprintf(err, errlen, "libfabric address exchange: %s",
                     ftc_bootstrap_error(boot)[0] ? ftc_bootstrap_error(boot)
                                                  : ftc_strerror(rc));
    }
    if (rc != FTC_OK) {
        ftc_ofi_destroy(t->z);
        free(t);
        return rc;
    }
    *out = t;
    return FTC_OK;
}

static void *fb_ops_arg(void *t)
{
    return ((ofi_bench_t *)t)->z;
}

static size_t fb_max_msg(void *t)
{
    return ftc_ofi_max_msg_size(fb_ops_arg(t));
}

static void fb_attach(void *t, ftc_context_t *ctx)
{
    ftc_ofi_attach(((ofi_bench_t *)t)->z, ctx);
}

static int fb_progress(void *t, int timeout_ms)
{
    return ftc_ofi_progress(((ofi_bench_t *)t)->z, timeout_ms);
}

static void fb_drain(void *arg)
{
    /* Sends are copies or injections: nothing of the core's in flight. */
    ((ofi_bench_t *)arg)->quiet = true;
}

static void fb_destroy(void *arg)
{
    ofi_bench_t *t = arg;
    if (t == NULL)
        return;
    ftc_ofi_destroy(t->z);
    free(t);
}

static void fb_describe(void *arg, char *buf, size_t len)
{
    snprintf(buf, len, "libfabric %s", ftc_ofi_describe(((ofi_bench_t *)arg)->z));
}

static void fb_stats_json(void *arg, char *buf, size_t len)
{
    ofi_bench_t *t = arg;
    ftc_ofi_stats_t s;
    ftc_ofi_stats(t->z, &s);
    json_t j;
    json_to_buffer(&j, buf, len);
    json_members_begin(&j);
    json_key(&j, "name");
    json_string(&j, "libfabric");
    json_key(&j, "provider");
    json_string(&j, ftc_ofi_provider(t->z));
    json_key(&j, "stranger");
    json_uint(&j, s.msgs_stranger);
    json_key(&j, "bad_header");
    json_uint(&j, s.msgs_bad_header);
    json_key(&j, "rejected");
    json_uint(&j, s.msgs_rejected);
    json_key(&j, "peers_failed");
    json_uint(&j, s.peers_failed);
    json_key(&j, "cq_errors");
    json_uint(&j, s.cq_errors);
    json_key(&j, "queued");
    json_uint(&j, s.msgs_queued);
    json_key(&j, "reordered");
    json_uint(&j, s.msgs_reordered);
}

static const char *fb_peer_report(void *arg, uint32_t r, uint64_t *t_ns)
{
    ftc_ofi_detect_t d = ftc_ofi_peer_reported(((ofi_bench_t *)arg)->z, r,
                                               t_ns);
    return d == FTC_OFI_DETECT_NONE ? NULL : ftc_ofi_detect_name(d);
}

/* --- Raw libfabric ping-pong -------------------------------------------- */

enum { PP_ADDR_MAX = 256 };

typedef struct raw_ep {
    ofi_rdm_t e;
    uint64_t rx_done, tx_done;
} raw_ep_t;

static bool env_set(const char *name)
{
    const char *s = getenv(name);
    return s != NULL && *s != '\0';
}

/* The provider and address the backend would pick: FTCOLL_OFI_PROVIDER
 * and FTCOLL_OFI_NODE as it reads them, the rest from FI_PROVIDER; and,
 * as the backend does when every rank is on this host, 127.0.0.1 when
 * neither a node nor a provider interface variable says otherwise (for
 * an IP provider: shm's addresses are names). */
static int raw_open(raw_ep_t *r, ftc_bootstrap_t *boot, char *buf,
                    size_t size, char *err, size_t errlen)
{
    const char *prov = getenv("FTCOLL_OFI_PROVIDER");
    const char *node = getenv("FTCOLL_OFI_NODE");
    ofi_rdm_spec_t s = {
        .provider = prov != NULL && *prov != '\0' ? prov : NULL,
        .node = node != NULL && *node != '\0' ? node : NULL,
        .av_count = 2,
        .cq_size = 64,
        .buf = buf,
        .len = size,
        .access = FI_SEND | FI_RECV,
    };
    bool single = env_set("FTCOLL_SINGLE_HOST")
                      ? strcmp(getenv("FTCOLL_SINGLE_HOST"), "1") == 0
                      : ftc_bootstrap_single_host(boot) == 1;
    bool auto_node = s.node == NULL && single && !env_set("FI_TCP_IFACE")
                     && !env_set("FI_NET_IFACE") && !env_set("FI_UDP_IFACE")
                     && !env_set("FI_SOCKETS_IFACE")
                     && !env_set("FI_VERBS_IFACE");
    char why[200];
    if (auto_node) {
        s.node = "127.0.0.1";
        uint32_t fmt = 0;
        if (ofi_rdm_addr_format(&s, &fmt) != 0
            || (fmt != FI_SOCKADDR && fmt != FI_SOCKADDR_IN
                && fmt != FI_SOCKADDR_IN6))
            s.node = NULL;
    }
    int rc = ofi_rdm_open(&r->e, &s, why, sizeof(why));
    if (rc != 0)
        snprintf(err, errlen, "ping-pong: %s", why);
    return rc;
}

static struct fi_context2 rx_ctx, tx_ctx;

/* Reap completions; < 0 on a CQ error. */
static int raw_poll(raw_ep_t *r)
{
    struct fi_cq_entry e[8];
    ssize_t k = fi_cq_read(r->e.cq, e, 8);
    if (k == -FI_EAGAIN)
        return 0;
    if (k < 0)
        return (int)k;
    for (ssize_t i = 0; i < k; i++) {
        if (e[i].op_context == &rx_ctx)
            r->rx_done++;
        else
            r->tx_done++;
    }
    return 0;
}

static int raw_send_to(raw_ep_t *r, const char *buf, size_t size,
                       fi_addr_t dest)
{
    ssize_t rc;
    bool inject = size <= r->e.info->tx_attr->inject_size;
    uint64_t want = r->tx_done + 1;
    do {
        rc = inject ? fi_inject(r->e.ep, buf, size, dest)
                    : fi_send(r->e.ep, buf, size, r->e.desc, dest, &tx_ctx);
        if (rc == -FI_EAGAIN && raw_poll(r) < 0)
            return -FI_EIO;
    } while (rc == -FI_EAGAIN);
    if (rc != 0 || inject)
        return (int)rc;
    while (r->tx_done < want)
        if (raw_poll(r) < 0)
            return -FI_EIO;
    return 0;
}

static int fb_pingpong(ftc_bootstrap_t *boot, size_t size, uint64_t warmup,
                       uint64_t iters, uint64_t *lat_ns, char *title,
                       size_t title_len, char *err, size_t errlen)
{
    uint32_t rank = ftc_bootstrap_rank(boot), n = ftc_bootstrap_size(boot);
    raw_ep_t r;
    memset(&r, 0, sizeof(r));
    char mine[PP_ADDR_MAX];
    char *all = calloc(n, PP_ADDR_MAX);
    /* Send and receive halves of one registered buffer. */
    char *buf = calloc(2, size);
    int rc = FTC_ETRANSPORT;
    memset(mine, 0, sizeof(mine));
    if (all == NULL || buf == NULL) {
        snprintf(err, errlen, "out of memory");
        free(all);
        free(buf);
        return FTC_ENOMEM;
    }
    int frc = rank <= 1 ? raw_open(&r, boot, buf, 2 * size, err, errlen) : 0;
    size_t alen = sizeof(mine) - sizeof(size_t);
    if (frc == 0 && rank <= 1) {
        frc = fi_getname(&r.e.ep->fid, mine + sizeof(size_t), &alen);
        memcpy(mine, &alen, sizeof(alen));
        if (frc != 0)
            snprintf(err, errlen, "ping-pong: fi_getname: %s",
                     fi_strerror(-frc));
        snprintf(title, title_len, "raw libfabric ping-pong (%s, FI_EP_RDM, "
                 "inject up to %zu bytes, CQ polled)",
                 r.e.info->fabric_attr->prov_name,
                 r.e.info->tx_attr->inject_size);
    }
    /* Everyone takes part in the swap, even a rank whose set-up failed,
     * so that nobody waits for it. */
    if (ftc_bootstrap_allgather(boot, mine, PP_ADDR_MAX, all) != 0) {
        snprintf(err, errlen, "%s", ftc_bootstrap_error(boot));
        goto out;
    }
    if (frc != 0)
        goto out;
    if (rank <= 1) {
        /* Both insert rank 0 then rank 1: fi_addr_t 0 and 1. */
        for (uint32_t k = 0; k < 2; k++) {
            const char *a = all + (size_t)k * PP_ADDR_MAX;
            if (fi_av_insert(r.e.av, a + sizeof(size_t), 1, NULL, 0, NULL)
                != 1) {
                snprintf(err, errlen, "ping-pong: fi_av_insert failed");
                goto out;
            }
        }
        char *sbuf = buf, *rbuf = buf + size;
        for (uint64_t i = 0; i < warmup + iters; i++) {
            uint64_t t0 = bench_now_ns();
            uint64_t want = r.rx_done + 1;
            ssize_t prc;
            while ((prc = fi_recv(r.e.ep, rbuf, size, r.e.desc, FI_ADDR_UNSPEC,
                                  &rx_ctx)) == -FI_EAGAIN)
                raw_poll(&r);
            if (prc != 0) {
                snprintf(err, errlen, "ping-pong: fi_recv: %s",
                         fi_strerror((int)-prc));
                goto out;
            }
            int src = 1 - (int)rank;
            if (rank == 0 && raw_send_to(&r, sbuf, size, (fi_addr_t)src) != 0)
                goto send_failed;
            while (r.rx_done < want)
                if (raw_poll(&r) < 0)
                    goto send_failed;
            if (rank == 1 && raw_send_to(&r, sbuf, size, (fi_addr_t)src) != 0)
                goto send_failed;
            if (i >= warmup && rank == 0)
                lat_ns[i - warmup] = (bench_now_ns() - t0) / 2;
        }
    }
    rc = FTC_OK;
    goto out;
send_failed:
    snprintf(err, errlen, "ping-pong: the transfer failed");
out:
    ofi_rdm_close(&r.e);
    free(all);
    free(buf);
    return rc;
}

const bench_backend_t bench_backend_ofi = {
    .name = "libfabric",
    .open = fb_open,
    .ops = ftc_ofi_ops,
    .ops_arg = fb_ops_arg,
    .max_msg = fb_max_msg,
    .attach = fb_attach,
    .progress = fb_progress,
    .drain = fb_drain,
    .destroy = fb_destroy,
    .describe = fb_describe,
    .stats_json = fb_stats_json,
    .peer_report = fb_peer_report,
    .pingpong = fb_pingpong,
};
