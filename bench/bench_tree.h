/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-bench's --tree and -k: one tree for every tree-based family, so
 * that ftco, the plain tree family and the corrected family can be timed
 * on the same tree (docs/ftco.md, "On real processes").
 *
 * What "the same tree" means per family:
 *   ftco       every phase runs on it; binomial is the 2-nomial tree,
 *              which is the interleaved binomial tree (test_knomial).
 *   tree       bcast and allreduce's second half run on it; its reduce
 *              always goes up the interleaved binomial tree, so an
 *              allreduce uses one tree throughout only with binomial.
 *   corrected  its bcast tree (the reduce has its own I(f)-tree).
 */
#ifndef FTC_BENCH_TREE_H
#define FTC_BENCH_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/corrected.h"
#include "ftcoll/ftco.h"
#include "ftcoll/tree.h"

typedef struct bench_tree {
    bool given;             /* --tree was on the command line */
    bool k_given;           /* -k was */
    ftc_tree_kind_t kind;   /* binomial, knomial or kary */
    uint32_t k;
} bench_tree_t;

/* --tree's value: binomial, knomial or kary. 0, or -1 with *why set. */
int bench_tree_parse_kind(bench_tree_t *t, const char *name, const char **why);

/* The checks that need the algorithm and the group size; NULL when they
 * pass, else why not, with *flag the argument to name. */
const char *bench_tree_check(const bench_tree_t *t, ftc_algo_t algo,
                             uint32_t n, const char **flag);

/* Writes the tree into the family's parameters (only into the one algo
 * uses). Without --tree nothing changes: each family keeps its default. */
void bench_tree_apply(const bench_tree_t *t, ftc_algo_t algo,
                      ftc_ftco_params_t *fp, ftc_tree_params_t *tp,
                      ftc_corrected_params_t *cp);

/* "4-nomial", "binary k-ary", "binomial", or "default" without --tree. */
void bench_tree_describe(const bench_tree_t *t, char *buf, size_t len);

#endif
