/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failure monitor: on-demand keepalive. A peer is watched only while
 * some operation waits on it. A watched peer that stays silent for
 * suspect_timeout is probed. A probe unanswered for its wait is given
 * twice as long again, probe_backoff times (one probe: channels are
 * reliable; the waits are the series); when the last wait runs out the
 * peer is failed, for good. Any message from the peer counts as an
 * answer and ends the series: the next silence starts again from
 * suspect_timeout and one probe_timeout. The backend's own
 * reports (ftc_transport_peer_failed) short-cut all of this.
 *
 * Why a back-off and not one fixed wait: suspicion is final, so a peer
 * that was only slow is lost to the group, and on a loaded host how long
 * a live process takes to answer has no fixed bound (it may be
 * descheduled, or busy in one long call of its own on a large value).
 * What a slow peer and a dead one differ in is that the slow one answers
 * eventually. Doubling the wait keeps the first one short (a short
 * hiccup costs one small message, not a long wait), gives a peer that is
 * late (2^(backoff+1) - 1) probe timeouts in all before it is given up,
 * and still bounds how long a dead or stopped peer that no transport
 * reports holds an operation up: suspect_timeout plus that sum, plus this
 * process's own lateness (below). An answer that comes late still
 * counts, as does any other message. The back-off itself needs no
 * estimate of the machine's speed, so the loopback's virtual time tests
 * it exactly (tests/test_detector.c).
 *
 * The series also lasts at least FTC_STALL_FACTOR times the longest
 * stretch without a word observed here lately (the record halves every
 * FTC_STALL_HALF_LIFE probe timeouts): a call of this process's own (a
 * large value to reduce, copy, queue), or a live peer's silence from our
 * first probe to its next message. Both say how long this host, at its
 * present load, keeps a process from reading, and the next silence may
 * be longer (two or three such calls in a row, descheduled between
 * them). Observed facts, not a guess: a host whose calls take seconds
 * gives its peers tens of seconds, an idle one nothing beyond the
 * back-off.
 *
 * Only silence this process observed counts: a probe that expired while we
 * were not running (our timer fired late) is sent again with the same
 * wait, and the time this process spends in its own long work (reducing,
 * copying or queueing a large value, inside one call into the core) is
 * not counted against any peer: while it works it reads nothing, so an
 * answer waiting unread in its transport is no silence of the peer's.
 * This is a process-local fact (how long the call took), not a guess
 * about the machine's speed.
 *
 * Probes name the operation that waits, so the answer can carry where the
 * peer is in it (the operation's progress word, which its family defines:
 * the corrected allreduce's round, so that a peer alive but stuck in an
 * older round learns that it should move on).
 *
 * Lazy silence. A message from a watched peer only sets the watch's
 * heard mark, and an operation that takes a watch sets it too: neither
 * reads the clock, which a steady stream would otherwise do for every
 * message and every operation (docs/latency.md, "Clock"). The clock is
 * read at checks instead: a timer turn (which reads it anyway) checks
 * every watch, and each quiet watch an operation waits on is due for
 * one every FTC_WATCH_CHECKS-th of suspect_timeout (the period P). A
 * check that finds the mark set clears it and counts the silence from
 * then (silent_from): the peer's last word came at or before that
 * moment, so the silence counted is never more than the real one and
 * suspicion never comes earlier than suspect_timeout after the last
 * word. A check that finds the mark clear probes once the silence
 * counted reaches suspect_timeout; the check after a word comes within
 * P, so the probe goes out S to S + P after the later of the last word
 * and the start of the wait (S: suspect_timeout), where it used to go
 * at exactly S, plus this process's own lateness as before
 * (tests/test_lazy_silence.c). The price is up to FTC_WATCH_CHECKS
 * timer turns per suspect timeout while a stream runs with no other
 * turn that reads the clock. A kept watch that nobody waits on has no
 * probe to time and is checked only when its silence would reach S.
 */
#include <stdlib.h>

#include "core/monitor.h"
#include "core/send.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The wait of a series' probe after `backoff` unanswered ones. */
static uint64_t probe_wait(const ftc_context_t *ctx, uint32_t backoff)
{
    uint64_t t = ctx->cfg.probe_timeout_ns;
    return backoff >= 64 || t > (UINT64_MAX >> backoff) ? UINT64_MAX
                                                         : t << backoff;
}

