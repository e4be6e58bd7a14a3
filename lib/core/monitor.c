/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failure monitor: on-demand keepalive. A peer is watched only while
 * some operation waits on it. A watched peer that stays silent for
 * suspect_timeout is probed; a probe unanswered for probe_timeout makes the
 * peer failed, for good. Any message from the peer counts as an answer.
 * The backend's own reports (ftc_transport_peer_failed) short-cut this.
 * Only silence this process observed counts: a probe that expired while we
 * were not running (our timer fired late) is sent again, and the time this
 * process spends in its own long work (reducing, copying or queueing a
 * large value, inside one call into the core) is not counted against any
 * peer: while it works it reads nothing, so an answer waiting unread in
 * its transport is no silence of the peer's. This is a process-local
 * fact (how long the call took), not a guess about the machine's speed.
 *
 * Probes name the operation that waits, so the answer can carry where the
 * peer is in it (the operation's progress word, which its family defines:
 * the corrected allreduce's round, so that a peer alive but stuck in an
 * older round learns that it should move on).
 */
#include <stdlib.h>

#include "core/monitor.h"
#include "core/send.h"

static ftc_watch_t *watch_find(ftc_context_t *ctx, uint32_t peer)
{
    for (uint32_t i = 0; i < ctx->nwatches; i++)
        if (ctx->watches[i].peer == peer)
            return &ctx->watches[i];
    return NULL;
}

static void watch_remove(ftc_context_t *ctx, ftc_watch_t *w)
{
    uint32_t peer = w->peer;
    *w = ctx->watches[--ctx->nwatches];
    if (ctx->ops.unwatch != NULL)
        ctx->ops.unwatch(ctx->tp, peer);
}

void ftc_monitor_acquire(ftc_context_t *ctx, uint32_t peer, const ftc_cop_t *op)
{
    if (ctx->excluded || ftc_ctx_is_failed(ctx, peer))
        return;
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w != NULL) {
        w->refs++;
        /* Name the oldest waiter of the group: a probe asks about it and
         * every later operation (handle_control). */
        if (w->group_id == op->group->id && w->epoch == op->group->epoch
            && op->seq < w->seq)
            w->seq = op->seq;
        return;
    }
    if (ctx->nwatches == ctx->capwatches) {
        uint32_t cap = ctx->capwatches ? ctx->capwatches * 2 : 8;
        ftc_watch_t *a = realloc(ctx->watches, sizeof(*a) * cap);
        if (a == NULL)
            return; /* degrade: the backend's monitor may still report */
        ctx->watches = a;
        ctx->capwatches = cap;
    }
    w = &ctx->watches[ctx->nwatches++];
    w->peer = peer;
    w->refs = 1;
    w->probing = false;
    w->deadline = ctx->ops.now(ctx->tp) + ctx->cfg.suspect_timeout_ns;
    w->group_id = op->group->id;
    w->epoch = op->group->epoch;
    w->seq = op->seq;
    if (ctx->ops.watch != NULL)
        ctx->ops.watch(ctx->tp, peer);
}

void ftc_monitor_release(ftc_context_t *ctx, uint32_t peer)
{
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w == NULL)
        return;
    if (--w->refs == 0)
        watch_remove(ctx, w);
}

void ftc_monitor_forget(ftc_context_t *ctx, uint32_t peer)
{
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w != NULL)
        watch_remove(ctx, w);
}

void ftc_monitor_heard(ftc_context_t *ctx, uint32_t peer)
{
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w == NULL)
        return;
    w->probing = false;
    w->deadline = ctx->ops.now(ctx->tp) + ctx->cfg.suspect_timeout_ns;
}

void ftc_monitor_expire(ftc_context_t *ctx, uint64_t now)
{
    for (uint32_t i = 0; i < ctx->nwatches;) {
        ftc_watch_t *w = &ctx->watches[i];
        if (w->deadline > now) {
            i++;
            continue;
        }
        if (w->probing && now - w->deadline > ctx->cfg.probe_timeout_ns / 2) {
            /* We wake up long after the probe expired: we were stalled
             * (SIGSTOP, descheduled), so the silence was not observed. A
             * stalled process must not blame its peers (it would ignore
             * their verdict on itself afterwards); probe again. */
            w->deadline = now + ctx->cfg.probe_timeout_ns;
            ftc_watch_t again = *w;
            (void)ftc_ctx_send_control(ctx, again.peer, FTC_MSG_PROBE, &again, 0);
            i++;
            continue;
        }
        if (w->probing) {
            /* Suspicion is final: if the peer is only slow, it must learn
             * that it was excluded, so the fail-stop model stays true.
             * declare_failed removes the watch: index i then holds the
             * next one. */
            uint32_t peer = w->peer;
            (void)ftc_ctx_send_control_ex(ctx, peer, FTC_MSG_EXCLUDED, NULL,
                                          0, 0, FTC_EXCLUDED_PROBE_EXPIRED);
            ftc_ctx_declare_observed_failed(ctx, peer);
            continue;
        }
        w->probing = true;
        w->deadline = now + ctx->cfg.probe_timeout_ns;
        ftc_watch_t about = *w;
        uint32_t word = 0;
        ftc_group_t *g;
        for (g = ctx->groups; g != NULL; g = g->next)
            if (g->id == about.group_id && g->epoch == about.epoch)
                break;
        /* Name the oldest operation of the group still waiting for its
         * result: the one that first asked may have delivered since, and
         * the peer answers a probe for the named operation and every
         * later one (core/dispatch.c, handle_control). */
        const ftc_cop_t *named = NULL;
        if (g != NULL)
            for (ftc_cop_t *op = g->ops; op != NULL; op = op->next)
                if (!op->delivered && !op->finished
                    && (named == NULL || op->seq < named->seq))
                    named = op;
        if (named != NULL) {
            about.seq = named->seq;
            if (named->vt->progress_word != NULL)
                word = named->vt->progress_word(named);
        }
        (void)ftc_ctx_send_probe(ctx, about.peer, &about, word, named);
        i++;
    }
}

uint64_t ftc_monitor_away_begin(ftc_context_t *ctx)
{
    if (ctx->away_depth++ > 0)
        return 0;
    return ctx->ops.now(ctx->tp);
}

void ftc_monitor_away_end(ftc_context_t *ctx, uint64_t since)
{
    if (--ctx->away_depth > 0 || ctx->nwatches == 0)
        return;
    uint64_t now = ctx->ops.now(ctx->tp);
    if (now <= since)
        return;
    ctx->away_ns += now - since;
    for (uint32_t i = 0; i < ctx->nwatches; i++) {
        ftc_watch_t *w = &ctx->watches[i];
        /* The watch counts silence from ref (the last word heard, or the
         * probe sent) on; the part of it spent in this call is ours. */
        uint64_t span = w->probing ? ctx->cfg.probe_timeout_ns
                                   : ctx->cfg.suspect_timeout_ns;
        uint64_t ref = w->deadline > span ? w->deadline - span : 0;
        uint64_t from = ref > since ? ref : since;
        if (now <= from)
            continue;
        uint64_t away = now - from;
        w->deadline = w->deadline > UINT64_MAX - away ? UINT64_MAX
                                                      : w->deadline + away;
    }
}

uint64_t ftc_monitor_next_deadline(const ftc_context_t *ctx)
{
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < ctx->nwatches; i++)
        if (ctx->watches[i].deadline < d)
            d = ctx->watches[i].deadline;
    return d;
}
