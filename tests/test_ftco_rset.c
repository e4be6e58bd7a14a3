/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's contributor sets (lib/algo/ftco/rset.h) against a
 * bitmap over random sets of up to 200 positions: membership, subset,
 * disjointness, union, the missing positions, and the wire form's round
 * trip; malformed wire forms are refused (a count that disagrees with the
 * length, empty, overlapping, touching or out-of-range spans, a short
 * buffer). And pre-order positions (preorder.h): every subtree is the
 * interval [pos(x), pos(x) + size), and rank and position invert each
 * other, on every tree ftco runs on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "algo/ftco/preorder.h"
#include "algo/ftco/rset.h"
#include "check.h"

enum { N = 200 };

static uint64_t rng = 0x1234567;

static uint32_t draw(uint32_t below)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % below);
}

/* A random set as a bitmap and as spans added in random order. */
static void random_set(bool bits[N], ftco_rset_t *a)
{
    memset(bits, 0, N);
    uint32_t spans = draw(6);
    for (uint32_t i = 0; i < spans; i++) {
        uint32_t lo = draw(N), len = 1 + draw(i % 2 ? 3 : 40);
        uint32_t hi = lo + len > N ? N : lo + len;
        for (uint32_t p = lo; p < hi; p++)
            bits[p] = true;
        CHECK_MSG(ftco_rset_add(a, lo, hi) == FTC_OK, "add");
    }
}

static void check_sets(void)
{
    for (int round = 0; round < 3000; round++) {
        bool x[N], y[N];
        ftco_rset_t a = {0}, b = {0};
        random_set(x, &a);
        random_set(y, &b);
        bool sub = true, dis = true;
        uint32_t missing = 0;
        for (uint32_t p = 0; p < N; p++) {
            CHECK_MSG(ftco_rset_has(&a, p) == x[p], "has %u", p);
            if (x[p] && !y[p])
                sub = false;
            if (x[p] && y[p])
                dis = false;
            missing += !x[p];
        }
        for (uint32_t i = 0; i + 1 < a.count; i++)
            CHECK_MSG(a.s[i].hi < a.s[i + 1].lo, "spans sorted, not touching");
        CHECK_MSG(ftco_rset_subset(&a, &b) == sub, "subset");
        CHECK_MSG(ftco_rset_disjoint(&a, &b) == dis, "disjoint");
        uint32_t out[N];
        CHECK_MSG(ftco_rset_missing(&a, N, out, N) == missing, "missing count");
        for (uint32_t i = 0; i < missing; i++)
            CHECK_MSG(!x[out[i]] && (i == 0 || out[i] > out[i - 1]),
                      "missing positions");
        /* Wire round trip. */
        size_t len = ftco_rset_wire_size(&a);
        uint8_t *buf = malloc(len);
        ftco_rset_write(&a, buf);
        ftco_rset_t c = {0};
        CHECK_MSG(ftco_rset_read(&c, buf, len, N) == FTC_OK, "read");
        CHECK_MSG(ftco_rset_subset(&a, &c) && ftco_rset_subset(&c, &a),
                  "round trip");
        CHECK_MSG(ftco_rset_read(&c, buf, len - 1, N) == FTC_EINVAL, "short");
        if (a.count > 0) {
            CHECK_MSG(ftco_rset_read(&c, buf, len, a.s[a.count - 1].hi - 1)
                          == FTC_EINVAL, "beyond n");
        }
        free(buf);
        /* Union. */
        CHECK_MSG(ftco_rset_union(&a, &b) == FTC_OK, "union");
        for (uint32_t p = 0; p < N; p++)
            CHECK_MSG(ftco_rset_has(&a, p) == (x[p] || y[p]), "union %u", p);
        for (uint32_t i = 0; i + 1 < a.count; i++)
            CHECK_MSG(a.s[i].hi < a.s[i + 1].lo, "union's spans sorted, apart");
        /* The same union on lent room: in place while it fits (no move
         * to the heap), on the heap once it does not, the room left. */
        ftco_span_t room[4];
        ftco_rset_t d;
        ftco_rset_lend(&d, room, 4);
        CHECK_MSG(ftco_rset_union(&d, &b) == FTC_OK, "union into lent room");
        CHECK_MSG(d.owned == (b.count > 4) && (d.owned || d.s == room),
               "lent room kept while it fits (%u spans)", b.count);
        CHECK_MSG(ftco_rset_union(&d, &a) == FTC_OK, "union on lent room");
        for (uint32_t p = 0; p < N; p++)
            CHECK_MSG(ftco_rset_has(&d, p) == (x[p] || y[p]), "lent union %u", p);
        for (uint32_t i = 0; i + 1 < d.count; i++)
            CHECK_MSG(d.s[i].hi < d.s[i + 1].lo, "lent union's spans apart");
        CHECK_MSG(d.owned == (d.s != room), "owned exactly when moved");
        ftco_rset_free(&d);
        ftco_rset_free(&a);
        ftco_rset_free(&b);
        ftco_rset_free(&c);
    }
    /* Malformed spans. */
    uint32_t bad[][5] = {
        {2, 5, 5, 7, 9},  /* empty span */
        {2, 1, 5, 5, 9},  /* touching */
        {2, 1, 6, 4, 9},  /* overlapping */
        {2, 6, 9, 1, 3},  /* out of order */
        {2, 1, 3, 7, 11}, /* beyond n = 10 */
        {3, 1, 3, 7, 9},  /* count larger than the spans given */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ftco_rset_t c = {0};
        CHECK_MSG(
            ftco_rset_read(&c, (const uint8_t *)bad[i], sizeof(bad[i]), 10)
                == FTC_EINVAL,
            "malformed %zu refused", i);
        ftco_rset_free(&c);
    }
    ftco_rset_t c = {0};
    CHECK_MSG(ftco_rset_read(&c, (const uint8_t *)bad[0], 3, 10) == FTC_EINVAL,
              "no count");
    ftco_rset_free(&c);
}

