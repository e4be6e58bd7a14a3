/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Iterative refinement that goes on without the dead: MPI's example 17.2
 * (chapter 17, "Iterative Refinement", with shrink and agreement),
 * rebuilt on ftcoll over real processes with ZeroMQ.
 *
 *   ftcoll-run -n 8 --may-fail 3 -- refine_zmq [--size M] [--die RANK@ITER]
 *
 * The job solves A x = b by Jacobi iterations, A the M x M tridiagonal
 * matrix (4 on the diagonal, -1 beside it), b all ones. Every member keeps
 * the whole x; component i is refined by the member of group rank
 * i mod (group size), and an allreduce (sum) of everybody's refined
 * components gives the next x. The loop is example 17.2's:
 *
 *   - an allreduce whose result misses a member's input (its completion
 *     lists the failed members: ftcoll's collectives complete despite
 *     failures, where MPI's return MPI_ERR_PROC_FAILED) is a failed
 *     iteration; so is one that ends with an error;
 *   - on a failure, or once converged, the members agree (ftc_agree, a
 *     bitwise AND) on whether every one of them succeeded: the same answer
 *     everywhere, whatever else fails meanwhile;
 *   - if not, they invalidate the group, shrink it (ftc_init_shrink) and
 *     go on with the new group, which redistributes the components over
 *     the survivors, and force one more iteration.
 *
 * With --die, the named rank SIGKILLs itself in the middle of allreduce
 * number ITER. Every survivor ends with the same x and prints
 *
 *   rank R: converged after K iterations on a group of 7 (shrunk at
 *   iteration 5), residual 8.9e-16, x digest 8c3e...
 *
 * and exits 0 only if the residual max |A x - b| is below 1e-9.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"
#include "ftcoll_bootstrap.h"
#include "ftcoll_zmq.h"

#ifndef FTC_TOOL_VERSION
#define FTC_TOOL_VERSION "(version unknown)"
#endif

#define EPSILON 1e-13
#define MAX_ITERS 10000

typedef struct result {
    bool done;
    int status;
    uint32_t nfailed;           /* inputs the result misses */
    ftc_group_t *group;         /* the shrink's new group */
} result_t;

/* Runs inside ftc_zmq_progress(): record, return quickly. */
static void on_deliver(const ftc_completion_t *c, void *arg)
{
    result_t *r = arg;
    r->done = true;
    r->status = c->status;
    r->nfailed = c->nfailed;
}

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "refine_zmq: %s: %s\n", what, why);
    return 1;
}

static int zmq_progress(void *z)
{
    return ftc_zmq_progress(z, -1);
}

/* Jacobi on A = tridiag(-1, 4, -1): this member's components of the next
 * x, zeros elsewhere. */
static void refine(const double *x, double *mine, size_t m, uint32_t me,
                   uint32_t size)
{
    for (size_t i = 0; i < m; i++) {
        mine[i] = 0;
        if (i % size != me)
            continue;
        double left = i > 0 ? x[i - 1] : 0, right = i + 1 < m ? x[i + 1] : 0;
        mine[i] = (1.0 + left + right) / 4.0;
    }
}

static double residual(const double *x, size_t m)
{
    double worst = 0;
    for (size_t i = 0; i < m; i++) {
        double ax = 4 * x[i] - (i > 0 ? x[i - 1] : 0)
                    - (i + 1 < m ? x[i + 1] : 0);
        worst = fmax(worst, fabs(ax - 1.0));
    }
    return worst;
}

