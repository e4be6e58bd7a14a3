/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trees as pure functions of (kind, parameters, n, rank): no state, no
 * allocation, so every process derives the same tree on its own. The
 * definitions and test vectors are in corrected-trees.md 2.2-2.5; the I(f)
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

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------- */

/* Collects children: stores the first max, counts all. */
typedef struct sink {
    uint32_t *out;
    uint32_t max;
    uint32_t count;
} sink_t;

static void emit(sink_t *s, uint64_t rank)
{
    if (s->count < s->max)
        s->out[s->count] = (uint32_t)rank;
    s->count++;
}

static bool sink_full(const sink_t *s)
{
    return s->count >= s->max;
}

static unsigned bit_length(uint64_t x)
{
    unsigned b = 0;
    while (x != 0) {
        b++;
        x >>= 1;
    }
    return b;
}

static uint64_t lowbit(uint64_t x)
{
    return x & (~x + 1);
}

static uint64_t highbit(uint64_t x)
{
    return x == 0 ? 0 : (uint64_t)1 << (bit_length(x) - 1);
}

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

/* ---- interleaved binomial (2.2) --------------------------------------- */

/* Children r + 2^j for j >= bl(r): r's subtree is the residue class of r
 * modulo 2^bl(r), and the root's child 2^j owns the ranks whose lowest set
 * bit is j. */

static int64_t binomial_parent(uint64_t r)
{
    return (int64_t)(r ^ highbit(r));
}

static void binomial_children(uint64_t n, uint64_t r, sink_t *out)
{
    for (uint64_t step = (uint64_t)1 << bit_length(r); r + step < n;
         step <<= 1)
        emit(out, r + step);
}

static uint64_t binomial_subtree(uint64_t n, uint64_t r)
{
    return ((n - 1 - r) >> bit_length(r)) + 1;
}

/* ---- in-order binomial (MPICH style, for comparison) ------------------ */

/* r's subtree is the contiguous block [r, r + lowbit(r)), which is why one
 * failure of a root child leaves a gap of about n/2 on the ring. */

static int64_t inorder_parent(uint64_t r)
{
    return (int64_t)(r - lowbit(r));
}

static void inorder_children(uint64_t n, uint64_t r, sink_t *out)
{
    uint64_t step = r == 0 ? highbit(n - 1) : lowbit(r) >> 1;
    for (; step != 0; step >>= 1)
        if (r + step < n)
            emit(out, r + step);
}

static uint64_t inorder_subtree(uint64_t n, uint64_t r)
{
    uint64_t block = lowbit(r);
    return block < n - r ? block : n - r;
}

/* ---- interleaved k-ary (2.3) ------------------------------------------ */

/*
 * Level l holds k^l ranks starting at 1 + k + ... + k^(l-1). The children
 * of r are r + c*k^l (c = 1..k), so r's subtree is the residue class of r
 * modulo k^l from r on. These helpers take the tree's size and a position
 * in it, because the I(f) tree reuses them on its per-class trees.
 */
typedef struct kary_level {
    uint64_t first; /* first position of the level */
    uint64_t width; /* k^level */
} kary_level_t;

static kary_level_t kary_level(uint64_t k, uint64_t q)
{
    kary_level_t lv = {0, 1};
    if (k == 1) {
        /* A chain: one position per level, and the loop below would take
         * q steps. */
        lv.first = q;
        return lv;
    }
    /* width <= q < 2^32 before each multiplication, so no overflow. */
    while (q - lv.first >= lv.width) {
        lv.first += lv.width;
        lv.width *= k;
    }
    return lv;
}

static uint64_t kary_parent(uint64_t k, uint64_t q)
{
    kary_level_t lv = kary_level(k, q);
    uint64_t up_width = lv.width / k;
    uint64_t up_first = lv.first - up_width;
    return up_first + (q - lv.first) % up_width;
}

/* Emits the children of position q as ranks q' * scale + offset. Wide
 * trees can have billions of children, so the count is computed, and only
 * the ones that fit are enumerated. */
