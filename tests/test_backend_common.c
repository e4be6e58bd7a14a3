/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The backends' common support layer (backends/common) on its own: the
 * grace reporter's order and re-entrancy, the rank set's sweep, the send
 * queue's FIFO and byte count, the self-queue feed, the environment
 * reader's kinds and errors, the core timer and the passes of a progress
 * call, the clock's due test and the wait's spin policy. The core is
 * tests/support's double. Prints "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "ftcoll/transport.h"

#include "check.h"
#include "core_double.h"

#include "clock.h"
#include "core_timer.h"
#include "env.h"
#include "grace.h"
#include "progress.h"
#include "rank_set.h"
#include "send_queue.h"
#include "spin.h"

/* As the core may: a failure report that makes the backend lose another
 * peer (added to the grace list from inside the report). */
typedef struct lose_more {
    ftc_bk_grace_t *grace;
    uint32_t on_report, lose;
} lose_more_t;

static void lose_one_more(ftc_context_t *ctx, uint32_t peer)
{
    lose_more_t *m = ctx->user;
    if (m->grace != NULL && peer == m->on_report) {
        ftc_bk_grace_add(m->grace, m->lose, 0);
        m->grace = NULL;
    }
}

/* --- Grace reporter ------------------------------------------------------ */

static void mark(void *b, uint32_t rank, uint64_t now)
{
    uint64_t *marked = b;
    marked[rank] = now;
}

static void test_grace(void)
{
    ftc_bk_grace_t g;
    CHECK_MSG(ftc_bk_grace_init(&g, 8) == 0, "init");
    CHECK_MSG(ftc_bk_grace_next(&g) == UINT64_MAX, "nothing pending");
    ftc_bk_grace_add(&g, 5, 300);
    ftc_bk_grace_add(&g, 2, 100);
    ftc_bk_grace_add(&g, 7, 200);
    CHECK_MSG(ftc_bk_grace_next(&g) == 100, "the earliest is next");
    CHECK_MSG(ftc_bk_grace_take_due(&g, 99) == FTC_BK_GRACE_NONE,
          "nothing due before its time");

    ftc_context_t ctx;
    core_double_reset();
    core_double_init(&ctx, 0, NULL);
    lose_more_t more = {&g, 2, 4};  /* reporting 2 loses 4, due at once */
    ctx.user = &more;
    ctx.on_peer_failed = lose_one_more;
    uint64_t marked[8] = {0};
    int n = ftc_bk_grace_report_due(&g, 250, &ctx, mark, marked);
    CHECK_MSG(n == 3, "2, 7 and 4 (lost while reporting) reported: %d", n);
    CHECK_EQ(ctx.peer_failures, 3);
    CHECK_EQ(core_double_find(CORE_PEER_FAILED, 0, 0)->a, 2);
    CHECK_MSG(marked[2] == 250 && marked[7] == 250 && marked[4] == 250,
          "marked before the report, at now");
    CHECK_MSG(g.count == 1 && g.ranks[0] == 5 && ftc_bk_grace_next(&g) == 300,
              "5 still waits for 300");
    CHECK_EQ(ftc_bk_grace_report_due(&g, 300, &ctx, mark, marked), 1);
    CHECK_EQ(g.count, 0);
    CHECK_EQ(core_double_find(CORE_PEER_FAILED, 0, 3)->a, 5);
    ftc_bk_grace_fini(&g);
}

/* --- Rank set ------------------------------------------------------------ */

static int visit(void *arg, uint32_t r, bool *keep)
{
    int *left = arg;
    if (--left[r] <= 0)
        *keep = false;
    return 1;
}

