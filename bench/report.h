/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a checker found: how many properties a run violated, and the
 * first one in words. Shared by the one-operation checker (checker.c)
 * and the stream checker (stream.c).
 */
#ifndef FTC_BENCH_REPORT_H
#define FTC_BENCH_REPORT_H

#include <stddef.h>

typedef struct ftc_report {
    int violations;
    char *msg;      /* the first violation, NUL-terminated; may be NULL */
    size_t len;
} ftc_report_t;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void ftc_report_violation(ftc_report_t *r, const char *fmt, ...);

#endif
