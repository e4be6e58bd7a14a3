/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One process's part in the butterfly round of the corrected allreduce
 * (docs/corrected.md §5.6): recursive doubling as round 0, in place of
 * the exchange's all-to-all.
 *
 * With P = 2^floor(log2 n) and e = n - P, rank 2i+1 (i < e) is an
 * "extra": it sends its input to its twin 2i and waits for the final
 * value's bytes from it. The P "core" members (the even ranks below 2e,
 * every rank from 2e on, renumbered in order: core rank v) run log2 P
 * sub-rounds; in sub-round k, v sends its partial to v XOR 2^k and the
 * new partial is (lower half's) op (upper half's). A twin 2i starts from
 * in[2i] op in[2i+1]. So every partial is a fixed function of its block's
 * inputs, computed with the same operands in the same order wherever it
 * is computed: every process that completes holds the same bits, for
 * floating point too, whatever the order of arrival.
 *
 * A message's sender names its slot (each peer sends this process one
 * message per operation: the twin its input or the final value, the
 * sub-round-k partner its partial of sub-round k), so a partial of a
 * later sub-round that comes early waits in its slot.
 *
 * As the exchange part, it only gathers; a missing partial (the fallback
 * to the reduce + bcast rounds) is the allreduce's business.
 */
#ifndef FTC_LIB_BUTTERFLY_PART_H
#define FTC_LIB_BUTTERFLY_PART_H

#include "algo/algo.h"
#include "algo/corrected/corrected.h"

#pragma GCC visibility push(hidden)
/* From this value size on, the slots take a block of their own (heap),
 * freed once the value is out: a delivered allreduce lingers. */
#define FTC_BUTTERFLY_PART_OWN_BYTES ((size_t)64 << 10)
/* Up to this many members the butterfly watches every member while it
 * runs, as the exchange does, not only the peers it hears from: a member
 * cut off from the group then times out, and notifies, every member,
 * each of which refutes its notice and counts it failed before the
 * rounds that follow take its word (docs/corrected.md §5.7), and every
 * member gets its own report of a failure. Above it the watches'
 * n - 1 per operation (each found by a walk of the watches) cost more
 * than the butterfly saves, and it watches its peers only. */
#define FTC_BUTTERFLY_WATCH_ALL_MAX 16u
/* (The members are a mask of group ranks: ftc_monitor_acquire_members.) */
_Static_assert(FTC_BUTTERFLY_WATCH_ALL_MAX < 32, "a uint32_t mask");

typedef struct ftc_butterfly_part {
    ftc_cop_t *op;
    uint32_t n, me;         /* group ranks */
    uint32_t extras;        /* e: pairs folded before the butterfly */
    uint32_t steps;         /* log2 P; 0 at an extra (it only waits) */
    uint32_t vrank;         /* core rank, or UINT32_MAX at an extra */
    uint32_t twin;          /* 2i+1 at a core 2i < 2e, 2i at an extra 2i+1,
                               else UINT32_MAX */
    uint32_t step;          /* sub-round in progress; steps: all done */
    uint32_t sent;          /* sub-rounds whose partial has been sent */
    const uint8_t *input;   /* this process's (the operation's copy) */
    /* The partial so far; at an extra, the final value's slot. */
    uint8_t *acc;
    /* Slot k < steps: the sub-round-k partner's partial; slot steps: the
     * twin's message (its input at a core, the value at an extra). */
    uint8_t *slots;
    uint8_t *heap;          /* acc and slots, for a large value */
    uint64_t got;           /* slots filled (bit k) */
    uint64_t want;          /* slots this process waits for */
    bool folded;            /* a core twin: in[2i] op in[2i+1] is in acc */
    bool done;              /* the value is in acc (and sent to the twin) */
    /* A member failed before its message arrived here: this process can
     * never complete the butterfly. Final. */
    bool missing;
    bool watching;          /* holds a watch on every peer not got */
    /* The members that are not peers, as group ranks (bit r), while this
     * part watches them as well (n <= FTC_BUTTERFLY_WATCH_ALL_MAX, until
     * done; else 0): such a member's failure makes the part missing, as
     * any member's makes the exchange's. */
    uint32_t others;
} ftc_butterfly_part_t;

/* Starts: sends what it can and watches every peer it will hear from
 * (every member, up to FTC_BUTTERFLY_WATCH_ALL_MAX).
 * A member already known failed makes the part missing at once, and
 * then nothing is sent (as the exchange: round 0 cannot complete). */
int ftc_butterfly_part_start(ftc_butterfly_part_t *bf, ftc_cop_t *op,
                             const uint8_t *input);

/* A butterfly message (its round already checked). */
void ftc_butterfly_part_on_msg(ftc_butterfly_part_t *bf,
                               const ftc_wire_header_t *hdr,
                               const uint8_t *payload, uint32_t grank);
void ftc_butterfly_part_on_failed(ftc_butterfly_part_t *bf, uint32_t grank);

static inline bool ftc_butterfly_part_complete(const ftc_butterfly_part_t *bf)
{
    return bf->done && !bf->missing;
}

/* out = the butterfly's value. Only once complete. The slots are then
 * released: later copies are duplicates, which are not stored. */
void ftc_butterfly_part_value(ftc_butterfly_part_t *bf, uint8_t *out);

/* Stop waiting: release the watches still held. */
void ftc_butterfly_part_destroy(ftc_butterfly_part_t *bf);
/* Free the slots' own block, if any (when the operation goes). */
void ftc_butterfly_part_free(ftc_butterfly_part_t *bf);

/* For the property checker's mutation tests (tests/test_properties.c,
 * --mutant) only, 0 otherwise: each breaks one thing the butterfly's one
 * value rests on, and the checker must then fail. */
enum {
    FTC_BUTTERFLY_MUTANT_NONE = 0,
    /* Core rank 0 refolds its value as in[0] op (p0 op (p1 op ...)),
     * right to left over its partners' partials: the same inputs in
     * another association, other last bits for floating point. */
    FTC_BUTTERFLY_MUTANT_REASSOCIATE = 1,
    /* The last sub-round's partial is received and not folded. */
    FTC_BUTTERFLY_MUTANT_SKIP_LAST = 2
};
extern int ftc_butterfly_mutant;

/* Bytes of operation memory ftc_butterfly_part_start takes at this
 * process of g. */
size_t ftc_butterfly_part_space(size_t nbytes, const ftc_group_t *g);

#pragma GCC visibility pop

#endif
