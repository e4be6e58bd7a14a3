/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's registry entry: its parameters, their check, its
 * constructor.
 */
#include <string.h>

#include "algo/ftco/ftco.h"
#include "algo/ftco/kinds.h"
#include "core/cutoff.h"
#include "core/segment.h"

static const ftc_ftco_params_t defaults = {
    .size = sizeof(ftc_ftco_params_t),
    .tree = {.kind = FTC_TREE_KNOMIAL, .k = 4},
};

void ftc_ftco_params_init(ftc_ftco_params_t *p)
{
    if (p != NULL)
        *p = defaults;
}

/* The paper's trees only: k-nomial and k-ary, single- or multi-root,
 * 2 <= k, and k below the group size where that leaves a choice (n > 2). */
static bool paper_tree(ftc_tree_kind_t kind)
{
    return kind == FTC_TREE_KNOMIAL || kind == FTC_TREE_KARY
           || kind == FTC_TREE_KNOMIAL_MULTIROOT
           || kind == FTC_TREE_KARY_MULTIROOT;
}

static int check(const ftc_group_t *g, const ftc_coll_args_t *args,
                 ftc_coll_t coll, const void *params)
{
    (void)args;
    (void)coll;
    const ftc_ftco_params_t *p = params;
    if (!paper_tree(p->tree.kind))
        return FTC_EINVAL;
    if (p->tree.k < 2 || (g->n > 2 && p->tree.k >= g->n))
        return FTC_EINVAL;
    return FTC_OK;
}

/* Appendix B, Algorithm 5: a process not yet in the operation ACKs a
 * DATA or KEEPALIVE (the core keeps the message until the operation
 * starts here, and it is handled then as if it had just come). The ACK
 * carries no flag: it says "alive", as the answer to a per-message
 * timeout's KEEPALIVE does, and claims nothing about the DATA, so the
 * sender keeps waiting for the real answer but does not exclude us. It
 * echoes the operation's identity (group, sequence, collective,
 * signature) from the message itself. */
static void answer_early(ftc_context_t *ctx, const ftc_wire_header_t *hdr)
{
    if (hdr->kind != FTCO_MSG_UP && hdr->kind != FTCO_MSG_DOWN
        && hdr->kind != FTCO_MSG_KEEPALIVE)
        return;
    /* (Answered, as a started operation's on_keepalive is: exclude in
     * ftco.c says why it is noted.) */
    if (hdr->kind == FTCO_MSG_KEEPALIVE)
        ftc_cutoff_note_asked(ctx, hdr->sender, ctx->ops.now(ctx->tp));
    ftc_wire_header_t ack = *hdr;
    ack.kind = FTCO_MSG_ACK;
    ack.flags = 0;
    ack.word = 0;
    bool inline_done;
    (void)ftc_ctx_send_wire(ctx, hdr->sender, &ack, NULL, 0, NULL,
                            &inline_done);
}

/* A KEEPALIVE of the per-message timeouts (FTCO_WF_PING) asks only
 * "are you alive?": the early ACK answers it in full, so it is not kept.
 * Kept, a late process held one per f_timeout of each neighbour's wait
 * (hundreds each at a spread of 16,384 steps: gigabytes at P = 65,536)
 * and answered them all again at its start, a burst that held the
 * neighbour's own answers back past its neighbours' timeouts. A
 * KEEPALIVE that pulls (re-routing) or gathers wants the DATA or the
 * value: kept, answered at the start. */
static bool answered_early_only(const ftc_wire_header_t *hdr)
{
    return hdr->kind == FTCO_MSG_KEEPALIVE && (hdr->flags & FTCO_WF_PING);
}

static const ftc_algo_param_info_t param_info[] = {
    {"tree", "knomial, k = 4",
     "the tree of every phase: knomial, kary, knomial-multiroot or "
     "kary-multiroot, 2 <= k < n"},
    {"ack_timeout_ns", "0",
     "per-message timeout base (0: the core's failure monitor only)"},
};

const ftc_algo_entry_t ftc_algo_ftco = {
    .info = {
        .id = FTC_ALGO_FTCO,
        .name = "ftco",
        .colls = FTC_COLL_BIT(FTC_COLL_REDUCE) | FTC_COLL_BIT(FTC_COLL_BCAST)
                 | FTC_COLL_BIT(FTC_COLL_ALLREDUCE),
        .summary = "Margolin & Barak: one tree, DATA/ACK, re-routing around "
                   "failed nodes, root replacement, exactly-once reduction",
        .params_type = "ftc_ftco_params_t",
        .params = param_info,
        .nparams = sizeof(param_info) / sizeof(param_info[0]),
    },
    .params_size = sizeof(ftc_ftco_params_t),
    .params_default = &defaults,
    .check = check,
    /* check reads the tree and the group's size only: a call like the
     * group's last one skips it (api/call_memo.h). */
    .check_pure = true,
    .create = {
        [FTC_COLL_REDUCE] = ftc_ftco_op_create,
        [FTC_COLL_BCAST] = ftc_ftco_op_create,
        [FTC_COLL_ALLREDUCE] = ftc_ftco_op_create,
    },
    .answer_early = answer_early,
    .answered_early_only = answered_early_only,
};
