/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm family: its registry entry and its public entry points
 * (ftcoll/mitigation.h). Its operations are not reduce, bcast or
 * allreduce, so the entry offers none of those (ftc_init_allreduce with
 * FTC_ALGO_ULFM is FTC_ENOTSUP); agreement starts from ftc_init_agree.
 */
#include <string.h>

#include "algo/registry.h"
#include "algo/ulfm/agree.h"
#include "ftcoll/mitigation.h"

/* The family takes no parameters; the registry wants a struct that
 * starts with its size. */
typedef struct ulfm_params {
    size_t size;
} ulfm_params_t;

static const ulfm_params_t defaults = {.size = sizeof(ulfm_params_t)};

const ftc_algo_entry_t ftc_algo_ulfm = {
    .info = {
        .id = FTC_ALGO_ULFM,
        .name = "ulfm",
        .colls = FTC_COLL_BIT(FTC_COLL_AGREE),
        .summary = "failure mitigation (MPI chapter 17): uniform agreement "
                   "on a 64-bit AND and a failed set, any number of "
                   "failures",
        .params_type = "none",
        .params = NULL,
        .nparams = 0,
    },
    .params_size = sizeof(ulfm_params_t),
    .params_default = &defaults,
    .check = NULL,
    .create = {NULL},
};

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
    if (group == NULL || result == NULL || deliver == NULL)
        return FTC_EINVAL;
    if (group->ctx->excluded)
        return FTC_EEXCLUDED;
    uint64_t my_seq = group->next_seq;
    ftc_agree_t *a;
    int rc = ftc_agree_start(group, FTC_COLL_AGREE, value, result, deliver,
                             deliver_arg, sizeof(ftc_agree_t), &agree_hooks,
                             NULL, &a);
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
