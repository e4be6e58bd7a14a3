/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's cache of ftco tree nodes (lib/algo/ftco/node.h):
 *
 *   - every node it gives equals the tree computed afresh (parent, its
 *     number of children, pre-order position, roots, the children in
 *     order with their pre-order positions, subtree sizes and numbers of
 *     children) for the k-nomial, k-ary and both multi-root trees,
 *     n = 1..33, every rank;
 *   - a node asked again is the same node (kept, not rebuilt) while the
 *     group keeps it, and the cache's capacity passed (a stream of new
 *     roots) replaces the oldest: what it gives is still right;
 *   - a group of its own has nodes of its own; the group frees them
 *     (ASan's leak check sees the rest).
 *
 * Last line: "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>

#include "algo/ftco/node.h"
#include "algo/ftco/preorder.h"
#include "check.h"
#include "null_transport.h"
#include "topo/topo.h"

/* nd against the tree computed afresh; true when equal. */
static bool node_right(const ftco_node_t *nd, const ftc_tree_t *tree,
                       uint32_t n, uint32_t me)
{
    uint32_t kids[128];
    uint32_t nkids = ftc_tree_children(tree, n, me, kids, 128);
    int64_t parent = me == 0 ? -1 : ftc_tree_parent(tree, n, me);
    uint32_t parent_kids =
        parent < 0 ? 0 : ftc_tree_children(tree, n, (uint32_t)parent, NULL, 0);
    if (nd->n != n || nd->me != me || nd->parent != parent
        || nd->parent_nkids != parent_kids
        || nd->pos != ftco_preorder_pos(tree, n, me)
        || nd->roots != ftc_tree_root_count(tree, n)
        || nd->guess != ftc_tree_children_guess(tree, n)
        || nd->nkids != nkids || nd->tree.kind != tree->kind
        || nd->tree.k != tree->k)
        return false;
    for (uint32_t i = 0; i < nkids; i++) {
        const ftco_kid_t *c = &nd->kids[i];
        if (c->rank != kids[i] || c->pos != ftco_preorder_pos(tree, n, kids[i])
            || c->size != ftc_tree_subtree_size(tree, n, kids[i])
            || c->nkids != ftc_tree_children(tree, n, kids[i], NULL, 0))
            return false;
    }
    return true;
}

static bool make_group(uint32_t me, uint32_t n, uint32_t id,
                       ftc_context_t **ctx, ftc_group_t **g)
{
    if (*ctx == NULL
        && !CHECK_OK(ftc_context_create(me, n, &ftc_test_null_ops, NULL, NULL,
                                        ctx)))
        return false;
    return CHECK_OK(ftc_group_create(*ctx, id, 0, n, NULL, g));
}

static void test_nodes_right(void)
{
    const ftc_tree_t trees[] = {
        {.kind = FTC_TREE_KNOMIAL, .k = 2},
        {.kind = FTC_TREE_KNOMIAL, .k = 3},
        {.kind = FTC_TREE_KNOMIAL, .k = 5},
        {.kind = FTC_TREE_KARY, .k = 2},
        {.kind = FTC_TREE_KARY, .k = 3},
        {.kind = FTC_TREE_KNOMIAL_MULTIROOT, .k = 2},
        {.kind = FTC_TREE_KNOMIAL_MULTIROOT, .k = 4},
        {.kind = FTC_TREE_KARY_MULTIROOT, .k = 3},
    };
    uint32_t wrong = 0, checked = 0, rebuilt = 0;
    for (uint32_t n = 1; n <= 33; n++) {
        ftc_context_t *ctx = NULL;
        ftc_group_t *g;
        if (!make_group(0, n, 1, &ctx, &g))
            return;
        for (size_t t = 0; t < sizeof(trees) / sizeof(trees[0]); t++) {
            for (uint32_t me = 0; me < n; me++) {
                const ftco_node_t *a = ftco_node_get(g, &trees[t], me);
                bool a_right = a != NULL && node_right(a, &trees[t], n, me);
                const ftco_node_t *b = ftco_node_get(g, &trees[t], me);
                checked++;
                if (!a_right || b == NULL || !node_right(b, &trees[t], n, me))
                    wrong++;
                if (a != b)
                    rebuilt++;
            }
        }
        ftc_context_destroy(ctx);
    }
    CHECK_EQ(wrong, 0u);
    CHECK(checked > 4000);
    /* Asked twice in a row, a node is the one kept. */
    CHECK_EQ(rebuilt, 0u);
}

static void test_kept_and_replaced(void)
{
    enum { N = 16 };
    ftc_context_t *ctx = NULL;
    ftc_group_t *g;
    if (!make_group(3, N, 1, &ctx, &g))
        return;
    ftc_tree_t kn = {.kind = FTC_TREE_KNOMIAL, .k = 4};
    ftc_tree_t ka = {.kind = FTC_TREE_KARY, .k = 2};
    const ftco_node_t *a = ftco_node_get(g, &kn, 3);
    const ftco_node_t *b = ftco_node_get(g, &ka, 3);
    /* Alternating between two trees (or roots): both kept. */
    CHECK(a != NULL && b != NULL && a != b);
    CHECK_EQ(ftco_node_get(g, &kn, 3), a);
    CHECK_EQ(ftco_node_get(g, &ka, 3), b);
    CHECK_EQ(ftco_node_get(g, &kn, 3), a);
    /* Many roots in turn (logical rank me = 3 - root mod N): past the
     * capacity the oldest go, and every answer is still right. */
    uint32_t wrong = 0;
    for (uint32_t round = 0; round < 3; round++)
        for (uint32_t root = 0; root < N; root++) {
            uint32_t me = (3 + N - root) % N;
            const ftco_node_t *x = ftco_node_get(g, &kn, me);
            if (x == NULL || !node_right(x, &kn, N, me))
                wrong++;
        }
    CHECK_EQ(wrong, 0u);
    /* A group of its own has nodes of its own. */
    ftc_group_t *h;
    if (make_group(3, N, 2, &ctx, &h)) {
        const ftco_node_t *x = ftco_node_get(h, &kn, 3);
        CHECK(x != NULL && node_right(x, &kn, N, 3));
        CHECK(x != ftco_node_get(g, &kn, 3));
    }
    ftc_context_destroy(ctx);
}

int main(void)
{
    test_nodes_right();
    test_kept_and_replaced();
    return check_report();
}
