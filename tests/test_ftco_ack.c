/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco allreduce's result carries the ACK of the DATA it answers
 * (docs/ftco.md, "ACKs carried by the result"), on the loopback:
 *
 * - fault-free at n = 2, 2 messages, not 4: the child's UP and the
 *   root's DOWN, which carries the UP's ACK and asks for no ACK of its
 *   own (docs/ftco.md, "No ACK of the result"); the
 *   root sends 1 and the child 1. With per-message timeouts the leaf
 *   ACKs the result as the paper's does: 3 (the DOWN still carries the
 *   UP's ACK, leaving in the UP's turn; the child sends 2). At n = 9
 *   (2-nomial), 2(n - 1), the plain tree's: the results to the 3 inner
 *   nodes below the root go unacknowledged too (docs/ftco.md, "No ACK of
 *   the result"). Reduce and bcast keep their 2(n - 1): a bcast's leaf
 *   still ACKs.
 * - a child whose parent crashes after the child's UP reached it, before
 *   any ACK or result came back, still finds out and delivers the
 *   result every other live process delivers: with the transport's
 *   reports, with the core's keepalive probes only, and with per-message
 *   timeouts (the parent crashed before and after its ACK). The crash is
 *   tied to the parent's send count, and the test checks it happened and,
 *   where no ACK reached the child, that the child counted the failure.
 * - an inner node that crashes after taking the (unacknowledged) result
 *   and passing it to one of its two children (2-ary tree of 6): the
 *   other finds out (it counts the failure) and delivers what every
 *   other live process delivers, with transport reports and with probes
 *   only; the root waited for no ACK from the inner node, so only the
 *   child's own re-routing or a push on a failure the root learns
 *   later can serve it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll/topology.h"
#include "ftcoll_loopback.h"

static int failures;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            failures++;                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
        }                                                                    \
    } while (0)

enum { NMAX = 16 };

typedef struct outcome {
    int calls, status;
    uint32_t failures_detected;
} outcome_t;

typedef struct world {
    uint32_t n;
    ftc_lb_world_t *lb;
    ftc_context_t *ctx[NMAX];
    ftc_group_t *g[NMAX];
    int64_t in[NMAX], out[NMAX];
    outcome_t res[NMAX];
} world_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    outcome_t *o = arg;
    o->calls++;
    o->status = c->status;
    o->failures_detected = c->stats.failures_detected;
}

typedef struct setup {
    uint32_t n;
    ftc_coll_t coll;
    ftc_tree_t tree;
    uint64_t ack_timeout_ns;
    bool keepalive_only;  /* no transport reports */
    uint32_t crash_rank;  /* UINT32_MAX: none */
    uint64_t crash_after; /* its sends before it crashes */
} setup_t;

