/* SPDX-License-Identifier: BSD-3-Clause */
#include "log.h"

#include <stdio.h>

void ftc_bk_vlogf(ftc_bk_log_fn log, void *arg, const char *fmt, va_list ap)
{
    if (log == NULL)
        return;     /* silent: do not even format */
    char line[FTC_BK_LOG_LINE];
    vsnprintf(line, sizeof(line), fmt, ap);
    log(arg, line);
}

void ftc_bk_logf(ftc_bk_log_fn log, void *arg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ftc_bk_vlogf(log, arg, fmt, ap);
    va_end(ap);
}