#define FTC_STALL_FACTOR 4u
#define FTC_STALL_HALF_LIFE 64u

/* The longest recent stretch without a word, decayed by age. */
static uint64_t stall_recent(const ftc_context_t *ctx, uint64_t now)
{
    if (ctx->stall_ns == 0 || now <= ctx->stall_at)
        return ctx->stall_ns;
    uint64_t half = ctx->cfg.probe_timeout_ns > UINT64_MAX / FTC_STALL_HALF_LIFE
                        ? UINT64_MAX
                        : ctx->cfg.probe_timeout_ns * FTC_STALL_HALF_LIFE;
    uint64_t halvings = (now - ctx->stall_at) / half;
    return halvings >= 64 ? 0 : ctx->stall_ns >> halvings;
}

/* How long a probe series lasts at least, from this host's record:
 * FTC_STALL_FACTOR times it (0: no record). */
static uint64_t stall_allowance(const ftc_context_t *ctx, uint64_t now)
{
    uint64_t stall = stall_recent(ctx, now);
    return stall > UINT64_MAX / FTC_STALL_FACTOR ? UINT64_MAX
                                                 : stall * FTC_STALL_FACTOR;
}

/* Record a stretch of d ns without reading (ours) or answering (a
 * peer's), ended at now, if it is the longest lately. */
static void stall_note(ftc_context_t *ctx, uint64_t d, uint64_t now)
{
    if (d >= stall_recent(ctx, now)) {
        ctx->stall_ns = d;
        ctx->stall_at = now;
    }
}

/*
 * A lapsed series. A watch in a probe series goes when its last waiter
 * leaves (the series belongs to the waiters), often because what it
 * waited for came another way: the butterfly's watch on a member that
 * sends this process nothing ends when the value arrives, through the
 * late member's partners. The late member's answer then found no watch,
 * and the silence it survived taught this process nothing: the next time
 * it waited on it, as long, it declared a live member failed that its
 * partners had learned to wait for (tests/test_detector.c, "learned").
 * So the series' start is remembered, and the peer's next word, whatever
 * it is, times the silence as an answer to a watched probe does. Its
 * next word: channels keep order, so nothing the peer sent came between,
 * and the silence counted is never more than the real one. Nor more than
 * a watched series could have lived through (the back-off's waits, or
 * FTC_STALL_FACTOR times the record if longer): a peer that stayed
 * silent longer would have been declared failed, not learnt from, and a
 * word that comes much later (a peer stopped for minutes while nobody
 * needed it) must not make this process wait minutes on the next dead
 * one.
 */
static void lapsed_note(ftc_context_t *ctx, uint32_t peer, uint64_t series_at)
{
    if (ctx->lapsed == NULL) {
        ctx->lapsed = malloc(sizeof(*ctx->lapsed) * FTC_LAPSED_MAX);
        if (ctx->lapsed == NULL)
            return; /* no memory: the lesson is lost, as before */
    }
    uint32_t i = 0;
    while (i < ctx->nlapsed && ctx->lapsed[i].peer != peer)
        i++;
    if (i == ctx->nlapsed) {
        if (ctx->nlapsed < FTC_LAPSED_MAX) {
            ctx->nlapsed++;
        } else {
            /* Full: the oldest series gives way. */
            i = 0;
            for (uint32_t j = 1; j < ctx->nlapsed; j++)
                if (ctx->lapsed[j].series_at < ctx->lapsed[i].series_at)
                    i = j;
        }
    } else if (ctx->lapsed[i].series_at <= series_at) {
        return; /* the older series counts the longer silence */
    }
    ctx->lapsed[i].peer = peer;
    ctx->lapsed[i].series_at = series_at;
}

/* peer's lapsed series ends, if it has one: it spoke (spoke, and the
 * silence it kept since the series began goes to the stall record) or
 * it was declared failed. */
