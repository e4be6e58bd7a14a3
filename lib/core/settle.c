/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Settling: the step that ends every entry point (tell operations about
 * failures, run deliver callbacks, free what is finished, re-arm the one
 * timer), and the entry points that only drive it (the timer, a backend's
 * failure report, progress).
 */
#include <stdlib.h>

#include "core/monitor.h"
#include "core/op.h"
#include "core/segment.h"


static void notify_failed(ftc_context_t *ctx, uint32_t r)
{
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next) {
        int64_t gr = ftc_group_rank_of(g, r);
        if (gr < 0)
            continue;
        for (ftc_cop_t *op = g->ops; op != NULL; op = op->next) {
            if (op->finished)
                continue;
            if (!op->delivered)
                op->comp.stats.failures_detected++;
            op->vt->on_peer_failed(op, (uint32_t)gr);
        }
    }
}

static void reap(ftc_context_t *ctx)
{
    while (ctx->reap_head != NULL) {
        ftc_cop_t *op = ctx->reap_head;
        ctx->reap_head = op->next_reap;
        op->on_reap = false;
        /* Pinned again since (it cannot be finished and unpinned twice
         * otherwise): it comes back here when it is unpinned. */
        if (op->finished && op->callback_done && !ftc_cop_pinned(op))
            ftc_cop_unlink_and_free(op);
    }
}

/* A delivery happened on g: retire the lingerers whose time has come. A
 * peer still behind by this many collectives is not served any more.
 * Oldest first, so a stream of allreduces (64 lingering) costs O(1) per
 * delivery, not a walk of the group's operations. Here, inline into the
 * delivery loop, its only caller: as a call of its own (core/op.c) its
 * prologue and epilogue were a fifth of its cost. */
static inline void retire_lingering(ftc_group_t *g)
{
    g->colls_done++;
    while (g->linger_head != NULL && g->linger_head->retire_at <= g->colls_done) {
        ftc_cop_t *op = g->linger_head;
        g->linger_head = op->next_linger;
        if (g->linger_head == NULL)
            g->linger_tail = NULL;
        op->next_linger = NULL;
        op->in_linger = false;
        if (!op->finished)
            ftc_cop_finish(op);
        else
            ftc_cop_maybe_reap(op);
    }
}

/* Inline into settle and after_init, which end every entry point. */
static inline __attribute__((always_inline)) void rearm(ftc_context_t *ctx)
{
    uint64_t want = UINT64_MAX;
    bool urgent = ctx->done_head != NULL || ctx->fail_queue_len > 0
                  || ctx->cont_timer || ftc_segment_has_parked(ctx);
    /* Due at once: any deadline already past will do (transport.h: the
     * wake-up comes at or after it), and 0 needs no clock read, which
     * every delivery would otherwise cost. */
    if (urgent)
        want = 0;
    else
        ctx->quick_turns = 0;   /* the deadlines go to the transport */
    uint64_t mon = ftc_monitor_next_deadline(ctx);
    if (mon < want)
        want = mon;
    uint64_t op_due = ftc_ctx_next_timeout(ctx);
    if (op_due < want)
        want = op_due;
    if (ctx->timer_ops > 0) {
        uint64_t timer_due = ftc_ctx_next_op_timer(ctx);
        if (timer_due < want)
            want = timer_due;
    }
    if (want == UINT64_MAX) {
        if (ctx->timer_armed) {
            ctx->ops.timer_cancel(ctx->tp);
            ctx->timer_armed = false;
        }
        return;
    }
    /* A later deadline leaves the armed one alone: deadlines move later
     * (a watch's check, core/monitor.c) mostly in a timer turn, which
     * re-arms anyway, and a re-arm for each move would cost more than
     * the early wake-up it may leave (timer_fired re-arms). */
    if (!ctx->timer_armed || want < ctx->timer_deadline) {
        ctx->ops.timer_arm(ctx->tp, want);
        ctx->timer_armed = true;
        ctx->timer_deadline = want;
    }
}

void ftc_ctx_rearm(ftc_context_t *ctx)
{
    rearm(ctx);
}