static void check_preorder(ftc_tree_kind_t kind, uint32_t k, uint32_t n)
{
    ftc_tree_t t = {.kind = kind, .k = k};
    uint32_t *pos = malloc(sizeof(uint32_t) * n);
    bool *seen = calloc(n, sizeof(bool));
    for (uint32_t x = 0; x < n; x++) {
        pos[x] = ftco_preorder_pos(&t, n, x);
        CHECK_MSG(pos[x] < n && !seen[pos[x]], "%s k=%u n=%u: position of %u",
                  ftc_tree_kind_name(kind), k, n, x);
        if (pos[x] < n)
            seen[pos[x]] = true;
        CHECK_MSG(ftco_preorder_rank(&t, n, pos[x]) == x, "rank at pos of %u",
                  x);
    }
    /* A subtree is an interval: x's ancestors hold it. */
    for (uint32_t x = 1; x < n; x++) {
        uint32_t a = (uint32_t)ftc_tree_parent(&t, n, x);
        uint32_t size = ftc_tree_subtree_size(&t, n, a);
        CHECK_MSG(pos[x] > pos[a] && pos[x] < pos[a] + size,
                  "%s k=%u n=%u: %u outside its parent's interval",
                  ftc_tree_kind_name(kind), k, n, x);
    }
    free(pos);
    free(seen);
}

int main(void)
{
    check_sets();
    for (uint32_t n = 1; n <= 90; n++)
        for (uint32_t k = 2; k <= 5; k++) {
            check_preorder(FTC_TREE_KNOMIAL, k, n);
            check_preorder(FTC_TREE_KARY, k, n);
            check_preorder(FTC_TREE_KNOMIAL_MULTIROOT, k, n);
            check_preorder(FTC_TREE_KARY_MULTIROOT, k, n);
        }
    return check_report();
}
