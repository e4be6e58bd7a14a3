/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core's one timer as a backend keeps it: timer_arm and timer_cancel
 * only record the deadline (the core is never called back from inside an
 * op, transport.h), and each progress pass fires it once it is due.
 *
 * A pass asks the clock only every FTC_BK_TIMER_CLOCK_EVERY passes, or at
 * once after ftc_bk_core_timer_recheck (a backend calls it when it has
 * slept). A busy poller runs millions of idle passes a second, each a few
 * dozen ns, and the deadline is a keepalive 100 ms away: a check every
 * 16 passes fires it at most a few us late, and keeps the clock out of
 * the idle loop. Deadline 0 (the core's "at once", after a delivery) is
 * due without a clock, on the first pass.
 */
#ifndef FTC_BK_CORE_TIMER_H
#define FTC_BK_CORE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "ftcoll/transport.h"

#define FTC_BK_TIMER_CLOCK_EVERY 16u

typedef struct ftc_bk_core_timer {
    bool armed;
    uint64_t deadline_ns;       /* CLOCK_MONOTONIC, while armed */
    uint32_t unclocked;         /* passes since the clock was asked */
} ftc_bk_core_timer_t;

static inline void ftc_bk_core_timer_arm(ftc_bk_core_timer_t *t,
                                         uint64_t deadline_ns)
{
    t->armed = true;
    t->deadline_ns = deadline_ns;
}

static inline void ftc_bk_core_timer_cancel(ftc_bk_core_timer_t *t)
{
    t->armed = false;
}

/* Time has passed (the backend slept): the next pass asks the clock. */
static inline void ftc_bk_core_timer_recheck(ftc_bk_core_timer_t *t)
{
    t->unclocked = FTC_BK_TIMER_CLOCK_EVERY;
}

/* The deadline, or UINT64_MAX when not armed. */
static inline uint64_t ftc_bk_core_timer_next(const ftc_bk_core_timer_t *t)
{
    return t->armed ? t->deadline_ns : UINT64_MAX;
}

/* Fire the core's timer if it is due: deadline 0 at once, others by the
 * clock on every FTC_BK_TIMER_CLOCK_EVERY-th call or after a recheck
 * (asked here, fresh: feeding the core in the same pass took time;
 * ftc_bk_due reads the precise clock only when the deadline is near).
 * 1 if it fired, else 0. */
int ftc_bk_core_timer_fire_due(ftc_bk_core_timer_t *t, ftc_context_t *ctx);

#endif
