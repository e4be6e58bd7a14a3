/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The multi-root allreduce's exchange (Margolin & Barak 5.2.1): the m
 * roots of a multi-root tree send their own trees' values to each other,
 * and each root that holds all m combines them itself, instead of sending
 * them to rank 0 and waiting for the result to come back down.
 *
 * This file is the store a root keeps of the values it was sent: one slot
 * per root (a contributor set and a value, as an UP carries), and the one
 * fold every root computes from a full store. The fold goes through the
 * slots in root order 0, 1, ..., m - 1, whatever order they arrived in,
 * so roots that hold the same m values compute bit-identical results
 * even for floating-point or user operators. When the exchange's result
 * may be delivered, and what happens when a root fails before its value
 * is in, is the protocol's business (ftco.c; docs/ftco.md argues it).
 *
 * Memory: m slots of a value and an interval list each, at the m roots
 * only (m = k, the tree's radix: O(degree), as everything else an ftco
 * operation keeps).
 */
#ifndef FTC_ALGO_FTCO_EXCHANGE_H
#define FTC_ALGO_FTCO_EXCHANGE_H

#include <stdbool.h>

#include "core/op.h"
#include "algo/ftco/rset.h"

#pragma GCC visibility push(hidden)

typedef struct ftco_exchange {
    uint32_t m;         /* roots; 0: no exchange */
    uint32_t filled;    /* slots that hold a value */
    size_t nbytes;      /* bytes of a value */
    bool *have;         /* m flags */
    ftco_rset_t *sets;  /* m contributor sets */
    uint8_t *vals;      /* m values of nbytes */
} ftco_exchange_t;

/* Room for m slots: FTC_OK or FTC_ENOMEM (then nothing is held). */
int ftco_exchange_init(ftco_exchange_t *x, uint32_t m, size_t nbytes);
void ftco_exchange_free(ftco_exchange_t *x);

/* Root j's value, with its contributor set: 1 if the slot was empty and
 * now holds it, 0 if it held one already (a root sends its value once;
 * a second copy is ignored), FTC_EINVAL for j >= m, FTC_ENOMEM. */
int ftco_exchange_put(ftco_exchange_t *x, uint32_t j, const ftco_rset_t *set,
                      const void *val);

static inline bool ftco_exchange_has(const ftco_exchange_t *x, uint32_t j)
{
    return j < x->m && x->have[j];
}

static inline bool ftco_exchange_full(const ftco_exchange_t *x)
{
    return x->m > 0 && x->filled == x->m;
}

/* A full store's result: out = v0 (+) v1 (+) ... (+) v(m-1) with op's
 * operator, and *set the union of the slots' sets. FTC_OK, FTC_ENOMEM
 * (*set unchanged), FTC_EINVAL when the store is not full or two slots'
 * sets overlap (a contribution would count twice: never folded). */
int ftco_exchange_fold(const ftco_exchange_t *x, const ftc_cop_t *op,
                       void *out, ftco_rset_t *set);

/* For the property checker's mutation tests (tests/test_ftco_properties.c,
 * --mutant) only, 0 otherwise: each drops one rule that keeps the
 * exchange's results consistent, and the checker must then fail. */
enum {
    FTCO_MUTANT_NONE = 0,
    FTCO_MUTANT_KEEP_VALUES = 1, /* rank 0 falls back on the values it
                                    holds and asks no root that sent one */
    FTCO_MUTANT_NO_COMMIT = 2,   /* a root that answered a gather (its DATA
                                    goes to the gatherer all the same) may
                                    still deliver from the exchange */
    FTCO_MUTANT_NO_GATHER_ROOTS = 3 /* whoever answers a gather ignores the
                                       roots it names (gather_roots.h) */
};
extern int ftco_exchange_mutant;

/* Forget every value (the exchange was abandoned): the slots are empty
 * again and stay allocated. */
void ftco_exchange_clear(ftco_exchange_t *x);

#pragma GCC visibility pop

#endif
