/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Operation timeouts (args.timeout_ns): an operation that has not
 * delivered by its deadline ends with FTC_ETIMEDOUT, told to every
 * member. The deadlines of the operations still waiting are kept in a
 * heap (core/timer_heap.h) and leave it as the operation delivers or
 * finishes: settling asks for the earliest at every entry point, and a
 * walk of the live operations, the 64 delivered ones lingering per group
 * included, cost more than the operation's own work.
 */
#include <stddef.h>

#include "core/op.h"

static ftc_cop_t *op_of(ftc_timer_node_t *node)
{
    return (ftc_cop_t *)(void *)((char *)node - offsetof(ftc_cop_t, timeout));
}

void ftc_cop_timeout_start(ftc_cop_t *op)
{
    ftc_context_t *ctx = op->group->ctx;
    if (op->finished || op->delivered || op->timeout.at != 0)
        return;
    uint64_t now = ctx->ops.now(ctx->tp);
    op->timeout.at = now + op->args.timeout_ns < now ? UINT64_MAX
                                                      : now + op->args.timeout_ns;
    ftc_timer_heap_insert(&ctx->timeouts, &op->timeout);
}

void ftc_cop_timeout_cancel_armed(ftc_cop_t *op)
{
    ftc_timer_heap_remove(&op->group->ctx->timeouts, &op->timeout);
    op->timeout.at = 0;
}

void ftc_ctx_expire_timeouts(ftc_context_t *ctx, uint64_t now)
{
    /* Ending an operation takes its deadline out (it delivers), and no
     * deadline comes in that is already past: the loop ends. */
    ftc_timer_node_t *first;
    while ((first = ftc_timer_heap_min(&ctx->timeouts)) != NULL && first->at <= now) {
        ftc_cop_t *op = op_of(first);
        ftc_cop_timeout_cancel_armed(op);
        ftc_cop_abort_ex(op, FTC_ETIMEDOUT, true);
    }
}
