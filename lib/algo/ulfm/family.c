/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm family: its registry entry and its public entry points
 * (ftcoll/mitigation.h). Its operations are not reduce, bcast or
 * allreduce, so the entry offers none of those (ftc_init_allreduce with
 * FTC_ALGO_ULFM is FTC_ENOTSUP); they start from ftc_init_agree and
 * ftc_init_shrink. Invalidation is the core's group stop with
 * FTC_EINVALIDATED (core/stop.c); the parameters set on a group and its
 * acknowledged failures are the family's per-group state.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "algo/registry.h"
#include "algo/ulfm/agree.h"
#include "ftcoll/mitigation.h"

/* The family's parameters are per group (ftc_group_set_ulfm_params),
 * not per call: its operations take no ftc_coll_args_t. The registry
 * lists them for tools. */
static const ftc_ulfm_params_t defaults = {
    .size = sizeof(ftc_ulfm_params_t),
    .agree_round = FTC_AGREE_ROUND_RD2,
};

static const ftc_algo_param_info_t ulfm_param_info[] = {
    {"agree_round", "rd2",
     "the agreement's failure-free round, per group "
     "(ftc_group_set_ulfm_params): rd2 (recursive doubling), rd4 (radix "
     "4: the lowest latency), tree (four tree waves: O(1) messages per "
     "member)"},
};

const ftc_algo_entry_t ftc_algo_ulfm = {
    .info = {
        .id = FTC_ALGO_ULFM,
        .name = "ulfm",
        .colls = FTC_COLL_BIT(FTC_COLL_AGREE) | FTC_COLL_BIT(FTC_COLL_SHRINK),
        .summary = "failure mitigation (MPI chapter 17): invalidate, "
                   "uniform agreement on a 64-bit AND and a failed set "
                   "despite any number of failures, shrink, failure ack",
        .params_type = "ftc_ulfm_params_t",
        .params = ulfm_param_info,
        .nparams = sizeof(ulfm_param_info) / sizeof(ulfm_param_info[0]),
    },
    .params_size = sizeof(ftc_ulfm_params_t),
    .params_default = &defaults,
    .check = NULL,
    .create = {NULL},
};

/* ---- per-group state: parameters and acknowledged failures ------------- */

/* What the family keeps on a group (ftc_group_ext), made on first use. */
typedef struct ulfm_group_state {
    ftc_ulfm_params_t params;
    ftc_idset_t acked;          /* ftc_group_failure_ack's */
} ulfm_group_state_t;

static void state_free(void *data)
{
    ulfm_group_state_t *st = data;
    ftc_idset_free(&st->acked);
    free(st);
}

static ulfm_group_state_t *state_find(const ftc_group_t *g)
{
    return ftc_group_ext_get(g, FTC_ALGO_ULFM);
}

/* The group's state, created with the defaults if it has none; NULL when
 * out of memory. */
static ulfm_group_state_t *state_get(ftc_group_t *g)
{
    ulfm_group_state_t *st = state_find(g);
    if (st != NULL)
        return st;
    st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NULL;
    st->params = defaults;
    if (ftc_group_ext_set(g, FTC_ALGO_ULFM, st, state_free) != FTC_OK) {
        free(st);
        return NULL;
    }
    return st;
}

static const char *const round_names[] = {
    [FTC_AGREE_ROUND_RD2] = "rd2",
    [FTC_AGREE_ROUND_RD4] = "rd4",
    [FTC_AGREE_ROUND_TREE] = "tree",
};
#define NROUNDS (sizeof(round_names) / sizeof(round_names[0]))

const char *ftc_agree_round_name(ftc_agree_round_t round)
{
    return (unsigned)round < NROUNDS ? round_names[round] : NULL;
}

int ftc_agree_round_parse(const char *name, ftc_agree_round_t *round)
{
    if (name == NULL || round == NULL)
        return FTC_EINVAL;
    for (unsigned i = 0; i < NROUNDS; i++)
        if (strcmp(name, round_names[i]) == 0) {
            *round = (ftc_agree_round_t)i;
            return FTC_OK;
        }
    return FTC_EINVAL;
}

