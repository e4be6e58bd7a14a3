/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context: configuration, the known-failed set, the transport entry
 * points, message dispatch, and the "settle" step that ends every entry
 * point (tell operations about failures, run deliver callbacks, free what
 * is finished, re-arm the one timer).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "segment.h"

/* One outstanding send that the backend completes later. */
typedef struct ftc_send_link {
    struct ftc_send_link *prev, *next;
} ftc_send_link_t;

typedef struct ftc_send_rec {
    ftc_send_link_t link;   /* first: the list is of links */
    ftc_cop_t *op;            /* to notify, or NULL */
    uint32_t dest;           /* world rank */
    size_t len;
    size_t cap;              /* bytes at buf */
    uint8_t buf[];
} ftc_send_rec_t;

/* A record holds at least this much (a header and a small payload), and
 * one of at most REC_KEEP_MAX bytes is kept for the next send. */
enum { REC_MIN = 96, REC_KEEP_MAX = 512 };

/* The context keeps its outstanding sends so destroy can free them. */
static ftc_send_link_t *send_list_head(ftc_context_t *ctx);

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
}

/* Outstanding sends hang off a sentinel stored after the context. */
typedef struct ftc_context_impl {
    ftc_context_t pub;
    ftc_send_link_t sends;  /* sentinel of a circular list */
    /* The last record given back: most sends are done at once
     * (FTC_SEND_INLINE), so the next one reuses it instead of a malloc
     * and a free per message. */
    ftc_send_rec_t *spare;
} ftc_context_impl_t;

static ftc_send_link_t *send_list_head(ftc_context_t *ctx)
{
    return &((ftc_context_impl_t *)ctx)->sends;
}

static ftc_send_rec_t *rec_get(ftc_context_t *ctx, size_t len)
{
    ftc_context_impl_t *impl = (ftc_context_impl_t *)ctx;
    ftc_send_rec_t *rec = impl->spare;
    if (rec != NULL && rec->cap >= len) {
        impl->spare = NULL;
        return rec;
    }
    size_t cap = len > REC_MIN ? len : REC_MIN;
    rec = malloc(sizeof(*rec) + cap);
    if (rec != NULL)
        rec->cap = cap;
    return rec;
}

static void rec_put(ftc_context_t *ctx, ftc_send_rec_t *rec)
{
    ftc_context_impl_t *impl = (ftc_context_impl_t *)ctx;
    if (impl->spare == NULL && rec->cap <= REC_KEEP_MAX) {
        impl->spare = rec;
        return;
    }
    free(rec);
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
    if (cfg != NULL && cfg->size >= FTC_CONFIG_SIZE_0_1
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
                        || cfg->segment_size > FTC_WIRE_MAX_PAYLOAD))
        return FTC_EINVAL;

    ftc_context_impl_t *impl = calloc(1, sizeof(*impl));
    if (impl == NULL)
        return FTC_ENOMEM;
    ftc_context_t *ctx = &impl->pub;
    impl->sends.next = impl->sends.prev = &impl->sends;
    ctx->rank = rank;
    ctx->size = size;
    size_t n = ops->size < sizeof(*ops) ? ops->size : sizeof(*ops);
    memcpy(&ctx->ops, ops, n);
    ctx->ops.size = sizeof(ctx->ops);
    ctx->tp = transport;
    if (cfg != NULL)
        ctx->cfg = *cfg;
    else
        ftc_config_init(&ctx->cfg);
    *ctx_out = ctx;
    return FTC_OK;
}

static void pending_free_list(ftc_pending_msg_t *m)
{
    while (m != NULL) {
        ftc_pending_msg_t *next = m->next;
        free(m);
        m = next;
    }
}

static void op_unlink_and_free(ftc_cop_t *op)
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

static void ctx_settle(ftc_context_t *ctx);
static void ctx_rearm(ftc_context_t *ctx);
static void op_maybe_reap(ftc_cop_t *op);

/* End every operation of g: undelivered ones with status. */
static void group_cancel_ops(ftc_group_t *g, int status)
{
    for (ftc_cop_t *op = g->ops; op != NULL; op = op->next) {
        if (!op->delivered)
            ftc_op_complete(op, status);
        ftc_op_finish(op);
    }
}

