/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery after failures with the ulfm family, as MPI's chapter 17
 * example 17.2 does it, over failure schedules on the loopback:
 *
 *   1. every rank starts a corrected allreduce on the group; the
 *      invalidators (one rank, or two at once) invalidate the group
 *      right away, and ranks crash before or after any of their sends;
 *   2. invalidate: every live rank's allreduce delivers exactly once
 *      (FTC_OK or FTC_EINVALIDATED); if an invalidator is alive at the
 *      end, or any live rank learned the invalidation, every live rank
 *      did (reliable broadcast); then ftc_init_allreduce returns
 *      FTC_EINVALIDATED at every invalidated rank;
 *   3. shrink: every live rank delivers; every rank that delivered
 *      (crashed ones included) got the same (id, epoch) and members: the
 *      old members outside the agreed failed set, in their old order;
 *      the failed set holds crashed ranks only, so every live rank is a
 *      member;
 *   4. the new group is usable at once: a corrected allreduce of
 *      ones on it delivers at every live rank, the same value at all,
 *      within [live members, members].
 * Plus failure ack / get-acked, the exclusion-list shrink and the bad
 * input of the family's calls.
 *
 *   test_ulfm_recovery [--max-n N] [--random RUNS] [--seed S]
 *                      [--agree-round rd2|rd4|tree]
 * (the schedules' groups set to that failure-free round of the agreement;
 * default rd2).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"

#include "check.h"
#include "ulfm_args.h"
#include "ulfm_world.h"

#define MAX_CRASH 12
#define NEW_ID 9

typedef struct schedule {
    uint32_t n;
    uint64_t seed;
    int detect;
    uint32_t ninv;
    uint32_t inv[2];
    uint32_t ncrash;
    ulfm_crash_t crash[MAX_CRASH];
} schedule_t;

typedef struct rank_state {
    int ar_delivered, ar_status;
    int shrink_delivered, shrink_status;
    ftc_group_t *newgroup;
    int ar2_delivered, ar2_status;
    int32_t ar2_value;
    int32_t one;
    int32_t ar_in, ar_out;
} rank_state_t;

/* The agreement's failure-free round of the schedules' groups
 * (--agree-round; the shrunk groups inherit it). */
static ftc_agree_round_t agree_round = FTC_AGREE_ROUND_RD2;

static rank_state_t *st;
static int violations;
static uint64_t runs, crashes_fired, delivered_then_crashed, invalidated_runs;

static void print_schedule(const schedule_t *s)
{
    fprintf(stderr, "  schedule: n %u seed %" PRIu64 " detect %d inv", s->n,
            s->seed, s->detect);
    for (uint32_t i = 0; i < s->ninv; i++)
        fprintf(stderr, " %u", s->inv[i]);
    fprintf(stderr, " crashes");
    for (uint32_t i = 0; i < s->ncrash; i++)
        fprintf(stderr, " %u:%" PRIu64, s->crash[i].rank, s->crash[i].k);
    fputc('\n', stderr);
}

#define VIOLATION(s, ...)                                                      \
    do {                                                                       \
        violations++;                                                          \
        if (violations <= 20) {                                                \
            fprintf(stderr, "VIOLATION: ");                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            print_schedule(s);                                                 \
        }                                                                      \
    } while (0)

static void on_allreduce(const ftc_completion_t *c, void *arg)
{
    rank_state_t *r = &st[(uintptr_t)arg];
    r->ar_delivered++;
    r->ar_status = c->status;
}

static void on_shrink(const ftc_completion_t *c, void *arg)
{
    rank_state_t *r = &st[(uintptr_t)arg];
    r->shrink_delivered++;
    r->shrink_status = c->status;
}

static void on_allreduce2(const ftc_completion_t *c, void *arg)
{
    rank_state_t *r = &st[(uintptr_t)arg];
    r->ar2_delivered++;
    r->ar2_status = c->status;
}

/* Run the world until nothing is left to do; a run that does not end
 * (a livelock: messages or probes for ever) is a violation. */