void ftc_ulfm_params_init(ftc_ulfm_params_t *params)
{
    if (params != NULL)
        *params = defaults;
}

int ftc_group_set_ulfm_params(ftc_group_t *group,
                              const ftc_ulfm_params_t *params)
{
    if (group == NULL || params == NULL
        || params->size < offsetof(ftc_ulfm_params_t, agree_round)
                              + sizeof(params->agree_round)
        || (unsigned)params->agree_round >= NROUNDS)
        return FTC_EINVAL;
    ulfm_group_state_t *st = state_get(group);
    if (st == NULL)
        return FTC_ENOMEM;
    st->params.agree_round = params->agree_round;
    return FTC_OK;
}

ftc_agree_round_t ftc_ulfm_group_round(const ftc_group_t *g)
{
    const ulfm_group_state_t *st = state_find(g);
    return st != NULL ? st->params.agree_round : defaults.agree_round;
}

/* A group made from from (shrink) runs with from's parameters: the
 * members set them once per lineage. Nothing to copy for defaults. */
static int params_inherit(const ftc_group_t *from, ftc_group_t *to)
{
    const ulfm_group_state_t *src = state_find(from);
    if (src == NULL || src->params.agree_round == defaults.agree_round)
        return FTC_OK;
    ulfm_group_state_t *dst = state_get(to);
    if (dst == NULL)
        return FTC_ENOMEM;
    dst->params = src->params;
    return FTC_OK;
}

/* ---- agreement ---------------------------------------------------------- */

static void agree_decided(ftc_agree_t *a, uint64_t value,
                          const uint32_t *failed, uint32_t nfailed)
{
    ftc_cop_t *op = &a->base;
    if (op->args.recvbuf != NULL)
        memcpy(op->args.recvbuf, &value, sizeof(value));
    int rc = ftc_cop_set_failed(op, failed, nfailed);
    ftc_cop_complete(op, rc);
}

static const ftc_agree_hooks_t agree_hooks = {.decided = agree_decided};

int ftc_init_agree(ftc_group_t *group, uint64_t value, uint64_t *result,
                   ftc_deliver_fn deliver, void *deliver_arg, uint64_t *seq)
{
    if (group == NULL)
        return FTC_EINVAL;
    if (group->ctx->excluded)
        return FTC_EEXCLUDED;
    if (group->destroying)
        return FTC_ECANCELED;
    uint64_t my_seq = group->next_seq;
    ftc_agree_t *a = NULL;
    int rc = result == NULL || deliver == NULL
                 ? FTC_EINVAL
                 : ftc_agree_start(group, FTC_COLL_AGREE, value, result,
                                   deliver, deliver_arg, sizeof(ftc_agree_t),
                                   &agree_hooks, NULL, NULL, &a);
    if (rc != FTC_OK) {
        /* It keeps its place in the sequence, as any refused call. */
        ftc_group_refused(group, rc);
        ftc_ctx_after_init(group->ctx);
        return rc;
    }
    ftc_cop_started(&a->base);
    if (seq != NULL)
        *seq = my_seq;
    ftc_ctx_after_init(group->ctx);
    return FTC_OK;
}

/* ---- the blocking helper ---------------------------------------------- */

/* Heap state: if the caller gives up, the callback still has somewhere
 * to write, and frees it. */
typedef struct blocking_agree {
    bool done, abandoned;
    int status;
    uint64_t value;
    uint32_t nfailed;
    uint32_t *failed;
} blocking_agree_t;

static void blocking_deliver(const ftc_completion_t *c, void *arg)
{
    blocking_agree_t *b = arg;
    if (b->abandoned) {
        free(b);
        return;
    }
    b->done = true;
    b->status = c->status;
    b->nfailed = c->nfailed;
    if (c->nfailed > 0) {
        b->failed = malloc(sizeof(uint32_t) * c->nfailed);
        if (b->failed == NULL)
            b->status = FTC_ENOMEM;
        else
            memcpy(b->failed, c->failed, sizeof(uint32_t) * c->nfailed);
    }
}

