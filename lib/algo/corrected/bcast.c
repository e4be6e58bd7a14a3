/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected broadcast operation. Delivers the first copy of the root's
 * value; stays alive after delivery until its correction duty is done.
 * A process that learns the root failed before any copy reached it
 * delivers FTC_EROOT_FAILED (docs/semantics.md: without agreement a
 * broadcast cannot tell "nobody got it" from "it is slow").
 */
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/bcast_part.h"
#include "core/copy.h"

typedef struct bcast_op {
    ftc_cop_t base;
    ftc_corrected_params_t params; /* what base.args.params points to */
    ftc_bcast_part_t bp;
} bcast_op_t;

static bool bcast_valid(ftc_bcast_part_t *bp, const uint8_t *blob, uint32_t len)
{
    (void)blob;
    return len == bp->op->nbytes;
}

static void bcast_on_value(ftc_bcast_part_t *bp)
{
    ftc_cop_t *op = bp->op;
    if (op->delivered)
        return;
    if (op->nbytes > 0 && op->args.recvbuf != bp->blob)
        ftc_copy_bytes(op->args.recvbuf, bp->blob, op->nbytes);
    ftc_cop_complete(op, FTC_OK);
}

static void bcast_on_root_failed(ftc_bcast_part_t *bp)
{
    ftc_cop_complete(bp->op, FTC_EROOT_FAILED);
    ftc_bcast_part_stop(bp);
    ftc_cop_finish(bp->op);
}

static void bcast_on_idle(ftc_bcast_part_t *bp)
{
    /* Correction is over, but a process it missed may still probe us. */
    ftc_cop_linger(bp->op);
}

static const ftc_bcast_hooks_t bcast_hooks = {
    .valid = bcast_valid,
    .on_value = bcast_on_value,
    .on_root_failed = bcast_on_root_failed,
    .on_idle = bcast_on_idle,
};

static void bcast_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                         const uint8_t *payload, uint32_t grank)
{
    if ((hdr->kind != FTC_CORR_MSG_BCAST && hdr->kind != FTC_CORR_MSG_CORRECT)
        || hdr->word != 0) {
        op->group->ctx->counters.dropped_badmsg++;
        return;
    }
    ftc_bcast_part_on_msg(&((bcast_op_t *)op)->bp, hdr, payload, grank);
}

static void bcast_on_failed(ftc_cop_t *op, uint32_t grank)
{
    ftc_bcast_part_on_failed(&((bcast_op_t *)op)->bp, grank);
}

static void bcast_on_send_done(ftc_cop_t *op)
{
    ftc_bcast_part_on_send_done(&((bcast_op_t *)op)->bp);
}

static void bcast_on_probe(ftc_cop_t *op, uint32_t grank)
{
    ftc_bcast_part_on_probe(&((bcast_op_t *)op)->bp, grank);
}

static void bcast_destroy(ftc_cop_t *op)
{
    /* (Stopping releases all the part holds: its buffers are the
     * operation's memory, freed next.) */
    ftc_bcast_part_stop(&((bcast_op_t *)op)->bp);
    ftc_cop_delete(op);
}

static const ftc_cop_vtable_t bcast_vt = {
    .msg_valid = ftc_corrected_msg_valid,
    .on_msg = bcast_on_msg,
    .on_peer_failed = bcast_on_failed,
    .on_send_done = bcast_on_send_done,
    .on_probe = bcast_on_probe,
    .destroy = bcast_destroy,
};

int ftc_bcast_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                        const ftc_corrected_params_t *params, ftc_cop_t **out)
{
    size_t nbytes = ftc_cop_value_bytes(g, args);
    bcast_op_t *b = ftc_cop_new(g, sizeof(*b),
                               ftc_bcast_part_space(args, params, g, nbytes));
    if (b == NULL)
        return FTC_ENOMEM;
    ftc_corrected_op_setup(g, args, params, FTC_COLL_BCAST, &b->base, &bcast_vt, &b->params);
    ftc_cop_register(&b->base);
    int rc = ftc_bcast_part_start(&b->bp, &b->base, &bcast_hooks, b, 0,
                                  args->root, (const uint8_t *)args->sendbuf,
                                  (uint32_t)b->base.nbytes);
    if (rc != FTC_OK) {
        ftc_cop_complete(&b->base, rc);
        ftc_cop_finish(&b->base);
    } else {
        ftc_cop_replay_pending(&b->base);
    }
    *out = &b->base;
    return FTC_OK;
}
