/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large blocks given back, kept for the next large value: the buffers of
 * one large collective (segment queues, reassembly, an exchange's inputs,
 * a reduce's working values) are all freed within it, and the next one of
 * a stream asks for the same sizes again. glibc maps every block of
 * 32 MiB and more afresh, and faulting in fresh pages (and unmapping
 * them) was about a third of what a 32 MiB allreduce cost a rank
 * (docs/decisions.md, "Large messages").
 *
 * Bounded: at most FTC_BULK_POOL_SLOTS blocks of FTC_BULK_MIN bytes or
 * more, FTC_BULK_POOL_BYTES in all; the smallest goes first. Blocks
 * smaller than FTC_BULK_MIN are plain malloc and free.
 */
#ifndef FTC_CORE_BULK_POOL_H
#define FTC_CORE_BULK_POOL_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

struct ftc_context;

#define FTC_BULK_MIN ((size_t)32 << 20)
#define FTC_BULK_POOL_SLOTS 8
#define FTC_BULK_POOL_BYTES ((size_t)256 << 20)

typedef struct ftc_bulk_pool {
    void *blk[FTC_BULK_POOL_SLOTS];
    size_t cap[FTC_BULK_POOL_SLOTS];
    unsigned n;
    size_t bytes;
} ftc_bulk_pool_t;

/* A block of at least len bytes (a new one when the pool has none that
 * fits); NULL without memory. It knows its own size: give it back with
 * ftc_bulk_put or ftc_bulk_free, never free(). */
void *ftc_bulk_get(struct ftc_context *ctx, size_t len);
/* Give back a block of ftc_bulk_get (p may be NULL). */
void ftc_bulk_put(struct ftc_context *ctx, void *p);
/* Free it without keeping it. */
void ftc_bulk_free(void *p);
/* Free every block kept. */
void ftc_bulk_pool_free(struct ftc_context *ctx);

#pragma GCC visibility pop

#endif
