/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip family's message kinds and flags, its own space on the wire
 * under its algorithm byte (lib/wire/wire.h).
 */
#ifndef FTC_ALGO_GOSSIP_KINDS_H
#define FTC_ALGO_GOSSIP_KINDS_H

#include <stdbool.h>

#include "wire/wire.h"

enum {
    /* One exchange: push-sum's mass, push-flow's flow, PCF's tuple
     * <f1, f2, c, r>, then the echo trailer (echo.h: the message's
     * sequence number on the link and the receiver's it echoes). A push
     * moved mass to the receiver; a sync (the SYNC flag) only restates
     * the sender's flows, to end a link cleanly. */
    FTC_GOSSIP_MSG_FLOW = 1
};

enum {
    FTC_GOSSIP_WF_DONE = 1u << 8,     /* the sender has delivered */
    FTC_GOSSIP_WF_SAW_DONE = 1u << 9, /* ... and has seen the receiver's
                                         DONE: it needs nothing more */
    FTC_GOSSIP_WF_SYNC = 1u << 10,    /* no mass moved (see above) */
    FTC_GOSSIP_WF_WANT = 1u << 11,    /* the sender still waits for the
                                         receiver's DONE or SAW_DONE, or
                                         (push-flow) for its echo of the
                                         sender's last push, which holds
                                         the next: a delivered receiver
                                         answers */
    FTC_GOSSIP_WF_ANSWER = 1u << 12,  /* sent by a stopped process in
                                         answer to a message: never
                                         answered in turn by another
                                         stopped one */
    FTC_GOSSIP_WF_RECOVER = 1u << 13, /* a push carrying mass a failure
                                         displaced: by a delivered
                                         process iterating again after
                                         one, or by one still iterating
                                         that lost a neighbour. Only
                                         such a push wakes a delivered
                                         process (op.c, maybe_wake) */
    FTC_GOSSIP_WF_UNSETTLED = 1u << 14 /* the sender has not delivered
                                         and pushes of its that no
                                         neighbour has echoed yet, made
                                         while its estimate was
                                         elsewhere, could still move the
                                         aggregate: its agreement says
                                         nothing yet (op.c,
                                         neighbour_unsettled) */
};

static inline bool ftc_gossip_msg_valid(const ftc_wire_header_t *hdr)
{
    return hdr->kind == FTC_GOSSIP_MSG_FLOW
           && (hdr->flags & FTC_WF_FAMILY
               & ~(unsigned)(FTC_GOSSIP_WF_DONE | FTC_GOSSIP_WF_SAW_DONE
                             | FTC_GOSSIP_WF_SYNC | FTC_GOSSIP_WF_WANT
                             | FTC_GOSSIP_WF_ANSWER
                             | FTC_GOSSIP_WF_RECOVER
                             | FTC_GOSSIP_WF_UNSETTLED))
                  == 0;
}

#endif