void ftc_ctx_settle_now(ftc_context_t *ctx)
{
    ctx->settling = true;
    for (;;) {
        if (ctx->fail_queue_len > 0) {
            uint32_t r = ctx->fail_queue[--ctx->fail_queue_len];
            notify_failed(ctx, r);
            continue;
        }
        if (ctx->done_head != NULL) {
            ftc_cop_t *op = ctx->done_head;
            ctx->done_head = op->next_done;
            if (ctx->done_head == NULL)
                ctx->done_tail = NULL;
            op->queued = false;
            op->comp.coll = op->coll;
            op->comp.seq = op->seq;
            op->comp.group = op->group;
            if (op->comp.recvbuf == NULL)
                op->comp.recvbuf = op->args.recvbuf;
            op->args.deliver(&op->comp, op->args.deliver_arg);
            op->callback_done = true;
            ftc_cop_maybe_reap(op);
            retire_lingering(op->group);
            continue;
        }
        break;
    }
    reap(ctx);
    ctx->settling = false;
    rearm(ctx);
}

void ftc_ctx_after_init(ftc_context_t *ctx)
{
    if (!ctx->settling)
        rearm(ctx);
}

/* ---- entry points ----------------------------------------------------- */

/* The send-done continuations waiting for this turn. */
static void run_continuations(ftc_context_t *ctx)
{
    ctx->cont_timer = false;
    ftc_cop_t *list = ctx->cont_head;
    ctx->cont_head = NULL;
    while (list != NULL) {
        ftc_cop_t *op = list;
        list = op->next_cont;
        op->cont_wanted = false;
        if (!op->finished && op->vt->on_send_done != NULL)
            op->vt->on_send_done(op);
        ftc_cop_maybe_reap(op);
    }
}

/* Quick turns allowed in a row, while urgent work keeps the timer armed
 * at once (ftc_ctx_rearm starts the count again when the deadlines go
 * to the transport), before a turn that reads the clock. */
#define FTC_QUICK_TURNS_MAX 16u

/* Whether this turn may skip the clock: the timer was armed "at once"
 * (deadline 0: a continuation, a completion or a failure report waits,
 * ftc_ctx_rearm), so the wake-up is for that work and not for a deadline.
 * Not when the turn's work is large (parked segments, a continuation of
 * an operation on a large value), whose time must not count as the
 * peers' silence (core/monitor.c), and not more than
 * FTC_QUICK_TURNS_MAX times in a row. A deadline that fell due meanwhile
 * is not missed: settling re-arms the timer for it, and a past deadline
 * fires on the transport's next pass. */
static bool quick_turn(ftc_context_t *ctx)
{
    if (ctx->timer_deadline != 0 || ctx->quick_turns >= FTC_QUICK_TURNS_MAX
        || ftc_segment_has_parked(ctx))
        return false;
    for (const ftc_cop_t *op = ctx->cont_head; op != NULL; op = op->next_cont)
        if (op->nbytes >= FTC_AWAY_MIN_BYTES)
            return false;
    return true;
}

void ftc_transport_timer_fired(ftc_context_t *ctx)
{
    if (ctx == NULL)
        return;
    ctx->timer_armed = false;
    if (quick_turn(ctx)) {
        /* Two clock reads and the walks of the watches and deadlines
         * saved on every send-done continuation: the corrected
         * allreduce's steady state makes one per operation. */
        ctx->quick_turns++;
        run_continuations(ctx);
        ftc_ctx_settle(ctx);
        return;
    }
    ctx->quick_turns = 0;
    /* Timed like a large value's handling (core/monitor.h): the
     * continuations below may send one, and the clock is read anyway. */
    uint64_t now = ftc_monitor_away_begin(ctx);
    if (now == 0)
        now = ctx->ops.now(ctx->tp);    /* nested: not the outermost */
    if (!ctx->excluded) {
        ftc_monitor_expire(ctx, now);
        ftc_ctx_expire_timeouts(ctx, now);
        if (ctx->timer_ops > 0)
            ftc_ctx_fire_op_timers(ctx, now);
        ftc_dispatch_parked(ctx);
    }
    run_continuations(ctx);
    ftc_ctx_settle(ctx);
    ftc_monitor_away_end(ctx, now);
}

void ftc_transport_peer_failed(ftc_context_t *ctx, uint32_t peer)
{
    if (ctx == NULL || peer >= ctx->size || ctx->excluded)
        return;
    ftc_ctx_declare_observed_failed(ctx, peer);
    ftc_ctx_settle(ctx);
}

int ftc_progress(ftc_context_t *ctx)
{
    if (ctx == NULL)
        return FTC_EINVAL;
    if (ctx->ops.progress == NULL)
        return 0;
    return ctx->ops.progress(ctx->tp);
}