static void run_all(ftc_lb_world_t *w, const schedule_t *s, const char *step)
{
    ftc_lb_run(w, UINT64_C(20000000));
    if (ftc_lb_step(w)) {
        VIOLATION(s, "%s: still busy after 20 million events", step);
        exit(1);
    }
}

static void run_schedule(const schedule_t *s, uint64_t *sends_out)
{
    uint32_t n = s->n;
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = s->seed;
    if (!s->detect)
        lc.detect_delay_ns = UINT64_MAX;
    ulfm_world_t world;
    ulfm_world_create(&lc, NULL, 3, 4, &world);
    ulfm_world_set_round(&world, agree_round);
    ftc_lb_world_t *w = world.lb;
    ftc_group_t **g = world.g;
    const bool *before = world.before;
    st = calloc(n, sizeof(*st));
    if (!st)
        abort();
    ulfm_world_inject(&world, s->crash, s->ncrash);
    /* 1. an allreduce everywhere, invalidated at once by the invalidators */
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.f = s->ncrash < n ? s->ncrash : n - 1; /* tolerates them all */
    a.count = 1;
    for (uint32_t r = 0; r < n; r++) {
        if (before[r])
            continue;
        st[r].ar_in = 1;
        a.sendbuf = &st[r].ar_in;
        a.recvbuf = &st[r].ar_out;
        a.deliver = on_allreduce;
        a.deliver_arg = (void *)(uintptr_t)r;
        if (ftc_init_allreduce(g[r], &a, NULL) != FTC_OK)
            VIOLATION(s, "rank %u: allreduce refused", r);
    }
    for (uint32_t i = 0; i < s->ninv; i++)
        if (!before[s->inv[i]] && ftc_group_invalidate(g[s->inv[i]]) != FTC_OK)
            VIOLATION(s, "rank %u: invalidate refused", s->inv[i]);
    run_all(w, s, "allreduce and invalidate");

    /* 2. invalidation reached every live rank, or none */
    bool any_inv_alive = false, any_live_inv = false, all_live_inv = true;
    for (uint32_t i = 0; i < s->ninv; i++)
        any_inv_alive |= !ftc_lb_is_crashed(w, s->inv[i]);
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_lb_is_crashed(w, r))
            continue;
        bool inv = ftc_group_is_invalidated(g[r]) == 1;
        any_live_inv |= inv;
        all_live_inv &= inv;
        if (st[r].ar_delivered != 1
            || (st[r].ar_status != FTC_OK
                && st[r].ar_status != FTC_EINVALIDATED))
            VIOLATION(s, "rank %u: allreduce delivered %d times, last %s", r,
                      st[r].ar_delivered, ftc_err_name(st[r].ar_status));
        if (st[r].ar_status == FTC_EINVALIDATED && !inv)
            VIOLATION(s, "rank %u: FTC_EINVALIDATED on a group it does not "
                      "see invalidated", r);
    }
    if ((any_inv_alive || any_live_inv) && !all_live_inv)
        VIOLATION(s, "invalidation reached some live ranks, not all");
    invalidated_runs += all_live_inv && any_live_inv;

    /* then: a new collective ends with FTC_EINVALIDATED; shrink starts */
    bool any_failed_known = false;
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_lb_is_crashed(w, r))
            continue;
        if (ftc_group_is_invalidated(g[r])) {
            int32_t x = 0, y;
            a.sendbuf = &x;
            a.recvbuf = &y;
            a.deliver = on_allreduce;
            int rc = ftc_init_allreduce(g[r], &a, NULL);
            if (rc != FTC_EINVALIDATED)
                VIOLATION(s, "rank %u: allreduce on an invalidated group "
                          "returned %s", r, ftc_err_name(rc));
        }
        any_failed_known |= ftc_group_failed(g[r], NULL, 0) > 0;
    }
    if (!all_live_inv) {
        /* No invalidation anywhere: shrink wants one (or a known
         * failure); invalidate everywhere now, as example 17.2 does. */
        for (uint32_t r = 0; r < n; r++)
            if (!ftc_lb_is_crashed(w, r))
                (void)ftc_group_invalidate(g[r]);
        /* The others' allreduce placeholder must match: each live rank
         * made the same number of calls. */
        for (uint32_t r = 0; r < n; r++)
            if (!ftc_lb_is_crashed(w, r)) {
                int32_t x = 0, y;
                a.sendbuf = &x;
                a.recvbuf = &y;
                a.deliver = on_allreduce;
                if (ftc_init_allreduce(g[r], &a, NULL) != FTC_EINVALIDATED)
                    VIOLATION(s, "rank %u: not refused after invalidate", r);
            }
    }
    (void)any_failed_known;

    /* 3. shrink at every live rank */
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_lb_is_crashed(w, r))
            continue;
        int rc = ftc_init_shrink(g[r], NEW_ID, &st[r].newgroup, on_shrink,
                                 (void *)(uintptr_t)r, NULL);
        if (rc != FTC_OK)
            VIOLATION(s, "rank %u: shrink refused: %s", r, ftc_err_name(rc));
    }
    run_all(w, s, "shrink");
    int ref = -1;
    for (uint32_t r = 0; r < n; r++) {
        bool dead = ftc_lb_is_crashed(w, r);
        if (!dead && (st[r].shrink_delivered != 1
                      || st[r].shrink_status != FTC_OK))
            VIOLATION(s, "rank %u: shrink delivered %d times, %s", r,
                      st[r].shrink_delivered, ftc_err_name(st[r].shrink_status));
        if (st[r].shrink_delivered && st[r].shrink_status == FTC_OK) {
            delivered_then_crashed += dead;
            if (ref < 0)
                ref = (int)r;
        }
    }
    if (ref >= 0) {
        ftc_group_t *R = st[ref].newgroup;
        uint32_t m = ftc_group_size(R);
        for (uint32_t r = 0; r < n; r++) {
            ftc_group_t *G = st[r].newgroup;
            if (!st[r].shrink_delivered || st[r].shrink_status != FTC_OK)
                continue;
            if (G == NULL) {
                VIOLATION(s, "rank %u: no new group", r);
                continue;
            }
            bool same = ftc_group_size(G) == m && ftc_group_id(G) == NEW_ID
                        && ftc_group_epoch(G) == 5;
            for (uint32_t i = 0; same && i < m; i++)
                same = ftc_group_world_rank(G, i) == ftc_group_world_rank(R, i);
            if (!same)
                VIOLATION(s, "rank %u: another new group than rank %d's", r,
                          ref);
        }
        /* members: in old order, every live rank, no rank in the failed set */
        uint32_t prev = 0;
        for (uint32_t i = 0; i < m; i++) {
            uint32_t wr = ftc_group_world_rank(R, i);
            if (i > 0 && wr <= prev)
                VIOLATION(s, "new group not in old order");
            prev = wr;
        }
        for (uint32_t r = 0; r < n; r++) {
            bool member = false;
            for (uint32_t i = 0; i < m; i++)
                member |= ftc_group_world_rank(R, i) == r;
            if (!ftc_lb_is_crashed(w, r) && !member)
                VIOLATION(s, "live rank %u left out of the new group", r);
            if (before[r] && member)
                VIOLATION(s, "rank %u crashed before, yet is a member", r);
        }
        /* 4. the new group works at once */
        ftc_coll_args_t b;
        ftc_coll_args_init(&b);
        b.f = s->ncrash < m ? s->ncrash : (m > 0 ? m - 1 : 0);
        b.count = 1;
        for (uint32_t r = 0; r < n; r++) {
            if (ftc_lb_is_crashed(w, r))
                continue;
            st[r].one = 1;
            b.sendbuf = &st[r].one;
            b.recvbuf = &st[r].ar2_value;
            b.deliver = on_allreduce2;
            b.deliver_arg = (void *)(uintptr_t)r;
            if (ftc_init_allreduce(st[r].newgroup, &b, NULL) != FTC_OK)
                VIOLATION(s, "rank %u: allreduce on the new group refused", r);
        }
        run_all(w, s, "allreduce on the new group");
        int32_t v = -1;
        uint32_t live = 0;
        for (uint32_t r = 0; r < n; r++)
            live += !ftc_lb_is_crashed(w, r);
        for (uint32_t r = 0; r < n; r++) {
            if (ftc_lb_is_crashed(w, r))
                continue;
            if (st[r].ar2_delivered != 1 || st[r].ar2_status != FTC_OK) {
                VIOLATION(s, "rank %u: allreduce on the new group: %d, %s", r,
                          st[r].ar2_delivered, ftc_err_name(st[r].ar2_status));
                continue;
            }
            if (v < 0)
                v = st[r].ar2_value;
            if (st[r].ar2_value != v || v < (int32_t)live || v > (int32_t)m)
                VIOLATION(s, "rank %u: allreduce on the new group gave %d "
                          "(live %u, members %u)", r, st[r].ar2_value, live, m);
        }
    }
    for (uint32_t i = 0; i < s->ncrash; i++)
        crashes_fired += ftc_lb_is_crashed(w, s->crash[i].rank) != 0;
    runs++;
    if (sends_out != NULL)
        for (uint32_t r = 0; r < n; r++)
            sends_out[r] = ftc_lb_rank_messages_sent(w, r);
    ulfm_world_destroy(&world);
    free(st);
    st = NULL;
}

