/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithms the API can start: their argument checks and their
 * constructors.
 */
#include "algo/registry.h"
#include "algo/corrected/corrected.h"
#include "algo/tree/tree.h"

int ftc_algo_check(const ftc_group_t *g, const ftc_coll_args_t *a,
                   ftc_coll_t coll)
{
    if (a->algo != FTC_ALGO_CORRECTED && a->algo != FTC_ALGO_TREE)
        return FTC_EINVAL;
    if (a->algo == FTC_ALGO_CORRECTED && coll != FTC_COLL_BCAST) {
        if (a->fault_info != FTC_FAULT_LIST && a->fault_info != FTC_FAULT_COUNT
            && a->fault_info != FTC_FAULT_BIT)
            return FTC_EINVAL;
    }
    if (a->algo == FTC_ALGO_CORRECTED && coll != FTC_COLL_REDUCE) {
        if (a->correction != FTC_CORRECTION_OPPORTUNISTIC
            && a->correction != FTC_CORRECTION_CHECKED)
            return FTC_EINVAL;
        if (a->correction == FTC_CORRECTION_OPPORTUNISTIC
            && a->distance == 0 && g->n > 1)
            return FTC_EINVAL;
    }
    return FTC_OK;
}

/* Start the operation itself (no checked-mode pairing). */
int ftc_algo_start(ftc_group_t *g, const ftc_coll_args_t *args,
                   ftc_coll_t coll, ftc_cop_t **op)
{
    if (args->algo == FTC_ALGO_TREE)
        return ftc_tree_op_create(g, args, coll, op);
    if (coll == FTC_COLL_REDUCE)
        return ftc_reduce_op_create(g, args, op);
    if (coll == FTC_COLL_BCAST)
        return ftc_bcast_op_create(g, args, op);
    return ftc_allreduce_op_create(g, args, op);
}

