/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tree family's message kinds and flags: its own space on the wire,
 * under its algorithm byte (lib/wire/wire.h). The numbers are those of
 * wire version 1, where they were global.
 */
#ifndef FTC_ALGO_TREE_KINDS_H
#define FTC_ALGO_TREE_KINDS_H

#include <stdbool.h>

#include "wire/wire.h"

enum {
    FTC_TREE_MSG_UP = 2,      /* reduce: a subtree's value */
    FTC_TREE_MSG_DOWN = 3,    /* bcast: the value */
    FTC_TREE_MSG_ABORT = 6    /* the collective failed */
};

enum {
    FTC_TREE_WF_SUBTREE_FAILED = 1u << 8 /* UP: a failure below */
};

static inline bool ftc_tree_msg_valid(const ftc_wire_header_t *hdr)
{
    return (hdr->kind == FTC_TREE_MSG_UP || hdr->kind == FTC_TREE_MSG_DOWN
            || hdr->kind == FTC_TREE_MSG_ABORT)
           && (hdr->flags & FTC_WF_FAMILY
               & ~(unsigned)FTC_TREE_WF_SUBTREE_FAILED) == 0;
}

#endif