/* Every schedule of <= 2 crashes, with one invalidator (rank 0) or two
 * at once (0 and n - 1). */
static void exhaustive(uint32_t n)
{
    for (uint32_t ninv = 1; ninv <= (n > 1 ? 2u : 1u); ninv++) {
        schedule_t base = {.n = n, .detect = 1, .ninv = ninv,
                           .inv = {0, n - 1}};
        uint64_t sends[16];
        run_schedule(&base, sends);
        for (uint32_t a = 0; a < n; a++)
            for (uint64_t ka = 0; ka <= sends[a] + 1; ka++) {
                schedule_t s = base;
                s.ncrash = 1;
                s.crash[0] = (ulfm_crash_t){a, ka};
                s.seed = ka;
                run_schedule(&s, NULL);
            }
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = a + 1; b < n; b++)
                for (uint64_t ka = 0; ka <= sends[a] + 1; ka += 1)
                    for (uint64_t kb = 0; kb <= sends[b] + 1; kb += 1) {
                        schedule_t s = base;
                        s.ncrash = 2;
                        s.crash[0] = (ulfm_crash_t){a, ka};
                        s.crash[1] = (ulfm_crash_t){b, kb};
                        s.seed = ka * 131 + kb;
                        s.detect = (int)((ka + kb) % 2);
                        run_schedule(&s, NULL);
                    }
    }
}

