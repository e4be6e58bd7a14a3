/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tree family's registry entry: its parameters and its constructor.
 */
#include <string.h>

#include "algo/registry.h"
#include "algo/tree/tree.h"

static const ftc_tree_params_t defaults = {
    .size = sizeof(ftc_tree_params_t),
    .bcast_tree = {.kind = FTC_TREE_BINOMIAL, .k = 2},
};

void ftc_tree_params_init(ftc_tree_params_t *p)
{
    if (p != NULL)
        *p = defaults;
}

static int check(const ftc_group_t *g, const ftc_coll_args_t *args,
                 ftc_coll_t coll, const void *params)
{
    (void)g;
    (void)args;
    const ftc_tree_params_t *p = params;
    if (coll != FTC_COLL_REDUCE && ftc_tree_check(&p->bcast_tree) != FTC_OK)
        return FTC_EINVAL;
    return FTC_OK;
}

static const ftc_algo_param_info_t param_info[] = {
    {"bcast_tree", "binomial",
     "tree of bcast and of allreduce's second half (reduce: binomial)"},
};

const ftc_algo_entry_t ftc_algo_tree = {
    .info = {
        .id = FTC_ALGO_TREE,
        .name = "tree",
        .colls = FTC_COLL_BIT(FTC_COLL_REDUCE) | FTC_COLL_BIT(FTC_COLL_BCAST)
                 | FTC_COLL_BIT(FTC_COLL_ALLREDUCE),
        .summary = "plain trees, no tolerance: the baseline; a failure ends "
                   "the collective with FTC_EPEER_FAILED",
        .params_type = "ftc_tree_params_t",
        .params = param_info,
        .nparams = sizeof(param_info) / sizeof(param_info[0]),
    },
    .params_size = sizeof(ftc_tree_params_t),
    .params_default = &defaults,
    .check = check,
    .check_pure = true,
    .create = {
        [FTC_COLL_REDUCE] = ftc_tree_op_create,
        [FTC_COLL_BCAST] = ftc_tree_op_create,
        [FTC_COLL_ALLREDUCE] = ftc_tree_op_create,
    },
};