void ftc_group_destroy(ftc_group_t *g)
{
    if (g == NULL)
        return;
    ftc_context_t *ctx = g->ctx;
    group_cancel_ops(g, FTC_ECANCELED);
    ctx_settle(ctx);
    /* Callbacks have run; anything left is freed regardless of pending
     * sends, whose records no longer point at it. */
    ftc_send_link_t *head = send_list_head(ctx);
    for (ftc_send_link_t *l = head->next; l != head; l = l->next) {
        ftc_send_rec_t *s = (ftc_send_rec_t *)l;
        if (s->op != NULL && s->op->group == g)
            s->op = NULL;
    }
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
        op_unlink_and_free(g->ops);
    for (ftc_group_t **pp = &ctx->groups; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    pending_free_list(g->pending);
    free(g->spare_op);
    free(g->members);
    free(g->by_world);
    free(g->by_world_grank);
    free(g);
    ctx_rearm(ctx);
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
    ftc_send_link_t *head = send_list_head(ctx);
    while (head->next != head) {
        ftc_send_link_t *l = head->next;
        head->next = l->next;
        free(l);
    }
    ftc_segment_destroy(ctx);
    pending_free_list(ctx->orphans);
    free(((ftc_context_impl_t *)ctx)->spare);
    free(ctx->watches);
    free(ctx->fail_queue);
    free(ctx->failed);
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

/* ---- groups ----------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static ftc_group_t *find_group(ftc_context_t *ctx, uint32_t id, uint32_t epoch)
{
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        if (g->id == id && g->epoch == epoch)
            return g;
    return NULL;
}

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
    if (find_group(ctx, group_id, epoch) != NULL)
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
            m->next = g->pending;
            g->pending = m;
        } else {
            pp = &m->next;
        }
    }
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

uint32_t ftc_group_size(const ftc_group_t *g) { return g->n; }
uint32_t ftc_group_rank(const ftc_group_t *g) { return g->me; }
uint32_t ftc_group_id(const ftc_group_t *g) { return g->id; }
uint32_t ftc_group_epoch(const ftc_group_t *g) { return g->epoch; }

uint32_t ftc_group_world_rank(const ftc_group_t *g, uint32_t grank)
{
    if (grank >= g->n)
        return UINT32_MAX;
    return g->members != NULL ? g->members[grank] : grank;
}

int64_t ftc_group_rank_of(const ftc_group_t *g, uint32_t w)
{
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

bool ftc_group_member_failed(const ftc_group_t *g, uint32_t grank)
{
    return ftc_context_is_failed(g->ctx, ftc_group_world_rank(g, grank)) != 0;
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

/* ---- sending ---------------------------------------------------------- */

void ftc_op_header(const ftc_cop_t *op, ftc_wire_header_t *hdr,
                   ftc_msg_kind_t kind, uint32_t round)
{
    memset(hdr, 0, sizeof(*hdr));
    hdr->kind = (uint8_t)kind;
    hdr->algo = (uint8_t)op->args.algo;
    hdr->coll = (uint8_t)op->coll;
    hdr->group_id = op->group->id;
    hdr->epoch = op->group->epoch;
    hdr->seq = op->seq;
    hdr->round = round;
    hdr->signature = op->signature;
}

/* Encode and hand to the transport, or to the segment queue (a payload
 * longer than a segment, or data behind one: segment.h). Returns the
 * transport's verdict. */
static int ctx_send_raw(ftc_context_t *ctx, uint32_t dest,
                        ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                        int iovcnt, ftc_cop_t *notify_op, bool *inline_done)
{
    size_t plen = 0;
    for (int i = 0; i < iovcnt; i++)
        plen += iov[i].len;
    if (plen > FTC_WIRE_MAX_PAYLOAD)
        return FTC_EOVERFLOW;
    if (ftc_segment_wanted(ctx, dest, hdr->kind, plen)) {
        /* Queued bytes are copied: for the caller the send is done. */
        *inline_done = true;
        return ftc_segment_send(ctx, dest, hdr, iov, iovcnt);
    }
    return ftc_ctx_send_wire(ctx, dest, hdr, iov, iovcnt, notify_op,
                             inline_done);
}

int ftc_ctx_send_wire(ftc_context_t *ctx, uint32_t dest,
                      ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                      int iovcnt, ftc_cop_t *notify_op, bool *inline_done)
{
    size_t plen = 0;
    for (int i = 0; i < iovcnt; i++)
        plen += iov[i].len;
    hdr->sender = ctx->rank;
    hdr->job_token = ctx->cfg.job_token;
    hdr->payload_len = (uint32_t)plen;
    size_t len = FTC_WIRE_HEADER_SIZE + plen;
    ftc_send_rec_t *rec = rec_get(ctx, len);
    if (rec == NULL)
        return FTC_ENOMEM;
    uint8_t *p = rec->buf + FTC_WIRE_HEADER_SIZE;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].len > 0)
            memcpy(p, iov[i].base, iov[i].len);
        p += iov[i].len;
    }
    ftc_wire_encode_key(hdr, rec->buf, ctx->cfg.auth ? ctx->cfg.auth_key : NULL);
    rec->len = len;
    rec->dest = dest;
    rec->op = notify_op;
    int rc = ctx->ops.send(ctx->tp, dest, rec->buf, len, rec);
    *inline_done = false;
    if (rc == FTC_SEND_INLINE) {
        rec_put(ctx, rec);
        *inline_done = true;
    } else if (rc == FTC_OK) {
        ftc_send_link_t *head = send_list_head(ctx);
        rec->link.next = head->next;
        rec->link.prev = head;
        head->next->prev = &rec->link;
        head->next = &rec->link;
    } else {
        rec_put(ctx, rec);
        /* Too big for this transport is our problem, not the peer's: the
         * caller ends the collective. Any other refusal means the peer is
         * unreachable (the contract). */
        if (rc == FTC_EOVERFLOW)
            return FTC_EOVERFLOW;
        ftc_ctx_declare_failed(ctx, dest);
        return FTC_ETRANSPORT;
    }
    ctx->counters.msgs_sent++;
    ctx->counters.bytes_sent += len;
    return FTC_OK;
}