int ftc_agree(ftc_group_t *group, uint64_t *value, uint32_t *failed,
              uint32_t max_failed, uint32_t *nfailed, ftc_progress_fn progress,
              void *progress_arg)
{
    if (group == NULL || value == NULL
        || (progress == NULL && group->ctx->ops.progress == NULL))
        return FTC_EINVAL;
    blocking_agree_t *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return FTC_ENOMEM;
    int rc = ftc_init_agree(group, *value, &b->value, blocking_deliver, b,
                            NULL);
    if (rc != FTC_OK) {
        free(b);
        return rc;
    }
    ftc_context_t *ctx = group->ctx;
    while (!b->done) {
        int p = progress != NULL ? progress(progress_arg) : ftc_progress(ctx);
        if (p < 0 && !b->done) {
            b->abandoned = true;
            return p;
        }
    }
    rc = b->status;
    if (rc == FTC_OK) {
        *value = b->value;
        for (uint32_t i = 0; failed != NULL && i < b->nfailed && i < max_failed;
             i++)
            failed[i] = b->failed[i];
        if (nfailed != NULL)
            *nfailed = b->nfailed;
    }
    free(b->failed);
    free(b);
    return rc;
}

/* ---- invalidation --------------------------------------------------------- */

int ftc_group_invalidate(ftc_group_t *group)
{
    if (group == NULL)
        return FTC_EINVAL;
    if (group->ctx->excluded)
        return FTC_EEXCLUDED;
    if (group->destroying)
        return FTC_ECANCELED;
    ftc_group_stop(group, FTC_EINVALIDATED);
    /* Operations it ended deliver from the next entry point. */
    ftc_ctx_after_init(group->ctx);
    return FTC_OK;
}

int ftc_group_is_invalidated(const ftc_group_t *group)
{
    return group != NULL && group->stopped == FTC_EINVALIDATED;
}

/* ---- acknowledged failures ----------------------------------------------- */

int ftc_group_failure_ack(ftc_group_t *group)
{
    if (group == NULL)
        return FTC_EINVAL;
    ulfm_group_state_t *st = state_get(group);
    if (st == NULL)
        return FTC_ENOMEM;
    ftc_idset_t *acked = &st->acked;
    uint32_t k = ftc_group_failed(group, NULL, 0);
    uint32_t *now = k > 0 ? malloc(sizeof(uint32_t) * k) : NULL;
    if (k > 0 && now == NULL)
        return FTC_ENOMEM;
    k = ftc_group_failed(group, now, k);
    /* Failures are final: the set only grows. */
    for (uint32_t i = 0; i < k; i++)
        if (!ftc_idset_add(acked, now[i])) {
            free(now);
            return FTC_ENOMEM;
        }
    free(now);
    return FTC_OK;
}

uint32_t ftc_group_failure_get_acked(const ftc_group_t *group, uint32_t *out,
                                     uint32_t max)
{
    if (group == NULL)
        return 0;
    const ulfm_group_state_t *st = state_find(group);
    if (st == NULL)
        return 0;
    const ftc_idset_t *acked = &st->acked;
    for (uint32_t i = 0; i < acked->n && i < max && out != NULL; i++)
        out[i] = acked->v[i];
    return acked->n;
}

/* ---- shrink ---------------------------------------------------------------- */

typedef struct shrink_op {
    ftc_agree_t agree;      /* first: the operation is the agreement */
    uint32_t new_id;
    ftc_group_t **newgroup;
} shrink_op_t;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static bool new_id_taken(ftc_group_t *g, uint32_t new_id)
{
    return g->epoch == UINT32_MAX
           || ftc_group_find(g->ctx, new_id, g->epoch + 1) != NULL;
}

