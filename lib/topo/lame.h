/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lame trees of order k (docs/corrected.md §1.3): generalised Fibonacci.
 *
 * Static inline, read only by topo/topology.c: the public functions switch
 * on the kind, and these stay inlined into them as they were before the
 * split.
 */
#ifndef FTC_TOPO_LAME_H
#define FTC_TOPO_LAME_H

#include "topo/sink.h"

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

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t s = a + b; /* both <= LAME_CAP: no wrap */
    return s > LAME_CAP ? LAME_CAP : s;
}

/* R(x) for 0 <= x <= 2k: linear to k, then R(k+m) = k+1 + m(m+3)/2. */
static inline uint64_t lame_closed(uint64_t k, uint64_t x)
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
static inline void lame_init(lame_seq_t *s, uint64_t k, uint64_t u)
{
    s->k = k;
    s->u = u;
    s->len = (unsigned)(u / k) + 1; /* u <= 2k: at most 3 */
    for (unsigned j = 0; j < s->len; j++)
        s->v[j] = lame_closed(k, u - j * k);
}

static inline void lame_next(lame_seq_t *s)
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
static inline void lame_prev(lame_seq_t *s)
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
static inline void lame_seek(lame_seq_t *s, uint64_t target)
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
static inline void lame_seek_le(lame_seq_t *s, uint64_t x)
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
static inline void lame_first_send(lame_seq_t *s, uint64_t r)
{
    lame_seek_le(s, r);
    lame_seek(s, s->u + s->k);
}

static inline int64_t lame_parent(uint64_t k, uint64_t r)
{
    lame_seq_t s;
    lame_init(&s, k, 0);
    lame_seek_le(&s, r);
    return (int64_t)(r - s.v[0]);
}

static inline void lame_children(uint64_t k, uint64_t n, uint64_t r, sink_t *out)
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
static inline uint64_t lame_subtree_from(const lame_seq_t *first, uint64_t n,
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

static inline uint64_t lame_subtree(uint64_t k, uint64_t n, uint64_t r)
{
    lame_seq_t s;
    lame_init(&s, k, 0);
    lame_first_send(&s, r);
    return lame_subtree_from(&s, n, r);
}

/* The root's children are exactly the R values, so the walk up ends at the
 * first remainder of the greedy decomposition that is one. */
static inline uint64_t lame_root_child(uint64_t k, uint64_t r)
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

#endif
