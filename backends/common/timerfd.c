/* SPDX-License-Identifier: BSD-3-Clause */
#include "timerfd.h"

#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int ftc_bk_timerfd_open(void)
{
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

void ftc_bk_timerfd_set(int tfd, uint64_t deadline_ns)
{
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (deadline_ns != FTC_BK_NEVER) {
        /* An all-zero it_value disarms: a deadline of 0 means "now". */
        uint64_t t = deadline_ns == 0 ? 1 : deadline_ns;
        its.it_value.tv_sec = (time_t)(t / 1000000000u);
        its.it_value.tv_nsec = (long)(t % 1000000000u);
    }
    (void)timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

int ftc_bk_timerfd_clear(int tfd)
{
    uint64_t expirations;
    return read(tfd, &expirations, sizeof(expirations)) > 0;
}
