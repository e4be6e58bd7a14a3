/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Early messages: what a group keeps for operations that have not started
 * here yet, under a budget per source.
 *
 * A peer may legitimately run ahead of this process (a bcast root loops,
 * an allreduce member starts the next operation while we still deliver
 * this one), so its messages for operations not started here are kept
 * until they start, and replayed then. Kept without bound, they would let
 * a peer far ahead, or anyone who can speak for one, grow this process
 * without end. So each (group, source) pair may have at most
 * cfg.pending_max_msgs messages and cfg.pending_max_bytes bytes (payload
 * plus the record's own size) waiting here; a whole group at most n - 1
 * times that.
 *
 * A source that would exceed its budget is not dropped from: the
 * corrected family never retransmits, so a lost early message is a lost
 * contribution (a wrong result) or a wait for ever. Nor can it be
 * throttled: its later messages for the operation we are waiting in may
 * be behind the early ones on the same connection. It is excluded
 * instead, as a process that stopped: declared failed here (final), told
 * so (FTC_MSG_EXCLUDED, aux FTC_EXCLUDED_OVER_BUDGET), and its early
 * messages in every group freed at once. Its operations end with
 * FTC_EEXCLUDED; ours complete around it as around a crash, which the
 * failure model already makes consistent. Running farther ahead than the
 * budget is the usage limit docs/api.md states (docs/decisions.md,
 * "Early messages").
 */
#ifndef FTC_CORE_PENDING_H
#define FTC_CORE_PENDING_H

#include <stdint.h>

#include "core/group.h"

#pragma GCC visibility push(hidden)

/* One source's early messages in one group. */
struct ftc_pending_src {
    uint32_t src;           /* world rank */
    uint32_t msgs;
    uint64_t bytes;
};

/* A copy of the message (hdr and its payload) from world rank src, not
 * linked anywhere; NULL when out of memory. */
ftc_pending_msg_t *ftc_pending_msg_new(const ftc_wire_header_t *hdr,
                                       const uint8_t *payload, uint32_t src);

/* What a kept message costs its source's budget. */
static inline uint64_t ftc_pending_cost(const ftc_pending_msg_t *m)
{
    return sizeof(*m) + (uint64_t)m->hdr.payload_len;
}

/* Keep hdr (an operation of g not started here) from world rank src.
 * FTC_OK kept; FTC_EBADMSG src is not a member (dropped, counted);
 * FTC_ENOMEM; FTC_ESTALE src was over its budget and is excluded now (the
 * message dropped with everything else it had kept here). */
int ftc_pending_keep(ftc_group_t *g, const ftc_wire_header_t *hdr,
                     const uint8_t *payload, uint32_t src);

/* A family's answer to a message kept for an operation (or a group) not
 * started here (lib/algo/registry.c asks the family named by hdr->algo;
 * most answer nothing). The ftco family's processes say they are alive,
 * so a late starter is not taken for a failed one (docs/ftco.md). */
void ftc_algo_answer_early(ftc_context_t *ctx, const ftc_wire_header_t *hdr);
/* Whether that answer is all hdr needs: it is answered, not kept. */
bool ftc_algo_answered_early_only(const ftc_wire_header_t *hdr);

/* m (kept by g) leaves g->pending: replayed or discarded. Unlinking and
 * freeing it are the caller's. */
void ftc_pending_forget(ftc_group_t *g, const ftc_pending_msg_t *m);

/* An orphan (kept before g existed) joins g->pending: it counts against
 * its source's budget from now on, without a check (the orphans' own
 * bound held it). */
void ftc_pending_adopt(ftc_group_t *g, ftc_pending_msg_t *m);

/* How long a message of src for a not-started operation of g may still
 * be (payload bytes) within src's budget: the bound on the total a first
 * segment may declare (core/segment.c). 0 when no message fits. */
uint64_t ftc_pending_room(const ftc_group_t *g, uint32_t src);

/* src would exceed its budget in g: exclude it (see above). */
void ftc_pending_over_budget(ftc_group_t *g, uint32_t src);

/* Free g's accounting (group teardown; the messages are freed apart). */
void ftc_pending_destroy(ftc_group_t *g);

/* What src has kept in g now (tests check the bound). */
void ftc_pending_held(const ftc_group_t *g, uint32_t src, uint32_t *msgs,
                      uint64_t *bytes);

#pragma GCC visibility pop

#endif
