/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agreement's failure-free round as the caller's choice per group
 * (ftc_group_set_ulfm_params, ftcoll/mitigation.h; docs/ulfm.md,
 * "Choosing the failure-free round"), on the loopback:
 *
 *   - members with different choices: every member's agreement ends
 *     with FTC_EMISMATCH, the one that chose otherwise and its peers
 *     alike, once, and the run ends (no hang, no endless traffic); once
 *     it sets the same choice, the next agreement on the group delivers
 *     FTC_OK with every contribution. Every pair of choices, the odd
 *     member first, last or in the middle, n = 2 .. 9 and 16;
 *   - each choice's failure-free message count (rd2: 2 p log2 p +
 *     4 (n - p); rd4 the same at radix 4; tree: 4 (n - 1), and no member
 *     sends more than 2 log2 n + 2), and the default is rd2;
 *   - a group made by ftc_init_shrink or ftc_group_shrink_excluding keeps
 *     the choice of the group it came from (its agreement's message
 *     count says which round ran);
 *   - the uniform allreduce runs its agreement with the group's choice;
 *   - bad input of the setter and of the name functions, and the
 *     registry's listing of the parameter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"
#include "ftcoll_loopback.h"
#include "ulfm_world.h"

#define MAX_N 16
/* A run that handles this many events has not settled: endless traffic. */
#define EVENT_BOUND 1000000u

static const ftc_agree_round_t rounds[] = {
    FTC_AGREE_ROUND_RD2, FTC_AGREE_ROUND_RD4, FTC_AGREE_ROUND_TREE};
#define NROUNDS (sizeof(rounds) / sizeof(rounds[0]))

static void world(uint32_t n, ulfm_world_t *w)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    ulfm_world_create(&lc, NULL, 1, 0, w);
}

static int set_round(ftc_group_t *g, ftc_agree_round_t round)
{
    ftc_ulfm_params_t p;
    ftc_ulfm_params_init(&p);
    p.agree_round = round;
    return ftc_group_set_ulfm_params(g, &p);
}

/* Runs one agreement at every rank of groups g (n of them; NULL: a rank
 * that takes no part) with every bit but the rank's own; t and v get
 * the outcomes. The messages it took. */
static uint64_t agree_all(ftc_lb_world_t *lb, ftc_group_t **g, uint32_t n,
                          ulfm_tally_t *t, uint64_t *v)
{
    uint64_t before = ftc_lb_messages_sent(lb);
    for (uint32_t r = 0; r < n; r++) {
        t[r] = (ulfm_tally_t){0};
        v[r] = 0;
        if (g[r] != NULL)
            CHECK_OK(ftc_init_agree(g[r], ~(UINT64_C(1) << r), &v[r], ulfm_on_tally,
                                    &t[r], NULL));
    }
    CHECK_MSG(ftc_lb_run(lb, EVENT_BOUND) < EVENT_BOUND,
              "the run did not settle within %u events", EVENT_BOUND);
    return ftc_lb_messages_sent(lb) - before;
}

/* The AND of every bit but each of ranks 0..n-1's own. */
static uint64_t all_contributed(uint32_t n)
{
    return n >= 64 ? 0 : ~((UINT64_C(1) << n) - 1);
}

static void test_mismatch(uint32_t n, ftc_agree_round_t common,
                          ftc_agree_round_t odd, uint32_t odd_rank)
{
    static char ctx[96]; /* (check.c keeps the pointer) */
    snprintf(ctx, sizeof(ctx), "mismatch n=%u: %s, rank %u %s", n,
             ftc_agree_round_name(common), odd_rank, ftc_agree_round_name(odd));
    check_set_context(ctx);
    ulfm_world_t w;
    world(n, &w);
    ulfm_world_set_round(&w, common);
    CHECK_OK(set_round(w.g[odd_rank], odd));
    ulfm_tally_t t[MAX_N];
    uint64_t v[MAX_N];
    (void)agree_all(w.lb, w.g, n, t, v);
    for (uint32_t r = 0; r < n; r++) {
        CHECK_MSG(t[r].calls == 1, "rank %u delivered %d times", r, t[r].calls);
        CHECK_RC(t[r].status, FTC_EMISMATCH);
    }
    /* The group goes on: with the same choice everywhere, the next
     * agreement delivers every contribution. */
    CHECK_OK(set_round(w.g[odd_rank], common));
    (void)agree_all(w.lb, w.g, n, t, v);
    for (uint32_t r = 0; r < n; r++) {
        CHECK_MSG(t[r].calls == 1, "rank %u delivered %d times", r, t[r].calls);
        CHECK_RC(t[r].status, FTC_OK);
        CHECK_EQ(v[r], all_contributed(n));
        CHECK_EQ(t[r].nfailed, 0);
    }
    ulfm_world_destroy(&w);
}

