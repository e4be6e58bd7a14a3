/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_rank: one rank of a libfabric-backend test job, started N times by
 * test_ofi (through ftcoll-run, or forked). The bootstrap comes from the
 * environment (FTCOLL_RANK, ... ), the backend's settings from FTCOLL_OFI_*
 * and FI_PROVIDER.
 *
 *   ofi_rank --mode coll                 reduce, bcast, allreduce (corrected
 *                                        f=0,1 and tree) at several sizes,
 *                                        concurrent ones, self-checked
 *   ofi_rank --mode kill --victim V
 *                                        V SIGKILLs itself during an 8-byte
 *                                        corrected allreduce (f=1), having
 *                                        started it but heard nothing
 *   ofi_rank --mode oversize             a message above max_msg_size
 *
 * Options: --suspect-ms, --probe-ms (the core's keepalive), --linger-ms,
 * --report-listen (once set up, print where this rank listens, as
 * `ss -ltnupH` shows its sockets), --report-memory (at the end, print the
 * GLIBC_TUNABLES this rank was started with and how much of its
 * anonymous memory is in transparent huge pages, from
 * /proc/self/smaps_rollup: rxm's pools, backends/bootstrap/rank_hugepages.h).
 *
 * Every output line starts with "@<rank> " so that the driver can read it
 * with or without ftcoll-run's "[rank] " prefix. Lines the driver reads:
 *   @r INFO pid=<pid> <backend description>
 *   @r LISTEN n=<k> addrs=<a,b,..>  (--report-listen)
 *   @r MEMORY tunables=<GLIBC_TUNABLES|-> thp=<always|madvise|never|->
 *        malloc=<glibc|sanitizer> anon_kb=<k> anon_huge_kb=<k>
 *                                    (--report-memory, one line)
 *   @r FAIL <what>                  a self-check failed
 *   @r KILL t=<ns>                  the victim, just before
 *   @r RES op=<k> status=<name> value=<v> failed=<a,b,..> t=<ns>
 *   @r DETECT how=<path> t=<ns> probes=<n>
 *   @r KNOWN victim=<v> failed=<0|1>  at the end: does it know v failed
 *   @r DONE ok=<k> fail=<m>
 * Exit status 0 when every self-check passed.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_bootstrap.h"
#include "ftcoll_ofi.h"
#include "../listen_sockets.h"

#define MAX_FAILED 64

typedef struct opts {
    const char *mode;
    uint32_t victim;
    bool report_listen;
    bool report_memory;
    int suspect_ms, probe_ms, linger_ms;
} opts_t;

typedef struct job {
    uint32_t rank, n;
    ftc_bootstrap_t *boot;
    ftc_ofi_t *z;
    ftc_context_t *ctx;
    ftc_group_t *grp;
    int ok, fail;
    uint64_t create_ns;         /* ftc_ofi_create: fi_enable, rxm's rx pool */
} job_t;

typedef struct op_state {
    int done;
    int status;
    uint32_t nfailed;
    uint32_t failed[MAX_FAILED];
    uint64_t t_ns;
} op_state_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t g_rank;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void out(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    printf("@%u %s\n", g_rank, line);
    fflush(stdout);
}

static void on_log(void *arg, const char *msg)
{
    (void)arg;
    fprintf(stderr, "%s\n", msg);
}

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    op_state_t *s = arg;
    s->done++;
    s->status = c->status;
    s->t_ns = now_ns();
    s->nfailed = c->nfailed < MAX_FAILED ? c->nfailed : MAX_FAILED;
    for (uint32_t i = 0; i < s->nfailed; i++)
        s->failed[i] = c->failed[i];
}

/* Progress until every op in s[0..k) is delivered or timeout_ms passes. */
static bool wait_all(job_t *j, op_state_t *s, int k, int timeout_ms)
{
    uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        bool all = true;
        for (int i = 0; i < k; i++)
            all = all && s[i].done > 0;
        if (all)
            return true;
        if (now_ns() >= end)
            return false;
        int rc = ftc_ofi_progress(j->z, 5);
        if (rc < 0) {
            out("FAIL progress: %s", ftc_strerror(rc));
            return false;
        }
    }
}

