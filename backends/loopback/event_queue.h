/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback's event queue: a binary min-heap ordered by (time, sequence
 * number). The sequence number is the order of insertion, so events due at
 * the same virtual time run first-in first-out and a run is reproducible.
 * Internal to the loopback backend.
 */
#ifndef FTC_LB_EVENT_QUEUE_H
#define FTC_LB_EVENT_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef enum ftc_lb_event_kind {
    FTC_LB_EV_ARRIVE,      /* msg reaches rank; peer = source */
    FTC_LB_EV_SEND_DONE,   /* completion of rank's send; cookie */
    FTC_LB_EV_TIMER,       /* rank's wake-up; gen = its arm generation */
    FTC_LB_EV_PEER_FAILED, /* rank learns peer died; gen = the watch's id */
    FTC_LB_EV_CRASH        /* rank crashes (ftc_lb_crash_at) */
} ftc_lb_event_kind_t;

struct ftc_lb_msg;

typedef struct ftc_lb_event {
    uint64_t time;
    uint64_t seq;
    uint32_t kind;         /* ftc_lb_event_kind_t */
    uint32_t rank;         /* whose event it is */
    uint32_t peer;
    union {
        struct ftc_lb_msg *msg;
        void *cookie;
        uint64_t gen;
    } u;
} ftc_lb_event_t;

typedef struct ftc_lb_event_queue {
    ftc_lb_event_t *heap;
    size_t len, cap;
    uint64_t next_seq;
} ftc_lb_event_queue_t;

void ftc_lb_eq_init(ftc_lb_event_queue_t *q);
/* Frees the heap only: the caller owns what events point to. */
void ftc_lb_eq_fini(ftc_lb_event_queue_t *q);

/* Stamps ev->seq and inserts it. Returns 0, or -1 if out of memory. */
int ftc_lb_eq_push(ftc_lb_event_queue_t *q, ftc_lb_event_t *ev);

/* Removes the earliest event into *out. Returns 0 if the queue was empty. */
int ftc_lb_eq_pop(ftc_lb_event_queue_t *q, ftc_lb_event_t *out);

/* The earliest event, left in place; NULL if the queue is empty. */
const ftc_lb_event_t *ftc_lb_eq_peek(const ftc_lb_event_queue_t *q);

#endif
