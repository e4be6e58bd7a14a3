/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exactly-once aggregation by contributor sets (partials.h says why).
 */
#include <stdlib.h>
#include <string.h>

#include "algo/ftco/partials.h"
#include "core/copy.h"

/* Spans lent to each set and to the cover: a fault-free set is one
 * span, a failure under it splits it once more. */
enum { LENT_SPANS = 2 };

static size_t vals_room(size_t nbytes, uint32_t cap)
{
    return ftc_mem_round((size_t)cap * (nbytes > 0 ? nbytes : 1));
}

size_t ftco_partials_room(size_t nbytes, uint32_t cap)
{
    cap = cap > 0 ? cap : 1;
    return vals_room(nbytes, cap) + sizeof(ftco_rset_t) * cap
           + sizeof(ftco_span_t) * LENT_SPANS * ((size_t)cap + 1);
}

int ftco_partials_init(ftco_partials_t *p, size_t nbytes, uint32_t cap,
                       void *room)
{
    memset(p, 0, sizeof(*p));
    p->nbytes = nbytes;
    p->cap = cap > 0 ? cap : 1;
    p->one_span = true;
    if (room != NULL) {
        /* The values first (room is aligned for any type), then the
         * sets, then their spans and the cover's. */
        p->vals = room;
        p->sets = (ftco_rset_t *)(p->vals + vals_room(nbytes, p->cap));
        ftco_span_t *spans = (ftco_span_t *)(p->sets + p->cap);
        /* (What ftco_rset_lend does, without a call per set: this runs
         * at every operation's creation.) */
        for (uint32_t i = 0; i < p->cap; i++)
            p->sets[i] = (ftco_rset_t){spans + (size_t)i * LENT_SPANS, 0,
                                       LENT_SPANS, false};
        ftco_rset_lend(&p->cover, spans + (size_t)p->cap * LENT_SPANS,
                       LENT_SPANS);
        return FTC_OK;
    }
    p->sets = calloc(p->cap, sizeof(*p->sets));
    p->vals = malloc((size_t)p->cap * (nbytes > 0 ? nbytes : 1));
    p->sets_owned = p->vals_owned = true;
    if (p->sets == NULL || p->vals == NULL) {
        ftco_partials_free(p);
        return FTC_ENOMEM;
    }
    return FTC_OK;
}

void ftco_partials_free_heap(ftco_partials_t *p)
{
    /* Only the sets that moved to the heap hold anything to free (lent
     * ones are the room's): no call per set at every teardown. */
    if (p->sets != NULL && p->heap_sets)
        for (uint32_t i = 0; i < p->cap; i++)
            if (p->sets[i].owned)
                ftco_rset_free(&p->sets[i]);
    if (p->sets_owned)
        free(p->sets);
    if (p->vals_owned)
        free(p->vals);
    ftco_rset_free(&p->cover);
    p->sets = NULL;
    p->vals = NULL;
    p->sets_owned = p->vals_owned = false;
    p->count = p->cap = 0;
}

/* Twice the room; lent arrays move to the heap, the room left. */
static void *grown(void *old, bool *owned, size_t used, size_t size)
{
    void *now;
    if (*owned) {
        now = realloc(old, size);
    } else {
        now = malloc(size);
        if (now != NULL && used > 0)
            memcpy(now, old, used);
    }
    if (now != NULL)
        *owned = true;
    return now;
}

static int grow(ftco_partials_t *p)
{
    uint32_t cap = p->cap * 2;
    size_t vb = p->nbytes > 0 ? p->nbytes : 1;
    if (cap < p->cap)
        return FTC_ENOMEM;
    ftco_rset_t *sets = grown(p->sets, &p->sets_owned,
                              sizeof(*sets) * p->cap, sizeof(*sets) * cap);
    if (sets == NULL)
        return FTC_ENOMEM;
    memset(sets + p->cap, 0, sizeof(*sets) * (cap - p->cap));
    p->sets = sets;
    uint8_t *vals = grown(p->vals, &p->vals_owned, (size_t)p->cap * vb,
                          (size_t)cap * vb);
    if (vals == NULL)
        return FTC_ENOMEM; /* (sets grew: harmless, cap stays) */
    p->vals = vals;
    p->cap = cap;
    return FTC_OK;
}

/* Whether the one-span value [lo, hi) overlaps none of the held sets,
 * all of one span (the fast case). */
static bool disjoint_from_held(const ftco_partials_t *p, ftco_span_t sp)
{
    for (uint32_t i = 0; i < p->count; i++) {
        ftco_span_t h = p->sets[i].s[0];
        if (h.lo < sp.hi && sp.lo < h.hi)
            return false;
    }
    return true;
}