int ftc_op_send(ftc_cop_t *op, uint32_t dest, ftc_wire_header_t *hdr,
                const ftc_iov_t *iov, int iovcnt, bool notify)
{
    ftc_context_t *ctx = op->group->ctx;
    if (ctx->excluded)
        return FTC_EEXCLUDED;
    uint32_t w = ftc_group_world_rank(op->group, dest);
    bool inline_done;
    int rc = ctx_send_raw(ctx, w, hdr, iov, iovcnt, notify ? op : NULL,
                          &inline_done);
    if (rc == FTC_EOVERFLOW) {
        /* The message does not fit the transport: a usage error every
         * member must see, like a mismatch (peers learn it from probes). */
        ftc_op_abort(op, FTC_EOVERFLOW);
        return rc;
    }
    if (rc != FTC_OK) {
        if (notify && !op->cont_wanted) {
            /* Still continue on a later turn so a sweep cannot stall. */
            op->cont_wanted = true;
            op->next_cont = ctx->cont_head;
            ctx->cont_head = op;
            ctx->cont_timer = true;
        }
        return rc;
    }
    op->comp.stats.msgs_sent++;
    op->comp.stats.bytes_sent += FTC_WIRE_HEADER_SIZE + hdr->payload_len;
    if (notify && inline_done && !op->cont_wanted) {
        /* Yield to the event loop before the next step, so receives that
         * are already queued are handled first (checked correction stops
         * sweeping when it hears from a neighbour). */
        op->cont_wanted = true;
        op->next_cont = ctx->cont_head;
        ctx->cont_head = op;
        ctx->cont_timer = true;
    } else if (notify && !inline_done) {
        op->cont_wanted = true; /* pins the op until send_done */
    }
    return FTC_OK;
}

static int send_control_op(ftc_context_t *ctx, uint32_t dest,
                           ftc_msg_kind_t kind, const ftc_watch_t *about,
                           uint32_t round, uint16_t flags, uint32_t aux,
                           const ftc_cop_t *op)
{
    if (ctx->excluded)
        return FTC_EEXCLUDED;
    ftc_wire_header_t hdr;
    memset(&hdr, 0, sizeof(hdr));
    hdr.kind = (uint8_t)kind;
    hdr.flags = flags;
    hdr.aux = aux;
    if (op != NULL) {
        /* What the operation is here, so that peers that wait on each
         * other without exchanging a data message (a bcast leaf under an
         * allreduce's reduce phase) still see that they disagree. */
        hdr.coll = (uint8_t)op->coll;
        hdr.algo = (uint8_t)op->args.algo;
        hdr.signature = op->signature;
    }
    if (about != NULL) {
        hdr.group_id = about->group_id;
        hdr.epoch = about->epoch;
        hdr.seq = about->seq;
    }
    hdr.round = round;
    bool inline_done;
    int rc = ctx_send_raw(ctx, dest, &hdr, NULL, 0, NULL, &inline_done);
    if (rc == FTC_OK && kind == FTC_MSG_PROBE)
        ctx->counters.probes_sent++;
    return rc;
}

static int send_control_ex(ftc_context_t *ctx, uint32_t dest,
                           ftc_msg_kind_t kind, const ftc_watch_t *about,
                           uint32_t round, uint16_t flags, uint32_t aux)
{
    return send_control_op(ctx, dest, kind, about, round, flags, aux, NULL);
}

int ftc_ctx_send_control(ftc_context_t *ctx, uint32_t dest,
                         ftc_msg_kind_t kind, const ftc_watch_t *about,
                         uint32_t round)
{
    return send_control_ex(ctx, dest, kind, about, round, 0, 0);
}

int ftc_ctx_send_probe(ftc_context_t *ctx, uint32_t dest,
                       const ftc_watch_t *about, uint32_t round,
                       const ftc_cop_t *op)
{
    return send_control_op(ctx, dest, FTC_MSG_PROBE, about, round, 0, 0, op);
}

/* The status a peer waiting on an operation that ended here with a usage
 * error should end it with: the same cause where it is shared (the peers
 * disagree, the message does not fit), else "a peer's call was refused". */
