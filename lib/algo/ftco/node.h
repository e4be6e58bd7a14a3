/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process's place in an ftco tree, kept by its group for the next
 * operation: its parent, its pre-order position (preorder.h), the tree's
 * roots, and its children with what an operation needs of each (its
 * pre-order position, the size of its subtree for f_ETA, its own number
 * of children for f_timeout).
 *
 * Why: all of it is a pure function of (tree, n, logical rank), and every
 * operation computed it again (a walk up the tree for the position, the
 * children and their subtree sizes: about 200 instructions per operation
 * and rank at n = 2; docs/ftco.md, "Per-operation processing"). A stream
 * of like operations, the common case, reads one node instead. As the
 * other families' plan (algo/plan.h), a node is never invalidated:
 * failures are an operation's own business (its peer table), and a new
 * epoch is a new group.
 *
 * An operation reads its node while it is created only (it copies what
 * it keeps into its peer table), so the group keeps a few nodes and
 * replaces the oldest when a new tree or root comes: no operation holds
 * a pointer into a node it could lose.
 */
#ifndef FTC_ALGO_FTCO_NODE_H
#define FTC_ALGO_FTCO_NODE_H

#include <stdint.h>

#include "core/group.h"
#include "ftcoll/ftco.h"
#include "ftcoll/topology.h"
#include "algo/ftco/peers.h"

#pragma GCC visibility push(hidden)

typedef struct ftco_kid {
    uint32_t rank;  /* logical */
    uint32_t pos;   /* its pre-order position */
    uint32_t size;  /* its subtree's size, itself included */
    uint32_t nkids; /* its own children */
} ftco_kid_t;

typedef struct ftco_node {
    ftc_tree_t tree;
    uint32_t n, me;         /* me is logical (the root is 0) */
    int64_t parent;         /* logical, -1 at the root */
    uint32_t parent_nkids;  /* the parent's children (0 at the root) */
    uint32_t pos;           /* our pre-order position */
    uint32_t roots;         /* ftc_tree_root_count */
    uint32_t guess;         /* ftc_tree_children_guess: the op's sizes */
    uint32_t peers_expect;  /* an operation's peer table is made for so
                               many entries, */
    size_t peers_room;      /* on so many bytes (ftco_peers_room, rounded
                               by ftc_mem_round) */
    /* The peer table a fault-free operation starts with, prepared: its
     * children's entries (position, f_ETA, f_timeout), then its
     * parent's (f_timeout), no flags, on the same sizes as the
     * operation's (peers_expect), which copies it
     * (ftco_peers_init_from) instead of inserting them one by one.
     * f_timeout without the other roots of a multi-root allreduce, which
     * the operation adds (it depends on the collective). slots 0: not
     * made (out of memory, or more entries than the sizes hold). */
    ftco_peers_t peers;
    uint32_t nkids;
    ftco_kid_t kids[];      /* in ftc_tree_children order */
} ftco_node_t;

/* Logical rank me's node in tree over g (g->n ranks), from g's cache or
 * made and put there; NULL when out of memory. Valid until the next call
 * on g. */
const ftco_node_t *ftco_node_find(ftc_group_t *g, const ftc_tree_t *tree,
                                  uint32_t me);

/* The group's cache (node.c) starts with the node found last, so that a
 * stream of like operations, every one asking for the same node, reads
 * it without a call into node.c (~50 instructions per operation). */
typedef struct ftco_nodes_head {
    const ftco_node_t *last;
} ftco_nodes_head_t;

static inline const ftco_node_t *ftco_node_get(ftc_group_t *g,
                                               const ftc_tree_t *tree,
                                               uint32_t me)
{
    const ftco_nodes_head_t *c = ftc_group_ext_get(g, FTC_ALGO_FTCO);
    const ftco_node_t *nd = c != NULL ? c->last : NULL;
    if (nd != NULL && nd->me == me && nd->n == g->n
        && nd->tree.kind == tree->kind && nd->tree.k == tree->k
        && nd->tree.L == tree->L && nd->tree.o == tree->o
        && nd->tree.g == tree->g)
        return nd;
    return ftco_node_find(g, tree, me);
}

#pragma GCC visibility pop

#endif
