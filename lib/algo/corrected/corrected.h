/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected family (Kuettler & Haertig): its constructors.
 */
#ifndef FTC_ALGO_CORRECTED_H
#define FTC_ALGO_CORRECTED_H

#include "core/op.h"

#pragma GCC visibility push(hidden)

int ftc_reduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                         ftc_cop_t **out);
int ftc_bcast_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                        ftc_cop_t **out);
int ftc_allreduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                            ftc_cop_t **out);

#pragma GCC visibility pop

#endif
