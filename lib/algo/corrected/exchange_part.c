/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/exchange_part.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/monitor.h"

static uint32_t world_of(const ftc_exchange_part_t *xp, uint32_t grank)
{
    return ftc_group_world_of(xp->op->group, grank);
}

/* The slot of a member other than me. */
static uint8_t *slot(const ftc_exchange_part_t *xp, uint32_t grank)
{
    uint32_t i = grank < xp->me ? grank : grank - 1;
    return xp->inputs + (size_t)i * xp->op->nbytes;
}

size_t ftc_exchange_part_space(size_t nbytes, const ftc_group_t *g)
{
    size_t slots = nbytes >= FTC_EXCHANGE_PART_OWN_BYTES
                       ? 0 : (size_t)(g->n - 1) * (nbytes > 0 ? nbytes : 1);
    return ftc_mem_round(slots) + ftc_mem_round(g->n);
}

int ftc_exchange_part_start(ftc_exchange_part_t *xp, ftc_cop_t *op,
                            const uint8_t *input)
{
    ftc_group_t *g = op->group;
    memset(xp, 0, sizeof(*xp));
    xp->op = op;
    xp->n = g->n;
    xp->me = g->me;
    xp->input = input;
    size_t slots = (size_t)(g->n - 1) * op->nbytes;
    if (op->nbytes >= FTC_EXCHANGE_PART_OWN_BYTES) {
        /* (n = 1: one byte, so that NULL still means no memory.) */
        bool fits = g->n < 2 || op->nbytes <= SIZE_MAX / (g->n - 1);
        xp->heap = fits ? ftc_bulk_get(g->ctx, slots) : NULL;
        xp->inputs = xp->heap;
    } else {
        xp->inputs = ftc_cop_alloc(op, slots);
    }
    xp->got = ftc_cop_zalloc(op, g->n);
    if (xp->inputs == NULL || xp->got == NULL) {
        ftc_exchange_part_free(xp);
        return FTC_ENOMEM;
    }
    xp->got[g->me] = 1;
    xp->pending = g->n - 1;
    /* (Nothing known failed, the common case: no walk of the members.) */
    for (uint32_t r = 0; r < g->n && !xp->missing && g->ctx->nfailed != 0; r++)
        if (r != g->me && ftc_group_member_failed(g, r))
            xp->missing = true;
    if (xp->missing)
        return FTC_OK;
    /* Each peer once, starting after this process, so that the first
     * copy every process receives comes from a different sender; one
     * message, encoded and MACed once. */
    if (g->n > 1) {
        ftc_wire_header_t hdr;
        ftc_iov_t iov = {input, op->nbytes};
        ftc_cop_header(op, &hdr, FTC_CORR_MSG_EXCHANGE, 0);
        (void)ftc_cop_send_ring(op, (g->me + 1) % g->n, g->n - 1, &hdr,
                                &iov, 1);
    }
    /* Inputs that came early are replayed after the start, so every
     * peer is awaited here. */
    for (uint32_t r = 0; r < g->n; r++)
        if (!xp->got[r])
            ftc_monitor_acquire(g->ctx, world_of(xp, r), op);
    xp->watching = true;
    return FTC_OK;
}

void ftc_exchange_part_on_msg(ftc_exchange_part_t *xp,
                              const ftc_wire_header_t *hdr,
                              const uint8_t *payload, uint32_t grank)
{
    ftc_context_t *ctx = xp->op->group->ctx;
    if (hdr->payload_len != xp->op->nbytes || grank >= xp->n
        || grank == xp->me) {
        ctx->counters.dropped_badmsg++;
        return;
    }
    if (xp->got[grank])
        return; /* a duplicate: the first copy is the input */
    if (xp->op->nbytes > 0)
        ftc_copy_bytes(slot(xp, grank), payload, xp->op->nbytes);
    xp->got[grank] = 1;
    xp->pending--;
    if (xp->watching) {
        /* The peer answered what we waited for: its watch is kept for
         * the stream's next operation, which waits on it again
         * (core/monitor.h; docs/latency.md, "A steady stream's path"). */
        ftc_monitor_release_keep(ctx, world_of(xp, grank));
        /* Every input is here: no watch is left for destroy to walk the
         * members for (the operation lingers, and is destroyed later). */
        if (xp->pending == 0)
            xp->watching = false;
    }
}

void ftc_exchange_part_on_failed(ftc_exchange_part_t *xp, uint32_t grank)
{
    if (grank >= xp->n || xp->got[grank] || xp->missing)
        return;
    /* Its input may have reached others: only the rounds that follow can
     * say whether the result holds it (allreduce.c). */
    xp->missing = true;
    ftc_exchange_part_destroy(xp);
}

void ftc_exchange_part_reduce(ftc_exchange_part_t *xp, uint8_t *out)
{
    size_t nb = xp->op->nbytes;
    if (nb > 0) {
        ftc_copy_bytes(out, xp->me == 0 ? xp->input : slot(xp, 0), nb);
        for (uint32_t r = 1; r < xp->n; r++)
            ftc_cop_reduce(xp->op, out,
                           r == xp->me ? xp->input : slot(xp, r));
    }
    /* Complete: every later copy is a duplicate, never stored. */
    ftc_exchange_part_free(xp);
}

void ftc_exchange_part_free(ftc_exchange_part_t *xp)
{
    if (xp->heap == NULL)
        return;
    ftc_bulk_put(xp->op->group->ctx, xp->heap);
    xp->heap = NULL;
    xp->inputs = NULL;
}

void ftc_exchange_part_destroy(ftc_exchange_part_t *xp)
{
    if (!xp->watching)
        return;
    xp->watching = false;
    for (uint32_t r = 0; r < xp->n; r++)
        if (!xp->got[r])
            ftc_monitor_release(xp->op->group->ctx, world_of(xp, r));
}
