/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected family's message kinds and flags: its own space on the
 * wire, under its algorithm byte (lib/wire/wire.h). The numbers are those
 * of wire version 1, where they were global.
 */
#ifndef FTC_ALGO_CORRECTED_KINDS_H
#define FTC_ALGO_CORRECTED_KINDS_H

#include <stdbool.h>

#include "wire/wire.h"

enum {
    FTC_CORR_MSG_UPCORR = 1,  /* reduce up-correction value */
    FTC_CORR_MSG_TREE_UP = 2, /* reduce tree phase: value + failure info */
    FTC_CORR_MSG_BCAST = 3,   /* bcast tree-phase copy */
    FTC_CORR_MSG_CORRECT = 4, /* bcast correction copy (flags: direction) */
    FTC_CORR_MSG_NUDGE = 5,   /* allreduce: join this round */
    FTC_CORR_MSG_EXCHANGE = 6, /* exchange allreduce, round 0: an input */
    /* butterfly allreduce, round 0: an input, a partial or the value
     * (the sender says which: butterfly_part.h) */
    FTC_CORR_MSG_BUTTERFLY = 7,
    FTC_CORR_MSG_MAX = 7
};

enum {
    FTC_CORR_WF_SUBTREE_FAILED = 1u << 8, /* TREE_UP: a failure below */
    FTC_CORR_WF_LEFT = 1u << 9,     /* CORRECT travelling to lower ranks */
    FTC_CORR_WF_RIGHT = 1u << 10,   /* CORRECT travelling to higher ranks */
    FTC_CORR_WF_ACCEPTED = 1u << 11, /* allreduce: carries an accepted value */
    /* allreduce: the sender passed a root it knows failed only from its
     * own keepalive's timeout (the receiver checks it, allreduce.c) */
    FTC_CORR_WF_TIMED_OUT = 1u << 12,
    FTC_CORR_WF_ALL = FTC_CORR_WF_SUBTREE_FAILED | FTC_CORR_WF_LEFT
                      | FTC_CORR_WF_RIGHT | FTC_CORR_WF_ACCEPTED
                      | FTC_CORR_WF_TIMED_OUT
};

/* A kind and family flags of this family (the operations' msg_valid). */
static inline bool ftc_corrected_msg_valid(const ftc_wire_header_t *hdr)
{
    return hdr->kind >= 1 && hdr->kind <= FTC_CORR_MSG_MAX
           && (hdr->flags & FTC_WF_FAMILY & ~(unsigned)FTC_CORR_WF_ALL) == 0;
}

#endif
