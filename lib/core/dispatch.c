/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiving: decode and check a message, then hand it to its operation,
 * keep it for an operation (or group) not started yet, or act on it when
 * it is a control message (probe, probe answer, exclusion, ended).
 */
#include <stdlib.h>
#include <string.h>

#include "core/cutoff.h"
#include "core/monitor.h"
#include "core/op.h"
#include "core/pending.h"
#include "core/segment.h"
#include "core/send.h"
#include "wire/header_codec.h"


static int stash(ftc_pending_msg_t **list, const ftc_wire_header_t *hdr,
                 const uint8_t *payload, uint32_t src)
{
    ftc_pending_msg_t *m = ftc_pending_msg_new(hdr, payload, src);
    if (m == NULL)
        return FTC_ENOMEM;
    m->next = *list;
    *list = m;
    return FTC_OK;
}

static ftc_cop_t *find_op(ftc_group_t *g, uint64_t seq)
{
    for (ftc_cop_t *op = g->ops; op != NULL; op = op->next)
        if (op->seq == seq)
            return op;
    return NULL;
}

/* Inline (into the receive path and the replay): every message of an
 * operation passes here, and a call of its own cost a prologue and an
 * epilogue per message. */
static inline __attribute__((always_inline)) int
deliver_to_op(ftc_cop_t *op, const ftc_wire_header_t *hdr,
              const uint8_t *payload, uint32_t sender)
{
    ftc_context_t *ctx = op->group->ctx;
    int64_t gr = ftc_group_rank_of(op->group, sender);
    if (gr < 0) {
        ctx->counters.dropped_badmsg++;
        return FTC_EBADMSG;
    }
    if (hdr->signature != op->signature || hdr->coll != (uint8_t)op->coll
        || hdr->algo != (uint8_t)op->args.algo) {
        /* A peer started this collective with other arguments: a usage
         * error that must surface instead of a hang. */
        ctx->counters.dropped_badmsg++;
        ftc_cop_abort(op, FTC_EMISMATCH);
        return FTC_EBADMSG;
    }
    if (!op->vt->msg_valid(hdr)) {
        ctx->counters.dropped_badmsg++;
        return FTC_EBADMSG;
    }
    if (op->finished) {
        ctx->counters.late++;
        return FTC_OK;
    }
    op->comp.stats.msgs_received++;
    op->comp.stats.bytes_received += FTC_WIRE_HEADER_SIZE + hdr->payload_len;
    op->vt->on_msg(op, hdr, payload, (uint32_t)gr);
    return FTC_OK;
}

void ftc_cop_replay_held(ftc_cop_t *op)
{
    ftc_group_t *g = op->group;
    /* Pending messages are stored newest first; replay oldest first to
     * keep per-sender order. */
    ftc_pending_msg_t *mine = NULL;
    for (ftc_pending_msg_t **pp = &g->pending; *pp != NULL;) {
        ftc_pending_msg_t *m = *pp;
        if (m->hdr.seq == op->seq) {
            *pp = m->next;
            ftc_pending_forget(g, m);
            m->next = mine;
            mine = m;
        } else {
            pp = &m->next;
        }
    }
    while (mine != NULL) {
        ftc_pending_msg_t *m = mine;
        mine = m->next;
        if (!ftc_ctx_is_failed(g->ctx, m->src))
            (void)deliver_to_op(op, &m->hdr, m->payload, m->src);
        free(m);
    }
}

