/* SPDX-License-Identifier: BSD-3-Clause */
/* ftcoll-bench over the ZeroMQ backend (backends/zmq/ftcoll_zmq.h); the
 * raw comparison is a ZeroMQ PAIR socket over TCP. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "bench_transport.h"
#include "ftcoll_zmq.h"
#include "json.h"

typedef struct zmq_bench {
    ftc_zmq_t *z;
    uint32_t n;
    bool quiet;     /* the end: a peer's exit is no news */
    ftc_zmq_peer_info_t pi;     /* the last peer_report's answer */
} zmq_bench_t;

static void on_log(void *arg, const char *msg)
{
    const zmq_bench_t *t = arg;
    if (!t->quiet)
        fprintf(stderr, "ftcoll-zmq: %s\n", msg);
}

static int zb_open(ftc_bootstrap_t *boot, void **out, char *err,
                   size_t errlen)
{
    zmq_bench_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return FTC_ENOMEM;
    t->n = ftc_bootstrap_size(boot);
    ftc_zmq_config_t zc;
    ftc_zmq_config_init(&zc);
    zc.rank = ftc_bootstrap_rank(boot);
    zc.nranks = t->n;
    zc.job_token = ftc_bootstrap_job_token(boot);
    zc.single_host = ftc_bootstrap_single_host(boot);
    zc.log = on_log;
    zc.log_arg = t;
    int rc = ftc_zmq_config_from_env(&zc, err, errlen);
    if (rc == FTC_OK) {
        rc = ftc_zmq_create(&zc, &t->z);
        if (rc != FTC_OK)
            snprintf(err, errlen, "ZeroMQ backend: %s", ftc_strerror(rc));
    }
    if (rc == FTC_OK) {
        bench_exchange_begin(1);
        rc = ftc_zmq_exchange(t->z, bench_exchange_allgather, boot);
        if (rc != FTC_OK)
            snprintf(err, errlen, "%s", ftc_bootstrap_error(boot)[0]
                                            ? ftc_bootstrap_error(boot)
                                            : ftc_strerror(rc));
    }
    if (rc != FTC_OK) {
        ftc_zmq_destroy(t->z);
        free(t);
        return rc;
    }
    *out = t;
    return FTC_OK;
}

static void *zb_ops_arg(void *t)
{
    return ((zmq_bench_t *)t)->z;
}

static size_t zb_max_msg(void *t)
{
    return ftc_zmq_max_message(zb_ops_arg(t));
}

static void zb_attach(void *t, ftc_context_t *ctx)
{
    ftc_zmq_attach(((zmq_bench_t *)t)->z, ctx);
}

static int zb_progress(void *t, int timeout_ms)
{
    return ftc_zmq_progress(((zmq_bench_t *)t)->z, timeout_ms);
}

static void zb_drain(void *arg)
{
    /* ftc_zmq_destroy lingers for queued messages itself. */
    ((zmq_bench_t *)arg)->quiet = true;
}

static void zb_destroy(void *arg)
{
    zmq_bench_t *t = arg;
    if (t == NULL)
        return;
    ftc_zmq_destroy(t->z);
    free(t);
}

static void zb_describe(void *arg, char *buf, size_t len)
{
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    snprintf(buf, len, "zmq %d.%d.%d %s", major, minor, patch,
             ftc_zmq_endpoint_address(((zmq_bench_t *)arg)->z));
}

static void zb_stats_json(void *arg, char *buf, size_t len)
{
    zmq_bench_t *t = arg;
    ftc_zmq_stats_t s;
    ftc_zmq_stats(t->z, &s);
    json_t j;
    json_to_buffer(&j, buf, len);
    json_members_begin(&j);
    json_key(&j, "name");
    json_string(&j, "zmq");
    json_key(&j, "stranger");
    json_uint(&j, s.msgs_stranger);
    json_key(&j, "rejected");
    json_uint(&j, s.msgs_rejected);
    json_key(&j, "peers_failed");
    json_uint(&j, s.peers_failed);
    json_key(&j, "disconnects");
    json_uint(&j, s.disconnects);
    json_key(&j, "queued");
    json_uint(&j, s.msgs_queued);
}

static const char *zb_peer_report(void *arg, uint32_t r, uint64_t *t_ns)
{
    zmq_bench_t *t = arg;
    if (ftc_zmq_peer_info(t->z, r, &t->pi) != FTC_OK || !t->pi.reported)
        return NULL;
    *t_ns = t->pi.detected_ns;
    return t->pi.error;
}

static int zb_pingpong(ftc_bootstrap_t *boot, size_t size, uint64_t warmup,
                       uint64_t iters, uint64_t *lat_ns, char *title,
                       size_t title_len, char *err, size_t errlen)
{
    uint32_t rank = ftc_bootstrap_rank(boot), n = ftc_bootstrap_size(boot);
    void *zc = NULL, *s = NULL;
    char addr[FTC_ZMQ_ADDR_MAX];
    int rc = FTC_ETRANSPORT;
    memset(addr, 0, sizeof(addr));
    snprintf(title, title_len, "raw ZeroMQ ping-pong (PAIR over TCP)");
    if (rank <= 1) {
        zc = zmq_ctx_new();
        s = zc != NULL ? zmq_socket(zc, ZMQ_PAIR) : NULL;
        if (s == NULL)
            goto zmq_error;
        int zero = 0;
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
    }
    if (rank == 1) {
        const char *ep = getenv("FTCOLL_ZMQ_BIND");
        size_t alen = sizeof(addr) - 1;
        if (zmq_bind(s, ep != NULL && *ep ? ep : "tcp://127.0.0.1:*") != 0
            || zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, addr, &alen) != 0)
            goto zmq_error;
    }
    char *all = malloc((size_t)n * sizeof(addr));
    if (all == NULL || ftc_bootstrap_allgather(boot, addr, sizeof(addr), all)) {
        free(all);
        snprintf(err, errlen, "%s", ftc_bootstrap_error(boot));
        goto out;
    }
    if (rank == 0 && zmq_connect(s, all + sizeof(addr)) != 0) {
        free(all);
        goto zmq_error;
    }
    free(all);
    char *buf = rank <= 1 ? calloc(1, size) : NULL;
    if (rank <= 1 && buf == NULL) {
        rc = FTC_ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (uint64_t it = 0; rank <= 1 && it < warmup + iters; it++) {
        uint64_t t0 = bench_now_ns();
        int bad = rank == 0
            ? zmq_send(s, buf, size, 0) < 0 || zmq_recv(s, buf, size, 0) < 0
            : zmq_recv(s, buf, size, 0) < 0 || zmq_send(s, buf, size, 0) < 0;
        if (bad) {
            free(buf);
            goto zmq_error;
        }
        if (it >= warmup)
            lat_ns[it - warmup] = (bench_now_ns() - t0) / 2;
    }
    free(buf);
    rc = FTC_OK;
    goto out;
zmq_error:
    snprintf(err, errlen, "ping-pong: %s", zmq_strerror(zmq_errno()));
out:
    if (s != NULL)
        zmq_close(s);
    if (zc != NULL)
        zmq_ctx_term(zc);
    return rc;
}

const bench_backend_t bench_backend_zmq = {
    .name = "zmq",
    .open = zb_open,
    .ops = ftc_zmq_ops,
    .ops_arg = zb_ops_arg,
    .max_msg = zb_max_msg,
    .attach = zb_attach,
    .progress = zb_progress,
    .drain = zb_drain,
    .destroy = zb_destroy,
    .describe = zb_describe,
    .stats_json = zb_stats_json,
    .peer_report = zb_peer_report,
    .pingpong = zb_pingpong,
};
