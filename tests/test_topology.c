/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tree and up-correction-group tests. The library computes each tree in
 * closed form per rank; here every tree is also built the slow, literal
 * way from its definition (docs/corrected.md §1.1-1.3, reduce paper 4.2)
 * and the two are compared, besides the test vectors and the structural
 * properties the collectives rely on.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "ftcoll/topology.h"
#include "check.h"

static ftc_tree_t mk(ftc_tree_kind_t kind, uint32_t k)
{
    ftc_tree_t t;
    memset(&t, 0, sizeof(t));
    t.kind = kind;
    t.k = k;
    return t;
}

static ftc_tree_t mk_optimal(uint32_t L, uint32_t o, uint32_t g)
{
    ftc_tree_t t = mk(FTC_TREE_OPTIMAL, 0);
    t.L = L;
    t.o = o;
    t.g = g;
    return t;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static const char *describe(const ftc_tree_t *t, uint32_t n)
{
    static char buf[96];
    snprintf(buf, sizeof(buf), "%s k=%u L=%u o=%u g=%u n=%u",
             ftc_tree_kind_name(t->kind), t->k, t->L, t->o, t->g, n);
    return buf;
}

/* ---- reference trees, built literally from the definitions ------------ */

typedef struct ref_tree {
    uint32_t n;
    int64_t *parent;
    uint32_t *first; /* children of r: child[first[r] .. first[r+1]) */
    uint32_t *child;
    uint32_t *subtree;
    uint32_t *root_child;
} ref_tree_t;

typedef struct list {
    uint32_t *v;
    uint32_t len, cap;
} list_t;

static void push(list_t *l, uint32_t x)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        uint32_t *v = realloc(l->v, sizeof(uint32_t) * l->cap);
        if (v == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        l->v = v;
    }
    l->v[l->len++] = x;
}

static unsigned ref_bit_length(uint64_t x)
{
    unsigned b = 0;
    for (; x; x >>= 1)
        b++;
    return b;
}

/* Literal interleaved k-ary tree over positions 0..size-1: level l has k^l
 * positions; children q + c*k^lvl(q). */
static void ref_kary(uint64_t k, uint64_t size, uint64_t q, uint64_t scale,
                     uint64_t offset, list_t *out)
{
    uint64_t lvl_first = k == 1 ? q : 0, width = 1;
    while (!(q >= lvl_first && q < lvl_first + width)) {
        lvl_first += width;
        width *= k;
    }
    for (uint64_t c = 1; c <= k; c++)
        if (q + c * width < size)
            push(out, (uint32_t)((q + c * width) * scale + offset));
}

/* rts(t) of the Lame tree of order k, grown on demand. */
typedef struct rts_table {
    uint64_t k;
    uint64_t *v;
    uint64_t len, cap;
} rts_table_t;

static uint64_t rts(rts_table_t *t, uint64_t i)
{
    while (t->len <= i) {
        if (t->len == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 256;
            uint64_t *v = realloc(t->v, sizeof(uint64_t) * t->cap);
            if (v == NULL) {
                fprintf(stderr, "out of memory\n");
                exit(2);
            }
            t->v = v;
        }
        uint64_t x = t->len;
        uint64_t val = x < t->k ? 1 : t->v[x - 1] + t->v[x - t->k];
        t->v[t->len++] = val > (1ull << 40) ? (1ull << 40) : val;
    }
    return t->v[i];
}

static void ref_children(const ftc_tree_t *tree, uint32_t n, uint32_t r,
                         rts_table_t *tab, list_t *out)
{
    uint64_t k = tree->k;
    switch (tree->kind) {
    case FTC_TREE_BINOMIAL:
        for (unsigned j = ref_bit_length(r); (uint64_t)r + (1ull << j) < n; j++)
            push(out, (uint32_t)(r + (1ull << j)));
        break;
    case FTC_TREE_BINOMIAL_INORDER:
        for (int j = 32; j >= 0; j--) {
            uint64_t step = 1ull << j;
            bool small = r == 0 ? step < n : step < (r & (~r + 1u));
            if (small && r + step < n)
                push(out, (uint32_t)(r + step));
        }
        break;
    case FTC_TREE_KARY:
        ref_kary(k, n, r, 1, 0, out);
        break;
    case FTC_TREE_OPTIMAL:
    case FTC_TREE_LAME: {
        /* start(r) = min{t : rts(t) > r}, by bisection: rts is monotone. */
        uint64_t start = 0;
        if (r > 0) {
            uint64_t lo = 0, hi = 1; /* rts(lo) <= r < rts(hi) */
            while (rts(tab, hi) <= r) {
                lo = hi;
                hi *= 2;
            }
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (rts(tab, mid) <= r)
                    lo = mid;
                else
                    hi = mid;
            }
            start = hi;
        }
        for (uint64_t t = start; r + rts(tab, t + tab->k - 1) < n; t++)
            push(out, (uint32_t)(r + rts(tab, t + tab->k - 1)));
        break;
    }
    case FTC_TREE_IF: {
        uint64_t f = k, stride = f + 1, m = f >= 1 ? f + 1 : 2;
        if (r == 0) {
            for (uint64_t c = 1; c <= stride && c < n; c++)
                push(out, (uint32_t)c);
        } else {
            uint64_t j = (r - 1) % stride, q = (r - 1) / stride;
            uint64_t size = (n - 2 - j) / stride + 1; /* p-1 in [0, n-2] */
            ref_kary(m, size, q, stride, j + 1, out);
        }
        break;
    }
    default:
        break;
    }
}