static void linger(job_t *j, int ms)
{
    uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
    while (now_ns() < end)
        (void)ftc_ofi_progress(j->z, 5);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void check(job_t *j, bool cond, const char *fmt, ...)
{
    if (cond) {
        j->ok++;
        return;
    }
    j->fail++;
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    out("FAIL %s", what);
}

/* --- Set-up -------------------------------------------------------------- */

static int setup(job_t *j, const opts_t *o)
{
    char err[512] = "";
    int rc = ftc_bootstrap_open(&j->boot, err, sizeof(err));
    if (rc != FTC_OK) {
        fprintf(stderr, "bootstrap: %s: %s\n", ftc_strerror(rc), err);
        return rc;
    }
    j->rank = g_rank = ftc_bootstrap_rank(j->boot);
    j->n = ftc_bootstrap_size(j->boot);

    ftc_ofi_config_t oc;
    ftc_ofi_config_init(&oc);
    oc.rank = j->rank;
    oc.nranks = j->n;
    oc.job_token = ftc_bootstrap_job_token(j->boot);
    oc.single_host = ftc_bootstrap_single_host(j->boot);
    oc.log = on_log;
    if (ftc_ofi_config_from_env(&oc, err, sizeof(err)) != FTC_OK) {
        fprintf(stderr, "%s\n", err);
        return FTC_EINVAL;
    }
    uint64_t t_create = now_ns();
    rc = ftc_ofi_create(&oc, &j->z);
    j->create_ns = now_ns() - t_create;
    if (rc != FTC_OK) {
        fprintf(stderr, "rank %u: ftc_ofi_create: %s\n", j->rank,
                ftc_strerror(rc));
        return rc;
    }
    out("INFO pid=%d %s", (int)getpid(), ftc_ofi_describe(j->z));
    if (o->report_listen) {
        char addrs[1024];
        int k = ftc_test_listen_addrs((long)getpid(), addrs, sizeof(addrs));
        out("LISTEN n=%d addrs=%s", k, addrs[0] != '\0' ? addrs : "-");
    }
    rc = ftc_ofi_exchange(j->z, ftc_bootstrap_allgather, j->boot);
    if (rc != FTC_OK) {
        fprintf(stderr, "rank %u: exchange: %s (%s)\n", j->rank,
                ftc_strerror(rc), ftc_bootstrap_error(j->boot));
        return rc;
    }
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = oc.job_token;
    cfg.suspect_timeout_ns = (uint64_t)o->suspect_ms * 1000000u;
    cfg.probe_timeout_ns = (uint64_t)o->probe_ms * 1000000u;
    rc = ftc_context_create(j->rank, j->n, ftc_ofi_ops(), j->z, &cfg, &j->ctx);
    if (rc != FTC_OK)
        return rc;
    ftc_ofi_attach(j->z, j->ctx);
    rc = ftc_group_create(j->ctx, 1, 0, j->n, NULL, &j->grp);
    if (rc != FTC_OK)
        return rc;
    /* Nobody starts a collective before every rank can answer: a slow
     * start (this machine takes ~0.5 s to load libfabric) must not look
     * like a failure to the keepalive. */
    char mine = 1, *all = calloc(j->n, 1);
    rc = all != NULL && ftc_bootstrap_allgather(j->boot, &mine, 1, all) == 0
             ? FTC_OK
             : FTC_ETRANSPORT;
    free(all);
    return rc;
}

static void teardown(job_t *j)
{
    if (j->grp != NULL)
        ftc_group_destroy(j->grp);
    ftc_context_destroy(j->ctx);
    ftc_ofi_destroy(j->z);
    ftc_bootstrap_close(j->boot);
}

/* Every live rank has reached this point (the file rendezvous). The
 * rendezvous blocks, so it runs on a thread while this one keeps
 * progressing: a rank that has delivered a collective may still owe the
 * others corrections and probe answers (and shm cannot even connect to a
 * peer that does not progress). A barrier that stops progressing
 * deadlocks until the keepalive declares the waiting ranks failed. */
/* The same, not progressing: for when nothing is in flight, or when the
 * caller must not hear anything meanwhile. */
static void plain_barrier(job_t *j)
{
    char mine = 1;
    char *all = calloc(j->n, 1);
    if (all == NULL || ftc_bootstrap_allgather(j->boot, &mine, 1, all) != 0)
        out("FAIL barrier: %s", ftc_bootstrap_error(j->boot));
    free(all);
}

typedef struct barrier_arg {
    job_t *j;
    atomic_int done;
    int rc;
} barrier_arg_t;

static void *barrier_thread(void *p)
{
    barrier_arg_t *b = p;
    char mine = 1;
    char *all = calloc(b->j->n, 1);
    b->rc = all != NULL ? ftc_bootstrap_allgather(b->j->boot, &mine, 1, all)
                        : FTC_ENOMEM;
    free(all);
    atomic_store(&b->done, 1);
    return NULL;
}

static void barrier(job_t *j)
{
    barrier_arg_t b = {.j = j, .rc = 0};
    atomic_init(&b.done, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, barrier_thread, &b) != 0) {
        out("FAIL barrier: pthread_create");
        return;
    }
    while (!atomic_load(&b.done))
        (void)ftc_ofi_progress(j->z, 1);
    pthread_join(t, NULL);
    if (b.rc != 0)
        out("FAIL barrier: %s", ftc_bootstrap_error(j->boot));
}