static void random_runs(uint64_t count, uint64_t seed)
{
    static const uint32_t sizes[] = {16, 50, 128, 256};
    uint64_t x = seed;
    for (uint64_t i = 0; i < count; i++) {
        schedule_t s = {0};
        s.n = sizes[ulfm_splitmix(&x) % 4];
        s.seed = ulfm_splitmix(&x);
        s.detect = (int)(ulfm_splitmix(&x) % 4 != 0);
        s.ninv = 1 + (uint32_t)(ulfm_splitmix(&x) % 2);
        s.inv[0] = (uint32_t)(ulfm_splitmix(&x) % s.n);
        s.inv[1] = (uint32_t)(ulfm_splitmix(&x) % s.n);
        s.ncrash = (uint32_t)(ulfm_splitmix(&x) % 6);
        for (uint32_t c = 0; c < s.ncrash; c++) {
            uint32_t r = ulfm_fresh_rank(&x, s.crash, c, s.n);
            /* Invalidators crash mid-flood half of the time. */
            if (c < s.ninv && ulfm_splitmix(&x) % 2 == 0) {
                if (!ulfm_crash_has(s.crash, c, s.inv[c]))
                    r = s.inv[c];
            }
            s.crash[c] = (ulfm_crash_t){r, ulfm_splitmix(&x) % (2 * s.n)};
        }
        run_schedule(&s, NULL);
    }
}

