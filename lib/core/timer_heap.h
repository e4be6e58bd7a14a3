/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A min-heap of deadlines whose nodes live inside the things they time
 * (a pairing heap: Fredman, Sedgewick, Sleator and Tarjan, 1986). The
 * context keeps its operations' timers in one, so that finding the
 * earliest costs one load however many operations are live or linger
 * (a group keeps 64 delivered allreduces), where a walk of them all cost
 * ~2,400 instructions per operation with ftco's timeouts on.
 *
 * Intrusive, so arming a timer never allocates and cannot fail: insert
 * is O(1), removing any node (the earliest, or one cancelled) O(log n)
 * amortized. Nodes of equal deadline come out in no promised order.
 */
#ifndef FTC_CORE_TIMER_HEAP_H
#define FTC_CORE_TIMER_HEAP_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef struct ftc_timer_node {
    uint64_t at;                    /* the deadline: the heap's key */
    struct ftc_timer_node *child;   /* the leftmost child */
    struct ftc_timer_node *next;    /* the sibling to the right */
    /* The sibling to the left, or the parent for a leftmost child;
     * NULL for the root. */
    struct ftc_timer_node *prev;
} ftc_timer_node_t;

typedef struct ftc_timer_heap {
    ftc_timer_node_t *root;         /* the earliest deadline; NULL: empty */
    uint32_t n;
} ftc_timer_heap_t;

/* Add x (not in any heap) with deadline x->at. */
void ftc_timer_heap_insert(ftc_timer_heap_t *h, ftc_timer_node_t *x);
/* Take x (in h) out of h. */
void ftc_timer_heap_remove(ftc_timer_heap_t *h, ftc_timer_node_t *x);

/* The node with the earliest deadline, or NULL. */
static inline ftc_timer_node_t *ftc_timer_heap_min(const ftc_timer_heap_t *h)
{
    return h->root;
}

#pragma GCC visibility pop

#endif