static void handle_control(ftc_context_t *ctx, const ftc_wire_header_t *hdr)
{
    ftc_group_t *g = ftc_group_find(ctx, hdr->group_id, hdr->epoch);
    ftc_cop_t *op = g != NULL ? find_op(g, hdr->seq) : NULL;
    int64_t gr = g != NULL ? ftc_group_rank_of(g, hdr->sender) : -1;
    /* A probe or its answer that says the operation is something else at
     * the peer: the members disagree on it (ftc_ctx_send_probe). */
    if ((hdr->kind == FTC_MSG_PROBE || hdr->kind == FTC_MSG_PROBE_ACK)
        && hdr->signature != 0 && op != NULL && !op->finished && gr >= 0
        && (hdr->signature != op->signature || hdr->coll != (uint8_t)op->coll
            || hdr->algo != (uint8_t)op->args.algo)) {
        ctx->counters.dropped_badmsg++;
        ftc_cop_abort_ex(op, FTC_EMISMATCH, true);
    }
    if (hdr->kind == FTC_MSG_PROBE) {
        ftc_watch_t about = {.group_id = hdr->group_id, .epoch = hdr->epoch,
                             .seq = hdr->seq};
        uint32_t word = 0;
        if (op != NULL && op->vt->progress_word != NULL)
            word = op->vt->progress_word(op);
        int ended = g != NULL && (op == NULL || op->finished)
                        ? ftc_group_ended_status(g, hdr->seq)
                        : FTC_OK;
        /* Probed about a group we have only in a newer epoch: the prober
         * runs collectives on an epoch this process left (a usage error
         * at one of us); it would wait for ever. */
        if (g == NULL)
            for (ftc_group_t *h = ctx->groups; h != NULL; h = h->next)
                if (h->id == hdr->group_id && h->epoch > hdr->epoch)
                    ended = FTC_EMISMATCH;
        ftc_cutoff_note_answer(ctx, hdr->sender, ctx->ops.now(ctx->tp));
        (void)ftc_ctx_send_control_op(ctx, hdr->sender, FTC_MSG_PROBE_ACK, &about,
                              word, ended != FTC_OK ? FTC_WF_OP_ENDED : 0,
                              (uint32_t)-ended,
                              op != NULL && !op->finished ? op : NULL);
    }
    if (hdr->kind == FTC_MSG_PROBE_ACK && (hdr->flags & FTC_WF_OP_ENDED)
        && op != NULL && !op->finished && gr >= 0
        && ftc_is_usage_status(-(int)hdr->aux)) {
        /* A peer we wait on left this operation over a usage error: so do
         * we (the others heard it from that peer, or hear it from our
         * answers to their probes). */
        ftc_cop_abort_ex(op, -(int)hdr->aux, false);
        return;
    }
    if (hdr->kind == FTC_MSG_STOPPED) {
        int st = -(int)hdr->aux;
        if (g == NULL || gr < 0 || st >= 0 || st <= -FTC_ERROR_COUNT) {
            ctx->counters.dropped_badmsg++;
            return;
        }
        ftc_group_stop(g, st);
        return;
    }
    if (hdr->kind == FTC_MSG_ENDED) {
        int st = -(int)hdr->aux;
        if (g == NULL || gr < 0 || !ftc_is_usage_status(st)) {
            ctx->counters.dropped_badmsg++;
            return;
        }
        if (op != NULL) {
            ftc_cop_abort_ex(op, st, false);
        } else if (hdr->seq >= g->next_seq) {
            /* Not started here yet: it ends as it starts. */
            g->told_ended[g->ntold_ended % 8].seq = hdr->seq;
            g->told_ended[g->ntold_ended % 8].status = st;
            g->ntold_ended++;
        }
        return;
    }
    if (op != NULL && gr >= 0 && !op->finished
        && op->vt->on_peer_progress != NULL)
        op->vt->on_peer_progress(op, (uint32_t)gr, hdr->word);
    /* A probe names the oldest operation that waits on us (a watch is
     * per peer, shared by every operation of the prober that waits on
     * us), so it asks about that one and every later one: a laggard
     * stranded in operations k and k+1 pulls both. */
    if (hdr->kind == FTC_MSG_PROBE && g != NULL && gr >= 0)
        for (ftc_cop_t *o = g->ops; o != NULL; o = o->next)
            if (o->seq >= hdr->seq && !o->finished && o->vt->on_probe != NULL)
                o->vt->on_probe(o, (uint32_t)gr);
}

/* A family's message: to its operation, or held for an operation or a
 * group not started here yet. */
static inline __attribute__((always_inline)) int
dispatch_data(ftc_context_t *ctx, const ftc_wire_header_t *hdr,
              const uint8_t *payload)
{
    int rc = FTC_OK;
    ftc_group_t *g = ftc_group_find(ctx, hdr->group_id, hdr->epoch);
    if (g == NULL) {
        bool newer = false;
        for (ftc_group_t *h = ctx->groups; h != NULL; h = h->next)
            if (h->id == hdr->group_id && h->epoch > hdr->epoch)
                newer = true;
        if (newer) {
            ctx->counters.dropped_stale++;
            rc = FTC_ESTALE;
        } else if (ftc_algo_answered_early_only(hdr)) {
            ftc_algo_answer_early(ctx, hdr);
        } else {
            size_t cost = sizeof(ftc_pending_msg_t) + hdr->payload_len;
            if (cost > FTC_ORPHAN_MAX_BYTES - ctx->orphan_bytes) {
                ctx->counters.dropped_stale++;
                rc = FTC_ESTALE;
            } else {
                rc = stash(&ctx->orphans, hdr, payload, hdr->sender);
                if (rc == FTC_OK) {
                    ctx->orphan_bytes += cost;
                    ftc_algo_answer_early(ctx, hdr);
                }
            }
        }
    } else if (hdr->seq >= g->next_seq) {
        if (ftc_algo_answered_early_only(hdr)) {
            ftc_algo_answer_early(ctx, hdr);
            return rc;
        }
        rc = ftc_pending_keep(g, hdr, payload, hdr->sender);
        if (rc == FTC_OK)
            ftc_algo_answer_early(ctx, hdr);
    } else {
        ftc_cop_t *op = find_op(g, hdr->seq);
        if (op == NULL) {
            ctx->counters.late++;
        } else {
            rc = deliver_to_op(op, hdr, payload, hdr->sender);
        }
    }
    return rc;
}

