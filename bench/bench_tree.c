/* SPDX-License-Identifier: BSD-3-Clause */
/* ftcoll-bench's --tree and -k (bench_tree.h). */
#include <stdio.h>
#include <string.h>

#include "bench_tree.h"
#include "ftcoll/error.h"
#include "ftcoll/topology.h"

int bench_tree_parse_kind(bench_tree_t *t, const char *name, const char **why)
{
    ftc_tree_kind_t kind;
    if (ftc_tree_kind_parse(name, &kind) != FTC_OK
        || (kind != FTC_TREE_BINOMIAL && kind != FTC_TREE_KNOMIAL
            && kind != FTC_TREE_KARY)) {
        *why = "expected binomial, knomial or kary (the trees ftco and the "
               "plain tree family share)";
        return -1;
    }
    t->given = true;
    t->kind = kind;
    return 0;
}

/* The k the tree runs with: -k, else 2 (binomial has none; the 2-nomial
 * and the binary tree are the smallest of the others). */
static uint32_t tree_k(const bench_tree_t *t)
{
    return t->kind == FTC_TREE_BINOMIAL || !t->k_given ? 2 : t->k;
}

const char *bench_tree_check(const bench_tree_t *t, ftc_algo_t algo,
                             uint32_t n, const char **flag)
{
    if (t->k_given && !t->given) {
        *flag = "-k";
        return "goes with --tree knomial or kary";
    }
    if (!t->given)
        return NULL;
    *flag = "--tree";
    if (algo != FTC_ALGO_FTCO && algo != FTC_ALGO_TREE
        && algo != FTC_ALGO_CORRECTED)
        return "belongs to --algo ftco, tree or corrected";
    *flag = "-k";
    if (t->kind == FTC_TREE_BINOMIAL && t->k_given)
        return "the binomial tree takes no k (it is the 2-nomial tree)";
    if (t->k_given && t->k < 2)
        return "must be at least 2";
    /* ftco's own rule (docs/ftco.md): k below n once n leaves a choice. */
    if (algo == FTC_ALGO_FTCO && n > 2 && tree_k(t) >= n)
        return "must be below the number of processes under --algo ftco";
    return NULL;
}

void bench_tree_apply(const bench_tree_t *t, ftc_algo_t algo,
                      ftc_ftco_params_t *fp, ftc_tree_params_t *tp,
                      ftc_corrected_params_t *cp)
{
    if (!t->given)
        return;
    ftc_tree_t tree = {.kind = t->kind, .k = tree_k(t)};
    if (algo == FTC_ALGO_FTCO) {
        /* ftco runs on k-nomial and k-ary trees; the binomial tree is the
         * 2-nomial one, node for node. */
        if (tree.kind == FTC_TREE_BINOMIAL)
            tree.kind = FTC_TREE_KNOMIAL;
        fp->tree = tree;
    } else if (algo == FTC_ALGO_TREE) {
        tp->bcast_tree = tree;
    } else if (algo == FTC_ALGO_CORRECTED) {
        cp->bcast_tree = tree;
    }
}

void bench_tree_describe(const bench_tree_t *t, char *buf, size_t len)
{
    if (!t->given)
        snprintf(buf, len, "default tree");
    else if (t->kind == FTC_TREE_BINOMIAL)
        snprintf(buf, len, "binomial tree");
    else if (t->kind == FTC_TREE_KNOMIAL)
        snprintf(buf, len, "%u-nomial tree", tree_k(t));
    else
        snprintf(buf, len, "%u-ary tree", tree_k(t));
}
