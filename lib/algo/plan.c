/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's topology plan (algo/plan.h): a few tree nodes, looked up by
 * their key, built once and kept until the group is destroyed.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/plan.h"

/* Nodes a group keeps: an allreduce asks for two or three (the reduce's
 * and the bcast's), a few roots more fit too. Beyond, an operation builds
 * its node in its own memory, as every operation did before the plan. */
enum { PLAN_NODES = 8 };

typedef struct plan {
    uint32_t count;
    uint32_t last;                  /* the last node found: asked first */
    ftc_tree_node_t *nodes[PLAN_NODES];
} plan_t;

static void plan_free(void *p)
{
    plan_t *plan = p;
    for (uint32_t i = 0; i < plan->count; i++)
        free(plan->nodes[i]);
    free(plan);
}

static bool node_is(const ftc_tree_node_t *nd, const ftc_tree_t *tree,
                    uint32_t n, uint32_t me, uint32_t upcorr_f)
{
    return nd->me == me && nd->tree.kind == tree->kind
           && nd->tree.k == tree->k && nd->upcorr_f == upcorr_f
           && nd->n == n && nd->tree.L == tree->L && nd->tree.o == tree->o
           && nd->tree.g == tree->g;
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

static plan_t *plan_of(ftc_group_t *g)
{
    if (g->plan != NULL)
        return g->plan;
    plan_t *plan = calloc(1, sizeof(*plan));
    if (plan == NULL)
        return NULL;
    g->plan = plan;
    g->plan_free = plan_free;
    return plan;
}

const ftc_tree_node_t *ftc_plan_tree_node(ftc_cop_t *op, const ftc_tree_t *tree,
                                          uint32_t me, uint32_t upcorr_f)
{
    ftc_group_t *g = op->group;
    uint32_t n = g->n;
    plan_t *plan = g->plan;
    if (plan != NULL) {
        if (plan->count > 0
            && node_is(plan->nodes[plan->last], tree, n, me, upcorr_f))
            return plan->nodes[plan->last];
        for (uint32_t i = 0; i < plan->count; i++)
            if (node_is(plan->nodes[i], tree, n, me, upcorr_f)) {
                plan->last = i;
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
    if (plan != NULL && plan->count < PLAN_NODES) {
        ftc_tree_node_t *nd = malloc(sizeof(*nd) + room);
        if (nd != NULL) {
            node_fill(nd, (uint32_t *)(nd + 1), tree, n, me, upcorr_f, gsize,
                      nch);
            plan->last = plan->count;
            plan->nodes[plan->count++] = nd;
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