static int status_for_peers(int status)
{
    switch (status) {
    case FTC_EMISMATCH:
    case FTC_EOVERFLOW:
    case FTC_EPEER_INVALID:
    case FTC_ETIMEDOUT:
        return status;
    default:
        return FTC_EPEER_INVALID;
    }
}

static bool is_usage_status(int status)
{
    return status == FTC_EMISMATCH || status == FTC_EOVERFLOW
           || status == FTC_EPEER_INVALID || status == FTC_ETIMEDOUT;
}

static void remember_ended(ftc_group_t *g, uint64_t seq, int status)
{
    g->ended[g->nended % 8].seq = seq;
    g->ended[g->nended % 8].status = status;
    g->nended++;
}

/* Every other live member, once: O(n) messages, on an error path only. */
static void tell_members_ended(ftc_group_t *g, uint64_t seq, int status)
{
    ftc_watch_t about = {.group_id = g->id, .epoch = g->epoch, .seq = seq};
    for (uint32_t r = 0; r < g->n; r++) {
        if (r == g->me || ftc_group_member_failed(g, r))
            continue;
        (void)send_control_ex(g->ctx, ftc_group_world_rank(g, r),
                              FTC_MSG_ENDED, &about, 0, 0,
                              (uint32_t)-status);
    }
}

static void op_abort(ftc_cop_t *op, int status, bool tell)
{
    ftc_group_t *g = op->group;
    if (op->finished)
        return;
    int told = status_for_peers(status);
    remember_ended(g, op->seq, told);
    if (!op->delivered)
        ftc_op_complete(op, status);
    ftc_op_finish(op);
    if (tell)
        tell_members_ended(g, op->seq, told);
}

void ftc_op_abort(ftc_cop_t *op, int status)
{
    op_abort(op, status, true);
}

void ftc_group_refused(ftc_group_t *g, int status)
{
    uint64_t seq = g->next_seq++;
    /* The cause is this process's call, whatever it was: the peers' own
     * arguments may be fine. */
    int told = FTC_EPEER_INVALID;
    (void)status;
    remember_ended(g, seq, told);
    /* Messages peers already sent for it will never be read. */
    for (ftc_pending_msg_t **pp = &g->pending; *pp != NULL;) {
        ftc_pending_msg_t *m = *pp;
        if (m->hdr.seq == seq) {
            *pp = m->next;
            free(m);
        } else {
            pp = &m->next;
        }
    }
    tell_members_ended(g, seq, told);
}

void ftc_op_started(ftc_cop_t *op)
{
    ftc_group_t *g = op->group;
    if (op->args.timeout_ns > 0 && !op->finished) {
        uint64_t now = g->ctx->ops.now(g->ctx->tp);
        op->deadline = now + op->args.timeout_ns < now
                           ? UINT64_MAX
                           : now + op->args.timeout_ns;
        g->ctx->timed_ops++;
    }
    uint32_t n = g->ntold_ended < 8 ? g->ntold_ended : 8;
    for (uint32_t i = 0; i < n; i++)
        if (g->told_ended[i].seq == op->seq) {
            op_abort(op, g->told_ended[i].status, false);
            return;
        }
}

static int ended_status(const ftc_group_t *g, uint64_t seq)
{
    uint32_t n = g->nended < 8 ? g->nended : 8;
    for (uint32_t i = 0; i < n; i++)
        if (g->ended[i].seq == seq)
            return g->ended[i].status;
    return FTC_OK;
}

void ftc_transport_send_done(ftc_context_t *ctx, void *cookie, int status)
{
    ftc_send_rec_t *rec = cookie;
    if (ctx == NULL || rec == NULL)
        return;
    rec->link.prev->next = rec->link.next;
    rec->link.next->prev = rec->link.prev;
    ftc_cop_t *op = rec->op;
    /* The backend knows the bytes never left: the peer is unreachable. */
    if (status < 0)
        ftc_ctx_declare_failed(ctx, rec->dest);
    rec_put(ctx, rec);
    if (op != NULL && op->cont_wanted) {
        op->cont_wanted = false;
        if (!op->finished && op->vt->on_send_done != NULL)
            op->vt->on_send_done(op);
        op_maybe_reap(op);
    }
    ctx_settle(ctx);
}

/* ---- completion and failure bookkeeping -------------------------------- */

void ftc_op_complete(ftc_cop_t *op, int status)
{
    if (op->delivered)
        return;
    op->delivered = true;
    op->comp.status = status;
    ftc_context_t *ctx = op->group->ctx;
    op->queued = true;
    op->next_done = NULL;
    if (ctx->done_tail != NULL)
        ctx->done_tail->next_done = op;
    else
        ctx->done_head = op;
    ctx->done_tail = op;
}

static bool op_pinned(const ftc_cop_t *op)
{
    return op->cont_wanted || op->queued;
}

