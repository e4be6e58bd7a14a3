/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's cache of ftco tree nodes (node.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "ftcoll/ftco.h"
#include "algo/ftco/node.h"
#include "core/op.h"
#include "algo/ftco/preorder.h"
#include "topo/topo.h"

/* Nodes a group keeps: one per (tree, root) in use. A stream uses one;
 * a few roots in turn fit; beyond, the oldest is made again when asked. */
enum { FTCO_NODES = 4 };

typedef struct ftco_nodes {
    const ftco_node_t *last;  /* the node found last: asked first (first
                                 member: ftco_nodes_head_t, node.h) */
    uint32_t count, next;     /* next: the slot replaced when full */
    ftco_node_t *at[FTCO_NODES];
} ftco_nodes_t;

/* A node and its prepared peer table. */
static void node_free(ftco_node_t *nd)
{
    ftco_peers_free(&nd->peers);
    free(nd);
}

static void nodes_free(void *p)
{
    ftco_nodes_t *c = p;
    for (uint32_t i = 0; i < c->count; i++)
        node_free(c->at[i]);
    free(c);
}

static bool node_is(const ftco_node_t *nd, const ftc_tree_t *tree,
                    uint32_t n, uint32_t me)
{
    return nd->me == me && nd->n == n && nd->tree.kind == tree->kind
           && nd->tree.k == tree->k && nd->tree.L == tree->L
           && nd->tree.o == tree->o && nd->tree.g == tree->g;
}

/* The peer table an operation on nd starts with (node.h), the entries
 * in the order the operation made them: children, then parent. Out of
 * memory, or grown past the operation's sizes, it is not kept: the
 * operation then inserts them itself. */
static void prepare_peers(ftco_node_t *nd)
{
    ftco_peers_t *t = &nd->peers;
    nd->peers_expect = 2 * (nd->guess + 2) + 4;
    nd->peers_room = ftc_mem_round(ftco_peers_room(nd->peers_expect));
    if (ftco_peers_init(t, nd->peers_expect, NULL) != FTC_OK) {
        memset(t, 0, sizeof(*t));
        return;
    }
    for (uint32_t i = 0; i < nd->nkids; i++) {
        const ftco_kid_t *c = &nd->kids[i];
        int64_t e = ftco_peers_get(t, c->rank);
        if (e < 0)
            break;
        t->at[e].pos1 = c->pos + 1;
        t->at[e].eta = (uint8_t)(2 + ftc_bit_length32(c->size));
        t->at[e].tunits = c->nkids < UINT32_MAX - nd->roots ? c->nkids + 1 : 0;
    }
    if (nd->parent >= 0) {
        int64_t e = ftco_peers_get(t, (uint32_t)nd->parent);
        if (e >= 0)
            t->at[e].tunits = nd->parent_nkids < UINT32_MAX - nd->roots
                                  ? nd->parent_nkids + 1
                                  : 0;
    }
    if (t->nomem || ftco_peers_room(nd->peers_expect)
                        != sizeof(ftco_peer_t) * t->cap
                               + sizeof(uint32_t) * t->slots) {
        ftco_peers_free(t);
        memset(t, 0, sizeof(*t));
    }
}

/* Computes me's node (malloc); NULL when out of memory. */
static ftco_node_t *node_make(const ftc_tree_t *tree, uint32_t n, uint32_t me)
{
    uint32_t nkids = ftc_tree_children(tree, n, me, NULL, 0);
    /* Both a child rank list and the node: the list is read once. */
    ftco_node_t *nd = malloc(sizeof(*nd) + sizeof(ftco_kid_t) * (size_t)nkids);
    uint32_t *list = malloc(sizeof(uint32_t) * (nkids > 0 ? nkids : 1));
    uint32_t pos = ftco_preorder_pos(tree, n, me);
    if (nd == NULL || list == NULL || pos == UINT32_MAX) {
        free(nd);
        free(list);
        return NULL;
    }
    nd->tree = *tree;
    nd->n = n;
    nd->me = me;
    nd->parent = me == 0 ? -1 : ftc_tree_parent(tree, n, me);
    nd->parent_nkids = nd->parent < 0
                           ? 0
                           : ftc_tree_children(tree, n, (uint32_t)nd->parent,
                                               NULL, 0);
    nd->pos = pos;
    nd->roots = ftc_tree_root_count(tree, n);
    nd->guess = ftc_tree_children_guess(tree, n);
    nd->nkids = ftc_tree_children(tree, n, me, list, nkids);
    /* Our children's positions follow ours, each after its elder
     * siblings' subtrees: no walk up the tree for them. */
    uint64_t next = (uint64_t)pos + 1;
    for (uint32_t i = 0; i < nd->nkids; i++) {
        ftco_kid_t *c = &nd->kids[i];
        c->rank = list[i];
        c->pos = (uint32_t)next;
        c->size = ftc_tree_subtree_size(tree, n, list[i]);
        c->nkids = ftc_tree_children(tree, n, list[i], NULL, 0);
        next += c->size;
    }
    free(list);
    prepare_peers(nd);
    return nd;
}

const ftco_node_t *ftco_node_find(ftc_group_t *g, const ftc_tree_t *tree,
                                  uint32_t me)
{
    ftco_nodes_t *c = ftc_group_ext_get(g, FTC_ALGO_FTCO);
    if (c != NULL && c->last != NULL && node_is(c->last, tree, g->n, me))
        return c->last;
    if (c == NULL) {
        c = calloc(1, sizeof(*c));
        if (c == NULL)
            return NULL;
        if (ftc_group_ext_set(g, FTC_ALGO_FTCO, c, nodes_free) != FTC_OK) {
            free(c);
            return NULL;
        }
    }
    for (uint32_t i = 0; i < c->count; i++)
        if (node_is(c->at[i], tree, g->n, me))
            return c->last = c->at[i];
    ftco_node_t *nd = node_make(tree, g->n, me);
    if (nd == NULL)
        return NULL;
    if (c->count < FTCO_NODES) {
        c->at[c->count++] = nd;
    } else {
        /* (No operation holds the node replaced: node.h.) */
        node_free(c->at[c->next]);
        c->at[c->next] = nd;
        c->next = (c->next + 1) % FTCO_NODES;
    }
    return c->last = nd;
}