/* --- Values -------------------------------------------------------------- */

static int64_t input(uint32_t r, int op, uint64_t i)
{
    return (int64_t)(r + 1) * 1000 + (int64_t)op * 7 + (int64_t)(i % 1000);
}

static void fill(int64_t *v, uint64_t count, uint32_t r, int op)
{
    for (uint64_t i = 0; i < count; i++)
        v[i] = input(r, op, i);
}

/* Sum of the inputs of ranks not in failed[]. */
static int64_t expected_sum(uint32_t n, int op, uint64_t i,
                            const uint32_t *failed, uint32_t nfailed)
{
    int64_t s = 0;
    for (uint32_t r = 0; r < n; r++) {
        bool out_ = false;
        for (uint32_t k = 0; k < nfailed; k++)
            out_ = out_ || failed[k] == r;
        if (!out_)
            s += input(r, op, i);
    }
    return s;
}

static void base_args(ftc_coll_args_t *a, ftc_algo_t algo, uint32_t f,
                      uint64_t count, op_state_t *s)
{
    ftc_coll_args_init(a);
    a->algo = algo;
    a->f = algo == FTC_ALGO_TREE ? 0 : f;
    a->dtype = FTC_INT64;
    a->op = FTC_SUM;
    a->count = count;
    a->deliver = on_deliver;
    a->deliver_arg = s;
    /* The reduce + bcast rounds at every n: these jobs kill the root to
     * see how the backend finds its death, which the exchange that auto
     * picks for n <= 4 may never need (everyone may have every input). */
    static ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    cp.allreduce = FTC_ALLREDUCE_REDUCE_BCAST;
    if (algo == FTC_ALGO_CORRECTED)
        a->params = &cp;
}

/* --- coll ---------------------------------------------------------------- */