/* The failure-free round's messages (docs/ulfm.md, "Cost"). */
static uint64_t expected_messages(ftc_agree_round_t round, uint32_t n)
{
    if (round == FTC_AGREE_ROUND_TREE)
        return 4 * (uint64_t)(n - 1);
    uint64_t k = round == FTC_AGREE_ROUND_RD4 ? 4 : 2;
    if (k > n)
        k = n < 2 ? 2 : n;
    uint64_t p = 1, l = 0;
    while (p <= n / k) {
        p *= k;
        l++;
    }
    return 2 * p * l * (k - 1) + 4 * (n - p);
}

static uint32_t log2_ceil(uint32_t n)
{
    uint32_t l = 0;
    while ((UINT64_C(1) << l) < n)
        l++;
    return l;
}

static void test_costs(void)
{
    check_set_context("failure-free costs");
    for (uint32_t n = 1; n <= MAX_N; n++)
        for (int which = -1; which < (int)NROUNDS; which++) {
            /* (-1: no parameters set: the default, rd2) */
            ftc_agree_round_t round =
                which < 0 ? FTC_AGREE_ROUND_RD2 : rounds[which];
            ulfm_world_t w;
            world(n, &w);
            if (which >= 0)
                ulfm_world_set_round(&w, round);
            ulfm_tally_t t[MAX_N];
            uint64_t v[MAX_N];
            uint64_t m = agree_all(w.lb, w.g, n, t, v);
            CHECK_MSG(m == expected_messages(round, n),
                      "n=%u %s%s: %llu messages, want %llu", n,
                      ftc_agree_round_name(round),
                      which < 0 ? " (default)" : "", (unsigned long long)m,
                      (unsigned long long)expected_messages(round, n));
            for (uint32_t r = 0; r < n; r++) {
                CHECK_RC(t[r].status, FTC_OK);
                CHECK_EQ(v[r], all_contributed(n));
                /* Tree waves: one message up per wave, one per child
                 * down; a binomial tree's root has log2 n children. */
                if (round == FTC_AGREE_ROUND_TREE)
                    CHECK_MSG(ftc_lb_rank_messages_sent(w.lb, r)
                                  <= 2 * (uint64_t)log2_ceil(n) + 2,
                              "n=%u tree: rank %u sent %llu", n, r,
                              (unsigned long long)ftc_lb_rank_messages_sent(
                                  w.lb, r));
            }
            ulfm_world_destroy(&w);
        }
}

