/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family (Margolin & Barak, docs/ftco.md) over real processes:
 * copy this to start with it.
 *
 *   ftcoll-run -n 8 --kill 3@3:'allreduce 6: waiting' \
 *       --stop 5@5:'allreduce 12: waiting' -- \
 *       ftco_zmq [--iters N] [--wait RANK@ITER]... [--ack-timeout-ms T]
 *
 * A stream of N allreduces of doubles on a multi-root k-nomial tree, k
 * picked for the group's size by ftc_tree_knomial_best_k, with the
 * family's per-message timeouts on. Rank r contributes two doubles to
 * allreduce i:
 *
 *   2^r            the sum is a bit mask of the ranks counted (n <= 52),
 *   r + 1 + i/4    a value that changes with i.
 *
 * Both are exact in a double, and so are their sums, so a survivor can
 * check its result exactly: the family promises (Definitions 3.1 and 3.2
 * of the paper) that every live process delivers, that all results of an
 * operation are the same, and that each contribution is counted at most
 * once and every live one counted. The completion names the ranks whose
 * contribution the result misses (ftc_completion_t.failed); every other
 * rank's is in it, once. So each survivor prints, per allreduce,
 *
 *   allreduce 12: 2^r sum 215 value 44.00 counts 0,1,2,4,6,7 misses 3,5: exact
 *
 * and "exact" only when the result equals the sum over the ranks it
 * counts. It exits 0 only when every result was exact.
 *
 * With --wait R@I, rank R prints "allreduce I: waiting for a signal" as
 * it comes to allreduce I and waits there, without calling into ftcoll,
 * for the launcher's signal: --kill R@R:'allreduce I: waiting' SIGKILLs
 * it, --stop R@R:'...' SIGSTOPs it. So a fault is tied to the stream's
 * progress, never to a time: it lands at allreduce I on any machine, and
 * allreduce I and every later one miss rank R while the survivors go on.
 * A killed rank the transport reports at once; a stopped one stays
 * connected and silent, and it is the per-message timeouts below that
 * exclude it. ftcoll-run resumes a stopped rank once every other rank
 * has exited: it then goes on with allreduce I, learns that the group
 * excluded it (FTC_EEXCLUDED) and exits. examples/ftco_zmq.sh runs one
 * kill and one stop and checks the printed lines.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll_bootstrap.h"
#include "ftcoll_zmq.h"

#ifndef FTC_TOOL_VERSION
#define FTC_TOOL_VERSION "(version unknown)"
#endif

/* 2^r must stay exact and distinct in a double's 53-bit mantissa. */
#define MAX_RANKS 52u
#define MAX_WAITS 8

/* Set when this process is resumed after a stop. */
static volatile sig_atomic_t continued;

static void on_sigcont(int sig)
{
    (void)sig;
    continued = 1;
}

/*
 * Wait for the launcher's signal without calling into ftcoll, so that it
 * never lands in the middle of a send: a SIGKILL ends the process in
 * here, a SIGSTOP stops it here, and the SIGCONT that resumes it returns.
 * false if nothing came within a minute.
 */
static bool wait_for_signal(void)
{
    for (int waited = 0; waited < 600 && !continued; waited++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return continued;
}

typedef struct result {
    bool done;
    int status;
    uint32_t nmissed;
    uint32_t missed[MAX_RANKS];
} result_t;

/* Runs inside ftc_zmq_progress(): copy what the completion says (its
 * failed list is valid during the callback only) and return. */
static void on_deliver(const ftc_completion_t *c, void *arg)
{
    result_t *r = arg;
    r->done = true;
    r->status = c->status;
    r->nmissed = 0;
    for (uint32_t k = 0; k < c->nfailed && k < MAX_RANKS; k++)
        r->missed[r->nmissed++] = c->failed[k];
}

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "ftco_zmq: %s: %s\n", what, why);
    return 1;
}

static double value_of(uint32_t rank, long iter)
{
    return (double)rank + 1.0 + (double)iter / 4.0;
}

/* "0,1,2" into buf; "none" for no rank. */
static void list_ranks(const bool *in, uint32_t n, bool want, char *buf,
                       size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (uint32_t r = 0; r < n && k + 12 < size; r++)
        if (in[r] == want)
            k += (size_t)snprintf(buf + k, size - k, "%s%u", k ? "," : "", r);
    if (k == 0)
        snprintf(buf, size, "none");
}

