/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timerfd a backend puts in the epoll set its embedder polls, so that
 * a sleeping embedder wakes for the core's deadline and for pending
 * failure reports. Deadlines are absolute CLOCK_MONOTONIC nanoseconds
 * (clock.h); when to move the alarm is each backend's policy, setting it
 * is here.
 */
#ifndef FTC_BK_TIMERFD_H
#define FTC_BK_TIMERFD_H

#include <stdint.h>

#define FTC_BK_NEVER UINT64_MAX

/* A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC, or -1. */
int ftc_bk_timerfd_open(void);

/* Fire at deadline_ns (0 or any past time: at once), or never for
 * FTC_BK_NEVER. */
void ftc_bk_timerfd_set(int tfd, uint64_t deadline_ns);

/* Read the expirations so the descriptor stops being readable: 1 if it
 * had fired, 0 if not. */
int ftc_bk_timerfd_clear(int tfd);

#endif
