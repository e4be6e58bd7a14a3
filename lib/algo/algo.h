/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every algorithm module includes: the core's services (operations,
 * sending, the failure monitor), the pure topology, and helpers that join
 * the two.
 */
#ifndef FTC_ALGO_ALGO_H
#define FTC_ALGO_ALGO_H

#include "core/monitor.h"
#include "core/op.h"
#include "core/send.h"
#include "topo/topo.h"

#pragma GCC visibility push(hidden)

/* Rank r's children in tree, in op's memory; *count of them. NULL when
 * out of memory. */
uint32_t *ftc_cop_tree_children(ftc_cop_t *op, const ftc_tree_t *tree,
                               uint32_t n, uint32_t r, uint32_t *count);

#pragma GCC visibility pop

#endif
