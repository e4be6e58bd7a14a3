/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer turn that only runs continuations (lib/core/settle.c, "quick
 * turns"), over an inline three-rank transport with a counted clock:
 *
 *   - a stream of corrected allreduces (reduce + bcast, whose send-done
 *     continuation takes a timer turn) takes such turns and reads the
 *     clock at no more than one in 100 operations and ranks (5 per
 *     operation and rank before the monitor's lazy silence, two more in
 *     every continuation turn before quick turns; 0 now: only the
 *     watches' checks read it, one per check period, and this clock
 *     stands still), and every result is right. Three ranks: at two, every correction send is its sweep's
 *     last, which takes no turn at all (lib/algo/corrected/bcast_part.c);
 *   - the keepalive still runs between them: once a peer falls silent
 *     in the middle of such a stream and the clock passes the suspect
 *     timeout and one check period (core/monitor.c, "Lazy silence"),
 *     moving a check period at a time, the silent peer is probed.
 *
 * Last line: "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/corrected.h"
#include "check.h"
#include "core/monitor.h"

enum { RANKS = 3, QLEN = 256, MSG = 512 };

typedef struct msg {
    uint32_t src, len;
    uint8_t buf[MSG];
} msg_t;

typedef struct rank {
    uint32_t me;
    struct world *w;
    ftc_context_t *ctx;
    ftc_group_t *g;
    msg_t q[QLEN];
    uint32_t qhead, qlen;
    bool armed;
    uint64_t deadline;
    bool busy;
    uint64_t done, wrong;
    int64_t in, out;
} rank_t;

typedef struct world {
    uint64_t clock, clock_reads, sends, turns;
    bool mute[RANKS];          /* drop what this rank sends */
    rank_t r[RANKS];
} world_t;

static int q_send(void *tp, uint32_t d, const void *b, size_t l, void *c)
{
    rank_t *me = tp;
    (void)c;
    me->w->sends++;
    if (me->w->mute[me->me])
        return FTC_SEND_INLINE;
    rank_t *to = &me->w->r[d];
    if (l > MSG || to->qlen == QLEN)
        abort();
    msg_t *m = &to->q[(to->qhead + to->qlen++) % QLEN];
    m->src = me->me;
    m->len = (uint32_t)l;
    memcpy(m->buf, b, l);
    return FTC_SEND_INLINE;
}
static void q_arm(void *tp, uint64_t d)
{
    rank_t *me = tp;
    me->armed = true;
    me->deadline = d;
}
static void q_cancel(void *tp) { ((rank_t *)tp)->armed = false; }
static uint64_t q_now(void *tp)
{
    rank_t *me = tp;
    me->w->clock_reads++;
    return me->w->clock;
}

static const ftc_transport_ops_t q_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = q_send,
    .timer_arm = q_arm,
    .timer_cancel = q_cancel,
    .now = q_now,
};

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_t *me = arg;
    if (c->status != FTC_OK || me->out != RANKS * (RANKS + 1) / 2)
        me->wrong++;
    me->busy = false;
    me->done++;
}

static void start(rank_t *me)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    cp.allreduce = FTC_ALLREDUCE_REDUCE_BCAST;
    a.params = &cp;
    a.f = 1;
    a.dtype = FTC_INT64;
    a.count = 1;
    a.sendbuf = &me->in;
    a.recvbuf = &me->out;
    a.deliver = on_deliver;
    a.deliver_arg = me;
    me->busy = true;
    if (ftc_init_allreduce(me->g, &a, NULL) != FTC_OK)
        me->wrong++;
}

/* One pass of each rank: what a backend's progress does. Returns
 * whether anything happened. */
static bool pass(world_t *w, uint64_t ops)
{
    bool moved = false;
    for (uint32_t i = 0; i < RANKS; i++) {
        rank_t *me = &w->r[i];
        if (!me->busy && me->done < ops) {
            start(me);
            moved = true;
        }
        for (uint32_t k = me->qlen; k > 0; k--) {
            msg_t *m = &me->q[me->qhead];
            (void)ftc_transport_recv(me->ctx, m->src, m->buf, m->len);
            me->qhead = (me->qhead + 1) % QLEN;
            me->qlen--;
            moved = true;
        }
        if (me->armed && me->deadline <= w->clock) {
            me->armed = false;
            me->w->turns++;
            ftc_transport_timer_fired(me->ctx);
            moved = true;
        }
    }
    return moved;
}

static void world_init(world_t *w)
{
    memset(w, 0, sizeof(*w));
    w->clock = 1;
    for (uint32_t i = 0; i < RANKS; i++) {
        w->r[i].me = i;
        w->r[i].w = w;
        w->r[i].in = i + 1;
        CHECK_OK(ftc_context_create(i, RANKS, &q_ops, &w->r[i], NULL,
                                    &w->r[i].ctx));
        CHECK_OK(ftc_group_create(w->r[i].ctx, 1, 0, RANKS, NULL, &w->r[i].g));
    }
}

static void world_free(world_t *w)
{
    for (uint32_t i = 0; i < RANKS; i++)
        ftc_context_destroy(w->r[i].ctx);
}

static void test_clock_reads(void)
{
    world_t *w = calloc(1, sizeof(*w));
    if (!CHECK(w != NULL))
        return;
    world_init(w);
    const uint64_t warm = 100, ops = 1000;
    while (pass(w, warm)) {
    }
    uint64_t reads0 = w->clock_reads, turns0 = w->turns;
    while (pass(w, warm + ops)) {
    }
    uint64_t reads = w->clock_reads - reads0;
    for (uint32_t i = 0; i < RANKS; i++) {
        CHECK_EQ(w->r[i].done, warm + ops);
        CHECK_EQ(w->r[i].wrong, 0u);
    }
    CHECK_MSG(w->turns - turns0 >= ops * RANKS,
              "%llu timer turns for %llu allreduces at %d ranks",
              (unsigned long long)(w->turns - turns0), (unsigned long long)ops,
              RANKS);
    CHECK_MSG(reads * 100 <= ops * RANKS,
              "%llu clock reads for %llu allreduces at %d ranks",
              (unsigned long long)reads, (unsigned long long)ops, RANKS);
    world_free(w);
    free(w);
}

/* Rank 1 goes silent (what it sends is lost) in the middle of a stream,
 * and the clock moves past the suspect timeout and one check period, a
 * check period at a time (a watch's silence counts from the first check
 * after the wait starts): rank 0, waiting on it, must probe it. */
static void test_deadlines_still_seen(void)
{
    world_t *w = calloc(1, sizeof(*w));
    if (!CHECK(w != NULL))
        return;
    world_init(w);
    while (pass(w, 10)) {
    }
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    w->mute[1] = true;
    start(&w->r[0]);        /* waits on rank 1: a watch, a deadline */
    start(&w->r[1]);
    for (int i = 0; i < 8; i++)
        (void)pass(w, 11);
    ftc_counters_t before, after;
    ftc_context_counters(w->r[0].ctx, &before);
    uint64_t period = cfg.suspect_timeout_ns / FTC_WATCH_CHECKS;
    for (uint32_t step = 0; step < FTC_WATCH_CHECKS + 2; step++) {
        w->clock += period;
        for (int i = 0; i < 64; i++)
            (void)pass(w, 11);
    }
    ftc_context_counters(w->r[0].ctx, &after);
    CHECK(after.probes_sent > before.probes_sent);
    world_free(w);
    free(w);
}

int main(void)
{
    test_clock_reads();
    test_deadlines_still_seen();
    return check_report();
}