__attribute__((cold))
static void lapsed_end(ftc_context_t *ctx, uint32_t peer, bool spoke)
{
    for (uint32_t i = 0; i < ctx->nlapsed; i++) {
        if (ctx->lapsed[i].peer != peer)
            continue;
        uint64_t series_at = ctx->lapsed[i].series_at;
        ctx->lapsed[i] = ctx->lapsed[--ctx->nlapsed];
        if (spoke) {
            uint64_t now = ctx->ops.now(ctx->tp);
            if (now <= series_at)
                return;
            /* What a watched series lives through: its waits, or the
             * record's allowance if longer. */
            uint64_t most = 0;
            for (uint32_t b = 0; b <= ctx->cfg.probe_backoff; b++)
                most = sat_add(most, probe_wait(ctx, b));
            uint64_t allow = stall_allowance(ctx, now);
            if (allow > most)
                most = allow;
            uint64_t d = now - series_at;
            stall_note(ctx, d < most ? d : most, now);
        }
        return;
    }
}

/* How often a quiet watch that an operation waits on is checked. */
static uint64_t check_period(const ftc_context_t *ctx)
{
    uint64_t p = ctx->cfg.suspect_timeout_ns / FTC_WATCH_CHECKS;
    return p > 0 ? p : 1;
}

/* Check a watch that is not probing at now, a clock read after every
 * word its mark records: a set mark means the peer's latest word came
 * at or before now, so the silence is counted from now. The next check
 * is a period on while an operation waits (a kept watch's only when the
 * silence would reach suspect_timeout), and never after that. */
static void watch_check(const ftc_context_t *ctx, ftc_watch_t *w,
                        uint64_t now, uint64_t period)
{
    if (w->heard) {
        w->heard = false;
        w->silent_from = now;
    }
    uint64_t quiet_end = sat_add(w->silent_from, ctx->cfg.suspect_timeout_ns);
    uint64_t next = w->refs > 0 ? sat_add(now, period) : quiet_end;
    w->deadline = next < quiet_end ? next : quiet_end;
}

/* An operation starts to wait on w with no clock read: the mark counts
 * the silence from the first check after now, which comes by the next
 * check of every watch (ftc_monitor_expire), at most a period on. */
static void watch_wait_starts(const ftc_context_t *ctx, ftc_watch_t *w)
{
    w->heard = true;
    if (w->deadline > ctx->watch_next_check)
        w->deadline = ctx->watch_next_check;
}

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

/* Another waiter on an existing watch w. */
static void watch_take(ftc_context_t *ctx, ftc_watch_t *w, const ftc_cop_t *op)
{
    if (w->refs == 0) {
        if (w->held) {
            /* Taken again inside a hold (ftc_monitor_hold): the wait
             * goes on, its silence and series with it. */
            w->held = false;
            w->refs = 1;
            w->group_id = op->group->id;
            w->epoch = op->group->epoch;
            w->seq = op->seq;
            return;
        }
        /* A kept watch (ftc_monitor_release_keep): the transport still
         * watches the peer; the keepalive starts again as for a new
         * watch, from the next check. */
        w->refs = 1;
        w->backoff = 0;
        w->window = 0;
        w->series_at = 0;
        watch_wait_starts(ctx, w);
        w->group_id = op->group->id;
        w->epoch = op->group->epoch;
        w->seq = op->seq;
        return;
    }
    w->refs++;
    /* Name the oldest waiter of the group: a probe asks about it and
     * every later operation (handle_control). */
    if (w->group_id == op->group->id && w->epoch == op->group->epoch
        && op->seq < w->seq)
        w->seq = op->seq;
}

