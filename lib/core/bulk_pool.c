/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large blocks kept for reuse (core/bulk_pool.h says why and how many).
 * Every block starts with its capacity, so that what goes back to the
 * pool is counted at its real size, whatever the caller asked for.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/bulk_pool.h"
#include "core/context.h"

typedef union bulk_head {
    size_t cap;             /* bytes after the head */
    max_align_t align;
} bulk_head_t;

static bulk_head_t *head_of(void *p)
{
    return (bulk_head_t *)p - 1;
}

void *ftc_bulk_get(ftc_context_t *ctx, size_t len)
{
    ftc_bulk_pool_t *bp = &ctx->bulk;
    if (len >= FTC_BULK_MIN) {
        /* The smallest block that fits. */
        unsigned best = bp->n;
        for (unsigned i = 0; i < bp->n; i++)
            if (bp->cap[i] >= len
                && (best == bp->n || bp->cap[i] < bp->cap[best]))
                best = i;
        if (best < bp->n) {
            void *p = bp->blk[best];
            bp->bytes -= bp->cap[best];
            bp->n--;
            bp->blk[best] = bp->blk[bp->n];
            bp->cap[best] = bp->cap[bp->n];
            return p;
        }
    }
    if (len > SIZE_MAX - sizeof(bulk_head_t))
        return NULL;
    bulk_head_t *h = malloc(sizeof(*h) + (len > 0 ? len : 1));
    if (h == NULL)
        return NULL;
    h->cap = len;
    return h + 1;
}

void ftc_bulk_free(void *p)
{
    if (p != NULL)
        free(head_of(p));
}

void ftc_bulk_put(ftc_context_t *ctx, void *p)
{
    if (p == NULL)
        return;
    ftc_bulk_pool_t *bp = &ctx->bulk;
    size_t cap = head_of(p)->cap;
    if (cap < FTC_BULK_MIN || cap > FTC_BULK_POOL_BYTES) {
        ftc_bulk_free(p);
        return;
    }
    /* Make room: the smallest blocks go first, p itself if it is. */
    while (bp->n == FTC_BULK_POOL_SLOTS || bp->bytes + cap > FTC_BULK_POOL_BYTES) {
        unsigned small = 0;
        for (unsigned i = 1; i < bp->n; i++)
            if (bp->cap[i] < bp->cap[small])
                small = i;
        if (bp->n == 0 || bp->cap[small] > cap) {
            ftc_bulk_free(p);
            return;
        }
        ftc_bulk_free(bp->blk[small]);
        bp->bytes -= bp->cap[small];
        bp->n--;
        bp->blk[small] = bp->blk[bp->n];
        bp->cap[small] = bp->cap[bp->n];
    }
    bp->blk[bp->n] = p;
    bp->cap[bp->n] = cap;
    bp->n++;
    bp->bytes += cap;
}

void ftc_bulk_pool_free(ftc_context_t *ctx)
{
    ftc_bulk_pool_t *bp = &ctx->bulk;
    for (unsigned i = 0; i < bp->n; i++)
        ftc_bulk_free(bp->blk[i]);
    bp->n = 0;
    bp->bytes = 0;
}