static void run_one(job_t *j, ftc_coll_t coll, ftc_algo_t algo, uint32_t f,
                    uint64_t count, uint32_t root, int op)
{
    const char *name = ftc_coll_name(coll);
    int64_t *in = calloc(count ? count : 1, sizeof(int64_t));
    int64_t *res = calloc(count ? count : 1, sizeof(int64_t));
    if (in == NULL || res == NULL) {
        check(j, false, "out of memory");
        free(in);
        free(res);
        return;
    }
    fill(in, count, j->rank, op);
    op_state_t s;
    memset(&s, 0, sizeof(s));
    ftc_coll_args_t a;
    base_args(&a, algo, f, count, &s);
    a.root = root;
    a.sendbuf = in;
    a.recvbuf = res;
    int rc = coll == FTC_COLL_ALLREDUCE ? ftc_init_allreduce(j->grp, &a, NULL)
             : coll == FTC_COLL_REDUCE  ? ftc_init_reduce(j->grp, &a, NULL)
                                        : ftc_init_bcast(j->grp, &a, NULL);
    if (rc != FTC_OK) {
        check(j, false, "%s %s f=%u count=%" PRIu64 ": init: %s", name,
              ftc_algo_name(algo), f, count, ftc_strerror(rc));
        goto out;
    }
    if (!wait_all(j, &s, 1, 10000)) {
        check(j, false, "%s %s f=%u count=%" PRIu64 ": not delivered in 10 s",
              name, ftc_algo_name(algo), f, count);
        goto out;
    }
    check(j, s.status == FTC_OK && s.nfailed == 0,
          "%s %s f=%u count=%" PRIu64 ": status %s, %u failed", name,
          ftc_algo_name(algo), f, count, ftc_err_name(s.status), s.nfailed);
    bool gets = coll != FTC_COLL_REDUCE || j->rank == root;
    if (s.status == FTC_OK && gets) {
        uint64_t bad = count;
        for (uint64_t i = 0; i < count && bad == count; i++) {
            int64_t want = coll == FTC_COLL_BCAST ? input(root, op, i)
                                                  : expected_sum(j->n, op, i,
                                                                 NULL, 0);
            if (res[i] != want)
                bad = i;
        }
        check(j, bad == count, "%s %s f=%u count=%" PRIu64 ": element %" PRIu64
              " wrong", name, ftc_algo_name(algo), f, count, bad);
    }
out:
    free(in);
    free(res);
}

static void run_concurrent(job_t *j, int k, int op0)
{
    enum { K = 16 };
    op_state_t s[K];
    int64_t in[K], res[K];
    memset(s, 0, sizeof(s));
    if (k > K)
        k = K;
    for (int i = 0; i < k; i++) {
        ftc_coll_args_t a;
        base_args(&a, FTC_ALGO_CORRECTED, 1, 1, &s[i]);
        in[i] = input(j->rank, op0 + i, 0);
        a.root = (uint32_t)i % j->n;
        a.sendbuf = &in[i];
        a.recvbuf = &res[i];
        int rc = ftc_init_allreduce(j->grp, &a, NULL);
        if (rc != FTC_OK) {
            check(j, false, "concurrent allreduce %d: init: %s", i,
                  ftc_strerror(rc));
            return;
        }
    }
    if (!wait_all(j, s, k, 10000)) {
        check(j, false, "%d concurrent allreduces: not all delivered in 10 s",
              k);
        return;
    }
    for (int i = 0; i < k; i++)
        check(j, s[i].status == FTC_OK
                     && res[i] == expected_sum(j->n, op0 + i, 0, NULL, 0),
              "concurrent allreduce %d: status %s value %" PRId64, i,
              ftc_err_name(s[i].status), res[i]);
}

