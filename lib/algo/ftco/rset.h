/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Contributor sets as sorted lists of disjoint intervals of pre-order
 * positions (preorder.h). In pre-order a subtree is one interval, so a
 * fault-free DATA's set is a single interval and each failed process
 * under it splits one more: a set costs O(1 + failures) words on the wire
 * and in memory, where a bit per rank cost n / 8 bytes in every UP and
 * every partial (8 KB at n = 65,536, which made the simulator's memory
 * grow as n^2).
 *
 * On the wire: a uint32_t count, then count pairs (lo, hi), half-open,
 * lo < hi <= n, increasing and not touching (hi < next lo), in the
 * byte order of the hosts (ftcoll runs on homogeneous clusters, as its
 * values do).
 */
#ifndef FTC_ALGO_FTCO_RSET_H
#define FTC_ALGO_FTCO_RSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ftcoll/error.h"

#pragma GCC visibility push(hidden)

typedef struct ftco_span {
    uint32_t lo, hi; /* [lo, hi) */
} ftco_span_t;

typedef struct ftco_rset {
    ftco_span_t *s;
    uint32_t count, cap;
    bool owned;        /* s came from malloc (else it is lent, or NULL) */
} ftco_rset_t;

/* Sets start zeroed (empty, nothing allocated); free what they took.
 * Inline: a set on lent room, every set of a fault-free operation, has
 * nothing to free (three calls at every operation's teardown). */
void ftco_rset_free_heap(ftco_rset_t *a);
static inline void ftco_rset_free(ftco_rset_t *a)
{
    if (a->owned) {
        ftco_rset_free_heap(a);
        return;
    }
    a->s = NULL;
    a->count = a->cap = 0;
}
/* An empty set on room for cap spans that the caller keeps (an
 * operation's memory, the stack): a set that stays within it never
 * calls malloc or free, and one that outgrows it moves to the heap. In
 * a fault-free operation every set is one span, so a span or two of
 * room make its sets free of allocation. (Inline: every operation lends
 * a few.) */
static inline void ftco_rset_lend(ftco_rset_t *a, ftco_span_t *room,
                                  uint32_t cap)
{
    a->s = room;
    a->count = 0;
    a->cap = room != NULL ? cap : 0;
    a->owned = false;
}

bool ftco_rset_has(const ftco_rset_t *a, uint32_t p);
/* Every position of a is in b / a and b share none. */
bool ftco_rset_subset(const ftco_rset_t *a, const ftco_rset_t *b);
bool ftco_rset_disjoint(const ftco_rset_t *a, const ftco_rset_t *b);
/* Sizes of the positions in [0, n) that a lacks: at most max written
 * to out, the count returned. */
uint64_t ftco_rset_missing(const ftco_rset_t *a, uint32_t n, uint32_t *out,
                           uint64_t max);

/* a |= [lo, hi), a |= b, a = b: FTC_OK or FTC_ENOMEM (a unchanged). */
int ftco_rset_add(ftco_rset_t *a, uint32_t lo, uint32_t hi);
int ftco_rset_union(ftco_rset_t *a, const ftco_rset_t *b);
int ftco_rset_copy_any(ftco_rset_t *a, const ftco_rset_t *b);
/* a = b. Inline for a set of one span where a has room, a fault-free
 * operation's every set (about nine copies per allreduce at n = 2): a
 * call and a memcpy call of 8 bytes cost ~45 instructions a copy. */
static inline int ftco_rset_copy(ftco_rset_t *a, const ftco_rset_t *b)
{
    if (b->count == 1 && a->cap >= 1) {
        a->s[0] = b->s[0];
        a->count = 1;
        return FTC_OK;
    }
    return ftco_rset_copy_any(a, b);
}

/* Wire form: its size, and writing it to out (size bytes). Inline for
 * one span, every DATA's set of a fault-free operation (a call each
 * was ~40 instructions a message). */
static inline size_t ftco_rset_wire_size(const ftco_rset_t *a)
{
    return sizeof(uint32_t) + (size_t)a->count * 2 * sizeof(uint32_t);
}
void ftco_rset_write_any(const ftco_rset_t *a, uint8_t *out);
static inline void ftco_rset_write(const ftco_rset_t *a, uint8_t *out)
{
    if (a->count != 1) {
        ftco_rset_write_any(a, out);
        return;
    }
    memcpy(out, &a->count, sizeof(uint32_t));
    memcpy(out + 4, &a->s[0].lo, sizeof(uint32_t));
    memcpy(out + 8, &a->s[0].hi, sizeof(uint32_t));
}
/* Reads a set of positions below n from the first len bytes of in into
 * *a (replacing it): FTC_OK, FTC_EINVAL for a malformed set (len not its
 * size, spans out of order, empty, touching or beyond n), FTC_ENOMEM.
 * Inline for a valid set of one span where a has room; anything else,
 * malformed sets included, gets the full reading's verdict. */
int ftco_rset_read_any(ftco_rset_t *a, const uint8_t *in, size_t len,
                       uint32_t n);
static inline int ftco_rset_read(ftco_rset_t *a, const uint8_t *in,
                                 size_t len, uint32_t n)
{
    if (len == 12 && a->cap >= 1) {
        uint32_t w[3];
        memcpy(w, in, sizeof(w));
        if (w[0] == 1 && w[1] < w[2] && w[2] <= n) {
            a->s[0] = (ftco_span_t){w[1], w[2]};
            a->count = 1;
            return FTC_OK;
        }
    }
    return ftco_rset_read_any(a, in, len, n);
}

#pragma GCC visibility pop

#endif
