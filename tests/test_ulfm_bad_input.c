/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm family's calls misused (docs/ulfm.md, "Bad input"): each gets
 * a clear error code, the members never hang on it, and nothing stays
 * allocated (run under ASan, which fails the test on a leak):
 *
 *   - a group the caller is not in: no handle to one can be made
 *     (ftc_group_create refuses a member list without the caller), and
 *     once the others declared this process failed every call on the
 *     group returns FTC_EEXCLUDED;
 *   - a shrink whose new id collides with a live group (id, epoch + 1):
 *     FTC_EINVAL at the caller, FTC_EPEER_INVALID at the others;
 *   - a shrink with no failure known and no invalidation (MPI: class
 *     ARG): FTC_EINVAL, also where only some members know of a failure;
 *   - teardown: an agreement or shrink in flight when its context or
 *     group is destroyed delivers FTC_ECANCELED once and creates no
 *     group; a call from such a callback on the group being destroyed
 *     returns FTC_ECANCELED and starts nothing; destroying it again from
 *     there does nothing.
 * Also the rank translation of shrunk groups (stored as the world minus
 * the excluded ranks), against a plain member list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"
#include "ftcoll_loopback.h"
#include "ulfm_world.h"

static int give_up(void *arg)
{
    (void)arg;
    return FTC_ECANCELED;
}

static void world(uint32_t n, ulfm_world_t *w)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    ulfm_world_create(&lc, NULL, 1, 0, w);
}

static void test_not_a_member(void)
{
    check_set_context("not a member");
    enum { N = 3 };
    ulfm_world_t w;
    world(N, &w);
    /* No handle to a group without the caller can be made. */
    uint32_t others[] = {1, 2};
    ftc_group_t *g = NULL;
    CHECK_RC(ftc_group_create(w.ctx[0], 9, 0, 2, others, &g), FTC_EINVAL);
    CHECK(g == NULL);

    /* Rank 0 declares rank 1 failed (a false suspicion: suspicion is
     * final); rank 1's agreement reaches it, and rank 1 learns that it
     * was excluded. */
    ftc_transport_peer_failed(w.ctx[0], 1);
    ulfm_tally_t t[N] = {{0}};
    uint64_t v[N];
    for (uint32_t r = 0; r < N; r++)
        CHECK_OK(ftc_init_agree(w.g[r], ~(UINT64_C(1) << r), &v[r], ulfm_on_tally,
                                &t[r], NULL));
    ftc_lb_run(w.lb, UINT64_MAX);
    CHECK_EQ(t[1].calls, 1);
    CHECK_RC(t[1].status, FTC_EEXCLUDED);
    for (uint32_t r = 0; r < N; r += 2) {
        CHECK_EQ(t[r].calls, 1);
        CHECK_RC(t[r].status, FTC_OK);
        CHECK_EQ(t[r].nfailed, 1u);
    }
    /* From then on rank 1 is not in the group: every call says so, and
     * none starts anything. */
    ftc_group_t *ng = NULL;
    ulfm_tally_t late = {0};
    CHECK_RC(ftc_init_agree(w.g[1], 1, &v[1], ulfm_on_tally, &late, NULL),
             FTC_EEXCLUDED);
    CHECK_RC(ftc_init_shrink(w.g[1], 2, &ng, ulfm_on_tally, &late, NULL),
             FTC_EEXCLUDED);
    CHECK_RC(ftc_group_invalidate(w.g[1]), FTC_EEXCLUDED);
    uint64_t one = 1;
    CHECK_RC(ftc_agree(w.g[1], &one, NULL, 0, NULL, give_up, NULL),
             FTC_EEXCLUDED);
    ftc_lb_run(w.lb, UINT64_MAX);
    CHECK_EQ(late.calls, 0);
    CHECK(ng == NULL);
    ulfm_world_destroy(&w);
}

static void test_id_collision(void)
{
    check_set_context("new id collides");
    enum { N = 4 };
    ulfm_world_t w;
    world(N, &w);
    ftc_lb_crash(w.lb, 3);
    for (uint32_t r = 0; r < N - 1; r++)
        ftc_transport_peer_failed(w.ctx[r], 3);
    /* Rank 0 already has a group (5, 1): a shrink of (1, 0) to id 5
     * would make a second one. */
    ftc_group_t *other = NULL;
    CHECK_OK(ftc_group_create(w.ctx[0], 5, 1, N, NULL, &other));
    ftc_group_t *ng[N] = {NULL};
    ulfm_tally_t t[N] = {{0}};
    CHECK_RC(ftc_init_shrink(w.g[0], 5, &ng[0], ulfm_on_tally, &t[0], NULL),
             FTC_EINVAL);
    for (uint32_t r = 1; r < N - 1; r++)
        CHECK_OK(ftc_init_shrink(w.g[r], 5, &ng[r], ulfm_on_tally, &t[r], NULL));
    ftc_lb_run(w.lb, UINT64_MAX);
    CHECK_EQ(t[0].calls, 0);
    for (uint32_t r = 1; r < N - 1; r++) {
        CHECK_EQ(t[r].calls, 1);
        CHECK_RC(t[r].status, FTC_EPEER_INVALID);
        CHECK(ng[r] == NULL);
    }
    /* The exclusion-list shrink refuses it too. */
    ftc_group_t *ex = NULL;
    uint32_t dead = 3;
    CHECK_RC(ftc_group_shrink_excluding(w.g[0], 5, &dead, 1, &ex), FTC_EINVAL);
    CHECK(ex == NULL);
    ulfm_world_destroy(&w);
}

