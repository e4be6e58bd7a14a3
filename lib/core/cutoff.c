/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process cut off from its group must not evict it (docs/decisions.md).
 *
 * A process that hears nobody (over UCX shared memory, a peer killed in
 * the middle of a send leaves the receiver's FIFO with a slot that is
 * never filled) while everybody hears it times out the peers it waits on
 * and tells them they are excluded. They count it alive, so "mutual
 * suspicion" does not save them. What they do know is specific: each
 * answered that process's probe while running, and was excluded anyway,
 * a probe timeout later. So an exclusion from a peer whose probe we
 * answered at least half a probe timeout before the notice arrived says
 * that the peer does not hear us; we declare it failed and stay.
 *
 * Only observed time counts, as for the monitor's own verdicts: a process
 * that was stalled (SIGSTOP, descheduled) reads the late probe and the
 * notice in the same pass, answers the probe then, and so still accepts
 * its exclusion; so does a slow process that answered late, within half
 * a probe timeout of the notice.
 *
 * One entry per peer that ever probed us or put a family's question to
 * us (below), or sent us anything once we held it failed: the peers that
 * wait on us, a handful in a tree, never a per-world array. An entry
 * outlives its peer's failure: a process that declared the deaf one
 * failed itself (its probes went unanswered) and then holds most of the
 * group failed (the deaf one's suspicions reach it second-hand) would
 * otherwise take the deaf one's notice as "mutual suspicion" says, and
 * leave.
 *
 * The same picture has a mirror image the rule cannot tell apart on the
 * spot: a process whose own messages are slow (a link, a send queue)
 * while it hears promptly answers a probe in time, its answer arrives
 * late, and it is excluded "a probe timeout later" too. It refutes, and
 * two live processes then take each other for failed (a reduce's root
 * delivers without the slow one's value, which stays live). What tells
 * them apart comes later: a process that excluded us and then receives a
 * message of ours answers it with FTC_EXCLUDED_HEARD_YOU (core/dispatch.c),
 * which a deaf one never sends, since it receives nothing. So a refutation
 * is remembered, and a "heard you" notice from the refuted peer overturns
 * it: this process leaves, as a slow process must.
 *
 * "Mutual suspicion" (core/dispatch.c) takes "most of my peers failed, by
 * my own timeouts" for "I am the one cut off"; beside real crashes that
 * count misleads. With two crashed and one stopped process at n = 5, the
 * healthy process that timed out all three holds 3 of 4 failed, and the
 * stopped one's refutation notice, arriving late, made it leave as well.
 * A third process tells: a cut-off process completes no round trip (it
 * hears nobody, or nobody hears it in time), so a probe of ours answered
 * within its first wait, after every failure we declared, says that a
 * peer we hold live hears us and is heard; then we stay.
 *
 * A family's own timeouts reach verdicts of the same kind (ftco's
 * per-message timeouts: a KEEPALIVE unanswered past f_timeout), and a
 * process whose messages are late reaches them about its healthy
 * neighbours as it reaches the monitor's, only sooner. So they are
 * refuted the same way (docs/ftco.md, "A slow or stopped process", rule
 * 8): the family notes when this process answered the peer's question
 * (ftc_cutoff_note_asked), the verdict says how long its sender waited
 * (FTC_EXCLUDED_ASK_EXPIRED, the wait in the header's word), and a
 * verdict that arrives at least half that wait after our answer says
 * the sender did not hear it in time. A stalled process reads the
 * question and the verdict in the same pass and accepts, as above; one
 * whose messages are late refutes, and the judge's "heard you" to its
 * late answer overturns that, as above.
 */
#include <stdlib.h>

#include "core/cutoff.h"

static ftc_probe_answer_t *answer_find(const ftc_context_t *ctx, uint32_t peer)
{
    for (uint32_t i = 0; i < ctx->nanswers; i++)
        if (ctx->answers[i].peer == peer)
            return &ctx->answers[i];
    return NULL;
}

/* peer's entry, made when it has none; NULL without memory (degrade:
 * that peer's exclusion is accepted). */
static ftc_probe_answer_t *answer_entry(ftc_context_t *ctx, uint32_t peer)
{
    ftc_probe_answer_t *a = answer_find(ctx, peer);
    if (a == NULL) {
        if (ctx->nanswers == ctx->capanswers) {
            uint32_t cap = ctx->capanswers ? ctx->capanswers * 2 : 8;
            ftc_probe_answer_t *t = realloc(ctx->answers, sizeof(*t) * cap);
            if (t == NULL)
                return NULL;
            ctx->answers = t;
            ctx->capanswers = cap;
        }
        a = &ctx->answers[ctx->nanswers++];
        a->peer = peer;
        a->at = UINT64_MAX;
        a->asked_at = UINT64_MAX;
        a->refuted = false;
    }
    return a;
}

void ftc_cutoff_note_answer(ftc_context_t *ctx, uint32_t peer, uint64_t now)
{
    ftc_probe_answer_t *a = answer_entry(ctx, peer);
    if (a != NULL)
        a->at = now;
}

void ftc_cutoff_note_asked(ftc_context_t *ctx, uint32_t peer, uint64_t now)
{
    ftc_probe_answer_t *a = answer_entry(ctx, peer);
    if (a != NULL)
        a->asked_at = now;
}

bool ftc_cutoff_refutes(const ftc_context_t *ctx, uint32_t peer, uint64_t now)
{
    const ftc_probe_answer_t *a = answer_find(ctx, peer);
    return a != NULL && now >= a->at
           && now - a->at >= ctx->cfg.probe_timeout_ns / 2;
}

bool ftc_cutoff_refutes_notice(const ftc_context_t *ctx,
                               const ftc_wire_header_t *hdr)
{
    /* The clock is read only for a notice that may be refuted: this runs
     * for every message received (core/dispatch.c), and a steady stream
     * reads no clock per message (tests/test_quick_turn.c). */
    if (hdr->kind != FTC_MSG_EXCLUDED)
        return false;
    if (hdr->aux == FTC_EXCLUDED_PROBE_EXPIRED)
        return ftc_cutoff_refutes(ctx, hdr->sender, ctx->ops.now(ctx->tp));
    if (hdr->aux != FTC_EXCLUDED_ASK_EXPIRED)
        return false;
    const ftc_probe_answer_t *a = answer_find(ctx, hdr->sender);
    if (a == NULL)
        return false;
    uint64_t now = ctx->ops.now(ctx->tp);
    uint64_t wait_ns = (uint64_t)hdr->word * 1000;
    return now >= a->asked_at && now - a->asked_at >= wait_ns / 2;
}

void ftc_cutoff_note_refuted(ftc_context_t *ctx, uint32_t peer)
{
    /* (Only after ftc_cutoff_refutes, which found the entry.) */
    ftc_probe_answer_t *a = answer_find(ctx, peer);
    if (a != NULL)
        a->refuted = true;
}

bool ftc_cutoff_overturned(const ftc_context_t *ctx, uint32_t peer)
{
    const ftc_probe_answer_t *a = answer_find(ctx, peer);
    return a != NULL && a->refuted;
}

bool ftc_cutoff_answered_since(const ftc_context_t *ctx)
{
    return ctx->round_trip_seen && ctx->round_trip_at > ctx->last_failure_at;
}
