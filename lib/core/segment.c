/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segmentation, credits and reassembly (segment.h says what and why). The
 * state hangs off the context, one small record per peer that a segment
 * went to or came from: a context that never sees a large message pays a
 * pointer test per message.
 */
#include <stdlib.h>
#include <string.h>

#include "core/group.h"
#include "core/monitor.h"
#include "core/pending.h"
#include "core/segment.h"

/*
 * The bytes of a segmented message, shared by every destination it is
 * queued for. An operation often sends one value to several peers (the
 * exchange to all, a broadcast to its children and neighbours); each
 * queue used to hold its own copy, and every segment was MACed again for
 * every destination. Now the first queueing copies the bytes once, later
 * ones with the same bytes (compared, not assumed: the caller may have
 * changed its buffer since) take a reference, and each segment's keyed
 * digest (lib/wire/wire.h, FTC_WF_DIGEST) is computed once, by whichever
 * destination's pump reaches it first. Freed when the last queue is done
 * with it.
 */
typedef struct seg_shared {
    struct seg_shared *next;    /* the state's list of live ones */
    uint32_t refs;
    size_t len;
    size_t seg;                 /* the segment size the digests are for */
    uint64_t *digest;           /* per segment, where known[i] */
    uint8_t *known;
    uint8_t data[];
} seg_shared_t;

/* One message waiting in a destination's queue. */
typedef struct seg_msg {
    struct seg_msg *next;
    ftc_wire_header_t hdr;
    uint32_t id;
    bool whole;             /* short: sent unsegmented, queued only for order */
    size_t len, off;        /* payload length; next byte to send */
    seg_shared_t *shared;   /* segmented: the bytes; whole: NULL */
    const uint8_t *bytes;   /* data or shared->data */
    size_t cap;             /* bytes at data */
    uint8_t data[];
} seg_msg_t;

/* Segment traffic with one peer, both ways. */
typedef struct seg_peer {
    struct seg_peer *next;
    uint32_t peer;          /* world rank */

    /* To peer: the queue, and segments sent / credited (counters that
     * wrap; only their difference matters). */
    seg_msg_t *head, *tail;
    uint32_t sent, credited;

    /* From peer: segments received (what our credits say), and the one
     * message being reassembled, if any. */
    uint32_t received;
    bool partial;
    bool swallow;           /* its operation ended here: keep nothing */
    uint32_t id, total, got;
    ftc_wire_header_t hdr;  /* the first segment's, as the message's */
    uint8_t *buf;
    uint32_t parked;        /* its messages waiting in the parking queue */
} seg_peer_t;

/* A received message whose handling waits for the timer's turn. */
typedef struct seg_parked {
    struct seg_parked *next;
    ftc_wire_header_t hdr;
    uint8_t *buf;           /* hdr.payload_len bytes, ours */
} seg_parked_t;

typedef struct ftc_seg_state {
    seg_peer_t *peers;
    uint32_t next_id;
    size_t held;            /* bytes in partial messages */
    /* Large queue and reassembly buffers come from and go back to the
     * context's pool (core/bulk_pool.h): a stream of large collectives
     * then reuses memory whose pages are already mapped. */
    ftc_context_t *ctx;
    seg_parked_t *parked_head, *parked_tail;
    seg_shared_t *shared;   /* bytes queued for one destination or more */
} ftc_seg_state_t;

static bool is_control(uint8_t kind)
{
    return kind == FTC_MSG_PROBE || kind == FTC_MSG_PROBE_ACK
           || kind == FTC_MSG_EXCLUDED || kind == FTC_MSG_ENDED
           || kind == FTC_MSG_STOPPED || kind == FTC_MSG_SEG_CREDIT;
}

size_t ftc_segment_payload_max_of(const ftc_config_t *cfg,
                                  const ftc_transport_ops_t *ops)
{
    uint64_t s = cfg->segment_size != 0 ? cfg->segment_size
                                        : FTC_SEGMENT_SIZE_DEFAULT;
    size_t m = ops->max_msg_size;
    if (m != 0) {
        size_t over = FTC_WIRE_HEADER_SIZE + FTC_WIRE_SEGMENT_HDR;
        uint64_t cap = m > over ? m - over : 1;
        if (cap < s)
            s = cap;
    }
    if (s > FTC_WIRE_MAX_PAYLOAD - FTC_WIRE_SEGMENT_HDR)
        s = FTC_WIRE_MAX_PAYLOAD - FTC_WIRE_SEGMENT_HDR;
    return (size_t)s;
}