void ftc_monitor_acquire(ftc_context_t *ctx, uint32_t peer, const ftc_cop_t *op)
{
    if (ctx->excluded || ftc_ctx_is_failed(ctx, peer))
        return;
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w != NULL) {
        watch_take(ctx, w, op);
        return;
    }
    if (ctx->nwatches == ctx->capwatches) {
        uint32_t cap = ctx->capwatches ? ctx->capwatches * 2 : 4;
        ftc_watch_t *a = realloc(ctx->watches, sizeof(*a) * cap);
        if (a == NULL)
            return; /* degrade: the backend's monitor may still report */
        ctx->watches = a;
        ctx->capwatches = cap;
    }
    w = &ctx->watches[ctx->nwatches++];
    w->peer = peer;
    w->refs = 1;
    w->verifying = false;
    w->probing = false;
    w->held = false;
    w->held_keep = false;
    w->backoff = 0;
    w->window = 0;
    w->series_at = 0;
    w->probes_out = 0;
    w->probe_at = 0;
    w->silent_from = 0;
    w->deadline = UINT64_MAX;
    /* No check yet in this context: read the clock once, so the first
     * check is a period on. A deadline already past instead (a first
     * version's 1, "check at the next turn that reads the clock") left
     * a due timer behind an embedder's drained progress, whose backend
     * reads the clock only every 16th pass: its armed descriptor woke at
     * once (tests/ucx/test_ucx_unit.c, "fd: quiet while idle"). Later
     * new watches take the next check's time with no clock: the
     * families that do not keep watch anew every operation. A kept
     * watch was new once, so its path needs no such test. */
    if (ctx->watch_next_check == 0)
        ctx->watch_next_check = sat_add(ctx->ops.now(ctx->tp),
                                        check_period(ctx));
    watch_wait_starts(ctx, w);
    w->group_id = op->group->id;
    w->epoch = op->group->epoch;
    w->seq = op->seq;
    if (ctx->ops.watch != NULL)
        ctx->ops.watch(ctx->tp, peer);
}

/* Why verify and not adopt: the claim may come from a process that is
 * cut off (it hears nobody, core/cutoff.c) and timed out healthy peers;
 * adopting it made this process tell those peers again that they were
 * excluded, and they left (tests/test_cutoff.c). A live peer that hears
 * answers one probe within its wait; a dead one does not, and costs a
 * suspect timeout and one probe wait, not the whole series: another
 * member already watched it through one. The verdict is this process's own, so the peer's cutoff
 * rule applies to it as to any expired probe. */
void ftc_monitor_verify(ftc_context_t *ctx, uint32_t peer, const ftc_cop_t *op)
{
    if (ctx->excluded || ftc_ctx_is_failed(ctx, peer))
        return;
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w != NULL && w->verifying)
        return;
    ftc_monitor_acquire(ctx, peer, op);
    w = watch_find(ctx, peer);
    if (w == NULL)
        return; /* no memory: the backend's monitor may still report */
    w->verifying = true;
    if (!w->probing) {
        /* Probe after one suspect timeout, as any watch does: a crash
         * that the transport reports meanwhile costs no probe. The clock
         * is read here anyway (rare): check now, so the silence counts
         * from now at the latest, exactly. */
        watch_check(ctx, w, ctx->ops.now(ctx->tp), check_period(ctx));
    }
}

/* One waiter less on w; whether w went (removed from the array: the
 * last watch now sits where it was). keep: as ftc_monitor_release_keep. */
static bool watch_drop(ftc_context_t *ctx, ftc_watch_t *w, bool keep)
{
    if (--w->refs > 0)
        return false;
    if (ctx->watch_hold > 0) {
        w->held = true;
        w->held_keep = keep;
        return false;
    }
    /* Kept only when the peer answered everything: a watch in a probe
     * series goes as before (its series belongs to the waiters). Else
     * kept at refs 0: no probe (nobody waits); it goes at a check that
     * finds it silent for suspect_timeout_ns, if no operation has asked
     * for it again by then (ftc_monitor_expire). */
    if (keep && !w->probing && !w->verifying)
        return false;
    if (w->probing)
        lapsed_note(ctx, w->peer, w->series_at);
    watch_remove(ctx, w);
    return true;
}

void ftc_monitor_hold(ftc_context_t *ctx)
{
    ctx->watch_hold++;
}

void ftc_monitor_hold_end(ftc_context_t *ctx)
{
    if (--ctx->watch_hold > 0)
        return;
    for (uint32_t i = 0; i < ctx->nwatches;) {
        ftc_watch_t *w = &ctx->watches[i];
        if (!w->held) {
            i++;
            continue;
        }
        /* Nobody took it again: its release's verdict, now. */
        w->held = false;
        w->refs = 1;
        if (!watch_drop(ctx, w, w->held_keep))
            i++;
    }
}

void ftc_monitor_release(ftc_context_t *ctx, uint32_t peer)
{
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w != NULL)
        (void)watch_drop(ctx, w, false);
}

void ftc_monitor_release_keep(ftc_context_t *ctx, uint32_t peer)
{
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w != NULL)
        (void)watch_drop(ctx, w, true);
}

/* The members of g in mask, as their group ranks: bit r of mask, r < 32,
 * or -1. */
