/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The roots a gatherer counts failed, as its gather KEEPALIVE carries
 * them (multi-root allreduce; docs/ftco.md, "The roots' exchange", rule
 * 7). A process that answers a gather takes the value from the gatherer
 * only; when the gatherer then fails, its succession may lead it to a
 * root the gatherer counted failed, which may hold the exchange's result
 * while the gatherer delivered one without that root's value. Knowing
 * the gatherer's verdict on the roots, the process never re-routes to
 * such a root nor takes a value from it.
 *
 * Wire form: the payload of a gather KEEPALIVE, the roots' logical
 * ranks as uint32 in the sender's byte order (as rset.h), strictly
 * increasing, each below m. An empty payload (a gather that counts no
 * root failed, a single-root tree, or a version that sent none) names
 * nobody.
 */
#ifndef FTC_ALGO_FTCO_GATHER_ROOTS_H
#define FTC_ALGO_FTCO_GATHER_ROOTS_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* The number of roots a payload of len bytes names, or -1 when it is not
 * a list of strictly increasing ranks below m (the message is dropped as
 * malformed). */
int64_t ftco_gather_roots_count(const uint8_t *payload, size_t len,
                                uint32_t m);

/* The i-th root a checked payload names. */
uint32_t ftco_gather_roots_at(const uint8_t *payload, uint32_t i);

#pragma GCC visibility pop

#endif
