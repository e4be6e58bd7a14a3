/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family inside the library: its collectives' constructor.
 */
#ifndef FTC_ALGO_FTCO_FTCO_H
#define FTC_ALGO_FTCO_FTCO_H

#include "algo/registry.h"
#include "ftcoll/ftco.h"

#pragma GCC visibility push(hidden)

/* Bcast, reduce or allreduce (ftco.c); params a complete
 * ftc_ftco_params_t that the family's check accepted. */
int ftc_ftco_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                       const void *params, ftc_coll_t coll, ftc_cop_t **out);

#pragma GCC visibility pop

#endif
