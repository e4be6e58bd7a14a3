/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context's pool of large blocks (lib/core/bulk_pool.h):
 *
 *   - a block given back is the one the next request of its size gets
 *     (pages already mapped), and the smallest that fits is chosen;
 *   - blocks under FTC_BULK_MIN are never kept;
 *   - the pool never holds more than FTC_BULK_POOL_SLOTS blocks nor
 *     FTC_BULK_POOL_BYTES in all, the smallest going first, and a block
 *     larger than the whole budget is freed;
 *   - what it counts is each block's real size, whatever it was asked
 *     for later (a block reused for a smaller request comes back whole).
 *
 * The blocks are never written: untouched, they cost no resident memory.
 * Last line: "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "core/bulk_pool.h"
#include "core/context.h"
#include "check.h"

#define MIB ((size_t)1 << 20)

int main(void)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = 1;
    ftc_lb_world_t *w;
    if (ftc_lb_world_create(&lc, &w) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    ftc_context_t *ctx;
    if (ftc_context_create(0, 1, ftc_lb_ops(), ftc_lb_endpoint(w, 0), &cfg,
                           &ctx) != FTC_OK)
        abort();
    ftc_bulk_pool_t *bp = &ctx->bulk;

    /* Reuse, best fit. */
    void *a = ftc_bulk_get(ctx, 40 * MIB);
    void *b = ftc_bulk_get(ctx, 64 * MIB);
    CHECK_MSG(a != NULL && b != NULL, "no memory");
    ftc_bulk_put(ctx, b);
    ftc_bulk_put(ctx, a);
    CHECK_MSG(bp->n == 2 && bp->bytes == 104 * MIB, "kept %u blocks, %zu bytes",
              bp->n, bp->bytes);
    void *c = ftc_bulk_get(ctx, 33 * MIB);
    CHECK_MSG(c == a, "33 MiB did not get the 40 MiB block back");
    void *d = ftc_bulk_get(ctx, 33 * MIB);
    CHECK_MSG(d == b, "the next 33 MiB did not get the 64 MiB block");
    CHECK_MSG(bp->n == 0 && bp->bytes == 0, "pool not empty");
    /* Real sizes: both come back at 40 and 64 MiB. */
    ftc_bulk_put(ctx, c);
    ftc_bulk_put(ctx, d);
    CHECK_MSG(bp->bytes == 104 * MIB, "counted %zu bytes, not 104 MiB",
              bp->bytes);
    void *e = ftc_bulk_get(ctx, 65 * MIB);
    CHECK_MSG(e != a && e != b, "a 65 MiB request got a smaller block");
    ftc_bulk_free(e);
    ftc_bulk_pool_free(ctx);
    CHECK_MSG(bp->n == 0 && bp->bytes == 0, "pool_free left blocks");

    /* Small blocks go straight back to malloc. */
    void *s = ftc_bulk_get(ctx, 4 * MIB);
    ftc_bulk_put(ctx, s);
    CHECK_MSG(bp->n == 0, "a 4 MiB block was kept");

    /* Slots: nine 32 MiB blocks, eight kept. */
    void *blk[FTC_BULK_POOL_SLOTS + 1];
    for (int i = 0; i <= FTC_BULK_POOL_SLOTS; i++)
        blk[i] = ftc_bulk_get(ctx, FTC_BULK_MIN);
    for (int i = 0; i <= FTC_BULK_POOL_SLOTS; i++)
        ftc_bulk_put(ctx, blk[i]);
    CHECK_MSG(bp->n == FTC_BULK_POOL_SLOTS, "kept %u blocks", bp->n);
    CHECK_MSG(bp->bytes <= FTC_BULK_POOL_BYTES, "kept %zu bytes", bp->bytes);
    ftc_bulk_pool_free(ctx);

    /* Bytes: the smallest goes first, and a block above the budget is
     * never kept. */
    void *m1 = ftc_bulk_get(ctx, 100 * MIB);
    void *m2 = ftc_bulk_get(ctx, 120 * MIB);
    void *m3 = ftc_bulk_get(ctx, 60 * MIB);
    void *big = ftc_bulk_get(ctx, FTC_BULK_POOL_BYTES + MIB);
    ftc_bulk_put(ctx, m1);
    ftc_bulk_put(ctx, m2);
    CHECK_MSG(bp->n == 2 && bp->bytes == 220 * MIB, "kept %u, %zu bytes", bp->n,
              bp->bytes);
    ftc_bulk_put(ctx, m3);  /* 280 MiB: the 60 is the smallest, it goes */
    CHECK_MSG(bp->n == 2 && bp->bytes == 220 * MIB,
              "after a 60 MiB block: kept %u, %zu bytes", bp->n, bp->bytes);
    ftc_bulk_put(ctx, big);
    CHECK_MSG(bp->n == 2 && bp->bytes == 220 * MIB,
              "a block above the budget changed the pool: %u, %zu bytes",
              bp->n, bp->bytes);
    void *m4 = ftc_bulk_get(ctx, 150 * MIB);
    ftc_bulk_put(ctx, m4);  /* 370 MiB: the 100, then the 120 go */
    CHECK_MSG(bp->n == 1 && bp->bytes == 150 * MIB,
              "after a 150 MiB block: kept %u, %zu bytes", bp->n, bp->bytes);
    CHECK_MSG(bp->bytes <= FTC_BULK_POOL_BYTES, "kept %zu bytes, above the "
              "budget", bp->bytes);

    ftc_context_destroy(ctx);  /* frees what the pool keeps */
    ftc_lb_world_destroy(w);
    return check_report();
}
