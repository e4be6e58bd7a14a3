/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's last checked call (api/call_memo.h): its arguments that the
 * checks read, compared field by field, and its family parameters'
 * bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "api/call_memo.h"

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
    const ftc_algo_entry_t *entry;
    bool params_default;        /* the call had no parameters */
    size_t params_size;         /* else their bytes: */
    size_t params_cap;
    unsigned char params[];
} ftc_call_memo_t;

bool ftc_call_memo_hit(const ftc_group_t *g, const ftc_coll_args_t *a,
                       ftc_coll_t coll, ftc_algo_call_t *call)
{
    const ftc_call_memo_t *m = g->call_memo;
    if (m == NULL || !m->valid || m->coll != coll || m->algo != a->algo
        || m->root != a->root || m->f != a->f || m->dtype != a->dtype
        || m->op != a->op || m->count != a->count || m->user_fn != a->user_fn
        || m->checked != a->checked || m->uniform != a->uniform)
        return false;
    if (a->params == NULL) {
        if (!m->params_default)
            return false;
        call->params = m->entry->params_default;
    } else {
        size_t size;
        if (m->params_default)
            return false;
        memcpy(&size, a->params, sizeof(size));
        if (size != m->params_size || memcmp(a->params, m->params, size) != 0)
            return false;
        call->params = a->params;
    }
    call->entry = m->entry;
    return true;
}

void ftc_call_memo_keep(ftc_group_t *g, const ftc_coll_args_t *a,
                        ftc_coll_t coll, const ftc_algo_call_t *call)
{
    ftc_call_memo_t *m = g->call_memo;
    const ftc_algo_entry_t *e = call->entry;
    bool params_default = a->params == NULL;
    /* Parameters completed into the call's own buffer (an older,
     * smaller struct) are not the caller's bytes: not kept. The call
     * kept before stays (it still passes). */
    if (!e->check_pure
        || (params_default ? call->params != e->params_default
                           : call->params != a->params))
        return;
    size_t size = params_default ? 0 : e->params_size;
    if (m == NULL || m->params_cap < size) {
        ftc_call_memo_t *nm = realloc(m, sizeof(*m) + size);
        if (nm == NULL) {
            if (m != NULL)
                m->valid = false;   /* its bytes no longer fit: forget */
            return;
        }
        m = nm;
        m->params_cap = size;
        g->call_memo = m;
    }
    m->valid = true;
    m->coll = coll;
    m->algo = a->algo;
    m->root = a->root;
    m->f = a->f;
    m->dtype = a->dtype;
    m->op = a->op;
    m->user_fn = a->user_fn;
    m->count = a->count;
    m->checked = a->checked;
    m->uniform = a->uniform;
    m->entry = e;
    m->params_default = params_default;
    m->params_size = size;
    if (size > 0)
        memcpy(m->params, a->params, size);
}