static void test_rank_set(void)
{
    ftc_bk_rank_set_t s;
    CHECK_MSG(ftc_bk_rank_set_init(&s, 4) == 0, "init");
    ftc_bk_rank_set_add(&s, 3);
    ftc_bk_rank_set_add(&s, 1);
    ftc_bk_rank_set_add(&s, 3);
    CHECK_MSG(s.count == 2, "a rank is in it once: %u", s.count);
    int left[4] = {0, 2, 0, 1};
    CHECK_MSG(ftc_bk_rank_set_sweep(&s, visit, left) == 2, "each visited once");
    CHECK_MSG(s.count == 1 && s.ranks[0] == 1 && !s.member[3],
          "3 done and gone, 1 stays");
    ftc_bk_rank_set_add(&s, 3);
    CHECK_MSG(s.count == 2, "3 may come back");
    left[3] = 1;
    CHECK_MSG(ftc_bk_rank_set_sweep(&s, visit, left) == 2 && s.count == 0,
          "both done");
    ftc_bk_rank_set_fini(&s);
}

/* --- Send queue and the self feed --------------------------------------- */

static void test_send_queue(void)
{
    ftc_bk_send_queue_t q;
    ftc_bk_sq_init(&q);
    CHECK_MSG(ftc_bk_sq_peek(&q) == NULL && ftc_bk_sq_take(&q) == NULL, "empty");
    CHECK_MSG(ftc_bk_sq_push(&q, "abc", 3) == 0 && ftc_bk_sq_push(&q, "de", 2) == 0
              && ftc_bk_sq_push(&q, NULL, 0) == 0,
          "push");
    CHECK_MSG(q.count == 3 && q.bytes == 5, "count %zu bytes %zu", q.count,
          q.bytes);
    ftc_bk_qmsg_t *m = ftc_bk_sq_take(&q);
    CHECK_MSG(m != NULL && m->len == 3 && memcmp(m->data, "abc", 3) == 0,
          "first in, first out");
    CHECK_MSG(q.count == 2 && q.bytes == 2, "after take");
    ftc_bk_sq_prepend(&q, m);
    CHECK_MSG(q.count == 3 && q.bytes == 5 && ftc_bk_sq_peek(&q) == m,
          "put back at the head");

    ftc_context_t ctx;
    core_double_reset();
    core_double_init(&ctx, 6, NULL);
    ctx.recv_rc = FTC_EINVAL;   /* the core refuses everything */
    uint64_t msgs = 0, bytes = 0, rejected = 0;
    int n = ftc_bk_sq_feed_self(&q, &ctx, 6, &msgs, &bytes, &rejected);
    CHECK_MSG(n == 3 && msgs == 3 && bytes == 5 && rejected == 3 && q.count == 0,
          "fed 3 (%d), counted: %llu msgs, %llu bytes, %llu refused", n,
          (unsigned long long)msgs, (unsigned long long)bytes,
          (unsigned long long)rejected);
    CHECK_EQ(ctx.recvs, 3);
    CHECK_EQ(core_double_find(CORE_RECV, 6, 0)->a, 6);
    CHECK_EQ(core_double_find(CORE_RECV, 6, 0)->len, 3);
    CHECK_EQ(core_double_find(CORE_RECV, 6, 2)->len, 0);
    ftc_bk_sq_push(&q, "x", 1);
    ftc_bk_sq_push(&q, "y", 1);
    ftc_bk_sq_clear(&q);
    CHECK_MSG(q.count == 0 && q.bytes == 0 && q.head == NULL && q.tail == NULL,
          "clear");
}

/* --- Environment reader ------------------------------------------------- */

typedef struct cfg {
    int i;
    uint32_t u;
    size_t z;
    int choice;
    const char *s;
} cfg_t;

static const ftc_knob_t knobs[] = {
    {"FTCOLL_T_INT", "1", "an int"},
    {"FTCOLL_T_U32", "2", "a u32"},
    {"FTCOLL_T_SIZE", "3", "a size"},
    {"FTCOLL_T_CHOICE", "eager", "a choice"},
    {"FTCOLL_T_STR", "unset", "a string"},
    {NULL, NULL, NULL},
};

