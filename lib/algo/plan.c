/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's topology plan (algo/plan.h): a few tree nodes, looked up by
 * their key, built once and kept until the group is destroyed.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/plan.h"

static void plan_free(void *p)
{
    ftc_plan_t *plan = p;
    for (uint32_t i = 0; i < plan->count; i++)
        free(plan->nodes[i]);
    free(plan);
}

/* How many peers the node has: the up-correction group without me, then
 * the children. */
static void node_counts(const ftc_tree_t *tree, uint32_t n, uint32_t me,
                        uint32_t upcorr_f, uint32_t *gsize, uint32_t *nch)
{
    *gsize = upcorr_f == FTC_PLAN_NO_UPCORR
                 ? 0
                 : ftc_upcorr_group(upcorr_f, n, me, NULL, 0);
    *nch = ftc_tree_children(tree, n, me, NULL, 0);
}

/* Fill nd (its peers at peers, room for gsize + nch). */
static void node_fill(ftc_tree_node_t *nd, uint32_t *peers,
                      const ftc_tree_t *tree, uint32_t n, uint32_t me,
                      uint32_t upcorr_f, uint32_t gsize, uint32_t nch)
{
    nd->tree = *tree;
    nd->n = n;
    nd->me = me;
    nd->upcorr_f = upcorr_f;
    nd->parent = ftc_tree_parent(tree, n, me);
    uint32_t ngroup = 0;
    if (gsize > 0) {
        /* The group, me among it, lands in peers; keep the others. */
        (void)ftc_upcorr_group(upcorr_f, n, me, peers, gsize);
        for (uint32_t i = 0; i < gsize; i++)
            if (peers[i] != me)
                peers[ngroup++] = peers[i];
    }
    nd->ngroup = ngroup;
    nd->nchildren = ftc_tree_children(tree, n, me, peers + ngroup, nch);
    nd->peers = peers;
}

/* nd was found (or built): the latest of the two recent ones. */
static void plan_found(ftc_plan_t *plan, ftc_tree_node_t *nd)
{
    if (plan->recent[0] != nd) {
        plan->recent[1] = plan->recent[0];
        plan->recent[0] = nd;
    }
}

static ftc_plan_t *plan_of(ftc_group_t *g)
{
    if (g->plan != NULL)
        return g->plan;
    ftc_plan_t *plan = calloc(1, sizeof(*plan));
    if (plan == NULL)
        return NULL;
    g->plan = plan;
    g->plan_free = plan_free;
    return plan;
}

const ftc_tree_node_t *ftc_plan_tree_node_find(ftc_cop_t *op,
                                               const ftc_tree_t *tree,
                                               uint32_t me, uint32_t upcorr_f)
{
    ftc_group_t *g = op->group;
    uint32_t n = g->n;
    ftc_plan_t *plan = g->plan;
    if (plan != NULL) {
        for (uint32_t i = 0; i < plan->count; i++)
            if (ftc_plan_node_is(plan->nodes[i], tree, n, me, upcorr_f)) {
                plan_found(plan, plan->nodes[i]);
                return plan->nodes[i];
            }
    }
    uint32_t gsize, nch;
    node_counts(tree, n, me, upcorr_f, &gsize, &nch);
    if (gsize > UINT32_MAX - nch
        || (size_t)gsize + nch > (SIZE_MAX - sizeof(ftc_tree_node_t))
                                     / sizeof(uint32_t))
        return NULL;
    size_t room = sizeof(uint32_t) * ((size_t)gsize + nch);
    plan = plan_of(g);
    if (plan != NULL && plan->count < FTC_PLAN_NODES) {
        ftc_tree_node_t *nd = malloc(sizeof(*nd) + room);
        if (nd != NULL) {
            node_fill(nd, (uint32_t *)(nd + 1), tree, n, me, upcorr_f, gsize,
                      nch);
            plan->nodes[plan->count++] = nd;
            plan_found(plan, nd);
            return nd;
        }
    }
    /* The plan is full (or out of memory): this operation's own copy. */
    ftc_tree_node_t *nd = ftc_cop_alloc(op, sizeof(*nd));
    uint32_t *peers = ftc_cop_alloc(op, room);
    if (nd == NULL || peers == NULL)
        return NULL;
    node_fill(nd, peers, tree, n, me, upcorr_f, gsize, nch);
    return nd;
}
