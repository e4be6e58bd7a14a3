/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-root trees (lib/topo/multiroot.h) through the public tree
 * functions, for both kinds, n = 1 .. 300 and k = 2 .. 7:
 *   - a tree: rank 0 is the only rank without a parent, every parent
 *     lists the rank among its children, and the children cover the
 *     n - 1 other ranks once each;
 *   - min(k, n) roots, listed first among rank 0's children, each the
 *     parent-0 head of its residue class mod the root count, and below
 *     the roots exactly the single-root tree of the same kind and k over
 *     the class's positions (rank = position x roots + root);
 *   - subtree sizes and the root's child above each rank agree with a
 *     walk up the parents;
 * and k < 2 is refused, the names parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "ftcoll/topology.h"
#include "check.h"

static void check_tree(ftc_tree_kind_t kind, ftc_tree_kind_t single,
                       uint32_t n, uint32_t k)
{
    ftc_tree_t t = {.kind = kind, .k = k};
    ftc_tree_t one = {.kind = single, .k = k};
    const char *name = ftc_tree_kind_name(kind);
    uint32_t m = ftc_tree_root_count(&t, n);
    uint32_t *kids = malloc(sizeof(uint32_t) * n);
    uint32_t *seen = calloc(n, sizeof(uint32_t));
    uint32_t *size = calloc(n, sizeof(uint32_t));
    uint64_t total = 0;
    if (kids == NULL || seen == NULL || size == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    CHECK_MSG(m == (k < n ? k : n), "%s n=%u k=%u: %u roots", name, n, k, m);
    CHECK_MSG(ftc_tree_parent(&t, n, 0) == -1, "%s: rank 0 has a parent", name);
    for (uint32_t r = 0; r < n; r++) {
        uint32_t c = ftc_tree_children(&t, n, r, kids, n);
        total += c;
        for (uint32_t i = 0; i < c; i++) {
            CHECK_MSG(kids[i] < n && kids[i] != r,
                      "%s n=%u k=%u: child %u of %u", name, n, k, kids[i], r);
            if (kids[i] >= n)
                continue;
            seen[kids[i]]++;
            CHECK_MSG(ftc_tree_parent(&t, n, kids[i]) == (int64_t)r,
                      "%s n=%u k=%u: parent of %u is not %u", name, n, k,
                      kids[i], r);
        }
        if (r == 0)
            for (uint32_t j = 1; j < m && j <= c; j++)
                CHECK_MSG(kids[j - 1] == j,
                          "%s n=%u k=%u: rank 0's child %u "
                          "is %u, not root %u",
                          name, n, k, j - 1, kids[j - 1], j);
    }
    CHECK_MSG(total == n - 1, "%s n=%u k=%u: %llu children", name, n, k,
              (unsigned long long)total);
    for (uint32_t r = 1; r < n; r++)
        CHECK_MSG(seen[r] == 1, "%s n=%u k=%u: %u is a child %u times", name, n,
                  k, r, seen[r]);
    /* Below the roots, the single-root tree over each residue class. */
    for (uint32_t r = m; r < n; r++) {
        uint32_t j = r % m, q = r / m, nj = (n - 1 - j) / m + 1;
        int64_t p = ftc_tree_parent(&one, nj, q);
        CHECK_MSG(p >= 0 && ftc_tree_parent(&t, n, r) == (int64_t)(p * m + j),
                  "%s n=%u k=%u: %u's parent is not position %lld of root %u",
                  name, n, k, r, (long long)p, j);
    }
    for (uint32_t j = 1; j < m; j++)
        CHECK_MSG(ftc_tree_parent(&t, n, j) == 0, "%s: root %u's parent", name,
                  j);
    /* Walk up from every rank: subtree sizes, the root child above. */
    for (uint32_t r = 0; r < n; r++) {
        uint32_t x = r, below = 0, steps = 0;
        while (x != 0 && steps++ <= n) {
            size[x]++;
            below = x;
            x = (uint32_t)ftc_tree_parent(&t, n, x);
        }
        size[0]++;
        CHECK_MSG(steps <= n, "%s n=%u k=%u: %u never reaches rank 0", name, n,
                  k, r);
        CHECK_MSG(ftc_tree_root_child_of(&t, n, r) == below,
                  "%s n=%u k=%u: root child of %u is %u, walk says %u", name, n,
                  k, r, ftc_tree_root_child_of(&t, n, r), below);
    }
    for (uint32_t r = 0; r < n; r++)
        CHECK_MSG(ftc_tree_subtree_size(&t, n, r) == size[r],
                  "%s n=%u k=%u: subtree of %u is %u, walk says %u", name, n, k,
                  r, ftc_tree_subtree_size(&t, n, r), size[r]);
    for (uint32_t j = 1; j < m; j++)
        CHECK_MSG(size[j] == (n - 1 - j) / m + 1,
                  "%s n=%u k=%u: root %u's tree is not its residue class", name,
                  n, k, j);
    free(kids);
    free(seen);
    free(size);
}

int main(void)
{
    for (uint32_t n = 1; n <= 300; n++)
        for (uint32_t k = 2; k <= 7; k++) {
            check_tree(FTC_TREE_KNOMIAL_MULTIROOT, FTC_TREE_KNOMIAL, n, k);
            check_tree(FTC_TREE_KARY_MULTIROOT, FTC_TREE_KARY, n, k);
        }
    /* One large case: P = 65,536, k = 9, the paper's Table 2 tree. */
    check_tree(FTC_TREE_KNOMIAL_MULTIROOT, FTC_TREE_KNOMIAL, 65536, 9);

    ftc_tree_t bad = {.kind = FTC_TREE_KNOMIAL_MULTIROOT, .k = 1};
    CHECK_MSG(ftc_tree_check(&bad) == FTC_EINVAL, "k = 1 is refused");
    bad.kind = FTC_TREE_KARY_MULTIROOT;
    CHECK_MSG(ftc_tree_check(&bad) == FTC_EINVAL, "k = 1 is refused (kary)");
    CHECK_MSG(ftc_tree_root_count(&bad, 8) == 0, "no roots for a bad tree");
    ftc_tree_t plain = {.kind = FTC_TREE_KNOMIAL, .k = 4};
    CHECK_MSG(ftc_tree_root_count(&plain, 8) == 1,
              "a single-root tree has one");
    CHECK_MSG(ftc_tree_root_count(&plain, 0) == 0, "no ranks, no roots");
    ftc_tree_kind_t kind;
    CHECK_MSG(ftc_tree_kind_parse("knomial-multiroot", &kind) == FTC_OK
                  && kind == FTC_TREE_KNOMIAL_MULTIROOT, "knomial-multiroot");
    CHECK_MSG(ftc_tree_kind_parse("kary-multiroot", &kind) == FTC_OK
                  && kind == FTC_TREE_KARY_MULTIROOT, "kary-multiroot");
    return check_report();
}
