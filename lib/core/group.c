/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Groups: creation from a member list (or the identity group, or a
 * group without some of another's members), rank translation both ways,
 * the failed members, and teardown.
 */
#include <stdlib.h>
#include <string.h>

#include "core/group.h"
#include "core/monitor.h"
#include "core/op.h"
#include "core/pending.h"
#include "core/send.h"


void ftc_pending_free_list(ftc_pending_msg_t *m)
{
    while (m != NULL) {
        ftc_pending_msg_t *next = m->next;
        free(m);
        m = next;
    }
}

/* End every operation of g: undelivered ones with status. */
void ftc_group_cancel_ops(ftc_group_t *g, int status)
{
    for (ftc_cop_t *op = g->ops; op != NULL; op = op->next) {
        if (!op->delivered)
            ftc_cop_complete(op, status);
        ftc_cop_finish(op);
    }
}

void ftc_group_destroy(ftc_group_t *g)
{
    if (g == NULL || g->destroying)
        return; /* (again, from a callback of this very destroy) */
    g->destroying = true;
    ftc_context_t *ctx = g->ctx;
    ftc_group_cancel_ops(g, FTC_ECANCELED);
    ftc_ctx_settle(ctx);
    /* Callbacks have run; anything left is freed regardless of pending
     * sends, whose records no longer point at it. */
    ftc_send_forget_group(ctx, g);
    for (ftc_cop_t **pp = &ctx->cont_head; *pp != NULL;) {
        if ((*pp)->group == g)
            *pp = (*pp)->next_cont;
        else
            pp = &(*pp)->next_cont;
    }
    for (ftc_cop_t **pp = &ctx->reap_head; *pp != NULL;) {
        if ((*pp)->group == g)
            *pp = (*pp)->next_reap;
        else
            pp = &(*pp)->next_reap;
    }
    g->linger_head = g->linger_tail = NULL;
    while (g->ops != NULL)
        ftc_cop_unlink_and_free(g->ops);
    ftc_monitor_drop_kept(ctx, g->id, g->epoch);
    for (ftc_group_t **pp = &ctx->groups; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    ftc_pending_free_list(g->pending);
    ftc_pending_destroy(g);
    while (g->ext != NULL) {
        struct ftc_group_ext *e = g->ext;
        g->ext = e->next;
        if (e->free_fn != NULL)
            e->free_fn(e->data);
        free(e);
    }
    if (g->plan != NULL)
        g->plan_free(g->plan);
    free(g->call_memo);
    free(g->spare_op);
    free(g->members);
    free(g->by_world);
    free(g->by_world_grank);
    free(g->absent);
    free(g);
    ftc_ctx_rearm(ctx);
}

/* ---- groups ----------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

ftc_group_t *ftc_group_find_walk(ftc_context_t *ctx, uint32_t id,
                                 uint32_t epoch)
{
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        if (g->id == id && g->epoch == epoch)
            return g;
    return NULL;
}

static void group_link(ftc_context_t *ctx, ftc_group_t *g, uint32_t group_id,
                       uint32_t epoch, uint32_t nmembers);

int ftc_group_create(ftc_context_t *ctx, uint32_t group_id, uint32_t epoch,
                     uint32_t nmembers, const uint32_t *members,
                     ftc_group_t **group_out)
{
    if (group_out == NULL)
        return FTC_EINVAL;
    *group_out = NULL;
    if (ctx == NULL || nmembers == 0 || nmembers > ctx->size)
        return FTC_EINVAL;
    if (members == NULL && nmembers != ctx->size)
        return FTC_EINVAL;
    if (ftc_group_find(ctx, group_id, epoch) != NULL)
        return FTC_EINVAL;

    ftc_group_t *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return FTC_ENOMEM;
    if (members == NULL) {
        g->me = ctx->rank;
        goto done;
    }
    uint32_t *pairs = malloc(sizeof(uint32_t) * 2 * nmembers);
    if (pairs == NULL) {
        free(g);
        free(pairs);
        return FTC_ENOMEM;
    }
    g->members = malloc(sizeof(uint32_t) * nmembers);
    g->by_world = malloc(sizeof(uint32_t) * nmembers);
    g->by_world_grank = malloc(sizeof(uint32_t) * nmembers);
    if (g->members == NULL || g->by_world == NULL || g->by_world_grank == NULL)
        goto err_nomem;
    bool me_found = false;
    for (uint32_t i = 0; i < nmembers; i++) {
        uint32_t w = members[i];
        if (w >= ctx->size)
            goto err_inval;
        g->members[i] = w;
        pairs[2 * i] = w;
        pairs[2 * i + 1] = i;
        if (w == ctx->rank) {
            g->me = i;
            me_found = true;
        }
    }
    if (!me_found)
        goto err_inval;
    qsort(pairs, nmembers, sizeof(uint32_t) * 2, cmp_pair);
    for (uint32_t i = 0; i < nmembers; i++) {
        if (i > 0 && pairs[2 * i] == pairs[2 * i - 2])
            goto err_inval; /* duplicate member */
        g->by_world[i] = pairs[2 * i];
        g->by_world_grank[i] = pairs[2 * i + 1];
    }
    free(pairs);
done:
    group_link(ctx, g, group_id, epoch, nmembers);
    *group_out = g;
    return FTC_OK;

err_inval:
    free(pairs);
    free(g->members);
    free(g->by_world);
    free(g->by_world_grank);
    free(g);
    return FTC_EINVAL;
err_nomem:
    free(pairs);
    free(g->members);
    free(g->by_world);
    free(g->by_world_grank);
    free(g);
    return FTC_ENOMEM;
}

