/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected reduce operation: one reduce part, rooted where the caller
 * says. A non-root delivers once its value went to its parent; the root
 * delivers the result. A failed root makes the reduce a no-op (paper 4.3).
 */
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/reduce_part.h"
#include "core/copy.h"

typedef struct reduce_op {
    ftc_cop_t base;
    ftc_corrected_params_t params; /* what base.args.params points to */
    uint8_t *input;
    ftc_reduce_part_t rp;
} reduce_op_t;

static void reduce_done(ftc_reduce_part_t *rp, int status)
{
    ftc_cop_t *op = rp->op;
    if (rp->parent < 0 && status == FTC_OK) {
        if (op->nbytes > 0)
            ftc_copy_bytes(op->args.recvbuf, rp->result, op->nbytes);
        op->comp.stats.root_subtree = rp->cand_child;
        /* Exactly the inputs the result misses (list: which, count: how
         * many; the bit scheme cannot tell). */
        op->comp.failed_count = rp->scheme == FTC_FAULT_BIT
                                    ? FTC_FAILED_UNKNOWN
                                    : rp->fail_count;
        if (rp->scheme == FTC_FAULT_LIST) {
            if (ftc_cop_set_failed(op, rp->fails, rp->nfails) != FTC_OK)
                status = FTC_ENOMEM;
            /* Every listed rank was confirmed failed by some process;
             * later operations skip it instead of timing out again. */
            for (uint32_t i = 0; i < rp->nfails; i++)
                ftc_ctx_declare_failed(op->group->ctx,
                                       ftc_group_world_of(op->group, rp->fails[i]));
        }
    }
    ftc_cop_complete(op, status);
    ftc_cop_finish(op);
}

static void reduce_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                          const uint8_t *payload, uint32_t grank)
{
    reduce_op_t *r = (reduce_op_t *)op;
    if ((hdr->kind != FTC_CORR_MSG_UPCORR && hdr->kind != FTC_CORR_MSG_TREE_UP)
        || hdr->word != 0) {
        op->group->ctx->counters.dropped_badmsg++;
        return;
    }
    ftc_reduce_part_on_msg(&r->rp, hdr, payload, grank);
}

static void reduce_on_failed(ftc_cop_t *op, uint32_t grank)
{
    ftc_reduce_part_on_failed(&((reduce_op_t *)op)->rp, grank);
}

static void reduce_destroy(ftc_cop_t *op)
{
    reduce_op_t *r = (reduce_op_t *)op;
    ftc_reduce_part_release(&r->rp);
    ftc_cop_delete(op);
}

static const ftc_cop_vtable_t reduce_vt = {
    .msg_valid = ftc_corrected_msg_valid,
    .on_msg = reduce_on_msg,
    .on_peer_failed = reduce_on_failed,
    .destroy = reduce_destroy,
};

int ftc_reduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                         const ftc_corrected_params_t *params, ftc_cop_t **out)
{
    size_t nbytes = ftc_cop_value_bytes(g, args);
    size_t space = ftc_mem_round(nbytes > 0 ? nbytes : 1)
                   + ftc_reduce_part_space(args, nbytes, g, args->root);
    reduce_op_t *r = ftc_cop_new(g, sizeof(*r), space);
    if (r == NULL)
        return FTC_ENOMEM;
    ftc_corrected_op_setup(g, args, params, FTC_COLL_REDUCE, &r->base, &reduce_vt, &r->params);
    r->input = ftc_cop_alloc(&r->base, r->base.nbytes);
    if (r->input == NULL) {
        ftc_cop_delete(&r->base);
        return FTC_ENOMEM;
    }
    if (r->base.nbytes > 0)
        ftc_copy_bytes(r->input, args->sendbuf, r->base.nbytes);
    ftc_cop_register(&r->base);
    int rc = ftc_reduce_part_start(&r->rp, &r->base, reduce_done, 0, args->root,
                                   r->input, NULL);
    if (rc != FTC_OK) {
        /* Registered already: end it through the normal path. */
        ftc_cop_complete(&r->base, rc);
        ftc_cop_finish(&r->base);
    } else {
        ftc_cop_replay_pending(&r->base);
    }
    *out = &r->base;
    return FTC_OK;
}
