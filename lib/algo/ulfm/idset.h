/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small sorted set of group ranks. The agreement keeps a few per
 * operation (who sent what in this ballot, the failed set carried along):
 * O(tree degree) with no failure, O(failures) with some, so a sorted
 * array beats a bitmap of the group (a million ranks in the simulator).
 */
#ifndef FTC_ULFM_IDSET_H
#define FTC_ULFM_IDSET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(hidden)

typedef struct ftc_idset {
    uint32_t *v;
    uint32_t n, cap;
} ftc_idset_t;

static inline uint32_t ftc_idset_lower(const ftc_idset_t *s, uint32_t x)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline bool ftc_idset_has(const ftc_idset_t *s, uint32_t x)
{
    uint32_t i = ftc_idset_lower(s, x);
    return i < s->n && s->v[i] == x;
}

/* false only when out of memory. */
static inline bool ftc_idset_add(ftc_idset_t *s, uint32_t x)
{
    uint32_t i = ftc_idset_lower(s, x);
    if (i < s->n && s->v[i] == x)
        return true;
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 8;
        uint32_t *v = realloc(s->v, sizeof(*v) * cap);
        if (v == NULL)
            return false;
        s->v = v;
        s->cap = cap;
    }
    memmove(s->v + i + 1, s->v + i, sizeof(*s->v) * (s->n - i));
    s->v[i] = x;
    s->n++;
    return true;
}

static inline void ftc_idset_remove(ftc_idset_t *s, uint32_t x)
{
    uint32_t i = ftc_idset_lower(s, x);
    if (i < s->n && s->v[i] == x) {
        memmove(s->v + i, s->v + i + 1, sizeof(*s->v) * (s->n - i - 1));
        s->n--;
    }
}

static inline void ftc_idset_clear(ftc_idset_t *s)
{
    s->n = 0;
}

static inline void ftc_idset_free(ftc_idset_t *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* s = other (false when out of memory). */
static inline bool ftc_idset_copy(ftc_idset_t *s, const ftc_idset_t *other)
{
    ftc_idset_clear(s);
    for (uint32_t i = 0; i < other->n; i++)
        if (!ftc_idset_add(s, other->v[i]))
            return false;
    return true;
}

#pragma GCC visibility pop

#endif
