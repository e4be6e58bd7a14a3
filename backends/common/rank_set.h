/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A set of ranks with work pending (peers whose send queue is not empty),
 * so that progress visits those and not every peer. Each rank is in it
 * at most once; room for every rank is taken up front, so adding never
 * allocates while an operation runs.
 */
#ifndef FTC_BK_RANK_SET_H
#define FTC_BK_RANK_SET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ftc_bk_rank_set {
    uint32_t *ranks;            /* members, in no particular order */
    bool *member;               /* by rank */
    uint32_t count;
} ftc_bk_rank_set_t;

/* 0, or -1 when out of memory (s is then safe to fini). */
int ftc_bk_rank_set_init(ftc_bk_rank_set_t *s, uint32_t nranks);
void ftc_bk_rank_set_fini(ftc_bk_rank_set_t *s);

/* Add r; nothing if it is a member already. */
void ftc_bk_rank_set_add(ftc_bk_rank_set_t *s, uint32_t r);

/*
 * Call visit for each member. It returns what it did (the sweep returns
 * the sum) and sets *keep to false when r has nothing pending any more:
 * r then leaves the set. visit may add ranks.
 */
int ftc_bk_rank_set_sweep(ftc_bk_rank_set_t *s,
                          int (*visit)(void *arg, uint32_t r, bool *keep),
                          void *arg);

#endif
