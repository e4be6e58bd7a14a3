/* SPDX-License-Identifier: BSD-3-Clause */
#include "calendar.h"

#include <stdlib.h>
#include <string.h>

#define CAL_MIN_BUCKETS 256u
#define CAL_MAX_BUCKETS (1u << 20)

/* One summary bit per word of the bucket bitmap (nb / 64 words, a power
 * of two: 4 to 16,384). */
static uint32_t summary_words(uint32_t nb)
{
    uint32_t nwords = nb / 64;
    return nwords < 64 ? 1 : nwords / 64;
}

static unsigned ctz64(uint64_t x)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

int ftc_cal_init(ftc_calendar_t *c, uint64_t window)
{
    memset(c, 0, sizeof(*c));
    uint32_t nb = CAL_MIN_BUCKETS;
    while (nb < CAL_MAX_BUCKETS && (uint64_t)nb <= window)
        nb <<= 1;
    c->nb = nb;
    c->mask = nb - 1;
    /* A bucket is written when it turns non-empty and read only while
     * its bit is set, so the ring is not initialised here: a test that
     * builds a world per schedule pays neither the stores nor the page
     * faults of the whole ring (16,384 buckets and more), only of the
     * buckets its events touch. */
    c->ring = malloc(sizeof(*c->ring) * nb);
    c->bits = calloc(nb / 64, sizeof(uint64_t));
    c->summary = calloc(summary_words(nb), sizeof(uint64_t));
    if (c->ring == NULL || c->bits == NULL || c->summary == NULL) {
        ftc_cal_fini(c);
        return -1;
    }
    c->free_head = FTC_CAL_NONE;
    return 0;
}

void ftc_cal_fini(ftc_calendar_t *c)
{
    free(c->pool);
    free(c->ring);
    free(c->bits);
    free(c->summary);
    free(c->far);
    memset(c, 0, sizeof(*c));
}

uint32_t ftc_cal_alloc(ftc_calendar_t *c)
{
    uint32_t i;
    if (c->free_head != FTC_CAL_NONE) {
        i = c->free_head;
        c->free_head = c->pool[i].next;
    } else {
        /* Slots never used are handed out in increasing order after the
         * released ones (reproducible reuse) and are not touched before:
         * a pool grown to twice what a run needs costs only what it uses
         * in resident memory. */
        if (c->used == c->cap) {
            uint32_t cap = c->cap ? c->cap * 2 : 1024;
            if (cap <= c->cap || cap >= FTC_CAL_NONE)
                return FTC_CAL_NONE;
            ftc_cal_event_t *p = realloc(c->pool, sizeof(*p) * cap);
            if (p == NULL)
                return FTC_CAL_NONE;
            c->pool = p;
            c->cap = cap;
        }
        i = c->used++;
    }
    c->pool[i].next = FTC_CAL_NONE;
    c->pool[i].cls = 0;
    if (++c->live > c->max_live)
        c->max_live = c->live;
    return i;
}

void ftc_cal_release(ftc_calendar_t *c, uint32_t idx)
{
    c->pool[idx].next = c->free_head;
    c->free_head = idx;
    c->live--;
}

static void ring_append(ftc_calendar_t *c, uint32_t idx)
{
    uint32_t b = (uint32_t)(c->pool[idx].time & c->mask);
    unsigned l = c->pool[idx].cls != 0;
    ftc_cal_bucket_t *k = &c->ring[b];
    uint64_t bit = 1ull << (b & 63);
    c->pool[idx].next = FTC_CAL_NONE;
    if (!(c->bits[b >> 6] & bit)) {
        /* Turning non-empty: both classes' lists start empty. */
        k->head[0] = k->head[1] = k->tail[0] = k->tail[1] = FTC_CAL_NONE;
        c->bits[b >> 6] |= bit;
        c->summary[b >> 12] |= 1ull << ((b >> 6) & 63);
    }
    if (k->tail[l] == FTC_CAL_NONE)
        k->head[l] = idx;
    else
        c->pool[k->tail[l]].next = idx;
    k->tail[l] = idx;
}

static int far_before(const ftc_cal_far_t *a, const ftc_cal_far_t *b)
{
    return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static int far_push(ftc_calendar_t *c, uint32_t idx)
{
    if (c->far_len == c->far_cap) {
        size_t cap = c->far_cap ? c->far_cap * 2 : 256;
        ftc_cal_far_t *p = realloc(c->far, sizeof(*p) * cap);
        if (p == NULL)
            return -1;
        c->far = p;
        c->far_cap = cap;
    }
    ftc_cal_far_t e = {c->pool[idx].time, c->far_seq++, idx};
    size_t i = c->far_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!far_before(&e, &c->far[parent]))
            break;
        c->far[i] = c->far[parent];
        i = parent;
    }
    c->far[i] = e;
    return 0;
}