/* ---- failure ack, exclusion-list shrink, bad input ------------------------ */


static int agree_calls;
static void on_any(const ftc_completion_t *c, void *arg)
{
    (void)c, (void)arg;
    agree_calls++;
}

static int shrink2_status;
static void on_shrink2(const ftc_completion_t *c, void *arg)
{
    (void)arg;
    shrink2_status = c->status;
}

static void test_local_calls(void)
{
    enum { N = 5 };
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    ulfm_world_t world;
    ulfm_world_create(&lc, NULL, 1, 0, &world);
    ftc_lb_world_t *w = world.lb;
    ftc_group_t **g = world.g;
    uint32_t out[N];
    uint64_t v;
    ftc_group_t *ng = NULL;

    /* error classes */
    CHECK_MSG(strcmp(ftc_err_name(FTC_EPROC_FAILED), "FTC_EPROC_FAILED") == 0
               && strcmp(ftc_err_name(FTC_EINVALIDATED), "FTC_EINVALIDATED") == 0,
           "names of the new error classes");
    CHECK_MSG(strstr(ftc_strerror(FTC_EINVALIDATED), "invalidated") != NULL,
           "ftc_strerror(FTC_EINVALIDATED)");

    /* bad input: nothing started, nothing allocated (ASan checks) */
    CHECK_MSG(ftc_init_agree(NULL, 1, &v, on_any, NULL, NULL) == FTC_EINVAL,
           "agree: NULL group");
    /* (a refused call keeps its place in the sequence: at every rank) */
    for (uint32_t r = 0; r < N; r++) {
        CHECK_MSG(ftc_init_agree(g[r], 1, NULL, on_any, NULL, NULL) == FTC_EINVAL,
               "agree: NULL result");
        CHECK_MSG(ftc_init_agree(g[r], 1, &v, NULL, NULL, NULL) == FTC_EINVAL,
               "agree: NULL deliver");
    }
    CHECK_MSG(ftc_group_invalidate(NULL) == FTC_EINVAL, "invalidate: NULL");
    CHECK_MSG(ftc_group_is_invalidated(NULL) == 0, "is_invalidated: NULL");
    CHECK_MSG(ftc_group_failure_ack(NULL) == FTC_EINVAL, "ack: NULL");
    CHECK_MSG(ftc_group_failure_get_acked(NULL, out, N) == 0, "get_acked: NULL");
    CHECK_MSG(ftc_group_failure_get_acked(g[0], out, N) == 0,
           "get_acked before any ack: empty");
    CHECK_MSG(ftc_group_shrink_excluding(NULL, 2, NULL, 0, &ng) == FTC_EINVAL,
           "shrink_excluding: NULL group");
    CHECK_MSG(ftc_group_shrink_excluding(g[0], 2, NULL, 1, &ng) == FTC_EINVAL,
           "shrink_excluding: NULL list");
    uint32_t bad_rank = N, self = 0;
    CHECK_MSG(ftc_group_shrink_excluding(g[0], 2, &bad_rank, 1, &ng) == FTC_EINVAL,
           "shrink_excluding: rank out of range");
    CHECK_MSG(ftc_group_shrink_excluding(g[0], 2, &self, 1, &ng) == FTC_EINVAL,
           "shrink_excluding: the caller excluded");
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = FTC_ALGO_ULFM;
    a.deliver = on_any;
    for (uint32_t r = 0; r < N; r++)
        CHECK_MSG(ftc_init_allreduce(g[r], &a, NULL) == FTC_ENOTSUP,
               "allreduce with the ulfm family: FTC_ENOTSUP");

    /* shrink with no failure and no invalidation: an ARG error at every
     * member, which all see (no hang) */
    int before = agree_calls;
    for (uint32_t r = 0; r < N; r++)
        CHECK_MSG(ftc_init_shrink(g[r], 2, &ng, on_any, NULL, NULL) == FTC_EINVAL,
               "shrink without failure or invalidation: FTC_EINVAL");
    ftc_lb_run(w, UINT64_MAX);
    CHECK_MSG(agree_calls == before, "refused shrinks deliver nothing");

    /* ack / get_acked */
    ftc_lb_crash(w, 3);
    for (uint32_t r = 0; r < N; r++)
        if (r != 3)
            CHECK_MSG(ftc_init_agree(g[r], 1, &v, on_any, NULL, NULL) == FTC_OK,
                   "agree");
    ftc_lb_run(w, UINT64_MAX);
    CHECK_MSG(ftc_group_failure_get_acked(g[0], out, N) == 0,
           "nothing acked before ftc_group_failure_ack");
    CHECK_MSG(ftc_group_failure_ack(g[0]) == FTC_OK, "ack");
    uint32_t k = ftc_group_failure_get_acked(g[0], out, N);
    uint32_t known = ftc_group_failed(g[0], NULL, 0);
    CHECK_MSG(k == known && k >= 1, "acked = known failed (%u, %u)", k, known);
    ftc_lb_crash(w, 4);
    for (uint32_t r = 0; r < N; r++)
        if (r < 3)
            CHECK_MSG(ftc_init_agree(g[r], 1, &v, on_any, NULL, NULL) == FTC_OK,
                   "agree");
    ftc_lb_run(w, UINT64_MAX);
    CHECK_MSG(ftc_group_failure_get_acked(g[0], out, N) == k,
           "a failure after the ack is not acked");
    CHECK_MSG(ftc_group_failure_ack(g[0]) == FTC_OK
               && ftc_group_failure_get_acked(g[0], out, N) == k + 1
               && out[k - 1] <= out[k],
           "acked again: one more, sorted");

    /* the exclusion-list shrink: same list, same group, at once */
    uint32_t ex[] = {4, 3, 4};
    ftc_group_t *ng0 = NULL, *ng1 = NULL;
    CHECK_MSG(ftc_group_shrink_excluding(g[0], 1, ex, 3, &ng0) == FTC_OK
               && ftc_group_shrink_excluding(g[1], 1, ex, 3, &ng1) == FTC_OK,
           "shrink_excluding");
    CHECK_MSG(ng0 != NULL && ng1 != NULL && ftc_group_size(ng0) == 3
               && ftc_group_rank(ng1) == 1 && ftc_group_epoch(ng0) == 1
               && ftc_group_world_rank(ng0, 2) == 2,
           "shrink_excluding: members 0 1 2 at epoch 1");
    CHECK_MSG(ftc_group_shrink_excluding(g[0], 1, ex, 3, &ng) == FTC_EINVAL,
           "shrink_excluding: (id, epoch) taken");
    for (uint32_t r = 0; r < 2; r++)
        CHECK_MSG(ftc_init_shrink(g[r], 1, &ng, on_any, NULL, NULL) == FTC_EINVAL,
               "shrink: (id, epoch) taken here is refused");
    /* rank 2 has no group (1, 1): its shrink starts, and learns that the
     * others' call was refused */
    ftc_group_t *ng2 = NULL;
    shrink2_status = 1;
    CHECK_MSG(ftc_init_shrink(g[2], 1, &ng2, on_shrink2, NULL, NULL) == FTC_OK,
           "shrink where (id, epoch) is free");
    ftc_lb_run(w, UINT64_MAX);
    CHECK_MSG(shrink2_status == FTC_EPEER_INVALID && ng2 == NULL,
           "the peers' refusal ends it: %s", ftc_err_name(shrink2_status));

    ulfm_world_destroy(&world);
}

