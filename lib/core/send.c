/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sending: encode a message (header, payload, checksum or MAC), hand it to
 * the transport, and keep the record until the backend says it is done
 * (or reuse it at once when the send completed inline).
 */
#include <stdlib.h>
#include <string.h>

#include "core/copy.h"
#include "core/notice.h"
#include "core/segment.h"
#include "core/send.h"
#include "core/talked.h"
#include "wire/header_codec.h"


typedef struct ftc_send_rec {
    ftc_send_link_t link;   /* first: the list is of links */
    ftc_cop_t *op;            /* to notify, or NULL */
    uint32_t dest;           /* world rank */
    bool timed;              /* op wants on_sent(dest), not on_send_done */
    size_t len;
    size_t cap;              /* bytes at buf */
    uint8_t buf[];
} ftc_send_rec_t;

/* A record holds at least this much (a header and a small payload). One
 * record is kept for the next send: the largest given back, up to a
 * whole segment (REC_KEEP_MAX at most). Segments of a large value go
 * one after another through the same record then; malloc and free of
 * 256 KiB each time made glibc map and unmap fresh pages for every
 * segment (a fifth of the page faults of a 32 MiB allreduce). */
enum { REC_MIN = 96, REC_KEEP_MAX = 4 << 20 };

static ftc_send_rec_t *rec_get(ftc_context_t *ctx, size_t len)
{
    ftc_send_rec_t *rec = ctx->spare_send;
    if (rec != NULL && rec->cap >= len) {
        ctx->spare_send = NULL;
        return rec;
    }
    size_t cap = len > REC_MIN ? len : REC_MIN;
    rec = malloc(sizeof(*rec) + cap);
    if (rec != NULL)
        rec->cap = cap;
    return rec;
}

static void rec_put(ftc_context_t *ctx, ftc_send_rec_t *rec)
{
    size_t keep = FTC_WIRE_HEADER_SIZE + FTC_WIRE_SEGMENT_HDR
                  + ftc_segment_payload_max(ctx);
    if (keep > REC_KEEP_MAX)
        keep = REC_KEEP_MAX;
    ftc_send_rec_t *spare = ctx->spare_send;
    if (rec->cap <= keep) {
        if (spare == NULL) {
            ctx->spare_send = rec;  /* the common case: the one just taken */
            return;
        }
        if (spare->cap < rec->cap) {
            ctx->spare_send = rec;
            free(spare);
            return;
        }
    }
    free(rec);
}

/* ---- sending ---------------------------------------------------------- */

/* One small message for several destinations, as encoded for the first
 * (ftc_cop_send_ring): header, payload and MAC or checksum, which depend
 * on nothing but the message. */
enum { SAME_MAX = FTC_WIRE_HEADER_SIZE + 64 };
typedef struct ftc_encoded {
    size_t len;             /* 0: nothing encoded yet */
    bool more;              /* another destination follows: keep a copy */
    uint8_t bytes[SAME_MAX];
} ftc_encoded_t;

/* Encode and hand to the transport, or to the segment queue (a payload
 * longer than a segment, or data behind one: core/segment.h). Returns the
 * transport's verdict. */
static inline __attribute__((always_inline)) int
send_wire(ftc_context_t *ctx, uint32_t dest,
                     ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                     int iovcnt, size_t plen, const uint64_t *digest,
                     ftc_cop_t *notify_op, bool *inline_done,
                     ftc_encoded_t *same);

/* (One piece is what nearly every family sends: no loop for it.) */
static inline size_t iov_len(const ftc_iov_t *iov, int iovcnt)
{
    if (iovcnt == 1)
        return iov[0].len;
    size_t plen = 0;
    for (int i = 0; i < iovcnt; i++)
        plen += iov[i].len;
    return plen;
}

/* Inline into its three callers: it is the middle of every send, and
 * a call of its own cost a prologue and an epilogue per message. */