static const ftc_bk_env_t env[] = {
    {"FTCOLL_T_INT", FTC_BK_ENV_INT, offsetof(cfg_t, i), 0, 100, NULL, NULL},
    {"FTCOLL_T_U32", FTC_BK_ENV_U32, offsetof(cfg_t, u), 0, 0, NULL, NULL},
    {"FTCOLL_T_SIZE", FTC_BK_ENV_SIZE, offsetof(cfg_t, z), 1, 0, NULL,
     "a byte count > 0"},
    {"FTCOLL_T_CHOICE", FTC_BK_ENV_CHOICE, offsetof(cfg_t, choice), 0, 0,
     "eager=1 lazy=0 off=-1", NULL},
    {"FTCOLL_T_STR", FTC_BK_ENV_STRING, offsetof(cfg_t, s), 0, 0, NULL, NULL},
};

static int apply_one(const char *name, const char *value, cfg_t *c,
                     char *err, size_t len)
{
    setenv(name, value, 1);
    int rc = ftc_bk_env_apply(env, sizeof(env) / sizeof(env[0]), knobs, c,
                              err, len);
    unsetenv(name);
    return rc;
}

static void test_env(void)
{
    cfg_t c = {1, 2, 3, 1, NULL};
    char err[128];
    CHECK_MSG(ftc_bk_env_apply(env, 5, knobs, &c, err, sizeof(err)) == FTC_OK
              && c.i == 1 && c.u == 2 && c.z == 3 && c.choice == 1
              && c.s == NULL,
          "nothing set: nothing changes");
    CHECK_MSG(apply_one("FTCOLL_T_INT", "100", &c, err, sizeof(err)) == FTC_OK
              && c.i == 100,
          "int at its maximum");
    CHECK_MSG(apply_one("FTCOLL_T_INT", "101", &c, err, sizeof(err)) == FTC_EINVAL
              && strcmp(err, "FTCOLL_T_INT must be a non-negative integer")
                     == 0,
          "int above its maximum: %s", err);
    CHECK_MSG(apply_one("FTCOLL_T_INT", "-1", &c, err, sizeof(err)) == FTC_EINVAL,
          "no sign");
    CHECK_MSG(apply_one("FTCOLL_T_INT", "7x", &c, err, sizeof(err)) == FTC_EINVAL,
          "no trailing junk");
    CHECK_MSG(apply_one("FTCOLL_T_INT", " 7", &c, err, sizeof(err)) == FTC_EINVAL,
          "no leading space");
    CHECK_MSG(apply_one("FTCOLL_T_U32", "4294967295", &c, err, sizeof(err))
                  == FTC_OK
              && c.u == UINT32_MAX,
          "u32 at its maximum");
    CHECK_MSG(apply_one("FTCOLL_T_U32", "4294967296", &c, err, sizeof(err))
              == FTC_EINVAL,
          "u32 above");
    CHECK_MSG(apply_one("FTCOLL_T_SIZE", "0", &c, err, sizeof(err)) == FTC_EINVAL
              && strstr(err, "a byte count > 0") != NULL,
          "size below its minimum, in the knob's words: %s", err);
    CHECK_MSG(apply_one("FTCOLL_T_SIZE", "99999999999", &c, err, sizeof(err))
                  == FTC_OK
              && c.z == (size_t)99999999999ull,
          "a large size");
    CHECK_MSG(apply_one("FTCOLL_T_CHOICE", "lazy", &c, err, sizeof(err)) == FTC_OK
              && c.choice == 0,
          "choice lazy");
    CHECK_MSG(apply_one("FTCOLL_T_CHOICE", "off", &c, err, sizeof(err)) == FTC_OK
              && c.choice == -1,
          "a negative choice value");
    CHECK_MSG(apply_one("FTCOLL_T_CHOICE", "eage", &c, err, sizeof(err))
                  == FTC_EINVAL
              && strcmp(err, "FTCOLL_T_CHOICE must be eager or lazy or off")
                     == 0,
          "a prefix is no choice: %s", err);
    CHECK_MSG(apply_one("FTCOLL_T_STR", "tcp://x", &c, err, sizeof(err)) == FTC_OK
              && c.s != NULL && strcmp(c.s, "tcp://x") == 0,
          "string");
    CHECK_MSG(apply_one("FTCOLL_T_INT", "5", &c, NULL, 0) == FTC_OK,
          "no error buffer");
    CHECK_MSG(apply_one("FTCOLL_T_INT", "x", &c, NULL, 0) == FTC_EINVAL,
          "an error without a buffer");
    /* A variable read but not described is refused, set or not. */
    CHECK_MSG(ftc_bk_env_apply(env, 5, knobs + 1, &c, err, sizeof(err))
                  == FTC_EINVAL
              && strstr(err, "FTCOLL_T_INT") != NULL,
          "undescribed variable: %s", err);
    CHECK_MSG(ftc_bk_env_apply(env, 5, knobs, NULL, err, sizeof(err))
              == FTC_EINVAL,
          "no config");
}