/* The blocking helper: ranks 0 and 1 start the agreement, rank 2 blocks
 * in ftc_agree, stepping the loopback world (which runs everyone); rank
 * 3 crashed before. Then a progress function that gives up. */
static ftc_lb_world_t *blocking_world;
static int step_world(void *arg)
{
    (void)arg;
    return ftc_lb_step(blocking_world) ? 1 : -100;
}

/* Gives up after a few steps: a peer that never joins is probed (and
 * answers) for ever. */
static int steps_left;
static int step_world_briefly(void *arg)
{
    (void)arg;
    return steps_left-- > 0 && ftc_lb_step(blocking_world) ? 1 : -100;
}

static void test_blocking(void)
{
    enum { N = 4 };
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    ulfm_world_t world;
    ulfm_world_create(&lc, NULL, 1, 0, &world);
    blocking_world = world.lb;
    ftc_group_t **g = world.g;
    uint64_t v = 0, mine = 0xF0;
    CHECK_MSG(ftc_agree(g[2], &mine, NULL, 0, NULL, NULL, NULL) == FTC_EINVAL,
           "ftc_agree: no progress function on the loopback");
    CHECK_MSG(ftc_agree(NULL, &mine, NULL, 0, NULL, step_world, NULL)
               == FTC_EINVAL, "ftc_agree: NULL group");
    ftc_lb_crash(blocking_world, 3);
    uint64_t in0 = 0x3C, in1 = 0xFF;
    agree_calls = 0;
    CHECK_MSG(ftc_init_agree(g[0], in0, &v, on_any, NULL, NULL) == FTC_OK
               && ftc_init_agree(g[1], in1, &v, on_any, NULL, NULL) == FTC_OK,
           "agree at ranks 0 and 1");
    uint32_t failed[4] = {0}, nfailed = 0;
    CHECK_MSG(ftc_agree(g[2], &mine, failed, 4, &nfailed, step_world, NULL)
               == FTC_OK, "ftc_agree");
    CHECK_MSG(mine == (0x3C & 0xFF & 0xF0) && nfailed == 1 && failed[0] == 3,
           "ftc_agree: %#llx, %u failed", (unsigned long long)mine, nfailed);
    ftc_lb_run(blocking_world, UINT64_MAX);
    CHECK_MSG(agree_calls == 2, "the others delivered too");
    /* Giving up: rank 2 alone, progress says stop;
     * the agreement's late delivery must not touch freed memory. */
    mine = 1;
    steps_left = 50;
    CHECK_MSG(ftc_agree(g[2], &mine, NULL, 0, NULL, step_world_briefly, NULL)
               == -100,
           "ftc_agree returns what progress gave up with");
    CHECK_MSG(ftc_init_agree(g[0], 1, &v, on_any, NULL, NULL) == FTC_OK
               && ftc_init_agree(g[1], 1, &v, on_any, NULL, NULL) == FTC_OK,
           "the others join late");
    ftc_lb_run(blocking_world, UINT64_MAX);
    CHECK_MSG(agree_calls == 4, "and deliver");
    ulfm_world_destroy(&world);
    blocking_world = NULL;
}

