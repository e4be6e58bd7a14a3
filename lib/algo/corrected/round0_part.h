/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Round 0 of the corrected allreduce, when it has one (docs/corrected.md
 * §5): the exchange's all-to-all or the butterfly's recursive doubling.
 * Both only gather and say whether they completed, hold a member's
 * partial that can never come (missing), or neither yet; the allreduce
 * (allreduce.c) does the rest alike for both: accept the value in round
 * 0, or go to round 1 and nudge its root. This header is the one place
 * that tells the two apart.
 */
#ifndef FTC_LIB_ROUND0_PART_H
#define FTC_LIB_ROUND0_PART_H

#include "algo/corrected/butterfly_part.h"
#include "algo/corrected/exchange_part.h"

#pragma GCC visibility push(hidden)

typedef struct ftc_round0_part {
    bool butterfly; /* else the exchange (set by start, from the
                       allreduce's parameters) */
    union {
        ftc_exchange_part_t xp;
        ftc_butterfly_part_t bf;
    } u;
} ftc_round0_part_t;

/* The message kind of round 0 (the other round-0 kind is bad there). */
static inline uint8_t ftc_round0_kind(bool butterfly)
{
    return butterfly ? FTC_CORR_MSG_BUTTERFLY : FTC_CORR_MSG_EXCHANGE;
}

static inline size_t ftc_round0_space(bool butterfly, size_t nbytes,
                                      const ftc_group_t *g)
{
    return butterfly ? ftc_butterfly_part_space(nbytes, g)
                     : ftc_exchange_part_space(nbytes, g);
}

static inline int ftc_round0_start(ftc_round0_part_t *r0, bool butterfly,
                                   ftc_cop_t *op, const uint8_t *input)
{
    r0->butterfly = butterfly;
    return r0->butterfly ? ftc_butterfly_part_start(&r0->u.bf, op, input)
                         : ftc_exchange_part_start(&r0->u.xp, op, input);
}

static inline void ftc_round0_on_msg(ftc_round0_part_t *r0,
                                     const ftc_wire_header_t *hdr,
                                     const uint8_t *payload, uint32_t grank)
{
    if (r0->butterfly)
        ftc_butterfly_part_on_msg(&r0->u.bf, hdr, payload, grank);
    else
        ftc_exchange_part_on_msg(&r0->u.xp, hdr, payload, grank);
}

static inline void ftc_round0_on_failed(ftc_round0_part_t *r0, uint32_t grank)
{
    if (r0->butterfly)
        ftc_butterfly_part_on_failed(&r0->u.bf, grank);
    else
        ftc_exchange_part_on_failed(&r0->u.xp, grank);
}

static inline bool ftc_round0_missing(const ftc_round0_part_t *r0)
{
    return r0->butterfly ? r0->u.bf.missing : r0->u.xp.missing;
}

static inline bool ftc_round0_complete(const ftc_round0_part_t *r0)
{
    return r0->butterfly ? ftc_butterfly_part_complete(&r0->u.bf)
                         : ftc_exchange_part_complete(&r0->u.xp);
}

/* The value into out; only once complete. */
static inline void ftc_round0_value(ftc_round0_part_t *r0, uint8_t *out)
{
    if (r0->butterfly)
        ftc_butterfly_part_value(&r0->u.bf, out);
    else
        ftc_exchange_part_reduce(&r0->u.xp, out);
}

/* Stop waiting and free what the part holds of its own. */
static inline void ftc_round0_end(ftc_round0_part_t *r0)
{
    if (r0->butterfly) {
        ftc_butterfly_part_destroy(&r0->u.bf);
        ftc_butterfly_part_free(&r0->u.bf);
    } else {
        ftc_exchange_part_destroy(&r0->u.xp);
        ftc_exchange_part_free(&r0->u.xp);
    }
}

#pragma GCC visibility pop

#endif
