/* SPDX-License-Identifier: BSD-3-Clause */
#include "null_transport.h"

static int null_send(void *tp, uint32_t dest, const void *buf, size_t len,
                     void *cookie)
{
    (void)tp, (void)dest, (void)buf, (void)len, (void)cookie;
    return FTC_SEND_INLINE;
}

static void null_arm(void *tp, uint64_t deadline)
{
    (void)tp, (void)deadline;
}

static void null_cancel(void *tp) { (void)tp; }

static uint64_t null_now(void *tp)
{
    (void)tp;
    return 1;
}

const ftc_transport_ops_t ftc_test_null_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = null_send,
    .timer_arm = null_arm,
    .timer_cancel = null_cancel,
    .now = null_now,
};
