/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulators' event queue (the loopback's and the LogP backend's): a
 * calendar of integer times. Events due within `nb` units of now sit in
 * a ring of per-time buckets (O(1) push and pop; a bitmap finds the next
 * non-empty bucket, and a summary of the bitmap its next non-empty word);
 * later ones (the core's timeouts, mostly) wait in a binary heap and move
 * into the ring when their time enters the window.
 * A bucket holds two FIFO classes: every event of class 0 due at a time
 * comes out before any of class 1, and within a class events come out in
 * the order they were pushed, heap or not, so a run is reproducible. With
 * class 0 alone (the loopback) that is the order of a binary heap keyed
 * by (time, push counter). Internal to the simulator backends.
 */
#ifndef FTC_SIM_CALENDAR_H
#define FTC_SIM_CALENDAR_H

#include <stddef.h>
#include <stdint.h>

#define FTC_CAL_NONE UINT32_MAX

typedef struct ftc_cal_event {
    uint64_t time;
    uint32_t next;      /* in its bucket, or in the free list */
    uint32_t rank;
    uint32_t peer;
    uint16_t kind;
    uint16_t cls;       /* 0 or 1: at one time, all of class 0 come first */
    union {
        void *ptr;      /* the backend's: a message, a cookie */
        uint64_t gen;
    } u;
} ftc_cal_event_t;

typedef struct ftc_cal_far {
    uint64_t time, seq;
    uint32_t idx;
} ftc_cal_far_t;

/* A bucket: one FIFO list per class. */
typedef struct ftc_cal_bucket {
    uint32_t head[2], tail[2];
} ftc_cal_bucket_t;

typedef struct ftc_calendar {
    ftc_cal_event_t *pool;
    uint32_t cap, free_head;
    uint32_t used;          /* slots [used, cap) were never handed out */
    uint64_t live, max_live;
    ftc_cal_bucket_t *ring; /* nb buckets; valid while its bit is set */
    uint64_t *bits;         /* bucket b non-empty: bit b */
    uint64_t *summary;      /* bits' word w non-zero: bit w */
    uint32_t nb, mask;      /* nb a power of two */
    uint64_t now;
    ftc_cal_far_t *far;
    size_t far_len, far_cap;
    uint64_t far_seq;
} ftc_calendar_t;

/* window: at least this many units ahead go into the ring. 0 or -1. */
int ftc_cal_init(ftc_calendar_t *c, uint64_t window);
void ftc_cal_fini(ftc_calendar_t *c);

/* A slot to fill (class 0); FTC_CAL_NONE if out of memory. Push it
 * (time >= now). */
uint32_t ftc_cal_alloc(ftc_calendar_t *c);
void ftc_cal_push(ftc_calendar_t *c, uint32_t idx);
void ftc_cal_release(ftc_calendar_t *c, uint32_t idx);

static inline ftc_cal_event_t *ftc_cal_at(ftc_calendar_t *c, uint32_t idx)
{
    return &c->pool[idx];
}

/* The next event due now, removed from the queue (release it after use),
 * or FTC_CAL_NONE. */
uint32_t ftc_cal_pop_now(ftc_calendar_t *c);

/* Move now to the earliest queued time if it is <= limit: 1; else 0 and
 * now stays. Call only when nothing is due now. */
int ftc_cal_advance(ftc_calendar_t *c, uint64_t limit);

/* Set now to t >= now, when no event is due before t. */
void ftc_cal_set_now(ftc_calendar_t *c, uint64_t t);

/* 1 if no event is queued (every popped one released), else 0. */
static inline int ftc_cal_empty(const ftc_calendar_t *c)
{
    return c->live == 0;
}

/* Set now to any t, earlier included, when the queue is empty: a backend
 * whose clock did not follow events it popped and found moot (the
 * loopback's) brings the calendar back to its clock, so that it may push
 * events due before the moot ones. */
void ftc_cal_rewind(ftc_calendar_t *c, uint64_t t);

/* Earliest queued time, UINT64_MAX if none (ring first, then the heap);
 * an event due at UINT64_MAX itself is told apart by ftc_cal_empty. */
uint64_t ftc_cal_next_time(const ftc_calendar_t *c);

size_t ftc_cal_memory(const ftc_calendar_t *c);

#endif
