/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context: configuration, creation and teardown, the known-failed set
 * (declared failures are final) and exclusion (the group declared us
 * failed).
 */
#include <stdlib.h>
#include <string.h>

#include "core/group.h"
#include "core/monitor.h"
#include "core/notice.h"
#include "core/segment.h"
#include "core/send.h"
#include "core/talked.h"


void ftc_config_init(ftc_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->size = sizeof(*cfg);
    cfg->job_token = 0;
    cfg->suspect_timeout_ns = 100ull * 1000 * 1000;
    cfg->probe_timeout_ns = 200ull * 1000 * 1000;
    cfg->segment_size = FTC_SEGMENT_SIZE_DEFAULT;
    cfg->segment_window = FTC_SEGMENT_WINDOW_DEFAULT;
    cfg->pending_max_msgs = FTC_PENDING_MAX_MSGS_DEFAULT;
    cfg->pending_max_bytes = FTC_PENDING_MAX_BYTES_DEFAULT;
    cfg->probe_backoff = FTC_PROBE_BACKOFF_DEFAULT;
}

int ftc_context_create(uint32_t rank, uint32_t size,
                       const ftc_transport_ops_t *ops, void *transport,
                       const ftc_config_t *cfg, ftc_context_t **ctx_out)
{
    if (ctx_out == NULL)
        return FTC_EINVAL;
    *ctx_out = NULL;
    if (size == 0 || size > INT32_MAX || rank >= size || ops == NULL)
        return FTC_EINVAL;
    if (ops->size < offsetof(ftc_transport_ops_t, watch) || ops->send == NULL
        || ops->timer_arm == NULL || ops->timer_cancel == NULL
        || ops->now == NULL)
        return FTC_EINVAL;
    /* An older caller's smaller struct: what it has, defaults for the
     * rest. */
    ftc_config_t full;
    if (cfg != NULL && cfg->size >= sizeof(size_t)
        && cfg->size < sizeof(full)) {
        ftc_config_init(&full);
        memcpy(&full, cfg, cfg->size);
        full.size = sizeof(full);
        cfg = &full;
    }
    if (cfg != NULL && cfg->size != sizeof(ftc_config_t))
        return FTC_EINVAL;
    if (cfg != NULL && (cfg->suspect_timeout_ns == 0 || cfg->probe_timeout_ns == 0
                        || cfg->auth > 1
                        || cfg->probe_backoff > FTC_PROBE_BACKOFF_MAX
                        || cfg->segment_size > FTC_WIRE_MAX_PAYLOAD))
        return FTC_EINVAL;

    ftc_context_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return FTC_ENOMEM;
    ctx->sends.next = ctx->sends.prev = &ctx->sends;
    ctx->rank = rank;
    ctx->size = size;
    size_t n = ops->size < sizeof(*ops) ? ops->size : sizeof(*ops);
    memcpy(&ctx->ops, ops, n);
    ctx->ops.size = sizeof(ctx->ops);
    ctx->tp = transport;
    ctx->cost_hints = ctx->ops.cost_hints != NULL
                          ? ctx->ops.cost_hints(transport)
                              & FTC_TRANSPORT_COSTLY_MESSAGES
                          : 0;
    if (cfg != NULL)
        ctx->cfg = *cfg;
    else
        ftc_config_init(&ctx->cfg);
    if (ctx->cfg.pending_max_msgs == 0)
        ctx->cfg.pending_max_msgs = FTC_PENDING_MAX_MSGS_DEFAULT;
    if (ctx->cfg.pending_max_bytes == 0)
        ctx->cfg.pending_max_bytes = FTC_PENDING_MAX_BYTES_DEFAULT;
    ctx->seg_payload_max = ftc_segment_payload_max_of(&ctx->cfg, &ctx->ops);
    ftc_ctx_rng_seed(ctx, ctx->cfg.seed);
    *ctx_out = ctx;
    return FTC_OK;
}

void ftc_context_destroy(ftc_context_t *ctx)
{
    if (ctx == NULL)
        return;
    while (ctx->groups != NULL)
        ftc_group_destroy(ctx->groups);
    if (ctx->timer_armed)
        ctx->ops.timer_cancel(ctx->tp);
    for (uint32_t i = 0; i < ctx->nwatches; i++)
        if (ctx->ops.unwatch != NULL)
            ctx->ops.unwatch(ctx->tp, ctx->watches[i].peer);
    ftc_send_free_all(ctx);
    ftc_segment_destroy(ctx);
    ftc_bulk_pool_free(ctx);
    ftc_pending_free_list(ctx->orphans);
    free(ctx->watches);
    free(ctx->lapsed);
    free(ctx->answers);
    ftc_talked_free(ctx);
    ftc_notice_free(ctx);
    free(ctx->fail_queue);
    free(ctx->failed);
    free(ctx->timed_out);
    free(ctx);
}

uint32_t ftc_context_rank(const ftc_context_t *ctx) { return ctx->rank; }
uint32_t ftc_context_size(const ftc_context_t *ctx) { return ctx->size; }

