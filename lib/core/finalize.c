/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leaving a group cleanly (ftc_group_finalize).
 *
 * Why it is needed: a process that delivered an operation may still be
 * needed by a peer that did not: a laggard's later allreduce round needs
 * its input and accepted value, a broadcast receiver the correction
 * missed pulls the value from whoever holds it. A process that exits
 * right after its last delivery looks like a crash to such a laggard,
 * and n-1 of them are more failures than any f.
 *
 * The protocol: once every earlier operation of the group has delivered
 * here, send FTC_MSG_LEAVE to every other member, keep serving (the
 * lingering operations stay), and deliver when every other member has
 * either left (its LEAVE arrived) or failed. A member sends LEAVE only
 * after it delivered all its operations, so when finalize delivers,
 * nobody can need this process any more: it may exit. Members that never
 * finalize are watched by the failure monitor like any waited-on peer.
 *
 * Cost: n-1 messages per member (O(n) each, O(n^2) in all), once per
 * group lifetime. State: a bitmap of n bits.
 */
#include <stdlib.h>
#include <string.h>

#include "core/monitor.h"
#include "core/send.h"

typedef struct finalize_op {
    ftc_cop_t base;
    uint64_t *gone;         /* bit per group rank: left or failed */
    uint32_t pending;       /* others neither left nor failed */
} finalize_op_t;

static bool is_gone(const finalize_op_t *f, uint32_t g)
{
    return (f->gone[g / 64] >> (g % 64)) & 1;
}

static void mark_gone(finalize_op_t *f, uint32_t g, bool release)
{
    if (is_gone(f, g))
        return;
    f->gone[g / 64] |= 1ull << (g % 64);
    f->pending--;
    if (release)
        ftc_monitor_release(f->base.group->ctx,
                            ftc_group_world_rank(f->base.group, g));
}

static void try_finish(finalize_op_t *f)
{
    ftc_cop_t *op = &f->base;
    if (f->pending > 0 || op->delivered)
        return;
    /* Report who failed instead of leaving. */
    uint32_t n = op->group->n, nf = 0;
    uint32_t *list = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (list != NULL) {
        for (uint32_t g = 0; g < n; g++)
            if (g != op->group->me && ftc_group_member_failed(op->group, g))
                list[nf++] = g;
        (void)ftc_cop_set_failed(op, list, nf);
        op->comp.failed_count = nf;
        free(list);
    }
    ftc_cop_complete(op, FTC_OK);
    ftc_cop_finish(op);
}

static void fin_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                       const uint8_t *payload, uint32_t grank)
{
    finalize_op_t *f = (finalize_op_t *)op;
    (void)payload;
    if (hdr->kind != FTC_MSG_LEAVE || hdr->payload_len != 0) {
        op->group->ctx->counters.dropped_badmsg++;
        return;
    }
    mark_gone(f, grank, true);
    try_finish(f);
}

static void fin_on_failed(ftc_cop_t *op, uint32_t grank)
{
    finalize_op_t *f = (finalize_op_t *)op;
    /* The monitor dropped its watch on a failed peer. */
    mark_gone(f, grank, false);
    try_finish(f);
}

static void fin_destroy(ftc_cop_t *op)
{
    finalize_op_t *f = (finalize_op_t *)op;
    ftc_group_t *g = op->group;
    for (uint32_t r = 0; f->gone != NULL && r < g->n; r++)
        if (r != g->me && !is_gone(f, r))
            ftc_monitor_release(g->ctx, ftc_group_world_rank(g, r));
    ftc_cop_delete(op);
}

/* Finalize's one kind, the core's LEAVE, with no family flags. */
static bool fin_msg_valid(const ftc_wire_header_t *hdr)
{
    return hdr->kind == FTC_MSG_LEAVE && (hdr->flags & FTC_WF_FAMILY) == 0;
}

static const ftc_cop_vtable_t finalize_vt = {
    .msg_valid = fin_msg_valid,
    .on_msg = fin_on_msg,
    .on_peer_failed = fin_on_failed,
    .destroy = fin_destroy,
};

int ftc_group_finalize(ftc_group_t *g, ftc_deliver_fn deliver, void *arg)
{
    if (g == NULL || deliver == NULL)
        return FTC_EINVAL;
    if (g->ctx->excluded)
        return FTC_EEXCLUDED;
    if (g->destroying)
        return FTC_ECANCELED;
    /* Leaving while an operation is still in flight here would strand
     * it: the caller waits for its last delivery first. */
    for (ftc_cop_t *o = g->ops; o != NULL; o = o->next)
        if (!o->delivered)
            return FTC_EBUSY;
    size_t words = ((size_t)g->n + 63) / 64;
    finalize_op_t *f = ftc_cop_new(g, sizeof(*f), sizeof(uint64_t) * words);
    if (f == NULL)
        return FTC_ENOMEM;
    /* A core operation, of no family: algorithm 0 on the wire. */
    ftc_coll_args_t args;
    ftc_coll_args_init(&args);
    args.algo = (ftc_algo_t)0;
    args.f = 0;
    args.count = 0;
    args.deliver = deliver;
    args.deliver_arg = arg;
    ftc_cop_setup(g, &args, FTC_COLL_FINALIZE, &f->base, &finalize_vt, 0);
    f->gone = ftc_cop_zalloc(&f->base, sizeof(uint64_t) * words);
    if (f->gone == NULL) {
        ftc_cop_delete(&f->base);
        return FTC_ENOMEM;
    }
    ftc_cop_register(&f->base);
    f->pending = g->n - 1;
    f->gone[g->me / 64] |= 1ull << (g->me % 64);
    ftc_wire_header_t hdr;
    for (uint32_t r = 0; r < g->n; r++) {
        if (r == g->me)
            continue;
        if (ftc_group_member_failed(g, r)) {
            mark_gone(f, r, false);
            continue;
        }
        ftc_cop_header(&f->base, &hdr, FTC_MSG_LEAVE, 0);
        (void)ftc_cop_send(&f->base, r, &hdr, NULL, 0, false);
        /* A send can declare r failed on the spot. */
        if (ftc_group_member_failed(g, r))
            mark_gone(f, r, false);
        else
            ftc_monitor_acquire(g->ctx, ftc_group_world_rank(g, r), &f->base);
    }
    ftc_cop_replay_pending(&f->base);
    ftc_cop_started(&f->base);
    try_finish(f);
    ftc_ctx_after_init(g->ctx);
    return FTC_OK;
}