const ftco_rset_t *ftco_partials_cover(ftco_partials_t *p)
{
    if (!p->cover_stale)
        return &p->cover;
    /* The held spans are disjoint (the fast case added each so, and the
     * general merge keeps held sets disjoint): when their lengths add up
     * to their extent they tile it, one span, the fault-free case (a
     * process's own position and its children's subtrees, complete). */
    p->cover.count = 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    uint64_t len = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        ftco_span_t h = p->sets[i].s[0];
        lo = h.lo < lo ? h.lo : lo;
        hi = h.hi > hi ? h.hi : hi;
        len += h.hi - h.lo;
    }
    if (p->count > 0 && len == (uint64_t)hi - lo && p->cover.cap >= 1) {
        p->cover.s[0] = (ftco_span_t){lo, hi};
        p->cover.count = 1;
    } else if (p->count > 0 && len == (uint64_t)hi - lo) {
        if (ftco_rset_add(&p->cover, lo, hi) != FTC_OK)
            return NULL;
    } else {
        for (uint32_t i = 0; i < p->count; i++)
            if (ftco_rset_union(&p->cover, &p->sets[i]) != FTC_OK)
                return NULL;
    }
    p->cover_stale = false;
    return &p->cover;
}

bool ftco_partials_has(const ftco_partials_t *p, uint32_t pos)
{
    if (!p->cover_stale)
        return ftco_rset_has(&p->cover, pos);
    for (uint32_t i = 0; i < p->count; i++)
        if (p->sets[i].s[0].lo <= pos && pos < p->sets[i].s[0].hi)
            return true;
    return false;
}

int ftco_partials_cover_add(ftco_partials_t *p, uint32_t lo, uint32_t hi)
{
    if (ftco_partials_cover(p) == NULL)
        return FTC_ENOMEM;
    p->cover_extra = true;
    return ftco_rset_add(&p->cover, lo, hi);
}

int ftco_partials_merge(ftco_partials_t *p, const ftco_rset_t *set,
                        const void *val)
{
    size_t vb = p->nbytes > 0 ? p->nbytes : 1;
    if (set->count == 1 && p->one_span && !p->cover_extra
        && p->count < p->cap && p->sets[p->count].cap >= 1
        && disjoint_from_held(p, set->s[0])) {
        /* The fast case. The cover being the union of the held sets, a
         * value disjoint from each of them is not inside the cover, is
         * in no partial overlap and contains none: the general path
         * below would add it and drop nothing, as here. (A set with no
         * room, malloc'd partials or one emptied by a drop, takes the
         * general path.) */
        p->sets[p->count].s[0] = set->s[0];
        p->sets[p->count].count = 1;
        if (p->nbytes > 0)
            ftc_copy_bytes(p->vals + p->count * vb, val, p->nbytes);
        p->count++;
        p->cover_stale = true;
        return 1;
    }
    if (ftco_partials_cover(p) == NULL)
        return FTC_ENOMEM;
    /* (From here a set may move to the heap, and one of several spans
     * ends the fast case: the free walks, disjoint_from_held reads one
     * span a set.) */
    p->heap_sets = true;
    if (set->count != 1)
        p->one_span = false;
    if (ftco_rset_subset(set, &p->cover))
        return 0;
    for (uint32_t i = 0; i < p->count; i++) {
        const ftco_rset_t *h = &p->sets[i];
        if (!ftco_rset_disjoint(h, set) && !ftco_rset_subset(h, set)) {
            p->conflicts++;
            return 0;
        }
    }
    if (p->count == p->cap && grow(p) != FTC_OK)
        return FTC_ENOMEM;
    /* The new set and the cover first, so that running out of memory
     * leaves the partials as they were. */
    if (ftco_rset_copy(&p->sets[p->count], set) != FTC_OK)
        return FTC_ENOMEM;
    if (ftco_rset_union(&p->cover, set) != FTC_OK)
        return FTC_ENOMEM; /* (the cover unchanged: rset.h) */
    if (p->nbytes > 0)
        ftc_copy_bytes(p->vals + p->count * vb, val, p->nbytes);
    p->count++;
    /* Drop the held partials the new value contains (the new one, last,
     * contains itself and stays). */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        if (i + 1 < p->count && ftco_rset_subset(&p->sets[i], set)) {
            ftco_rset_free(&p->sets[i]);
            continue;
        }
        if (kept != i) {
            p->sets[kept] = p->sets[i];
            memset(&p->sets[i], 0, sizeof(p->sets[i]));
            memmove(p->vals + kept * vb, p->vals + i * vb, vb);
        }
        kept++;
    }
    p->count = kept;
    return 1;
}

void ftco_partials_fold(const ftco_partials_t *p, const ftc_cop_t *op,
                        void *out)
{
    if (p->nbytes == 0 || p->count == 0)
        return;
    /* (Inline copies and the operation's kernel, chosen with its
     * signature: a libc call per 8-byte value and the generic reduction's
     * dispatch per partial were ~60 instructions a fold.) */
    ftc_copy_bytes(out, p->vals, p->nbytes);
    for (uint32_t i = 1; i < p->count; i++)
        ftc_cop_reduce(op, out, p->vals + i * p->nbytes);
}