static void test_nothing_to_shrink(void)
{
    check_set_context("nothing to shrink");
    enum { N = 4 };
    ulfm_world_t w;
    world(N, &w);
    ftc_group_t *ng[N] = {NULL};
    ulfm_tally_t t[N] = {{0}};
    /* Nobody knows of a failure: an error of class ARG everywhere. */
    for (uint32_t r = 0; r < N; r++)
        CHECK_RC(ftc_init_shrink(w.g[r], 2, &ng[r], ulfm_on_tally, &t[r], NULL),
                 FTC_EINVAL);
    ftc_lb_run(w.lb, UINT64_MAX);
    for (uint32_t r = 0; r < N; r++)
        CHECK_EQ(t[r].calls, 0);
    /* Only rank 0 knows rank 3 failed: the others refuse, and rank 0's
     * shrink ends with FTC_EPEER_INVALID instead of waiting. */
    ftc_lb_crash(w.lb, 3);
    ftc_transport_peer_failed(w.ctx[0], 3);
    CHECK_OK(ftc_init_shrink(w.g[0], 2, &ng[0], ulfm_on_tally, &t[0], NULL));
    for (uint32_t r = 1; r < N - 1; r++)
        CHECK_RC(ftc_init_shrink(w.g[r], 2, &ng[r], ulfm_on_tally, &t[r], NULL),
                 FTC_EINVAL);
    ftc_lb_run(w.lb, UINT64_MAX);
    CHECK_EQ(t[0].calls, 1);
    CHECK_RC(t[0].status, FTC_EPEER_INVALID);
    CHECK(ng[0] == NULL);
    ulfm_world_destroy(&w);
}

/* ---- teardown --------------------------------------------------------- */

typedef struct reenter {
    ftc_group_t *group;
    int calls, status;
    int rc_agree, rc_shrink, rc_invalidate, rc_allreduce, rc_finalize;
    uint64_t value;
    ftc_group_t *ng;
} reenter_t;

static void on_cancel_reenter(const ftc_completion_t *c, void *arg)
{
    reenter_t *x = arg;
    x->calls++;
    x->status = c->status;
    if (c->status != FTC_ECANCELED)
        return;
    /* The group is being destroyed: every call on it is refused. */
    x->rc_agree = ftc_init_agree(x->group, 1, &x->value, on_cancel_reenter,
                                 x, NULL);
    x->rc_shrink = ftc_init_shrink(x->group, 3, &x->ng, on_cancel_reenter, x,
                                   NULL);
    x->rc_invalidate = ftc_group_invalidate(x->group);
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.sendbuf = &x->value;
    a.recvbuf = &x->value;
    a.deliver = on_cancel_reenter;
    a.deliver_arg = x;
    x->rc_allreduce = ftc_init_allreduce(x->group, &a, NULL);
    x->rc_finalize = ftc_group_finalize(x->group, on_cancel_reenter, x);
    ftc_group_destroy(x->group); /* again: nothing */
}

static void test_teardown(void)
{
    check_set_context("teardown");
    enum { N = 4 };
    ulfm_world_t w;
    world(N, &w);
    /* Rank 3 is dead and known so: shrinks may start; nothing runs the
     * world, so every operation is in flight at teardown. */
    ftc_lb_crash(w.lb, 3);
    for (uint32_t r = 0; r < N - 1; r++)
        ftc_transport_peer_failed(w.ctx[r], 3);
    reenter_t agree[N], shrink[N];
    memset(agree, 0, sizeof(agree));
    memset(shrink, 0, sizeof(shrink));
    for (uint32_t r = 0; r < N - 1; r++) {
        agree[r].group = shrink[r].group = w.g[r];
        CHECK_OK(ftc_init_agree(w.g[r], 7, &agree[r].value, on_cancel_reenter,
                                &agree[r], NULL));
        CHECK_OK(ftc_init_shrink(w.g[r], 2, &shrink[r].ng, on_cancel_reenter,
                                 &shrink[r], NULL));
    }
    /* Rank 0's group alone first, then every context. */
    ftc_group_destroy(w.g[0]);
    CHECK_EQ(agree[0].calls, 1);
    CHECK_RC(agree[0].status, FTC_ECANCELED);
    CHECK_EQ(shrink[0].calls, 1);
    CHECK_RC(shrink[0].status, FTC_ECANCELED);
    ulfm_world_destroy(&w);
    for (uint32_t r = 0; r < N - 1; r++) {
        reenter_t *x[2] = {&agree[r], &shrink[r]};
        for (int i = 0; i < 2; i++) {
            CHECK_EQ(x[i]->calls, 1);
            CHECK_RC(x[i]->status, FTC_ECANCELED);
            CHECK_RC(x[i]->rc_agree, FTC_ECANCELED);
            CHECK_RC(x[i]->rc_shrink, FTC_ECANCELED);
            CHECK_RC(x[i]->rc_invalidate, FTC_ECANCELED);
            CHECK_RC(x[i]->rc_allreduce, FTC_ECANCELED);
            CHECK_RC(x[i]->rc_finalize, FTC_ECANCELED);
        }
        CHECK(shrink[r].ng == NULL);
    }
}

