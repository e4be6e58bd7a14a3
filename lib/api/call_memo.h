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

#include <string.h>

#include "algo/registry.h"

#pragma GCC visibility push(hidden)

/* The group's last call that passed (one block, ftc_group_t.call_memo). */
typedef struct ftc_call_memo {
    bool valid;
    ftc_coll_t coll;
    ftc_algo_t algo;
    uint32_t root, f;
    ftc_dtype_t dtype;
    ftc_op_t op;
    ftc_user_op_fn user_fn;
    uint64_t count;
    uint32_t checked, uniform;
    /* count times the element size, worked out once: the entry point's
     * test for a large value (the monitor's away time) reads it. */
    size_t nbytes;
    const ftc_algo_entry_t *entry;
    bool params_default;        /* the call had no parameters */
    size_t params_size;         /* else their bytes: */
    size_t params_cap;
    unsigned char params[];
} ftc_call_memo_t;

/* g's last call that passed the checks if (coll, a) is like it (buffers
 * and callback aside), else NULL; then *params is the complete family
 * parameters that ftc_algo_prepare made of it. Inline: every call of a
 * stream asks, and as a call of its own it was a third of its cost. */
static inline const ftc_call_memo_t *
ftc_call_memo_find(const ftc_group_t *g, const ftc_coll_args_t *a,
                   ftc_coll_t coll, const void **params)
{
    const ftc_call_memo_t *m = g->call_memo;
    if (m == NULL || !m->valid || m->coll != coll || m->algo != a->algo
        || m->root != a->root || m->f != a->f || m->dtype != a->dtype
        || m->op != a->op || m->count != a->count || m->user_fn != a->user_fn
        || m->checked != a->checked || m->uniform != a->uniform)
        return NULL;
    if (a->params == NULL) {
        if (!m->params_default)
            return NULL;
        *params = m->entry->params_default;
        return m;
    }
    size_t size;
    if (m->params_default)
        return NULL;
    memcpy(&size, a->params, sizeof(size));
    if (size != m->params_size || memcmp(a->params, m->params, size) != 0)
        return NULL;
    *params = a->params;
    return m;
}

/* Whether (coll, a) is g's last call that passed the checks (buffers and
 * callback aside); then call is what ftc_algo_prepare made of it. */
static inline bool ftc_call_memo_hit(const ftc_group_t *g,
                                     const ftc_coll_args_t *a,
                                     ftc_coll_t coll, ftc_algo_call_t *call)
{
    const ftc_call_memo_t *m = ftc_call_memo_find(g, a, coll, &call->params);
    if (m == NULL)
        return false;
    call->entry = m->entry;
    return true;
}
/* Remember (coll, a) and what ftc_algo_prepare made of it (call), which
 * passed the checks. Kept only for a family with a pure check and
 * parameters of the family's own size or none; out of memory keeps
 * nothing. */
void ftc_call_memo_keep(ftc_group_t *g, const ftc_coll_args_t *a,
                        ftc_coll_t coll, const ftc_algo_call_t *call);

#pragma GCC visibility pop

#endif
