/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segmentation: liveness that does not depend on payload size.
 *
 * A message whose payload is longer than the segment size (ftc_config_t's
 * segment_size, capped by the transport's max_msg_size) leaves as a train
 * of segments, each a complete wire message with FTC_WF_SEGMENT and the
 * sub-header of lib/wire/wire.h (message id, offset, total). Per destination
 * the sender keeps the messages it still has to send, in order, and lets
 * at most segment_window segments be unacknowledged: the receiver answers
 * every segment with a small credit (FTC_MSG_SEG_CREDIT, the count of
 * segments it has had from this sender), and the next segment goes when
 * one is credited. A send completion would not do: most transports are
 * done with a message when they have copied it into their own queue
 * (FTC_SEND_INLINE), which says nothing about how much waits in front of
 * the next message. With credits, whatever the transport, at most
 * segment_window segments of ours are ahead of a keepalive probe or its
 * answer (control messages go straight to the transport), never a whole
 * 256 MiB value; and the copying of a large value is spread over turns of
 * the event loop, so the sender keeps answering its peers. Data messages
 * to a destination with a train in progress queue behind it, whole, to
 * keep the pair's order.
 *
 * The receiver reassembles per sender, one message at a time (a sender's
 * segments arrive in order, one train after the other), and counts every
 * segment as hearing from the sender: a peer streaming a large value is
 * never suspected. A segment that does not continue its message exactly
 * (unknown id, a gap, a duplicate, an overlap, another total or header, a
 * total above the bound) is dropped and counted as dropped_badmsg; it is
 * still credited, so that a legitimate train refused here (say, beyond the
 * orphans' bound) never stalls the sender's later messages. The bound:
 * while the operation runs here, about twice its value size (the largest
 * message an operation sends is a value with an accepted value beside it,
 * plus failure lists); for an operation not started here yet, what is
 * left of the sender's early-message budget (core/pending.h: a total
 * beyond it excludes the sender rather than lose its message); for a
 * group not created yet, what is left of FTC_ORPHAN_MAX_BYTES. Segments of an operation that has ended here are
 * not kept at all. A reassembled message is handed on exactly as an
 * unsegmented one would have been.
 */
#ifndef FTC_CORE_SEGMENT_H
#define FTC_CORE_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/send.h"

#pragma GCC visibility push(hidden)

/* Provided by core/send.c: encode one wire message and hand
 * it to the transport now. *inline_done: the transport is already done
 * with it. Returns FTC_OK, or the transport's refusal (dest is then
 * failed, unless FTC_EOVERFLOW). */
int ftc_ctx_send_wire(ftc_context_t *ctx, uint32_t dest,
                      ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                      int iovcnt, ftc_cop_t *notify_op, bool *inline_done);
/* The same for a segment whose bytes after the sub-header have this
 * digest (ftc_wire_segment_digest), computed once for all their
 * destinations: under the job key it is MACed as FTC_WF_DIGEST says
 * (lib/wire/wire.h); without authentication, as any message. */
int ftc_ctx_send_wire_digest(ftc_context_t *ctx, uint32_t dest,
                             ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                             int iovcnt, uint64_t digest, bool *inline_done);

/* Largest payload of one wire message at a context with this
 * configuration and these transport ops (>= 1). The context computes it
 * once, at creation (neither changes afterwards). */
size_t ftc_segment_payload_max_of(const ftc_config_t *cfg,
                                  const ftc_transport_ops_t *ops);

/* Largest payload of one wire message at this context (>= 1). */
static inline size_t ftc_segment_payload_max(const ftc_context_t *ctx)
{
    return ctx->seg_payload_max;
}

/* Whether a data message to world rank dest would queue behind a train
 * of segments to dest. */
bool ftc_segment_queued_to(const ftc_context_t *ctx, uint32_t dest);

/* Must this message to world rank dest go through the segment queue:
 * longer than a segment, or a data message behind a train to dest.
 * Inline: every send asks, and nearly every answer is "no" from the
 * first two tests. */
static inline bool ftc_segment_wanted(const ftc_context_t *ctx, uint32_t dest,
                                      uint8_t kind, size_t plen)
{
    /* Control messages never wait behind bulk data (the point of it
     * all); finalize's LEAVE does, it follows the data. */
    if (kind >= FTC_MSG_CORE_MIN && kind <= FTC_MSG_CORE_MAX
        && kind != FTC_MSG_LEAVE)
        return false;
    if (plen > ctx->seg_payload_max)
        return true;
    return ctx->seg != NULL && ftc_segment_queued_to(ctx, dest);
}

/* Copy the message (hdr and the payload in iov) into dest's queue and
 * send what the window allows. The bytes are the queue's: for the caller
 * the send is done. FTC_OK, or FTC_ENOMEM (nothing queued). */
int ftc_segment_send(ftc_context_t *ctx, uint32_t dest,
                     const ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                     int iovcnt);

/* A credit from peer: count segments of ours received there so far. */
void ftc_segment_credit(ftc_context_t *ctx, uint32_t peer, uint32_t count);

/* dest was declared failed: drop what is queued for it and its partial
 * message here. */
void ftc_segment_peer_down(ftc_context_t *ctx, uint32_t peer);

/* Free everything (context teardown). */
void ftc_segment_destroy(ftc_context_t *ctx);

/*
 * A decoded message with FTC_WF_SEGMENT from hdr->sender. Returns
 *  - 1: it completed its message: *hdr and *payload now describe the
 *    whole message (FTC_WF_SEGMENT cleared), whose bytes the caller gives
 *    back with ftc_segment_release once it has handled it;
 *  - 0: kept (or swallowed, for an operation that has ended here);
 *  - a negative error: dropped (and counted).
 */
int ftc_segment_recv(ftc_context_t *ctx, ftc_wire_header_t *hdr,
                     const uint8_t **payload, uint8_t **whole);

/* Give back the whole message ftc_segment_recv returned (len: its
 * payload_len), once handled: kept for the next one, or freed. */
void ftc_segment_release(ftc_context_t *ctx, uint8_t *whole, size_t len);

/*
 * Parking. A whole message reassembled here (a large value) is not
 * handled inside the ftc_transport_recv that completed it: it waits for
 * the timer's next turn (ftc_ctx_rearm asks for one at once), so that
 * the messages the transport already holds are handed over first and a
 * keepalive probe among them is answered before this process spends
 * time proportional to the value on it (reduce, copy, send on). Until
 * then every later message from the same sender waits behind it, in
 * order, except a probe and a credit, which read no operation's state
 * that the waiting message would change. One large message is handled
 * per turn. The parked messages of a sender declared failed are dropped,
 * as the failure model allows.
 */
/* Is a message from peer waiting here? */
bool ftc_seg_state_parked_from(const ftc_context_t *ctx, uint32_t peer);
bool ftc_seg_state_has_parked(const ftc_context_t *ctx);
/* Inline: asked on every message and every settle, and there is nothing
 * parked without a segment state (none until a large message moved). */
static inline bool ftc_segment_parked_from(const ftc_context_t *ctx,
                                           uint32_t peer)
{
    return ctx->seg != NULL && ftc_seg_state_parked_from(ctx, peer);
}
static inline bool ftc_segment_has_parked(const ftc_context_t *ctx)
{
    return ctx->seg != NULL && ftc_seg_state_has_parked(ctx);
}
/* Keep the message (whole: the buffer ftc_segment_recv returned, which
 * is the queue's now; NULL: copy payload). FTC_OK or FTC_ENOMEM (dropped). */
int ftc_segment_park(ftc_context_t *ctx, const ftc_wire_header_t *hdr,
                     const uint8_t *payload, uint8_t *whole);
/* The oldest parked message, unless no_large and it is large: false when
 * none is taken. Its bytes go back with ftc_segment_release. */
bool ftc_segment_unpark(ftc_context_t *ctx, bool no_large,
                        ftc_wire_header_t *hdr, const uint8_t **payload,
                        uint8_t **buf);
/* Handle what is parked (core/dispatch.c; the timer's turn calls it). */
void ftc_dispatch_parked(ftc_context_t *ctx);

/* Bytes held in partial messages (tests check the bound). */
size_t ftc_segment_held_bytes(const ftc_context_t *ctx);
/* Bytes of segmented messages waiting to be sent, counted once however
 * many destinations share them (tests check that they are shared). */
size_t ftc_segment_queued_bytes(const ftc_context_t *ctx);

#pragma GCC visibility pop

#endif
