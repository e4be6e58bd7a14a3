/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one ftco operation knows about each process it deals with: its
 * flags, and its per-message deadline. Only the processes the operation
 * touches have an entry (its parent, its children, whoever is re-routed
 * to it or pulls from it, the failed ones it learns of), so an operation
 * takes O(degree) memory, not O(n): at n = 65,536 an array per rank in
 * every process would make the simulator's memory grow as n^2.
 *
 * Entries sit in insertion order in one array (loops over "every process
 * with flag F" walk it) and are found by logical rank through an
 * open-addressed index. Inserting may move the array: hold an index, not
 * a pointer, across anything that can insert.
 */
#ifndef FTC_ALGO_FTCO_PEERS_H
#define FTC_ALGO_FTCO_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef struct ftco_peer {
    uint32_t rank;     /* logical */
    uint8_t flag;      /* ftco.c's F_* */
    uint8_t tstate;    /* ftco.c's T_* */
    uint8_t eta;       /* f_ETA(rank) / the timeout base; 0: not computed
                          yet */
    uint8_t recheck;   /* its watch is to be acquired or released at
                          the end of the event (ftco.c's
                          settle_watches) */
    uint32_t pos1;     /* its pre-order position + 1 (preorder.h); 0:
                          not computed yet */
    uint32_t tunits;   /* f_timeout(me, rank) / the timeout base; 0: not
                          computed yet (or too large to keep) */
    uint64_t deadline; /* with tstate: when it is due */
} ftco_peer_t;

typedef struct ftco_peers {
    ftco_peer_t *at;   /* count entries, in order of insertion */
    uint32_t count, cap;
    uint32_t *index;   /* slots: entry + 1, 0 for empty; a power of two */
    uint32_t slots;
    bool at_owned, index_owned; /* from malloc (else lent: peers_init) */
    bool nomem;        /* an insertion failed: the operation must end */
} ftco_peers_t;

/* Bytes of room for about expect entries (ftco_peers_init). */
size_t ftco_peers_room(uint32_t expect);
/* Room for about expect entries; FTC_OK or FTC_ENOMEM. With room (of
 * ftco_peers_room(expect) bytes, aligned for any type, kept by the
 * caller: an operation's own memory) the table starts there and takes
 * no allocation until it outgrows it; with NULL, from malloc. */
int ftco_peers_init(ftco_peers_t *p, uint32_t expect, void *room);
/* A copy of the table t (made by ftco_peers_init(t, expect, NULL), and
 * not grown) on room of ftco_peers_room(expect) bytes: the prepared
 * table of an operation (node.h). */
void ftco_peers_init_from(ftco_peers_t *p, const ftco_peers_t *t, void *room);
void ftco_peers_free_heap(ftco_peers_t *p);
/* Inline: a table on its lent room has nothing to free. */
static inline void ftco_peers_free(ftco_peers_t *p)
{
    if (p->at_owned || p->index_owned) {
        ftco_peers_free_heap(p);
        return;
    }
    p->at = NULL;
    p->index = NULL;
    p->count = p->cap = p->slots = 0;
}

/* The index slot where rank's probe starts (slots a power of two).
 * Fibonacci hashing: neighbours' ranks are residue classes, which a
 * plain mask would pile into few slots. */
static inline uint32_t ftco_peers_slot(uint32_t rank, uint32_t slots)
{
    return (uint32_t)(((uint64_t)rank * 0x9E3779B97F4A7C15ull) >> 32)
           & (slots - 1);
}

/* The entry of rank, or -1 when it has none. Inline: the message path
 * asks several times per message, and the probe mostly ends at its
 * first slot. */
static inline int64_t ftco_peers_find(const ftco_peers_t *p, uint32_t rank)
{
    if (p->slots == 0)
        return -1;
    for (uint32_t s = ftco_peers_slot(rank, p->slots);; s = (s + 1) & (p->slots - 1)) {
        uint32_t e = p->index[s];
        if (e == 0)
            return -1;
        if (p->at[e - 1].rank == rank)
            return (int64_t)e - 1;
    }
}

/* The entry of rank, made (zeroed but for rank) when it has none; -1 and
 * p->nomem when memory ran out. */
int64_t ftco_peers_get(ftco_peers_t *p, uint32_t rank);

#pragma GCC visibility pop

#endif
