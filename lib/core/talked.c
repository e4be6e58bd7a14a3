/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The peers this process talks to: every world rank it has handed a
 * message to, for good. Who gets an exclusion notice learnt from others
 * depends on it (core/notice.c): a peer this process has sent to is one
 * its transport has a way to already (over ZeroMQ, a connection whose
 * handshake was done while the peer ran), which a peer it never sent to
 * may lack.
 *
 * A set, not an array per world: the simulator runs 64K contexts, and a
 * tree process talks to a handful of peers. Open addressing with linear
 * probing, at most half full, so a send finds its peer in the first slot
 * nearly always (ftc_talked_note, inline); the table doubles when it
 * would pass half. Out of memory the peer is not remembered: it is then
 * not told an exclusion learnt second-hand (what happened before this
 * set existed), and nothing else changes.
 */
#include <stdlib.h>

#include "core/talked.h"

/* Where peer is, or the empty slot that ends its search. */
static uint32_t find(const ftc_talked_t *t, uint32_t peer)
{
    uint32_t mask = (uint32_t)((1ull << (32 - t->shift)) - 1);
    uint32_t i = ftc_talked_slot(t, peer);
    while (t->keys[i] != 0 && t->keys[i] != peer + 1)
        i = (i + 1) & mask;
    return i;
}

/* Twice the slots (8 the first time), every key moved over. */
static bool grow(ftc_talked_t *t)
{
    uint32_t shift = t->keys != NULL ? t->shift - 1 : 29;
    if (shift < 2)
        return false;           /* 2^30 slots: no more */
    uint32_t *old = t->keys;
    uint64_t oldcap = old != NULL ? 1ull << (32 - t->shift) : 0;
    uint32_t *keys = calloc((size_t)1 << (32 - shift), sizeof(*keys));
    if (keys == NULL)
        return false;
    t->keys = keys;
    t->shift = shift;
    for (uint64_t i = 0; i < oldcap; i++)
        if (old[i] != 0)
            keys[find(t, old[i] - 1)] = old[i];
    free(old);
    return true;
}

void ftc_talked_add(ftc_context_t *ctx, uint32_t peer)
{
    ftc_talked_t *t = &ctx->talked;
    if (t->keys != NULL && t->keys[find(t, peer)] != 0)
        return;                 /* there, past its first slot */
    uint64_t cap = t->keys != NULL ? 1ull << (32 - t->shift) : 0;
    if (((uint64_t)t->n + 1) * 2 > cap && !grow(t))
        return;                 /* degrade: not remembered (above) */
    t->keys[find(t, peer)] = peer + 1;
    t->n++;
}

bool ftc_talked_to(const ftc_context_t *ctx, uint32_t peer)
{
    const ftc_talked_t *t = &ctx->talked;
    return t->keys != NULL && t->keys[find(t, peer)] != 0;
}

void ftc_talked_free(ftc_context_t *ctx)
{
    free(ctx->talked.keys);
    ctx->talked.keys = NULL;
    ctx->talked.n = 0;
}
