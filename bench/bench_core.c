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
 *  3. --steady: what a real backend's hot path costs, at small n. Ranks
 *     run back-to-back 8-byte allreduces, each starting the next once it
 *     delivered, over an in-process transport shaped like UCX's fast path
 *     (a send copies the bytes and is done, FTC_SEND_INLINE; arrivals are
 *     fed in order, a batch per rank, then the rank's due timer). The
 *     transport itself costs next to nothing, so time and instructions per
 *     message are the core's (callgrind_core.sh --steady counts them).
 *
 *   bench_core [--n N] [--reps R] [--time-only] [--single]
 *   bench_core --steady ALGO:F [--n N] [--iters K] [--phase K]
 *   (--single: only the f = 1 allreduce, for callgrind_core.sh; ALGO:F is
 *   corrected:0, corrected:1, tree:0, ...; --phase: callgrind collects one
 *   phase of every operation, bench/phase_marks.h)
 */
#define _GNU_SOURCE
#include <limits.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "phase_marks.h"
#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"

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

/* 3. Steady state over an inline in-process transport. */
enum { ST_MAX_RANKS = 64, ST_QLEN = 1024, ST_MSG = 512 };

typedef struct st_msg {
    uint32_t src;
    uint32_t len;
    uint8_t buf[ST_MSG];
} st_msg_t;

typedef struct st_rank {
    uint32_t rank;
    struct st_world *w;
    ftc_context_t *ctx;
    ftc_group_t *g;
    st_msg_t q[ST_QLEN];        /* arrivals, a ring */
    uint32_t qhead, qlen;
    bool armed;
    uint64_t deadline;
    bool busy;                  /* an allreduce started, not delivered */
    uint64_t started, delivered;
    int64_t in, out;
} st_rank_t;

typedef struct st_world {
    uint32_t n;
    uint64_t clock;             /* advances one tick per event */
    uint64_t msgs, bytes;
    st_rank_t *r;
} st_world_t;

/* --phase: what callgrind collects of the measured loop. */
static phase_marks_t marks;

static int st_send(void *tp, uint32_t d, const void *b, size_t l, void *c)
{
    st_rank_t *me = tp;
    (void)c;
    st_rank_t *to = &me->w->r[d];
    if (l > ST_MSG || to->qlen == ST_QLEN) {
        fprintf(stderr, "steady: message of %zu bytes or queue full\n", l);
        exit(1);
    }
    st_msg_t *m = &to->q[(to->qhead + to->qlen++) % ST_QLEN];
    m->src = me->rank;
    m->len = (uint32_t)l;
    memcpy(m->buf, b, l);
    if (marks.at == PHASE_START)        /* the operation's first send */
        phase_set(&marks, PHASE_AFTER_SEND);
    me->w->msgs++;
    me->w->bytes += l;
    return FTC_SEND_INLINE;
}
static void st_arm(void *tp, uint64_t d)
{
    st_rank_t *me = tp;
    me->armed = true;
    me->deadline = d;
}
static void st_cancel(void *tp) { ((st_rank_t *)tp)->armed = false; }
static uint64_t st_now(void *tp) { return ((st_rank_t *)tp)->w->clock; }

static const ftc_transport_ops_t st_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = st_send,
    .timer_arm = st_arm,
    .timer_cancel = st_cancel,
    .now = st_now,
};

static void st_deliver(const ftc_completion_t *c, void *arg)
{
    st_rank_t *me = arg;
    if (c->status != FTC_OK || me->out != (int64_t)me->w->n * (me->w->n + 1) / 2) {
        fprintf(stderr, "steady: rank %u: status %d, value %lld\n", me->rank,
                c->status, (long long)me->out);
        exit(1);
    }
    if (marks.at == PHASE_RECEIVE)
        phase_set(&marks, PHASE_RETURN);
    me->busy = false;
    me->delivered++;
}

/* The corrected allreduce's variant under --steady: corrected:F is the
 * reduce + bcast, exchange:F the exchange, butterfly:F the butterfly
 * (docs/corrected.md §5). */
static ftc_allreduce_algo_t steady_allreduce = FTC_ALLREDUCE_REDUCE_BCAST;
/* ftco's per-message timeouts under --steady: ftcot:F is ftco with
 * ack_timeout_ns set (one second: armed and re-armed, never due in the
 * loop's clock), ftco:F without. */
