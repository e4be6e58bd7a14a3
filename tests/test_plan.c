/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's topology plan (lib/algo/plan.h):
 *
 *   - every node it gives equals the topology computed afresh (parent,
 *     up-correction group without the rank, children in order) for the
 *     binomial, k-ary, I(f), k-nomial and Lame trees, n = 1..33, every
 *     rank, with and without an up-correction group;
 *   - a node asked again is the same node (kept, not rebuilt), and stays
 *     valid and unchanged while later nodes are added;
 *   - past the plan's capacity (a stream of ever new roots) the node is
 *     built in the operation's memory and is just as right;
 *   - the group frees the plan (ASan's leak check sees the rest).
 *
 * Last line: "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/plan.h"
#include "check.h"
#include "null_transport.h"

static void op_destroy(ftc_cop_t *op) { ftc_cop_delete(op); }
static const ftc_cop_vtable_t dummy_vt = {.destroy = op_destroy};

static ftc_cop_t *dummy_op(ftc_group_t *g)
{
    ftc_cop_t *op = ftc_cop_new(g, sizeof(ftc_cop_t), 64);
    if (op != NULL)
        op->vt = &dummy_vt;
    return op;
}

/* nd against the topology computed afresh; true when equal. */
static bool node_right(const ftc_tree_node_t *nd, const ftc_tree_t *tree,
                       uint32_t n, uint32_t me, uint32_t upcorr_f)
{
    uint32_t want[128], nwant = 0;
    if (upcorr_f != FTC_PLAN_NO_UPCORR) {
        uint32_t grp[64];
        uint32_t gs = ftc_upcorr_group(upcorr_f, n, me, grp, 64);
        for (uint32_t i = 0; i < gs; i++)
            if (grp[i] != me)
                want[nwant++] = grp[i];
    }
    uint32_t ngroup = nwant;
    nwant += ftc_tree_children(tree, n, me, want + ngroup, 64);
    if (nd->parent != ftc_tree_parent(tree, n, me) || nd->ngroup != ngroup
        || nd->ngroup + nd->nchildren != nwant || nd->n != n || nd->me != me)
        return false;
    return nwant == 0 || memcmp(nd->peers, want, sizeof(uint32_t) * nwant) == 0;
}

static void test_nodes_right(void)
{
    const ftc_tree_t trees[] = {
        {.kind = FTC_TREE_BINOMIAL},
        {.kind = FTC_TREE_KARY, .k = 2},
        {.kind = FTC_TREE_KARY, .k = 3},
        {.kind = FTC_TREE_IF, .k = 1},
        {.kind = FTC_TREE_IF, .k = 2},
        {.kind = FTC_TREE_KNOMIAL, .k = 3},
        {.kind = FTC_TREE_LAME, .k = 2},
    };
    uint32_t wrong = 0, checked = 0, fresh_again = 0;
    for (uint32_t n = 1; n <= 33; n++) {
        ftc_context_t *ctx;
        ftc_group_t *g;
        if (!CHECK_OK(ftc_context_create(0, n, &ftc_test_null_ops, NULL,
                                         NULL, &ctx)))
            return;
        if (!CHECK_OK(ftc_group_create(ctx, 1, 0, n, NULL, &g)))
            return;
        ftc_cop_t *op = dummy_op(g);
        if (!CHECK(op != NULL))
            return;
        for (size_t t = 0; t < sizeof(trees) / sizeof(trees[0]); t++) {
            for (uint32_t me = 0; me < n; me++) {
                uint32_t fs[] = {FTC_PLAN_NO_UPCORR, 0, 1, 2};
                for (size_t k = 0; k < 4; k++) {
                    if (fs[k] != FTC_PLAN_NO_UPCORR && fs[k] >= n)
                        continue;
                    const ftc_tree_node_t *a =
                        ftc_plan_tree_node(op, &trees[t], me, fs[k]);
                    const ftc_tree_node_t *b =
                        ftc_plan_tree_node(op, &trees[t], me, fs[k]);
                    checked++;
                    if (a == NULL || b == NULL
                        || !node_right(a, &trees[t], n, me, fs[k])
                        || !node_right(b, &trees[t], n, me, fs[k]))
                        wrong++;
                    /* Beyond the capacity the same question gets a fresh
                     * copy each time; before, the kept node. */
                    if (a != b)
                        fresh_again++;
                }
            }
        }
        op->vt->destroy(op);
        ftc_context_destroy(ctx);
    }
    CHECK_EQ(wrong, 0u);
    CHECK(checked > 10000);
    /* The capacity is small: most of these many keys were built in the
     * operation's memory, and answered right all the same. */
    CHECK(fresh_again > checked / 2);
}

static void test_kept(void)
{
    ftc_context_t *ctx;
    ftc_group_t *g;
    if (!CHECK_OK(ftc_context_create(3, 16, &ftc_test_null_ops, NULL,
                                     NULL, &ctx))
        || !CHECK_OK(ftc_group_create(ctx, 1, 0, 16, NULL, &g)))
        return;
    ftc_tree_t bin = {.kind = FTC_TREE_BINOMIAL};
    ftc_tree_t iff = {.kind = FTC_TREE_IF, .k = 1};
    ftc_cop_t *op1 = dummy_op(g);
    const ftc_tree_node_t *a = ftc_plan_tree_node(op1, &bin, 3, FTC_PLAN_NO_UPCORR);
    const ftc_tree_node_t *c = ftc_plan_tree_node(op1, &iff, 3, 1);
    if (!CHECK(a != NULL && c != NULL))
        return;
    ftc_tree_node_t a_copy = *a;
    uint32_t a_peers[64];
    memcpy(a_peers, a->peers, sizeof(uint32_t) * (a->ngroup + a->nchildren));
    op1->vt->destroy(op1);
    /* The next operation of the group reads the same nodes. */
    ftc_cop_t *op2 = dummy_op(g);
    CHECK_EQ(ftc_plan_tree_node(op2, &bin, 3, FTC_PLAN_NO_UPCORR), a);
    CHECK_EQ(ftc_plan_tree_node(op2, &iff, 3, 1), c);
    /* Other keys (another root, another f) are other nodes, and adding
     * them leaves the first one as it was. */
    const ftc_tree_node_t *d = ftc_plan_tree_node(op2, &iff, 4, 1);
    const ftc_tree_node_t *e = ftc_plan_tree_node(op2, &iff, 3, 2);
    CHECK(d != a && d != c && e != c && d != NULL && e != NULL);
    CHECK(e != NULL && node_right(e, &iff, 16, 3, 2));
    CHECK_EQ(a->parent, a_copy.parent);
    CHECK_EQ(a->peers, a_copy.peers);
    CHECK(memcmp(a->peers, a_peers,
                 sizeof(uint32_t) * (a->ngroup + a->nchildren)) == 0);
    op2->vt->destroy(op2);
    /* A group of its own has a plan of its own. */
    ftc_group_t *h;
    if (CHECK_OK(ftc_group_create(ctx, 2, 0, 16, NULL, &h))) {
        ftc_cop_t *op3 = dummy_op(h);
        const ftc_tree_node_t *x =
            ftc_plan_tree_node(op3, &bin, 3, FTC_PLAN_NO_UPCORR);
        CHECK(x != NULL && x != a);
        CHECK(x != NULL && node_right(x, &bin, 16, 3, FTC_PLAN_NO_UPCORR));
        op3->vt->destroy(op3);
    }
    ftc_context_destroy(ctx);
}

int main(void)
{
    test_nodes_right();
    test_kept();
    return check_report();
}
