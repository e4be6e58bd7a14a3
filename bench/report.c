/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>

#include "report.h"

void ftc_report_violation(ftc_report_t *r, const char *fmt, ...)
{
    if (r->violations++ == 0 && r->msg != NULL && r->len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->msg, r->len, fmt, ap);
        va_end(ap);
    }
}