/* Everything but a probe and a credit, which never wait (above). */
static int dispatch_any(ftc_context_t *ctx, const ftc_wire_header_t *hdr,
                        const uint8_t *payload)
{
    if (hdr->kind >= FTC_MSG_CORE_MIN
        && (hdr->kind == FTC_MSG_PROBE_ACK || hdr->kind == FTC_MSG_ENDED
            || hdr->kind == FTC_MSG_STOPPED)) {
        handle_control(ctx, hdr);
        return FTC_OK;
    }
    return dispatch_data(ctx, hdr, payload);
}

void ftc_dispatch_parked(ftc_context_t *ctx)
{
    ftc_wire_header_t hdr;
    const uint8_t *payload;
    uint8_t *buf;
    /* One whole large value per turn: the transport hands over what
     * arrived meanwhile before the next. */
    bool large_done = false;
    while (!ctx->excluded
           && ftc_segment_unpark(ctx, large_done, &hdr, &payload, &buf)) {
        large_done |= hdr.payload_len >= FTC_AWAY_MIN_BYTES;
        (void)dispatch_any(ctx, &hdr, payload);
        ftc_segment_release(ctx, buf, hdr.payload_len);
    }
}

int ftc_transport_recv(ftc_context_t *ctx, uint32_t src, const void *buf,
                       size_t len)
{
    if (ctx == NULL || (buf == NULL && len > 0))
        return FTC_EINVAL;
    ftc_wire_header_t hdr;
    /* Unkeyed, the decode is inlined here (every message takes it);
     * keyed, the MAC's cost dwarfs a call. The same checks either way
     * (wire/header_codec.h). */
    int rc = ctx->cfg.auth
                 ? ftc_wire_decode_opts(buf, len, ctx->cfg.job_token,
                                        ctx->cfg.auth_key, ctx->size,
                                        !ctx->skip_checksum, &hdr)
                 : ftc_wire_decode_unkeyed(buf, len, ctx->cfg.job_token,
                                           ctx->size, !ctx->skip_checksum,
                                           &hdr);
    if (rc == FTC_OK && src != FTC_RANK_UNKNOWN && src != hdr.sender)
        rc = FTC_EBADMSG;   /* the header lies about who sent it */
    if (rc == FTC_OK && hdr.sender == ctx->rank)
        rc = FTC_EBADMSG;
    switch (rc) {
    case FTC_OK: break;
    case FTC_ETRUNCATED: ctx->counters.dropped_truncated++; return rc;
    case FTC_ECHECKSUM: ctx->counters.dropped_checksum++; return rc;
    case FTC_EVERSION: ctx->counters.dropped_version++; return rc;
    case FTC_EFOREIGN:
    case FTC_EAUTH: ctx->counters.dropped_foreign++; return rc;
    default: ctx->counters.dropped_badmsg++; return rc;
    }
    /* An excluded process behaves as the crashed process the others take
     * it for: it answers nothing. */
    if (ctx->excluded)
        return FTC_OK;
    ctx->counters.msgs_received++;
    ctx->counters.bytes_received += len;
    const uint8_t *payload = (const uint8_t *)buf + FTC_WIRE_HEADER_SIZE;

    if (ftc_ctx_is_failed(ctx, hdr.sender)) {
        /* Two processes that suspect each other: the one that found most
         * of the world failed itself (its timeouts, its transport) is the
         * one that was cut off (stopped, partitioned away), so it accepts
         * the verdict; the other ignores it, else a process the group
         * dropped could evict healthy ones on its way out. Failures
         * learned from others do not count: a process that hears them is
         * not cut off, and a deaf process's own suspicions reach the
         * group that way (core/cutoff.c). Nor does the count when a
         * probe of ours was answered promptly since our last verdict:
         * a third process hears us (core/cutoff.c). */
        if (hdr.kind == FTC_MSG_EXCLUDED
            && (uint64_t)ctx->nfailed_observed * 2 > (uint64_t)ctx->size - 1
            && !ftc_cutoff_answered_since(ctx)
            && !ftc_cutoff_refutes_notice(ctx, &hdr)) {
            ftc_ctx_become_excluded(ctx);
            ftc_ctx_settle(ctx);
            return FTC_OK;
        }
        if (hdr.kind == FTC_MSG_EXCLUDED && hdr.aux == FTC_EXCLUDED_HEARD_YOU
            && ftc_cutoff_overturned(ctx, hdr.sender)) {
            /* We refuted its verdict, taking it for deaf, and it has
             * heard a message of ours since: our messages were slow, not
             * it deaf (core/cutoff.c). */
            ftc_ctx_become_excluded(ctx);
            ftc_ctx_settle(ctx);
            return FTC_OK;
        }
        /* Its verdict on us, which we refute (we answered its probe
         * long before): remembered as when we did not hold it failed
         * yet, so that its "heard you" overturns it (core/cutoff.c). A
         * stopped process that timed out a healthy one first and then
         * gets its verdict, the counts of failures observed even, stayed
         * live with a result that left the healthy one out. */
        if (ftc_cutoff_refutes_notice(ctx, &hdr))
            ftc_cutoff_note_refuted(ctx, hdr.sender);
        ctx->counters.dropped_stale++;
        if (hdr.kind != FTC_MSG_EXCLUDED) {
            /* tell it again: we heard it. To its probe this is our
             * answer, as a PROBE_ACK would be (handle_control), and to
             * a family's question (ftco's KEEPALIVE) as its own answer
             * would be: any message, since this one may be it. */
            if (hdr.kind == FTC_MSG_PROBE)
                ftc_cutoff_note_answer(ctx, hdr.sender, ctx->ops.now(ctx->tp));
            ftc_cutoff_note_asked(ctx, hdr.sender, ctx->ops.now(ctx->tp));
            (void)ftc_ctx_send_control_ex(ctx, hdr.sender, FTC_MSG_EXCLUDED,
                                          NULL, 0, 0, FTC_EXCLUDED_HEARD_YOU);
        }
        return FTC_ESTALE;
    }
    /* A family's message (the stream) is none of the core's kinds: one
     * test of the kind's range, on every message received, takes it
     * past all their cases at once. */
    bool core_kind = hdr.kind >= FTC_MSG_CORE_MIN;
    if (core_kind && hdr.kind == FTC_MSG_EXCLUDED
        && ftc_cutoff_refutes_notice(ctx, &hdr)) {
        /* We answered the sender's probe, while running, well before its
         * verdict: it is the one that does not hear (cut off from the
         * group), and must not evict us. Suspicion is final both ways. */
        ftc_ctx_declare_observed_failed(ctx, hdr.sender);
        ftc_cutoff_note_refuted(ctx, hdr.sender);
        (void)ftc_ctx_send_control(ctx, hdr.sender, FTC_MSG_EXCLUDED, NULL, 0);
        ftc_ctx_settle(ctx);
        return FTC_OK;
    }
    if (core_kind && hdr.kind == FTC_MSG_EXCLUDED) {
        ftc_ctx_become_excluded(ctx);
        ftc_ctx_settle(ctx);
        return FTC_OK;
    }
    /* Every segment counts: a peer streaming a large value is alive. */
    if (core_kind && hdr.kind == FTC_MSG_PROBE_ACK)
        ftc_monitor_probe_answered(ctx, hdr.sender);
    ftc_monitor_heard(ctx, hdr.sender);

    uint8_t *whole = NULL;
    if (hdr.flags & FTC_WF_SEGMENT) {
        rc = ftc_segment_recv(ctx, &hdr, &payload, &whole);
        if (rc <= 0) {
            ftc_ctx_settle(ctx);
            return rc;
        }
    }
    /* A large value costs this process time proportional to its size
     * (reduce, copy, queue, the deliver callback): not the peers'
     * silence (core/monitor.c). Small ones are not worth two clock
     * reads. */
    bool timed = hdr.payload_len >= FTC_AWAY_MIN_BYTES;
    uint64_t since = timed ? ftc_monitor_away_begin(ctx) : 0;
    rc = FTC_OK;
    if (core_kind && hdr.kind == FTC_MSG_PROBE) {
        handle_control(ctx, &hdr);
    } else if (core_kind && hdr.kind == FTC_MSG_SEG_CREDIT) {
        ftc_segment_credit(ctx, hdr.sender, hdr.word);
    } else if (whole != NULL || ftc_segment_parked_from(ctx, hdr.sender)) {
        /* The work a whole large value makes waits for the timer's turn,
         * after the transport has handed over what else arrived: a probe
         * behind it is answered first, and its sender's later messages
         * wait behind it, in order (core/segment.h, "Parking"). */
        rc = ftc_segment_park(ctx, &hdr, payload, whole);
        whole = NULL;
    } else {
        rc = dispatch_any(ctx, &hdr, payload);
    }
    if (whole != NULL)
        ftc_segment_release(ctx, whole, hdr.payload_len);
    ftc_ctx_settle(ctx);
    if (timed)
        ftc_monitor_away_end(ctx, since);
    return rc;
}
