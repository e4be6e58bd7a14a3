/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sending: an operation's messages and the core's control messages, encoded
 * and handed to the transport; the outstanding sends the backend completes
 * later.
 */
#ifndef FTC_CORE_SEND_H
#define FTC_CORE_SEND_H

#include "core/op.h"

#pragma GCC visibility push(hidden)

/* Send a message of this operation to group rank dest. payload may be
 * split in up to three parts that are concatenated. When notify is set the
 * operation's on_send_done runs after the send completes (on a later
 * turn). Returns FTC_OK or a negative error (dest then counts as failed). */
typedef struct ftc_iov {
    const void *base;
    size_t len;
} ftc_iov_t;

int ftc_cop_send(ftc_cop_t *op, uint32_t dest, ftc_wire_header_t *hdr,
                const ftc_iov_t *iov, int iovcnt, bool notify);

/* The same message, as ftc_cop_send without notify, to count group ranks
 * from first on, modulo the group's size (first, first + 1, ...). A
 * small message is encoded once, its MAC or checksum computed once, and
 * its bytes copied for the other destinations, where a send each would
 * hash it again for every one (the exchange sends its input to all n - 1
 * peers: docs/latency.md, "Twelfth round"). Every destination is sent
 * to whatever the others' verdicts, as a loop of ftc_cop_send would;
 * returns the last one's. */
int ftc_cop_send_ring(ftc_cop_t *op, uint32_t first, uint32_t count,
                      ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                      int iovcnt);

/* As ftc_cop_send (no notify), for a message whose answer the operation
 * times: *left is true when the send completed at once (or failed),
 * else the operation's on_sent(dest) runs when it completes. A payload
 * sent in segments counts as left when queued. */
int ftc_cop_send_timed(ftc_cop_t *op, uint32_t dest, ftc_wire_header_t *hdr,
                       const ftc_iov_t *iov, int iovcnt, bool *left);

/* Fill the fields every message of op carries; kind is in its family's
 * space (lib/wire/wire.h). Inline: every message of every family does
 * it, just before ftc_cop_send. */
static inline void ftc_cop_header(const ftc_cop_t *op, ftc_wire_header_t *hdr,
                                  uint8_t kind, uint32_t word)
{
    *hdr = (ftc_wire_header_t){
        .kind = (uint8_t)kind,
        .algo = (uint8_t)op->args.algo,
        .coll = (uint8_t)op->coll,
        .flags = op->wire_flags,
        .group_id = op->group->id,
        .epoch = op->group->epoch,
        .seq = op->seq,
        .word = word,
        .signature = op->signature,
    };
}

/* Control messages: about names the operation (NULL: none). */
int ftc_ctx_send_control(ftc_context_t *ctx, uint32_t dest,
                         ftc_msg_kind_t kind, const ftc_watch_t *about,
                         uint32_t word);
int ftc_ctx_send_control_ex(ftc_context_t *ctx, uint32_t dest,
                            ftc_msg_kind_t kind, const ftc_watch_t *about,
                            uint32_t word, uint16_t flags, uint32_t aux);
/* The same, carrying what op is here (collective, algorithm, signature)
 * when op is not NULL. */
int ftc_ctx_send_control_op(ftc_context_t *ctx, uint32_t dest,
                            ftc_msg_kind_t kind, const ftc_watch_t *about,
                            uint32_t word, uint16_t flags, uint32_t aux,
                            const ftc_cop_t *op);

/* A keepalive probe about op (NULL: none named), carrying what op is
 * here (collective, algorithm, signature) for the peer to compare. */
int ftc_ctx_send_probe(ftc_context_t *ctx, uint32_t dest,
                       const ftc_watch_t *about, uint32_t word,
                       const ftc_cop_t *op);

/* g is going away: its operations' outstanding sends no longer notify. */
void ftc_send_forget_group(ftc_context_t *ctx, const ftc_group_t *g);
/* ctx is going away: free every outstanding send record. */
void ftc_send_free_all(ftc_context_t *ctx);

#pragma GCC visibility pop

#endif
