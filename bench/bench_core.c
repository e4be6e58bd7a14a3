/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_core: what the core costs, measured on the loopback backend.
 *
 *  1. Wall time of one fault-free corrected allreduce (f = 1, 8 bytes) at
 *     n ranks, and the cost per message handled (wall time / messages).
 *     The loopback's own work is included; callgrind_core.sh separates the
 *     core's instructions.
 *  2. Per-process state of one in-flight operation, in heap bytes, for
 *     several n and f, measured with a transport that drops every send (so
 *     in-flight messages do not count): it must grow with f and the tree
 *     degree, not with n.
 *
 *   bench_core [--n N] [--reps R] [--time-only] [--single]
 *   (--single: only the f = 1 allreduce, for callgrind_core.sh)
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int delivered;
static void on_deliver(const ftc_completion_t *c, void *arg)
{
    (void)c;
    (void)arg;
    delivered++;
}

static int start(ftc_group_t *g, ftc_coll_t coll, uint32_t f, int64_t *in,
                 int64_t *out)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.f = f;
    a.dtype = FTC_INT64;
    a.count = 1;
    a.sendbuf = in;
    a.recvbuf = out;
    a.deliver = on_deliver;
    if (coll == FTC_COLL_REDUCE)
        return ftc_init_reduce(g, &a, NULL);
    if (coll == FTC_COLL_BCAST)
        return ftc_init_bcast(g, &a, NULL);
    return ftc_init_allreduce(g, &a, NULL);
}

/* 1. Loopback run: time and messages. */
static void time_run(uint32_t n, uint32_t f, ftc_coll_t coll, int reps)
{
    double best = 1e30, total = 0;
    uint64_t msgs = 0;
    for (int rep = 0; rep < reps; rep++) {
        ftc_lb_config_t lc;
        ftc_lb_config_init(&lc);
        lc.n = n;
        ftc_lb_world_t *w;
        if (ftc_lb_world_create(&lc, &w) != FTC_OK)
            exit(1);
        ftc_context_t **ctx = calloc(n, sizeof(*ctx));
        ftc_group_t **g = calloc(n, sizeof(*g));
        int64_t *in = calloc(n, sizeof(int64_t)), *out = calloc(n, sizeof(int64_t));
        for (uint32_t r = 0; r < n; r++) {
            ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(w, r), NULL,
                               &ctx[r]);
            ftc_lb_attach(w, r, ctx[r]);
            ftc_group_create(ctx[r], 1, 0, n, NULL, &g[r]);
            in[r] = r;
        }
        delivered = 0;
        double t0 = now_s();
        for (uint32_t r = 0; r < n; r++)
            if (start(g[r], coll, f, &in[r], &out[r]) != FTC_OK)
                exit(1);
        ftc_lb_run(w, UINT64_MAX);
        double dt = now_s() - t0;
        msgs = ftc_lb_messages_sent(w);
        if ((uint32_t)delivered != n) {
            fprintf(stderr, "only %d of %u delivered\n", delivered, n);
            exit(1);
        }
        if (dt < best)
            best = dt;
        total += dt;
        for (uint32_t r = 0; r < n; r++)
            ftc_context_destroy(ctx[r]);
        ftc_lb_world_destroy(w);
        free(ctx);
        free(g);
        free(in);
        free(out);
    }
    printf("%-9s  %6u  %2u  %8llu  %10.3f  %10.3f  %9.0f\n", ftc_coll_name(coll),
           n, f, (unsigned long long)msgs, best * 1e3, total / reps * 1e3,
           best * 1e9 / (double)msgs);
}

/* 2. A transport that accepts and drops everything. */
static int null_send(void *tp, uint32_t d, const void *b, size_t l, void *c)
{
    (void)tp; (void)d; (void)b; (void)l; (void)c;
    return FTC_SEND_INLINE;
}
static void null_arm(void *tp, uint64_t d) { (void)tp; (void)d; }
static void null_cancel(void *tp) { (void)tp; }
static uint64_t null_now(void *tp) { (void)tp; return 0; }

static const ftc_transport_ops_t null_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = null_send,
    .timer_arm = null_arm,
    .timer_cancel = null_cancel,
    .now = null_now,
};

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks;
}

static void op_state(uint32_t n, uint32_t f, ftc_coll_t coll)
{
    /* Sample a few ranks: root, a leaf-ish rank, a middle one. */
    const uint32_t sample[] = {0, 1, n / 2, n - 1};
    size_t worst = 0, sum = 0, ctx_bytes = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t r = sample[i];
        size_t h0 = heap_in_use();
        ftc_context_t *ctx;
        ftc_group_t *g;
        ftc_context_create(r, n, &null_ops, NULL, NULL, &ctx);
        ftc_group_create(ctx, 1, 0, n, NULL, &g);
        size_t h1 = heap_in_use();
        int64_t in = 1, out;
        start(g, coll, f, &in, &out);
        size_t h2 = heap_in_use();
        size_t op = h2 - h1;
        ctx_bytes = h1 - h0;
        sum += op;
        if (op > worst)
            worst = op;
        ftc_context_destroy(ctx);
    }
    printf("%-9s  %7u  %2u  %14zu  %12zu  %13zu\n", ftc_coll_name(coll), n, f,
           ctx_bytes, sum / 4, worst);
}

int main(int argc, char **argv)
{
    uint32_t n = 1024;
    int reps = 5;
    bool time_only = false, single = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--time-only") == 0)
            time_only = true;
        else if (strcmp(argv[i], "--single") == 0)
            single = true;
    }
    printf("# ftcoll bench_core: loopback backend (latency 1 us, send cost "
           "100 ns, virtual time), corrected algorithms, checked correction, "
           "8-byte int64 sum, best and mean of %d runs\n", reps);
    printf("%-9s  %6s  %2s  %8s  %10s  %10s  %9s\n", "coll", "n", "f",
           "messages", "best ms", "mean ms", "ns/msg");
    time_run(n, 1, FTC_COLL_ALLREDUCE, reps);
    if (single)
        return 0;
    time_run(n, 0, FTC_COLL_ALLREDUCE, reps);
    time_run(n, 2, FTC_COLL_ALLREDUCE, reps);
    time_run(n, 1, FTC_COLL_REDUCE, reps);
    time_run(n, 1, FTC_COLL_BCAST, reps);
    if (time_only)
        return 0;

    printf("\n# per-process heap bytes of one in-flight operation (transport "
           "drops all sends; sampled at ranks 0, 1, n/2, n-1)\n");
    printf("%-9s  %7s  %2s  %14s  %12s  %13s\n", "coll", "n", "f",
           "context+group", "op mean", "op worst");
    const uint32_t ns[] = {64, 1024, 65536, 1048576};
    const uint32_t fs[] = {0, 1, 2, 4, 8};
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                op_state(ns[i], fs[j], c == 0 ? FTC_COLL_ALLREDUCE : FTC_COLL_REDUCE);
    return 0;
}
