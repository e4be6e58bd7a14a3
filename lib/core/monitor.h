/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failure monitor (core/monitor.c): on-demand keepalives for the peers
 * some operation waits on.
 */
#ifndef FTC_CORE_MONITOR_H
#define FTC_CORE_MONITOR_H

#include "core/op.h"

#pragma GCC visibility push(hidden)

/* An operation starts / stops waiting on world rank peer. */
void ftc_monitor_acquire(ftc_context_t *ctx, uint32_t peer, const ftc_cop_t *op);
void ftc_monitor_release(ftc_context_t *ctx, uint32_t peer);
/* Any message from peer shows it is alive. */
void ftc_monitor_heard(ftc_context_t *ctx, uint32_t peer);
/* Probe or declare expired watches. */
void ftc_monitor_expire(ftc_context_t *ctx, uint64_t now);
uint64_t ftc_monitor_next_deadline(const ftc_context_t *ctx);
void ftc_monitor_forget(ftc_context_t *ctx, uint32_t peer);

#pragma GCC visibility pop

#endif