/* Runs one collective to the end; the caller checks and frees. */
static void run(world_t *W, const setup_t *s)
{
    memset(W, 0, sizeof(*W));
    W->n = s->n;
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = s->n;
    lc.seed = 1;
    if (s->keepalive_only)
        lc.detect_delay_ns = UINT64_MAX;
    if (ftc_lb_world_create(&lc, &W->lb) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    for (uint32_t r = 0; r < s->n; r++) {
        if (ftc_context_create(r, s->n, ftc_lb_ops(),
                               ftc_lb_endpoint(W->lb, r), &cfg, &W->ctx[r])
                != FTC_OK)
            abort();
        ftc_lb_attach(W->lb, r, W->ctx[r]);
        if (ftc_group_create(W->ctx[r], 1, 0, s->n, NULL, &W->g[r]) != FTC_OK)
            abort();
    }
    if (s->crash_rank < s->n)
        ftc_lb_crash_after_sends(W->lb, s->crash_rank, s->crash_after);
    ftc_ftco_params_t fp;
    ftc_ftco_params_init(&fp);
    fp.tree = s->tree;
    fp.ack_timeout_ns = s->ack_timeout_ns;
    for (uint32_t r = 0; r < s->n; r++) {
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.algo = FTC_ALGO_FTCO;
        a.params = &fp;
        a.f = 0;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = 1;
        W->in[r] = 1 + (int64_t)r * 10;
        a.sendbuf = &W->in[r];
        a.recvbuf = &W->out[r];
        a.deliver = on_deliver;
        a.deliver_arg = &W->res[r];
        int rc = s->coll == FTC_COLL_ALLREDUCE
                     ? ftc_init_allreduce(W->g[r], &a, NULL)
                 : s->coll == FTC_COLL_REDUCE
                     ? ftc_init_reduce(W->g[r], &a, NULL)
                     : ftc_init_bcast(W->g[r], &a, NULL);
        if (rc != FTC_OK)
            abort();
    }
    ftc_lb_run(W->lb, UINT64_MAX);
}

static void done(world_t *W)
{
    for (uint32_t r = 0; r < W->n; r++)
        ftc_context_destroy(W->ctx[r]);
    ftc_lb_world_destroy(W->lb);
}

static setup_t plain(uint32_t n, ftc_coll_t coll, uint64_t ack_timeout_ns)
{
    setup_t s = {n, coll, {.kind = FTC_TREE_KNOMIAL, .k = 2}, ack_timeout_ns,
                 false, UINT32_MAX, 0};
    return s;
}

static void test_counts(void)
{
    static const uint64_t timeouts[] = {0, 20000};
    for (size_t t = 0; t < 2; t++) {
        world_t W;
        setup_t s = plain(2, FTC_COLL_ALLREDUCE, timeouts[t]);
        run(&W, &s);
        uint64_t all = ftc_lb_messages_sent(W.lb);
        uint64_t root = ftc_lb_rank_messages_sent(W.lb, 0);
        uint64_t child = ftc_lb_rank_messages_sent(W.lb, 1);
        printf("allreduce n=2, ack timeout %" PRIu64 " ns: %" PRIu64
               " messages (root %" PRIu64 ", child %" PRIu64 ")\n",
               timeouts[t], all, root, child);
        uint64_t want_child = timeouts[t] == 0 ? 1 : 2;
        CHECK(all == 1 + want_child && root == 1 && child == want_child,
              "n=2 allreduce, ack timeout %" PRIu64 ": %" PRIu64 " messages "
              "(root %" PRIu64 ", child %" PRIu64 "), not %" PRIu64
              " (1, %" PRIu64 ")",
              timeouts[t], all, root, child, 1 + want_child, want_child);
        for (uint32_t r = 0; r < 2; r++)
            CHECK(W.res[r].calls == 1 && W.res[r].status == FTC_OK
                      && W.out[r] == 12,
                  "n=2 rank %u: %d calls, %s, %" PRId64, r, W.res[r].calls,
                  ftc_strerror(W.res[r].status), W.out[r]);
        done(&W);
    }
    /* A larger tree, with inner nodes below the root (3 of them): every
     * edge's UP ACKed by its DOWN, and no DOWN ACKed, an inner node's
     * no more than a leaf's. */
    world_t W;
    setup_t s = plain(9, FTC_COLL_ALLREDUCE, 0);
    uint32_t inner = 0;
    for (uint32_t r = 1; r < 9; r++)
        inner += ftc_tree_children(&s.tree, 9, r, NULL, 0) > 0;
    run(&W, &s);
    CHECK(inner == 3 && ftc_lb_messages_sent(W.lb) == 2 * 8,
          "n=9 allreduce: %" PRIu64 " messages, not 2 * 8 (%u inner nodes)",
          ftc_lb_messages_sent(W.lb), inner);
    for (uint32_t r = 0; r < 9; r++)
        CHECK(W.res[r].calls == 1 && W.res[r].status == FTC_OK
                  && W.out[r] == 9 + 10 * 36,
              "n=9 rank %u: %d calls, %s, %" PRId64, r, W.res[r].calls,
              ftc_strerror(W.res[r].status), W.out[r]);
    done(&W);
    /* Reduce and bcast have no result to carry an ACK: DATA and ACK. */
    static const ftc_coll_t others[] = {FTC_COLL_REDUCE, FTC_COLL_BCAST};
    for (size_t c = 0; c < 2; c++) {
        s = plain(2, others[c], 0);
        run(&W, &s);
        CHECK(ftc_lb_messages_sent(W.lb) == 2, "n=2 %s: %" PRIu64
              " messages, not 2", ftc_coll_name(others[c]),
              ftc_lb_messages_sent(W.lb));
        done(&W);
    }
}

/* On the 2-ary tree of 4 (0: 1, 2; 1: 3), rank 1 crashes after
 * crash_after sends: its first is its UP to 0 (3's UP arrived first), its
 * second, with per-message timeouts, the ACK of 3's UP. Rank 3 must find
 * out and deliver what 0 and 2 deliver. */
static void test_parent_fails_after_up(void)
{
    static const struct {
        uint64_t ack_timeout_ns;
        bool keepalive_only;
        uint64_t crash_after;
        const char *what;
    } cases[] = {
        {0, false, 1, "transport reports"},
        {0, true, 1, "keepalive probes only"},
        {20000, true, 1, "per-message timeouts, before the ACK"},
        {20000, true, 2, "per-message timeouts, after the ACK"},
    };
    ftc_tree_t kary = {.kind = FTC_TREE_KARY, .k = 2};
    CHECK(ftc_tree_parent(&kary, 4, 3) == 1 && ftc_tree_parent(&kary, 4, 1) == 0,
          "the 2-ary tree of 4 is not 0: 1, 2; 1: 3");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        world_t W;
        setup_t s = {4, FTC_COLL_ALLREDUCE, kary, cases[i].ack_timeout_ns,
                     cases[i].keepalive_only, 1, cases[i].crash_after};
        run(&W, &s);
        CHECK(ftc_lb_is_crashed(W.lb, 1)
                  && ftc_lb_rank_messages_sent(W.lb, 1) == cases[i].crash_after,
              "%s: rank 1 did not crash after %" PRIu64 " sends (%" PRIu64
              " sent)", cases[i].what, cases[i].crash_after,
              ftc_lb_rank_messages_sent(W.lb, 1));
        CHECK(W.res[1].calls == 0, "%s: the crashed rank delivered",
              cases[i].what);
        for (uint32_t r = 0; r < 4; r++) {
            if (r == 1)
                continue;
            CHECK(W.res[r].calls == 1 && W.res[r].status == FTC_OK,
                  "%s: rank %u: %d calls, %s", cases[i].what, r,
                  W.res[r].calls, ftc_strerror(W.res[r].status));
            /* Rank 1's UP reached 0 with 3's input: all four counted. */
            CHECK(W.out[r] == W.out[0] && W.out[r] == 1 + 11 + 21 + 31,
                  "%s: rank %u has %" PRId64 ", rank 0 %" PRId64,
                  cases[i].what, r, W.out[r], W.out[0]);
        }
        /* With no ACK and no result from its parent, only finding out
         * ends rank 3's wait. (With the ACK, the root, timing out the
         * ACK of its DOWN to 1, may serve 3 from above first.) */
        if (cases[i].crash_after == 1)
            CHECK(W.res[3].failures_detected >= 1,
                  "%s: rank 3 never counted its parent's failure",
                  cases[i].what);
        printf("parent crashed after the UP (%s): rank 3 delivered %" PRId64
               ", %u failure(s) seen\n", cases[i].what, W.out[3],
               W.res[3].failures_detected);
        done(&W);
    }
}

