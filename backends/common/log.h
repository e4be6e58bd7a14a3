/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One line of log through the embedder's callback. Every backend's config
 * has a `log(arg, line)` callback (NULL: silent) and formats its lines the
 * same way; a line longer than FTC_BK_LOG_LINE is cut there.
 */
#ifndef FTC_BK_LOG_H
#define FTC_BK_LOG_H

#include <stdarg.h>

#define FTC_BK_LOG_LINE 1024

typedef void (*ftc_bk_log_fn)(void *arg, const char *line);

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void ftc_bk_logf(ftc_bk_log_fn log, void *arg, const char *fmt, ...);

#if defined(__GNUC__)
__attribute__((format(printf, 3, 0)))
#endif
void ftc_bk_vlogf(ftc_bk_log_fn log, void *arg, const char *fmt, va_list ap);

#endif