static uint32_t window(const ftc_context_t *ctx)
{
    return ctx->cfg.segment_window != 0 ? ctx->cfg.segment_window
                                        : FTC_SEGMENT_WINDOW_DEFAULT;
}

static seg_peer_t *peer_find(const ftc_context_t *ctx, uint32_t peer)
{
    const ftc_seg_state_t *st = ctx->seg;
    if (st == NULL)
        return NULL;
    for (seg_peer_t *p = st->peers; p != NULL; p = p->next)
        if (p->peer == peer)
            return p;
    return NULL;
}

static seg_peer_t *peer_get(ftc_context_t *ctx, uint32_t peer)
{
    if (ctx->seg == NULL) {
        ctx->seg = calloc(1, sizeof(ftc_seg_state_t));
        if (ctx->seg == NULL)
            return NULL;
        ctx->seg->ctx = ctx;
    }
    seg_peer_t *p = peer_find(ctx, peer);
    if (p != NULL)
        return p;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->peer = peer;
    p->next = ctx->seg->peers;
    ctx->seg->peers = p;
    return p;
}

bool ftc_segment_queued_to(const ftc_context_t *ctx, uint32_t dest)
{
    const seg_peer_t *p = peer_find(ctx, dest);
    return p != NULL && p->head != NULL;
}

/* A queued message's memory (cap: the bytes after the struct). */
static seg_msg_t *msg_get(ftc_seg_state_t *st, size_t len)
{
    if (len > SIZE_MAX - sizeof(seg_msg_t))
        return NULL;
    seg_msg_t *m = ftc_bulk_get(st->ctx, sizeof(*m) + len);
    if (m != NULL)
        m->cap = len;
    return m;
}

static void shared_unref(ftc_seg_state_t *st, seg_shared_t *sh)
{
    if (--sh->refs > 0)
        return;
    seg_shared_t **pp = &st->shared;
    while (*pp != sh)
        pp = &(*pp)->next;
    *pp = sh->next;
    free(sh->digest);
    free(sh->known);
    ftc_bulk_put(st->ctx, sh);
}

static void msg_put(ftc_seg_state_t *st, seg_msg_t *m)
{
    if (m->shared != NULL)
        shared_unref(st, m->shared);
    ftc_bulk_put(st->ctx, m);
}

/* Do the len bytes at b equal what iov gathers? */
static bool same_bytes(const uint8_t *b, const ftc_iov_t *iov, int iovcnt)
{
    size_t at = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].len > 0 && memcmp(b + at, iov[i].base, iov[i].len) != 0)
            return false;
        at += iov[i].len;
    }
    return true;
}

/* The shared bytes for a segmented message of len bytes (iov): a live
 * copy of the same bytes with a new reference, or a new copy. NULL: out
 * of memory. */
static seg_shared_t *shared_get(ftc_context_t *ctx, const ftc_iov_t *iov,
                                int iovcnt, size_t len)
{
    ftc_seg_state_t *st = ctx->seg;
    size_t seg = ftc_segment_payload_max(ctx);
    for (seg_shared_t *sh = st->shared; sh != NULL; sh = sh->next)
        if (sh->len == len && sh->seg == seg
            && same_bytes(sh->data, iov, iovcnt)) {
            sh->refs++;
            return sh;
        }
    if (len > SIZE_MAX - sizeof(seg_shared_t))
        return NULL;
    seg_shared_t *sh = ftc_bulk_get(ctx, sizeof(*sh) + len);
    if (sh == NULL)
        return NULL;
    size_t nseg = (len + seg - 1) / seg;
    sh->digest = NULL;
    sh->known = NULL;
    if (ctx->cfg.auth) {
        sh->digest = malloc(nseg * sizeof(*sh->digest));
        sh->known = calloc(nseg, 1);
        if (sh->digest == NULL || sh->known == NULL) {
            free(sh->digest);
            free(sh->known);
            ftc_bulk_put(ctx, sh);
            return NULL;
        }
    }
    sh->refs = 1;
    sh->len = len;
    sh->seg = seg;
    uint8_t *d = sh->data;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].len > 0)
            memcpy(d, iov[i].base, iov[i].len);
        d += iov[i].len;
    }
    sh->next = st->shared;
    st->shared = sh;
    return sh;
}

