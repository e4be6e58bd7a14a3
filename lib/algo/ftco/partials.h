/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exactly-once aggregation (the paper's note on line 16 of Algorithm 2).
 *
 * When DATA is re-routed around a failed node, the same contribution can
 * reach a process twice: a child that got no ACK from its parent sends its
 * value to the grandparent, although the parent may have passed it on
 * before it failed. An idempotent operator would not mind; a sum would
 * count it twice. So every value going up carries its contributor set (the
 * pre-order positions of its contributors, as intervals: rset.h), and a
 * process keeps the values it received as
 * separate partials until it sends up:
 *
 *   - a value whose set is inside what is held already is a duplicate;
 *   - a value whose set contains held partials replaces them (the failed
 *     parent's value arrived after its children's, re-routed);
 *   - otherwise the sets are disjoint and the value is added.
 *
 * Sets built this way form a laminar family (a value only goes to the
 * sender's ancestors, and a process's set is fixed once sent), so a set
 * that overlaps a held one without containing it cannot happen; if it
 * did, the value is refused and counted, never folded in twice.
 *
 * Memory: O(partials x (value + intervals)), the partials being at most
 * the process's children plus the ones re-routed to it, and a set's
 * intervals one plus the failed processes under it.
 */
#ifndef FTC_ALGO_FTCO_PARTIALS_H
#define FTC_ALGO_FTCO_PARTIALS_H

#include "core/op.h"
#include "algo/ftco/rset.h"

#pragma GCC visibility push(hidden)

typedef struct ftco_partials {
    size_t nbytes;      /* bytes of a value */
    uint32_t count, cap;
    ftco_rset_t *sets;  /* count sets */
    uint8_t *vals;      /* count values of nbytes */
    bool sets_owned, vals_owned; /* from malloc (else lent: init) */
    ftco_rset_t cover;  /* what is counted: the union of the sets, and
                           the positions added by ftco_partials_cover_add;
                           read it through ftco_partials_cover */
    /* The one-span fast case (ftco_partials_merge): every held set is
     * one span (one_span), the cover holds nothing besides the sets
     * (!cover_extra), and a value disjoint from every held set is added
     * without writing the cover, which is then out of date (cover_stale)
     * until it is read. A fault-free operation's every set is one span
     * (a subtree: rset.h), so its merges never touch the cover, which
     * try_up reads once. */
    bool one_span, cover_extra, cover_stale;
    bool heap_sets;     /* a set may have moved to the heap (free walks) */
    uint32_t conflicts; /* values refused for a partial overlap */
} ftco_partials_t;

/* Bytes of room for cap partials of nbytes (ftco_partials_init). */
size_t ftco_partials_room(size_t nbytes, uint32_t cap);
/* Room for cap partials: FTC_OK or FTC_ENOMEM. With room (of
 * ftco_partials_room(nbytes, cap) bytes, aligned for any type, kept by
 * the caller until ftco_partials_free: an operation's own memory) the
 * values, the sets and a few spans of each set and of the cover start
 * there, so a fault-free operation's partials take no allocation (sets
 * that grow later may still keep spans in it); with NULL, from malloc. */
int ftco_partials_init(ftco_partials_t *p, size_t nbytes, uint32_t cap,
                       void *room);
void ftco_partials_free_heap(ftco_partials_t *p);
/* Inline: partials on their lent room, a fault-free operation's, have
 * nothing to free. */
static inline void ftco_partials_free(ftco_partials_t *p)
{
    if (p->heap_sets || p->sets_owned || p->vals_owned || p->cover.owned) {
        ftco_partials_free_heap(p);
        return;
    }
    p->sets = NULL;
    p->vals = NULL;
    p->count = p->cap = 0;
    ftco_rset_free(&p->cover);
}

/* Take a value with contributor set set: 1 if it added something, 0 if a
 * duplicate or refused, FTC_ENOMEM. */
int ftco_partials_merge(ftco_partials_t *p, const ftco_rset_t *set,
                        const void *val);

/* The cover brought up to date (the fast case leaves it stale): what
 * ftco_partials_merge counted so far, and what cover_add added. NULL when
 * out of memory. */
const ftco_rset_t *ftco_partials_cover(ftco_partials_t *p);
/* Whether position pos is counted (in the cover), without bringing the
 * cover up to date: in the fast case the held sets are its spans. */
bool ftco_partials_has(const ftco_partials_t *p, uint32_t pos);
/* Count positions [lo, hi) without a value (a bcast gather's "no
 * value"): FTC_OK or FTC_ENOMEM. The fast case ends for good. */
int ftco_partials_cover_add(ftco_partials_t *p, uint32_t lo, uint32_t hi);

/* Fold the partials into out (nbytes) with op's operator. */
void ftco_partials_fold(const ftco_partials_t *p, const ftc_cop_t *op,
                        void *out);

#pragma GCC visibility pop

#endif