static void mode_coll(job_t *j)
{
    const struct {
        ftc_algo_t algo;
        uint32_t f;
    } algos[] = {
        {FTC_ALGO_CORRECTED, 1},
        {FTC_ALGO_CORRECTED, 0},
        {FTC_ALGO_TREE, 0},
    };
    /* 8 bytes (inject), 800 (bounce), 8000 (an owned copy), 56000 (near
     * the 64 KiB default), 0 (header only). */
    const uint64_t counts[] = {1, 100, 1000, 7000, 0};
    size_t max = ftc_ofi_max_msg_size(j->z);
    int op = 0;
    for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
        if (algos[a].f >= j->n)
            continue;
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            if (counts[c] * 8 + 512 > max)
                continue;
            run_one(j, FTC_COLL_ALLREDUCE, algos[a].algo, algos[a].f,
                    counts[c], 0, op++);
            run_one(j, FTC_COLL_REDUCE, algos[a].algo, algos[a].f, counts[c],
                    j->n - 1, op++);
            run_one(j, FTC_COLL_BCAST, algos[a].algo, algos[a].f, counts[c],
                    1 % j->n, op++);
        }
    }
    run_concurrent(j, 16, op);
    op += 16;
    /* A second burst right after: queued sends must keep their order. */
    run_concurrent(j, 16, op);
    barrier(j);
}

/* --- kill / stop --------------------------------------------------------- */

static const char *detect_path(job_t *j, uint32_t victim, uint64_t *when)
{
    ftc_ofi_detect_t d = ftc_ofi_peer_reported(j->z, victim, when);
    if (d != FTC_OFI_DETECT_NONE)
        return ftc_ofi_detect_name(d);
    *when = 0;
    return ftc_context_is_failed(j->ctx, victim) ? "core" : "unknown";
}

static void print_res(job_t *j, int k, const op_state_t *s, int64_t value)
{
    char fl[512] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < s->nfailed && used < sizeof(fl) - 16; i++)
        used += (size_t)snprintf(fl + used, sizeof(fl) - used, "%s%u",
                                 i ? "," : "", s->failed[i]);
    out("RES op=%d status=%s value=%" PRId64 " failed=%s t=%" PRIu64, k,
        ftc_err_name(s->status), value, used ? fl : "-", s->t_ns);
}

/* One allreduce among the survivors whose result nobody reads: whoever
 * delivers it knows every other live rank is done with the checked ones,
 * so leaving cannot make a survivor count this rank as failed while it
 * still needs it (a pause cannot promise that on a busy machine). */
static void farewell(job_t *j)
{
    if (ftc_context_is_excluded(j->ctx))
        return;
    op_state_t s;
    memset(&s, 0, sizeof(s));
    int64_t in = 0, res = 0;
    ftc_coll_args_t a;
    base_args(&a, FTC_ALGO_CORRECTED, 1, 1, &s);
    a.sendbuf = &in;
    a.recvbuf = &res;
    if (ftc_init_allreduce(j->grp, &a, NULL) == FTC_OK)
        (void)wait_all(j, &s, 1, 10000);
}

/* An 8-byte corrected allreduce that the victim leaves by SIGKILL, then
 * one more among the survivors. (Kills later inside an operation, and
 * SIGSTOP, are the conformance suite's: ftcoll-bench --crash, --stop.) */