int main(int argc, char **argv)
{
    static const char usage[] =
        "usage: ftco_zmq [--iters N] [--wait RANK@ITER]... "
        "[--ack-timeout-ms T]\n"
        "       ftco_zmq -h|--help | -V|--version\n";
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"iters", required_argument, NULL, 'i'},
        {"wait", required_argument, NULL, 'w'},
        {"ack-timeout-ms", required_argument, NULL, 'a'},
        {NULL, 0, NULL, 0},
    };
    long iters = 20, ack_timeout_ms = 500;
    long wait_rank[MAX_WAITS], wait_iter[MAX_WAITS];
    int nwaits = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
        char *end = NULL;
        int tail = 0;
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'V':
            printf("ftco_zmq %s\n", FTC_TOOL_VERSION);
            return 0;
        case 'i':
        case 'a':
            {
                long v = strtol(optarg, &end, 10);
                if (*end != '\0' || end == optarg || v < 1 || v > 1000000) {
                    fprintf(stderr, "ftco_zmq: %s wants a number from 1 to "
                                    "1000000, got '%s'\n",
                            c == 'i' ? "--iters" : "--ack-timeout-ms",
                            optarg);
                    return 2;
                }
                if (c == 'i')
                    iters = v;
                else
                    ack_timeout_ms = v;
            }
            break;
        case 'w':
            if (nwaits == MAX_WAITS) {
                fprintf(stderr, "ftco_zmq: --wait: at most %d\n", MAX_WAITS);
                return 2;
            }
            if (sscanf(optarg, "%ld@%ld%n", &wait_rank[nwaits],
                       &wait_iter[nwaits], &tail) != 2
                || optarg[tail] != '\0' || wait_rank[nwaits] < 0
                || wait_iter[nwaits] < 0) {
                fprintf(stderr, "ftco_zmq: --wait wants RANK@ITER, both "
                                ">= 0, got '%s'\n", optarg);
                return 2;
            }
            nwaits++;
            break;
        case ':':
            fprintf(stderr, "ftco_zmq: %s needs a value\n%s",
                    argv[optind - 1], usage);
            return 2;
        default:
            fprintf(stderr, "ftco_zmq: unknown option '%s'\n%s",
                    argv[optind - 1], usage);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ftco_zmq: unexpected argument '%s'\n%s",
                argv[optind], usage);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* Bootstrap, transport and core, as in allreduce_zmq.c. */
    char err[512];
    ftc_bootstrap_t *boot;
    if (ftc_bootstrap_open(&boot, err, sizeof(err)) != FTC_OK)
        return fail("bootstrap", err);
    uint32_t rank = ftc_bootstrap_rank(boot), n = ftc_bootstrap_size(boot);
    if (n > MAX_RANKS) {
        fprintf(stderr, "ftco_zmq: at most %u ranks (a rank's 2^r must be "
                        "exact in a double), got -n %u\n", MAX_RANKS, n);
        return 2;
    }
    long my_wait = -1; /* the allreduce this rank waits at, if any */
    for (int w = 0; w < nwaits; w++) {
        if (wait_rank[w] >= (long)n) {
            fprintf(stderr, "ftco_zmq: --wait %ld@%ld: no such rank (n = "
                            "%u)\n", wait_rank[w], wait_iter[w], n);
            return 2;
        }
        if (wait_rank[w] == (long)rank)
            my_wait = wait_iter[w];
    }
    if (my_wait >= 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_sigcont;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGCONT, &sa, NULL) != 0)
            return fail("sigaction", "cannot watch SIGCONT");
    }
    uint64_t token = ftc_bootstrap_job_token(boot);
    uint8_t key[16];
    int have_key = ftc_bootstrap_job_key(boot, key);
    ftc_zmq_config_t zc;
    ftc_zmq_config_init(&zc);
    zc.rank = rank;
    zc.nranks = n;
    zc.job_token = token;
    ftc_zmq_t *z;
    if (ftc_zmq_create(&zc, &z) != FTC_OK)
        return fail("ftc_zmq_create", "cannot bind");
    if (ftc_zmq_exchange(z, ftc_bootstrap_allgather, boot) != FTC_OK)
        return fail("address exchange", ftc_bootstrap_error(boot));
    ftc_bootstrap_close(boot);
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = token;
    if (have_key) {
        cfg.auth = 1;
        memcpy(cfg.auth_key, key, sizeof(key));
    }
    ftc_context_t *ctx;
    ftc_group_t *group;
    int rc = ftc_context_create(rank, n, ftc_zmq_ops(), z, &cfg, &ctx);
    if (rc != FTC_OK)
        return fail("ftc_context_create", ftc_strerror(rc));
    ftc_zmq_attach(z, ctx);
    rc = ftc_group_create(ctx, 1, 0, n, NULL, &group);
    if (rc != FTC_OK)
        return fail("ftc_group_create", ftc_strerror(rc));

    /*
     * The family's parameters, through its own header (ftcoll/ftco.h).
     *
     * The tree: k roots, fully connected, each the root of a k-nomial tree
     * (the paper's 5.2.1): the allreduce's roots exchange their trees'
     * values directly instead of going through one root and back. The
     * radix comes from the LogP model: L, the wire latency, and o, the
     * per-message CPU overhead, in any one unit. Only their ratio
     * matters: measure it on your network. L = 10, o = 1 is the paper's
     * setting, for which at P = 65,536 the helper picks the paper's
     * k = 9. Groups of one or two have no choice to make: the tree is the
     * trivial one.
     */
    enum { LOGP_L = 10, LOGP_O = 1 };
    uint32_t k = 2;
    if (n > 2 && ftc_tree_knomial_best_k(n, LOGP_L, LOGP_O, &k) != FTC_OK)
        return fail("ftc_tree_knomial_best_k", "refused the group's size");
    ftc_ftco_params_t fp;
    ftc_ftco_params_init(&fp);
    fp.tree.kind = FTC_TREE_KNOMIAL_MULTIROOT;
    fp.tree.k = k;
    /*
     * The per-message timeouts (the paper's Appendix A). A process killed
     * outright is reported by the transport in milliseconds (ZeroMQ sees
     * its connections close), whatever this is. The timeouts are for the
     * process that hangs without dying (stopped, swapped out, deadlocked):
     * a DATA or KEEPALIVE not acknowledged within this base times the
     * receiver's fan-out and tree distance declares the receiver failed,
     * for good. So choose the base from the slowest a healthy peer may
     * answer, not from the typical round trip: well above the worst round
     * trip plus the longest time a process may be descheduled on a busy
     * host (a healthy process that answers late is excluded, and ends its
     * later operations with FTC_EEXCLUDED). A dedicated cluster can go
     * down to a few times its worst round trip; a shared or
     * oversubscribed host wants hundreds of milliseconds (the 500 ms
     * default here holds on two cores loaded far past their count). A
     * hung process then costs a few bases (on real processes 2 to 4 at
     * n = 8 and 16, docs/ftco.md), independent of the group's size, and
     * a large base costs a fault-free run nothing.
     */
    fp.ack_timeout_ns = (uint64_t)ack_timeout_ms * 1000000u;
    if (rank == 0)
        printf("ftco_zmq: %u ranks, multi-root %u-nomial tree (best k for "
               "L = %d, o = %d), ack timeout %ld ms\n", n, k, LOGP_L, LOGP_O,
               ack_timeout_ms);

    bool ok = true, excluded = false;
    for (long i = 0; i < iters && ok; i++) {
        if (i == my_wait) {
            printf("allreduce %ld: waiting for a signal\n", i);
            fflush(stdout);
            if (!wait_for_signal())
                return fail("--wait", "a minute passed: no signal came");
            printf("allreduce %ld: resumed after a stop\n", i);
        }
        double in[2] = {ldexp(1.0, (int)rank), value_of(rank, i)};
        double out[2] = {0, 0};
        result_t r = {0};
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.algo = FTC_ALGO_FTCO;
        a.params = &fp;
        /* ftco takes no bound on failures and does not read f; the core
         * still wants it below the group's size (a group of one). */
        a.f = 0;
        a.dtype = FTC_DOUBLE;
        a.op = FTC_SUM;
        a.count = 2;
        a.sendbuf = in;
        a.recvbuf = out;
        a.deliver = on_deliver;
        a.deliver_arg = &r;
        rc = ftc_init_allreduce(group, &a, NULL);
        if (rc != FTC_OK)
            return fail("ftc_init_allreduce", ftc_strerror(rc));
        while (!r.done)
            ftc_zmq_progress(z, -1);
        if (r.status == FTC_EEXCLUDED && continued) {
            /* Stopped too long: the others declared this process failed
             * and went on without it. Its part in the group is over. */
            printf("allreduce %ld: excluded by the group while stopped\n",
                   i);
            excluded = true;
            break;
        }
        if (r.status != FTC_OK) {
            printf("allreduce %ld: %s\n", i, ftc_strerror(r.status));
            ok = false;
            break;
        }

        /* The exact sum over the ranks the completion says it counts. */
        bool counted[MAX_RANKS];
        for (uint32_t p = 0; p < n; p++)
            counted[p] = true;
        for (uint32_t m = 0; m < r.nmissed; m++)
            if (r.missed[m] < n)
                counted[r.missed[m]] = false;
        double mask = 0, value = 0;
        for (uint32_t p = 0; p < n; p++)
            if (counted[p]) {
                mask += ldexp(1.0, (int)p);
                value += value_of(p, i);
            }
        bool exact = out[0] == mask && out[1] == value;
        char counts[MAX_RANKS * 4], misses[MAX_RANKS * 4];
        list_ranks(counted, n, true, counts, sizeof(counts));
        list_ranks(counted, n, false, misses, sizeof(misses));
        printf("allreduce %ld: 2^r sum %.0f value %.2f counts %s misses "
               "%s: %s\n", i, out[0], out[1], counts, misses,
               exact ? "exact" : "WRONG");
        if (!exact) {
            printf("allreduce %ld: expected 2^r sum %.0f value %.2f\n", i,
                   mask, value);
            ok = false;
        }
    }
    printf("done: %s\n", excluded ? "excluded"
                         : ok    ? "every result exact"
                                 : "a result was wrong");

    /* Leave together: finalize delivers once every other member has
     * finalized or failed (allreduce_zmq.c says why). An excluded process
     * is no member any more: nobody waits for it. */
    if (!excluded) {
        result_t fin = {0};
        rc = ftc_group_finalize(group, on_deliver, &fin);
        if (rc != FTC_OK)
            return fail("ftc_group_finalize", ftc_strerror(rc));
        while (!fin.done)
            ftc_zmq_progress(z, -1);
    }
    ftc_context_destroy(ctx);
    ftc_zmq_destroy(z);
    return ok ? 0 : 1;
}