static uint64_t optimal_order(const ftc_tree_t *t)
{
    double d = t->o > t->g ? t->o : t->g;
    double x = (2.0 * t->o + t->L) / d;
    uint64_t k = (uint64_t)(x + 0.5);
    return k < 1 ? 1 : k;
}

static bool ref_build(const ftc_tree_t *tree, uint32_t n, ref_tree_t *rt)
{
    rts_table_t tab = {tree->k, NULL, 0, 0};
    if (tree->kind == FTC_TREE_OPTIMAL)
        tab.k = optimal_order(tree);
    list_t kids = {NULL, 0, 0};
    rt->n = n;
    rt->parent = xmalloc(sizeof(int64_t) * n);
    rt->first = xmalloc(sizeof(uint32_t) * (n + 1));
    rt->subtree = xmalloc(sizeof(uint32_t) * n);
    rt->root_child = xmalloc(sizeof(uint32_t) * n);
    for (uint32_t r = 0; r < n; r++)
        rt->parent[r] = -2;
    if (n > 0)
        rt->parent[0] = -1;
    bool ok = true;
    for (uint32_t r = 0; r < n; r++) {
        rt->first[r] = kids.len;
        uint32_t before = kids.len;
        ref_children(tree, n, r, &tab, &kids);
        for (uint32_t i = before; i < kids.len; i++) {
            uint32_t c = kids.v[i];
            /* Every tree here numbers children above their parent. */
            if (c <= r || c >= n || rt->parent[c] != -2)
                ok = false;
            else
                rt->parent[c] = r;
        }
    }
    rt->first[n] = kids.len;
    rt->child = kids.v;
    for (uint32_t back = 0; back < n; back++) {
        uint32_t r = n - 1 - back; /* children before their parents */
        rt->subtree[r] = 1;
        for (uint32_t i = rt->first[r]; i < rt->first[r + 1]; i++)
            rt->subtree[r] += rt->subtree[rt->child[i]];
    }
    for (uint32_t r = 1; r < n; r++)
        if (rt->parent[r] < 0)
            ok = false;
    if (n > 0)
        rt->root_child[0] = 0;
    for (uint32_t r = 1; r < n && ok; r++) /* parents come first */
        rt->root_child[r] =
            rt->parent[r] == 0 ? r : rt->root_child[rt->parent[r]];
    free(tab.v);
    return ok;
}

static void ref_free(ref_tree_t *rt)
{
    free(rt->parent);
    free(rt->first);
    free(rt->child);
    free(rt->subtree);
    free(rt->root_child);
}

/* ---- comparisons and structural properties ---------------------------- */

/* Library against reference for the ranks r = 0, stride, 2*stride, ...
 * (and every root child); subtree sizes only for every sub_stride-th rank,
 * since the Lame subtree size costs O(subtree). */
static bool matches_reference(const ftc_tree_t *t, uint32_t n,
                              uint32_t stride, uint32_t sub_stride)
{
    ref_tree_t rt;
    if (!ref_build(t, n, &rt)) {
        fprintf(stderr, "  reference tree malformed: %s\n", describe(t, n));
        ref_free(&rt);
        return false;
    }
    bool ok = true;
    uint32_t *buf = xmalloc(sizeof(uint32_t) * (n + 1));
    for (uint32_t r = 0; r < n && ok; r++) {
        bool root_child = rt.parent[r] == 0;
        if (r % stride != 0 && !root_child)
            continue;
        uint32_t want = rt.first[r + 1] - rt.first[r];
        const uint32_t *kids = want > 0 ? rt.child + rt.first[r] : buf;
        uint32_t got = ftc_tree_children(t, n, r, buf, n + 1);
        if (got != want || memcmp(buf, kids, sizeof(uint32_t) * want)) {
            fprintf(stderr, "  children of %u differ (%u vs %u): %s\n", r,
                    got, want, describe(t, n));
            ok = false;
        }
        /* A short buffer gets a prefix and the full count. */
        uint32_t head[3] = {0, 0, 0}, hmax = want < 3 ? want : 2;
        if (ftc_tree_children(t, n, r, NULL, 0) != want
            || ftc_tree_children(t, n, r, head, hmax) != want
            || memcmp(head, kids, sizeof(uint32_t) * hmax)
            || (hmax < 3 && head[hmax] != 0)) {
            fprintf(stderr, "  short buffer, children of %u: %s\n", r,
                    describe(t, n));
            ok = false;
        }
        if (ftc_tree_parent(t, n, r) != rt.parent[r]) {
            fprintf(stderr, "  parent of %u: %lld, want %lld: %s\n", r,
                    (long long)ftc_tree_parent(t, n, r),
                    (long long)rt.parent[r], describe(t, n));
            ok = false;
        }
        uint32_t a = rt.root_child[r];
        if (ftc_tree_root_child_of(t, n, r) != a) {
            fprintf(stderr, "  root child of %u: %u, want %u: %s\n", r,
                    ftc_tree_root_child_of(t, n, r), a, describe(t, n));
            ok = false;
        }
        if ((r % sub_stride == 0 || root_child)
            && ftc_tree_subtree_size(t, n, r) != rt.subtree[r]) {
            fprintf(stderr, "  subtree of %u: %u, want %u: %s\n", r,
                    ftc_tree_subtree_size(t, n, r), rt.subtree[r],
                    describe(t, n));
            ok = false;
        }
    }
    free(buf);
    ref_free(&rt);
    return ok;
}