/* Give g its identity, put it in ctx's list and adopt the messages that
 * arrived for it before it existed. */
static void group_link(ftc_context_t *ctx, ftc_group_t *g, uint32_t group_id,
                       uint32_t epoch, uint32_t nmembers)
{
    g->ctx = ctx;
    g->id = group_id;
    g->epoch = epoch;
    g->n = nmembers;
    g->next = ctx->groups;
    ctx->groups = g;

    /* Adopt messages that arrived before this group existed. */
    for (ftc_pending_msg_t **pp = &ctx->orphans; *pp != NULL;) {
        ftc_pending_msg_t *m = *pp;
        if (m->hdr.group_id == group_id && m->hdr.epoch == epoch) {
            *pp = m->next;
            ctx->orphan_bytes -= sizeof(*m) + m->hdr.payload_len;
            ftc_pending_adopt(g, m);
        } else {
            pp = &m->next;
        }
    }
}

int ftc_group_create_excluding(ftc_group_t *g, uint32_t id, uint32_t epoch,
                               const uint32_t *skip, uint32_t nskip,
                               ftc_group_t **out)
{
    ftc_context_t *ctx = g->ctx;
    *out = NULL;
    if (nskip >= g->n || ftc_group_find(ctx, id, epoch) != NULL)
        return FTC_EINVAL;
    for (uint32_t i = 0; i < nskip; i++)
        if (skip[i] >= g->n || skip[i] == g->me
            || (i > 0 && skip[i - 1] >= skip[i]))
            return FTC_EINVAL;
    if (g->members != NULL) {
        /* An explicit list stays one: O(n) as it already is. */
        uint32_t *members = malloc(sizeof(uint32_t) * (g->n - nskip));
        if (members == NULL)
            return FTC_ENOMEM;
        uint32_t k = 0, next = 0;
        for (uint32_t r = 0; r < g->n; r++) {
            if (next < nskip && skip[next] == r)
                next++;
            else
                members[k++] = g->members[r];
        }
        int rc = ftc_group_create(ctx, id, epoch, k, members, out);
        free(members);
        return rc;
    }
    /* The world minus the old absent ranks and the skipped ones: both
     * sorted (group order is world order here), so merge them. */
    ftc_group_t *ng = calloc(1, sizeof(*ng));
    uint32_t total = g->nabsent + nskip;
    if (ng == NULL || (total > 0
                       && (ng->absent = malloc(sizeof(uint32_t) * total)) == NULL)) {
        free(ng);
        return FTC_ENOMEM;
    }
    uint32_t i = 0, j = 0;
    while (i < g->nabsent || j < nskip) {
        uint32_t w = j < nskip ? ftc_group_world_rank(g, skip[j]) : UINT32_MAX;
        if (i < g->nabsent && g->absent[i] < w) {
            ng->absent[ng->nabsent++] = g->absent[i++];
        } else {
            ng->absent[ng->nabsent++] = w;
            j++;
        }
    }
    group_link(ctx, ng, id, epoch, g->n - nskip);
    ng->me = (uint32_t)ftc_group_rank_of(ng, ctx->rank);
    *out = ng;
    return FTC_OK;
}

uint32_t ftc_group_size(const ftc_group_t *g) { return g->n; }
uint32_t ftc_group_rank(const ftc_group_t *g) { return g->me; }
uint32_t ftc_group_id(const ftc_group_t *g) { return g->id; }
uint32_t ftc_group_epoch(const ftc_group_t *g) { return g->epoch; }

uint32_t ftc_group_world_rank(const ftc_group_t *g, uint32_t grank)
{
    if (grank >= g->n)
        return UINT32_MAX;
    if (g->members != NULL)
        return g->members[grank];
    /* Absent rank a_j has a_j - j members before it: grank's world rank
     * is grank plus the number of absent ranks with a_j - j <= grank. */
    uint32_t lo = 0, hi = g->nabsent;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->absent[mid] - mid <= grank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return grank + lo;
}

int64_t ftc_group_rank_lookup(const ftc_group_t *g, uint32_t w)
{
    if (g->members == NULL && g->nabsent > 0) {
        if (w >= g->ctx->size)
            return -1;
        uint32_t lo = 0, hi = g->nabsent;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (g->absent[mid] < w)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < g->nabsent && g->absent[lo] == w)
            return -1;
        return (int64_t)(w - lo);
    }
    if (g->members == NULL)
        return w < g->n ? (int64_t)w : -1;
    uint32_t lo = 0, hi = g->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->by_world[mid] < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->n && g->by_world[lo] == w)
        return g->by_world_grank[lo];
    return -1;
}

uint32_t ftc_group_failed(const ftc_group_t *g, uint32_t *out, uint32_t max)
{
    /* Walk the (short) failed list, not the group. */
    const ftc_context_t *ctx = g->ctx;
    uint32_t k = 0;
    for (uint32_t i = 0; i < ctx->nfailed; i++) {
        int64_t gr = ftc_group_rank_of(g, ctx->failed[i]);
        if (gr < 0)
            continue;
        if (out != NULL && k < max)
            out[k] = (uint32_t)gr;
        k++;
    }
    /* Group ranks in increasing order, as promised. */
    for (uint32_t i = 1; i < k && i < max && out != NULL; i++)
        for (uint32_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            uint32_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return k;
}