static uint8_t *buf_get(ftc_seg_state_t *st, size_t len)
{
    return ftc_bulk_get(st->ctx, len);
}

/* b is from buf_get (len: what it was asked for). */
static void buf_put(ftc_seg_state_t *st, uint8_t *b, size_t len)
{
    (void)len;
    if (st == NULL) {
        ftc_bulk_free(b);
        return;
    }
    ftc_bulk_put(st->ctx, b);
}

void ftc_segment_release(ftc_context_t *ctx, uint8_t *whole, size_t len)
{
    buf_put(ctx->seg, whole, len);
}

static void queue_drop(ftc_seg_state_t *st, seg_peer_t *p)
{
    while (p->head != NULL) {
        seg_msg_t *m = p->head;
        p->head = m->next;
        msg_put(st, m);
    }
    p->tail = NULL;
    p->credited = p->sent;
}

static void partial_drop(ftc_seg_state_t *st, seg_peer_t *p)
{
    if (p->buf != NULL)
        st->held -= p->total;
    buf_put(st, p->buf, p->total);
    p->buf = NULL;
    p->partial = false;
    p->swallow = false;
}

static void put32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16
           | (uint32_t)b[3] << 24;
}

/* Send from dest's queue what the window allows. Looks the peer up again
 * after every send: a refused send declares dest failed, which drops its
 * queue (ftc_segment_peer_down). */
static void pump(ftc_context_t *ctx, uint32_t dest)
{
    size_t seg = ftc_segment_payload_max(ctx);
    uint32_t w = window(ctx);
    for (;;) {
        seg_peer_t *p = peer_find(ctx, dest);
        if (p == NULL || p->head == NULL)
            return;
        seg_msg_t *m = p->head;
        if (!m->whole && p->sent - p->credited >= w)
            return; /* wait for a credit */
        ftc_wire_header_t h = m->hdr;
        uint8_t sub[FTC_WIRE_SEGMENT_HDR];
        ftc_iov_t iov[2];
        int cnt;
        size_t chunk;
        const uint64_t *digest = NULL;
        if (m->whole) {
            chunk = m->len;
            iov[0].base = m->bytes;
            iov[0].len = m->len;
            cnt = 1;
        } else {
            chunk = m->len - m->off < seg ? m->len - m->off : seg;
            seg_shared_t *sh = m->shared;
            if (sh->digest != NULL && m->off % seg == 0) {
                /* Under the job key: the segment's digest, once for all
                 * the destinations of these bytes (seg_shared_t). */
                size_t i = m->off / seg;
                if (!sh->known[i]) {
                    sh->digest[i] = ftc_wire_segment_digest(
                        ctx->cfg.auth_key, sh->data + m->off, chunk);
                    sh->known[i] = 1;
                }
                digest = &sh->digest[i];
            }
            h.flags = (uint16_t)(h.flags | FTC_WF_SEGMENT);
            put32(sub, m->id);
            put32(sub + 4, (uint32_t)m->off);
            put32(sub + 8, (uint32_t)m->len);
            put32(sub + 12, 0);
            iov[0].base = sub;
            iov[0].len = sizeof(sub);
            iov[1].base = m->bytes + m->off;
            iov[1].len = chunk;
            cnt = 2;
            p->sent++;
        }
        m->off += chunk;
        bool last = m->off >= m->len;
        if (last) {
            p->head = m->next;
            if (p->head == NULL)
                p->tail = NULL;
        }
        bool inline_done;
        int rc = digest != NULL
                     ? ftc_ctx_send_wire_digest(ctx, dest, &h, iov, cnt,
                                                *digest, &inline_done)
                     : ftc_ctx_send_wire(ctx, dest, &h, iov, cnt, NULL,
                                         &inline_done);
        if (last)
            msg_put(ctx->seg, m);
        if (rc != FTC_OK) {
            /* dest is failed now (or refuses what it said it takes):
             * nothing more goes to it. */
            p = peer_find(ctx, dest);
            if (p != NULL)
                queue_drop(ctx->seg, p);
            return;
        }
    }
}

/* Is the same message (header and bytes) still waiting, wholly or partly,
 * in p's queue? Then the peer will have it: a second copy is waste. */