static void mode_fault(job_t *j, const opts_t *o)
{
    uint32_t v = o->victim % j->n;
    /* Warm up: connections exist, every rank is past its set-up. */
    run_one(j, FTC_COLL_ALLREDUCE, FTC_ALGO_CORRECTED, 1, 1, 0, 100);
    barrier(j);

    op_state_t s;
    memset(&s, 0, sizeof(s));
    int64_t in = input(j->rank, 1, 0), res = 0;
    ftc_coll_args_t a;
    base_args(&a, FTC_ALGO_CORRECTED, 1, 1, &s);
    a.sendbuf = &in;
    a.recvbuf = &res;
    /* The victim starts the allreduce, then waits, without progressing,
     * until every rank is about to start it, and leaves at once: it has
     * started but can have heard nothing. */
    bool early = j->rank == v;
    int rc = FTC_OK;
    if (early)
        rc = ftc_init_allreduce(j->grp, &a, NULL);
    plain_barrier(j);
    if (!early)
        rc = ftc_init_allreduce(j->grp, &a, NULL);
    check(j, rc == FTC_OK, "init_allreduce: %s", ftc_strerror(rc));
    if (rc != FTC_OK)
        return;

    if (j->rank == v) {
        out("KILL t=%" PRIu64 " pid=%d", now_ns(), (int)getpid());
        raise(SIGKILL);
        return;
    }

    bool done = wait_all(j, &s, 1, 10000);
    check(j, done, "allreduce with rank %u gone: not delivered in 10 s", v);
    if (!done)
        return;
    print_res(j, 1, &s, res);
    uint64_t when;
    const char *how = detect_path(j, v, &when);
    ftc_counters_t c;
    ftc_context_counters(j->ctx, &c);
    out("DETECT how=%s t=%" PRIu64 " probes=%" PRIu64, how, when,
        c.probes_sent);
    check(j, s.status == FTC_OK, "allreduce status %s",
          ftc_err_name(s.status));
    check(j, res == expected_sum(j->n, 1, 0, s.failed, s.nfailed),
          "allreduce value %" PRId64 " != sum over non-failed", res);

    /* The survivors again: the failure is known or learned once more. */
    op_state_t s2;
    memset(&s2, 0, sizeof(s2));
    int64_t in2 = input(j->rank, 2, 0), res2 = 0;
    base_args(&a, FTC_ALGO_CORRECTED, 1, 1, &s2);
    a.sendbuf = &in2;
    a.recvbuf = &res2;
    a.root = (v + 1) % j->n;
    rc = ftc_init_allreduce(j->grp, &a, NULL);
    done = rc == FTC_OK && wait_all(j, &s2, 1, 10000);
    check(j, done, "second allreduce: %s", rc == FTC_OK ? "not delivered"
                                                        : ftc_strerror(rc));
    if (done) {
        print_res(j, 2, &s2, res2);
        check(j, s2.status == FTC_OK
                     && res2 == expected_sum(j->n, 2, 0, s2.failed, s2.nfailed),
              "second allreduce: status %s value %" PRId64,
              ftc_err_name(s2.status), res2);
    }
    out("KNOWN victim=%u failed=%d", v, ftc_context_is_failed(j->ctx, v));
    farewell(j);
    /* Answer stragglers' probes for a moment: a courtesy, the farewell
     * is what makes leaving safe. */
    linger(j, o->linger_ms);
}

/* --- oversize ------------------------------------------------------------ */

static void mode_oversize(job_t *j)
{
    uint64_t count = ftc_ofi_max_msg_size(j->z) / 8 + 16;
    int64_t *in = calloc(count, sizeof(int64_t));
    int64_t *res = calloc(count, sizeof(int64_t));
    op_state_t s;
    memset(&s, 0, sizeof(s));
    ftc_coll_args_t a;
    base_args(&a, FTC_ALGO_TREE, 0, count, &s);
    a.sendbuf = in;
    a.recvbuf = res;
    int rc = in != NULL && res != NULL ? ftc_init_allreduce(j->grp, &a, NULL)
                                       : FTC_ENOMEM;
    bool done = rc == FTC_OK && wait_all(j, &s, 1, 5000);
    ftc_ofi_stats_t st;
    ftc_ofi_stats(j->z, &st);
    out("RES op=1 status=%s oversize=%" PRIu64, done ? ftc_err_name(s.status)
                                                     : "-",
        st.msgs_oversize);
    check(j, done, "an oversize allreduce must end, not hang");
    check(j, !done || s.status != FTC_OK, "an oversize allreduce reported "
          "success");
    free(in);
    free(res);
    linger(j, 200);
}

/* --- Memory --------------------------------------------------------------- */

/* A sanitizer's allocator replaces glibc's malloc, and with it the
 * tunables: the report says so, for the driver to know what to expect. */
#if defined(__SANITIZE_ADDRESS__)
#define MALLOC_KIND "sanitizer"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MALLOC_KIND "sanitizer"
#endif
#endif
#ifndef MALLOC_KIND
#define MALLOC_KIND "glibc"
#endif