/* Properties checked on the library's answers alone: c is listed among the
 * children of p iff parent(c) == p, each rank once; every rank reaches the
 * root; subtree sizes add up; root_child_of agrees with the parent walk. */
static bool consistent(const ftc_tree_t *t, uint32_t n)
{
    bool ok = true;
    uint32_t *buf = xmalloc(sizeof(uint32_t) * (n + 1));
    uint8_t *listed = calloc(n + 1, 1);
    uint64_t total = 0;
    if (listed == NULL)
        exit(2);
    for (uint32_t p = 0; p < n && ok; p++) {
        uint32_t cnt = ftc_tree_children(t, n, p, buf, n + 1);
        uint64_t sum = 1;
        total += cnt;
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t c = buf[i];
            if (c >= n || listed[c] || ftc_tree_parent(t, n, c) != p) {
                fprintf(stderr, "  bad child %u of %u: %s\n", c, p,
                        describe(t, n));
                ok = false;
                break;
            }
            listed[c] = 1;
            sum += ftc_tree_subtree_size(t, n, c);
        }
        if (ok && sum != ftc_tree_subtree_size(t, n, p)) {
            fprintf(stderr, "  subtree of %u: %u, children sum to %llu: %s\n",
                    p, ftc_tree_subtree_size(t, n, p),
                    (unsigned long long)sum, describe(t, n));
            ok = false;
        }
    }
    if (ok && (total != (n ? n - 1 : 0) || listed[0]
               || ftc_tree_parent(t, n, 0) != -1
               || ftc_tree_subtree_size(t, n, 0) != n)) {
        fprintf(stderr, "  %llu children in all, or root wrong: %s\n",
                (unsigned long long)total, describe(t, n));
        ok = false;
    }
    for (uint32_t r = 1; r < n && ok; r++) {
        uint32_t a = r, steps = 0;
        while (steps++ < n) {
            int64_t p = ftc_tree_parent(t, n, a);
            if (p <= 0)
                break;
            a = (uint32_t)p;
        }
        if (steps > n || ftc_tree_parent(t, n, a) != 0
            || ftc_tree_root_child_of(t, n, r) != a) {
            fprintf(stderr, "  walk from %u ends at %u: %s\n", r, a,
                    describe(t, n));
            ok = false;
        }
    }
    free(listed);
    free(buf);
    return ok;
}

/* Longest run of consecutive ranks in 1..n-1 inside one root-child
 * subtree: the gap one failure can open on the rank ring. */
static uint32_t longest_run(const ftc_tree_t *t, uint32_t n)
{
    uint32_t best = 0, run = 0, prev = 0;
    for (uint32_t r = 1; r < n; r++) {
        uint32_t c = ftc_tree_root_child_of(t, n, r);
        run = c == prev ? run + 1 : 1;
        prev = c;
        if (run > best)
            best = run;
    }
    return best;
}

static bool children_are(const ftc_tree_t *t, uint32_t n, uint32_t r,
                         const uint32_t *want, uint32_t len)
{
    uint32_t buf[64];
    uint32_t got = ftc_tree_children(t, n, r, buf, 64);
    if (got == len && memcmp(buf, want, sizeof(uint32_t) * len) == 0)
        return true;
    fprintf(stderr, "  children of %u (%s):", r, describe(t, n));
    for (uint32_t i = 0; i < got && i < 64; i++)
        fprintf(stderr, " %u", buf[i]);
    fprintf(stderr, "\n");
    return false;
}

#define VEC(t, n, r, ...)                                                   \
    do {                                                                    \
        static const uint32_t want_[] = {__VA_ARGS__};                      \
        CHECK(children_are(&(t), (n), (r), want_,                           \
                           sizeof(want_) / sizeof(want_[0])));              \
    } while (0)

/* ---- tests ------------------------------------------------------------- */