static uint64_t steady_ack_timeout_ns;
/* Whether ftco runs with radix n - 1, as ftcoll-bench makes it: its
 * default radix k is not below n (3 <= n <= k), which its check refuses
 * (a radix of n or more leaves no choice of tree). */
static bool steady_ftco_radix_lowered;
/* --timeout NS: every --steady operation with args.timeout_ns set (the
 * core's operation deadlines; never due in the loop's clock, which
 * counts messages). */
static uint64_t steady_timeout_ns;

static void st_start(st_rank_t *me, ftc_algo_t algo, uint32_t f)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    cp.allreduce = steady_allreduce;
    if (algo == FTC_ALGO_CORRECTED)
        a.params = &cp;
    ftc_ftco_params_t fp;
    if (algo == FTC_ALGO_FTCO
        && (steady_ack_timeout_ns > 0 || steady_ftco_radix_lowered)) {
        /* (Only then: the call is the core's, counted by callgrind.) */
        ftc_ftco_params_init(&fp);
        fp.ack_timeout_ns = steady_ack_timeout_ns;
        if (steady_ftco_radix_lowered)
            fp.tree.k = me->w->n - 1;   /* as ftcoll-bench does */
        a.params = &fp;
    }
    a.algo = algo;
    a.f = f;
    a.timeout_ns = steady_timeout_ns;
    a.dtype = FTC_INT64;
    a.count = 1;
    a.sendbuf = &me->in;
    a.recvbuf = &me->out;
    a.deliver = st_deliver;
    a.deliver_arg = me;
    me->busy = true;
    me->started++;
    int rc = ftc_init_allreduce(me->g, &a, NULL);
    if (rc != FTC_OK) {
        fprintf(stderr, "steady: rank %u: ftc_init_allreduce: %s\n",
                me->rank, ftc_strerror(rc));
        exit(1);
    }
}

/* The measured loop (callgrind_core.sh --steady collects only inside it).
 * Like a backend's progress pass: start what is due, feed the arrivals
 * queued before the pass, then the timer if it is due. */
__attribute__((noinline)) static void steady_loop(st_world_t *w,
                                                  ftc_algo_t algo, uint32_t f,
                                                  uint64_t iters)
{
    for (;;) {
        bool moved = false;
        for (uint32_t i = 0; i < w->n; i++) {
            st_rank_t *me = &w->r[i];
            if (!me->busy && me->started < iters) {
                phase_set(&marks, PHASE_START);
                st_start(me, algo, f);
                phase_set(&marks, PHASE_NONE);
                moved = true;
            }
            for (uint32_t k = me->qlen; k > 0; k--) {
                st_msg_t *m = &me->q[me->qhead];
                w->clock++;
                phase_set(&marks, PHASE_RECEIVE);
                (void)ftc_transport_recv(me->ctx, m->src, m->buf, m->len);
                phase_set(&marks, PHASE_NONE);
                me->qhead = (me->qhead + 1) % ST_QLEN;
                me->qlen--;
                moved = true;
            }
            if (me->armed && me->deadline <= w->clock) {
                me->armed = false;
                w->clock++;
                ftc_transport_timer_fired(me->ctx);
                moved = true;
            }
        }
        if (!moved)
            return;
    }
}

static bool steady_auth;   /* --auth: every message MACed (SipHash-2-4) */
static int steady_phase;   /* --phase K: collect phase K only */