static uint32_t far_pop(ftc_calendar_t *c)
{
    uint32_t out = c->far[0].idx;
    ftc_cal_far_t last = c->far[--c->far_len];
    size_t i = 0, n = c->far_len;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && far_before(&c->far[child + 1], &c->far[child]))
            child++;
        if (!far_before(&c->far[child], &last))
            break;
        c->far[i] = c->far[child];
        i = child;
    }
    if (n > 0)
        c->far[i] = last;
    return out;
}

/* Far events whose time entered the window go to the ring, in (time,
 * push order): before anything pushed straight into the ring at that
 * time, which can only have happened later. */
static void migrate(ftc_calendar_t *c)
{
    while (c->far_len > 0 && c->far[0].time - c->now < c->nb)
        ring_append(c, far_pop(c));
}

void ftc_cal_push(ftc_calendar_t *c, uint32_t idx)
{
    uint64_t t = c->pool[idx].time;
    if (t < c->now)
        t = c->pool[idx].time = c->now;
    if (t - c->now < c->nb) {
        ring_append(c, idx);
        return;
    }
    if (far_push(c, idx) != 0)
        abort(); /* the backend aborts on out of memory anyway */
}

uint32_t ftc_cal_pop_now(ftc_calendar_t *c)
{
    uint32_t b = (uint32_t)(c->now & c->mask);
    if (!(c->bits[b >> 6] & (1ull << (b & 63))))
        return FTC_CAL_NONE; /* its lists may be stale or unset */
    ftc_cal_bucket_t *k = &c->ring[b];
    unsigned l = 0;
    uint32_t idx = k->head[0];
    if (idx == FTC_CAL_NONE) {
        idx = k->head[l = 1];
        if (idx == FTC_CAL_NONE)
            return FTC_CAL_NONE;
    }
    k->head[l] = c->pool[idx].next;
    if (k->head[l] == FTC_CAL_NONE) {
        k->tail[l] = FTC_CAL_NONE;
        if (k->head[0] == FTC_CAL_NONE && k->head[1] == FTC_CAL_NONE) {
            c->bits[b >> 6] &= ~(1ull << (b & 63));
            if (c->bits[b >> 6] == 0)
                c->summary[b >> 12] &= ~(1ull << ((b >> 6) & 63));
        }
    }
    return idx;
}

/* First non-empty bucket at cyclic position >= s, or FTC_CAL_NONE. The
 * summary finds the next non-empty word: with only far timers queued the
 * whole bitmap is empty, and a scan of it word by word was one of the
 * property checkers' top costs (13 % of one's time). */
static uint32_t find_set(const ftc_calendar_t *c, uint32_t s)
{
    uint32_t nwords = c->nb / 64;
    uint32_t w = s >> 6;
    uint64_t word = c->bits[w] & (~0ull << (s & 63));
    if (word != 0)
        return (w << 6) + ctz64(word);
    /* Words after w, cyclically, w itself last (its bits below s). */
    uint32_t nsum = summary_words(c->nb);
    uint32_t v = (w + 1) & (nwords - 1);
    uint32_t sw = v >> 6;
    uint64_t m = c->summary[sw] & (~0ull << (v & 63));
    for (uint32_t i = 0; i <= nsum; i++) {
        if (m != 0) {
            uint32_t x = (sw << 6) + ctz64(m);
            return (x << 6) + ctz64(c->bits[x]);
        }
        sw = (sw + 1) & (nsum - 1);
        m = c->summary[sw];
    }
    return FTC_CAL_NONE;
}

uint64_t ftc_cal_next_time(const ftc_calendar_t *c)
{
    uint32_t b = find_set(c, (uint32_t)(c->now & c->mask));
    if (b != FTC_CAL_NONE)
        return c->now + ((b - c->now) & c->mask);
    return c->far_len > 0 ? c->far[0].time : UINT64_MAX;
}

int ftc_cal_advance(ftc_calendar_t *c, uint64_t limit)
{
    uint64_t t = ftc_cal_next_time(c);
    if (t == UINT64_MAX || t > limit)
        return 0;
    c->now = t;
    migrate(c);
    return 1;
}

void ftc_cal_set_now(ftc_calendar_t *c, uint64_t t)
{
    if (t <= c->now)
        return;
    c->now = t;
    migrate(c);
}

void ftc_cal_rewind(ftc_calendar_t *c, uint64_t t)
{
    /* Earlier, only when no bucket could hold an event out of window. */
    if (ftc_cal_empty(c))
        c->now = t;
}

size_t ftc_cal_memory(const ftc_calendar_t *c)
{
    return (size_t)c->cap * sizeof(ftc_cal_event_t)
           + (size_t)c->nb * sizeof(ftc_cal_bucket_t) + c->nb / 8
           + summary_words(c->nb) * sizeof(uint64_t)
           + c->far_cap * sizeof(ftc_cal_far_t);
}
