/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's last checked call (api/call_memo.h): keeping it. Its
 * arguments that the checks read are compared field by field, and its
 * family parameters' bytes, by the inline look-up in the header.
 */
#include <stdlib.h>
#include <string.h>

#include "api/call_memo.h"

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
    m->nbytes = (size_t)a->count * ftc_dtype_size(a->dtype);
    m->checked = a->checked;
    m->uniform = a->uniform;
    m->entry = e;
    m->params_default = params_default;
    m->params_size = size;
    if (size > 0)
        memcpy(m->params, a->params, size);
}
