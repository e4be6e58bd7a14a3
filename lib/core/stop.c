/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group stop (core/group.h): a status every live member of a group
 * learns despite failures, which ends the group's operations there, and
 * the per-family group state (ftc_group_ext).
 *
 * Reliability: a member that learns the stop tells every other live
 * member before anything else of it happens, so if any member that
 * learned it lives, all will learn it. A member that crashed halfway
 * through telling leaves the others who heard it to finish the job, as
 * they each tell everyone. This is the simple flooding of a reliable
 * broadcast: n - 1 messages per member, which an error path can afford;
 * an overlay of logarithmic degree (Open MPI floods its revoke over a
 * binomial graph) is the way to O(log n) when it must scale.
 */
#include <stdlib.h>

#include "core/op.h"
#include "core/send.h"


void ftc_group_stop(ftc_group_t *g, int status)
{
    if (g->stopped != 0 || status >= 0)
        return;
    g->stopped = status;
    ftc_watch_t about = {.group_id = g->id, .epoch = g->epoch, .seq = 0};
    for (uint32_t r = 0; r < g->n; r++) {
        if (r == g->me || ftc_group_member_failed(g, r))
            continue;
        (void)ftc_ctx_send_control_ex(g->ctx, ftc_group_world_rank(g, r),
                                      FTC_MSG_STOPPED, &about, 0, 0,
                                      (uint32_t)-status);
    }
    for (ftc_cop_t *op = g->ops; op != NULL; op = op->next) {
        if (op->delivered || op->finished || op->vt->survives_stop)
            continue;
        ftc_cop_complete(op, status);
        ftc_cop_finish(op);
    }
}

void *ftc_group_ext_get(const ftc_group_t *g, uint32_t algo)
{
    for (const struct ftc_group_ext *e = g->ext; e != NULL; e = e->next)
        if (e->algo == algo)
            return e->data;
    return NULL;
}

int ftc_group_ext_set(ftc_group_t *g, uint32_t algo, void *data,
                      void (*free_fn)(void *data))
{
    if (ftc_group_ext_get(g, algo) != NULL)
        return FTC_EINVAL;
    struct ftc_group_ext *e = malloc(sizeof(*e));
    if (e == NULL)
        return FTC_ENOMEM;
    e->algo = algo;
    e->data = data;
    e->free_fn = free_fn;
    e->next = g->ext;
    g->ext = e;
    return FTC_OK;
}
