/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bcast process waiting for the value judges its Up by the paper's
 * per-message timeouts (docs/ftco.md, "The paper's timeouts"): past the
 * value's f_ETA it KEEPALIVEs Up, and a KEEPALIVE unanswered for
 * f_timeout excludes Up, with a verdict that a live Up refutes when it
 * answered in time (rule 7 of "A slow or stopped process"). On the
 * loopback, with a 20 us base and a stopped process (its messages 10 s
 * late, as the property checker's --slow):
 *
 * - the root stopped (2-nomial, n = 4): its children find it by their
 *   own KEEPALIVEs (FTCO_WF_PING) and exclude it with a per-message
 *   verdict (FTC_EXCLUDED_ASK_EXPIRED), not by the monitor's probes;
 *   the other processes deliver the same outcome and the root ends
 *   excluded. Before the bcast's wait used the timeouts, the children
 *   sent their Up no KEEPALIVE and the monitor's probe series judged it.
 * - a stopped process below a healthy Up chain (3-ary, n = 4: the root
 *   crashes after its DOWN to rank 1, rank 3 is stopped): rank 3 times
 *   out its live Up 1, then 2, and replaces the root with nobody left to
 *   gather from. Its verdicts reach 1 and 2 10 s late, well after they
 *   answered its KEEPALIVEs, so they refute them, and the stopped process,
 *   not they, gives in: 1 and 2 deliver the root's value and 3 ends
 *   excluded (without the refutation, 1 and 2 took the verdicts and 3
 *   stayed in the group with FTC_EROOT_FAILED).
 *
 * Faults are tied to sends (the root's crash) and the loopback's virtual
 * time; nothing depends on the machine's speed. FTCO_TRACE=1 prints every
 * message sent.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll_loopback.h"
/* the messages' kinds and flags, counted by the send wrapper */
#include "algo/ftco/kinds.h"
#include "wire/wire.h"

enum { N = 4 };

typedef struct outcome {
    int calls, status;
} outcome_t;

/* What each rank sent each other rank, by kind. */
typedef struct sent {
    uint32_t pings;      /* ftco KEEPALIVEs asking "are you alive?" */
    uint32_t probes;     /* the core monitor's probes */
    uint32_t ask_expired; /* per-message verdicts (EXCLUDED) */
    uint32_t probe_expired; /* the monitor's verdicts (EXCLUDED) */
} sent_t;

typedef struct world {
    ftc_lb_world_t *lb;
    ftc_context_t *ctx[N];
    ftc_group_t *g[N];
    int64_t in[N], out[N];
    outcome_t res[N];
    sent_t sent[N][N];
} world_t;

static world_t *current;
static ftc_transport_ops_t counting_ops;
static bool trace;

static uint32_t rank_of(void *tp)
{
    for (uint32_t r = 0; r < N; r++)
        if (ftc_lb_endpoint(current->lb, r) == tp)
            return r;
    return UINT32_MAX;
}

static int counting_send(void *tp, uint32_t dest, const void *buf, size_t len,
                         void *cookie)
{
    uint32_t r = rank_of(tp);
    ftc_wire_header_t h;
    if (r != UINT32_MAX && dest < N && !ftc_lb_is_crashed(current->lb, r)
        && ftc_wire_decode(buf, len, 0, N, &h) == FTC_OK) {
        sent_t *s = &current->sent[r][dest];
        if (h.kind == FTCO_MSG_KEEPALIVE && (h.flags & FTCO_WF_PING))
            s->pings++;
        else if (h.kind == FTC_MSG_PROBE)
            s->probes++;
        else if (h.kind == FTC_MSG_EXCLUDED && h.aux == FTC_EXCLUDED_ASK_EXPIRED)
            s->ask_expired++;
        else if (h.kind == FTC_MSG_EXCLUDED
                 && h.aux == FTC_EXCLUDED_PROBE_EXPIRED)
            s->probe_expired++;
        if (trace)
            printf("%12.6f  %u -> %u  kind %#x flags %#06x aux %u\n",
                   (double)ftc_lb_now(current->lb) / 1e9, r, dest, h.kind,
                   h.flags, h.aux);
    }
    return ftc_lb_ops()->send(tp, dest, buf, len, cookie);
}

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    outcome_t *o = arg;
    o->calls++;
    o->status = c->status;
}

/* One bcast from rank 0 on tree, rank slow's messages 10 s late, rank 0
 * crashing after crash_after sends (UINT64_MAX: never). */
static void run(world_t *W, ftc_tree_t tree, uint32_t slow,
                uint64_t crash_after)
{
    memset(W, 0, sizeof(*W));
    current = W;
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    lc.seed = 1;
    if (ftc_lb_world_create(&lc, &W->lb) != FTC_OK)
        abort();
    counting_ops = *ftc_lb_ops();
    counting_ops.send = counting_send;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    for (uint32_t r = 0; r < N; r++) {
        if (ftc_context_create(r, N, &counting_ops, ftc_lb_endpoint(W->lb, r),
                               &cfg, &W->ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(W->lb, r, W->ctx[r]);
        if (ftc_group_create(W->ctx[r], 1, 0, N, NULL, &W->g[r]) != FTC_OK)
            abort();
    }
    ftc_lb_set_delay(W->lb, slow, 10ull * 1000 * 1000 * 1000);
    if (crash_after != UINT64_MAX)
        ftc_lb_crash_after_sends(W->lb, 0, crash_after);
    ftc_ftco_params_t fp;
    ftc_ftco_params_init(&fp);
    fp.tree = tree;
    fp.ack_timeout_ns = 20000;
    for (uint32_t r = 0; r < N; r++) {
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.algo = FTC_ALGO_FTCO;
        a.params = &fp;
        a.f = 0;
        a.dtype = FTC_INT64;
        a.count = 1;
        W->in[r] = 1000 + r;
        W->out[r] = -1;
        a.sendbuf = &W->in[r];
        a.recvbuf = &W->out[r];
        a.deliver = on_deliver;
        a.deliver_arg = &W->res[r];
        if (ftc_init_bcast(W->g[r], &a, NULL) != FTC_OK)
            abort();
    }
    ftc_lb_run(W->lb, UINT64_MAX);
}

static void done(world_t *W)
{
    for (uint32_t r = 0; r < N; r++)
        ftc_context_destroy(W->ctx[r]);
    ftc_lb_world_destroy(W->lb);
    current = NULL;
}

static void test_stopped_root(void)
{
    world_t W;
    run(&W, (ftc_tree_t){.kind = FTC_TREE_KNOMIAL, .k = 2}, 0, UINT64_MAX);
    /* 2-nomial, n = 4: the root's children are 1 and 2. */
    for (uint32_t c = 1; c <= 2; c++) {
        const sent_t *s = &W.sent[c][0];
        printf("stopped root: rank %u sent it %u KEEPALIVEs, %u probes, "
               "verdicts: %u per-message, %u probe\n",
               c, s->pings, s->probes, s->ask_expired, s->probe_expired);
        CHECK_MSG(s->pings >= 1 && s->ask_expired == 1 && s->probe_expired == 0,
              "rank %u judged the stopped root with %u KEEPALIVEs, %u "
              "per-message and %u probe verdicts, not by its own timeouts",
              c, s->pings, s->ask_expired, s->probe_expired);
    }
    /* (A healthy process may still end excluded after it delivered: the
     * stopped root's late "heard you" overturns its refutation, as with
     * the monitor's verdicts: docs/ftco.md, "Not built yet".) */
    for (uint32_t r = 1; r < N; r++)
        CHECK_MSG(W.res[r].calls == 1 && W.res[r].status == W.res[1].status,
              "rank %u: %d calls, %s (rank 1: %s)", r, W.res[r].calls,
              ftc_strerror(W.res[r].status), ftc_strerror(W.res[1].status));
    CHECK_MSG(ftc_context_is_excluded(W.ctx[0]),
          "the stopped root is still in the group");
    done(&W);
}

static void test_slow_below_healthy_up(void)
{
    world_t W;
    run(&W, (ftc_tree_t){.kind = FTC_TREE_KARY, .k = 3}, 3, 1);
    CHECK_MSG(ftc_lb_is_crashed(W.lb, 0), "the root did not crash");
    CHECK_MSG(W.sent[3][1].ask_expired == 1,
          "rank 3 sent its Up 1 %u per-message verdicts, not 1",
          W.sent[3][1].ask_expired);
    for (uint32_t r = 1; r <= 2; r++)
        CHECK_MSG(W.res[r].calls == 1 && W.res[r].status == FTC_OK
                  && W.out[r] == W.in[0],
              "rank %u: %d calls, %s, %" PRId64 " (the root's value is %"
              PRId64 ")", r, W.res[r].calls, ftc_strerror(W.res[r].status),
              W.out[r], W.in[0]);
    printf("slow below a healthy Up: rank 3 delivered %s and is %s\n",
           ftc_strerror(W.res[3].status),
           ftc_context_is_excluded(W.ctx[3]) ? "excluded" : "in the group");
    CHECK_MSG(ftc_context_is_excluded(W.ctx[3]),
          "the stopped rank 3 stays in the group (it delivered %s where "
          "1 and 2 have the value)", ftc_strerror(W.res[3].status));
    done(&W);
}

int main(void)
{
    const char *t = getenv("FTCO_TRACE");
    trace = t != NULL && *t == '1';
    test_stopped_root();
    test_slow_below_healthy_up();
    return check_report();
}