static bool queued_already(const seg_peer_t *p, const ftc_wire_header_t *hdr,
                           const ftc_iov_t *iov, int iovcnt, size_t len)
{
    for (const seg_msg_t *m = p->head; m != NULL; m = m->next) {
        const ftc_wire_header_t *q = &m->hdr;
        if (m->len != len || q->kind != hdr->kind || q->flags != hdr->flags
            || q->group_id != hdr->group_id || q->epoch != hdr->epoch
            || q->seq != hdr->seq || q->word != hdr->word
            || q->aux != hdr->aux || q->signature != hdr->signature)
            continue;
        if (same_bytes(m->bytes, iov, iovcnt))
            return true;
    }
    return false;
}

static int queue_and_pump(ftc_context_t *ctx, seg_peer_t *p, uint32_t dest,
                          const ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                          int iovcnt, size_t len);

int ftc_segment_send(ftc_context_t *ctx, uint32_t dest,
                     const ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                     int iovcnt)
{
    seg_peer_t *p = peer_get(ctx, dest);
    if (p == NULL)
        return FTC_ENOMEM;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].len;
    /* A peer that probes us while our copy of a large value is still on
     * its way gets another copy from a broadcast (on_probe); on a slow
     * host every probe would add a whole value to the queue, and the
     * longer queue cause more probes. */
    if (queued_already(p, hdr, iov, iovcnt, len))
        return FTC_OK;
    /* Copying a large value in is this process's own work, whatever
     * small message or timer made it send (core/monitor.h). */
    if (len < FTC_AWAY_MIN_BYTES)
        return queue_and_pump(ctx, p, dest, hdr, iov, iovcnt, len);
    uint64_t since = ftc_monitor_away_begin(ctx);
    int rc = queue_and_pump(ctx, p, dest, hdr, iov, iovcnt, len);
    ftc_monitor_away_end(ctx, since);
    return rc;
}

static int queue_and_pump(ftc_context_t *ctx, seg_peer_t *p, uint32_t dest,
                          const ftc_wire_header_t *hdr, const ftc_iov_t *iov,
                          int iovcnt, size_t len)
{
    bool whole = len <= ftc_segment_payload_max(ctx);
    seg_shared_t *sh = NULL;
    if (!whole) {
        sh = shared_get(ctx, iov, iovcnt, len);
        if (sh == NULL)
            return FTC_ENOMEM;
    }
    seg_msg_t *m = msg_get(ctx->seg, whole ? len : 0);
    if (m == NULL) {
        if (sh != NULL)
            shared_unref(ctx->seg, sh);
        return FTC_ENOMEM;
    }
    m->next = NULL;
    m->hdr = *hdr;
    m->whole = whole;
    m->id = m->whole ? 0 : ctx->seg->next_id++;
    m->len = len;
    m->off = 0;
    m->shared = sh;
    if (whole) {
        uint8_t *d = m->data;
        for (int i = 0; i < iovcnt; i++) {
            if (iov[i].len > 0)
                memcpy(d, iov[i].base, iov[i].len);
            d += iov[i].len;
        }
        m->bytes = m->data;
    } else {
        m->bytes = sh->data;
    }
    if (p->tail != NULL)
        p->tail->next = m;
    else
        p->head = m;
    p->tail = m;
    pump(ctx, dest);
    return FTC_OK;
}

void ftc_segment_credit(ftc_context_t *ctx, uint32_t peer, uint32_t count)
{
    seg_peer_t *p = peer_find(ctx, peer);
    /* Only a credit for segments we sent and that were not credited yet
     * moves the window (counters wrap: compare differences). */
    if (p == NULL || count - p->credited > p->sent - p->credited) {
        ctx->counters.dropped_badmsg++;
        return;
    }
    p->credited = count;
    pump(ctx, peer);
}

/* Free the parked messages from peer (UINT32_MAX: from anyone). */
static void parked_drop(ftc_seg_state_t *st, uint32_t peer)
{
    seg_parked_t **pp = &st->parked_head, *last = NULL;
    while (*pp != NULL) {
        seg_parked_t *q = *pp;
        if (peer != UINT32_MAX && q->hdr.sender != peer) {
            last = q;
            pp = &q->next;
            continue;
        }
        *pp = q->next;
        buf_put(st, q->buf, q->hdr.payload_len);
        free(q);
    }
    st->parked_tail = last;
}

void ftc_segment_peer_down(ftc_context_t *ctx, uint32_t peer)
{
    seg_peer_t *p = peer_find(ctx, peer);
    if (p == NULL)
        return;
    queue_drop(ctx->seg, p);
    partial_drop(ctx->seg, p);
    /* What it sent may be lost now that it failed (the failure model):
     * its parked messages go, as a partial one does. */
    if (p->parked > 0)
        parked_drop(ctx->seg, peer);
    p->parked = 0;
}