static int64_t member_bit(const ftc_group_t *g, uint32_t mask, uint32_t peer)
{
    int64_t r = ftc_group_rank_of(g, peer);
    return r >= 0 && r < 32 && (mask >> r & 1u) ? r : -1;
}

void ftc_monitor_acquire_members(ftc_context_t *ctx, const ftc_group_t *g,
                                 uint32_t mask, const ftc_cop_t *op)
{
    if (ctx->excluded)
        return;
    for (uint32_t i = 0; i < ctx->nwatches && mask != 0; i++) {
        ftc_watch_t *w = &ctx->watches[i];
        int64_t r = member_bit(g, mask, w->peer);
        if (r < 0)
            continue;
        mask &= ~(1u << r);
        if (!ftc_ctx_is_failed(ctx, w->peer))
            watch_take(ctx, w, op);
    }
    /* The members not watched yet: new watches. */
    for (; mask != 0; mask &= mask - 1)
        ftc_monitor_acquire(ctx,
                            ftc_group_world_of(g, (uint32_t)__builtin_ctz(mask)),
                            op);
}

void ftc_monitor_release_members(ftc_context_t *ctx, const ftc_group_t *g,
                                 uint32_t mask, bool keep)
{
    for (uint32_t i = 0; i < ctx->nwatches && mask != 0;) {
        ftc_watch_t *w = &ctx->watches[i];
        int64_t r = member_bit(g, mask, w->peer);
        if (r >= 0) {
            mask &= ~(1u << r);
            if (watch_drop(ctx, w, keep))
                continue; /* index i now holds the next one */
        }
        i++;
    }
}

void ftc_monitor_drop_kept(ftc_context_t *ctx, uint32_t group_id,
                           uint32_t epoch)
{
    for (uint32_t i = 0; i < ctx->nwatches;) {
        ftc_watch_t *w = &ctx->watches[i];
        if (w->refs == 0 && w->group_id == group_id && w->epoch == epoch)
            watch_remove(ctx, w);   /* index i now holds the next one */
        else
            i++;
    }
}

void ftc_monitor_forget(ftc_context_t *ctx, uint32_t peer)
{
    lapsed_end(ctx, peer, false);
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w != NULL)
        watch_remove(ctx, w);
}

void ftc_monitor_heard(ftc_context_t *ctx, uint32_t peer)
{
    if (ctx->nlapsed > 0)
        lapsed_end(ctx, peer, true);
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w == NULL)
        return;
    if (w->probing) {
        /* A live peer was silent this long after our first probe: the
         * host keeps processes from answering that long now. The series
         * ends (rare: the clock is read), and the silence starts again
         * from now, checked as any quiet watch. */
        uint64_t now = ctx->ops.now(ctx->tp);
        if (now > w->series_at)
            stall_note(ctx, now - w->series_at, now);
        w->probing = false;
        w->backoff = 0;
        w->heard = true;
        watch_check(ctx, w, now, check_period(ctx));
    } else {
        /* The common case, every message of a stream: no clock. The next
         * check counts the silence from its own time. */
        w->heard = true;
    }
    if (w->verifying) {
        /* The claim is refuted: drop its reference. */
        w->verifying = false;
        if (--w->refs == 0)
            watch_remove(ctx, w);
    }
}

void ftc_monitor_probe_answered(ftc_context_t *ctx, uint32_t peer)
{
    ftc_watch_t *w = watch_find(ctx, peer);
    if (w == NULL || w->probes_out == 0)
        return;
    /* Channels keep order, so this answers the oldest probe out; only
     * the answer to the last one sent times a round trip. */
    if (--w->probes_out != 0 || !w->probing)
        return;
    uint64_t now = ctx->ops.now(ctx->tp);
    if (now >= w->probe_at && now - w->probe_at <= ctx->cfg.probe_timeout_ns) {
        ctx->round_trip_at = now;
        ctx->round_trip_seen = true;
    }
}

/* Send w's peer a probe that waits window: about the oldest operation
 * of the watch's group still waiting for its result. */
static void probe_send(ftc_context_t *ctx, ftc_watch_t *w, uint64_t now,
                       uint64_t window)
{
    w->probing = true;
    w->window = window;
    w->probes_out++;
    w->probe_at = now;
    w->deadline = sat_add(now, window);
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
}

