/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock every real-time backend gives the core: CLOCK_MONOTONIC in
 * nanoseconds, the same clock their timerfds are set on, so that a
 * deadline the core computes from `now` is one the timerfd understands.
 *
 * A busy poller asks "is anything due?" on every pass, and almost always
 * the answer is no: the core's timer is a keepalive deadline 100 ms
 * away. CLOCK_MONOTONIC costs 20-60 ns a read on a VM (it reads the TSC
 * and scales it); on a 2-rank shared-memory allreduce of ~1 us that was
 * the top symbol in perf. CLOCK_MONOTONIC_COARSE is the same clock as of
 * the last scheduler tick, read from the vDSO without the TSC (~5 ns),
 * and never ahead of CLOCK_MONOTONIC. So ftc_bk_due() asks the coarse
 * clock first and reads the precise one only when the deadline is within
 * a few ticks: a pass with nothing due reads no precise clock, and a
 * deadline is still met to the precise clock's resolution.
 */
#ifndef FTC_BK_CLOCK_H
#define FTC_BK_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

uint64_t ftc_bk_now_ns(void);

/* CLOCK_MONOTONIC_COARSE in nanoseconds: at most a tick (1-10 ms) behind
 * ftc_bk_now_ns(), never ahead of it. */
uint64_t ftc_bk_now_coarse_ns(void);

/* Has CLOCK_MONOTONIC reached deadline_ns? UINT64_MAX is never due. Reads
 * the precise clock only when the coarse one is within FTC_BK_COARSE_SLACK
 * ticks of the deadline. */
bool ftc_bk_due(uint64_t deadline_ns);

/* The transport ops' `now` (the backend argument is not needed). */
uint64_t ftc_bk_now_op(void *tp);

#endif