static void kary_children(uint64_t k, uint64_t size, uint64_t q,
                          uint64_t scale, uint64_t offset, sink_t *out)
{
    kary_level_t lv = kary_level(k, q);
    uint64_t count = (size - 1 - q) / lv.width;
    if (count > k)
        count = k;
    uint64_t done = out->count + count;
    for (uint64_t i = 1; i <= count && !sink_full(out); i++)
        emit(out, (q + i * lv.width) * scale + offset);
    out->count = (uint32_t)done;
}

static uint64_t kary_subtree(uint64_t k, uint64_t size, uint64_t q)
{
    return (size - 1 - q) / kary_level(k, q).width + 1;
}

static uint64_t kary_root_child(uint64_t k, uint64_t r)
{
    return (r - 1) % k + 1;
}

/* ---- I(f) tree (reduce paper) ----------------------------------------- */

/*
 * The root has f+1 children; child j+1 owns the class of ranks p with
 * (p-1) mod (f+1) == j, and each class is an interleaved m-ary tree over
 * the positions q = (p-1) / (f+1). m = f+1 makes the whole tree the
 * interleaved (f+1)-ary tree; for f = 0 that would be a chain of depth n,
 * so the single class is made binary instead.
 */
typedef struct if_class {
    uint64_t stride; /* f + 1 */
    uint64_t arity;  /* m */
    uint64_t j;      /* class: the root child j+1 owns it */
    uint64_t q;      /* position within the class */
    uint64_t size;   /* positions in the class */
} if_class_t;

static if_class_t if_class(uint64_t f, uint64_t n, uint64_t p)
{
    if_class_t c;
    c.stride = f + 1;
    c.arity = f >= 1 ? f + 1 : 2;
    c.j = (p - 1) % c.stride;
    c.q = (p - 1) / c.stride;
    c.size = (n - 1 - c.j + c.stride - 1) / c.stride;
    return c;
}

static int64_t if_parent(uint64_t f, uint64_t n, uint64_t p)
{
    if_class_t c = if_class(f, n, p);
    if (c.q == 0)
        return 0;
    return (int64_t)(kary_parent(c.arity, c.q) * c.stride + c.j + 1);
}

static void if_children(uint64_t f, uint64_t n, uint64_t p, sink_t *out)
{
    if (p == 0) {
        /* The children 1..min(f+1, n-1) are the k-ary root's children. */
        kary_children(f + 1, n, 0, 1, 0, out);
        return;
    }
    if_class_t c = if_class(f, n, p);
    kary_children(c.arity, c.size, c.q, c.stride, c.j + 1, out);
}

static uint64_t if_subtree(uint64_t f, uint64_t n, uint64_t p)
{
    if_class_t c = if_class(f, n, p);
    return kary_subtree(c.arity, c.size, c.q);
}

/* ---- Lame tree of order k (2.4) --------------------------------------- */

/*
 * Work with R(u) = rts(u + k - 1): R(u) = 1 for u <= 0, u + 1 for
 * 0 <= u <= k, and R(u) = R(u-1) + R(u-k) for u >= 1. Process r sends at
 * step t to r + R(t), from t = 0 for the root; a rank s >= 1 receives from
 * s - R(u) where R(u) is the largest value <= s (so walking to the root is
 * a greedy decomposition of s into R values) and starts sending at u + k.
 *
 * The R values that matter are below 2^33, but their index can be large
 * when k is (a star for k >= n - 2), so nothing iterates from 0: R has a
 * closed form up to 2k, and beyond that a cursor steps along the sequence
 * one index at a time. The cursor keeps R(u), R(u-k), R(u-2k), ..., which
 * is all one step needs in either direction, and has at most about
 * log2(R(u)) + 1 entries because R(u) >= 2 R(u-k).
 */
#define LAME_CAP ((uint64_t)1 << 40) /* "too large to matter": > any rank */
#define LAME_DEPTH 40 /* more entries would mean R(u) >= 2^40 = LAME_CAP */

