/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithm registry: one entry per family, read by the API (checks
 * and dispatch), ftc_algo_parse/ftc_algo_name and the tools (ftcoll/algo.h).
 * A family provides its entry from its own folder (algo/<family>/family.c)
 * and takes one line in registry.c; docs/architecture.md, "Adding a
 * family", has the steps.
 */
#ifndef FTC_ALGO_REGISTRY_H
#define FTC_ALGO_REGISTRY_H

#include "ftcoll/algo.h"
#include "core/op.h"

#pragma GCC visibility push(hidden)

/* Start collective coll of this family. args->params points to the
 * family's parameter struct, complete (its size is the family's
 * params_size, defaults filled in) and valid during the call only: a
 * family that needs it later copies it into its operation. */
typedef int (*ftc_algo_create_fn)(ftc_group_t *g, const ftc_coll_args_t *args,
                                  ftc_coll_t coll, ftc_cop_t **out);

/* Largest parameter struct a family may have. */
#define FTC_ALGO_PARAMS_MAX 256

typedef struct ftc_algo_entry {
    ftc_algo_info_t info;       /* what ftcoll/algo.h shows */
    size_t params_size;         /* sizeof its parameter struct */
    /* Fill the defaults, size included. */
    void (*params_init)(void *params);
    /* Check what the complete params (and args) mean to the family for
     * coll; the API has checked the generic fields. FTC_OK or an error,
     * FTC_EINVAL for a bad parameter. */
    int (*check)(const ftc_group_t *g, const ftc_coll_args_t *args,
                 ftc_coll_t coll, const void *params);
    /* By ftc_coll_t; NULL where the family does not provide it (the
     * collective is refused with FTC_ENOTSUP). */
    ftc_algo_create_fn create[FTC_COLL_ALLREDUCE + 1];
} ftc_algo_entry_t;

/* Storage for a complete parameter struct. */
typedef union ftc_algo_params_buf {
    max_align_t align;
    unsigned char bytes[FTC_ALGO_PARAMS_MAX];
} ftc_algo_params_buf_t;

/* The family with this id, or NULL. */
const ftc_algo_entry_t *ftc_algo_entry(ftc_algo_t id);

/* Check args' family-specific part for coll. */
int ftc_algo_check(const ftc_group_t *g, const ftc_coll_args_t *args,
                   ftc_coll_t coll);
/* Start the operation itself (no checked-mode pairing). */
int ftc_algo_start(ftc_group_t *g, const ftc_coll_args_t *args,
                   ftc_coll_t coll, ftc_cop_t **out);

/*
 * For tests only: add a family at run time (tests/test_registry.c shows
 * that a family needs nothing but its entry). A library family is a line
 * in registry.c instead. FTC_EINVAL for a bad entry or a taken id or name,
 * FTC_ENOMEM when the few test slots are full.
 */
int ftc_algo_register(const ftc_algo_entry_t *entry);

#pragma GCC visibility pop

#endif