static void steady_run(const char *spec, uint32_t n, uint64_t iters)
{
    char algo_name[32];
    unsigned f;
    ftc_algo_t algo;
    bool exchange = sscanf(spec, "%31[a-z]:%u", algo_name, &f) == 2
                    && strcmp(algo_name, "exchange") == 0;
    if (exchange)
        steady_allreduce = FTC_ALLREDUCE_EXCHANGE;
    bool butterfly = sscanf(spec, "%31[a-z]:%u", algo_name, &f) == 2
                     && strcmp(algo_name, "butterfly") == 0;
    if (butterfly)
        steady_allreduce = FTC_ALLREDUCE_BUTTERFLY;
    bool ftcot = sscanf(spec, "%31[a-z]:%u", algo_name, &f) == 2
                 && strcmp(algo_name, "ftcot") == 0;
    if (ftcot)
        steady_ack_timeout_ns = 1000000000;
    if (sscanf(spec, "%31[a-z]:%u", algo_name, &f) != 2
        || ftc_algo_parse(exchange || butterfly ? "corrected"
                          : ftcot               ? "ftco"
                                                : algo_name,
                          &algo) != FTC_OK
        || n < 1
        || n > ST_MAX_RANKS || f >= n) {
        fprintf(stderr, "--steady ALGO:F with 1 <= n <= %d, f < n\n",
                ST_MAX_RANKS);
        exit(2);
    }
    ftc_ftco_params_t fdef;
    ftc_ftco_params_init(&fdef);
    steady_ftco_radix_lowered = n > 2 && fdef.tree.k >= n;
    st_world_t w = {.n = n, .clock = 1};
    w.r = calloc(n, sizeof(*w.r));
    if (w.r == NULL)
        exit(1);
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.auth = steady_auth;
    for (int i = 0; i < 16; i++)
        cfg.auth_key[i] = (uint8_t)(i * 37 + 11);
    for (uint32_t i = 0; i < n; i++) {
        w.r[i].rank = i;
        w.r[i].w = &w;
        w.r[i].in = i + 1;
        if (ftc_context_create(i, n, &st_ops, &w.r[i], &cfg, &w.r[i].ctx)
                != FTC_OK
            || ftc_group_create(w.r[i].ctx, 1, 0, n, NULL, &w.r[i].g) != FTC_OK)
            exit(1);
    }
    /* Warm up (allocator, caches, lingering operations), then measure. */
    uint64_t warm = iters / 10 + 1;
    steady_loop(&w, algo, f, warm);
    uint64_t m0 = w.msgs;
    double t0 = now_s();
    marks.want = steady_phase;
    steady_loop(&w, algo, f, warm + iters);
    marks.want = PHASE_NONE;
    double dt = now_s() - t0;
    uint64_t msgs = w.msgs - m0;
    for (uint32_t i = 0; i < n; i++)
        if (w.r[i].delivered != warm + iters) {
            fprintf(stderr, "steady: rank %u delivered %llu of %llu\n", i,
                    (unsigned long long)w.r[i].delivered,
                    (unsigned long long)(warm + iters));
            exit(1);
        }
    printf("# steady: %s f=%u, n = %u, %llu back-to-back 8-byte allreduces, "
           "inline in-process transport%s\n", algo_name, f, n,
           (unsigned long long)iters,
           steady_auth ? ", every message authenticated (SipHash-2-4)" : "");
    printf("%-12s %4s %9s %12s %10s %10s\n", "algo", "n", "msgs/op",
           "messages", "ns/op", "ns/msg");
    char label[48];
    snprintf(label, sizeof(label), "%s:%u", algo_name, f);
    printf("%-12s %4u %9.2f %12llu %10.1f %10.1f\n", label, n,
           (double)msgs / (double)iters, (unsigned long long)msgs,
           dt * 1e9 / (double)iters, dt * 1e9 / (double)msgs);
    for (uint32_t i = 0; i < n; i++)
        ftc_context_destroy(w.r[i].ctx);
    free(w.r);
}

static int op_state_table(void);

static void usage(FILE *f)
{
    fputs("usage: bench_core [--n N] [--reps R] [--time-only] [--single]\n"
          "       bench_core --steady ALGO:F [--n N] [--iters K] [--auth] [--timeout NS]\n"
          "                  [--phase K]\n"
          "       bench_core --op-state | -h, --help | -V, --version\n"
          "  --n N          ranks (1024; --steady: 2)\n"
          "  --reps R       runs per figure, best and mean (5)\n"
          "  --time-only    only the timings, not the per-operation state\n"
          "  --single       only the f = 1 allreduce (callgrind_core.sh)\n"
          "  --steady ALGO:F  back-to-back 8-byte allreduces (ALGO exchange, butterfly: the "
          "corrected allreduce's round 0 of that name; ftcot: ftco with its per-message "
          "timeouts), e.g. corrected:1\n"
          "  --iters K      --steady: allreduces measured (100000)\n"
          "  --auth         --steady: with message authentication\n"
          "  --timeout NS   --steady: every operation with this timeout_ns\n"
          "  --phase K      --steady under callgrind --collect-atstart=no: "
          "only phase K\n"
          "                 (1 receive, 2 return, 3 start, 4 after send; "
          "phase_marks.h)\n"
          "  --op-state     only the per-operation heap table\n"
          "Every --opt value may also be written --opt=value.\n",
          f);
}