static inline __attribute__((always_inline)) int
ctx_send_raw(ftc_context_t *ctx, uint32_t dest,
                        ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                        int iovcnt, ftc_cop_t *notify_op, bool *inline_done,
                        ftc_encoded_t *same)
{
    size_t plen = iov_len(iov, iovcnt);
    if (plen > FTC_WIRE_MAX_PAYLOAD)
        return FTC_EOVERFLOW;
    if (ftc_segment_wanted(ctx, dest, hdr->kind, plen)) {
        /* Queued bytes are copied: for the caller the send is done. */
        *inline_done = true;
        return ftc_segment_send(ctx, dest, hdr, iov, iovcnt);
    }
    return send_wire(ctx, dest, hdr, iov, iovcnt, plen, NULL, notify_op,
                     inline_done, same);
}

int ftc_ctx_send_wire(ftc_context_t *ctx, uint32_t dest,
                      ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                      int iovcnt, ftc_cop_t *notify_op, bool *inline_done)
{
    return send_wire(ctx, dest, hdr, iov, iovcnt, iov_len(iov, iovcnt), NULL,
                     notify_op, inline_done, NULL);
}

int ftc_ctx_send_wire_digest(ftc_context_t *ctx, uint32_t dest,
                             ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                             int iovcnt, uint64_t digest, bool *inline_done)
{
    return send_wire(ctx, dest, hdr, iov, iovcnt, iov_len(iov, iovcnt),
                     &digest, NULL, inline_done, NULL);
}

/* same (NULL but for ftc_cop_send_ring): a message encoded before with
 * the very same header and payload is copied instead of encoded again;
 * one encoded here, if small, is kept there for the next destination. */
static inline __attribute__((always_inline)) int
send_wire(ftc_context_t *ctx, uint32_t dest,
                     ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                     int iovcnt, size_t plen, const uint64_t *digest,
                     ftc_cop_t *notify_op, bool *inline_done,
                     ftc_encoded_t *same)
{
    hdr->sender = ctx->rank;
    hdr->job_token = ctx->cfg.job_token;
    hdr->payload_len = (uint32_t)plen;
    size_t len = FTC_WIRE_HEADER_SIZE + plen;
    ftc_send_rec_t *rec = rec_get(ctx, len);
    if (rec == NULL)
        return FTC_ENOMEM;
    if (same != NULL && same->len == len) {
        /* The same header and payload as the last destination's: the
         * same bytes, MAC or checksum included. */
        ftc_copy_bytes(rec->buf, same->bytes, len);
    } else {
        uint8_t *p = rec->buf + FTC_WIRE_HEADER_SIZE;
        if (iovcnt == 1) {
            if (plen > 0)
                ftc_copy_bytes(p, iov[0].base, plen);
        } else {
            for (int i = 0; i < iovcnt; i++) {
                if (iov[i].len > 0)
                    ftc_copy_bytes(p, iov[i].base, iov[i].len);
                p += iov[i].len;
            }
        }
        if (!ctx->cfg.auth)
            ftc_wire_encode_inline(hdr, rec->buf); /* no call: every message */
        else if (digest != NULL)
            ftc_wire_encode_digest(hdr, rec->buf, ctx->cfg.auth_key, *digest);
        else
            ftc_wire_encode_key(hdr, rec->buf, ctx->cfg.auth_key);
        if (same != NULL && same->more && len <= SAME_MAX) {
            ftc_copy_bytes(same->bytes, rec->buf, len);
            same->len = len;
        }
    }
    rec->len = len;
    rec->dest = dest;
    rec->op = notify_op;
    rec->timed = false;
    int rc = ctx->ops.send(ctx->tp, dest, rec->buf, len, rec);
    *inline_done = false;
    if (rc == FTC_SEND_INLINE) {
        rec_put(ctx, rec);
        *inline_done = true;
    } else if (rc == FTC_OK) {
        ftc_send_link_t *head = (&ctx->sends);
        rec->link.next = head->next;
        rec->link.prev = head;
        head->next->prev = &rec->link;
        head->next = &rec->link;
    } else {
        rec_put(ctx, rec);
        /* Too big for this transport is our problem, not the peer's: the
         * caller ends the collective. Any other refusal means the peer is
         * unreachable (the contract). */
        if (rc == FTC_EOVERFLOW)
            return FTC_EOVERFLOW;
        ftc_ctx_declare_observed_failed(ctx, dest);
        return FTC_ETRANSPORT;
    }
    ftc_talked_note(ctx, dest);
    ctx->counters.msgs_sent++;
    ctx->counters.bytes_sent += len;
    return FTC_OK;
}

