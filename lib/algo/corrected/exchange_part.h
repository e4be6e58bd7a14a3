/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One process's part in the exchange round of the corrected allreduce
 * (docs/corrected.md §5): send the input to every other member, keep
 * every member's input in its own slot, and, once all n are here, reduce
 * them in rank order. The order is fixed, not the order of arrival, so
 * every process that completes the exchange computes the same bits, for
 * floating point too.
 *
 * The part only gathers; what to do with a missing input (the fallback
 * to the reduce + bcast rounds) is the allreduce's business.
 *
 * State: n - 1 inputs (the others') and n flags, in the operation's
 * memory for a small value.
 */
#ifndef FTC_LIB_EXCHANGE_PART_H
#define FTC_LIB_EXCHANGE_PART_H

#include "algo/algo.h"
#include "algo/corrected/corrected.h"

#pragma GCC visibility push(hidden)
#define FTC_EXCHANGE_PART_OWN_BYTES ((size_t)64 << 10)

typedef struct ftc_exchange_part {
    ftc_cop_t *op;
    uint32_t n, me;         /* group ranks */
    const uint8_t *input;   /* this process's (the operation's copy) */
    /* n - 1 slots of op->nbytes, the others' inputs by group rank (me
     * has none). From FTC_EXCHANGE_PART_OWN_BYTES on, a block of their
     * own (heap), freed once reduced: a delivered allreduce lingers, and
     * needs none of them any more. */
    uint8_t *inputs;
    uint8_t *heap;
    uint8_t *got;           /* n flags: input in its slot */
    uint32_t pending;       /* inputs still to come */
    /* A member failed before its input arrived here: this process can
     * never complete the exchange. Final. */
    bool missing;
    bool watching;          /* holds a watch on every member not got */
} ftc_exchange_part_t;

/* Sends input to every member not known failed and watches those it
 * waits for. A member already known failed makes the part missing at
 * once, and then nothing is sent: the exchange cannot complete here. */
int ftc_exchange_part_start(ftc_exchange_part_t *xp, ftc_cop_t *op,
                            const uint8_t *input);

/* An exchange message (its round already checked). */
void ftc_exchange_part_on_msg(ftc_exchange_part_t *xp,
                              const ftc_wire_header_t *hdr,
                              const uint8_t *payload, uint32_t grank);
void ftc_exchange_part_on_failed(ftc_exchange_part_t *xp, uint32_t grank);

static inline bool ftc_exchange_part_complete(const ftc_exchange_part_t *xp)
{
    return xp->pending == 0 && !xp->missing;
}

/* out = input 0 (op) input 1 (op) ... (op) input n-1, in that order.
 * Only once complete. The others' inputs are then released: later
 * messages of the exchange are duplicates, which are not stored. */
void ftc_exchange_part_reduce(ftc_exchange_part_t *xp, uint8_t *out);

/* Stop waiting: release the watches still held. The inputs are the
 * operation's memory or freed by ftc_exchange_part_free. */
void ftc_exchange_part_destroy(ftc_exchange_part_t *xp);
/* Free the inputs' own block, if any (when the operation goes). */
void ftc_exchange_part_free(ftc_exchange_part_t *xp);

/* Bytes of operation memory ftc_exchange_part_start takes. */
size_t ftc_exchange_part_space(size_t nbytes, const ftc_group_t *g);

#pragma GCC visibility pop

#endif