/* Called where one of the conditions may just have become true. */
static void op_maybe_reap(ftc_cop_t *op)
{
    if (op->on_reap || !op->finished || !op->callback_done || op_pinned(op)
        || op->in_linger)
        return;
    ftc_context_t *ctx = op->group->ctx;
    op->on_reap = true;
    op->next_reap = ctx->reap_head;
    ctx->reap_head = op;
}

void ftc_op_finish(ftc_cop_t *op)
{
    op->finished = true;
    op_maybe_reap(op);
}

void ftc_op_linger(ftc_cop_t *op)
{
    if (op->lingering)
        return;
    ftc_group_t *g = op->group;
    op->lingering = true;
    op->retire_at = g->colls_done + FTC_LINGER_OPS;
    /* retire_at only grows: the list stays in retirement order. */
    op->in_linger = true;
    op->next_linger = NULL;
    if (g->linger_tail != NULL)
        g->linger_tail->next_linger = op;
    else
        g->linger_head = op;
    g->linger_tail = op;
}

/* A delivery happened on g: retire the lingerers whose time has come. A
 * peer still behind by this many collectives is not served any more.
 * Oldest first, so a stream of allreduces (64 lingering) costs O(1) per
 * delivery, not a walk of the group's operations. */
static void retire_lingering(ftc_group_t *g)
{
    g->colls_done++;
    while (g->linger_head != NULL && g->linger_head->retire_at <= g->colls_done) {
        ftc_cop_t *op = g->linger_head;
        g->linger_head = op->next_linger;
        if (g->linger_head == NULL)
            g->linger_tail = NULL;
        op->next_linger = NULL;
        op->in_linger = false;
        if (!op->finished)
            ftc_op_finish(op);
        else
            op_maybe_reap(op);
    }
}

void ftc_ctx_declare_failed(ftc_context_t *ctx, uint32_t r)
{
    if (r >= ctx->size || r == ctx->rank || ftc_context_is_failed(ctx, r))
        return;
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

int ftc_op_set_failed(ftc_cop_t *op, const uint32_t *granks, uint32_t n)
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

void ftc_ctx_become_excluded(ftc_context_t *ctx)
{
    if (ctx->excluded)
        return;
    ctx->excluded = true;
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        group_cancel_ops(g, FTC_EEXCLUDED);
    for (uint32_t i = 0; i < ctx->nwatches; i++)
        if (ctx->ops.unwatch != NULL)
            ctx->ops.unwatch(ctx->tp, ctx->watches[i].peer);
    ctx->nwatches = 0;
}

static void notify_failed(ftc_context_t *ctx, uint32_t r)
{
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next) {
        int64_t gr = ftc_group_rank_of(g, r);
        if (gr < 0)
            continue;
        for (ftc_cop_t *op = g->ops; op != NULL; op = op->next) {
            if (op->finished)
                continue;
            if (!op->delivered)
                op->comp.stats.failures_detected++;
            op->vt->on_peer_failed(op, (uint32_t)gr);
        }
    }
}

static void reap(ftc_context_t *ctx)
{
    while (ctx->reap_head != NULL) {
        ftc_cop_t *op = ctx->reap_head;
        ctx->reap_head = op->next_reap;
        op->on_reap = false;
        /* Pinned again since (it cannot be finished and unpinned twice
         * otherwise): it comes back here when it is unpinned. */
        if (op->finished && op->callback_done && !op_pinned(op))
            op_unlink_and_free(op);
    }
}

/* Operation timeouts: a walk of the live operations, only while some
 * operation has one (timed_ops), so a stream without timeouts pays
 * nothing. */
static uint64_t next_op_deadline(const ftc_context_t *ctx)
{
    uint64_t d = UINT64_MAX;
    if (ctx->timed_ops == 0)
        return d;
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        for (ftc_cop_t *op = g->ops; op != NULL; op = op->next)
            if (op->deadline != 0 && !op->delivered && !op->finished
                && op->deadline < d)
                d = op->deadline;
    return d;
}

static void expire_ops(ftc_context_t *ctx, uint64_t now)
{
    if (ctx->timed_ops == 0)
        return;
    for (ftc_group_t *g = ctx->groups; g != NULL; g = g->next)
        for (ftc_cop_t *op = g->ops; op != NULL; op = op->next)
            if (op->deadline != 0 && op->deadline <= now && !op->delivered
                && !op->finished)
                op_abort(op, FTC_ETIMEDOUT, true);
}