/* --- Core timer ---------------------------------------------------------- */

static int count_down(void *b)
{
    int *left = b;
    return *left > 0 ? (*left)--, 1 : 0;
}

static void test_core_timer(void)
{
    ftc_context_t ctx;
    core_double_reset();
    core_double_init(&ctx, 0, NULL);
    ftc_bk_core_timer_t t = {0};
    CHECK_MSG(ftc_bk_core_timer_next(&t) == UINT64_MAX, "not armed");
    CHECK_MSG(ftc_bk_core_timer_fire_due(&t, &ctx) == 0, "nothing to fire");
    ftc_bk_core_timer_arm(&t, UINT64_MAX - 1);
    ftc_bk_core_timer_recheck(&t);
    CHECK_MSG(ftc_bk_core_timer_fire_due(&t, &ctx) == 0 && t.armed,
          "not due yet");
    ftc_bk_core_timer_arm(&t, ftc_bk_now_ns());
    /* A past deadline: the clock is asked on every 16th pass only. */
    int idle = 0;
    while (idle < 100 && ftc_bk_core_timer_fire_due(&t, &ctx) == 0)
        idle++;
    CHECK_MSG(idle == FTC_BK_TIMER_CLOCK_EVERY - 1 && !t.armed
              && ctx.timer_fires == 1,
          "due: fired once on the 16th pass, disarmed (after %d)", idle);
    ftc_bk_core_timer_arm(&t, ftc_bk_now_ns());
    ftc_bk_core_timer_recheck(&t);
    CHECK_MSG(ftc_bk_core_timer_fire_due(&t, &ctx) == 1 && ctx.timer_fires == 2,
          "after a recheck (a sleep): on the next pass");
    ftc_bk_core_timer_arm(&t, 0);
    CHECK_MSG(ftc_bk_core_timer_fire_due(&t, &ctx) == 1 && ctx.timer_fires == 3,
          "deadline 0 (at once): on the next pass, no clock");
    ctx.timer_fires = 1;
    CHECK_MSG(ftc_bk_core_timer_fire_due(&t, &ctx) == 0 && ctx.timer_fires == 1,
          "not twice");
    ftc_bk_core_timer_arm(&t, 0);
    ftc_bk_core_timer_cancel(&t);
    CHECK_MSG(ftc_bk_core_timer_fire_due(&t, &ctx) == 0, "cancelled");
    int left = 20;
    CHECK_MSG(ftc_bk_run_passes(count_down, &left, 8) == 8 && left == 12,
          "at most 8 passes while work keeps coming");
    left = 3;
    CHECK_MSG(ftc_bk_run_passes(count_down, &left, 8) == 3 && left == 0,
          "stops at the first idle pass");
}

/* --- Clock: the coarse filter of ftc_bk_due ------------------------------ */

