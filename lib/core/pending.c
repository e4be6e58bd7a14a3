/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Early messages under a budget per (group, source): keep, account,
 * exclude the source that would exceed it (core/pending.h).
 *
 * The accounting is a sorted array of the sources that have something
 * kept, allocated on the first early message: a group whose members keep
 * pace costs nothing, and a context stays O(1) in the world size (the
 * simulator hosts a million of them).
 */
#include <stdlib.h>
#include <string.h>

#include "core/pending.h"
#include "core/send.h"


ftc_pending_msg_t *ftc_pending_msg_new(const ftc_wire_header_t *hdr,
                                       const uint8_t *payload, uint32_t src)
{
    ftc_pending_msg_t *m = malloc(sizeof(*m) + hdr->payload_len);
    if (m == NULL)
        return NULL;
    m->next = NULL;
    m->hdr = *hdr;
    m->src = src;
    if (hdr->payload_len > 0)
        memcpy(m->payload, payload, hdr->payload_len);
    return m;
}

/* Index of the first entry whose source is >= src. */
static uint32_t src_lower_bound(const ftc_group_t *g, uint32_t src)
{
    uint32_t lo = 0, hi = g->npending_src;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->pending_src[mid].src < src)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct ftc_pending_src *src_find(const ftc_group_t *g, uint32_t src)
{
    uint32_t i = src_lower_bound(g, src);
    return i < g->npending_src && g->pending_src[i].src == src
               ? &g->pending_src[i]
               : NULL;
}

/* src's entry, made (empty) if it has none; NULL when out of memory. */
static struct ftc_pending_src *src_get(ftc_group_t *g, uint32_t src)
{
    uint32_t i = src_lower_bound(g, src);
    if (i < g->npending_src && g->pending_src[i].src == src)
        return &g->pending_src[i];
    if (g->npending_src == g->cap_pending_src) {
        uint32_t cap = g->cap_pending_src ? g->cap_pending_src * 2 : 4;
        struct ftc_pending_src *a =
            realloc(g->pending_src, sizeof(*a) * cap);
        if (a == NULL)
            return NULL;
        g->pending_src = a;
        g->cap_pending_src = cap;
    }
    memmove(g->pending_src + i + 1, g->pending_src + i,
            sizeof(*g->pending_src) * (g->npending_src - i));
    g->npending_src++;
    g->pending_src[i] = (struct ftc_pending_src){.src = src};
    return &g->pending_src[i];
}

static void src_remove(ftc_group_t *g, struct ftc_pending_src *e)
{
    uint32_t i = (uint32_t)(e - g->pending_src);
    memmove(g->pending_src + i, g->pending_src + i + 1,
            sizeof(*g->pending_src) * (g->npending_src - i - 1));
    g->npending_src--;
}

int ftc_pending_keep(ftc_group_t *g, const ftc_wire_header_t *hdr,
                     const uint8_t *payload, uint32_t src)
{
    ftc_context_t *ctx = g->ctx;
    if (ftc_group_rank_of(g, src) < 0) {
        /* Never read: a non-member has no part in the group's operations
         * (deliver_to_op would drop it at replay). */
        ctx->counters.dropped_badmsg++;
        return FTC_EBADMSG;
    }
    uint64_t cost = sizeof(ftc_pending_msg_t) + (uint64_t)hdr->payload_len;
    const struct ftc_pending_src *have = src_find(g, src);
    uint32_t msgs = have != NULL ? have->msgs : 0;
    uint64_t bytes = have != NULL ? have->bytes : 0;
    /* bytes may exceed the budget already: adopted orphans are not
     * checked (ftc_pending_adopt). */
    if (msgs >= ctx->cfg.pending_max_msgs || bytes > ctx->cfg.pending_max_bytes
        || cost > ctx->cfg.pending_max_bytes - bytes) {
        ctx->counters.dropped_stale++;
        ftc_pending_over_budget(g, src);
        return FTC_ESTALE;
    }
    struct ftc_pending_src *e = src_get(g, src);
    ftc_pending_msg_t *m = e != NULL ? ftc_pending_msg_new(hdr, payload, src)
                                     : NULL;
    if (m == NULL) {
        if (e != NULL && e->msgs == 0)
            src_remove(g, e);
        return FTC_ENOMEM;
    }
    e->msgs++;
    e->bytes += cost;
    m->next = g->pending;
    g->pending = m;
    return FTC_OK;
}

void ftc_pending_forget(ftc_group_t *g, const ftc_pending_msg_t *m)
{
    struct ftc_pending_src *e = src_find(g, m->src);
    if (e == NULL)
        return;
    uint64_t cost = ftc_pending_cost(m);
    e->bytes = e->bytes > cost ? e->bytes - cost : 0;
    if (e->msgs > 0)
        e->msgs--;
    if (e->msgs == 0)
        src_remove(g, e);
}

void ftc_pending_adopt(ftc_group_t *g, ftc_pending_msg_t *m)
{
    struct ftc_pending_src *e = src_get(g, m->src);
    if (e != NULL) {
        e->msgs++;
        e->bytes += ftc_pending_cost(m);
    }
    /* Unaccounted when out of memory: forget finds no entry, harmless. */
    m->next = g->pending;
    g->pending = m;
}

uint64_t ftc_pending_room(const ftc_group_t *g, uint32_t src)
{
    const ftc_context_t *ctx = g->ctx;
    const struct ftc_pending_src *e = src_find(g, src);
    uint32_t msgs = e != NULL ? e->msgs : 0;
    uint64_t bytes = e != NULL ? e->bytes : 0;
    uint64_t record = sizeof(ftc_pending_msg_t);
    if (msgs >= ctx->cfg.pending_max_msgs
        || bytes + record > ctx->cfg.pending_max_bytes)
        return 0;
    return ctx->cfg.pending_max_bytes - bytes - record;
}

/* Free every early message of src in h. */
static void drop_src(ftc_group_t *h, uint32_t src)
{
    for (ftc_pending_msg_t **pp = &h->pending; *pp != NULL;) {
        ftc_pending_msg_t *m = *pp;
        if (m->src == src) {
            *pp = m->next;
            free(m);
        } else {
            pp = &m->next;
        }
    }
    struct ftc_pending_src *e = src_find(h, src);
    if (e != NULL)
        src_remove(h, e);
}

void ftc_pending_over_budget(ftc_group_t *g, uint32_t src)
{
    ftc_context_t *ctx = g->ctx;
    (void)ftc_ctx_send_control_ex(ctx, src, FTC_MSG_EXCLUDED, NULL, 0, 0,
                                  FTC_EXCLUDED_OVER_BUDGET);
    /* Not an observation of silence: it must not count towards "most of
     * the world failed for me" (core/dispatch.c, mutual suspicion). */
    ftc_ctx_declare_failed(ctx, src);
    /* Replay would skip them (their sender failed): free them now. */
    for (ftc_group_t *h = ctx->groups; h != NULL; h = h->next)
        drop_src(h, src);
}

void ftc_pending_destroy(ftc_group_t *g)
{
    free(g->pending_src);
    g->pending_src = NULL;
    g->npending_src = g->cap_pending_src = 0;
}

void ftc_pending_held(const ftc_group_t *g, uint32_t src, uint32_t *msgs,
                      uint64_t *bytes)
{
    const struct ftc_pending_src *e = src_find(g, src);
    if (msgs != NULL)
        *msgs = e != NULL ? e->msgs : 0;
    if (bytes != NULL)
        *bytes = e != NULL ? e->bytes : 0;
}