static void ctx_rearm(ftc_context_t *ctx)
{
    uint64_t want = UINT64_MAX;
    bool urgent = ctx->done_head != NULL || ctx->fail_queue_len > 0
                  || ctx->cont_timer;
    if (urgent)
        want = ctx->ops.now(ctx->tp);
    uint64_t mon = ftc_monitor_next_deadline(ctx);
    if (mon < want)
        want = mon;
    uint64_t op_due = next_op_deadline(ctx);
    if (op_due < want)
        want = op_due;
    if (want == UINT64_MAX) {
        if (ctx->timer_armed) {
            ctx->ops.timer_cancel(ctx->tp);
            ctx->timer_armed = false;
        }
        return;
    }
    /* A later deadline leaves the armed one alone: every message moves
     * its sender's keepalive deadline, and re-arming the transport's
     * timer for each would cost more than the one early wake-up per
     * suspect timeout this costs (timer_fired re-arms). */
    if (!ctx->timer_armed || want < ctx->timer_deadline) {
        ctx->ops.timer_arm(ctx->tp, want);
        ctx->timer_armed = true;
        ctx->timer_deadline = want;
    }
}

static void ctx_settle(ftc_context_t *ctx)
{
    if (ctx->settling)
        return;
    ctx->settling = true;
    for (;;) {
        if (ctx->fail_queue_len > 0) {
            uint32_t r = ctx->fail_queue[--ctx->fail_queue_len];
            notify_failed(ctx, r);
            continue;
        }
        if (ctx->done_head != NULL) {
            ftc_cop_t *op = ctx->done_head;
            ctx->done_head = op->next_done;
            if (ctx->done_head == NULL)
                ctx->done_tail = NULL;
            op->queued = false;
            op->comp.coll = op->coll;
            op->comp.seq = op->seq;
            op->comp.group = op->group;
            if (op->comp.recvbuf == NULL)
                op->comp.recvbuf = op->args.recvbuf;
            op->args.deliver(&op->comp, op->args.deliver_arg);
            op->callback_done = true;
            op_maybe_reap(op);
            retire_lingering(op->group);
            continue;
        }
        break;
    }
    reap(ctx);
    ctx->settling = false;
    ctx_rearm(ctx);
}

void ftc_ctx_after_init(ftc_context_t *ctx)
{
    if (!ctx->settling)
        ctx_rearm(ctx);
}

/* ---- entry points ----------------------------------------------------- */

void ftc_transport_timer_fired(ftc_context_t *ctx)
{
    if (ctx == NULL)
        return;
    ctx->timer_armed = false;
    uint64_t now = ctx->ops.now(ctx->tp);
    if (!ctx->excluded) {
        ftc_monitor_expire(ctx, now);
        expire_ops(ctx, now);
    }
    ctx->cont_timer = false;
    ftc_cop_t *list = ctx->cont_head;
    ctx->cont_head = NULL;
    while (list != NULL) {
        ftc_cop_t *op = list;
        list = op->next_cont;
        op->cont_wanted = false;
        if (!op->finished && op->vt->on_send_done != NULL)
            op->vt->on_send_done(op);
        op_maybe_reap(op);
    }
    ctx_settle(ctx);
}

void ftc_transport_peer_failed(ftc_context_t *ctx, uint32_t peer)
{
    if (ctx == NULL || peer >= ctx->size || ctx->excluded)
        return;
    ftc_ctx_declare_failed(ctx, peer);
    ctx_settle(ctx);
}

int ftc_progress(ftc_context_t *ctx)
{
    if (ctx == NULL)
        return FTC_EINVAL;
    if (ctx->ops.progress == NULL)
        return 0;
    return ctx->ops.progress(ctx->tp);
}

static int stash(ftc_pending_msg_t **list, const ftc_wire_header_t *hdr,
                 const uint8_t *payload, uint32_t src)
{
    ftc_pending_msg_t *m = malloc(sizeof(*m) + hdr->payload_len);
    if (m == NULL)
        return FTC_ENOMEM;
    m->hdr = *hdr;
    m->src = src;
    if (hdr->payload_len > 0)
        memcpy(m->payload, payload, hdr->payload_len);
    m->next = *list;
    *list = m;
    return FTC_OK;
}

static ftc_cop_t *find_op(ftc_group_t *g, uint64_t seq)
{
    for (ftc_cop_t *op = g->ops; op != NULL; op = op->next)
        if (op->seq == seq)
            return op;
    return NULL;
}

static int deliver_to_op(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                         const uint8_t *payload, uint32_t sender)
{
    ftc_context_t *ctx = op->group->ctx;
    int64_t gr = ftc_group_rank_of(op->group, sender);
    if (gr < 0) {
        ctx->counters.dropped_badmsg++;
        return FTC_EBADMSG;
    }
    if (hdr->signature != op->signature || hdr->coll != (uint8_t)op->coll
        || hdr->algo != (uint8_t)op->args.algo) {
        /* A peer started this collective with other arguments: a usage
         * error that must surface instead of a hang. */
        ctx->counters.dropped_badmsg++;
        ftc_op_abort(op, FTC_EMISMATCH);
        return FTC_EBADMSG;
    }
    if (op->finished) {
        ctx->counters.late++;
        return FTC_OK;
    }
    op->comp.stats.msgs_received++;
    op->comp.stats.bytes_received += FTC_WIRE_HEADER_SIZE + hdr->payload_len;
    op->vt->on_msg(op, hdr, payload, (uint32_t)gr);
    return FTC_OK;
}

