/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock every real-time backend gives the core: CLOCK_MONOTONIC in
 * nanoseconds, the same clock their timerfds are set on, so that a
 * deadline the core computes from `now` is one the timerfd understands.
 */
#ifndef FTC_BK_CLOCK_H
#define FTC_BK_CLOCK_H

#include <stdint.h>

uint64_t ftc_bk_now_ns(void);

/* The transport ops' `now` (the backend argument is not needed). */
uint64_t ftc_bk_now_op(void *tp);

#endif