void ftc_monitor_expire(ftc_context_t *ctx, uint64_t now)
{
    uint64_t period = check_period(ctx);
    ctx->watch_next_check = sat_add(now, period);     /* >= 1: period is */
    for (uint32_t i = 0; i < ctx->nwatches;) {
        ftc_watch_t *w = &ctx->watches[i];
        if (!w->probing && (w->heard || w->deadline <= now)) {
            /* Every quiet watch is checked at every turn that has the
             * clock, not only when due: a stream's turns then keep its
             * watches' checks ahead, at no timer turn of their own. */
            if (w->heard
                || now < sat_add(w->silent_from,
                                 ctx->cfg.suspect_timeout_ns)) {
                watch_check(ctx, w, now, period);
                i++;
                continue;
            }
            /* Silent for suspect_timeout_ns since a check that found
             * the mark set, so since its last word at least. */
        } else if (w->deadline > now) {
            i++;
            continue;
        }
        if (w->refs == 0) {
            /* A kept watch that no operation asked for again within a
             * suspect timeout of the peer's last word: the stream
             * paused; nobody waits, so no probe, and the transport
             * stops watching (index i then holds the next one). */
            watch_remove(ctx, w);
            continue;
        }
        if (w->probing && now - w->deadline > w->window / 2) {
            /* We wake up long after the probe expired: we were stalled
             * (SIGSTOP, descheduled), so the silence was not observed. A
             * stalled process must not blame its peers (it would ignore
             * their verdict on itself afterwards); probe again, with the
             * same wait. */
            probe_send(ctx, w, now, w->window);
            i++;
            continue;
        }
        if (w->probing && w->backoff < ctx->cfg.probe_backoff
            && !w->verifying) {
            /* Unanswered, observed: wait twice as long. Not another
             * probe: channels are reliable, so the one sent is answered
             * if the peer lives, and a stopped peer would find a burst of
             * them queued when it wakes (over UCX shared memory they
             * filled its FIFO, and the exclusion notice behind them was
             * lost when the prober exited). */
            w->backoff++;
            w->window = probe_wait(ctx, w->backoff);
            w->deadline = sat_add(now, w->window);
            i++;
            continue;
        }
        if (w->probing && now - w->series_at < stall_allowance(ctx, now)) {
            /* The series is shorter than this host keeps us from reading
             * lately: wait once more as long. */
            w->deadline = sat_add(now, w->window);
            i++;
            continue;
        }
        if (w->probing) {
            /* The last probe of the series went unanswered. Suspicion is
             * final: if the peer is only slow, it must learn that it was
             * excluded, so the fail-stop model stays true.
             * declare_failed removes the watch: index i then holds the
             * next one. */
            uint32_t peer = w->peer;
            (void)ftc_ctx_send_control_ex(ctx, peer, FTC_MSG_EXCLUDED, NULL,
                                          0, 0, FTC_EXCLUDED_PROBE_EXPIRED);
            ftc_ctx_declare_timed_out(ctx, peer);
            continue;
        }
        w->backoff = 0;
        w->series_at = now;
        probe_send(ctx, w, now, probe_wait(ctx, 0));
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
    if (--ctx->away_depth > 0)
        return;
    uint64_t now = ctx->ops.now(ctx->tp);
    if (now <= since)
        return;
    stall_note(ctx, now - since, now);
    if (ctx->nwatches == 0)
        return;
    ctx->away_ns += now - since;
    for (uint32_t i = 0; i < ctx->nwatches; i++) {
        ftc_watch_t *w = &ctx->watches[i];
        /* The watch counts silence from ref (the latest check that found
         * the peer's mark set, or the probe sent) on; the part of it
         * spent in this call is ours. A mark set now is left to the
         * next check, which counts from its own time. */
        uint64_t ref;
        if (w->probing)
            ref = w->deadline > w->window ? w->deadline - w->window : 0;
        else
            ref = w->silent_from;
        uint64_t from = ref > since ? ref : since;
        if (now <= from)
            continue;
        uint64_t away = now - from;
        w->deadline = sat_add(w->deadline, away);
        if (!w->probing)
            w->silent_from = sat_add(w->silent_from, away);
    }
}

