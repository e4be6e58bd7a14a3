/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected family's registry entry: its parameters (defaults, names,
 * checks, what the members must agree on) and its constructors.
 */
#include <string.h>

#include "algo/corrected/butterfly_part.h"
#include "algo/corrected/corrected.h"
#include "algo/registry.h"


static const ftc_corrected_params_t defaults = {
    .size = sizeof(ftc_corrected_params_t),
    .fault_info = FTC_FAULT_LIST,
    .correction = FTC_CORRECTION_CHECKED,
    .distance = 2,
    .bcast_tree = {.kind = FTC_TREE_BINOMIAL, .k = 2},
    .allreduce = FTC_ALLREDUCE_AUTO,
};

/* The largest group for which auto picks the exchange: measured against
 * reduce_bcast over UCX shared memory and tcp, interleaved, and in LogP
 * (docs/corrected.md §5.5 and §5.7, where the numbers and the commands
 * are): its one hop wins to n = 8 on both transports and in the model;
 * over tcp at f = 0 it loses from n = 12, and in the model it nears
 * reduce + bcast at n = 16 and loses from n = 32. */
#define EXCHANGE_AUTO_MAX_N 8u
/* Above it, up to FTC_BUTTERFLY_WATCH_ALL_MAX, the butterfly: it beats
 * reduce + bcast at n = 12 and 16 over both transports and in LogP
 * (§5.7), and up to that n it watches every member as the exchange does,
 * so it keeps the exchange's answer to a process cut off from the group
 * and its root-death bound (tests/test_cutoff.c, tests/test_root_death.c).
 * Above that, reduce + bcast: its watches are a tree's. */
#define BUTTERFLY_AUTO_MAX_N FTC_BUTTERFLY_WATCH_ALL_MAX
/* Over a transport whose messages are costly (FTC_TRANSPORT_COSTLY_MESSAGES:
 * a kernel socket), the exchange only up to this n: over UCX tcp the
 * butterfly's log2 n messages a process beat the exchange's n - 1 from
 * n = 4 (there 0.43 to 0.55 of reduce + bcast against 0.62 to 0.73), and
 * lose at n = 3 (0.56 to 0.70 against 0.46 to 0.51; §5.7). */
#define EXCHANGE_AUTO_MAX_N_COSTLY 3u

void ftc_corrected_params_init(ftc_corrected_params_t *p)
{
    if (p != NULL)
        *p = defaults;
}

static const char *const fault_info_names[] = {
    [FTC_FAULT_LIST] = "list", [FTC_FAULT_COUNT] = "count",
    [FTC_FAULT_BIT] = "bit"};
static const char *const correction_names[] = {
    [FTC_CORRECTION_OPPORTUNISTIC] = "opportunistic",
    [FTC_CORRECTION_CHECKED] = "checked"};

int ftc_fault_info_parse(const char *name, ftc_fault_info_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    for (int i = FTC_FAULT_LIST; i <= FTC_FAULT_BIT; i++)
        if (strcmp(name, fault_info_names[i]) == 0) {
            *out = (ftc_fault_info_t)i;
            return FTC_OK;
        }
    return FTC_EINVAL;
}

int ftc_correction_parse(const char *name, ftc_correction_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    for (int i = FTC_CORRECTION_OPPORTUNISTIC; i <= FTC_CORRECTION_CHECKED; i++)
        if (strcmp(name, correction_names[i]) == 0) {
            *out = (ftc_correction_t)i;
            return FTC_OK;
        }
    return FTC_EINVAL;
}

const char *ftc_fault_info_name(ftc_fault_info_t info)
{
    if (info < FTC_FAULT_LIST || info > FTC_FAULT_BIT)
        return "?";
    return fault_info_names[info];
}

const char *ftc_correction_name(ftc_correction_t c)
{
    if (c < FTC_CORRECTION_OPPORTUNISTIC || c > FTC_CORRECTION_CHECKED)
        return "?";
    return correction_names[c];
}