void ftc_op_replay_pending(ftc_cop_t *op)
{
    ftc_group_t *g = op->group;
    /* Pending messages are stored newest first; replay oldest first to
     * keep per-sender order. */
    ftc_pending_msg_t *mine = NULL;
    for (ftc_pending_msg_t **pp = &g->pending; *pp != NULL;) {
        ftc_pending_msg_t *m = *pp;
        if (m->hdr.seq == op->seq) {
            *pp = m->next;
            m->next = mine;
            mine = m;
        } else {
            pp = &m->next;
        }
    }
    while (mine != NULL) {
        ftc_pending_msg_t *m = mine;
        mine = m->next;
        if (!ftc_context_is_failed(g->ctx, m->src))
            (void)deliver_to_op(op, &m->hdr, m->payload, m->src);
        free(m);
    }
}

static void handle_control(ftc_context_t *ctx, const ftc_wire_header_t *hdr)
{
    ftc_group_t *g = find_group(ctx, hdr->group_id, hdr->epoch);
    ftc_cop_t *op = g != NULL ? find_op(g, hdr->seq) : NULL;
    int64_t gr = g != NULL ? ftc_group_rank_of(g, hdr->sender) : -1;
    /* A probe or its answer that says the operation is something else at
     * the peer: the members disagree on it (ftc_ctx_send_probe). */
    if ((hdr->kind == FTC_MSG_PROBE || hdr->kind == FTC_MSG_PROBE_ACK)
        && hdr->signature != 0 && op != NULL && !op->finished && gr >= 0
        && (hdr->signature != op->signature || hdr->coll != (uint8_t)op->coll
            || hdr->algo != (uint8_t)op->args.algo)) {
        ctx->counters.dropped_badmsg++;
        op_abort(op, FTC_EMISMATCH, true);
    }
    if (hdr->kind == FTC_MSG_PROBE) {
        ftc_watch_t about = {.group_id = hdr->group_id, .epoch = hdr->epoch,
                             .seq = hdr->seq};
        uint32_t round = 0;
        if (op != NULL && op->vt->current_round != NULL)
            round = op->vt->current_round(op);
        int ended = g != NULL && (op == NULL || op->finished)
                        ? ended_status(g, hdr->seq)
                        : FTC_OK;
        /* Probed about a group we have only in a newer epoch: the prober
         * runs collectives on an epoch this process left (a usage error
         * at one of us); it would wait for ever. */
        if (g == NULL)
            for (ftc_group_t *h = ctx->groups; h != NULL; h = h->next)
                if (h->id == hdr->group_id && h->epoch > hdr->epoch)
                    ended = FTC_EMISMATCH;
        (void)send_control_op(ctx, hdr->sender, FTC_MSG_PROBE_ACK, &about,
                              round, ended != FTC_OK ? FTC_WF_OP_ENDED : 0,
                              (uint32_t)-ended,
                              op != NULL && !op->finished ? op : NULL);
    }
    if (hdr->kind == FTC_MSG_PROBE_ACK && (hdr->flags & FTC_WF_OP_ENDED)
        && op != NULL && !op->finished && gr >= 0
        && is_usage_status(-(int)hdr->aux)) {
        /* A peer we wait on left this operation over a usage error: so do
         * we (the others heard it from that peer, or hear it from our
         * answers to their probes). */
        op_abort(op, -(int)hdr->aux, false);
        return;
    }
    if (hdr->kind == FTC_MSG_ENDED) {
        int st = -(int)hdr->aux;
        if (g == NULL || gr < 0 || !is_usage_status(st)) {
            ctx->counters.dropped_badmsg++;
            return;
        }
        if (op != NULL) {
            op_abort(op, st, false);
        } else if (hdr->seq >= g->next_seq) {
            /* Not started here yet: it ends as it starts. */
            g->told_ended[g->ntold_ended % 8].seq = hdr->seq;
            g->told_ended[g->ntold_ended % 8].status = st;
            g->ntold_ended++;
        }
        return;
    }
    if (op != NULL && gr >= 0 && !op->finished
        && op->vt->on_peer_round != NULL)
        op->vt->on_peer_round(op, (uint32_t)gr, hdr->round);
    /* A probe names the oldest operation that waits on us (a watch is
     * per peer, shared by every operation of the prober that waits on
     * us), so it asks about that one and every later one: a laggard
     * stranded in operations k and k+1 pulls both. */
    if (hdr->kind == FTC_MSG_PROBE && g != NULL && gr >= 0)
        for (ftc_cop_t *o = g->ops; o != NULL; o = o->next)
            if (o->seq >= hdr->seq && !o->finished && o->vt->on_probe != NULL)
                o->vt->on_probe(o, (uint32_t)gr);
}

