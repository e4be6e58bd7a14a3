/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fault-tolerant allreduce over real processes: copy this to start.
 *
 *   ftcoll-run -n 8 -- allreduce_zmq [--iters N] [--die RANK@ITER]
 *   mpirun --enable-recovery -np 8 allreduce_zmq       (PMIx)
 *
 * Each rank contributes rank + 1 to an int64 sum, N times. With --die, the
 * named rank SIGKILLs itself in the middle of allreduce number ITER: after
 * ftc_init_allreduce() has sent its first messages, before the result.
 * The others deliver anyway, all the same value (with or without the dead
 * rank's contribution: it died during the operation), and every later
 * allreduce excludes it. At the end each survivor prints one line:
 *
 *   rank R: 10 allreduces, at 5: 36, last: 32, failed ranks: 3
 *
 * The steps: bootstrap (who am I, swap addresses), the ZeroMQ backend,
 * a context and a group, then start an allreduce and call progress until
 * its deliver callback has run.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_bootstrap.h"
#include "ftcoll_zmq.h"

typedef struct result {
    bool done;
    int status;
    int64_t value;
} result_t;

/* Runs inside ftc_zmq_progress(): record, return quickly. */
static void on_deliver(const ftc_completion_t *c, void *arg)
{
    result_t *r = arg;
    r->done = true;
    r->status = c->status;
}

/* The build passes the project's version; a copy built elsewhere says so. */
#ifndef FTC_TOOL_VERSION
#define FTC_TOOL_VERSION "(version unknown)"
#endif

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "allreduce_zmq: %s: %s\n", what, why);
    return 1;
}

int main(int argc, char **argv)
{
    static const char usage[] =
        "usage: allreduce_zmq [--iters N] [--die RANK@ITER]\n"
        "       allreduce_zmq -h|--help | -V|--version\n";
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"iters", required_argument, NULL, 'i'},
        {"die", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    long iters = 10, die_rank = -1, die_iter = -1;
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
            printf("allreduce_zmq %s\n", FTC_TOOL_VERSION);
            return 0;
        case 'i':
            iters = strtol(optarg, &end, 10);
            if (*end != '\0' || end == optarg || iters < 1) {
                fprintf(stderr, "allreduce_zmq: --iters wants a number >= 1, "
                                "got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'd':
            if (sscanf(optarg, "%ld@%ld%n", &die_rank, &die_iter, &tail) != 2
                || optarg[tail] != '\0' || die_rank < 0 || die_iter < 0) {
                fprintf(stderr, "allreduce_zmq: --die wants RANK@ITER, got "
                                "'%s'\n", optarg);
                return 2;
            }
            break;
        case ':':
            fprintf(stderr, "allreduce_zmq: %s needs a value\n%s",
                    argv[optind - 1], usage);
            return 2;
        default:
            fprintf(stderr, "allreduce_zmq: unknown option '%s'\n%s",
                    argv[optind - 1], usage);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "allreduce_zmq: unexpected argument '%s'\n%s",
                argv[optind], usage);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* 1. Who am I, and how many are we (ftcoll-run, PMIx, or alone). */
    char err[512];
    ftc_bootstrap_t *boot;
    if (ftc_bootstrap_open(&boot, err, sizeof(err)) != FTC_OK)
        return fail("bootstrap", err);
    uint32_t rank = ftc_bootstrap_rank(boot), n = ftc_bootstrap_size(boot);
    uint64_t token = ftc_bootstrap_job_token(boot);
    /* The job's secret (ftcoll-run and PMIx make one): only a process
     * holding it can make these ranks act on a message. */
    uint8_t key[16];
    int have_key = ftc_bootstrap_job_key(boot, key);

    /* 2. The transport: bind, then swap addresses out of band. */
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
    /* Done with the launcher. Under PMIx this finalizes: a rank that dies
     * later is then no lost PMIx client, which Slurm would answer by
     * killing every rank (docs/running.md). */
    ftc_bootstrap_close(boot);

    /* 3. The core: a context on that transport, a group of everyone. */
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

    /* 4. Allreduces, one after the other. */
    int64_t mine = (int64_t)rank + 1, at_death = 0;
    result_t r = {0};
    long done = 0;
    for (long it = 0; it < iters; it++) {
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);            /* corrected, f = 1 */
        a.f = n > 1 ? 1 : 0;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = 1;
        a.sendbuf = &mine;
        a.recvbuf = &r.value;
        a.deliver = on_deliver;
        a.deliver_arg = &r;
        r.done = false;
        rc = ftc_init_allreduce(group, &a, NULL);
        if (rc != FTC_OK)
            return fail("ftc_init_allreduce", ftc_strerror(rc));
        if (rank == die_rank && it == die_iter) {
            ftc_zmq_progress(z, 0);        /* let the first sends out */
            raise(SIGKILL);                /* and die mid-operation */
        }
        while (!r.done)
            ftc_zmq_progress(z, -1);
        if (r.status != FTC_OK) {
            fprintf(stderr, "rank %u: allreduce %ld: %s\n", rank, it,
                    ftc_strerror(r.status));
            break;
        }
        if (it == die_iter)
            at_death = r.value;
        done++;
    }

    /* 5. Report: the value and who is known to have failed. */
    uint32_t failed[64];
    uint32_t nf = ftc_context_failed(ctx, failed, 64);
    char list[512] = "none";
    for (uint32_t i = 0, k = 0; i < nf && i < 64; i++)
        k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%u",
                              i ? ", " : "", failed[i]);
    if (die_iter >= 0)
        printf("rank %u: %ld allreduces, at %ld: %lld, last: %lld, "
               "failed ranks: %s\n", rank, done, die_iter,
               (long long)at_death, (long long)r.value, list);
    else
        printf("rank %u: %ld allreduces, last: %lld, failed ranks: %s\n",
               rank, done, (long long)r.value, list);

    /* 6. Leave cleanly: a peer still finishing may need us (a later round
     * of the last allreduce, a copy of its value). Finalize delivers once
     * every other member has finalized or failed; until then we serve. */
    result_t fin = {0};
    rc = ftc_group_finalize(group, on_deliver, &fin);
    if (rc != FTC_OK)
        return fail("ftc_group_finalize", ftc_strerror(rc));
    while (!fin.done)
        ftc_zmq_progress(z, -1);
    ftc_context_destroy(ctx);   /* before the transport: it calls its ops */
    ftc_zmq_destroy(z);
    return done == iters ? 0 : 1;
}
