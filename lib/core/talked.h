/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The peers this process talks to (core/talked.c): the world ranks it has
 * handed a message to, so that its way to each of them exists.
 */
#ifndef FTC_CORE_TALKED_H
#define FTC_CORE_TALKED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"

#pragma GCC visibility push(hidden)

/* The slot where peer's search starts: the multiplicative hash's top
 * bits, so that ranks a tree spaces k apart do not share a slot. */
static inline uint32_t ftc_talked_slot(const ftc_talked_t *t, uint32_t peer)
{
    return (uint32_t)((peer * 2654435769u) >> t->shift);
}

/* Remember peer (out of line: not there yet, or not in its first slot). */
void ftc_talked_add(ftc_context_t *ctx, uint32_t peer);

/* This process handed the transport a message to peer. Inline: every
 * send passes here, and nearly always finds peer in its first slot. */
static inline void ftc_talked_note(ftc_context_t *ctx, uint32_t peer)
{
    const ftc_talked_t *t = &ctx->talked;
    if (t->keys != NULL && t->keys[ftc_talked_slot(t, peer)] == peer + 1)
        return;
    ftc_talked_add(ctx, peer);
}

/* Whether this process has ever sent to peer. */
bool ftc_talked_to(const ftc_context_t *ctx, uint32_t peer);

/* Context teardown. */
void ftc_talked_free(ftc_context_t *ctx);

#pragma GCC visibility pop

#endif
