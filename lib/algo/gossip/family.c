/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip family's registry entries (push-sum, push-flow, PCF: one
 * folder, three algorithm ids), its parameters and their check.
 */
#include <float.h>
#include <math.h>

#include "algo/registry.h"
#include "algo/gossip/gossip.h"
#include "algo/gossip/neighbours.h"

static const ftc_gossip_params_t defaults = {
    .size = sizeof(ftc_gossip_params_t),
    .aggregate = FTC_GOSSIP_AVERAGE,
    .neighbours = FTC_NEIGHBOURS_FULL,
    .partner = FTC_PARTNER_RANDOM,
    .target = 0.0,
    .stable = 0,
    .max_iterations = 20000,
    .period_ns = 10000,
    .bitflip_tolerant = 0,
    .exclusion = FTC_GOSSIP_EXCLUDE_FLOWS,
    .report = NULL,
};

void ftc_gossip_params_init(ftc_gossip_params_t *p)
{
    if (p != NULL)
        *p = defaults;
}

int ftc_gossip_params_check(const ftc_gossip_params_t *p, ftc_algo_t algo,
                            uint32_t n, ftc_dtype_t dtype, ftc_op_t op,
                            const char **why)
{
    const char *dummy;
    if (why == NULL)
        why = &dummy;
    *why = NULL;
    if (p == NULL || n == 0) {
        *why = "params: NULL, or an empty group";
        return FTC_EINVAL;
    }
    if (algo != FTC_ALGO_PUSH_SUM && algo != FTC_ALGO_PUSH_FLOW
        && algo != FTC_ALGO_PCF) {
        *why = "algo: not a gossip algorithm";
        return FTC_EINVAL;
    }
    if (dtype != FTC_FLOAT && dtype != FTC_DOUBLE) {
        *why = "dtype: gossip needs float or double (an integer cannot hold "
               "the halved masses)";
        return FTC_EINVAL;
    }
    if (op != FTC_SUM) {
        *why = "op: gossip computes sums and averages only (FTC_SUM; "
               "params.aggregate chooses)";
        return FTC_EINVAL;
    }
    if (p->aggregate != FTC_GOSSIP_AVERAGE && p->aggregate != FTC_GOSSIP_SUM) {
        *why = "aggregate: neither average nor sum";
        return FTC_EINVAL;
    }
    if (p->partner != FTC_PARTNER_RANDOM
        && p->partner != FTC_PARTNER_ROUND_ROBIN) {
        *why = "partner: neither random nor round-robin";
        return FTC_EINVAL;
    }
    double eps = dtype == FTC_DOUBLE ? DBL_EPSILON : FLT_EPSILON;
    if (p->target != 0.0 && !(p->target >= eps && p->target < 1.0)) {
        *why = "target: must be 0 (the default) or in [epsilon of the "
               "dtype, 1)";
        return FTC_EINVAL;
    }
    if (p->max_iterations == 0) {
        *why = "max_iterations: must be at least 1";
        return FTC_EINVAL;
    }
    if (p->period_ns == 0) {
        *why = "period_ns: must be at least 1";
        return FTC_EINVAL;
    }
    if (p->bitflip_tolerant > 1
        || (p->bitflip_tolerant == 1 && algo != FTC_ALGO_PCF)) {
        *why = "bitflip_tolerant: 0, or 1 with PCF only";
        return FTC_EINVAL;
    }
    if (p->exclusion != FTC_GOSSIP_EXCLUDE_FLOWS
        && p->exclusion != FTC_GOSSIP_EXCLUDE_ALL) {
        *why = "exclusion: neither flows nor all";
        return FTC_EINVAL;
    }
    return ftc_gossip_neighbours_check(p, n, why);
}

static int check(const ftc_group_t *g, const ftc_coll_args_t *args,
                 ftc_coll_t coll, const void *params)
{
    (void)coll;
    return ftc_gossip_params_check(params, args->algo, g->n, args->dtype,
                                   args->op, NULL);
}

static const ftc_algo_param_info_t param_info[] = {
    {"aggregate", "average", "average (weight 1 everywhere) or sum (weight 1 at the root)"},
    {"neighbours", "full", "full, hypercube, torus3d, ring, bus or overlay"},
    {"torus", "0,0,0", "torus3d's sides, product = group size"},
    {"overlay_index", "NULL", "overlay: row starts, n + 1 entries"},
    {"overlay_adj", "NULL", "overlay: neighbours, symmetric and connected"},
    {"partner", "random", "random (seeded) or round-robin"},
    {"target", "0", "relative accuracy of the local test (0: 1e-14 double, 1e-6 float)"},
    {"stable", "0", "receiving iterations within target before delivery (0: 8 + 2 log2 n)"},
    {"max_iterations", "20000", "iteration cap before delivery"},
    {"period_ns", "10000", "transport time between iterations"},
    {"bitflip_tolerant", "0", "PCF: sum the flows afresh for each estimate"},
    {"exclusion", "flows", "PCF, a failed neighbour: zero its flows (flows) or undo all exchanged (all)"},
    {"report", "NULL", "where to write iterations and the error estimate"},
};

#define GOSSIP_ENTRY(ID, NAME, SUMMARY)                                      \
    {                                                                        \
        .info = {                                                            \
            .id = ID,                                                        \
            .name = NAME,                                                    \
            .colls = FTC_COLL_BIT(FTC_COLL_ALLREDUCE),                       \
            .summary = SUMMARY,                                              \
            .params_type = "ftc_gossip_params_t",                            \
            .params = param_info,                                            \
            .nparams = sizeof(param_info) / sizeof(param_info[0]),           \
        },                                                                   \
        .params_size = sizeof(ftc_gossip_params_t),                          \
        .params_default = &defaults, .check = check,                         \
        .create = {[FTC_COLL_ALLREDUCE] = ftc_gossip_op_create},             \
    }

const ftc_algo_entry_t ftc_algo_push_sum =
    GOSSIP_ENTRY(FTC_ALGO_PUSH_SUM, "push-sum",
                 "gossip all-to-all sum/average; no tolerance (baseline)");
const ftc_algo_entry_t ftc_algo_push_flow =
    GOSSIP_ENTRY(FTC_ALGO_PUSH_FLOW, "push-flow",
                 "gossip with flows: tolerates loss and node failures");
const ftc_algo_entry_t ftc_algo_pcf =
    GOSSIP_ENTRY(FTC_ALGO_PCF, "pcf",
                 "push-cancel-flow: push-flow's tolerance at machine "
                 "precision, no fall-back after a failure");
