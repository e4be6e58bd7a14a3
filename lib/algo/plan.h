/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A group's topology plan: where a rank sits in a tree (its parent, its
 * children and, for the corrected reduce, its up-correction group),
 * computed at the first operation that asks and kept by the group for the
 * next ones.
 *
 * Why: a stream of like collectives (the common case: the same
 * collective, root and tree again and again) asked the topology the same
 * question for every operation, and at n = 2 that was ~100-150 of the
 * core's ~2,400 instructions per message. The answer is a pure function
 * of (tree, n, logical rank, f): nothing a failure, an epoch or a
 * message changes (the families look failures up where they use a peer),
 * so a node is never invalidated; a new epoch is a new group, with a plan
 * of its own.
 */
#ifndef FTC_ALGO_PLAN_H
#define FTC_ALGO_PLAN_H

#include "algo/algo.h"

#pragma GCC visibility push(hidden)

/* upcorr_f of a node without an up-correction group. */
#define FTC_PLAN_NO_UPCORR UINT32_MAX

typedef struct ftc_tree_node {
    ftc_tree_t tree;
    uint32_t n, me;         /* me is logical (relative to the root) */
    uint32_t upcorr_f;      /* f of the up-correction group, or none */
    int64_t parent;         /* logical, -1 at the root */
    uint32_t ngroup;        /* up-correction peers (without me) ... */
    uint32_t nchildren;     /* ... then the tree's children */
    const uint32_t *peers;  /* logical ranks, ngroup + nchildren */
} ftc_tree_node_t;

/* Logical rank me's node in tree over op's group (with its up-correction
 * group of f + 1 when upcorr_f is not FTC_PLAN_NO_UPCORR), valid as long
 * as op: from the group's plan, or, when the plan is full (a stream of
 * ever new roots), built in op's memory. NULL when out of memory. */
const ftc_tree_node_t *ftc_plan_tree_node(ftc_cop_t *op, const ftc_tree_t *tree,
                                          uint32_t me, uint32_t upcorr_f);

#pragma GCC visibility pop

#endif
