/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's last call that passed the argument checks, so that a
 * stream of like calls (the same collective, algorithm, root, f, count,
 * dtype, op and family parameters; only the buffers and the callback
 * change) is not checked again from the start.
 *
 * Why: the checks (the registry's look-up, the parameters' completion,
 * the family's check, the operator and datatype tables) were ~150 of the
 * ~2,300 instructions a steady tree allreduce costs the core per
 * operation and rank at n = 2, and their verdict cannot change while the
 * arguments repeat: a group's size and rank are fixed, and only families
 * whose check reads nothing else (ftc_algo_entry_t.check_pure) are kept.
 * Any difference, a field or a byte of the parameters, is a miss and
 * runs every check. The buffers and the callback are checked on every
 * call.
 */
#ifndef FTC_API_CALL_MEMO_H
#define FTC_API_CALL_MEMO_H

#include "algo/registry.h"

#pragma GCC visibility push(hidden)

/* Whether (coll, a) is g's last call that passed the checks (buffers and
 * callback aside); then call is what ftc_algo_prepare made of it. */
bool ftc_call_memo_hit(const ftc_group_t *g, const ftc_coll_args_t *a,
                       ftc_coll_t coll, ftc_algo_call_t *call);
/* Remember (coll, a) and what ftc_algo_prepare made of it (call), which
 * passed the checks. Kept only for a family with a pure check and
 * parameters of the family's own size or none; out of memory keeps
 * nothing. */
void ftc_call_memo_keep(ftc_group_t *g, const ftc_coll_args_t *a,
                        ftc_coll_t coll, const ftc_algo_call_t *call);

#pragma GCC visibility pop

#endif
