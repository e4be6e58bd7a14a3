/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trees as pure functions of (kind, parameters, size, rank). Ranks here are
 * *logical*: the root is 0. A collective rooted at group rank R maps group
 * rank g to logical rank (g - R) mod n.
 *
 * "Interleaved" numbering makes every non-root subtree a residue class of
 * ranks, so one failure leaves gaps of length one on the rank ring; that is
 * what makes ring correction (bcast) and up-correction groups (reduce) work.
 */
#ifndef FTCOLL_TOPOLOGY_H
#define FTCOLL_TOPOLOGY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ftc_tree_kind {
    FTC_TREE_BINOMIAL,         /* interleaved binomial */
    FTC_TREE_KARY,             /* interleaved k-ary */
    FTC_TREE_LAME,             /* Lame tree of order k (generalised Fibonacci) */
    FTC_TREE_OPTIMAL,          /* LogP-optimal: Lame of order
                                  max(1, round((2o+L)/max(o,g))), halves
                                  rounded up; exact when max(o,g) divides
                                  2o+L (Karp et al.'s greedy tree) */
    FTC_TREE_BINOMIAL_INORDER, /* MPICH-style in-order binomial, for comparison */
    FTC_TREE_IF,               /* I(f)-tree: root has f+1 children, child c owns
                                  the ranks p with (p-1) mod (f+1) == c-1 */
    FTC_TREE_KNOMIAL,          /* interleaved k-nomial: up to k-1 children per
                                  round; k = 2 is the binomial */
    FTC_TREE_KARY_MULTIROOT,   /* k roots, fully connected, each the root of
                                  an interleaved k-ary tree over its residue
                                  class mod k (k >= 2) */
    FTC_TREE_KNOMIAL_MULTIROOT,/* the same with k-nomial trees (k >= 2) */
    FTC_TREE_KIND_COUNT
} ftc_tree_kind_t;

typedef struct ftc_tree {
    ftc_tree_kind_t kind;
    uint32_t k;    /* KARY: arity (>= 1); LAME: order (>= 1); IF: f (>= 0);
                      KNOMIAL: radix (>= 2); *_MULTIROOT: roots and
                      radix (>= 2) */
    uint32_t L, o, g; /* OPTIMAL only: LogP parameters (o or g may be 0, not both) */
} ftc_tree_t;

/* FTC_OK, or FTC_EINVAL if kind or its parameters are out of range.
 * The functions below do not report errors: for a tree that fails this
 * check, or r >= n, ftc_tree_parent returns -1 and the others 0. Check a
 * tree once before using it. */
int ftc_tree_check(const ftc_tree_t *tree);

/* Parent of logical rank r (< n), or -1 for the root (r == 0). */
int64_t ftc_tree_parent(const ftc_tree_t *tree, uint32_t n, uint32_t r);

/*
 * Children of r in the order a broadcast sends to them. Writes at most max
 * of them to out (out may be NULL when max is 0) and returns how many
 * there are, so a caller can size its buffer with a first call.
 */
uint32_t ftc_tree_children(const ftc_tree_t *tree, uint32_t n, uint32_t r,
                           uint32_t *out, uint32_t max);

/* Number of ranks in the subtree rooted at r, r included. */
uint32_t ftc_tree_subtree_size(const ftc_tree_t *tree, uint32_t n, uint32_t r);

/* The child of the root whose subtree holds r (r itself if it is a child of
 * the root); 0 for the root. */
uint32_t ftc_tree_root_child_of(const ftc_tree_t *tree, uint32_t n, uint32_t r);

/*
 * How many roots the tree has over n ranks: min(k, n) for the multi-root
 * kinds (logical ranks 0 .. count - 1, fully connected), 1 for the others,
 * 0 for an invalid tree or n = 0. The functions above still describe one
 * tree: the other roots are children of rank 0 (ftc_tree_parent gives 0),
 * listed first among its children, and rank r below the roots belongs to
 * root r mod count.
 */
uint32_t ftc_tree_root_count(const ftc_tree_t *tree, uint32_t n);

const char *ftc_tree_kind_name(ftc_tree_kind_t kind);
/* "binomial", "kary", "lame", "optimal", "binomial-inorder", "if",
 * "knomial", "kary-multiroot", "knomial-multiroot" */
int ftc_tree_kind_parse(const char *name, ftc_tree_kind_t *out);

/*
 * The k-nomial radix for n ranks and LogP parameters L and o (Margolin &
 * Barak 5.2.1; any unit, o > 0): ftc_tree_knomial_latency gives the
 * fault-free broadcast latency of the interleaved k-nomial tree in the
 * paper's step model (a hop costs L + 2o, each earlier sibling o more),
 * ftc_tree_knomial_best_k the k in [2, min(n - 1, 256)] that minimises it
 * (the smallest on ties; 2 when n <= 2). FTC_OK, or FTC_EINVAL for n = 0,
 * k < 2, o = 0 or a NULL output. Time O(n) per k tried, no allocation.
 */
#define FTC_KNOMIAL_K_SEARCH_MAX 256u
int ftc_tree_knomial_latency(uint32_t n, uint32_t k, uint32_t L, uint32_t o,
                             uint64_t *out);
int ftc_tree_knomial_best_k(uint32_t n, uint32_t L, uint32_t o, uint32_t *k);

/*
 * Up-correction group of the corrected reduce (Kuettler & Haertig 4.2), for
 * f failures and n processes, logical ranks. Processes 1..n-1 with equal
 * floor((p-1)/(f+1)) form a group; the root (0) joins the last group when
 * that group has fewer than f+1 members. Writes the members (p included) in
 * increasing order, at most max, and returns the group's size. For the root
 * when it is in no group, returns 1 and writes 0.
 */
uint32_t ftc_upcorr_group(uint32_t f, uint32_t n, uint32_t p,
                          uint32_t *out, uint32_t max);

#ifdef __cplusplus
}
#endif
#endif
