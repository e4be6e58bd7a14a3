/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allreduce_loopback: N ranks in one process on the in-memory loopback
 * backend sum their ranks with a corrected allreduce while some of them
 * fail: one before the operation, and the first root candidate in the
 * middle of it. Every survivor prints its result and the failed set it
 * agreed on.
 *
 *   allreduce_loopback [N [F]]      (defaults: 16 ranks, f = 3)
 *
 * Everything below the "ftcoll" comments is what an embedder writes; the
 * ftc_lb_* calls stand in for a real transport.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"

typedef struct rank_state {
    uint32_t rank;
    int64_t in, out;
    int delivered, status;
    uint32_t nfailed, failed[8];
    uint32_t root, retries;
} rank_state_t;

/* ftcoll: the deliver callback ends the collective, exactly once. */
static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_state_t *s = arg;
    s->delivered++;
    s->status = c->status;
    s->root = c->stats.root;
    s->retries = c->stats.retries;
    s->nfailed = c->nfailed < 8 ? c->nfailed : 8;
    for (uint32_t i = 0; i < s->nfailed; i++)
        s->failed[i] = c->failed[i];
}

/* The build passes the project's version; a copy built elsewhere says so. */
#ifndef FTC_TOOL_VERSION
#define FTC_TOOL_VERSION "(version unknown)"
#endif

static int usage(FILE *out, int status)
{
    fprintf(out, "usage: allreduce_loopback [N [F]]   N >= 8 ranks (16), "
                 "3 <= F < N (3)\n"
                 "       allreduce_loopback -h|--help | -V|--version\n");
    return status;
}

/* An operand as a number, or UINT32_MAX when it is not one. */
static uint32_t operand(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    return *s >= '0' && *s <= '9' && *end == '\0' && v < UINT32_MAX
               ? (uint32_t)v
               : UINT32_MAX;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
        if (c == 'h')
            return usage(stdout, 0);
        if (c == 'V') {
            printf("allreduce_loopback %s\n", FTC_TOOL_VERSION);
            return 0;
        }
        fprintf(stderr, "allreduce_loopback: unknown option '%s'\n",
                argv[optind - 1]);
        return usage(stderr, 2);
    }
    if (argc - optind > 2)
        return usage(stderr, 2);
    uint32_t n = argc - optind > 0 ? operand(argv[optind]) : 16;
    uint32_t f = argc - optind > 1 ? operand(argv[optind + 1]) : 3;
    if (n < 8 || n == UINT32_MAX) {
        fprintf(stderr, "allreduce_loopback: N must be a number >= 8\n");
        return usage(stderr, 2);
    }
    if (f < 3 || f >= n) {
        fprintf(stderr, "allreduce_loopback: F must be a number, 3 <= F < N\n");
        return usage(stderr, 2);
    }
    uint32_t pre_failed = n / 2 + 1;   /* dead before the allreduce */
    uint32_t root_failed = 0;          /* the first root, once started */
    uint32_t mid_failed = 5;           /* after its first message */

    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    ftc_lb_world_t *world;
    if (ftc_lb_world_create(&lc, &world) != FTC_OK)
        return 1;

    rank_state_t *st = calloc(n, sizeof(*st));
    ftc_context_t **ctx = calloc(n, sizeof(*ctx));
    ftc_group_t **grp = calloc(n, sizeof(*grp));
    if (st == NULL || ctx == NULL || grp == NULL)
        return 1;

    /* ftcoll: one context and one group per process. */
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 0xD3E0;
    for (uint32_t r = 0; r < n; r++) {
        int rc = ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(world, r),
                                    &cfg, &ctx[r]);
        if (rc == FTC_OK) {
            ftc_lb_attach(world, r, ctx[r]);
            rc = ftc_group_create(ctx[r], 1, 0, n, NULL, &grp[r]);
        }
        if (rc != FTC_OK) {
            fprintf(stderr, "rank %u: %s\n", r, ftc_strerror(rc));
            return 1;
        }
    }

    ftc_lb_crash(world, pre_failed);
    ftc_lb_crash_after_sends(world, mid_failed, 1);

    for (uint32_t r = 0; r < n; r++) {
        if (r == pre_failed)
            continue;
        st[r].rank = r;
        st[r].in = r + 1;
        /* ftcoll: start a non-blocking allreduce; deliver ends it. */
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.f = f;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = 1;
        a.sendbuf = &st[r].in;
        a.recvbuf = &st[r].out;
        a.deliver = on_deliver;
        a.deliver_arg = &st[r];
        int rc = ftc_init_allreduce(grp[r], &a, NULL);
        if (rc != FTC_OK) {
            fprintf(stderr, "rank %u: ftc_init_allreduce: %s\n", r,
                    ftc_strerror(rc));
            return 1;
        }
        if (r == root_failed)
            ftc_lb_crash(world, r); /* started, sent nothing, died */
    }
    ftc_lb_run(world, 100000000);

    printf("corrected allreduce, sum of (rank + 1), n = %u, f = %u\n", n, f);
    printf("failures: rank %u before the operation, rank %u (the first root) "
           "right after it started, rank %u after its first message\n\n",
           pre_failed, root_failed, mid_failed);
    printf("%5s  %-8s  %-8s  %6s  %5s  %s\n", "rank", "state", "status",
           "result", "root", "failed set it agreed on");
    int64_t first = -1;
    int agree = 1, survivors = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_lb_is_crashed(world, r)) {
            printf("%5u  %-8s\n", r, "failed");
            continue;
        }
        survivors++;
        printf("%5u  %-8s  %-8s  %6lld  %5u  {", r, "live",
               st[r].delivered ? ftc_err_name(st[r].status) : "none",
               (long long)st[r].out, st[r].root);
        for (uint32_t i = 0; i < st[r].nfailed; i++)
            printf("%s%u", i ? "," : "", st[r].failed[i]);
        printf("}\n");
        if (st[r].delivered != 1 || st[r].status != FTC_OK)
            agree = 0;
        else if (first < 0)
            first = st[r].out;
        else if (st[r].out != first)
            agree = 0;
    }
    printf("\n%d survivors %s on %lld; virtual time %.1f us, %llu messages\n",
           survivors, agree ? "agree" : "DISAGREE", (long long)first,
           (double)ftc_lb_now(world) / 1000.0,
           (unsigned long long)ftc_lb_messages_sent(world));

    for (uint32_t r = 0; r < n; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(world);
    free(st);
    free(ctx);
    free(grp);
    return agree ? 0 : 1;
}
