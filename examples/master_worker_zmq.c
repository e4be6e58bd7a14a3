/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Master/worker that survives the death of workers: MPI's example 17.1
 * (chapter 17, "Master/Worker"), rebuilt on ftcoll's collectives and
 * failure acknowledgement, over real processes with ZeroMQ.
 *
 *   ftcoll-run -n 8 --may-fail 3 -- master_worker_zmq [--tasks N]
 *       [--die RANK@ROUND] [-f F]
 *
 * Rank 0 is the master, every other rank a worker. ftcoll has no
 * point-to-point messages, so the work goes round in rounds: the master
 * broadcasts one task per live worker (task id, or -1: none, or -2:
 * stop), each worker answers in its own slot of a sum-reduce to the
 * master ([answered, answer] per rank), and the master takes the answers
 * in. As in MPI's example, the master handles failures by ignoring the
 * failed workers and resubmitting their work: a task whose slot came back
 * empty went to a worker that died, so it is queued again; and after each
 * round the master acknowledges the failures it knows
 * (ftc_group_failure_ack) and gives no more work to the acknowledged ones
 * (ftc_group_failure_get_acked), as MPI_Comm_failure_ack and
 * MPI_Comm_failure_get_acked do there. Both collectives tolerate F failed
 * workers each (corrected trees).
 *
 * Task t's answer is t * t + 1, so the master can check the total. With
 * --die, the named worker SIGKILLs itself in the middle of the reduce of
 * round ROUND (after its first sends). The master finishes anyway and
 * prints
 *
 *   master: 40 tasks done in 7 rounds; failed workers: 3; requeued 1;
 *   sum 20580 (expected 20580)
 *
 * (one line), and exits 0 only when the sum is right.
 */
#include <getopt.h>
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

#define NO_TASK (-1)
#define STOP (-2)

typedef struct result {
    bool done;
    int status;
} result_t;

/* Runs inside ftc_zmq_progress(): record, return quickly. */
static void on_deliver(const ftc_completion_t *c, void *arg)
{
    result_t *r = arg;
    r->done = true;
    r->status = c->status;
}

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "master_worker_zmq: %s: %s\n", what, why);
    return 1;
}

static int64_t answer(int64_t task)
{
    return task * task + 1;
}

/* One collective, waited for: progress until it delivers. */
static int run(ftc_zmq_t *z, ftc_group_t *group, ftc_coll_t coll,
               ftc_coll_args_t *a, result_t *r)
{
    r->done = false;
    a->deliver = on_deliver;
    a->deliver_arg = r;
    int rc = coll == FTC_COLL_BCAST ? ftc_init_bcast(group, a, NULL)
                                    : ftc_init_reduce(group, a, NULL);
    if (rc != FTC_OK)
        return rc;
    while (!r->done)
        ftc_zmq_progress(z, -1);
    return FTC_OK;
}

