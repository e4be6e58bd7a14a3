/* SPDX-License-Identifier: BSD-3-Clause */
#include "clock.h"

#include <stdatomic.h>
#include <time.h>

/* How far the coarse clock may lag, in ticks: one by definition, a second
 * for a tick that a busy VM delivered late. A lag beyond it only makes a
 * deadline fire that much late. */
#define FTC_BK_COARSE_SLACK 2u

static uint64_t ts_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

uint64_t ftc_bk_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts_ns(&ts);
}

uint64_t ftc_bk_now_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return ts_ns(&ts);
}

/* The coarse clock's lag bound, asked once (contexts in several threads
 * may race to ask: they store the same value). */
static uint64_t coarse_slack_ns(void)
{
    static atomic_uint_fast64_t slack;
    uint64_t s = atomic_load_explicit(&slack, memory_order_relaxed);
    if (s == 0) {
        struct timespec res;
        /* Without a coarse clock the margin is infinite: every check
         * reads the precise clock, as before. */
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0
            || (res.tv_sec == 0 && res.tv_nsec == 0))
            s = UINT64_MAX;
        else
            s = ts_ns(&res) * FTC_BK_COARSE_SLACK;
        atomic_store_explicit(&slack, s, memory_order_relaxed);
    }
    return s;
}

bool ftc_bk_due(uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX)
        return false;
    uint64_t slack = coarse_slack_ns();
    if (slack != UINT64_MAX) {
        uint64_t coarse = ftc_bk_now_coarse_ns();
        if (deadline_ns <= coarse)
            return true;    /* the precise clock is further still */
        if (deadline_ns - coarse > slack)
            return false;   /* not due even if coarse lags by the slack */
    }
    return ftc_bk_now_ns() >= deadline_ns;
}

uint64_t ftc_bk_now_op(void *tp)
{
    (void)tp;
    return ftc_bk_now_ns();
}