static void test_vectors(void)
{
    ftc_tree_t b = mk(FTC_TREE_BINOMIAL, 0);
    VEC(b, 16, 0, 1, 2, 4, 8);
    VEC(b, 16, 1, 3, 5, 9);
    VEC(b, 16, 2, 6, 10);
    VEC(b, 16, 3, 7, 11);
    VEC(b, 16, 4, 12);
    VEC(b, 16, 5, 13);
    VEC(b, 16, 6, 14);
    VEC(b, 16, 7, 15);
    CHECK(ftc_tree_children(&b, 16, 8, NULL, 0) == 0);
    CHECK(ftc_tree_root_child_of(&b, 16, 7) == 1);
    CHECK(ftc_tree_root_child_of(&b, 16, 10) == 2);
    CHECK(ftc_tree_root_child_of(&b, 16, 12) == 4);
    CHECK(ftc_tree_root_child_of(&b, 16, 8) == 8);
    CHECK(ftc_tree_subtree_size(&b, 16, 1) == 8);
    CHECK(ftc_tree_subtree_size(&b, 16, 2) == 4);

    ftc_tree_t io = mk(FTC_TREE_BINOMIAL_INORDER, 0);
    VEC(io, 16, 0, 8, 4, 2, 1);
    VEC(io, 16, 8, 12, 10, 9);
    VEC(io, 16, 4, 6, 5);
    CHECK(ftc_tree_parent(&io, 16, 12) == 8);
    CHECK(ftc_tree_parent(&io, 16, 7) == 6);

    ftc_tree_t k3 = mk(FTC_TREE_KARY, 3);
    VEC(k3, 13, 0, 1, 2, 3);
    VEC(k3, 13, 1, 4, 7, 10);
    VEC(k3, 13, 2, 5, 8, 11);
    VEC(k3, 13, 3, 6, 9, 12);
    for (uint32_t r = 4; r < 13; r++)
        CHECK(ftc_tree_children(&k3, 13, r, NULL, 0) == 0);

    ftc_tree_t l2 = mk(FTC_TREE_LAME, 2);
    VEC(l2, 13, 0, 1, 2, 3, 5, 8);
    VEC(l2, 13, 1, 4, 6, 9);
    VEC(l2, 13, 2, 7, 10);
    VEC(l2, 13, 3, 11);
    VEC(l2, 13, 4, 12);
    for (uint32_t r = 5; r < 13; r++)
        CHECK(ftc_tree_children(&l2, 13, r, NULL, 0) == 0);

    ftc_tree_t l4 = mk(FTC_TREE_LAME, 4);
    VEC(l4, 16, 0, 1, 2, 3, 4, 5, 7, 10, 14);
    VEC(l4, 16, 1, 6, 8, 11, 15);
    VEC(l4, 16, 2, 9, 12);
    VEC(l4, 16, 3, 13);
    for (uint32_t r = 4; r < 16; r++)
        CHECK(ftc_tree_children(&l4, 16, r, NULL, 0) == 0);

    /* L=2, o=g=1 gives order 4 (docs/corrected.md §1.4). */
    ftc_tree_t opt = mk_optimal(2, 1, 1);
    VEC(opt, 16, 0, 1, 2, 3, 4, 5, 7, 10, 14);
    VEC(opt, 16, 1, 6, 8, 11, 15);

    /* The reduce paper's 7-process example is I(1). */
    ftc_tree_t i1 = mk(FTC_TREE_IF, 1);
    VEC(i1, 7, 0, 1, 2);
    VEC(i1, 7, 1, 3, 5);
    VEC(i1, 7, 2, 4, 6);

    /* I(0): one class, binary rather than a chain. */
    ftc_tree_t i0 = mk(FTC_TREE_IF, 0);
    VEC(i0, 8, 0, 1);
    VEC(i0, 8, 1, 2, 3);
    VEC(i0, 8, 2, 4, 6);
    VEC(i0, 8, 3, 5, 7);

    ftc_tree_t i2 = mk(FTC_TREE_IF, 2);
    VEC(i2, 12, 0, 1, 2, 3);
    VEC(i2, 12, 1, 4, 7, 10);
    VEC(i2, 12, 3, 6, 9);
}

/* Every kind (and a spread of parameters) on n = 1..300, plus sampled
 * large sizes. */
static void test_all_trees(void)
{
    ftc_tree_t trees[] = {
        mk(FTC_TREE_BINOMIAL, 0),
        mk(FTC_TREE_BINOMIAL_INORDER, 0),
        mk(FTC_TREE_KARY, 1), mk(FTC_TREE_KARY, 2), mk(FTC_TREE_KARY, 3),
        mk(FTC_TREE_KARY, 4), mk(FTC_TREE_KARY, 7), mk(FTC_TREE_KARY, 500),
        mk(FTC_TREE_LAME, 1), mk(FTC_TREE_LAME, 2), mk(FTC_TREE_LAME, 3),
        mk(FTC_TREE_LAME, 4), mk(FTC_TREE_LAME, 5), mk(FTC_TREE_LAME, 8),
        mk(FTC_TREE_LAME, 13), mk(FTC_TREE_LAME, 50), mk(FTC_TREE_LAME, 150),
        mk(FTC_TREE_LAME, 1000),
        mk_optimal(2, 1, 1), mk_optimal(0, 0, 1), mk_optimal(100, 3, 5),
        mk_optimal(7, 2, 0),
        mk(FTC_TREE_IF, 0), mk(FTC_TREE_IF, 1), mk(FTC_TREE_IF, 2),
        mk(FTC_TREE_IF, 3), mk(FTC_TREE_IF, 5), mk(FTC_TREE_IF, 400),
    };
    const size_t ntrees = sizeof(trees) / sizeof(trees[0]);
    for (size_t i = 0; i < ntrees; i++) {
        bool ok_ref = true, ok_cons = true;
        for (uint32_t n = 1; n <= 300; n++) {
            if (ok_ref)
                ok_ref = matches_reference(&trees[i], n, 1, 1);
            if (ok_cons)
                ok_cons = consistent(&trees[i], n);
        }
        CHECK(ok_ref);
        CHECK(ok_cons);
        static const uint32_t big[] = {1000, 4096, 65536};
        for (size_t j = 0; j < 3; j++) {
            uint32_t n = big[j];
            CHECK(matches_reference(&trees[i], n, n > 5000 ? 5 : 1,
                                    n > 5000 ? 97 : 1));
            if (n <= 4096)
                CHECK(consistent(&trees[i], n));
        }
    }
}