/* On the 2-ary tree of 6 (0: 1, 2; 1: 3, 5; 2: 4), rank 1 crashes after 2
 * sends: its UP to 0, then the result to the first of its children; the
 * result reached it without an ACK asked, so rank 0 neither waits on it
 * nor learns of the crash. The other child must find out, re-route to 0
 * and be served from there. */
static void test_inner_fails_after_result(void)
{
    static const struct {
        bool keepalive_only;
        const char *what;
    } cases[] = {
        {false, "transport reports"},
        {true, "keepalive probes only"},
    };
    ftc_tree_t kary = {.kind = FTC_TREE_KARY, .k = 2};
    CHECK(ftc_tree_parent(&kary, 6, 3) == 1 && ftc_tree_parent(&kary, 6, 5) == 1
              && ftc_tree_parent(&kary, 6, 1) == 0
              && ftc_tree_children(&kary, 6, 3, NULL, 0) == 0
              && ftc_tree_children(&kary, 6, 5, NULL, 0) == 0,
          "the 2-ary tree of 6 is not 0: 1, 2; 1: 3, 5 (leaves)");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        world_t W;
        setup_t s = {6, FTC_COLL_ALLREDUCE, kary, 0, cases[i].keepalive_only,
                     1, 2};
        run(&W, &s);
        CHECK(ftc_lb_is_crashed(W.lb, 1) && ftc_lb_rank_messages_sent(W.lb, 1) == 2,
              "%s: rank 1 did not crash after 2 sends (%" PRIu64 " sent)",
              cases[i].what, ftc_lb_rank_messages_sent(W.lb, 1));
        /* Rank 1 took the result: its UP, with 3's and 5's inputs, went
         * up before it crashed, so every input is counted. */
        CHECK(W.res[1].calls == 1, "%s: the crashed rank did not deliver "
              "before its crash", cases[i].what);
        uint32_t found = 0;
        for (uint32_t r = 0; r < 6; r++) {
            if (r == 1)
                continue;
            CHECK(W.res[r].calls == 1 && W.res[r].status == FTC_OK
                      && W.out[r] == 6 + 10 * 15,
                  "%s: rank %u: %d calls, %s, %" PRId64, cases[i].what, r,
                  W.res[r].calls, ftc_strerror(W.res[r].status), W.out[r]);
            found += (r == 3 || r == 5) && W.res[r].failures_detected >= 1;
        }
        /* The child the result did not reach ended its wait only by
         * finding out. */
        CHECK(found == 1, "%s: %u of ranks 3, 5 counted their parent's "
              "failure, not 1", cases[i].what, found);
        printf("inner node crashed after the result (%s): ranks 3, 5 "
               "delivered %" PRId64 ", %" PRId64 "\n", cases[i].what, W.out[3],
               W.out[5]);
        done(&W);
    }
}

int main(void)
{
    test_counts();
    test_parent_fails_after_up();
    test_inner_fails_after_result();
    if (failures == 0)
        printf("ftco ack: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
