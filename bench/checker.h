/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The semantic checker: asserts the papers' properties on one scenario's
 * result (docs/semantics.md lists them). "Failed" means crashed at any
 * point, before or during the operation; properties speak of the others.
 *
 * reduce (corrected, Kuettler & Haertig 4.1), with at most f failures:
 *   R1 the root delivers only after every non-failed process started;
 *   R2 nobody delivers twice;
 *   R3+R4 a non-failed root's result is the reduction over a set S with
 *      non-failed <= S <= non-failed + in-operation failed: every live
 *      input included once, every failed one wholly or not at all;
 *   R5 every non-failed process delivers, with FTC_OK;
 *   Theorem 5: without failures, exactly f(f+1)floor((n-1)/(f+1)) +
 *      a(a-1) + n-1 messages.
 * allreduce (5.1): A1 as R1 for every delivery; A2 as R2; A3 every
 *   non-failed process delivers FTC_OK; A4+A5 all non-failed processes
 *   deliver the same value, a reduction over such an S (this holds here
 *   without the paper's root assumption); Theorem 7 without failures, for
 *   opportunistic correction whose count is a closed form.
 * bcast: B1 only the root's value is delivered; B2 at most once; B3 root
 *   alive => every non-failed process delivers it; root failed => every
 *   non-failed process delivers the value or FTC_EROOT_FAILED.
 * tree (baseline): never hangs (every non-failed process delivers once);
 *   FTC_OK results are correct; without failures all are FTC_OK and the
 *   message count is n-1 per phase.
 * Any algorithm: the run ends by itself (no event-limit hit).
 */
#ifndef FTC_BENCH_CHECKER_H
#define FTC_BENCH_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

/* Number of violated properties; the first is described in msg. */
int ftc_check(const ftc_scenario_t *s, const ftc_scenario_result_t *res,
              char *msg, size_t msglen);

/* Theorem 5: failure-free messages of a corrected reduce. */
uint64_t ftc_expected_reduce_messages(uint32_t n, uint32_t f);

/* Failure-free messages of the butterfly allreduce's round 0
 * (docs/corrected.md §5.6): P log2 P for the core of P = 2^floor(log2 n)
 * members, plus, for each of the e = n - P extras, its input and the
 * value sent back to it. */
uint64_t ftc_expected_butterfly_messages(uint32_t n);

/* Failure-free messages of a corrected bcast with opportunistic correction
 * of distance d on tree t (tree phase n-1 plus the correction sends). */
uint64_t ftc_expected_bcast_opportunistic_messages(const ftc_tree_t *t,
                                                   uint32_t n, uint32_t d);

#endif