static const char *const allreduce_names[] = {
    [FTC_ALLREDUCE_AUTO] = "auto", [FTC_ALLREDUCE_REDUCE_BCAST] = "reduce_bcast",
    [FTC_ALLREDUCE_EXCHANGE] = "exchange",
    [FTC_ALLREDUCE_BUTTERFLY] = "butterfly"};

int ftc_allreduce_algo_parse(const char *name, ftc_allreduce_algo_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    for (int i = FTC_ALLREDUCE_AUTO; i <= FTC_ALLREDUCE_BUTTERFLY; i++)
        if (strcmp(name, allreduce_names[i]) == 0) {
            *out = (ftc_allreduce_algo_t)i;
            return FTC_OK;
        }
    return FTC_EINVAL;
}

const char *ftc_allreduce_algo_name(ftc_allreduce_algo_t a)
{
    if (a < FTC_ALLREDUCE_AUTO || a > FTC_ALLREDUCE_BUTTERFLY)
        return "?";
    return allreduce_names[a];
}

/* auto for n over a transport with these cost hints. Every member
 * resolves it alike (the same n, the same transport) and signs what it
 * resolved to. */
static ftc_allreduce_algo_t resolve(ftc_allreduce_algo_t a, uint32_t n,
                                    uint32_t cost_hints)
{
    if (a != FTC_ALLREDUCE_AUTO)
        return a;
    uint32_t exchange_max = (cost_hints & FTC_TRANSPORT_COSTLY_MESSAGES)
                                ? EXCHANGE_AUTO_MAX_N_COSTLY
                                : EXCHANGE_AUTO_MAX_N;
    if (n <= exchange_max)
        return FTC_ALLREDUCE_EXCHANGE;
    return n <= BUTTERFLY_AUTO_MAX_N ? FTC_ALLREDUCE_BUTTERFLY
                                     : FTC_ALLREDUCE_REDUCE_BCAST;
}

ftc_allreduce_algo_t ftc_allreduce_algo_resolve(ftc_allreduce_algo_t a,
                                                uint32_t n)
{
    return resolve(a, n, 0);
}

ftc_allreduce_algo_t ftc_group_allreduce_algo(const ftc_group_t *g,
                                              ftc_allreduce_algo_t a)
{
    if (g == NULL)
        return a; /* no group, no answer: auto stays auto */
    return resolve(a, g->n, g->ctx->cost_hints);
}

static int check(const ftc_group_t *g, const ftc_coll_args_t *args,
                 ftc_coll_t coll, const void *params)
{
    (void)args;
    const ftc_corrected_params_t *p = params;
    if (coll != FTC_COLL_BCAST && p->fault_info != FTC_FAULT_LIST
        && p->fault_info != FTC_FAULT_COUNT && p->fault_info != FTC_FAULT_BIT)
        return FTC_EINVAL;
    if (coll != FTC_COLL_REDUCE) {
        if (ftc_tree_check(&p->bcast_tree) != FTC_OK)
            return FTC_EINVAL;
        if (p->correction != FTC_CORRECTION_OPPORTUNISTIC
            && p->correction != FTC_CORRECTION_CHECKED)
            return FTC_EINVAL;
        if (p->correction == FTC_CORRECTION_OPPORTUNISTIC && p->distance == 0
            && g->n > 1)
            return FTC_EINVAL;
    }
    if (coll == FTC_COLL_ALLREDUCE && p->allreduce != FTC_ALLREDUCE_AUTO
        && p->allreduce != FTC_ALLREDUCE_REDUCE_BCAST
        && p->allreduce != FTC_ALLREDUCE_EXCHANGE
        && p->allreduce != FTC_ALLREDUCE_BUTTERFLY)
        return FTC_EINVAL;
    return FTC_OK;
}