typedef struct lame_seq {
    uint64_t k;
    uint64_t u;
    unsigned len;              /* entries with u - j*k >= 0 */
    uint64_t v[LAME_DEPTH];    /* v[j] = R(u - j*k), saturated at LAME_CAP */
} lame_seq_t;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t s = a + b; /* both <= LAME_CAP: no wrap */
    return s > LAME_CAP ? LAME_CAP : s;
}

/* R(x) for 0 <= x <= 2k: linear to k, then R(k+m) = k+1 + m(m+3)/2. */
static uint64_t lame_closed(uint64_t k, uint64_t x)
{
    if (x <= k)
        return x + 1;
    uint64_t m = x - k;
    if (m >= (uint64_t)1 << 21) /* m(m+3)/2 > 2^41 */
        return LAME_CAP;
    uint64_t r = k + 1 + m * (m + 3) / 2;
    return r > LAME_CAP ? LAME_CAP : r;
}

/* Positions s at u <= 2k using the closed form only. */
static void lame_init(lame_seq_t *s, uint64_t k, uint64_t u)
{
    s->k = k;
    s->u = u;
    s->len = (unsigned)(u / k) + 1; /* u <= 2k: at most 3 */
    for (unsigned j = 0; j < s->len; j++)
        s->v[j] = lame_closed(k, u - j * k);
}

static void lame_next(lame_seq_t *s)
{
    uint64_t u = s->u + 1;
    uint64_t len = u / s->k + 1;
    s->u = u;
    if (len > LAME_DEPTH) {
        /* R(u) >= 2^(len-1) >= LAME_CAP, and stays so: saturate rather
         * than grow past v[]. No caller steps back from here. */
        for (unsigned j = 0; j < s->len; j++)
            s->v[j] = LAME_CAP;
        return;
    }
    if (len > s->len)
        s->v[len - 1] = 1; /* the entry that just reached index 0 */
    /* Deepest first, so v[j+1] already holds the new R(u - (j+1)k). */
    for (unsigned i = s->len; i > 0; i--) {
        unsigned j = i - 1;
        uint64_t lag = j + 1 < len ? s->v[j + 1] : 1;
        s->v[j] = sat_add(s->v[j], lag);
    }
    s->len = (unsigned)len;
}

/* One index back: R(x-1) = R(x) - R(x-k). Exact only while no entry is
 * saturated, which holds wherever lame_seek_le uses it. */
static void lame_prev(lame_seq_t *s)
{
    uint64_t u = s->u - 1;
    unsigned len = (unsigned)(u / s->k) + 1;
    /* Shallowest first, so v[j+1] still holds the old R(u+1 - (j+1)k). */
    for (unsigned j = 0; j < len; j++) {
        uint64_t lag = j + 1 < s->len ? s->v[j + 1] : 1;
        s->v[j] -= lag;
    }
    s->len = len;
    s->u = u;
}

/* Moves s forward to index target. */
static void lame_seek(lame_seq_t *s, uint64_t target)
{
    uint64_t two_k = 2 * s->k;
    if (target <= two_k) {
        lame_init(s, s->k, target);
        return;
    }
    if (s->u < two_k || s->u > target)
        lame_init(s, s->k, two_k);
    while (s->u < target)
        lame_next(s);
}

/* Positions s at the largest u with R(u) <= x, for 1 <= x < 2^32. Moves
 * from s's current position when that is cheaper, so that a descending
 * series of calls (the walk to the root) costs one pass in total. */
static void lame_seek_le(lame_seq_t *s, uint64_t x)
{
    uint64_t k = s->k;
    if (x <= k + 1) {
        lame_init(s, k, x - 1);
        return;
    }
    if (lame_closed(k, 2 * k) > x) {
        uint64_t lo = k, hi = 2 * k; /* R(lo) <= x < R(hi) */
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (lame_closed(k, mid) <= x)
                lo = mid;
            else
                hi = mid;
        }
        lame_init(s, k, lo);
        return;
    }
    /* R(2k) <= x: the answer lies at or beyond 2k. */
    if (s->u < 2 * k || s->v[0] >= LAME_CAP)
        lame_init(s, k, 2 * k);
    while (s->v[0] > x)
        lame_prev(s);
    for (;;) {
        lame_next(s); /* R(u+1) <= 2 R(u) <= 2x: stays exact */
        if (s->v[0] > x) {
            lame_prev(s);
            return;
        }
    }
}

