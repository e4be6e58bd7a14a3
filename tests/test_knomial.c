/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interleaved k-nomial tree (lib/topo/knomial.h) through the public
 * tree functions: a tree (every rank but the root has a parent that lists
 * it as a child, children are distinct and cover n - 1 ranks), subtree
 * sizes and the root's child above each rank agree with a walk, the
 * depth is at most the number of base-k digits, k = 2 is the interleaved
 * binomial tree, and k < 2 is refused. The radix helpers: the latency
 * agrees with a walk of the step model over the public tree functions,
 * and the best k with a brute-force search.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "ftcoll/topology.h"
#include "check.h"

static void check_tree(uint32_t n, uint32_t k)
{
    ftc_tree_t t = {.kind = FTC_TREE_KNOMIAL, .k = k};
    uint32_t *kids = malloc(sizeof(uint32_t) * n);
    uint32_t *seen = calloc(n, sizeof(uint32_t));
    uint32_t *size = calloc(n, sizeof(uint32_t));
    uint64_t total = 0;
    CHECK_MSG(ftc_tree_parent(&t, n, 0) == -1, "root has no parent");
    for (uint32_t r = 0; r < n; r++) {
        uint32_t c = ftc_tree_children(&t, n, r, kids, n);
        total += c;
        for (uint32_t i = 0; i < c; i++) {
            CHECK_MSG(kids[i] < n && kids[i] > r, "n=%u k=%u: child %u of %u",
                      n, k, kids[i], r);
            if (kids[i] >= n)
                continue;
            seen[kids[i]]++;
            CHECK_MSG(ftc_tree_parent(&t, n, kids[i]) == (int64_t)r,
                      "n=%u k=%u: parent of %u is not %u", n, k, kids[i], r);
        }
    }
    CHECK_MSG(total == n - 1, "n=%u k=%u: %llu children", n, k,
              (unsigned long long)total);
    for (uint32_t r = 1; r < n; r++)
        CHECK_MSG(seen[r] == 1, "n=%u k=%u: %u is a child %u times", n, k, r,
                  seen[r]);
    /* Walk up from every rank: subtree sizes, root child, depth. */
    for (uint32_t r = 0; r < n; r++) {
        uint32_t x = r, depth = 0, below_root = r;
        size[x]++;
        while (x != 0) {
            below_root = x;
            x = (uint32_t)ftc_tree_parent(&t, n, x);
            size[x]++;
            depth++;
        }
        uint32_t digits = 0;
        for (uint64_t p = 1; p <= r; p *= k)
            digits++;
        CHECK_MSG(depth <= digits, "n=%u k=%u: %u at depth %u > %u digits", n,
                  k, r, depth, digits);
        if (r > 0)
            CHECK_MSG(ftc_tree_root_child_of(&t, n, r) == below_root,
                      "n=%u k=%u: root child of %u", n, k, r);
    }
    for (uint32_t r = 0; r < n; r++)
        CHECK_MSG(ftc_tree_subtree_size(&t, n, r) == size[r],
                  "n=%u k=%u: subtree of %u: %u, walk says %u", n, k, r,
                  ftc_tree_subtree_size(&t, n, r), size[r]);
    free(kids);
    free(seen);
    free(size);
}

static void check_binomial(uint32_t n)
{
    ftc_tree_t kn = {.kind = FTC_TREE_KNOMIAL, .k = 2};
    ftc_tree_t bi = {.kind = FTC_TREE_BINOMIAL};
    uint32_t a[64], b[64];
    for (uint32_t r = 0; r < n; r++) {
        CHECK_MSG(ftc_tree_parent(&kn, n, r) == ftc_tree_parent(&bi, n, r),
                  "n=%u: 2-nomial parent of %u", n, r);
        uint32_t ca = ftc_tree_children(&kn, n, r, a, 64);
        uint32_t cb = ftc_tree_children(&bi, n, r, b, 64);
        CHECK_MSG(ca == cb
                      && memcmp(a, b, sizeof(uint32_t) * (ca < 64 ? ca : 64))
                             == 0,
                  "n=%u: 2-nomial children of %u", n, r);
    }
}

/* The step model walked from the public tree functions: ranks in
 * increasing order have their value before their children (children are
 * larger ranks). */
static uint64_t walk_latency(uint32_t n, uint32_t k, uint32_t L, uint32_t o)
{
    ftc_tree_t t = {.kind = FTC_TREE_KNOMIAL, .k = k};
    uint64_t *at = calloc(n, sizeof(uint64_t));
    uint32_t *kids = malloc(sizeof(uint32_t) * n);
    uint64_t latest = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (at[r] > latest)
            latest = at[r];
        uint32_t c = ftc_tree_children(&t, n, r, kids, n);
        for (uint32_t i = 0; i < c; i++)
            at[kids[i]] = at[r] + (uint64_t)(i + 1) * o + L + o;
    }
    free(at);
    free(kids);
    return latest;
}

