/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tree family: plain trees without fault tolerance, the baseline.
 */
#ifndef FTC_ALGO_TREE_H
#define FTC_ALGO_TREE_H

#include "ftcoll/tree.h"
#include "core/op.h"

#pragma GCC visibility push(hidden)

/* The family's registry entry (algo/tree/family.c). */
struct ftc_algo_entry;
extern const struct ftc_algo_entry ftc_algo_tree;

/* params (a ftc_tree_params_t) is complete (the registry filled the
 * defaults). */
int ftc_tree_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                       const void *params, ftc_coll_t coll, ftc_cop_t **out);

#pragma GCC visibility pop

#endif
