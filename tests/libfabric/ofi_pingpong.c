/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_pingpong: the libfabric backend alone, against a stand-in for the
 * core (tests/support/core_double.h defines the ftc_transport_* entry
 * points, so no libftcoll is linked). Two ranks, started like ofi_rank:
 *
 *   ofi_pingpong --pingpong K   8-byte messages back and forth K times:
 *                               the backend's own latency, to set beside
 *                               fi_pingpong and the collectives
 *   ofi_pingpong --order M      rank 0 sends M messages of 8 bytes to
 *                               max_msg_size in one burst (queues,
 *                               -FI_EAGAIN, every send path); rank 1
 *                               checks order, length, bytes and source
 *
 * Output lines start with "@<rank> " as ofi_rank's do.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_bootstrap.h"
#include "ftcoll_ofi.h"
#include "core_double.h"

/* --- The stand-in core (tests/support/core_double.h) -------------------- */

/* --order: what rank 1 checks of every message the backend hands it. */
typedef struct order_check {
    uint64_t next_seq;          /* the next sequence expected */
    uint64_t bad;
    char first_bad[256];
    bool on;
    size_t max;
} order_check_t;

static ftc_context_t g_ctx;
static order_check_t g_order;

/* Message i of --order: its length and byte j. */
static size_t order_len(uint64_t i, size_t max)
{
    static const size_t lens[] = {8, 64, 200, 300, 1000, 1100, 5000, 0};
    size_t l = lens[i % 8];
    if (l == 0)
        l = max - (size_t)(i % 97);
    return l < 8 ? 8 : l;
}

static unsigned char order_byte(uint64_t i, size_t j)
{
    return (unsigned char)(i * 131 + j * 7);
}

static void order_on_recv(ftc_context_t *ctx, uint32_t src, const void *buf,
                          size_t len)
{
    if (!g_order.on || len < 8)
        return;
    uint64_t seq;
    memcpy(&seq, buf, 8);
    const unsigned char *b = buf;
    bool ok = seq == g_order.next_seq && len == order_len(seq, g_order.max)
              && (src == 0 || src == FTC_RANK_UNKNOWN);
    for (size_t j = 8; ok && j < len; j++)
        ok = b[j] == order_byte(seq, j);
    if (!ok && g_order.bad++ == 0)
        snprintf(g_order.first_bad, sizeof(g_order.first_bad),
                 "message %" PRIu64 " (expected %" PRIu64 "), %zu bytes, "
                 "source %u", seq, g_order.next_seq, len, src);
    g_order.next_seq = seq + 1;
}

/* --- The program --------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_log(void *arg, const char *msg)
{
    (void)arg;
    fprintf(stderr, "%s\n", msg);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Progress until g_ctx.recvs reaches want, or 20 s pass. */
static bool wait_recv(ftc_ofi_t *z, uint64_t want, bool spin)
{
    uint64_t end = now_ns() + 20000000000u;
    while (g_ctx.recvs < want) {
        if (now_ns() > end)
            return false;
        (void)ftc_ofi_progress(z, spin ? 0 : 5);
    }
    return true;
}

static int do_send(ftc_ofi_t *z, uint32_t dest, const void *buf, size_t len)
{
    int rc = ftc_ofi_ops()->send(z, dest, buf, len, NULL);
    return rc == FTC_SEND_INLINE || rc == FTC_OK ? 0 : rc;
}

static int pingpong(ftc_ofi_t *z, uint32_t rank, int iters)
{
    int warm = iters / 10 + 10;
    uint64_t *lat = calloc((size_t)iters, sizeof(uint64_t));
    if (lat == NULL)
        return 1;
    char msg[8] = "ping!!!";
    uint64_t t0 = 0;
    for (int i = -warm; i < iters; i++) {
        uint64_t start = now_ns();
        if (i == 0)
            t0 = start;
        if (rank == 0) {
            if (do_send(z, 1, msg, 8) != 0
                || !wait_recv(z, g_ctx.recvs + 1, true))
                return 1;
        } else {
            if (!wait_recv(z, g_ctx.recvs + 1, true)
                || do_send(z, 0, msg, 8) != 0)
                return 1;
        }
        if (i >= 0)
            lat[i] = now_ns() - start;
    }
    double total = (double)(now_ns() - t0);
    qsort(lat, (size_t)iters, sizeof(uint64_t), cmp_u64);
    if (rank == 0)
        printf("@0 PINGPONG 8 B: median one-way %.2f us (round trip / 2; "
               "mean %.2f us), %d iterations\n",
               (double)lat[iters / 2] / 2000.0, total / iters / 2000.0, iters);
    free(lat);
    /* Let rank 1's last send complete before we go. */
    uint64_t end = now_ns() + 50000000u;
    while (now_ns() < end)
        (void)ftc_ofi_progress(z, 1);
    return 0;
}

