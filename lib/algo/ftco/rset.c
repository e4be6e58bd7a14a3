/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Contributor sets as interval lists (rset.h says why).
 */
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "algo/ftco/rset.h"

void ftco_rset_free_heap(ftco_rset_t *a)
{
    if (a->owned)
        free(a->s);
    a->s = NULL;
    a->count = a->cap = 0;
    a->owned = false;
}

/* Room for need spans, the set's spans kept; a unchanged when out of
 * memory. Lent room is left, never freed, when it is too small. */
static int reserve(ftco_rset_t *a, uint64_t need)
{
    if (need <= a->cap)
        return FTC_OK;
    uint64_t cap = a->cap > 0 ? a->cap : 2;
    while (cap < need)
        cap *= 2;
    if (cap > UINT32_MAX || cap > SIZE_MAX / sizeof(ftco_span_t))
        return FTC_ENOMEM;
    ftco_span_t *s;
    if (a->owned) {
        s = realloc(a->s, sizeof(*s) * cap);
    } else {
        s = malloc(sizeof(*s) * cap);
        if (s != NULL && a->count > 0)
            memcpy(s, a->s, sizeof(*s) * a->count);
    }
    if (s == NULL)
        return FTC_ENOMEM;
    a->s = s;
    a->cap = (uint32_t)cap;
    a->owned = true;
    return FTC_OK;
}

bool ftco_rset_has(const ftco_rset_t *a, uint32_t p)
{
    uint32_t lo = 0, hi = a->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a->s[mid].hi <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->count && a->s[lo].lo <= p;
}

bool ftco_rset_subset(const ftco_rset_t *a, const ftco_rset_t *b)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->count; i++) {
        while (j < b->count && b->s[j].hi <= a->s[i].lo)
            j++;
        /* Spans of b do not touch, so one of them must hold all of a's. */
        if (j == b->count || b->s[j].lo > a->s[i].lo || b->s[j].hi < a->s[i].hi)
            return false;
    }
    return true;
}

bool ftco_rset_disjoint(const ftco_rset_t *a, const ftco_rset_t *b)
{
    uint32_t i = 0, j = 0;
    while (i < a->count && j < b->count) {
        if (a->s[i].hi <= b->s[j].lo)
            i++;
        else if (b->s[j].hi <= a->s[i].lo)
            j++;
        else
            return false;
    }
    return true;
}

uint64_t ftco_rset_missing(const ftco_rset_t *a, uint32_t n, uint32_t *out,
                           uint64_t max)
{
    uint64_t k = 0;
    uint32_t from = 0;
    for (uint32_t i = 0; i <= a->count; i++) {
        uint32_t to = i < a->count ? a->s[i].lo : n;
        for (uint32_t p = from; p < to; p++, k++)
            if (k < max)
                out[k] = p;
        if (i < a->count)
            from = a->s[i].hi;
    }
    return k;
}

/* In place, from the back: a's room is made for both sets (the only
 * step that can fail, so a is unchanged then), and the spans are merged
 * by decreasing end into its top, where they never overtake a's spans
 * not read yet (w >= i + j throughout); the result is then moved down.
 * An allocation per union was most of a fault-free operation's malloc. */
int ftco_rset_union(ftco_rset_t *a, const ftco_rset_t *b)
{
    if (b->count == 0 || a == b)
        return FTC_OK;
    uint64_t total = (uint64_t)a->count + b->count;
    if (reserve(a, total) != FTC_OK)
        return FTC_ENOMEM;
    uint32_t i = a->count, j = b->count, w = (uint32_t)total;
    while (i > 0 || j > 0) {
        ftco_span_t next;
        if (j == 0 || (i > 0 && a->s[i - 1].hi > b->s[j - 1].hi))
            next = a->s[--i];
        else
            next = b->s[--j];
        /* The span written last ends at or after next does: they merge
         * when they overlap or touch. */
        if (w < total && next.hi >= a->s[w].lo) {
            if (next.lo < a->s[w].lo)
                a->s[w].lo = next.lo;
        } else {
            a->s[--w] = next;
        }
    }
    uint32_t k = (uint32_t)total - w;
    if (w > 0)
        memmove(a->s, a->s + w, sizeof(*a->s) * k);
    a->count = k;
    return FTC_OK;
}

int ftco_rset_add(ftco_rset_t *a, uint32_t lo, uint32_t hi)
{
    ftco_span_t one = {lo, hi};
    ftco_rset_t b = {&one, 1, 1, false};
    return lo < hi ? ftco_rset_union(a, &b) : FTC_OK;
}

int ftco_rset_copy_any(ftco_rset_t *a, const ftco_rset_t *b)
{
    if (a == b)
        return FTC_OK;
    if (reserve(a, b->count) != FTC_OK)
        return FTC_ENOMEM;
    if (b->count > 0)
        memcpy(a->s, b->s, sizeof(*b->s) * b->count);
    a->count = b->count;
    return FTC_OK;
}

void ftco_rset_write_any(const ftco_rset_t *a, uint8_t *out)
{
    memcpy(out, &a->count, sizeof(uint32_t));
    for (uint32_t i = 0; i < a->count; i++) {
        memcpy(out + 4 + 8 * (size_t)i, &a->s[i].lo, sizeof(uint32_t));
        memcpy(out + 8 + 8 * (size_t)i, &a->s[i].hi, sizeof(uint32_t));
    }
}

int ftco_rset_read_any(ftco_rset_t *a, const uint8_t *in, size_t len,
                       uint32_t n)
{
    uint32_t count;
    if (len < sizeof(uint32_t))
        return FTC_EINVAL;
    memcpy(&count, in, sizeof(uint32_t));
    if (count > n || len != 4 + 8 * (size_t)count)
        return FTC_EINVAL;
    if (reserve(a, count) != FTC_OK)
        return FTC_ENOMEM;
    uint32_t prev_hi = 0;
    for (uint32_t i = 0; i < count; i++) {
        ftco_span_t s;
        memcpy(&s.lo, in + 4 + 8 * (size_t)i, sizeof(uint32_t));
        memcpy(&s.hi, in + 8 + 8 * (size_t)i, sizeof(uint32_t));
        if (s.lo >= s.hi || s.hi > n || (i > 0 && s.lo <= prev_hi)) {
            a->count = 0;
            return FTC_EINVAL;
        }
        prev_hi = s.hi;
        a->s[i] = s;
    }
    a->count = count;
    return FTC_OK;
}