uint32_t ftc_corrected_variant(const ftc_corrected_params_t *p,
                               ftc_coll_t coll)
{
    uint32_t v = (uint32_t)p->fault_info << 8 | (uint32_t)p->correction << 4;
    if (coll != FTC_COLL_REDUCE)
        v ^= (uint32_t)p->bcast_tree.kind << 16 ^ p->bcast_tree.k << 20
             ^ (p->correction == FTC_CORRECTION_OPPORTUNISTIC
                    ? p->distance << 24
                    : 0);
    /* (Resolved by then: auto never reaches here.) Only a round 0
     * changes the digest, so reduce_bcast signs as before it existed;
     * members that disagree on the round 0 (exchange or butterfly) must
     * not meet in one operation either. */
    if (coll == FTC_COLL_ALLREDUCE && p->allreduce == FTC_ALLREDUCE_EXCHANGE)
        v ^= 1u << 31;
    if (coll == FTC_COLL_ALLREDUCE && p->allreduce == FTC_ALLREDUCE_BUTTERFLY)
        v ^= 3u << 30;
    return v;
}

void ftc_corrected_op_setup(ftc_group_t *g, const ftc_coll_args_t *args,
                            const ftc_corrected_params_t *params,
                            ftc_coll_t coll, ftc_cop_t *op,
                            const ftc_cop_vtable_t *vt,
                            ftc_corrected_params_t *keep)
{
    *keep = *params;
    ftc_cop_setup(g, args, coll, op, vt, ftc_corrected_variant(keep, coll));
    op->args.params = keep;
}

static int create_reduce(ftc_group_t *g, const ftc_coll_args_t *args,
                         const void *params, ftc_coll_t coll, ftc_cop_t **out)
{
    (void)coll;
    return ftc_reduce_op_create(g, args, params, out);
}

static int create_bcast(ftc_group_t *g, const ftc_coll_args_t *args,
                        const void *params, ftc_coll_t coll, ftc_cop_t **out)
{
    (void)coll;
    return ftc_bcast_op_create(g, args, params, out);
}

static int create_allreduce(ftc_group_t *g, const ftc_coll_args_t *args,
                            const void *params, ftc_coll_t coll, ftc_cop_t **out)
{
    (void)coll;
    return ftc_allreduce_op_create(g, args, params, out);
}

static const ftc_algo_param_info_t param_info[] = {
    {"fault_info", "list",
     "failure information carried up the reduce tree: list, count or bit"},
    {"correction", "checked",
     "bcast correction: checked (until heard from f+1) or opportunistic"},
    {"distance", "2", "opportunistic correction: ranks sent to each way"},
    {"bcast_tree", "binomial",
     "tree of the bcast phase: binomial, kary, lame, optimal, ..."},
    {"allreduce", "auto",
     "allreduce: exchange (one hop, n-1 messages each), butterfly "
     "(log2 n hops, log2 n messages each), reduce_bcast, or auto (exchange "
     "for small groups)"},
};

const ftc_algo_entry_t ftc_algo_corrected = {
    .info = {
        .id = FTC_ALGO_CORRECTED,
        .name = "corrected",
        .colls = FTC_COLL_BIT(FTC_COLL_REDUCE) | FTC_COLL_BIT(FTC_COLL_BCAST)
                 | FTC_COLL_BIT(FTC_COLL_ALLREDUCE),
        .summary = "Kuettler & Haertig corrected trees: tolerate f failures",
        .params_type = "ftc_corrected_params_t",
        .params = param_info,
        .nparams = sizeof(param_info) / sizeof(param_info[0]),
    },
    .params_size = sizeof(ftc_corrected_params_t),
    .params_default = &defaults,
    .check = check,
    .check_pure = true,
    .create = {
        [FTC_COLL_REDUCE] = create_reduce,
        [FTC_COLL_BCAST] = create_bcast,
        [FTC_COLL_ALLREDUCE] = create_allreduce,
    },
};
