/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-peer table of an ftco operation (peers.h says why).
 */
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "algo/ftco/peers.h"

static int rehash(ftco_peers_t *p, uint32_t slots)
{
    uint32_t *index = calloc(slots, sizeof(uint32_t));
    if (index == NULL)
        return FTC_ENOMEM;
    for (uint32_t e = 0; e < p->count; e++) {
        uint32_t s = ftco_peers_slot(p->at[e].rank, slots);
        while (index[s] != 0)
            s = (s + 1) & (slots - 1);
        index[s] = e + 1;
    }
    if (p->index_owned)
        free(p->index);
    p->index = index;
    p->index_owned = true;
    p->slots = slots;
    return FTC_OK;
}

/* The sizes the table starts with for expect entries. */
static void first_sizes(uint32_t expect, uint32_t *cap, uint32_t *slots)
{
    *cap = expect > 4 ? expect : 4;
    *slots = 8;
    while (*slots < 2 * *cap)
        *slots *= 2;
}

size_t ftco_peers_room(uint32_t expect)
{
    uint32_t cap, slots;
    first_sizes(expect, &cap, &slots);
    return sizeof(ftco_peer_t) * cap + sizeof(uint32_t) * slots;
}

int ftco_peers_init(ftco_peers_t *p, uint32_t expect, void *room)
{
    memset(p, 0, sizeof(*p));
    uint32_t slots;
    first_sizes(expect, &p->cap, &slots);
    if (room != NULL) {
        /* The entries first: room is aligned for them, and the index's
         * words follow them aligned. */
        p->at = room;
        p->index = (uint32_t *)(p->at + p->cap);
        memset(p->index, 0, sizeof(uint32_t) * slots);
        p->slots = slots;
        return FTC_OK;
    }
    p->at = malloc(sizeof(ftco_peer_t) * p->cap);
    p->at_owned = true;
    if (p->at == NULL || rehash(p, slots) != FTC_OK) {
        ftco_peers_free(p);
        return FTC_ENOMEM;
    }
    return FTC_OK;
}

void ftco_peers_init_from(ftco_peers_t *p, const ftco_peers_t *t, void *room)
{
    /* The layout of ftco_peers_init's on room: the entries, then the
     * index; the index's words are entry numbers, which a copy keeps. */
    *p = (ftco_peers_t){.count = t->count, .cap = t->cap, .slots = t->slots};
    p->at = room;
    p->index = (uint32_t *)(p->at + p->cap);
    memcpy(p->at, t->at, sizeof(ftco_peer_t) * t->count);
    memcpy(p->index, t->index, sizeof(uint32_t) * t->slots);
}

void ftco_peers_free_heap(ftco_peers_t *p)
{
    if (p->at_owned)
        free(p->at);
    if (p->index_owned)
        free(p->index);
    p->at = NULL;
    p->index = NULL;
    p->count = p->cap = p->slots = 0;
    p->at_owned = p->index_owned = false;
}

int64_t ftco_peers_get(ftco_peers_t *p, uint32_t rank)
{
    int64_t e = ftco_peers_find(p, rank);
    if (e >= 0)
        return e;
    if (p->slots == 0) {
        p->nomem = true;
        return -1;
    }
    if (p->count == p->cap) {
        uint32_t cap = p->cap * 2;
        ftco_peer_t *at = NULL;
        if (cap > p->cap && p->at_owned) {
            at = realloc(p->at, sizeof(*at) * cap);
        } else if (cap > p->cap) {
            /* Outgrew the lent room: to the heap, the room left. */
            at = malloc(sizeof(*at) * cap);
            if (at != NULL)
                memcpy(at, p->at, sizeof(*at) * p->count);
        }
        if (at == NULL) {
            p->nomem = true;
            return -1;
        }
        p->at = at;
        p->at_owned = true;
        p->cap = cap;
    }
    /* At most half full, so probes stay short and always end. */
    if (2 * (p->count + 1) > p->slots && rehash(p, p->slots * 2) != FTC_OK) {
        p->nomem = true;
        return -1;
    }
    ftco_peer_t *n = &p->at[p->count];
    memset(n, 0, sizeof(*n));
    n->rank = rank;
    uint32_t s = ftco_peers_slot(rank, p->slots);
    while (p->index[s] != 0)
        s = (s + 1) & (p->slots - 1);
    p->index[s] = ++p->count;
    return (int64_t)p->count - 1;
}