bool ftc_seg_state_parked_from(const ftc_context_t *ctx, uint32_t peer)
{
    const seg_peer_t *p = peer_find(ctx, peer);
    return p != NULL && p->parked > 0;
}

bool ftc_seg_state_has_parked(const ftc_context_t *ctx)
{
    return ctx->seg->parked_head != NULL;
}

int ftc_segment_park(ftc_context_t *ctx, const ftc_wire_header_t *hdr,
                     const uint8_t *payload, uint8_t *whole)
{
    seg_peer_t *p = peer_get(ctx, hdr->sender);
    seg_parked_t *q = p != NULL ? malloc(sizeof(*q)) : NULL;
    uint8_t *buf = whole;
    if (q != NULL && buf == NULL) {
        buf = ftc_bulk_get(ctx, hdr->payload_len);
        if (buf != NULL && hdr->payload_len > 0)
            memcpy(buf, payload, hdr->payload_len);
    }
    if (q == NULL || buf == NULL) {
        free(q);
        buf_put(ctx->seg, whole, hdr->payload_len);
        return FTC_ENOMEM;
    }
    q->next = NULL;
    q->hdr = *hdr;
    q->buf = buf;
    if (ctx->seg->parked_tail != NULL)
        ctx->seg->parked_tail->next = q;
    else
        ctx->seg->parked_head = q;
    ctx->seg->parked_tail = q;
    p->parked++;
    return FTC_OK;
}

bool ftc_segment_unpark(ftc_context_t *ctx, bool no_large,
                        ftc_wire_header_t *hdr, const uint8_t **payload,
                        uint8_t **buf)
{
    ftc_seg_state_t *st = ctx->seg;
    if (st == NULL || st->parked_head == NULL)
        return false;
    seg_parked_t *q = st->parked_head;
    if (no_large && q->hdr.payload_len >= FTC_AWAY_MIN_BYTES)
        return false;
    st->parked_head = q->next;
    if (st->parked_head == NULL)
        st->parked_tail = NULL;
    seg_peer_t *p = peer_find(ctx, q->hdr.sender);
    if (p != NULL && p->parked > 0)
        p->parked--;
    *hdr = q->hdr;
    *payload = q->buf;
    *buf = q->buf;
    free(q);
    return true;
}

void ftc_segment_destroy(ftc_context_t *ctx)
{
    ftc_seg_state_t *st = ctx->seg;
    if (st == NULL)
        return;
    while (st->peers != NULL) {
        seg_peer_t *p = st->peers;
        st->peers = p->next;
        queue_drop(st, p);
        partial_drop(st, p);
        free(p);
    }
    parked_drop(st, UINT32_MAX);
    free(st);
    ctx->seg = NULL;
}

size_t ftc_segment_held_bytes(const ftc_context_t *ctx)
{
    return ctx->seg != NULL ? ctx->seg->held : 0;
}

size_t ftc_segment_queued_bytes(const ftc_context_t *ctx)
{
    size_t n = 0;
    if (ctx->seg != NULL)
        for (const seg_shared_t *sh = ctx->seg->shared; sh != NULL;
             sh = sh->next)
            n += sh->len;
    return n;
}

/* ---- receiving -------------------------------------------------------- */

/* How long the message hdr starts may be, here and now. *swallow: its
 * operation has ended here, keep nothing. *early: its operation has not
 * started here (the bound is its sender's budget, core/pending.h). */
static uint64_t total_bound(ftc_context_t *ctx, const ftc_wire_header_t *hdr,
                            bool *swallow, ftc_group_t **early)
{
    *swallow = false;
    *early = NULL;
    ftc_group_t *g = ctx->groups;
    while (g != NULL && (g->id != hdr->group_id || g->epoch != hdr->epoch))
        g = g->next;
    if (g == NULL) {
        /* It will wait among the orphans, under their bound. */
        return FTC_ORPHAN_MAX_BYTES - ctx->orphan_bytes;
    }
    if (hdr->seq >= g->next_seq) {
        *early = g;
        return ftc_pending_room(g, hdr->sender);
    }
    for (const ftc_cop_t *op = g->ops; op != NULL; op = op->next)
        if (op->seq == hdr->seq && !op->finished)
            return 2 * (uint64_t)op->nbytes + 16 * (uint64_t)g->n + 1024;
    *swallow = true;
    return 0;
}

