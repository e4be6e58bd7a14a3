/* SPDX-License-Identifier: BSD-3-Clause */
#include "grace.h"

#include <stdlib.h>

int ftc_bk_grace_init(ftc_bk_grace_t *g, uint32_t nranks)
{
    g->count = 0;
    g->ranks = calloc(nranks, sizeof(*g->ranks));
    g->due_ns = calloc(nranks, sizeof(*g->due_ns));
    return g->ranks != NULL && g->due_ns != NULL ? 0 : -1;
}

void ftc_bk_grace_fini(ftc_bk_grace_t *g)
{
    free(g->ranks);
    free(g->due_ns);
    g->ranks = NULL;
    g->due_ns = NULL;
    g->count = 0;
}

void ftc_bk_grace_add(ftc_bk_grace_t *g, uint32_t rank, uint64_t due_ns)
{
    g->due_ns[rank] = due_ns;
    g->ranks[g->count++] = rank;
}

uint64_t ftc_bk_grace_next(const ftc_bk_grace_t *g)
{
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < g->count; i++)
        if (g->due_ns[g->ranks[i]] < next)
            next = g->due_ns[g->ranks[i]];
    return next;
}

uint32_t ftc_bk_grace_take_due(ftc_bk_grace_t *g, uint64_t now)
{
    /* From the start each time: the ranks before the last one taken were
     * not due, and the last pending rank moved into its place. The order
     * of reports is the one a single sweep would give. */
    for (uint32_t i = 0; i < g->count; i++) {
        uint32_t r = g->ranks[i];
        if (g->due_ns[r] <= now) {
            g->ranks[i] = g->ranks[--g->count];
            return r;
        }
    }
    return FTC_BK_GRACE_NONE;
}

int ftc_bk_grace_report_due(ftc_bk_grace_t *g, uint64_t now,
                            ftc_context_t *ctx,
                            void (*mark)(void *b, uint32_t rank,
                                         uint64_t now),
                            void *b)
{
    int reported = 0;
    uint32_t r;
    while ((r = ftc_bk_grace_take_due(g, now)) != FTC_BK_GRACE_NONE) {
        mark(b, r, now);
        ftc_transport_peer_failed(ctx, r);
        reported++;
    }
    return reported;
}
