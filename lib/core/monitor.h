/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failure monitor (core/monitor.c): on-demand keepalives for the peers
 * some operation waits on.
 */
#ifndef FTC_CORE_MONITOR_H
#define FTC_CORE_MONITOR_H

#include "core/op.h"

#pragma GCC visibility push(hidden)

/* A quiet watch that an operation waits on is checked this many times
 * per suspect_timeout_ns: a silent peer is probed suspect_timeout_ns to
 * suspect_timeout_ns * (1 + 1/FTC_WATCH_CHECKS) after the later of its
 * last word and the start of the wait (core/monitor.c, "Lazy silence"). */
#define FTC_WATCH_CHECKS 4u

/*
 * An operation that changes what it waits on holds the monitor across
 * the change: a corrected allreduce moving to a later round, whose old
 * parts release their watches before the new ones take theirs. A watch
 * whose last waiter leaves during the hold stays, and a waiter that
 * takes it again continues its silence and its probe series where they
 * were, instead of starting anew: the operation has waited on the peer
 * all along. Without it, a member pulled into the later round by the
 * first one to time a silent peer out watched that peer again from
 * scratch there, and the operation waited out a second series
 * (docs/decisions.md, "Failure detection"). At the end of the hold a
 * watch nobody took again goes, or is kept, as its release said. Holds
 * nest; keep them short (one event's handling).
 */
void ftc_monitor_hold(ftc_context_t *ctx);
void ftc_monitor_hold_end(ftc_context_t *ctx);

/* An operation starts / stops waiting on world rank peer. */
void ftc_monitor_acquire(ftc_context_t *ctx, uint32_t peer, const ftc_cop_t *op);
void ftc_monitor_release(ftc_context_t *ctx, uint32_t peer);
/* As release, but the last release of a peer that answered everything
 * keeps the watch (and the transport's watch) at no reference, for the
 * group's next operation of a steady stream to take again without
 * watching anew: a kept watch sends no probe, and the transport's report
 * of its peer's death is acted on (declared failed) though nobody
 * waits. It goes when its group's signature changes or the group is
 * destroyed (ftc_monitor_drop_kept), when its peer is declared failed,
 * and when no operation took it again while the peer was silent for
 * suspect_timeout_ns (ftc_monitor_expire: at a check, so between one
 * and two suspect timeouts after its last word). docs/latency.md, "A
 * steady stream's path". */
void ftc_monitor_release_keep(ftc_context_t *ctx, uint32_t peer);
/* As ftc_monitor_acquire and ftc_monitor_release(_keep) of each member of
 * g whose group rank r < 32 has bit r set in mask, in one walk of the
 * watches instead of one walk each: an operation that waits on most of
 * a small group (the butterfly: core/monitor.c's watch_find was three
 * quarters of its core instructions, docs/latency.md, tenth round). */
void ftc_monitor_acquire_members(ftc_context_t *ctx, const ftc_group_t *g,
                                 uint32_t mask, const ftc_cop_t *op);
void ftc_monitor_release_members(ftc_context_t *ctx, const ftc_group_t *g,
                                 uint32_t mask, bool keep);
/* Drop the kept watches (no reference) of group (id, epoch). */
void ftc_monitor_drop_kept(ftc_context_t *ctx, uint32_t group_id,
                           uint32_t epoch);
/* Another member's word that peer failed, which this process has not
 * seen itself (an allreduce round entered past that peer as root): probe
 * peer after suspect_timeout_ns unless it is heard from first, and declare
 * it failed only if that one probe goes unanswered for probe_timeout_ns
 * (core/monitor.c). */
void ftc_monitor_verify(ftc_context_t *ctx, uint32_t peer, const ftc_cop_t *op);
/* Any message from peer shows it is alive. Sets the watch's mark, no
 * clock read unless a probe series ends. */
void ftc_monitor_heard(ftc_context_t *ctx, uint32_t peer);
/* peer answered a probe of ours (a PROBE_ACK, before ftc_monitor_heard):
 * if it answered the one probe outstanding within the first wait, note a
 * prompt round trip (core/cutoff.c, "a third process"). */
void ftc_monitor_probe_answered(ftc_context_t *ctx, uint32_t peer);
/* Probe or declare expired watches. */
void ftc_monitor_expire(ftc_context_t *ctx, uint64_t now);
/* The earliest watch deadline (UINT64_MAX: none). Inline: every settle
 * asks, and a process waits on few peers at a time. */
static inline uint64_t ftc_monitor_next_deadline(const ftc_context_t *ctx)
{
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < ctx->nwatches; i++)
        if (ctx->watches[i].deadline < d)
            d = ctx->watches[i].deadline;
    return d;
}
void ftc_monitor_forget(ftc_context_t *ctx, uint32_t peer);

/* This process is about to do work of its own that may take long (a large
 * value to reduce, copy or queue): while it does, it reads nothing. Pass
 * what away_begin returned to away_end; every watch's deadline then moves
 * on by the time spent, so a peer is never blamed for silence that was
 * ours (monitor.c). Calls nest; only the outermost pair counts. */
uint64_t ftc_monitor_away_begin(ftc_context_t *ctx);
/* Entry points time themselves for values at least this large. */
#define FTC_AWAY_MIN_BYTES ((size_t)64 * 1024)
void ftc_monitor_away_end(ftc_context_t *ctx, uint64_t since);

#pragma GCC visibility pop

#endif