/* s at the first step at which r (>= 1) sends. */
static void lame_first_send(lame_seq_t *s, uint64_t r)
{
    lame_seek_le(s, r);
    lame_seek(s, s->u + s->k);
}

static int64_t lame_parent(uint64_t k, uint64_t r)
{
    lame_seq_t s;
    lame_init(&s, k, 0);
    lame_seek_le(&s, r);
    return (int64_t)(r - s.v[0]);
}

static void lame_children(uint64_t k, uint64_t n, uint64_t r, sink_t *out)
{
    lame_seq_t s;
    lame_init(&s, k, 0);
    if (r > 0)
        lame_first_send(&s, r);
    while (r + s.v[0] < n) {
        if (r == 0 && s.u < k && sink_full(out)) {
            /* R(u) = u + 1 up to u = k, and only the root sends there: for
             * a large order that is most of a wide root's children, so
             * count them instead of stepping through. */
            uint64_t last = n - 2 < k ? n - 2 : k; /* R(last) < n */
            out->count += (uint32_t)(last - s.u + 1);
            lame_init(&s, k, last + 1);
            continue;
        }
        emit(out, r + s.v[0]);
        lame_next(&s);
    }
}

/* Size of r's subtree, s being at r's first send step. O(subtree size);
 * the recursion is as deep as the tree (about log2(n) levels at most). */
static uint64_t lame_subtree_from(const lame_seq_t *first, uint64_t n,
                                  uint64_t r)
{
    lame_seq_t s = *first;
    uint64_t size = 1;
    for (; r + s.v[0] < n; lame_next(&s)) {
        lame_seq_t child = s;
        lame_seek(&child, s.u + s.k);
        size += lame_subtree_from(&child, n, r + s.v[0]);
    }
    return size;
}

static uint64_t lame_subtree(uint64_t k, uint64_t n, uint64_t r)
{
    lame_seq_t s;
    lame_init(&s, k, 0);
    lame_first_send(&s, r);
    return lame_subtree_from(&s, n, r);
}

/* The root's children are exactly the R values, so the walk up ends at the
 * first remainder of the greedy decomposition that is one. */
static uint64_t lame_root_child(uint64_t k, uint64_t r)
{
    lame_seq_t s;
    lame_init(&s, k, 0);
    for (;;) {
        lame_seek_le(&s, r);
        if (s.v[0] == r)
            return r;
        r -= s.v[0];
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
};

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

/* ---- up-correction groups (reduce paper 4.2) -------------------------- */

uint32_t ftc_upcorr_group(uint32_t f, uint32_t n, uint32_t p, uint32_t *out,
                          uint32_t max)
{
    if (p >= n)
        return 0;
    if (out == NULL)
        max = 0;
    uint64_t size = (uint64_t)f + 1;
    uint64_t last = n >= 2 ? (uint64_t)(n - 2) / size : 0;
    bool root_joins = n >= 2 && (uint64_t)(n - 1) % size != 0;
    uint64_t group;
    if (p == 0) {
        if (!root_joins) {
            if (max > 0)
                out[0] = 0;
            return 1;
        }
        group = last;
    } else {
        group = (p - 1) / size;
    }
    sink_t sink = {out, max, 0};
    if (root_joins && group == last)
        emit(&sink, 0);
    uint64_t lo = group * size + 1;
    uint64_t hi = lo + size; /* exclusive */
    if (hi > n)
        hi = n;
    for (uint64_t q = lo; q < hi; q++)
        emit(&sink, q);
    return sink.count;
}
