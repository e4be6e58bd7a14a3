/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The skeleton of a backend's progress call. A pass handles what is ready
 * (the transport's events, queued sends, due reports, the core's timer);
 * the call runs passes while they find work, up to a bound so that the
 * embedder gets control back under a steady stream, and only then may
 * it wait (each backend waits its own way: epoll, a CQ, a UCX worker).
 */
#ifndef FTC_BK_PROGRESS_H
#define FTC_BK_PROGRESS_H

/* Run pass(b) until one handles nothing or max_passes ran; returns the
 * events all of them handled. */
int ftc_bk_run_passes(int (*pass)(void *b), void *b, int max_passes);

#endif
