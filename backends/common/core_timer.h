/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core's one timer as a backend keeps it: timer_arm and timer_cancel
 * only record the deadline (the core is never called back from inside an
 * op, transport.h), and each progress pass fires it once it is due.
 */
#ifndef FTC_BK_CORE_TIMER_H
#define FTC_BK_CORE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "ftcoll/transport.h"

typedef struct ftc_bk_core_timer {
    bool armed;
    uint64_t deadline_ns;       /* CLOCK_MONOTONIC, while armed */
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

/* The deadline, or UINT64_MAX when not armed. */
static inline uint64_t ftc_bk_core_timer_next(const ftc_bk_core_timer_t *t)
{
    return t->armed ? t->deadline_ns : UINT64_MAX;
}

/* Fire the core's timer if it is due by the clock now (asked here, fresh:
 * feeding the core in the same pass took time; ftc_bk_due reads the
 * precise clock only when the deadline is near). 1 if it fired, else 0. */
int ftc_bk_core_timer_fire_due(ftc_bk_core_timer_t *t, ftc_context_t *ctx);

#endif