/* Lame trees whose relevant indices run past 2k, and huge orders. */
static void test_lame_ranges(void)
{
    static const uint32_t orders[] = {100, 300, 1000, 40000};
    for (size_t i = 0; i < 4; i++) {
        ftc_tree_t t = mk(FTC_TREE_LAME, orders[i]);
        CHECK(matches_reference(&t, 100000, 13, 10007));
    }
    /* Order >= n - 2 is a star. */
    ftc_tree_t star = mk(FTC_TREE_LAME, UINT32_MAX);
    CHECK(ftc_tree_children(&star, 1000, 0, NULL, 0) == 999);
    CHECK(ftc_tree_children(&star, 1000, 5, NULL, 0) == 0);
    CHECK(ftc_tree_parent(&star, 1000, 999) == 0);
    /* OPTIMAL orders beyond 32 bits: L near 2^32 with o = g = 1. */
    ftc_tree_t wide = mk_optimal(UINT32_MAX, 1, 1);
    CHECK(ftc_tree_check(&wide) == FTC_OK);
    CHECK(ftc_tree_children(&wide, 5000, 0, NULL, 0) == 4999);
    CHECK(ftc_tree_root_child_of(&wide, 5000, 4321) == 4321);
}

/* Spot checks at the largest n: nothing overflows or loops. */
static void test_huge_n(void)
{
    ftc_tree_t trees[] = {
        mk(FTC_TREE_BINOMIAL, 0), mk(FTC_TREE_BINOMIAL_INORDER, 0),
        mk(FTC_TREE_KARY, 2), mk(FTC_TREE_KARY, 3),
        mk(FTC_TREE_KARY, UINT32_MAX), mk(FTC_TREE_LAME, 1),
        mk(FTC_TREE_LAME, 2), mk(FTC_TREE_LAME, 4), mk(FTC_TREE_LAME, 5000),
        mk(FTC_TREE_LAME, 70000), mk(FTC_TREE_IF, 0), mk(FTC_TREE_IF, 3),
        mk(FTC_TREE_IF, UINT32_MAX - 1),
    };
    const uint32_t n = UINT32_MAX;
    static const uint32_t ranks[] = {1, 2, 3, 1000, 65535, 65536,
                                     2147483647u, 2147483648u,
                                     4000000000u, UINT32_MAX - 2,
                                     UINT32_MAX - 1};
    uint32_t buf[128];
    for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
        ftc_tree_t *t = &trees[i];
        bool ok = true;
        for (size_t j = 0; j < sizeof(ranks) / sizeof(ranks[0]); j++) {
            uint32_t r = ranks[j];
            int64_t p = ftc_tree_parent(t, n, r);
            if (p < 0 || p >= r) {
                ok = false;
                continue;
            }
            /* r is among its parent's children (the list can be long for
             * wide trees; look at the first 128 and count the rest). */
            uint32_t cnt = ftc_tree_children(t, n, (uint32_t)p, buf, 128);
            bool found = false;
            for (uint32_t c = 0; c < cnt && c < 128; c++)
                found = found || buf[c] == r;
            if (!found && cnt <= 128)
                ok = false;
            cnt = ftc_tree_children(t, n, r, buf, 128);
            for (uint32_t c = 0; c < cnt && c < 128; c++)
                if (buf[c] <= r || ftc_tree_parent(t, n, buf[c]) != r)
                    ok = false;
            uint32_t a = r;
            while (ftc_tree_parent(t, n, a) > 0)
                a = (uint32_t)ftc_tree_parent(t, n, a);
            if (ftc_tree_root_child_of(t, n, r) != a)
                ok = false;
        }
        if (!ok)
            fprintf(stderr, "  huge n: %s\n", describe(t, n));
        CHECK(ok);
    }
    /* Wide trees: the count is computed, not enumerated. */
    ftc_tree_t wide[] = {mk(FTC_TREE_KARY, UINT32_MAX),
                         mk(FTC_TREE_LAME, UINT32_MAX),
                         mk(FTC_TREE_IF, UINT32_MAX - 1),
                         mk_optimal(UINT32_MAX, 1, 1)};
    for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
        uint32_t head[4] = {0, 0, 0, 0};
        CHECK(ftc_tree_children(&wide[i], n, 0, head, 3) == n - 1
              && head[0] == 1 && head[1] == 2 && head[2] == 3
              && head[3] == 0);
        CHECK(ftc_tree_children(&wide[i], n, 5, NULL, 0) == 0);
        CHECK(ftc_tree_root_child_of(&wide[i], n, n - 1) == n - 1);
    }
    ftc_tree_t b = mk(FTC_TREE_BINOMIAL, 0);
    CHECK(ftc_tree_children(&b, n, 0, NULL, 0) == 32);
    CHECK(ftc_tree_subtree_size(&b, n, 1) == 2147483647u);
    ftc_tree_t io = mk(FTC_TREE_BINOMIAL_INORDER, 0);
    CHECK(ftc_tree_subtree_size(&io, n, 2147483648u) == 2147483647u);
    ftc_tree_t k2 = mk(FTC_TREE_KARY, 2);
    CHECK(ftc_tree_subtree_size(&k2, n, 1) == 2147483647u);
}