/* Index of the first known-failed rank >= r. */
static uint32_t failed_lower_bound(const ftc_context_t *ctx, uint32_t r)
{
    uint32_t lo = 0, hi = ctx->nfailed;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ctx->failed[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ftc_context_is_failed(const ftc_context_t *ctx, uint32_t r)
{
    if (ctx == NULL || r >= ctx->size || ctx->nfailed == 0)
        return 0;
    uint32_t i = failed_lower_bound(ctx, r);
    return i < ctx->nfailed && ctx->failed[i] == r;
}

uint32_t ftc_context_failed(const ftc_context_t *ctx, uint32_t *out,
                            uint32_t max)
{
    for (uint32_t i = 0; i < ctx->nfailed && i < max && out != NULL; i++)
        out[i] = ctx->failed[i];
    return ctx->nfailed;
}

int ftc_context_is_excluded(const ftc_context_t *ctx)
{
    return ctx != NULL && ctx->excluded;
}

void ftc_context_counters(const ftc_context_t *ctx, ftc_counters_t *out)
{
    if (ctx != NULL && out != NULL)
        *out = ctx->counters;
}

/* Record r failed, for good, and tell the backend, the monitor and the
 * operations (at the next settle). r is valid and not failed yet. */
static void declare(ftc_context_t *ctx, uint32_t r)
{
    if (ctx->nfailed == ctx->capfailed) {
        uint32_t cap = ctx->capfailed ? ctx->capfailed * 2 : 8;
        uint32_t *a = realloc(ctx->failed, sizeof(uint32_t) * cap);
        if (a == NULL)
            return; /* unrecorded: operations still see the event below */
        ctx->failed = a;
        ctx->capfailed = cap;
    }
    uint32_t at = failed_lower_bound(ctx, r);
    memmove(ctx->failed + at + 1, ctx->failed + at,
            sizeof(uint32_t) * (ctx->nfailed - at));
    ctx->failed[at] = r;
    ctx->nfailed++;
    ctx->last_failure_at = ctx->ops.now(ctx->tp);
    if (ctx->ops.peer_down != NULL)
        ctx->ops.peer_down(ctx->tp, r);
    ftc_segment_peer_down(ctx, r);
    ctx->counters.failures_detected++;
    ftc_monitor_forget(ctx, r);
    if (ctx->fail_queue_len == ctx->fail_queue_cap) {
        uint32_t cap = ctx->fail_queue_cap ? ctx->fail_queue_cap * 2 : 8;
        uint32_t *q = realloc(ctx->fail_queue, sizeof(uint32_t) * cap);
        if (q == NULL)
            return; /* the bit is set; operations see it when they look */
        ctx->fail_queue = q;
        ctx->fail_queue_cap = cap;
    }
    ctx->fail_queue[ctx->fail_queue_len++] = r;
}

void ftc_ctx_declare_failed(ftc_context_t *ctx, uint32_t r)
{
    if (r >= ctx->size || r == ctx->rank || ftc_context_is_failed(ctx, r))
        return;
    declare(ctx, r);
    /* Learnt from another member: r may be a stopped process that only
     * we, of those who talk to it, can still tell (core/notice.c). After
     * peer_down, which may drop what the backend still queues for r. */
    ftc_notice_learnt(ctx, r);
}

void ftc_ctx_declare_observed_failed(ftc_context_t *ctx, uint32_t r)
{
    if (r >= ctx->size || r == ctx->rank || ftc_context_is_failed(ctx, r))
        return;
    ctx->nfailed_observed++;
    declare(ctx, r);
}

bool ftc_ctx_timed_out(const ftc_context_t *ctx, uint32_t r)
{
    for (uint32_t i = 0; i < ctx->ntimed_out; i++)
        if (ctx->timed_out[i] == r)
            return true;
    return false;
}

void ftc_ctx_declare_timed_out(ftc_context_t *ctx, uint32_t r)
{
    if (r >= ctx->size || r == ctx->rank || ftc_context_is_failed(ctx, r))
        return;
    if (ctx->ntimed_out == ctx->captimed_out) {
        uint32_t cap = ctx->captimed_out ? ctx->captimed_out * 2 : 8;
        uint32_t *a = realloc(ctx->timed_out, sizeof(uint32_t) * cap);
        if (a != NULL) {
            ctx->timed_out = a;
            ctx->captimed_out = cap;
        }
    }
    /* (Without memory the word about r goes out unflagged, as before.) */
    if (ctx->ntimed_out < ctx->captimed_out)
        ctx->timed_out[ctx->ntimed_out++] = r;
    ftc_ctx_declare_observed_failed(ctx, r);
}

void ftc_ctx_become_excluded(ftc_context_t *ctx)
{
    if (ctx->excluded)
        return;
    ctx->excluded = true;
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        ftc_group_cancel_ops(g, FTC_EEXCLUDED);
    for (uint32_t i = 0; i < ctx->nwatches; i++)
        if (ctx->ops.unwatch != NULL)
            ctx->ops.unwatch(ctx->tp, ctx->watches[i].peer);
    ctx->nwatches = 0;
}

void ftc_ctx_test_skip_checksum(ftc_context_t *ctx, bool skip)
{
    ctx->skip_checksum = skip;
}