/* ---- shrunk groups' rank translation ------------------------------------ */

static void test_translation(void)
{
    check_set_context("shrunk group ranks");
    enum { N = 40 };
    ulfm_world_t w;
    world(N, &w);
    /* Twice shrunk at rank 20: first without 0, 5, 6, 39 (unsorted, a
     * duplicate), then without the new group's ranks 0 and 10. */
    uint32_t ex1[] = {39, 6, 0, 5, 6};
    ftc_group_t *g1 = NULL, *g2 = NULL;
    CHECK_OK(ftc_group_shrink_excluding(w.g[20], 2, ex1, 5, &g1));
    uint32_t ex2[] = {10, 0};
    CHECK_OK(ftc_group_shrink_excluding(g1, 3, ex2, 2, &g2));
    /* What they must hold, by a plain walk. */
    bool gone[N] = {false};
    gone[0] = gone[5] = gone[6] = gone[39] = true;
    uint32_t want1[N], n1 = 0;
    for (uint32_t r = 0; r < N; r++)
        if (!gone[r])
            want1[n1++] = r;
    gone[want1[0]] = gone[want1[10]] = true;
    uint32_t want2[N], n2 = 0;
    for (uint32_t r = 0; r < N; r++)
        if (!gone[r])
            want2[n2++] = r;
    CHECK_EQ(ftc_group_size(g1), n1);
    CHECK_EQ(ftc_group_size(g2), n2);
    CHECK_EQ(ftc_group_epoch(g2), 2u);
    for (uint32_t i = 0; i < n1; i++)
        CHECK_EQ(ftc_group_world_rank(g1, i), want1[i]);
    for (uint32_t i = 0; i < n2; i++)
        CHECK_EQ(ftc_group_world_rank(g2, i), want2[i]);
    CHECK_EQ(ftc_group_world_rank(g2, n2), UINT32_MAX);
    CHECK_EQ(ftc_group_world_rank(g2, ftc_group_rank(g2)), 20u);
    /* World -> group rank, through the failed members: ranks 2, 7 (in
     * g2) and 6 (not in it) fail. */
    ftc_transport_peer_failed(w.ctx[20], 2);
    ftc_transport_peer_failed(w.ctx[20], 6);
    ftc_transport_peer_failed(w.ctx[20], 7);
    uint32_t f[4] = {0};
    CHECK_EQ(ftc_group_failed(g2, f, 4), 2u);
    uint32_t g1_of_7 = 0, g2_of_2 = 0, g2_of_7 = 0;
    for (uint32_t i = 0; i < n1; i++)
        if (want1[i] == 7)
            g1_of_7 = i;
    for (uint32_t i = 0; i < n2; i++) {
        if (want2[i] == 2)
            g2_of_2 = i;
        if (want2[i] == 7)
            g2_of_7 = i;
    }
    CHECK_EQ(f[0], g2_of_2);
    CHECK_EQ(f[1], g2_of_7);
    CHECK_EQ(ftc_group_failed(g1, f, 4), 2u);
    CHECK_EQ(f[1], g1_of_7);
    /* A member list group shrinks the old way, to the same ranks. */
    ftc_group_t *gl = NULL, *gl2 = NULL;
    CHECK_OK(ftc_group_create(w.ctx[20], 7, 0, n1, want1, &gl));
    uint32_t ex3[] = {0, 10};
    CHECK_OK(ftc_group_shrink_excluding(gl, 7, ex3, 2, &gl2));
    CHECK_EQ(ftc_group_size(gl2), n2);
    for (uint32_t i = 0; i < n2; i++)
        CHECK_EQ(ftc_group_world_rank(gl2, i), want2[i]);
    ulfm_world_destroy(&w);
}

int main(void)
{
    test_not_a_member();
    test_id_collision();
    test_nothing_to_shrink();
    test_teardown();
    test_translation();
    return check_report();
}