/* The bracketed word of transparent_hugepage/enabled, or "-". */
static void thp_mode(char *out, size_t len)
{
    snprintf(out, len, "-");
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == NULL)
        return;
    char line[128];
    if (fgets(line, sizeof(line), f) != NULL) {
        char *a = strchr(line, '['), *b = a != NULL ? strchr(a, ']') : NULL;
        if (b != NULL) {
            *b = '\0';
            snprintf(out, len, "%s", a + 1);
        }
    }
    fclose(f);
}

/* A "Name:   <k> kB" line of /proc/self/smaps_rollup, or -1. */
static long rollup_kb(const char *name)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(name);
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, name, n) == 0 && line[n] == ':') {
            kb = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

static void report_memory(void)
{
    const char *t = getenv("GLIBC_TUNABLES");
    char thp[32];
    thp_mode(thp, sizeof(thp));
    out("MEMORY tunables=%s thp=%s malloc=%s anon_kb=%ld anon_huge_kb=%ld",
        t != NULL && *t != '\0' ? t : "-", thp, MALLOC_KIND,
        rollup_kb("Anonymous"), rollup_kb("AnonHugePages"));
}

/* --- main ---------------------------------------------------------------- */

static int parse(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->mode = "coll";
    o->suspect_ms = 100;
    o->probe_ms = 200;
    o->linger_ms = 300;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--report-listen") == 0) {
            o->report_listen = true;
            continue;
        }
        if (strcmp(a, "--report-memory") == 0) {
            o->report_memory = true;
            continue;
        }
        if (v == NULL)
            return -1;
        i++;
        if (strcmp(a, "--mode") == 0)
            o->mode = v;
        else if (strcmp(a, "--victim") == 0)
            o->victim = (uint32_t)atoi(v);
        else if (strcmp(a, "--suspect-ms") == 0)
            o->suspect_ms = atoi(v);
        else if (strcmp(a, "--probe-ms") == 0)
            o->probe_ms = atoi(v);
        else if (strcmp(a, "--linger-ms") == 0)
            o->linger_ms = atoi(v);
        else
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: %s --mode coll|kill|oversize "
                        "[--victim R] "
                        "[--suspect-ms N] [--probe-ms N] [--linger-ms N] "
                        "[--report-listen] [--report-memory]\n",
                argv[0]);
        return 2;
    }
    job_t j;
    memset(&j, 0, sizeof(j));
    if (setup(&j, &o) != FTC_OK) {
        teardown(&j);
        return 1;
    }
    if (strcmp(o.mode, "coll") == 0)
        mode_coll(&j);
    else if (strcmp(o.mode, "kill") == 0)
        mode_fault(&j, &o);
    else if (strcmp(o.mode, "oversize") == 0)
        mode_oversize(&j);
    else
        check(&j, false, "unknown mode %s", o.mode);
    if (o.report_memory)
        report_memory();
    ftc_ofi_stats_t st;
    ftc_ofi_stats(j.z, &st);
    out("STATS sent=%" PRIu64 " recv=%" PRIu64 " inject=%" PRIu64
        " copied=%" PRIu64 " zcopy=%" PRIu64 " queued=%" PRIu64
        " eagain=%" PRIu64 " cq_errors=%" PRIu64 " reported=%" PRIu64
        " rejected=%" PRIu64 " reordered=%" PRIu64 " bad_header=%" PRIu64
        " unknown_src=%" PRIu64 " maxq=%" PRIu64 " create_ns=%" PRIu64
        " connect_ns=%" PRIu64,
        st.msgs_sent, st.msgs_received, st.msgs_injected, st.msgs_copied,
        st.msgs_zcopy, st.msgs_queued, st.eagain, st.cq_errors,
        st.peers_failed, st.msgs_rejected, st.msgs_reordered,
        st.msgs_bad_header, st.msgs_unknown_src, st.max_queue_depth,
        j.create_ns, st.connect_ns);
    out("DONE ok=%d fail=%d", j.ok, j.fail);
    int rc = j.fail == 0 ? 0 : 1;
    teardown(&j);
    return rc;
}