/* A group shrunk from a group with a choice runs the same choice. */
static void test_inherit(ftc_agree_round_t round)
{
    static char ctx[64]; /* (check.c keeps the pointer) */
    snprintf(ctx, sizeof(ctx), "inherit %s", ftc_agree_round_name(round));
    check_set_context(ctx);
    enum { N = 7, DEAD = 2 };
    ulfm_world_t w;
    world(N, &w);
    ulfm_world_set_round(&w, round);
    ftc_lb_crash(w.lb, DEAD);
    for (uint32_t r = 0; r < N; r++)
        if (r != DEAD)
            ftc_transport_peer_failed(w.ctx[r], DEAD);
    ulfm_tally_t t[N];
    ftc_group_t *ng[N] = {0};
    for (uint32_t r = 0; r < N; r++) {
        t[r] = (ulfm_tally_t){0};
        if (r != DEAD)
            CHECK_OK(ftc_init_shrink(w.g[r], 5, &ng[r], ulfm_on_tally, &t[r], NULL));
    }
    CHECK(ftc_lb_run(w.lb, EVENT_BOUND) < EVENT_BOUND);
    for (uint32_t r = 0; r < N; r++)
        if (r != DEAD) {
            CHECK_RC(t[r].status, FTC_OK);
            if (ng[r] == NULL)
                return;
        }
    /* The shrunk group (N - 1 members, none failed): its agreement's
     * messages are the choice's. */
    uint64_t v[N];
    uint64_t m = agree_all(w.lb, ng, N, t, v);
    CHECK_MSG(m == expected_messages(round, N - 1),
              "after shrink: %llu messages, want %s's %llu",
              (unsigned long long)m, ftc_agree_round_name(round),
              (unsigned long long)expected_messages(round, N - 1));
    /* And one made from it by a list: the last member left out. */
    ftc_group_t *xg[N] = {0};
    for (uint32_t r = 0; r < N; r++) {
        if (ng[r] == NULL)
            continue;
        uint32_t last = N - 2; /* its group rank in the shrunk group */
        if (ftc_group_rank(ng[r]) == last)
            continue;
        CHECK_OK(ftc_group_shrink_excluding(ng[r], 6, &last, 1, &xg[r]));
    }
    m = agree_all(w.lb, xg, N, t, v);
    CHECK_MSG(m == expected_messages(round, N - 2),
              "after shrink_excluding: %llu messages, want %s's %llu",
              (unsigned long long)m, ftc_agree_round_name(round),
              (unsigned long long)expected_messages(round, N - 2));
    for (uint32_t r = 0; r < N; r++)
        if (xg[r] != NULL)
            CHECK_RC(t[r].status, FTC_OK);
    ulfm_world_destroy(&w);
}

/* The uniform allreduce's agreement runs the group's round: the same
 * value everywhere with each, and members that chose differently see
 * FTC_EMISMATCH. */
static void test_uniform(ftc_agree_round_t round, bool mismatch)
{
    static char ctx[64]; /* (check.c keeps the pointer) */
    snprintf(ctx, sizeof(ctx), "uniform allreduce %s%s",
             ftc_agree_round_name(round), mismatch ? ", one differs" : "");
    check_set_context(ctx);
    enum { N = 6 };
    ulfm_world_t w;
    world(N, &w);
    ulfm_world_set_round(&w, round);
    if (mismatch)
        CHECK_OK(set_round(w.g[N - 1], round == FTC_AGREE_ROUND_TREE
                                           ? FTC_AGREE_ROUND_RD2
                                           : FTC_AGREE_ROUND_TREE));
    ulfm_tally_t t[N];
    uint64_t in[N], out[N];
    for (uint32_t r = 0; r < N; r++) {
        t[r] = (ulfm_tally_t){0};
        in[r] = 1;
        out[r] = 0;
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.f = 1;
        a.dtype = FTC_UINT64;
        a.op = FTC_SUM;
        a.count = 1;
        a.sendbuf = &in[r];
        a.recvbuf = &out[r];
        a.deliver = ulfm_on_tally;
        a.deliver_arg = &t[r];
        a.uniform = 1;
        CHECK_OK(ftc_init_allreduce(w.g[r], &a, NULL));
    }
    CHECK(ftc_lb_run(w.lb, EVENT_BOUND) < EVENT_BOUND);
    for (uint32_t r = 0; r < N; r++) {
        CHECK_MSG(t[r].calls == 1, "rank %u delivered %d times", r, t[r].calls);
        if (mismatch) {
            CHECK_RC(t[r].status, FTC_EMISMATCH);
        } else {
            CHECK_RC(t[r].status, FTC_OK);
            CHECK_EQ(out[r], N);
        }
    }
    ulfm_world_destroy(&w);
}