static inline __attribute__((always_inline)) int
cop_send(ftc_cop_t *op, uint32_t dest, ftc_wire_header_t *hdr,
         const ftc_iov_t *iov, int iovcnt, bool notify, ftc_encoded_t *same)
{
    ftc_context_t *ctx = op->group->ctx;
    if (ctx->excluded)
        return FTC_EEXCLUDED;
    uint32_t w = ftc_group_world_of(op->group, dest);
    bool inline_done;
    int rc = ctx_send_raw(ctx, w, hdr, iov, iovcnt, notify ? op : NULL,
                          &inline_done, same);
    if (rc == FTC_EOVERFLOW) {
        /* The message does not fit the transport: a usage error every
         * member must see, like a mismatch (peers learn it from probes). */
        ftc_cop_abort(op, FTC_EOVERFLOW);
        return rc;
    }
    if (rc != FTC_OK) {
        if (notify && !op->cont_wanted) {
            /* Still continue on a later turn so a sweep cannot stall. */
            op->cont_wanted = true;
            op->next_cont = ctx->cont_head;
            ctx->cont_head = op;
            ctx->cont_timer = true;
        }
        return rc;
    }
    op->comp.stats.msgs_sent++;
    op->comp.stats.bytes_sent += FTC_WIRE_HEADER_SIZE + hdr->payload_len;
    if (notify && inline_done && !op->cont_wanted) {
        /* Yield to the event loop before the next step, so receives that
         * are already queued are handled first (checked correction stops
         * sweeping when it hears from a neighbour). */
        op->cont_wanted = true;
        op->next_cont = ctx->cont_head;
        ctx->cont_head = op;
        ctx->cont_timer = true;
    } else if (notify && !inline_done) {
        op->cont_wanted = true; /* pins the op until send_done */
    }
    return FTC_OK;
}

int ftc_cop_send(ftc_cop_t *op, uint32_t dest, ftc_wire_header_t *hdr,
                const ftc_iov_t *iov, int iovcnt, bool notify)
{
    return cop_send(op, dest, hdr, iov, iovcnt, notify, NULL);
}

int ftc_cop_send_ring(ftc_cop_t *op, uint32_t first, uint32_t count,
                      ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                      int iovcnt)
{
    uint32_t n = op->group->n;
    if (count == 1) /* (n = 2: nothing to share, and no copy to keep) */
        return cop_send(op, first % n, hdr, iov, iovcnt, false, NULL);
    ftc_encoded_t same;
    same.len = 0;
    int rc = FTC_OK;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t dest = (uint32_t)(((uint64_t)first + i) % n);
        same.more = i + 1 < count;
        rc = cop_send(op, dest, hdr, iov, iovcnt, false, &same);
    }
    return rc;
}

int ftc_cop_send_timed(ftc_cop_t *op, uint32_t dest, ftc_wire_header_t *hdr,
                       const ftc_iov_t *iov, int iovcnt, bool *left)
{
    *left = true;
    ftc_context_t *ctx = op->group->ctx;
    if (ctx->excluded)
        return FTC_EEXCLUDED;
    uint32_t w = ftc_group_world_of(op->group, dest);
    bool inline_done;
    int rc = ctx_send_raw(ctx, w, hdr, iov, iovcnt, NULL, &inline_done,
                          NULL);
    if (rc == FTC_EOVERFLOW) {
        ftc_cop_abort(op, FTC_EOVERFLOW);
        return rc;
    }
    if (rc != FTC_OK)
        return rc;
    op->comp.stats.msgs_sent++;
    op->comp.stats.bytes_sent += FTC_WIRE_HEADER_SIZE + hdr->payload_len;
    if (!inline_done) {
        /* ftc_ctx_send_wire linked its record first in the list. */
        ftc_send_rec_t *rec = (ftc_send_rec_t *)ctx->sends.next;
        rec->op = op;
        rec->timed = true;
        op->timed_sends++;
        *left = false;
    }
    return FTC_OK;
}