static void test_due(void)
{
    uint64_t coarse = ftc_bk_now_coarse_ns(), now = ftc_bk_now_ns();
    CHECK_MSG(coarse <= now, "the coarse clock is never ahead");
    CHECK_MSG(!ftc_bk_due(UINT64_MAX), "UINT64_MAX is never due");
    CHECK_MSG(ftc_bk_due(0) && ftc_bk_due(now), "a past deadline is due");
    CHECK_MSG(!ftc_bk_due(now + 3600u * 1000000000u), "an hour away is not");
    /* Within the coarse clock's slack (a tick or two) the precise clock
     * decides: a deadline 1 ms away is due as soon as it has passed, not
     * at the next tick. (Not due before it is a matter of timing, which
     * a loaded machine cannot promise: not asserted.) */
    uint64_t soon = ftc_bk_now_ns() + 1000000u;
    while (ftc_bk_now_ns() < soon) {
    }
    CHECK_MSG(ftc_bk_due(soon), "a near deadline to the precise clock");
}

/* --- Spin policy --------------------------------------------------------- */

static void test_spin(void)
{
    uint32_t cpus = ftc_bk_cpus();
    CHECK_MSG(cpus >= 1, "at least one CPU");
    ftc_bk_spin_t s;
    ftc_bk_spin_init(&s, -1, 1);
    CHECK_MSG(!s.oversubscribed && s.max_ns == FTC_BK_SPIN_AUTO_NS
              && s.budget_ns == s.max_ns,
              "automatic, one rank: spin up to the automatic ceiling");
    CHECK_MSG(!ftc_bk_spin_idle_pass(&s, 1, 16, 0)
                  && ftc_bk_spin_idle_pass(&s, 16, 16, 0)
                  && !ftc_bk_spin_idle_pass(&s, 16, 16, UINT64_MAX),
              "ranks with CPUs to spare: the clock every 16th idle pass");
    CHECK_MSG(ftc_bk_spin_budget(&s) == s.max_ns, "the first wait spins fully");
    ftc_bk_spin_adapt(&s, false, 0);
    CHECK_MSG(s.budget_ns == s.max_ns / 2, "a spin that ran out halves it");
    for (int i = 0; i < 3; i++) {
        (void)ftc_bk_spin_budget(&s);
        ftc_bk_spin_adapt(&s, false, 0);
    }
    CHECK_MSG(s.budget_ns == s.max_ns / 16, "down to a sixteenth");
    (void)ftc_bk_spin_budget(&s);
    ftc_bk_spin_adapt(&s, false, 0);
    CHECK_MSG(s.budget_ns == 0, "then no spin");

    /* Probes that run out: every 32nd wait, each twice as long as the
     * last up to the ceiling, then at ever longer intervals. */
    uint64_t want = s.max_ns / 16;
    uint32_t every = FTC_BK_SPIN_PROBE_EVERY;
    int probes = 0;
    for (int round = 0; round < 12; round++) {
        int waits = 0;
        uint64_t b;
        while ((b = ftc_bk_spin_budget(&s)) == 0)
            waits++;
        CHECK_MSG((uint32_t)waits + 1 == every && b == want,
                  "probe %d after %d waits (want %u), %llu ns (want %llu)",
                  round, waits + 1, every, (unsigned long long)b,
                  (unsigned long long)want);
        probes++;
        ftc_bk_spin_adapt(&s, false, 0);
        CHECK_MSG(s.budget_ns == 0, "a probe that ran out leaves no spin");
        if (want < s.max_ns)
            want = want * 2 > s.max_ns ? s.max_ns : want * 2;
        else if (every < FTC_BK_SPIN_PROBE_RAREST)
            every *= 2;
    }
    CHECK_MSG(probes == 12 && every == FTC_BK_SPIN_PROBE_RAREST,
              "the probes' interval reaches its longest (%u)", every);

    /* A probe that finds work after 9 us (a loopback TCP hop, longer
     * than a sixteenth of the ceiling) restarts the spin long enough for
     * it, and the probes start short and often again. */
    while (ftc_bk_spin_budget(&s) == 0) {
    }
    ftc_bk_spin_adapt(&s, true, 9000);
    CHECK_MSG(s.budget_ns == 18000, "a probe that found work after 9 us: "
              "a spin of 18 us (%llu)", (unsigned long long)s.budget_ns);
    CHECK_MSG(s.probe_ns == s.max_ns / 16 && s.probe_every == FTC_BK_SPIN_PROBE_EVERY,
              "the probes start again short and often");
    (void)ftc_bk_spin_budget(&s);
    ftc_bk_spin_adapt(&s, true, 1000);
    CHECK_MSG(s.budget_ns == 36000, "a spin that found work doubles");
    for (int i = 0; i < 20; i++) {
        (void)ftc_bk_spin_budget(&s);
        ftc_bk_spin_adapt(&s, true, 500);
    }
    CHECK_MSG(s.budget_ns == s.max_ns, "up to the ceiling");
    s.budget_ns = 0;
    while (ftc_bk_spin_budget(&s) == 0) {
    }
    ftc_bk_spin_adapt(&s, true, 200);
    CHECK_MSG(s.budget_ns == s.max_ns / 16, "a quick find restarts at a sixteenth");

    ftc_bk_spin_init(&s, -1, cpus + 1);
    CHECK_MSG(s.oversubscribed && s.max_ns == FTC_BK_SPIN_YIELD_NS
                  && s.budget_ns == s.max_ns,
              "automatic, more ranks than CPUs: a spin up to the yielding "
              "ceiling");
    CHECK_MSG(ftc_bk_spin_budget(&s) == FTC_BK_SPIN_YIELD_NS,
              "whose first wait spins fully");
    ftc_bk_spin_adapt(&s, false, 0);
    CHECK_MSG(s.budget_ns == FTC_BK_SPIN_YIELD_NS / 2,
              "and adapts as any spin");
    /* Each idle pass yields (returns) and reads the clock: over at once
     * past its end, never before it, whatever the pass's number. */
    CHECK_MSG(ftc_bk_spin_idle_pass(&s, 1, 16, 0)
                  && !ftc_bk_spin_idle_pass(&s, 16, 16, UINT64_MAX),
              "oversubscribed: the clock after every idle pass");
    ftc_bk_spin_idle(&s);   /* a yield: returns */
    ftc_bk_spin_init(&s, 20, cpus + 1);
    CHECK_MSG(s.oversubscribed && s.max_ns == 20000,
              "a configured spin when oversubscribed: kept (and yields)");
    ftc_bk_spin_init(&s, 0, cpus + 1);
    CHECK_MSG(s.max_ns == 0 && ftc_bk_spin_budget(&s) == 0,
              "a configured 0 never spins");
    ftc_bk_spin_init(&s, 20, 0);
    CHECK_MSG(!s.oversubscribed, "unknown local ranks: not oversubscribed");

    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE",
                          "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};
    for (size_t i = 0; i < 4; i++)
        unsetenv(vars[i]);
    setenv("PMIX_LOCAL_SIZE", "7", 1);
    CHECK_MSG(ftc_bk_local_ranks(64, 0) == 7, "the launcher's local size");
    setenv("PMIX_LOCAL_SIZE", "x7", 1);
    CHECK_MSG(ftc_bk_local_ranks(64, 1) == 64,
              "a malformed size is ignored; single host: every rank");
    CHECK_MSG(ftc_bk_local_ranks(64, -1) == 0, "else unknown");
    unsetenv("PMIX_LOCAL_SIZE");
}

int main(void)
{
    test_grace();
    test_rank_set();
    test_send_queue();
    test_env();
    test_core_timer();
    test_due();
    test_spin();
    CHECK_EQ(core_reentries, 0);
    return check_report();
}