int main(int argc, char **argv)
{
    static const char usage[] =
        "usage: refine_zmq [--size M] [--die RANK@ITER]\n"
        "       refine_zmq -h|--help | -V|--version\n";
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"size", required_argument, NULL, 's'},
        {"die", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    long m = 64, die_rank = -1, die_iter = -1;
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
            printf("refine_zmq %s\n", FTC_TOOL_VERSION);
            return 0;
        case 's':
            m = strtol(optarg, &end, 10);
            if (*end != '\0' || end == optarg || m < 1 || m > 1000000) {
                fprintf(stderr, "refine_zmq: --size wants a number in 1 .. "
                                "1000000, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'd':
            if (sscanf(optarg, "%ld@%ld%n", &die_rank, &die_iter, &tail) != 2
                || optarg[tail] != '\0' || die_rank < 0 || die_iter < 0) {
                fprintf(stderr, "refine_zmq: --die wants RANK@ITER, got "
                                "'%s'\n", optarg);
                return 2;
            }
            break;
        case ':':
            fprintf(stderr, "refine_zmq: %s needs a value\n%s",
                    argv[optind - 1], usage);
            return 2;
        default:
            fprintf(stderr, "refine_zmq: unknown option '%s'\n%s",
                    argv[optind - 1], usage);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "refine_zmq: unexpected argument '%s'\n%s",
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
    if (die_rank >= (long)n) {
        fprintf(stderr, "refine_zmq: --die %ld: no such rank (n = %u)\n",
                die_rank, n);
        return 2;
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
    ftc_group_t *comm;
    int rc = ftc_context_create(rank, n, ftc_zmq_ops(), z, &cfg, &ctx);
    if (rc != FTC_OK)
        return fail("ftc_context_create", ftc_strerror(rc));
    ftc_zmq_attach(z, ctx);
    rc = ftc_group_create(ctx, 1, 0, n, NULL, &comm);
    if (rc != FTC_OK)
        return fail("ftc_group_create", ftc_strerror(rc));

    double *x = calloc((size_t)m, sizeof(double));
    double *mine = calloc((size_t)m, sizeof(double));
    double *next = calloc((size_t)m, sizeof(double));
    /* The groups a shrink replaced: kept until the end, as the members
     * may still need this one to answer for them (a shrink's agreement
     * that another member has not finished). */
    ftc_group_t *old[64];
    uint32_t nold = 0;
    if (x == NULL || mine == NULL || next == NULL)
        return fail("start", "out of memory");

    double gnorm = EPSILON + 1.0;
    long it = 0, shrunk_at = -1;
    while (gnorm > EPSILON && it < MAX_ITERS) {
        /* A computation iteration, then the global x (and its change). */
        refine(x, mine, (size_t)m, ftc_group_rank(comm), ftc_group_size(comm));
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);             /* corrected, f = 1 */
        a.f = ftc_group_size(comm) > 1 ? 1 : 0;
        a.dtype = FTC_DOUBLE;
        a.op = FTC_SUM;
        a.count = (size_t)m;
        a.sendbuf = mine;
        a.recvbuf = next;
        a.deliver = on_deliver;
        result_t r = {0};
        a.deliver_arg = &r;
        rc = ftc_init_allreduce(comm, &a, NULL);
        if (rc == FTC_OK) {
            if ((long)rank == die_rank && it == die_iter) {
                ftc_zmq_progress(z, 0);     /* let the first sends out */
                raise(SIGKILL);             /* and die mid-operation */
            }
            while (!r.done)
                ftc_zmq_progress(z, -1);
            rc = r.status != FTC_OK ? r.status
                 : r.nfailed > 0    ? FTC_EPROC_FAILED
                                    : FTC_OK;
        }
        if (rc == FTC_OK) {
            gnorm = 0;
            for (long i = 0; i < m; i++)
                gnorm = fmax(gnorm, fabs(next[i] - x[i]));
        }
        it++;

        if (rc != FTC_OK || gnorm <= EPSILON) {
            if (rc == FTC_EPROC_FAILED)
                ftc_group_invalidate(comm);
            /* About to leave, or to go on without someone: be sure that
             * everybody received the same information. */
            uint64_t allsucceeded = rc == FTC_OK;
            rc = ftc_agree(comm, &allsucceeded, NULL, 0, NULL, zmq_progress,
                           z);
            if (rc != FTC_OK)
                return fail("ftc_agree", ftc_strerror(rc));
            if (!allsucceeded) {
                /* We join the shrink: the group is marked invalidated. */
                ftc_group_invalidate(comm);
                ftc_group_t *comm2 = NULL;
                r.done = false;
                rc = ftc_init_shrink(comm, ftc_group_id(comm) + 1, &comm2,
                                     on_deliver, &r, NULL);
                if (rc != FTC_OK)
                    return fail("ftc_init_shrink", ftc_strerror(rc));
                while (!r.done)
                    ftc_zmq_progress(z, -1);
                if (r.status != FTC_OK)
                    return fail("shrink", ftc_strerror(r.status));
                if (nold == sizeof(old) / sizeof(old[0]))
                    return fail("shrink", "too many shrinks");
                old[nold++] = comm;
                comm = comm2;
                shrunk_at = it - 1;
                gnorm = EPSILON + 1.0;      /* force one more iteration */
                continue;                   /* x stays: redo the iteration */
            }
        }
        memcpy(x, next, (size_t)m * sizeof(double));
    }

    /* The same x at every survivor: print a digest of its bits. */
    uint64_t digest = 1469598103934665603ull;
    for (long i = 0; i < m; i++) {
        uint64_t bits;
        memcpy(&bits, &x[i], sizeof(bits));
        digest = (digest ^ bits) * 0x100000001b3ull;
    }
    double res = residual(x, (size_t)m);
    char shrunk[64] = "never shrunk";
    if (shrunk_at >= 0)
        snprintf(shrunk, sizeof(shrunk), "shrunk at iteration %ld",
                 shrunk_at);
    printf("rank %u: converged after %ld iterations on a group of %u (%s), "
           "residual %.1e, x digest %016" PRIx64 "\n", rank, it,
           ftc_group_size(comm), shrunk, res, digest);

    result_t fin = {0};
    rc = ftc_group_finalize(comm, on_deliver, &fin);
    if (rc != FTC_OK)
        return fail("ftc_group_finalize", ftc_strerror(rc));
    while (!fin.done)
        ftc_zmq_progress(z, -1);
    ftc_group_destroy(comm);
    while (nold > 0)
        ftc_group_destroy(old[--nold]);
    ftc_context_destroy(ctx);
    ftc_zmq_destroy(z);
    free(x);
    free(mine);
    free(next);
    return res < 1e-9 && gnorm <= EPSILON ? 0 : 1;
}
