/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftc_cancel: the application gives up on one operation here. It ends
 * with FTC_ECANCELED through the usual path (deliver from the next entry
 * point), and the members are told at once, as for a usage error: they
 * end it with FTC_EPEER_INVALID. Why not stay silent: this process still
 * answers keepalives, so a member waiting on its part would never declare
 * it failed and would wait for ever (docs/api.md, "Cancel").
 */
#include "core/op.h"

int ftc_cancel(ftc_group_t *g, uint64_t seq)
{
    if (g == NULL)
        return FTC_EINVAL;
    ftc_cop_t *op = g->ops;
    while (op != NULL && op->seq != seq)
        op = op->next;
    if (op == NULL)
        return FTC_EINVAL;
    if (op->delivered)
        return FTC_EBUSY;
    ftc_cop_abort(op, FTC_ECANCELED);
    ftc_ctx_after_init(g->ctx);
    return FTC_OK;
}