int ftc_transport_recv(ftc_context_t *ctx, uint32_t src, const void *buf,
                       size_t len)
{
    if (ctx == NULL || (buf == NULL && len > 0))
        return FTC_EINVAL;
    ftc_wire_header_t hdr;
    int rc = ftc_wire_decode_key(buf, len, ctx->cfg.job_token,
                                 ctx->cfg.auth ? ctx->cfg.auth_key : NULL,
                                 ctx->size, &hdr);
    if (rc == FTC_OK && src != FTC_RANK_UNKNOWN && src != hdr.sender)
        rc = FTC_EBADMSG;   /* the header lies about who sent it */
    if (rc == FTC_OK && hdr.sender == ctx->rank)
        rc = FTC_EBADMSG;
    switch (rc) {
    case FTC_OK: break;
    case FTC_ETRUNCATED: ctx->counters.dropped_truncated++; return rc;
    case FTC_ECHECKSUM: ctx->counters.dropped_checksum++; return rc;
    case FTC_EVERSION: ctx->counters.dropped_version++; return rc;
    case FTC_EFOREIGN:
    case FTC_EAUTH: ctx->counters.dropped_foreign++; return rc;
    default: ctx->counters.dropped_badmsg++; return rc;
    }
    /* An excluded process behaves as the crashed process the others take
     * it for: it answers nothing. */
    if (ctx->excluded)
        return FTC_OK;
    ctx->counters.msgs_received++;
    ctx->counters.bytes_received += len;
    const uint8_t *payload = (const uint8_t *)buf + FTC_WIRE_HEADER_SIZE;

    if (ftc_context_is_failed(ctx, hdr.sender)) {
        /* Two processes that suspect each other: the one that counts most
         * of the world as failed is the one that was cut off (stopped,
         * partitioned away), so it accepts the verdict; the other ignores
         * it, else a process the group dropped could evict healthy ones on
         * its way out. */
        if (hdr.kind == FTC_MSG_EXCLUDED
            && (uint64_t)ctx->nfailed * 2 > (uint64_t)ctx->size - 1) {
            ftc_ctx_become_excluded(ctx);
            ctx_settle(ctx);
            return FTC_OK;
        }
        ctx->counters.dropped_stale++;
        if (hdr.kind != FTC_MSG_EXCLUDED) /* tell it again */
            (void)ftc_ctx_send_control(ctx, hdr.sender, FTC_MSG_EXCLUDED,
                                       NULL, 0);
        return FTC_ESTALE;
    }
    if (hdr.kind == FTC_MSG_EXCLUDED) {
        ftc_ctx_become_excluded(ctx);
        ctx_settle(ctx);
        return FTC_OK;
    }
    /* Every segment counts: a peer streaming a large value is alive. */
    ftc_monitor_heard(ctx, hdr.sender);

    uint8_t *whole = NULL;
    if (hdr.flags & FTC_WF_SEGMENT) {
        rc = ftc_segment_recv(ctx, &hdr, &payload, &whole);
        if (rc <= 0) {
            ctx_settle(ctx);
            return rc;
        }
    }
    rc = FTC_OK;
    if (hdr.kind == FTC_MSG_PROBE || hdr.kind == FTC_MSG_PROBE_ACK
        || hdr.kind == FTC_MSG_ENDED) {
        handle_control(ctx, &hdr);
    } else if (hdr.kind == FTC_MSG_SEG_CREDIT) {
        ftc_segment_credit(ctx, hdr.sender, hdr.round);
    } else {
        ftc_group_t *g = find_group(ctx, hdr.group_id, hdr.epoch);
        if (g == NULL) {
            bool newer = false;
            for (ftc_group_t *h = ctx->groups; h != NULL; h = h->next)
                if (h->id == hdr.group_id && h->epoch > hdr.epoch)
                    newer = true;
            if (newer) {
                ctx->counters.dropped_stale++;
                rc = FTC_ESTALE;
            } else {
                size_t cost = sizeof(ftc_pending_msg_t) + hdr.payload_len;
                if (cost > FTC_ORPHAN_MAX_BYTES - ctx->orphan_bytes) {
                    ctx->counters.dropped_stale++;
                    rc = FTC_ESTALE;
                } else {
                    rc = stash(&ctx->orphans, &hdr, payload, hdr.sender);
                    if (rc == FTC_OK)
                        ctx->orphan_bytes += cost;
                }
            }
        } else if (hdr.seq >= g->next_seq) {
            rc = stash(&g->pending, &hdr, payload, hdr.sender);
        } else {
            ftc_cop_t *op = find_op(g, hdr.seq);
            if (op == NULL) {
                ctx->counters.late++;
            } else {
                rc = deliver_to_op(op, &hdr, payload, hdr.sender);
            }
        }
    }
    ftc_segment_release(ctx, whole, hdr.payload_len);
    ctx_settle(ctx);
    return rc;
}
