/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lost peers waiting for their report to the core. A backend that sees a
 * peer die (connection reset, endpoint error, process exit) tells the
 * core only after a short grace period, during which it keeps reading:
 * the messages the peer sent before it died are still in flight on its
 * own connection, and the core must see them before the death
 * (transport.h). Each rank is added at most once (a report is final).
 */
#ifndef FTC_BK_GRACE_H
#define FTC_BK_GRACE_H

#include <stdint.h>

#include "ftcoll/transport.h"

#define FTC_BK_GRACE_NONE UINT32_MAX

typedef struct ftc_bk_grace {
    uint32_t *ranks;            /* pending, in no particular order */
    uint64_t *due_ns;           /* by rank: when to report it */
    uint32_t count;             /* ranks[0 .. count-1] are pending */
} ftc_bk_grace_t;

/* Room for every rank, so that adding never allocates. 0, or -1 when out
 * of memory (g is then safe to fini). */
int ftc_bk_grace_init(ftc_bk_grace_t *g, uint32_t nranks);
void ftc_bk_grace_fini(ftc_bk_grace_t *g);

/* Report rank at due_ns (CLOCK_MONOTONIC). Once per rank. */
void ftc_bk_grace_add(ftc_bk_grace_t *g, uint32_t rank, uint64_t due_ns);

/* The earliest pending report, or UINT64_MAX if none. */
uint64_t ftc_bk_grace_next(const ftc_bk_grace_t *g);

/*
 * Take one rank whose report is due at now off the list, or
 * FTC_BK_GRACE_NONE. Call it in a loop and report each rank as it comes:
 * the report runs the core, which may lose more peers (add to g) before
 * the next call.
 */
uint32_t ftc_bk_grace_take_due(ftc_bk_grace_t *g, uint64_t now);

/*
 * Report every rank due at now: mark(b, rank, now) first (the backend
 * records the peer as failed and frees what it holds for it), then
 * ftc_transport_peer_failed(ctx, rank). Returns how many were reported.
 */
int ftc_bk_grace_report_due(ftc_bk_grace_t *g, uint64_t now,
                            ftc_context_t *ctx,
                            void (*mark)(void *b, uint32_t rank,
                                         uint64_t now),
                            void *b);

#endif