static void check_radix(void)
{
    static const uint32_t lo[][2] = {{10, 1}, {0, 1}, {3, 2}, {100, 1}};
    for (size_t m = 0; m < sizeof(lo) / sizeof(lo[0]); m++) {
        uint32_t L = lo[m][0], o = lo[m][1];
        for (uint32_t n = 1; n <= 200; n++) {
            uint64_t best_t = UINT64_MAX;
            uint32_t best = 2;
            for (uint32_t k = 2; k <= 12; k++) {
                uint64_t got = 0;
                CHECK_MSG(ftc_tree_knomial_latency(n, k, L, o, &got) == FTC_OK,
                          "latency n=%u k=%u", n, k);
                uint64_t want = walk_latency(n, k, L, o);
                CHECK_MSG(got == want,
                          "latency n=%u k=%u L=%u o=%u: %llu, walk %llu", n, k,
                          L, o, (unsigned long long)got,
                          (unsigned long long)want);
                if (k < n && want < best_t) {
                    best_t = want;
                    best = k;
                }
            }
            uint32_t k = 0;
            CHECK_MSG(ftc_tree_knomial_best_k(n, L, o, &k) == FTC_OK, "best k");
            if (n <= 13) /* every k < n was tried above */
                CHECK_MSG(k == best,
                          "best k n=%u L=%u o=%u: %u, brute force %u", n, L, o,
                          k, best);
            uint64_t tk = 0;
            (void)ftc_tree_knomial_latency(n, k, L, o, &tk);
            CHECK_MSG(tk <= best_t || n <= 2, "best k n=%u: worse than k=%u", n,
                      best);
        }
    }
    uint64_t t = 0;
    CHECK_MSG(ftc_tree_knomial_latency(2, 2, 10, 1, &t) == FTC_OK && t == 12,
              "one hop costs L + 2o (%llu)", (unsigned long long)t);
    CHECK_MSG(ftc_tree_knomial_latency(1, 2, 10, 1, &t) == FTC_OK && t == 0,
              "one rank: 0");
    uint32_t k = 0;
    CHECK_MSG(ftc_tree_knomial_latency(0, 2, 10, 1, &t) == FTC_EINVAL, "n = 0");
    CHECK_MSG(ftc_tree_knomial_latency(5, 1, 10, 1, &t) == FTC_EINVAL, "k = 1");
    CHECK_MSG(ftc_tree_knomial_latency(5, 2, 10, 0, &t) == FTC_EINVAL, "o = 0");
    CHECK_MSG(ftc_tree_knomial_latency(5, 2, 10, 1, NULL) == FTC_EINVAL,
              "NULL");
    CHECK_MSG(ftc_tree_knomial_best_k(0, 10, 1, &k) == FTC_EINVAL,
              "best: n = 0");
    CHECK_MSG(ftc_tree_knomial_best_k(5, 10, 0, &k) == FTC_EINVAL,
              "best: o = 0");
    CHECK_MSG(ftc_tree_knomial_best_k(2, 10, 1, &k) == FTC_OK && k == 2,
              "best: n = 2 gives 2");
    /* The paper's scale (P = 64K, L = 10, o = 1), for the record. */
    CHECK_MSG(ftc_tree_knomial_best_k(65536, 10, 1, &k) == FTC_OK, "64K");
    (void)ftc_tree_knomial_latency(65536, k, 10, 1, &t);
    printf("knomial: best k for P = 65536, L = 10, o = 1: %u (latency %llu)\n",
           k, (unsigned long long)t);
}

int main(void)
{
    check_radix();
    for (uint32_t n = 1; n <= 300; n++)
        for (uint32_t k = 2; k <= 9; k++)
            check_tree(n, k);
    check_tree(4096, 9);
    check_tree(5000, 16);
    for (uint32_t n = 1; n <= 520; n++)
        check_binomial(n);

    /* Wide radix: children are counted, and only those that fit written. */
    ftc_tree_t wide = {.kind = FTC_TREE_KNOMIAL, .k = 1u << 31};
    uint32_t two[2];
    CHECK_MSG(ftc_tree_children(&wide, 100000, 0, two, 2) == 99999,
              "radix above n: the root has every rank as a child");
    CHECK_MSG(two[0] == 1 && two[1] == 2, "in rank order");

    ftc_tree_t bad = {.kind = FTC_TREE_KNOMIAL, .k = 1};
    CHECK_MSG(ftc_tree_check(&bad) == FTC_EINVAL, "k = 1 is refused");
    bad.k = 0;
    CHECK_MSG(ftc_tree_check(&bad) == FTC_EINVAL, "k = 0 is refused");
    ftc_tree_kind_t kind;
    CHECK_MSG(ftc_tree_kind_parse("knomial", &kind) == FTC_OK
                  && kind == FTC_TREE_KNOMIAL,
              "\"knomial\" parses");
    CHECK_MSG(strcmp(ftc_tree_kind_name(FTC_TREE_KNOMIAL), "knomial") == 0,
              "and is its name");
    return check_report();
}
