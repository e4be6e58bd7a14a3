/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trees as pure functions of (kind, parameters, n, rank): no state, no
 * allocation, so every process derives the same tree on its own. The
 * definitions and test vectors are in docs/corrected.md §1; the I(f)
 * tree and the up-correction groups come from the reduce paper (4.2).
 *
 * Arithmetic is done in uint64_t: ranks are below 2^32, so sums of a rank
 * and a step (itself at most about 2^33) never wrap.
 *
 * The functions have no error channel besides their return value: for an
 * invalid tree or r >= n, ftc_tree_parent returns -1 and the others return
 * 0. Callers validate with ftc_tree_check first.
 */
#include "ftcoll/topology.h"
#include "ftcoll/error.h"

#include <string.h>

#include "topo/binomial.h"
#include "topo/iftree.h"
#include "topo/kary.h"
#include "topo/knomial.h"
#include "topo/lame.h"
#include "topo/multiroot.h"
#include "topo/sink.h"

/*
 * A validated tree: OPTIMAL is resolved to the Lame order it stands for,
 * and k is widened because that order can exceed 32 bits (2 + L for o = g).
 */
typedef struct shape {
    ftc_tree_kind_t kind; /* never FTC_TREE_OPTIMAL */
    uint64_t k;
} shape_t;

static bool resolve(const ftc_tree_t *tree, shape_t *s)
{
    if (tree == NULL || (unsigned)tree->kind >= FTC_TREE_KIND_COUNT)
        return false;
    s->kind = tree->kind;
    s->k = tree->k;
    switch (tree->kind) {
    case FTC_TREE_KARY:
    case FTC_TREE_LAME:
        return tree->k >= 1;
    case FTC_TREE_KNOMIAL:
    case FTC_TREE_KNOMIAL_MULTIROOT:
        return tree->k >= 2;
    case FTC_TREE_KARY_MULTIROOT:
        /* One root would be the plain k-ary tree; k = 1 a chain of
         * single-rank trees. */
        return tree->k >= 2;
    case FTC_TREE_OPTIMAL: {
        uint64_t den = tree->o > tree->g ? tree->o : tree->g;
        if (den == 0)
            return false;
        uint64_t num = 2 * (uint64_t)tree->o + tree->L;
        /* round half up: floor(num/den + 1/2) */
        uint64_t k = (2 * num + den) / (2 * den);
        s->kind = FTC_TREE_LAME;
        s->k = k < 1 ? 1 : k;
        return true;
    }
    default:
        return true;
    }
}

/* ---- public interface ------------------------------------------------- */

int ftc_tree_check(const ftc_tree_t *tree)
{
    shape_t s;
    return resolve(tree, &s) ? FTC_OK : FTC_EINVAL;
}

int64_t ftc_tree_parent(const ftc_tree_t *tree, uint32_t n, uint32_t r)
{
    shape_t s;
    if (!resolve(tree, &s) || r >= n || r == 0)
        return -1;
    switch (s.kind) {
    case FTC_TREE_BINOMIAL:
        return binomial_parent(r);
    case FTC_TREE_BINOMIAL_INORDER:
        return inorder_parent(r);
    case FTC_TREE_KARY:
        return (int64_t)kary_parent(s.k, r);
    case FTC_TREE_LAME:
        return lame_parent(s.k, r);
    case FTC_TREE_IF:
        return if_parent(s.k, n, r);
    case FTC_TREE_KNOMIAL:
        return knomial_parent(s.k, r);
    case FTC_TREE_KARY_MULTIROOT:
    case FTC_TREE_KNOMIAL_MULTIROOT:
        return multiroot_parent(s.kind == FTC_TREE_KNOMIAL_MULTIROOT, s.k, n, r);
    default:
        return -1;
    }
}

uint32_t ftc_tree_children(const ftc_tree_t *tree, uint32_t n, uint32_t r,
                           uint32_t *out, uint32_t max)
{
    shape_t s;
    sink_t sink = {out, out == NULL ? 0 : max, 0};
    if (!resolve(tree, &s) || r >= n)
        return 0;
    switch (s.kind) {
    case FTC_TREE_BINOMIAL:
        binomial_children(n, r, &sink);
        break;
    case FTC_TREE_BINOMIAL_INORDER:
        inorder_children(n, r, &sink);
        break;
    case FTC_TREE_KARY:
        kary_children(s.k, n, r, 1, 0, &sink);
        break;
    case FTC_TREE_LAME:
        lame_children(s.k, n, r, &sink);
        break;
    case FTC_TREE_IF:
        if_children(s.k, n, r, &sink);
        break;
    case FTC_TREE_KNOMIAL:
        knomial_children(s.k, n, r, &sink);
        break;
    case FTC_TREE_KARY_MULTIROOT:
    case FTC_TREE_KNOMIAL_MULTIROOT:
        multiroot_children(s.kind == FTC_TREE_KNOMIAL_MULTIROOT, s.k, n, r,
                           &sink);
        break;
    default:
        break;
    }
    return sink.count;
}