/* Do two segments' headers describe the same message? */
static bool same_message(const ftc_wire_header_t *a,
                         const ftc_wire_header_t *b)
{
    return a->kind == b->kind && a->algo == b->algo && a->coll == b->coll
           && ((a->flags ^ b->flags) & ~(unsigned)FTC_WF_SEGMENT) == 0
           && a->group_id == b->group_id && a->epoch == b->epoch
           && a->seq == b->seq && a->word == b->word && a->aux == b->aux
           && a->signature == b->signature;
}

static int drop(ftc_context_t *ctx)
{
    ctx->counters.dropped_badmsg++;
    return FTC_EBADMSG;
}

/* Take the segment into p's partial message: 1 complete, 0 kept, < 0
 * dropped. */
static int take(ftc_context_t *ctx, seg_peer_t *p, ftc_wire_header_t *hdr,
                const uint8_t **payload, uint8_t **whole)
{
    ftc_seg_state_t *st = ctx->seg;
    if (hdr->payload_len <= FTC_WIRE_SEGMENT_HDR || is_control(hdr->kind))
        return drop(ctx);
    const uint8_t *sub = *payload;
    uint32_t id = get32(sub), off = get32(sub + 4), total = get32(sub + 8);
    uint32_t chunk = hdr->payload_len - FTC_WIRE_SEGMENT_HDR;
    if (get32(sub + 12) != 0 || total > FTC_WIRE_MAX_PAYLOAD || off > total
        || chunk > total - off)
        return drop(ctx);

    if (off == 0) {
        if (p->partial && p->id == id)
            return drop(ctx);   /* the first segment again */
        /* A sender starts a message only after its last one ended: a
         * partial one left over is from a sender that lies. */
        if (p->partial) {
            partial_drop(st, p);
            ctx->counters.dropped_badmsg++;
        }
        bool swallow;
        ftc_group_t *early;
        uint64_t bound = total_bound(ctx, hdr, &swallow, &early);
        if (!swallow && total > bound && early != NULL) {
            /* Dropping it would lose a message its sender will never send
             * again: the sender is too far ahead, and is excluded. */
            ctx->counters.dropped_stale++;
            ftc_pending_over_budget(early, hdr->sender);
            return FTC_ESTALE;
        }
        if (!swallow && total > bound)
            return drop(ctx);
        if (!swallow) {
            p->buf = buf_get(st, total);
            if (p->buf == NULL)
                return FTC_ENOMEM;
            st->held += total;
        }
        p->partial = true;
        p->swallow = swallow;
        p->id = id;
        p->total = total;
        p->got = 0;
        p->hdr = *hdr;
        p->hdr.flags = (uint16_t)(hdr->flags & ~FTC_WF_SEGMENT);
    } else if (!p->partial || p->id != id || p->total != total
               || off != p->got || !same_message(&p->hdr, hdr)) {
        /* A gap, a duplicate, an overlap, or another message's segment:
         * none comes from a sender that follows the protocol over a
         * transport that keeps order. */
        return drop(ctx);
    }
    if (p->buf != NULL)
        memcpy(p->buf + off, sub + FTC_WIRE_SEGMENT_HDR, chunk);
    p->got += chunk;
    if (p->got < p->total)
        return 0;

    /* Complete: the buffer is the caller's now. */
    uint8_t *buf = p->buf;
    *hdr = p->hdr;
    hdr->payload_len = p->total;
    if (buf != NULL)
        st->held -= p->total;
    p->buf = NULL;
    p->partial = false;
    p->swallow = false;
    if (buf == NULL) {
        ctx->counters.late++;
        return 0;
    }
    *payload = buf;
    *whole = buf;
    return 1;
}

int ftc_segment_recv(ftc_context_t *ctx, ftc_wire_header_t *hdr,
                     const uint8_t **payload, uint8_t **whole)
{
    *whole = NULL;
    uint32_t sender = hdr->sender;
    seg_peer_t *p = peer_get(ctx, sender);
    if (p == NULL)
        return FTC_ENOMEM;
    int rc = take(ctx, p, hdr, payload, whole);
    /* Credit every segment, taken or not: the sender's window must move
     * whatever we made of it (segment.h). */
    p->received++;
    (void)ftc_ctx_send_control(ctx, sender, FTC_MSG_SEG_CREDIT, NULL,
                               p->received);
    return rc;
}