int main(int argc, char **argv)
{
    static const char usage[] =
        "usage: master_worker_zmq [--tasks N] [--die RANK@ROUND] [-f F]\n"
        "       master_worker_zmq -h|--help | -V|--version\n";
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"tasks", required_argument, NULL, 't'},
        {"die", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    long ntasks = 40, die_rank = -1, die_round = -1, f = 2;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hVf:", opts, NULL)) != -1) {
        char *end = NULL;
        int tail = 0;
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'V':
            printf("master_worker_zmq %s\n", FTC_TOOL_VERSION);
            return 0;
        case 't':
        case 'f':
            {
                long v = strtol(optarg, &end, 10);
                if (*end != '\0' || end == optarg || v < (c == 't' ? 1 : 0)
                    || v > 1000000) {
                    fprintf(stderr, "master_worker_zmq: %s wants a number "
                                    "%s, got '%s'\n",
                            c == 't' ? "--tasks" : "-f",
                            c == 't' ? ">= 1" : ">= 0", optarg);
                    return 2;
                }
                if (c == 't')
                    ntasks = v;
                else
                    f = v;
            }
            break;
        case 'd':
            if (sscanf(optarg, "%ld@%ld%n", &die_rank, &die_round, &tail) != 2
                || optarg[tail] != '\0' || die_rank < 1 || die_round < 0) {
                fprintf(stderr, "master_worker_zmq: --die wants RANK@ROUND "
                                "with RANK a worker (>= 1), got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case ':':
            fprintf(stderr, "master_worker_zmq: %s needs a value\n%s",
                    argv[optind - 1], usage);
            return 2;
        default:
            fprintf(stderr, "master_worker_zmq: unknown option '%s'\n%s",
                    argv[optind - 1], usage);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "master_worker_zmq: unexpected argument '%s'\n%s",
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
    if (n < 2) {
        fprintf(stderr, "master_worker_zmq: needs a master and at least one "
                        "worker (-n 2 or more)\n");
        return 2;
    }
    if (die_rank >= (long)n) {
        fprintf(stderr, "master_worker_zmq: --die %ld: no such rank (n = "
                        "%u)\n", die_rank, n);
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
    ftc_group_t *group;
    int rc = ftc_context_create(rank, n, ftc_zmq_ops(), z, &cfg, &ctx);
    if (rc != FTC_OK)
        return fail("ftc_context_create", ftc_strerror(rc));
    ftc_zmq_attach(z, ctx);
    rc = ftc_group_create(ctx, 1, 0, n, NULL, &group);
    if (rc != FTC_OK)
        return fail("ftc_group_create", ftc_strerror(rc));
    if (f > (long)n - 1)
        f = n - 1;

    int64_t *assign = calloc(n, sizeof(int64_t));
    int64_t *mine = calloc(2 * (size_t)n, sizeof(int64_t));
    int64_t *answers = calloc(2 * (size_t)n, sizeof(int64_t));
    char *done = calloc((size_t)ntasks, 1);
    uint32_t *acked = calloc(n, sizeof(uint32_t));
    long *queue = calloc((size_t)ntasks, sizeof(long));
    if (assign == NULL || mine == NULL || answers == NULL || done == NULL
        || acked == NULL || queue == NULL)
        return fail("start", "out of memory");

    /* The master's work queue: every task, then the ones requeued. */
    long qhead = 0, qtail = 0, ndone = 0, requeued = 0, rounds = 0;
    long answered = 0;
    for (long t = 0; t < ntasks; t++)
        queue[qtail++ % ntasks] = t;
    int64_t sum = 0;
    uint32_t nacked = 0;
    bool ok = true;

    for (;; rounds++) {
        /* 1. The master hands out one task per live worker. */
        if (rank == 0) {
            for (uint32_t w = 0; w < n; w++)
                assign[w] = NO_TASK;
            bool work_available = ndone < ntasks;
            for (uint32_t w = 1; w < n; w++) {
                bool failed = false;
                for (uint32_t k = 0; k < nacked; k++)
                    failed = failed || acked[k] == w;
                if (!work_available)
                    assign[w] = STOP;
                else if (!failed && qhead < qtail)
                    assign[w] = queue[qhead++ % ntasks];
            }
        }
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.root = 0;
        a.f = (uint32_t)f;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = n;
        a.sendbuf = assign;
        a.recvbuf = assign;
        result_t r;
        rc = run(z, group, FTC_COLL_BCAST, &a, &r);
        if (rc != FTC_OK || r.status != FTC_OK) {
            /* The master is not meant to fail (as in MPI's example). */
            fprintf(stderr, "rank %u: bcast of round %ld: %s\n", rank,
                    rounds, ftc_strerror(rc != FTC_OK ? rc : r.status));
            ok = false;
            break;
        }
        if (assign[1 < n ? 1 : 0] == STOP)
            break;

        /* 2. Each worker answers in its slot; the master takes them in. */
        memset(mine, 0, 2 * (size_t)n * sizeof(int64_t));
        if (rank != 0 && assign[rank] >= 0) {
            mine[2 * rank] = 1;
            mine[2 * rank + 1] = answer(assign[rank]);
            answered++;
        }
        a.count = 2 * (size_t)n;
        a.sendbuf = mine;
        a.recvbuf = answers;
        r.done = false;
        a.deliver = on_deliver;
        a.deliver_arg = &r;
        rc = ftc_init_reduce(group, &a, NULL);
        if (rc != FTC_OK)
            return fail("ftc_init_reduce", ftc_strerror(rc));
        if ((long)rank == die_rank && rounds == die_round) {
            ftc_zmq_progress(z, 0);         /* let the first sends out */
            raise(SIGKILL);                 /* and die mid-operation */
        }
        while (!r.done)
            ftc_zmq_progress(z, -1);
        if (rank != 0)
            continue;
        for (uint32_t w = 1; w < n; w++) {
            if (assign[w] < 0)
                continue;
            if (r.status == FTC_OK && answers[2 * w] == 1) {
                if (!done[assign[w]]) {
                    done[assign[w]] = 1;
                    ndone++;
                    sum += answers[2 * w + 1];
                }
            } else {
                /* Lost with a failed worker (or the whole round, past f
                 * failures): submit it again. */
                queue[qtail++ % ntasks] = assign[w];
                requeued++;
            }
        }
        /* 3. Acknowledge the failures known now: no more work for them. */
        if (ftc_group_failure_ack(group) != FTC_OK)
            return fail("ftc_group_failure_ack", "out of memory");
        nacked = ftc_group_failure_get_acked(group, acked, n);
        if (n - 1 - nacked == 0) {
            fprintf(stderr, "master: no worker left\n");
            ok = false;
            break;
        }
    }

    if (rank == 0) {
        int64_t want = 0;
        for (long t = 0; t < ntasks; t++)
            want += answer(t);
        char list[512] = "none";
        for (uint32_t i = 0, k = 0; i < nacked && k < sizeof(list) - 12; i++)
            k += (uint32_t)snprintf(list + k, sizeof(list) - k, "%s%u",
                                    i ? "," : "", acked[i]);
        ok = ok && ndone == ntasks && sum == want;
        printf("master: %ld tasks done in %ld rounds; failed workers: %s; "
               "requeued %ld; sum %lld (expected %lld)\n", ndone, rounds,
               list, requeued, (long long)sum, (long long)want);
    } else {
        printf("worker %u: answered %ld tasks\n", rank, answered);
    }

    /* Leave together: finalize delivers once every other member has
     * finalized or failed (allreduce_zmq.c says why). */
    result_t fin = {0};
    rc = ftc_group_finalize(group, on_deliver, &fin);
    if (rc != FTC_OK)
        return fail("ftc_group_finalize", ftc_strerror(rc));
    while (!fin.done)
        ftc_zmq_progress(z, -1);
    ftc_context_destroy(ctx);
    ftc_zmq_destroy(z);
    free(assign);
    free(mine);
    free(answers);
    free(done);
    free(acked);
    free(queue);
    return ok ? 0 : 1;
}
