/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An operation's lifecycle, the parts that are not inline in core/op.h
 * (registration, start, completion, finishing and lingering are, since
 * every operation runs them once): unlinking and freeing, the look-up of
 * an ended call a peer told us of, the failed list of a completion, the
 * signature memo's miss.
 */
#include <stdlib.h>
#include <string.h>

#include "core/monitor.h"
#include "core/op.h"


void ftc_cop_unlink_and_free(ftc_cop_t *op)
{
    ftc_group_t *g = op->group;
    if (op->prev != NULL)
        op->prev->next = op->next;
    else
        g->ops = op->next;
    if (op->next != NULL)
        op->next->prev = op->prev;
    op->vt->destroy(op);
}

/* ftc_cop_told_ended's look-up, once the group was told of some ended
 * call (op.h tests that first). */
int ftc_cop_told_ended_find(const ftc_cop_t *op)
{
    const ftc_group_t *g = op->group;
    uint32_t n = g->ntold_ended < 8 ? g->ntold_ended : 8;
    for (uint32_t i = 0; i < n; i++)
        if (g->told_ended[i].seq == op->seq)
            return g->told_ended[i].status;
    return FTC_OK;
}

/* ---- completion and failure bookkeeping -------------------------------- */

int ftc_cop_set_failed(ftc_cop_t *op, const uint32_t *granks, uint32_t n)
{
    free(op->comp_failed);
    op->comp_failed = NULL;
    op->comp.failed = NULL;
    op->comp.nfailed = 0;
    if (n == 0)
        return FTC_OK;
    uint32_t *a = malloc(sizeof(uint32_t) * n);
    if (a == NULL)
        return FTC_ENOMEM;
    memcpy(a, granks, sizeof(uint32_t) * n);
    /* insertion sort + dedup: lists are short */
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = a[i], j = k;
        bool dup = false;
        for (uint32_t t = 0; t < k; t++)
            if (a[t] == v)
                dup = true;
        if (dup)
            continue;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
        k++;
    }
    op->comp_failed = a;
    op->comp.failed = a;
    op->comp.nfailed = k;
    return FTC_OK;
}

/* The memo missed: hash, and remember what was hashed. */
uint32_t ftc_group_signature_miss(ftc_group_t *g, const uint32_t in[7],
                                  uint64_t count)
{
    uint32_t sig = ftc_wire_signature(in[0], in[1], in[2], in[3], in[4],
                                      in[5], count, in[6]);
    /* The stream changed: the watches its operations kept for the next
     * like one go (ftc_monitor_release_keep). */
    if (g->sig_memo.valid)
        ftc_monitor_drop_kept(g->ctx, g->id, g->epoch);
    memcpy(g->sig_memo.in, in, sizeof(g->sig_memo.in));
    g->sig_memo.count = count;
    g->sig_memo.signature = sig;
    ftc_dtype_t dtype = (ftc_dtype_t)in[4];
    g->sig_memo.kernel = ftc_reduce_kernel((ftc_op_t)in[5], dtype);
    g->sig_memo.nbytes = (size_t)count * ftc_dtype_size(dtype);
    g->sig_memo.valid = true;
    g->sig_memo.gen++;
    return sig;
}