static void test_bad_input(void)
{
    check_set_context("bad input");
    ulfm_world_t w;
    world(2, &w);
    ftc_ulfm_params_t p;
    ftc_ulfm_params_init(&p);
    CHECK_EQ(p.size, sizeof(ftc_ulfm_params_t));
    CHECK_EQ((int)p.agree_round, (int)FTC_AGREE_ROUND_RD2);
    ftc_ulfm_params_init(NULL); /* (does nothing) */
    CHECK_RC(ftc_group_set_ulfm_params(NULL, &p), FTC_EINVAL);
    CHECK_RC(ftc_group_set_ulfm_params(w.g[0], NULL), FTC_EINVAL);
    ftc_ulfm_params_t small = p;
    small.size = sizeof(size_t);
    CHECK_RC(ftc_group_set_ulfm_params(w.g[0], &small), FTC_EINVAL);
    ftc_ulfm_params_t unknown = p;
    unknown.agree_round = (ftc_agree_round_t)3;
    CHECK_RC(ftc_group_set_ulfm_params(w.g[0], &unknown), FTC_EINVAL);
    unknown.agree_round = (ftc_agree_round_t)-1;
    CHECK_RC(ftc_group_set_ulfm_params(w.g[0], &unknown), FTC_EINVAL);
    CHECK_OK(ftc_group_set_ulfm_params(w.g[0], &p));
    /* A refused call changed nothing: rank 0 still runs rd2, as rank 1
     * does, so an agreement between them works. */
    ulfm_tally_t t[2];
    uint64_t v[2];
    (void)agree_all(w.lb, w.g, 2, t, v);
    CHECK_RC(t[0].status, FTC_OK);
    CHECK_RC(t[1].status, FTC_OK);
    ulfm_world_destroy(&w);

    ftc_agree_round_t r = FTC_AGREE_ROUND_RD4;
    CHECK_RC(ftc_agree_round_parse("rd3", &r), FTC_EINVAL);
    CHECK_RC(ftc_agree_round_parse("", &r), FTC_EINVAL);
    CHECK_RC(ftc_agree_round_parse(NULL, &r), FTC_EINVAL);
    CHECK_RC(ftc_agree_round_parse("tree", NULL), FTC_EINVAL);
    CHECK_EQ((int)r, (int)FTC_AGREE_ROUND_RD4);
    CHECK(ftc_agree_round_name((ftc_agree_round_t)3) == NULL);
    for (unsigned i = 0; i < NROUNDS; i++) {
        const char *name = ftc_agree_round_name(rounds[i]);
        CHECK(name != NULL);
        CHECK_OK(ftc_agree_round_parse(name, &r));
        CHECK_EQ((int)r, (int)rounds[i]);
    }

    /* The registry lists the parameter, with its default. */
    const ftc_algo_info_t *ulfm = NULL;
    for (uint32_t i = 0; i < ftc_algo_count(); i++)
        if (ftc_algo_info(i)->id == FTC_ALGO_ULFM)
            ulfm = ftc_algo_info(i);
    if (CHECK(ulfm != NULL) && CHECK_EQ(ulfm->nparams, 1)) {
        CHECK_STR_EQ(ulfm->params[0].name, "agree_round");
        CHECK_STR_EQ(ulfm->params[0].default_value, "rd2");
        CHECK_STR_EQ(ulfm->params_type, "ftc_ulfm_params_t");
    }
}

int main(void)
{
    static const uint32_t sizes[] = {2, 3, 4, 5, 6, 7, 8, 9, 16};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint32_t n = sizes[i];
        for (unsigned a = 0; a < NROUNDS; a++)
            for (unsigned b = 0; b < NROUNDS; b++) {
                if (a == b)
                    continue;
                test_mismatch(n, rounds[a], rounds[b], 0);
                test_mismatch(n, rounds[a], rounds[b], n - 1);
                test_mismatch(n, rounds[a], rounds[b], n / 2);
            }
    }
    test_costs();
    for (unsigned i = 0; i < NROUNDS; i++) {
        test_inherit(rounds[i]);
        test_uniform(rounds[i], false);
        test_uniform(rounds[i], true);
    }
    test_bad_input();
    return check_report();
}
