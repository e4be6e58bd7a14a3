/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's message kinds and flags, in its own space under its
 * algorithm byte (lib/wire/wire.h). The paper's three messages, DATA
 * (split here by direction), KEEPALIVE and ACK, and the multi-root roots'
 * exchange of their trees' values; the flags say what an ACK
 * acknowledges, which KEEPALIVE is a replacement root's gather and which
 * DOWN wants no ACK.
 */
#ifndef FTC_ALGO_FTCO_KINDS_H
#define FTC_ALGO_FTCO_KINDS_H

#include <stdbool.h>

#include "wire/wire.h"

enum {
    FTCO_MSG_UP = 1,        /* DATA towards the root: contributor set, value */
    FTCO_MSG_DOWN = 2,      /* DATA from the root: (set,) value */
    FTCO_MSG_ACK = 3,       /* the receiver has taken a DATA or a gather */
    FTCO_MSG_KEEPALIVE = 4, /* "I wait on you": answered with what it needs */
    FTCO_MSG_EXCH = 5       /* multi-root allreduce: a root's own tree's
                               contributor set and value, to every other
                               root (exchange.h); never ACKed */
};

enum {
    FTCO_WF_ACK_UP = 1u << 8,     /* ACK of an UP */
    FTCO_WF_ACK_DOWN = 1u << 9,   /* ACK of a DOWN */
    FTCO_WF_NOVALUE = 1u << 10,   /* ACK of a bcast gather: no value here */
    FTCO_WF_GATHER = 1u << 11,    /* KEEPALIVE of a replacement root;
                                     multi-root allreduce: its payload
                                     names the roots it counts failed
                                     (gather_roots.h) */
    FTCO_WF_ROOT_LOST = 1u << 12, /* bcast DOWN: the root's value reached
                                     no live process; no value */
    FTCO_WF_PING = 1u << 13,      /* KEEPALIVE of a per-message timeout:
                                     answered with an ACK, nothing else */
    FTCO_WF_NO_ACK = 1u << 14     /* allreduce DOWN to a leaf: the sender
                                     waits for no ACK, send none */
};

#define FTCO_WF_ALL                                                       \
    (FTCO_WF_ACK_UP | FTCO_WF_ACK_DOWN | FTCO_WF_NOVALUE | FTCO_WF_GATHER  \
     | FTCO_WF_ROOT_LOST | FTCO_WF_PING | FTCO_WF_NO_ACK)

static inline bool ftco_msg_valid(const ftc_wire_header_t *hdr)
{
    return hdr->kind >= FTCO_MSG_UP && hdr->kind <= FTCO_MSG_EXCH
           && (hdr->flags & FTC_WF_FAMILY & ~(unsigned)FTCO_WF_ALL) == 0;
}

#endif
