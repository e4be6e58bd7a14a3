/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Uniform allreduce (ftc_coll_args_t.uniform; uniform.c): the allreduce,
 * then the agreement on which root's value each member holds; deliver
 * once both have. *out is the allreduce; the agreement is started too,
 * with its input to come. On error nothing is left running, and g's
 * sequence moved by what started.
 */
#ifndef FTC_ULFM_UNIFORM_H
#define FTC_ULFM_UNIFORM_H

#include "core/op.h"

#pragma GCC visibility push(hidden)

typedef int (*ftc_uniform_start_fn)(ftc_group_t *g, const ftc_coll_args_t *args,
                                    ftc_coll_t coll, ftc_cop_t **out);
int ftc_uniform_start(ftc_group_t *g, const ftc_coll_args_t *args,
                      ftc_coll_t coll, ftc_uniform_start_fn start,
                      ftc_cop_t **out);

#pragma GCC visibility pop

#endif
