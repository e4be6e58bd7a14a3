/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One process's part in one corrected-tree broadcast
 * (docs/corrected.md §1-2): the tree phase on an interleaved tree, then
 * correction along the rank ring, either opportunistic (the next d ranks)
 * or checked (both directions until heard from f+1 correctors on each
 * side, which tolerates f correctors failing mid-correction, 3.3). Every
 * process that holds the value corrects, and forwards down its own subtree
 * even when its first copy came from a correction, so an orphaned subtree
 * is recovered through its own edges.
 *
 * The payload is opaque bytes; the owner validates and interprets them.
 */
#ifndef FTC_LIB_BCAST_PART_H
#define FTC_LIB_BCAST_PART_H

#include "algo/algo.h"
#include "algo/corrected/corrected.h"

#pragma GCC visibility push(hidden)

typedef struct ftc_bcast_part ftc_bcast_part_t;

typedef struct ftc_bcast_hooks {
    bool (*valid)(ftc_bcast_part_t *bp, const uint8_t *blob, uint32_t len);
    void (*on_value)(ftc_bcast_part_t *bp);       /* first copy (once) */
    void (*on_root_failed)(ftc_bcast_part_t *bp); /* root died, no copy */
    void (*on_idle)(ftc_bcast_part_t *bp);        /* correction finished */
} ftc_bcast_hooks_t;

struct ftc_bcast_part {
    ftc_cop_t *op;
    const ftc_bcast_hooks_t *hooks;
    void *owner;
    uint32_t round;
    uint32_t root;          /* group rank */
    uint32_t n, me;         /* me is logical */
    ftc_tree_t tree;
    const uint32_t *children;   /* the group's plan (algo/plan.h) */
    uint32_t nchildren;
    ftc_correction_t corr;
    uint32_t d;             /* opportunistic distance */
    uint32_t t;             /* checked: correctors to hear from per side */

    bool has;
    uint8_t *blob;
    uint32_t len;
    bool watching_root;
    bool root_failed;

    bool correcting, idle, in_flight, stopped;
    uint32_t next_off;      /* opportunistic: next offset to the right */
    uint32_t sent[2];       /* checked: distance covered, 0 left, 1 right */
    uint32_t *heard[2];     /* the t smallest distances heard, sorted */
    uint32_t nheard[2];
    uint32_t corrections_sent;
};

/* blob non-NULL at the root only. */
int ftc_bcast_part_start(ftc_bcast_part_t *bp, ftc_cop_t *op,
                         const ftc_bcast_hooks_t *hooks, void *owner,
                         uint32_t round, uint32_t root, const uint8_t *blob,
                         uint32_t len);
void ftc_bcast_part_on_msg(ftc_bcast_part_t *bp, const ftc_wire_header_t *hdr,
                           const uint8_t *payload, uint32_t grank);
void ftc_bcast_part_on_failed(ftc_bcast_part_t *bp, uint32_t grank);
void ftc_bcast_part_on_send_done(ftc_bcast_part_t *bp);
/* A member waiting on us: if we hold the value, send it a copy. */
void ftc_bcast_part_on_probe(ftc_bcast_part_t *bp, uint32_t grank);
/* Stop correcting and waiting (the owner moved on). */
void ftc_bcast_part_stop(ftc_bcast_part_t *bp);
/* Stop (buffers are the operation's memory). */
void ftc_bcast_part_destroy(ftc_bcast_part_t *bp);

/* Bytes of operation memory ftc_bcast_part_start takes, with a value of
 * len bytes (an estimate: ftc_cop_alloc copes with more). */
size_t ftc_bcast_part_space(const ftc_coll_args_t *args,
                            const ftc_corrected_params_t *params,
                            const ftc_group_t *g,
                            size_t len);

#pragma GCC visibility pop

#endif
