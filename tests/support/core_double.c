/* SPDX-License-Identifier: BSD-3-Clause */
/* The recording stand-in for the core of core_double.h. */
#include "core_double.h"

#include <stdlib.h>
#include <string.h>

#include "ftcoll/context.h"
#include "ftcoll/error.h"

core_record_t *core_records;
size_t core_nrecords;
bool core_recording = true;
uint64_t core_reentries;

static size_t g_capacity;
static int g_depth;
static uint64_t (*g_now)(void *);
static void *g_now_arg;

void core_double_init(ftc_context_t *ctx, uint32_t rank, void *ep)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->rank = rank;
    ctx->ep = ep;
    ctx->recv_rc = FTC_OK;
    ctx->failed_peer = -1;
}

void core_double_clock(uint64_t (*now)(void *arg), void *arg)
{
    g_now = now;
    g_now_arg = arg;
}

void core_double_reset(void)
{
    core_nrecords = 0;
    core_recording = true;
}

uint64_t core_double_hash(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

const core_record_t *core_double_find(core_event_t kind, uint32_t rank,
                                      size_t nth)
{
    for (size_t i = 0; i < core_nrecords; i++)
        if (core_records[i].kind == kind && core_records[i].rank == rank &&
            nth-- == 0)
            return &core_records[i];
    return NULL;
}

size_t core_double_count(core_event_t kind, uint32_t rank)
{
    size_t c = 0;
    for (size_t i = 0; i < core_nrecords; i++)
        c += core_records[i].kind == kind && core_records[i].rank == rank;
    return c;
}

/* Entering an entry point: count a re-entry, and start its record (NULL
 * when not recording). */
static core_record_t *enter(core_event_t kind, const ftc_context_t *ctx)
{
    if (g_depth++ > 0)
        core_reentries++;
    if (!core_recording)
        return NULL;
    if (core_nrecords == g_capacity) {
        g_capacity = g_capacity ? g_capacity * 2 : 1024;
        core_records =
            realloc(core_records, g_capacity * sizeof(*core_records));
        if (core_records == NULL)
            abort();
    }
    core_record_t *r = &core_records[core_nrecords++];
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->rank = ctx->rank;
    r->t = g_now != NULL ? g_now(g_now_arg) : 0;
    return r;
}

static void leave(void)
{
    g_depth--;
}

int ftc_transport_recv(ftc_context_t *ctx, uint32_t src, const void *buf,
                       size_t len)
{
    core_record_t *r = enter(CORE_RECV, ctx);
    ctx->recvs++;
    if (r != NULL) {
        r->a = src;
        r->len = len;
        r->hash = core_double_hash(buf, len);
        memcpy(r->raw, buf, len < sizeof(r->raw) ? len : sizeof(r->raw));
    }
    if (ctx->on_recv != NULL)
        ctx->on_recv(ctx, src, buf, len);
    leave();
    return ctx->recv_rc;
}

void ftc_transport_send_done(ftc_context_t *ctx, void *cookie, int status)
{
    core_record_t *r = enter(CORE_SEND_DONE, ctx);
    ctx->send_dones++;
    if (r != NULL) {
        r->cookie = cookie;
        r->status = status;
    }
    if (ctx->on_send_done != NULL)
        ctx->on_send_done(ctx, cookie, status);
    leave();
}

void ftc_transport_timer_fired(ftc_context_t *ctx)
{
    enter(CORE_TIMER, ctx);
    ctx->timer_fires++;
    if (ctx->on_timer != NULL)
        ctx->on_timer(ctx);
    leave();
}

void ftc_transport_peer_failed(ftc_context_t *ctx, uint32_t peer)
{
    core_record_t *r = enter(CORE_PEER_FAILED, ctx);
    ctx->peer_failures++;
    if (r != NULL)
        r->a = peer;
    if (ctx->on_peer_failed != NULL)
        ctx->on_peer_failed(ctx, peer);
    leave();
}

int ftc_progress(ftc_context_t *ctx)
{
    ctx->progress_calls++;
    return 0;
}

int ftc_context_is_failed(const ftc_context_t *ctx, uint32_t r)
{
    return ctx->failed_peer >= 0 && (uint32_t)ctx->failed_peer == r;
}