int main(int argc, char **argv)
{
    ulfm_args_t args = {.max_n = 7, .runs = 60, .seed = 1};
    int bad = ulfm_args_parse(argc, argv,
                              "[--max-n N (1 to 16)] [--random RUNS] "
                              "[--seed S] [--agree-round rd2|rd4|tree]",
                              &args);
    if (bad)
        return bad;
    agree_round = args.round;
    uint32_t max_n = args.max_n;
    uint64_t count = args.runs, seed = args.seed;
    test_local_calls();
    test_blocking();
    for (uint32_t n = 1; n <= max_n; n++)
        exhaustive(n);
    uint64_t ex_runs = runs;
    random_runs(count, seed);
    printf("exhaustive n <= %u: %" PRIu64 " schedules; random (seed %" PRIu64
           "): %" PRIu64 " up to n = 256; %" PRIu64 " crashes happened, %"
           PRIu64 " runs invalidated everywhere, %" PRIu64
           " shrinks delivered by ranks that then crashed\n",
           max_n, ex_runs, seed, runs - ex_runs, crashes_fired,
           invalidated_runs, delivered_then_crashed);
    if (invalidated_runs == 0 || crashes_fired == 0) {
        fprintf(stderr, "the schedules did not exercise invalidation and "
                        "crashes\n");
        violations++;
    }
    printf("%s: %d violations\n", violations ? "FAIL" : "ok", violations);
    /* Schedules checked count as passes beside the local checks; every
     * violation as a failure. */
    check_add(violations ? 0 : runs, (unsigned long)violations);
    return check_report();
}