static void shrink_decided(ftc_agree_t *a, uint64_t value,
                           const uint32_t *failed, uint32_t nfailed)
{
    (void)value;
    shrink_op_t *s = (shrink_op_t *)a;
    ftc_cop_t *op = &a->base;
    ftc_group_t *g = op->group;
    int rc = ftc_cop_set_failed(op, failed, nfailed);
    /* (failed is sorted: the new group costs O(failures), not O(n)) */
    if (rc == FTC_OK)
        rc = new_id_taken(g, s->new_id)
                 ? FTC_EINVAL
                 : ftc_group_create_excluding(g, s->new_id, g->epoch + 1,
                                              failed, nfailed, s->newgroup);
    if (rc == FTC_OK) {
        rc = params_inherit(g, *s->newgroup);
        if (rc != FTC_OK) {
            ftc_group_destroy(*s->newgroup);
            *s->newgroup = NULL;
        }
    }
    ftc_cop_complete(op, rc);
}

static const ftc_agree_hooks_t shrink_hooks = {.decided = shrink_decided};

static void shrink_prepare(ftc_agree_t *a, void *arg)
{
    const shrink_op_t *want = arg;
    shrink_op_t *s = (shrink_op_t *)a;
    s->new_id = want->new_id;
    s->newgroup = want->newgroup;
}

int ftc_init_shrink(ftc_group_t *group, uint32_t new_id,
                    ftc_group_t **newgroup, ftc_deliver_fn deliver,
                    void *deliver_arg, uint64_t *seq)
{
    if (group == NULL)
        return FTC_EINVAL;
    if (group->ctx->excluded)
        return FTC_EEXCLUDED;
    if (group->destroying)
        return FTC_ECANCELED;
    int rc = FTC_OK;
    if (newgroup == NULL || deliver == NULL || new_id_taken(group, new_id))
        rc = FTC_EINVAL;
    else if (!ftc_group_is_invalidated(group)
             && ftc_group_failed(group, NULL, 0) == 0)
        rc = FTC_EINVAL; /* nothing to shrink away: MPI's ARG class */
    uint64_t my_seq = group->next_seq;
    ftc_agree_t *a = NULL;
    shrink_op_t want = {.new_id = new_id, .newgroup = newgroup};
    if (rc == FTC_OK)
        rc = ftc_agree_start(group, FTC_COLL_SHRINK, UINT64_MAX, NULL,
                             deliver, deliver_arg, sizeof(shrink_op_t),
                             &shrink_hooks, shrink_prepare, &want, &a);
    if (rc != FTC_OK) {
        ftc_group_refused(group, rc);
        ftc_ctx_after_init(group->ctx);
        return rc;
    }
    ftc_cop_started(&a->base);
    if (seq != NULL)
        *seq = my_seq;
    ftc_ctx_after_init(group->ctx);
    return FTC_OK;
}

int ftc_group_shrink_excluding(ftc_group_t *group, uint32_t new_id,
                               const uint32_t *exclude, uint32_t nexclude,
                               ftc_group_t **newgroup)
{
    if (group == NULL || newgroup == NULL || (exclude == NULL && nexclude > 0)
        || new_id_taken(group, new_id))
        return FTC_EINVAL;
    if (group->destroying)
        return FTC_ECANCELED;
    for (uint32_t i = 0; i < nexclude; i++)
        if (exclude[i] >= group->n || exclude[i] == group->me)
            return FTC_EINVAL;
    /* Sorted and distinct, as the group wants it. */
    uint32_t *skip = nexclude > 0 ? malloc(sizeof(uint32_t) * nexclude) : NULL;
    if (nexclude > 0 && skip == NULL)
        return FTC_ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < nexclude; i++)
        skip[k++] = exclude[i];
    qsort(skip, k, sizeof(uint32_t), cmp_u32);
    uint32_t d = 0;
    for (uint32_t i = 0; i < k; i++)
        if (d == 0 || skip[d - 1] != skip[i])
            skip[d++] = skip[i];
    int rc = ftc_group_create_excluding(group, new_id, group->epoch + 1, skip,
                                        d, newgroup);
    free(skip);
    if (rc == FTC_OK) {
        rc = params_inherit(group, *newgroup);
        if (rc != FTC_OK) {
            ftc_group_destroy(*newgroup);
            *newgroup = NULL;
        }
    }
    return rc;
}
