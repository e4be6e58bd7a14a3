/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-operation timers, multiplexed on the context's one transport timer
 * (a family's retransmission or per-message timeout, say). Like the
 * operations' timeouts, they are found by a walk of the live operations,
 * done only while some operation has one armed (timer_ops): a stream of
 * operations without timers pays nothing.
 */
#include "core/op.h"

uint64_t ftc_cop_now(const ftc_cop_t *op)
{
    const ftc_context_t *ctx = op->group->ctx;
    return ctx->ops.now(ctx->tp);
}

void ftc_cop_timer_arm(ftc_cop_t *op, uint64_t at)
{
    ftc_context_t *ctx = op->group->ctx;
    if (op->finished)
        return;
    if (at == 0)
        at = 1; /* 0 means "none" */
    if (op->timer_at == 0)
        ctx->timer_ops++;
    op->timer_at = at;
    /* Re-armed when the current entry point settles. */
    if (!ctx->settling)
        ftc_ctx_rearm(ctx);
}

void ftc_cop_timer_cancel_armed(ftc_cop_t *op)
{
    op->timer_at = 0;
    op->group->ctx->timer_ops--;
}

uint64_t ftc_ctx_next_op_timer(const ftc_context_t *ctx)
{
    uint64_t d = UINT64_MAX;
    if (ctx->timer_ops == 0)
        return d;
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        for (ftc_cop_t *op = g->ops; op != NULL; op = op->next)
            if (op->timer_at != 0 && op->timer_at < d)
                d = op->timer_at;
    return d;
}

void ftc_ctx_fire_op_timers(ftc_context_t *ctx, uint64_t now)
{
    if (ctx->timer_ops == 0)
        return;
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        for (ftc_cop_t *op = g->ops; op != NULL; op = op->next) {
            if (op->timer_at == 0 || op->timer_at > now)
                continue;
            ftc_cop_timer_cancel(op);
            /* The hook may arm it again; it may not free op (freeing
             * happens when the entry point settles). */
            if (!op->finished && op->vt->on_timer != NULL)
                op->vt->on_timer(op);
        }
}
