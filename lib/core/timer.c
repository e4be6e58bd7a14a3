/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-operation timers, multiplexed on the context's one transport timer
 * (a family's retransmission or per-message timeout, say). The armed
 * ones are kept in a heap (core/timer_heap.h), so that the earliest is
 * known without looking at the operations that have none: a group keeps
 * 64 delivered operations lingering, and a walk of them all on every
 * re-arm cost more than the rest of the operation.
 */
#include <stddef.h>

#include "core/op.h"

static ftc_cop_t *op_of(ftc_timer_node_t *node)
{
    return (ftc_cop_t *)(void *)((char *)node - offsetof(ftc_cop_t, timer));
}

uint64_t ftc_cop_now(const ftc_cop_t *op)
{
    const ftc_context_t *ctx = op->group->ctx;
    return ctx->ops.now(ctx->tp);
}

/* Take op's armed timer out of the heap, or out of the list of due
 * timers that a timer turn is firing. */
static void unqueue(ftc_context_t *ctx, ftc_cop_t *op)
{
    ftc_timer_node_t *x = &op->timer;
    if (op->timer_in_heap) {
        ftc_timer_heap_remove(&ctx->timers, x);
        op->timer_in_heap = false;
        return;
    }
    if (x->prev != NULL)
        x->prev->next = x->next;
    else
        ctx->timers_due = x->next;
    if (x->next != NULL)
        x->next->prev = x->prev;
    x->next = x->prev = NULL;
}

void ftc_cop_timer_arm(ftc_cop_t *op, uint64_t at)
{
    ftc_context_t *ctx = op->group->ctx;
    if (op->finished)
        return;
    if (at == 0)
        at = 1; /* 0 means "none" */
    if (op->timer.at != 0)
        unqueue(ctx, op);
    else
        ctx->timer_ops++;
    op->timer.at = at;
    ftc_timer_heap_insert(&ctx->timers, &op->timer);
    op->timer_in_heap = true;
    /* Re-armed when the current entry point settles. */
    if (!ctx->settling)
        ftc_ctx_rearm(ctx);
}

void ftc_cop_timer_cancel_armed(ftc_cop_t *op)
{
    ftc_context_t *ctx = op->group->ctx;
    unqueue(ctx, op);
    op->timer.at = 0;
    ctx->timer_ops--;
}

uint64_t ftc_ctx_next_op_timer(const ftc_context_t *ctx)
{
    uint64_t d = UINT64_MAX;
    const ftc_timer_node_t *first = ftc_timer_heap_min(&ctx->timers);
    if (first != NULL)
        d = first->at;
    /* Not empty only while a timer turn fires them (a hook re-arms). */
    for (const ftc_timer_node_t *x = ctx->timers_due; x != NULL; x = x->next)
        if (x->at < d)
            d = x->at;
    return d;
}

void ftc_ctx_fire_op_timers(ftc_context_t *ctx, uint64_t now)
{
    /* Every timer due now leaves the heap before any hook runs: a hook
     * that arms its timer again, even for a time already past, is
     * fired by a later turn and not by this one, as when a walk found
     * the due operations. A hook may cancel or move another due timer:
     * the list is unlinked in place. */
    ftc_timer_node_t *tail = ctx->timers_due;
    while (tail != NULL && tail->next != NULL)
        tail = tail->next;
    ftc_timer_node_t *first;
    while ((first = ftc_timer_heap_min(&ctx->timers)) != NULL && first->at <= now) {
        ftc_timer_heap_remove(&ctx->timers, first);
        op_of(first)->timer_in_heap = false;
        first->prev = tail;
        if (tail != NULL)
            tail->next = first;
        else
            ctx->timers_due = first;
        tail = first;
    }
    while (ctx->timers_due != NULL) {
        ftc_cop_t *op = op_of(ctx->timers_due);
        ftc_cop_timer_cancel_armed(op);
        /* The hook may arm it again; it may not free op (freeing
         * happens when the entry point settles). */
        if (!op->finished && op->vt->on_timer != NULL)
            op->vt->on_timer(op);
    }
}