static int order(ftc_ofi_t *z, uint32_t rank, uint64_t m)
{
    g_order.on = true;
    g_order.max = ftc_ofi_max_msg_size(z);
    if (rank == 0) {
        unsigned char *buf = malloc(g_order.max);
        if (buf == NULL)
            return 1;
        for (uint64_t i = 0; i < m; i++) {
            size_t len = order_len(i, g_order.max);
            memcpy(buf, &i, 8);
            for (size_t j = 8; j < len; j++)
                buf[j] = order_byte(i, j);
            int rc = do_send(z, 1, buf, len);
            if (rc != 0) {
                printf("@0 FAIL send %" PRIu64 ": error %d\n", i, rc);
                free(buf);
                return 1;
            }
            /* Now and then only: let the queues grow. */
            if (i % 512 == 511)
                (void)ftc_ofi_progress(z, 0);
        }
        free(buf);
        g_order.on = false;
        /* Until rank 1 says it has them all. */
        bool ok = wait_recv(z, 1, false);
        ftc_ofi_stats_t st;
        ftc_ofi_stats(z, &st);
        printf("@0 ORDER sent=%" PRIu64 " queued=%" PRIu64 " eagain=%" PRIu64
               " maxq=%" PRIu64 " inject=%" PRIu64 " copied=%" PRIu64
               " zcopy=%" PRIu64 " %s\n",
               st.msgs_sent, st.msgs_queued, st.eagain, st.max_queue_depth,
               st.msgs_injected, st.msgs_copied, st.msgs_zcopy,
               ok ? "acknowledged" : "NO ACK");
        return ok ? 0 : 1;
    }
    bool ok = wait_recv(z, m, false);
    ftc_ofi_stats_t st;
    ftc_ofi_stats(z, &st);
    printf("@1 ORDER received=%" PRIu64 " of %" PRIu64 " bad=%" PRIu64
           " reordered_by_backend=%" PRIu64 " %s%s\n", g_ctx.recvs, m,
           g_order.bad, st.msgs_reordered, g_order.bad ? "first: " : "",
           g_order.first_bad);
    char done[8] = "done";
    g_order.on = false;
    (void)do_send(z, 0, done, 8);
    uint64_t end = now_ns() + 100000000u;
    while (now_ns() < end)
        (void)ftc_ofi_progress(z, 1);
    return ok && g_order.bad == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "--pingpong") != 0
                      && strcmp(argv[1], "--order") != 0)) {
        fprintf(stderr, "usage: %s --pingpong K | --order M\n", argv[0]);
        return 2;
    }
    long k = atol(argv[2]);
    char err[256] = "";
    ftc_bootstrap_t *boot;
    if (ftc_bootstrap_open(&boot, err, sizeof(err)) != FTC_OK) {
        fprintf(stderr, "bootstrap: %s\n", err);
        return 1;
    }
    uint32_t rank = ftc_bootstrap_rank(boot);
    if (ftc_bootstrap_size(boot) != 2) {
        fprintf(stderr, "run with 2 ranks\n");
        return 2;
    }
    ftc_ofi_config_t oc;
    ftc_ofi_config_init(&oc);
    oc.rank = rank;
    oc.nranks = 2;
    oc.job_token = ftc_bootstrap_job_token(boot);
    oc.log = on_log;
    if (ftc_ofi_config_from_env(&oc, err, sizeof(err)) != FTC_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    ftc_ofi_t *z = NULL;
    int rc = ftc_ofi_create(&oc, &z);
    if (rc == FTC_OK)
        rc = ftc_ofi_exchange(z, ftc_bootstrap_allgather, boot);
    if (rc != FTC_OK) {
        fprintf(stderr, "rank %u: set-up failed (%d)\n", rank, rc);
        ftc_ofi_destroy(z);
        return 1;
    }
    core_double_init(&g_ctx, rank, NULL);
    g_ctx.on_recv = order_on_recv;
    /* Any non-NULL context: the stand-in ignores it. */
    ftc_ofi_attach(z, &g_ctx);
    printf("@%u INFO %s\n", rank, ftc_ofi_describe(z));
    rc = strcmp(argv[1], "--pingpong") == 0 ? pingpong(z, rank, (int)k)
                                            : order(z, rank, (uint64_t)k);
    printf("@%u DONE ok=%d fail=%d\n", rank, rc == 0, rc != 0);
    fflush(stdout);
    ftc_ofi_destroy(z);
    ftc_bootstrap_close(boot);
    return rc;
}
