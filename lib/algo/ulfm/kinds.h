/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm family's message kinds: its own space on the wire, under its
 * algorithm byte (lib/wire/wire.h). All are the agreement's (agree.c,
 * early.c); invalidation travels as the core's group stop. The word field
 * carries the sender's ballot, or in the early round the step; no family
 * flag is used.
 */
#ifndef FTC_ALGO_ULFM_KINDS_H
#define FTC_ALGO_ULFM_KINDS_H

#include <stdbool.h>

#include "wire/wire.h"

enum {
    MSG_GATHER = 1,  /* up: AND, failed set, highest accepted proposal */
    MSG_PROPOSE = 2, /* down: the coordinator's proposal (value, failed) */
    MSG_ACK = 3,     /* up: the subtree accepted it */
    MSG_DECIDE = 4,  /* down, and to anyone who asks: the decision */
    MSG_NEWER = 5,   /* "move to ballot word": the coordinator is gone,
                        or (from the early round) a member left it */
    /* The early round (early.c); word: the step. */
    MSG_EARLY_AND = 6,     /* round 1: the AND of the sender's block */
    MSG_EARLY_CONFIRM = 7  /* round 2: the sender's block all accepted */
};

static inline bool ftc_ulfm_msg_valid(const ftc_wire_header_t *hdr)
{
    return hdr->kind >= MSG_GATHER && hdr->kind <= MSG_EARLY_CONFIRM
           && (hdr->flags & FTC_WF_FAMILY) == 0;
}

#endif