/* A positive integer at most max for flag, or exit 2 naming the flag. */
static unsigned long parse_positive(const char *flag, const char *v,
                                    unsigned long max)
{
    unsigned long x;
    if (cli_count("bench_core", flag, v, max, &x) != 0)
        exit(2);
    return x;
}

/* Long-only options get distinct values above any character, so that
 * getopt_long refuses a prefix of several ("--s") instead of taking the
 * first. */
enum {
    OPT_N = 256,
    OPT_AUTH,
    OPT_STEADY,
    OPT_ITERS,
    OPT_TIMEOUT,
    OPT_REPS,
    OPT_TIME_ONLY,
    OPT_SINGLE,
    OPT_OP_STATE,
    OPT_PHASE,
};

static const struct option core_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"n", required_argument, NULL, OPT_N},
    {"auth", no_argument, NULL, OPT_AUTH},
    {"steady", required_argument, NULL, OPT_STEADY},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"reps", required_argument, NULL, OPT_REPS},
    {"time-only", no_argument, NULL, OPT_TIME_ONLY},
    {"single", no_argument, NULL, OPT_SINGLE},
    {"op-state", no_argument, NULL, OPT_OP_STATE},
    {"phase", required_argument, NULL, OPT_PHASE},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
    uint32_t n = 1024;
    int reps = 5;
    bool time_only = false, single = false, n_given = false, op_only = false;
    const char *steady = NULL;
    uint64_t iters = 100000;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":hV", core_options, NULL)) != -1) {
        switch (opt) {
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            cli_print_version("bench_core");
            return 0;
        case OPT_N:
            n = (uint32_t)parse_positive("--n", optarg, 1u << 24);
            n_given = true;
            break;
        case OPT_AUTH:
            steady_auth = true;
            break;
        case OPT_STEADY:
            steady = optarg;
            break;
        case OPT_ITERS:
            iters = parse_positive("--iters", optarg, ULONG_MAX);
            break;
        case OPT_TIMEOUT:
            steady_timeout_ns = parse_positive("--timeout", optarg, ULONG_MAX);
            break;
        case OPT_REPS:
            reps = (int)parse_positive("--reps", optarg, 1000000);
            break;
        case OPT_TIME_ONLY:
            time_only = true;
            break;
        case OPT_SINGLE:
            single = true;
            break;
        case OPT_OP_STATE:
            op_only = true;
            break;
        case OPT_PHASE:
            steady_phase = (int)parse_positive("--phase", optarg, PHASE_MAX);
            break;
        default:
            return cli_refuse("bench_core", opt, argv, core_options);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bench_core: unexpected argument '%s' (--help)\n",
                argv[optind]);
        return 2;
    }
    if (steady_phase != PHASE_NONE && (steady == NULL || !BENCH_PHASE_MARKS)) {
        fprintf(stderr, "bench_core: --phase %s\n",
                steady == NULL ? "goes with --steady"
                               : "needs valgrind/callgrind.h, which this "
                                 "build did not have (the valgrind package)");
        return 2;
    }
    if (op_only)
        return op_state_table();
    if (steady != NULL) {
        steady_run(steady, n_given ? n : 2, iters);
        return 0;
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

    /* mallinfo counts blocks in glibc's thread cache as in use, so one
     * that a previous sample freed and this one reuses would not show:
     * measure in a copy of this program that runs without that cache. */
    const char *tun = getenv("GLIBC_TUNABLES");
    if (tun == NULL || strstr(tun, "tcache_count=0") == NULL) {
        fflush(stdout);
        setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
        char *args[] = {argv[0], (char *)"--op-state", NULL};
        execv("/proc/self/exe", args);
        perror("bench_core: execv");
        return 1;
    }
    return op_state_table();
}

static int op_state_table(void)
{
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