int ftc_ctx_send_control_op(ftc_context_t *ctx, uint32_t dest,
                           ftc_msg_kind_t kind, const ftc_watch_t *about,
                           uint32_t word, uint16_t flags, uint32_t aux,
                           const ftc_cop_t *op)
{
    if (ctx->excluded)
        return FTC_EEXCLUDED;
    ftc_wire_header_t hdr;
    memset(&hdr, 0, sizeof(hdr));
    hdr.kind = (uint8_t)kind;
    hdr.flags = flags;
    hdr.aux = aux;
    if (op != NULL) {
        /* What the operation is here, so that peers that wait on each
         * other without exchanging a data message (a bcast leaf under an
         * allreduce's reduce phase) still see that they disagree. */
        hdr.coll = (uint8_t)op->coll;
        hdr.algo = (uint8_t)op->args.algo;
        hdr.signature = op->signature;
    }
    if (about != NULL) {
        hdr.group_id = about->group_id;
        hdr.epoch = about->epoch;
        hdr.seq = about->seq;
    }
    hdr.word = word;
    bool inline_done;
    int rc = ctx_send_raw(ctx, dest, &hdr, NULL, 0, NULL, &inline_done,
                          NULL);
    if (rc == FTC_OK && kind == FTC_MSG_PROBE)
        ctx->counters.probes_sent++;
    if (rc == FTC_OK && kind == FTC_MSG_EXCLUDED)
        ftc_notice_note_told(ctx, dest);
    return rc;
}

int ftc_ctx_send_control_ex(ftc_context_t *ctx, uint32_t dest,
                           ftc_msg_kind_t kind, const ftc_watch_t *about,
                           uint32_t word, uint16_t flags, uint32_t aux)
{
    return ftc_ctx_send_control_op(ctx, dest, kind, about, word, flags, aux, NULL);
}

int ftc_ctx_send_control(ftc_context_t *ctx, uint32_t dest,
                         ftc_msg_kind_t kind, const ftc_watch_t *about,
                         uint32_t word)
{
    return ftc_ctx_send_control_ex(ctx, dest, kind, about, word, 0, 0);
}

int ftc_ctx_send_probe(ftc_context_t *ctx, uint32_t dest,
                       const ftc_watch_t *about, uint32_t word,
                       const ftc_cop_t *op)
{
    return ftc_ctx_send_control_op(ctx, dest, FTC_MSG_PROBE, about, word, 0, 0, op);
}

void ftc_transport_send_done(ftc_context_t *ctx, void *cookie, int status)
{
    ftc_send_rec_t *rec = cookie;
    if (ctx == NULL || rec == NULL)
        return;
    rec->link.prev->next = rec->link.next;
    rec->link.next->prev = rec->link.prev;
    ftc_cop_t *op = rec->op;
    bool timed = rec->timed;
    uint32_t dest = rec->dest;
    /* The backend knows the bytes never left: the peer is unreachable. */
    if (status < 0)
        ftc_ctx_declare_observed_failed(ctx, rec->dest);
    rec_put(ctx, rec);
    if (op != NULL && timed) {
        op->timed_sends--;
        int64_t g = ftc_group_rank_of(op->group, dest);
        if (!op->finished && op->vt->on_sent != NULL && g >= 0)
            op->vt->on_sent(op, (uint32_t)g);
        ftc_cop_maybe_reap(op);
    } else if (op != NULL && op->cont_wanted) {
        op->cont_wanted = false;
        if (!op->finished && op->vt->on_send_done != NULL)
            op->vt->on_send_done(op);
        ftc_cop_maybe_reap(op);
    }
    ftc_ctx_settle(ctx);
}

void ftc_send_forget_group(ftc_context_t *ctx, const ftc_group_t *g)
{
    ftc_send_link_t *head = &ctx->sends;
    for (ftc_send_link_t *l = head->next; l != head; l = l->next) {
        ftc_send_rec_t *s = (ftc_send_rec_t *)l;
        if (s->op != NULL && s->op->group == g)
            s->op = NULL;
    }
}

void ftc_send_free_all(ftc_context_t *ctx)
{
    ftc_send_link_t *head = &ctx->sends;
    while (head->next != head) {
        ftc_send_link_t *l = head->next;
        head->next = l->next;
        free(l);
    }
    free(ctx->spare_send);
    ctx->spare_send = NULL;
}