static void test_interleaving(void)
{
    static const uint32_t sizes[] = {64, 256, 1000};
    static const uint32_t inorder_runs[] = {32, 128, 488};
    ftc_tree_t interleaved[] = {
        mk(FTC_TREE_BINOMIAL, 0), mk(FTC_TREE_KARY, 2), mk(FTC_TREE_KARY, 3),
        mk(FTC_TREE_KARY, 4), mk(FTC_TREE_LAME, 1), mk(FTC_TREE_LAME, 2),
        mk(FTC_TREE_LAME, 3), mk(FTC_TREE_LAME, 4), mk(FTC_TREE_LAME, 7),
        mk_optimal(2, 1, 1), mk(FTC_TREE_IF, 1), mk(FTC_TREE_IF, 2),
        mk(FTC_TREE_IF, 5),
    };
    for (size_t j = 0; j < 3; j++) {
        for (size_t i = 0; i < sizeof(interleaved) / sizeof(interleaved[0]);
             i++) {
            uint32_t run = longest_run(&interleaved[i], sizes[j]);
            if (run != 1)
                fprintf(stderr, "  longest run %u: %s\n", run,
                        describe(&interleaved[i], sizes[j]));
            CHECK(run == 1);
        }
        ftc_tree_t io = mk(FTC_TREE_BINOMIAL_INORDER, 0);
        CHECK(longest_run(&io, sizes[j]) == inorder_runs[j]);
    }
}

static bool same_tree(const ftc_tree_t *a, const ftc_tree_t *b, uint32_t n)
{
    uint32_t x[256], y[256];
    for (uint32_t r = 0; r < n; r++) {
        uint32_t cx = ftc_tree_children(a, n, r, x, 256);
        uint32_t cy = ftc_tree_children(b, n, r, y, 256);
        if (cx != cy || memcmp(x, y, sizeof(uint32_t) * cx) != 0
            || ftc_tree_parent(a, n, r) != ftc_tree_parent(b, n, r)
            || ftc_tree_subtree_size(a, n, r) != ftc_tree_subtree_size(b, n, r)
            || ftc_tree_root_child_of(a, n, r)
                   != ftc_tree_root_child_of(b, n, r))
            return false;
    }
    return true;
}

static void test_equivalences(void)
{
    /* I(f) is the interleaved (f+1)-ary tree for f >= 1. */
    for (uint32_t f = 1; f <= 4; f++) {
        ftc_tree_t a = mk(FTC_TREE_IF, f), b = mk(FTC_TREE_KARY, f + 1);
        bool ok = true;
        for (uint32_t n = 1; n <= 200 && ok; n++)
            ok = same_tree(&a, &b, n);
        CHECK(ok);
    }
    /* Lame of order 1 is the interleaved binomial tree. */
    ftc_tree_t l1 = mk(FTC_TREE_LAME, 1), b = mk(FTC_TREE_BINOMIAL, 0);
    bool ok = true;
    for (uint32_t n = 1; n <= 200 && ok; n++)
        ok = same_tree(&l1, &b, n);
    CHECK(ok);
    /* OPTIMAL is Lame of order round((2o+L)/max(o,g)). */
    ftc_tree_t o1 = mk_optimal(2, 1, 1), l4 = mk(FTC_TREE_LAME, 4);
    ftc_tree_t o2 = mk_optimal(10, 1, 4), l3 = mk(FTC_TREE_LAME, 3);
    ftc_tree_t o3 = mk_optimal(0, 0, 3), o4 = mk_optimal(1, 0, 2);
    ftc_tree_t l1b = mk(FTC_TREE_LAME, 1);
    CHECK(same_tree(&o1, &l4, 200));
    CHECK(same_tree(&o2, &l3, 200)); /* 12/4 = 3 */
    CHECK(same_tree(&o3, &l1b, 200)); /* 0 -> at least 1 */
    CHECK(same_tree(&o4, &l1b, 200)); /* 0.5 rounds up to 1 */
    ftc_tree_t o5 = mk_optimal(5, 0, 2), o6 = mk_optimal(3, 1, 2);
    CHECK(same_tree(&o5, &l3, 200)); /* 2.5 rounds up to 3 */
    CHECK(same_tree(&o6, &l3, 200)); /* 2.5 */
}

