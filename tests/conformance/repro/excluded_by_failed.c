/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regression test (loopback backend, public API only) for a core issue
 * found by the conformance suite: a process the group has already declared
 * failed could still exclude a healthy one.
 *
 * Six processes, corrected allreduce, f = 1. Rank 4 is slow (its messages
 * take 100 ms; a SIGSTOPped process behaves the same). The others wait on
 * it, probe it, declare it failed after 10 + 10 ms and finish without it:
 * correct. But rank 4's own probes (to the ranks it waits on) go
 * unanswered within its timeouts too, so it declares rank 0 failed and
 * sends rank 0 FTC_MSG_EXCLUDED. Rank 0 already knows rank 4 failed, yet
 * obeys: ftc_transport_recv() handles FTC_MSG_EXCLUDED before it drops
 * messages from known-failed senders (lib/core/dispatch.c). Rank 0, healthy and
 * the first root, was then excluded: its next allreduce ended with
 * FTC_EEXCLUDED, and the live group lost a member it never suspected.
 *
 * Expected (and fixed): an EXCLUDED from a sender this process already
 * counts as failed is stale (dropped, counted); rank 0 stays in.
 * Exit status 1 if the issue comes back.
 */
#include <stdio.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"

#define N 6
#define SLOW 4

static int g_status[N];
static int g_init_rc[N];

static void deliver(const ftc_completion_t *c, void *arg)
{
    g_status[(unsigned)(uintptr_t)arg] = c->status;
}

static void allreduce_all(ftc_group_t **g, int64_t *in, int64_t *out,
                          ftc_lb_world_t *w)
{
    for (unsigned r = 0; r < N; r++) {
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.f = 1;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = 1;
        a.sendbuf = &in[r];
        a.recvbuf = &out[r];
        a.deliver = deliver;
        a.deliver_arg = (void *)(uintptr_t)r;
        g_status[r] = 1;   /* not delivered */
        g_init_rc[r] = ftc_init_allreduce(g[r], &a, NULL);
    }
    ftc_lb_run(w, 10000000);
}

int main(void)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    lc.detect_delay_ns = UINT64_MAX;        /* keepalive only */
    ftc_lb_world_t *w;
    ftc_lb_world_create(&lc, &w);
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.suspect_timeout_ns = 10000000;
    cfg.probe_timeout_ns = 10000000;
    ftc_context_t *ctx[N];
    ftc_group_t *g[N];
    int64_t in[N], out[N];
    for (unsigned r = 0; r < N; r++) {
        in[r] = r + 1;
        ftc_context_create(r, N, ftc_lb_ops(), ftc_lb_endpoint(w, r), &cfg,
                           &ctx[r]);
        ftc_lb_attach(w, r, ctx[r]);
        ftc_group_create(ctx[r], 1, 0, N, NULL, &g[r]);
    }
    ftc_lb_set_delay(w, SLOW, 100000000);    /* rank 4: 100 ms */

    allreduce_all(g, in, out, w);
    printf("allreduce 1:\n");
    for (unsigned r = 0; r < N; r++)
        printf("  rank %u: %-14s %2lld  knows 4 failed: %d  excluded: %d\n", r,
               ftc_err_name(g_status[r]), (long long)out[r],
               ftc_context_is_failed(ctx[r], SLOW),
               ftc_context_is_excluded(ctx[r]));

    allreduce_all(g, in, out, w);
    printf("allreduce 2 (rank 4 long failed, everyone else healthy):\n");
    for (unsigned r = 0; r < N; r++)
        if (r != SLOW)
            printf("  rank %u: %s\n", r,
                   g_init_rc[r] != FTC_OK ? ftc_err_name(g_init_rc[r])
                                          : ftc_err_name(g_status[r]));

    int bug = ftc_context_is_excluded(ctx[0]);
    printf(bug ? "ISSUE: healthy rank 0 was excluded by rank 4, which it "
                 "already knew had failed\n"
               : "ok: rank 0 stayed in\n");
    for (unsigned r = 0; r < N; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(w);
    return bug;
}
