/* SPDX-License-Identifier: BSD-3-Clause */
#include "event_queue.h"

#include <stdlib.h>

static int ev_before(const ftc_lb_event_t *a, const ftc_lb_event_t *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    return a->seq < b->seq;
}

void ftc_lb_eq_init(ftc_lb_event_queue_t *q)
{
    q->heap = NULL;
    q->len = q->cap = 0;
    q->next_seq = 0;
}

void ftc_lb_eq_fini(ftc_lb_event_queue_t *q)
{
    free(q->heap);
    ftc_lb_eq_init(q);
}

int ftc_lb_eq_push(ftc_lb_event_queue_t *q, ftc_lb_event_t *ev)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 256;
        ftc_lb_event_t *heap = realloc(q->heap, cap * sizeof(*heap));
        if (heap == NULL)
            return -1;
        q->heap = heap;
        q->cap = cap;
    }
    ev->seq = q->next_seq++;

    /* Sift up: move the hole towards the root past every later parent. */
    size_t i = q->len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!ev_before(ev, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = *ev;
    return 0;
}

int ftc_lb_eq_pop(ftc_lb_event_queue_t *q, ftc_lb_event_t *out)
{
    if (q->len == 0)
        return 0;
    *out = q->heap[0];
    ftc_lb_event_t last = q->heap[--q->len];

    /* Sift down the last element from the root. */
    size_t i = 0, n = q->len;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && ev_before(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!ev_before(&q->heap[child], &last))
            break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (n > 0)
        q->heap[i] = last;
    return 1;
}

const ftc_lb_event_t *ftc_lb_eq_peek(const ftc_lb_event_queue_t *q)
{
    return q->len ? &q->heap[0] : NULL;
}
