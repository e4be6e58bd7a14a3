/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftc_cancel: the application gives up on one operation here. It ends
 * with FTC_ECANCELED through the usual path (deliver from the next entry
 * point). Nothing is sent: the peers see this process stop taking part,
 * as they would see a slow or crashed one, and their failure monitor and
 * the operation's own timeout deal with it (docs/api.md, "Cancel").
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
    ftc_cop_complete(op, FTC_ECANCELED);
    ftc_cop_finish(op);
    ftc_ctx_after_init(g->ctx);
    return FTC_OK;
}
