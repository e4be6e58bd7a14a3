/* SPDX-License-Identifier: BSD-3-Clause */
#include "core_timer.h"

#include "clock.h"

int ftc_bk_core_timer_fire_due(ftc_bk_core_timer_t *t, ftc_context_t *ctx)
{
    if (!t->armed)
        return 0;
    if (t->deadline_ns != 0) {
        if (++t->unclocked < FTC_BK_TIMER_CLOCK_EVERY)
            return 0;
        t->unclocked = 0;
        if (!ftc_bk_due(t->deadline_ns))
            return 0;
    }
    /* Disarmed first: the core usually arms it again from the callback. */
    t->armed = false;
    ftc_transport_timer_fired(ctx);
    return 1;
}