uint32_t ftc_tree_subtree_size(const ftc_tree_t *tree, uint32_t n,
                               uint32_t r)
{
    shape_t s;
    if (!resolve(tree, &s) || r >= n)
        return 0;
    if (r == 0)
        return n;
    switch (s.kind) {
    case FTC_TREE_BINOMIAL:
        return (uint32_t)binomial_subtree(n, r);
    case FTC_TREE_BINOMIAL_INORDER:
        return (uint32_t)inorder_subtree(n, r);
    case FTC_TREE_KARY:
        return (uint32_t)kary_subtree(s.k, n, r);
    case FTC_TREE_LAME:
        return (uint32_t)lame_subtree(s.k, n, r);
    case FTC_TREE_IF:
        return (uint32_t)if_subtree(s.k, n, r);
    case FTC_TREE_KNOMIAL:
        return (uint32_t)knomial_subtree(s.k, n, r);
    case FTC_TREE_KARY_MULTIROOT:
    case FTC_TREE_KNOMIAL_MULTIROOT:
        return (uint32_t)multiroot_subtree(s.kind == FTC_TREE_KNOMIAL_MULTIROOT,
                                           s.k, n, r);
    default:
        return 0;
    }
}

uint32_t ftc_tree_root_child_of(const ftc_tree_t *tree, uint32_t n,
                                uint32_t r)
{
    shape_t s;
    if (!resolve(tree, &s) || r >= n || r == 0)
        return 0;
    switch (s.kind) {
    case FTC_TREE_BINOMIAL:
        return (uint32_t)lowbit(r);
    case FTC_TREE_BINOMIAL_INORDER:
        return (uint32_t)highbit(r);
    case FTC_TREE_KARY:
        return (uint32_t)kary_root_child(s.k, r);
    case FTC_TREE_LAME:
        return (uint32_t)lame_root_child(s.k, r);
    case FTC_TREE_IF:
        return (uint32_t)((r - 1) % (s.k + 1) + 1);
    case FTC_TREE_KNOMIAL:
        return (uint32_t)knomial_root_child(s.k, r);
    case FTC_TREE_KARY_MULTIROOT:
    case FTC_TREE_KNOMIAL_MULTIROOT:
        return (uint32_t)multiroot_root_child(
            s.kind == FTC_TREE_KNOMIAL_MULTIROOT, s.k, n, r);
    default:
        return 0;
    }
}

static const char *const kind_names[FTC_TREE_KIND_COUNT] = {
    [FTC_TREE_BINOMIAL] = "binomial",
    [FTC_TREE_KARY] = "kary",
    [FTC_TREE_LAME] = "lame",
    [FTC_TREE_OPTIMAL] = "optimal",
    [FTC_TREE_BINOMIAL_INORDER] = "binomial-inorder",
    [FTC_TREE_IF] = "if",
    [FTC_TREE_KNOMIAL] = "knomial",
    [FTC_TREE_KARY_MULTIROOT] = "kary-multiroot",
    [FTC_TREE_KNOMIAL_MULTIROOT] = "knomial-multiroot",
};

uint32_t ftc_tree_root_count(const ftc_tree_t *tree, uint32_t n)
{
    shape_t s;
    if (!resolve(tree, &s) || n == 0)
        return 0;
    if (s.kind == FTC_TREE_KARY_MULTIROOT
        || s.kind == FTC_TREE_KNOMIAL_MULTIROOT)
        return (uint32_t)multiroot_count(s.k, n);
    return 1;
}

const char *ftc_tree_kind_name(ftc_tree_kind_t kind)
{
    if ((unsigned)kind >= FTC_TREE_KIND_COUNT)
        return "?";
    return kind_names[kind];
}

int ftc_tree_kind_parse(const char *name, ftc_tree_kind_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    for (unsigned i = 0; i < FTC_TREE_KIND_COUNT; i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (ftc_tree_kind_t)i;
            return FTC_OK;
        }
    }
    return FTC_EINVAL;
}
