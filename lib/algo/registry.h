/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithms the API can start, and their argument checks.
 */
#ifndef FTC_ALGO_REGISTRY_H
#define FTC_ALGO_REGISTRY_H

#include "core/op.h"

#pragma GCC visibility push(hidden)

/* Check what args mean to its algorithm for coll. */
int ftc_algo_check(const ftc_group_t *g, const ftc_coll_args_t *args,
                   ftc_coll_t coll);
/* Start the operation itself (no checked-mode pairing). */
int ftc_algo_start(ftc_group_t *g, const ftc_coll_args_t *args,
                   ftc_coll_t coll, ftc_cop_t **out);

#pragma GCC visibility pop

#endif
