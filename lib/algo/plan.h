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

/* Nodes a group keeps: an allreduce asks for two or three (the reduce's
 * and the bcast's), a few roots more fit too. Beyond, an operation builds
 * its node in its own memory, as every operation did before the plan. */
enum { FTC_PLAN_NODES = 8 };

/* The plan (the group's plan pointer, NULL until the first node). */
typedef struct ftc_plan {
    uint32_t count;
    /* The two nodes found last, the latest first: asked before the
     * others. Two, because an allreduce alternates between its reduce's
     * node and its bcast's. */
    ftc_tree_node_t *recent[2];
    ftc_tree_node_t *nodes[FTC_PLAN_NODES];
} ftc_plan_t;

static inline bool ftc_plan_node_is(const ftc_tree_node_t *nd,
                                    const ftc_tree_t *tree, uint32_t n,
                                    uint32_t me, uint32_t upcorr_f)
{
    return nd->me == me && nd->tree.kind == tree->kind
           && nd->tree.k == tree->k && nd->upcorr_f == upcorr_f
           && nd->n == n && nd->tree.L == tree->L && nd->tree.o == tree->o
           && nd->tree.g == tree->g;
}

/* ftc_plan_tree_node past the two nodes found last: the others, or a new
 * one. */
const ftc_tree_node_t *ftc_plan_tree_node_find(ftc_cop_t *op,
                                               const ftc_tree_t *tree,
                                               uint32_t me, uint32_t upcorr_f);

/* Logical rank me's node in tree over op's group (with its up-correction
 * group of f + 1 when upcorr_f is not FTC_PLAN_NO_UPCORR), valid as long
 * as op: from the group's plan, or, when the plan is full (a stream of
 * ever new roots), built in op's memory. NULL when out of memory.
 * Inline for the common case, a node one of the group's last two
 * lookups found (a stream of like operations asks for them again): a
 * call with the whole slow path behind it cost ~50 instructions a
 * lookup. */
static inline const ftc_tree_node_t *ftc_plan_tree_node(ftc_cop_t *op,
                                                        const ftc_tree_t *tree,
                                                        uint32_t me,
                                                        uint32_t upcorr_f)
{
    ftc_plan_t *plan = op->group->plan;
    if (plan != NULL && plan->recent[0] != NULL) {
        ftc_tree_node_t *nd = plan->recent[0];
        uint32_t n = op->group->n;
        if (ftc_plan_node_is(nd, tree, n, me, upcorr_f))
            return nd;
        ftc_tree_node_t *other = plan->recent[1];
        if (other != NULL && ftc_plan_node_is(other, tree, n, me, upcorr_f)) {
            plan->recent[1] = nd;
            plan->recent[0] = other;
            return other;
        }
    }
    return ftc_plan_tree_node_find(op, tree, me, upcorr_f);
}

#pragma GCC visibility pop

#endif
