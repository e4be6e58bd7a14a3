/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Usage errors every member must see (a mismatch, a refused call, a
 * message too big, a timeout): the operation ends here, the group
 * remembers it to answer probes, and the members are told at once
 * (FTC_MSG_ENDED) so that nobody waits on this process for ever.
 */
#include <stdlib.h>

#include "core/op.h"
#include "core/pending.h"
#include "core/send.h"


/* The status a peer waiting on an operation that ended here with a usage
 * error should end it with: the same cause where it is shared (the peers
 * disagree, the message does not fit), else "a peer's call was refused". */
static int status_for_peers(int status)
{
    switch (status) {
    case FTC_EMISMATCH:
    case FTC_EOVERFLOW:
    case FTC_EPEER_INVALID:
    case FTC_ETIMEDOUT:
        return status;
    default:
        return FTC_EPEER_INVALID;
    }
}

bool ftc_is_usage_status(int status)
{
    return status == FTC_EMISMATCH || status == FTC_EOVERFLOW
           || status == FTC_EPEER_INVALID || status == FTC_ETIMEDOUT;
}

static void remember_ended(ftc_group_t *g, uint64_t seq, int status)
{
    g->ended[g->nended % 8].seq = seq;
    g->ended[g->nended % 8].status = status;
    g->nended++;
}

/* Every other live member, once: O(n) messages, on an error path only. */
static void tell_members_ended(ftc_group_t *g, uint64_t seq, int status)
{
    ftc_watch_t about = {.group_id = g->id, .epoch = g->epoch, .seq = seq};
    for (uint32_t r = 0; r < g->n; r++) {
        if (r == g->me || ftc_group_member_failed(g, r))
            continue;
        (void)ftc_ctx_send_control_ex(g->ctx, ftc_group_world_rank(g, r),
                              FTC_MSG_ENDED, &about, 0, 0,
                              (uint32_t)-status);
    }
}

void ftc_cop_abort_ex(ftc_cop_t *op, int status, bool tell)
{
    ftc_group_t *g = op->group;
    if (op->finished)
        return;
    int told = status_for_peers(status);
    remember_ended(g, op->seq, told);
    if (!op->delivered)
        ftc_cop_complete(op, status);
    ftc_cop_finish(op);
    if (tell)
        tell_members_ended(g, op->seq, told);
}

void ftc_cop_abort(ftc_cop_t *op, int status)
{
    ftc_cop_abort_ex(op, status, true);
}

void ftc_group_refused(ftc_group_t *g, int status)
{
    uint64_t seq = g->next_seq++;
    /* The cause is this process's call, whatever it was: the peers' own
     * arguments may be fine. */
    int told = FTC_EPEER_INVALID;
    (void)status;
    remember_ended(g, seq, told);
    /* Messages peers already sent for it will never be read. */
    for (ftc_pending_msg_t **pp = &g->pending; *pp != NULL;) {
        ftc_pending_msg_t *m = *pp;
        if (m->hdr.seq == seq) {
            *pp = m->next;
            ftc_pending_forget(g, m);
            free(m);
        } else {
            pp = &m->next;
        }
    }
    tell_members_ended(g, seq, told);
}

int ftc_group_ended_status(const ftc_group_t *g, uint64_t seq)
{
    uint32_t n = g->nended < 8 ? g->nended : 8;
    for (uint32_t i = 0; i < n; i++)
        if (g->ended[i].seq == seq)
            return g->ended[i].status;
    return FTC_OK;
}