static void test_if_shape(void)
{
    for (uint32_t f = 0; f <= 6; f++) {
        ftc_tree_t t = mk(FTC_TREE_IF, f);
        bool ok = true;
        for (uint32_t n = 1; n <= 300 && ok; n++) {
            uint32_t kids[16];
            uint32_t cnt = ftc_tree_children(&t, n, 0, kids, 16);
            uint32_t want = n - 1 < f + 1 ? n - 1 : f + 1;
            if (cnt != want) {
                ok = false;
                break;
            }
            uint32_t lo = UINT32_MAX, hi = 0;
            for (uint32_t i = 0; i < cnt; i++) {
                uint32_t s = ftc_tree_subtree_size(&t, n, kids[i]);
                lo = s < lo ? s : lo;
                hi = s > hi ? s : hi;
                if (kids[i] != i + 1)
                    ok = false;
            }
            if (cnt > 0 && hi - lo > 1)
                ok = false;
            for (uint32_t p = 1; p < n; p++)
                if (ftc_tree_root_child_of(&t, n, p) != (p - 1) % (f + 1) + 1)
                    ok = false;
        }
        if (!ok)
            fprintf(stderr, "  I(%u) shape wrong\n", f);
        CHECK(ok);
    }
}

static void test_upcorr(void)
{
    uint32_t grp[16];
    bool ok_count = true, ok_groups = true;
    for (uint32_t f = 0; f <= 5; f++) {
        ftc_tree_t t = mk(FTC_TREE_IF, f);
        for (uint32_t n = f + 1; n <= 200; n++) {
            uint64_t msgs = 0;
            for (uint32_t p = 0; p < n; p++) {
                uint32_t s = ftc_upcorr_group(f, n, p, grp, 16);
                if (s == 0 || s > f + 1) {
                    ok_groups = false;
                    continue;
                }
                bool has_p = false, has_root = false;
                for (uint32_t i = 0; i < s; i++) {
                    has_p = has_p || grp[i] == p;
                    has_root = has_root || grp[i] == 0;
                    if (i > 0 && grp[i] <= grp[i - 1])
                        ok_groups = false;
                    if (grp[i] >= n)
                        ok_groups = false;
                }
                if (!has_p)
                    ok_groups = false;
                if (p == 0 && s == 1)
                    continue; /* the root in no group: not counted */
                msgs += s - 1;
                /* Symmetric: every member reports the same group. */
                for (uint32_t i = 0; i < s; i++) {
                    uint32_t other[16];
                    if (ftc_upcorr_group(f, n, grp[i], other, 16) != s
                        || memcmp(other, grp, sizeof(uint32_t) * s) != 0)
                        ok_groups = false;
                }
                /* Non-root members sit in distinct root subtrees of I(f),
                 * so a group without the root of size f+1 covers all. */
                uint8_t seen[8] = {0};
                for (uint32_t i = 0; i < s; i++) {
                    if (grp[i] == 0)
                        continue;
                    uint32_t c = ftc_tree_root_child_of(&t, n, grp[i]);
                    if (c == 0 || c > f + 1 || seen[c]++)
                        ok_groups = false;
                }
                if (!has_root && s != f + 1)
                    ok_groups = false;
                if (has_root != (p == 0 || ((p - 1) / (f + 1)
                                            == (n - 2) / (f + 1)
                                            && (n - 1) % (f + 1) != 0)))
                    ok_groups = false;
            }
            uint64_t a = (n - 1) % (f + 1) + 1;
            uint64_t want = (uint64_t)f * (f + 1) * ((n - 1) / (f + 1))
                            + a * (a - 1);
            if (msgs != want) {
                fprintf(stderr, "  f=%u n=%u: %llu messages, want %llu\n", f,
                        n, (unsigned long long)msgs,
                        (unsigned long long)want);
                ok_count = false;
            }
        }
    }
    CHECK(ok_count);
    CHECK(ok_groups);

    /* Small cases by hand: f=1, n=6 -> {1,2} {3,4} {0,5}. */
    CHECK(ftc_upcorr_group(1, 6, 5, grp, 16) == 2 && grp[0] == 0
          && grp[1] == 5);
    CHECK(ftc_upcorr_group(1, 6, 0, grp, 16) == 2 && grp[0] == 0
          && grp[1] == 5);
    CHECK(ftc_upcorr_group(1, 6, 3, grp, 16) == 2 && grp[0] == 3
          && grp[1] == 4);
    /* f=1, n=5 -> {1,2} {3,4}; the root is alone. */
    CHECK(ftc_upcorr_group(1, 5, 0, grp, 16) == 1 && grp[0] == 0);
    CHECK(ftc_upcorr_group(1, 5, 4, grp, 16) == 2 && grp[0] == 3);
    /* n = 1, and f beyond n: one group of everyone. */
    CHECK(ftc_upcorr_group(2, 1, 0, grp, 16) == 1 && grp[0] == 0);
    CHECK(ftc_upcorr_group(UINT32_MAX, 4, 2, grp, 16) == 4 && grp[0] == 0
          && grp[3] == 3);
    /* Truncated output still returns the size; p >= n is empty. */
    grp[1] = 77;
    CHECK(ftc_upcorr_group(3, 20, 6, grp, 1) == 4 && grp[0] == 5
          && grp[1] == 77);
    CHECK(ftc_upcorr_group(3, 20, 6, NULL, 0) == 4);
    CHECK(ftc_upcorr_group(3, 20, 20, grp, 16) == 0);
}

