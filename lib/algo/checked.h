/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checked mode (algo/checked.c): start the operation with start, and beside
 * it the allreduce that compares the members' signatures; deliver once both
 * have. *out is the operation; the check's is started too. On error nothing
 * is left running, and g's sequence moved by what started.
 */
#ifndef FTC_ALGO_CHECKED_H
#define FTC_ALGO_CHECKED_H

#include "core/op.h"

#pragma GCC visibility push(hidden)

typedef int (*ftc_start_fn)(ftc_group_t *g, const ftc_coll_args_t *args,
                            ftc_coll_t coll, ftc_cop_t **out);
int ftc_checked_start(ftc_group_t *g, const ftc_coll_args_t *args,
                      ftc_coll_t coll, ftc_start_fn start, ftc_cop_t **out);

#pragma GCC visibility pop

#endif