static void test_api_edges(void)
{
    ftc_tree_t t = mk(FTC_TREE_BINOMIAL, 0);
    CHECK(ftc_tree_check(NULL) == FTC_EINVAL);
    CHECK(ftc_tree_check(&t) == FTC_OK);
    t.kind = FTC_TREE_KIND_COUNT;
    CHECK(ftc_tree_check(&t) == FTC_EINVAL);
    t.kind = (ftc_tree_kind_t)-1;
    CHECK(ftc_tree_check(&t) == FTC_EINVAL);
    t = mk(FTC_TREE_KARY, 0);
    CHECK(ftc_tree_check(&t) == FTC_EINVAL);
    t = mk(FTC_TREE_LAME, 0);
    CHECK(ftc_tree_check(&t) == FTC_EINVAL);
    t = mk_optimal(5, 0, 0);
    CHECK(ftc_tree_check(&t) == FTC_EINVAL);
    t = mk_optimal(5, 0, 1);
    CHECK(ftc_tree_check(&t) == FTC_OK);
    t = mk(FTC_TREE_IF, 0);
    CHECK(ftc_tree_check(&t) == FTC_OK);
    t = mk(FTC_TREE_IF, UINT32_MAX);
    CHECK(ftc_tree_check(&t) == FTC_OK);
    t = mk(FTC_TREE_BINOMIAL_INORDER, 0);
    CHECK(ftc_tree_check(&t) == FTC_OK);

    /* Invalid trees and ranks give the neutral answers. */
    ftc_tree_t bad = mk(FTC_TREE_KARY, 0);
    uint32_t buf[4] = {9, 9, 9, 9};
    CHECK(ftc_tree_parent(&bad, 10, 3) == -1);
    CHECK(ftc_tree_children(&bad, 10, 0, buf, 4) == 0 && buf[0] == 9);
    CHECK(ftc_tree_subtree_size(&bad, 10, 0) == 0);
    CHECK(ftc_tree_root_child_of(&bad, 10, 3) == 0);
    CHECK(ftc_tree_parent(NULL, 10, 3) == -1);
    ftc_tree_t b = mk(FTC_TREE_BINOMIAL, 0);
    CHECK(ftc_tree_parent(&b, 10, 10) == -1);
    CHECK(ftc_tree_children(&b, 10, 10, buf, 4) == 0);
    CHECK(ftc_tree_subtree_size(&b, 10, 12) == 0);
    CHECK(ftc_tree_root_child_of(&b, 10, 10) == 0);
    CHECK(ftc_tree_children(&b, 0, 0, buf, 4) == 0);
    CHECK(ftc_tree_parent(&b, 1, 0) == -1);
    CHECK(ftc_tree_root_child_of(&b, 1, 0) == 0);
    CHECK(ftc_tree_subtree_size(&b, 1, 0) == 1);

    /* Children: a short buffer gets a prefix, the count is complete. */
    CHECK(ftc_tree_children(&b, 16, 0, buf, 2) == 4 && buf[0] == 1
          && buf[1] == 2 && buf[2] == 9);
    CHECK(ftc_tree_children(&b, 16, 0, NULL, 5) == 4);

    /* Names. */
    for (unsigned k = 0; k < FTC_TREE_KIND_COUNT; k++) {
        ftc_tree_kind_t parsed;
        const char *name = ftc_tree_kind_name((ftc_tree_kind_t)k);
        CHECK(ftc_tree_kind_parse(name, &parsed) == FTC_OK
              && parsed == (ftc_tree_kind_t)k);
    }
    CHECK(strcmp(ftc_tree_kind_name(FTC_TREE_BINOMIAL), "binomial") == 0);
    CHECK(strcmp(ftc_tree_kind_name(FTC_TREE_KARY), "kary") == 0);
    CHECK(strcmp(ftc_tree_kind_name(FTC_TREE_LAME), "lame") == 0);
    CHECK(strcmp(ftc_tree_kind_name(FTC_TREE_OPTIMAL), "optimal") == 0);
    CHECK(strcmp(ftc_tree_kind_name(FTC_TREE_BINOMIAL_INORDER),
                 "binomial-inorder") == 0);
    CHECK(strcmp(ftc_tree_kind_name(FTC_TREE_IF), "if") == 0);
    CHECK(strcmp(ftc_tree_kind_name(FTC_TREE_KIND_COUNT), "?") == 0);
    ftc_tree_kind_t kind = FTC_TREE_LAME;
    CHECK(ftc_tree_kind_parse("Binomial", &kind) == FTC_EINVAL
          && kind == FTC_TREE_LAME);
    CHECK(ftc_tree_kind_parse("", &kind) == FTC_EINVAL);
    CHECK(ftc_tree_kind_parse(NULL, &kind) == FTC_EINVAL);
    CHECK(ftc_tree_kind_parse("kary", NULL) == FTC_EINVAL);
}

int main(void)
{
    test_vectors();
    test_api_edges();
    test_equivalences();
    test_if_shape();
    test_interleaving();
    test_upcorr();
    test_lame_ranges();
    test_huge_n();
    test_all_trees();
    return check_report();
}
