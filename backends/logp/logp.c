/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LogP world: ranks with a CPU each, the transport ops, fault
 * injection and the event loop. The model is in ftcoll_logp.h and, with
 * examples, in docs/simulator.md; the event queue is in calendar.c.
 *
 * The loop at time t: first the arrivals, timers, reports and crashes due
 * at t (arrivals join inbound queues), then the CPU completions due at t
 * (finished sends depart; finished receives go to the core, which may
 * queue sends), each followed by that rank's choice of its next activity
 * when nothing else due at t can concern it (lp_decide); the other ranks
 * whose CPU may have something to do ("dirty") choose when nothing is due
 * at t any more; then move to the next time. Choosing after the arrivals
 * is what gives receives priority over sends starting at the same time.
 *
 * Everything per message is O(1); at a million ranks the cost is cache
 * misses, so the per-rank state is two cache lines and small messages
 * come from a pool.
 */
#include "ftcoll_logp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar.h"

#define LP_NONE UINT32_MAX

enum {
    EV_ARRIVE,      /* msg reaches rank's inbound queue; peer = source */
    EV_SEND_END,    /* rank's send unit finished (msg departs); peer = unit */
    EV_RECV_END,    /* rank's receive unit finished (msg to the core) */
    EV_TIMER,       /* rank's wake-up */
    EV_PEER_FAILED, /* rank learns peer died; gen = the watch's id */
    EV_CRASH,       /* rank crashes */
    EV_WAKE         /* rank's hold ended */
};

enum { UNIT_SEND = 0, UNIT_RECV = 1 };

/* Payload bytes a pooled message block holds; the block is 128 bytes. */
#define LP_SMALL 96u
#define LP_BLOCK 128u
#define LP_BLOCKS_PER_SLAB 512u

typedef struct ftc_logp_msg {
    struct ftc_logp_msg *next;
    void *cookie;          /* the sender's completion, until departure */
    uint32_t src, dest;
    uint32_t len;
    uint16_t cls;          /* queue class (PRIORITY) */
    uint8_t pooled;
    uint8_t first;         /* sent before receives (cfg.sends_first) */
    unsigned char data[];
} lp_msg_t;

/* One rank. Its address is the `transport` pointer of its context. Exactly
 * 128 bytes, 128-aligned: every message touches two ranks' states, and at
 * a million ranks those touches are cache misses (two adjacent lines are
 * fetched together). What only watches and faults need is in lp_cold_t. */
typedef struct lp_proc {
    ftc_logp_world_t *world;
    ftc_context_t *ctx;
    lp_msg_t *in_head, *in_tail;   /* arrived, waiting for the CPU */
    lp_msg_t *sq_head, *sq_tail;   /* issued, waiting for the CPU */
    lp_msg_t *cur[2];              /* being sent / being received */
    void *done_cookie;             /* completion due to the core */
    uint64_t last_busy_end;
    uint64_t timer_ns;             /* armed deadline */
    uint64_t timer_ev;             /* earliest queued wake-up, or MAX */
    uint64_t hold_until;
    uint32_t sends, departed;
    uint32_t received, inq;
    uint32_t max_inq;
    uint8_t unit_busy[2];
    uint8_t flags;                 /* LP_F_* */
    uint8_t pad;
} lp_proc_t;

enum {
    LP_F_CRASHED = 1, LP_F_DIRTY = 2, LP_F_TIMER = 4, LP_F_DONE = 8,
    LP_F_COUNTDOWN = 16
};

/* A peer this rank watches, with the id its failure report carries. */
typedef struct lp_watch {
    uint64_t id;
    uint32_t peer;
    uint32_t pad;
} lp_watch_t;

#define LP_INLINE_WATCHES 2

/* One cache line per rank for what watches and faults need. A rank
 * watches few peers at a time (its reduce group, its tree children, the
 * broadcast root): two fit here, more spill to `more`. */
typedef struct lp_cold {
    uint64_t crash_ns;
    uint64_t crash_countdown;      /* departures left (LP_F_COUNTDOWN) */
    lp_watch_t *more;              /* watches 2.. */
    uint32_t nwatch, capmore;
    lp_watch_t inl[LP_INLINE_WATCHES];
} lp_cold_t;

struct ftc_logp_world {
    ftc_logp_config_t cfg;
    uint64_t send_cost;            /* max(o, g) */
    lp_proc_t *procs;
    lp_cold_t *cold;
    ftc_calendar_t cal;
    uint64_t now;
    bool running;
    uint32_t *dirty;               /* FIFO ring of n ranks */
    uint32_t dirty_head, dirty_len;
    uint32_t handling;             /* rank whose CPU event is being handled */
    uint64_t next_watch_id;
    uint64_t watches;              /* live watches, of all ranks */
    lp_msg_t *pool;                /* free 128-byte blocks */
    void **slabs;
    size_t nslabs, capslabs;
    uint64_t msg_bytes;            /* held in big (malloc'd) messages */
    ftc_logp_stats_t stats;
};

static void lp_out_of_memory(void)
{
    fputs("ftcoll logp: out of memory\n", stderr);
    abort();
}

static lp_watch_t *lp_watch_at(const lp_cold_t *c, uint32_t i)
{
    return i < LP_INLINE_WATCHES ? (lp_watch_t *)&c->inl[i]
                                 : &c->more[i - LP_INLINE_WATCHES];
}

static uint32_t lp_rank(const ftc_logp_world_t *w, const lp_proc_t *p)
{
    return (uint32_t)(p - w->procs);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static void lp_trace(ftc_logp_world_t *w, uint32_t rank,
                     ftc_logp_trace_kind_t what, uint32_t peer)
{
    if (w->cfg.trace != NULL)
        w->cfg.trace(w->cfg.trace_arg, w->now, rank, what, peer);
}

static void lp_trace_msg(ftc_logp_world_t *w, uint32_t rank,
                         ftc_logp_trace_kind_t what, uint32_t peer,
                         const lp_msg_t *m)
{
    if (w->cfg.trace_msg != NULL)
        w->cfg.trace_msg(w->cfg.trace_arg, w->now, rank, what, peer, m->data,
                         m->len);
}

/* --- Messages ----------------------------------------------------------- */

static lp_msg_t *lp_msg_alloc(ftc_logp_world_t *w, size_t len)
{
    lp_msg_t *m;
    if (len <= LP_SMALL) {
        if (w->pool == NULL) {
            if (w->nslabs == w->capslabs) {
                size_t cap = w->capslabs ? w->capslabs * 2 : 16;
                void **s = realloc(w->slabs, sizeof(*s) * cap);
                if (s == NULL)
                    lp_out_of_memory();
                w->slabs = s;
                w->capslabs = cap;
            }
            unsigned char *slab = aligned_alloc(LP_BLOCK,
                                                LP_BLOCK * LP_BLOCKS_PER_SLAB);
            if (slab == NULL)
                lp_out_of_memory();
            w->slabs[w->nslabs++] = slab;
            /* Chain in address order (reproducible, and sequential). */
            for (unsigned i = LP_BLOCKS_PER_SLAB; i-- > 0;) {
                lp_msg_t *b = (lp_msg_t *)(void *)(slab + (size_t)i * LP_BLOCK);
                b->next = w->pool;
                w->pool = b;
            }
        }
        m = w->pool;
        w->pool = m->next;
        m->pooled = 1;
    } else {
        m = malloc(sizeof(*m) + len);
        if (m == NULL)
            lp_out_of_memory();
        m->pooled = 0;
        w->msg_bytes += sizeof(*m) + len;
    }
    m->next = NULL;
    m->len = (uint32_t)len;
    return m;
}

static void lp_msg_free(ftc_logp_world_t *w, lp_msg_t *m)
{
    if (m->pooled) {
        m->next = w->pool;
        w->pool = m;
    } else {
        w->msg_bytes -= sizeof(*m) + m->len;
        free(m);
    }
}

/* --- Events and the dirty list ------------------------------------------ */

static ftc_cal_event_t *lp_event(ftc_logp_world_t *w, uint64_t t,
                                 uint32_t kind, uint32_t rank)
{
    uint32_t idx = ftc_cal_alloc(&w->cal);
    if (idx == FTC_CAL_NONE)
        lp_out_of_memory();
    ftc_cal_event_t *ev = ftc_cal_at(&w->cal, idx);
    ev->time = t;
    ev->kind = kind;
    ev->rank = rank;
    ev->peer = LP_NONE;
    ev->cls = kind == EV_SEND_END || kind == EV_RECV_END;
    ev->u.gen = 0;
    return ev;
}

static void lp_push(ftc_logp_world_t *w, ftc_cal_event_t *ev)
{
    ftc_cal_push(&w->cal, (uint32_t)(ev - w->cal.pool));
}

static void lp_mark_dirty(ftc_logp_world_t *w, lp_proc_t *p)
{
    if ((p->flags & (LP_F_DIRTY | LP_F_CRASHED)) || lp_rank(w, p) == w->handling)
        return;
    p->flags |= LP_F_DIRTY;
    uint32_t n = w->cfg.n;
    uint32_t at = w->dirty_head + w->dirty_len;
    if (at >= n)
        at -= n;
    w->dirty[at] = lp_rank(w, p);
    w->dirty_len++;
}

/* --- Crashes and failure reports ---------------------------------------- */

static void lp_schedule_peer_failed(ftc_logp_world_t *w, uint32_t watcher,
                                    uint32_t peer, uint64_t id, uint64_t at)
{
    ftc_cal_event_t *ev = lp_event(w, at, EV_PEER_FAILED, watcher);
    ev->peer = peer;
    ev->u.gen = id;
    lp_push(w, ev);
}

static void lp_crash_now(ftc_logp_world_t *w, lp_proc_t *p)
{
    if (p->flags & LP_F_CRASHED)
        return;
    uint32_t r = lp_rank(w, p);
    p->flags |= LP_F_CRASHED;
    p->flags &= (uint8_t)~(LP_F_TIMER | LP_F_DONE | LP_F_COUNTDOWN);
    w->cold[r].crash_ns = w->now;
    lp_trace(w, r, FTC_LOGP_CRASH, LP_NONE);
    /* Queued sends never leave; what waited to be received is lost. The
     * messages in the units are freed when the units finish. */
    for (lp_msg_t *m = p->sq_head; m != NULL;) {
        lp_msg_t *next = m->next;
        w->stats.lost_in_sender++;
        lp_msg_free(w, m);
        m = next;
    }
    p->sq_head = p->sq_tail = NULL;
    for (lp_msg_t *m = p->in_head; m != NULL;) {
        lp_msg_t *next = m->next;
        w->stats.dropped_dead++;
        lp_msg_free(w, m);
        m = next;
    }
    p->in_head = p->in_tail = NULL;
    p->inq = 0;

    /* Tell its watchers. Crashes are few and watches many and short, so
     * watches are kept per watcher and found here by a scan of them all
     * (none before the operation starts: pre-operational crashes are
     * free). */
    if (w->cfg.detect_delay == UINT64_MAX || w->watches == 0)
        return;
    uint64_t at = sat_add(w->now, w->cfg.detect_delay);
    for (uint32_t q = 0; q < w->cfg.n; q++) {
        const lp_cold_t *c = &w->cold[q];
        for (uint32_t i = 0; i < c->nwatch; i++) {
            const lp_watch_t *e = lp_watch_at(c, i);
            if (e->peer == r)
                lp_schedule_peer_failed(w, q, r, e->id, at);
        }
    }
}

/* --- The transport ops -------------------------------------------------- */

static int lp_send(void *tp, uint32_t dest, const void *buf, size_t len,
                   void *cookie)
{
    lp_proc_t *p = tp;
    ftc_logp_world_t *w = p->world;

    if (p->flags & LP_F_CRASHED)
        return FTC_SEND_INLINE;
    if (dest >= w->cfg.n || (buf == NULL && len > 0) || len > UINT32_MAX)
        return FTC_EINVAL;

    lp_msg_t *m = lp_msg_alloc(w, len);
    m->cookie = cookie;
    m->src = lp_rank(w, p);
    m->dest = dest;
    if (len > 0)
        memcpy(m->data, buf, len);
    m->cls = 0;
    m->first = w->cfg.sends_first != NULL
               && w->cfg.sends_first(m->data, len, w->cfg.sends_first_arg);
    if (w->cfg.queue == FTC_LOGP_QUEUE_PRIORITY) {
        unsigned c = w->cfg.classify(m->data, len, w->cfg.classify_arg);
        m->cls = (uint16_t)(c > UINT16_MAX ? UINT16_MAX : c);
    }
    if (p->sq_tail != NULL)
        p->sq_tail->next = m;
    else
        p->sq_head = m;
    p->sq_tail = m;
    p->sends++;
    w->stats.messages_sent++;
    lp_mark_dirty(w, p);
    return FTC_OK;
}

static void lp_timer_arm(void *tp, uint64_t deadline)
{
    lp_proc_t *p = tp;
    ftc_logp_world_t *w = p->world;
    if (p->flags & LP_F_CRASHED)
        return;
    uint64_t at = max_u64(deadline, w->now);
    p->flags |= LP_F_TIMER;
    p->timer_ns = at;
    /* One queued wake-up per rank suffices while the deadline only moves
     * later (the common case: every message heard pushes it back); a wake
     * that finds the deadline still ahead re-queues itself. */
    if (p->timer_ev != UINT64_MAX && p->timer_ev <= at)
        return;
    p->timer_ev = at;
    lp_push(w, lp_event(w, at, EV_TIMER, lp_rank(w, p)));
}

static void lp_timer_cancel(void *tp)
{
    lp_proc_t *p = tp;
    p->flags &= (uint8_t)~LP_F_TIMER;
}

static uint64_t lp_now(void *tp)
{
    const lp_proc_t *p = tp;
    return p->world->now;
}

static int64_t lp_watch_find(const lp_cold_t *c, uint32_t peer)
{
    for (uint32_t i = 0; i < c->nwatch; i++)
        if (lp_watch_at(c, i)->peer == peer)
            return i;
    return -1;
}

static void lp_watch(void *tp, uint32_t peer)
{
    lp_proc_t *p = tp;
    ftc_logp_world_t *w = p->world;
    uint32_t me = lp_rank(w, p);
    lp_cold_t *c = &w->cold[me];
    if ((p->flags & LP_F_CRASHED) || peer >= w->cfg.n
        || w->cfg.detect_delay == UINT64_MAX || lp_watch_find(c, peer) >= 0)
        return;
    if (c->nwatch >= LP_INLINE_WATCHES
        && c->nwatch - LP_INLINE_WATCHES == c->capmore) {
        uint32_t cap = c->capmore ? c->capmore * 2 : 4;
        lp_watch_t *a = realloc(c->more, sizeof(*a) * cap);
        if (a == NULL)
            lp_out_of_memory();
        c->more = a;
        c->capmore = cap;
    }
    uint64_t id = ++w->next_watch_id;
    lp_watch_t *e = lp_watch_at(c, c->nwatch++);
    e->id = id;
    e->peer = peer;
    e->pad = 0;
    w->watches++;
    if (w->procs[peer].flags & LP_F_CRASHED)
        lp_schedule_peer_failed(
            w, me, peer, id,
            max_u64(sat_add(w->cold[peer].crash_ns, w->cfg.detect_delay),
                    w->now));
}

static void lp_unwatch(void *tp, uint32_t peer)
{
    lp_proc_t *p = tp;
    ftc_logp_world_t *w = p->world;
    lp_cold_t *c = &w->cold[lp_rank(w, p)];
    int64_t i = peer < w->cfg.n ? lp_watch_find(c, peer) : -1;
    if (i < 0)
        return;
    *lp_watch_at(c, (uint32_t)i) = *lp_watch_at(c, c->nwatch - 1);
    c->nwatch--;
    w->watches--;
}

static const ftc_transport_ops_t lp_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = lp_send,
    .timer_arm = lp_timer_arm,
    .timer_cancel = lp_timer_cancel,
    .now = lp_now,
    .watch = lp_watch,
    .unwatch = lp_unwatch,
    .progress = NULL,
};

const ftc_transport_ops_t *ftc_logp_ops(void)
{
    return &lp_ops;
}

/* --- World life cycle --------------------------------------------------- */

void ftc_logp_config_init(ftc_logp_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->L = 2;
    cfg->o = 1;
    cfg->g = 1;
    cfg->parallelism = 1;
    cfg->queue = FTC_LOGP_QUEUE_FIFO;
    cfg->detect_delay = 100;
}

int ftc_logp_world_create(const ftc_logp_config_t *cfg, ftc_logp_world_t **out)
{
    if (out != NULL)
        *out = NULL;
    if (cfg == NULL || out == NULL || cfg->n == 0 || cfg->n >= (1u << 31)
        || (cfg->parallelism != 1 && cfg->parallelism != 2)
        || (cfg->queue != FTC_LOGP_QUEUE_FIFO
            && cfg->queue != FTC_LOGP_QUEUE_PRIORITY)
        || (cfg->queue == FTC_LOGP_QUEUE_PRIORITY && cfg->classify == NULL)
        || ((cfg->service == NULL) != (cfg->distance == NULL))
        || cfg->L > UINT64_MAX / 8 || cfg->o > UINT64_MAX / 8
        || cfg->g > UINT64_MAX / 8)
        return FTC_EINVAL;

    _Static_assert(sizeof(lp_proc_t) == 128, "lp_proc_t is two cache lines");
    _Static_assert(sizeof(lp_cold_t) == 64, "lp_cold_t is one cache line");
    _Static_assert(sizeof(lp_msg_t) + LP_SMALL <= LP_BLOCK, "block size");
    ftc_logp_world_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return FTC_ENOMEM;
    w->cfg = *cfg;
    w->send_cost = max_u64(cfg->o, cfg->g);
    w->handling = LP_NONE;
    w->procs = aligned_alloc(128, sizeof(*w->procs) * (size_t)cfg->n);
    w->cold = aligned_alloc(64, sizeof(*w->cold) * (size_t)cfg->n);
    w->dirty = malloc(sizeof(uint32_t) * cfg->n);
    /* Every message's events fall within L + max(o,g) + o of now. */
    uint64_t window = sat_add(sat_add(cfg->L, w->send_cost), cfg->o);
    if (w->procs == NULL || w->cold == NULL || w->dirty == NULL
        || ftc_cal_init(&w->cal, sat_add(window, 1)) != 0) {
        free(w->procs);
        free(w->cold);
        free(w->dirty);
        free(w);
        return FTC_ENOMEM;
    }
    memset(w->procs, 0, sizeof(*w->procs) * (size_t)cfg->n);
    memset(w->cold, 0, sizeof(*w->cold) * (size_t)cfg->n);
    for (uint32_t r = 0; r < cfg->n; r++) {
        w->procs[r].world = w;
        w->procs[r].timer_ev = UINT64_MAX;
        w->cold[r].crash_ns = UINT64_MAX;
    }
    *out = w;
    return FTC_OK;
}

static void lp_free_chain(lp_msg_t *m)
{
    while (m != NULL) {
        lp_msg_t *next = m->next;
        if (!m->pooled)
            free(m);
        m = next;
    }
}

void ftc_logp_world_destroy(ftc_logp_world_t *w)
{
    if (w == NULL)
        return;
    /* Drain the calendar: arrival events own their messages. */
    for (;;) {
        uint32_t idx;
        while ((idx = ftc_cal_pop_now(&w->cal)) != FTC_CAL_NONE) {
            ftc_cal_event_t *ev = ftc_cal_at(&w->cal, idx);
            if (ev->kind == EV_ARRIVE && !((lp_msg_t *)ev->u.ptr)->pooled)
                free(ev->u.ptr);
            ftc_cal_release(&w->cal, idx);
        }
        if (!ftc_cal_advance(&w->cal, UINT64_MAX))
            break;
    }
    for (uint32_t r = 0; r < w->cfg.n; r++) {
        lp_proc_t *p = &w->procs[r];
        lp_free_chain(p->in_head);
        lp_free_chain(p->sq_head);
        for (int u = 0; u < 2; u++)
            if (p->cur[u] != NULL && !p->cur[u]->pooled)
                free(p->cur[u]);
        free(w->cold[r].more);
    }
    for (size_t i = 0; i < w->nslabs; i++)
        free(w->slabs[i]);
    free(w->slabs);
    ftc_cal_fini(&w->cal);
    free(w->dirty);
    free(w->cold);
    free(w->procs);
    free(w);
}

void *ftc_logp_endpoint(ftc_logp_world_t *w, uint32_t rank)
{
    if (w == NULL || rank >= w->cfg.n)
        return NULL;
    return &w->procs[rank];
}

void ftc_logp_attach(ftc_logp_world_t *w, uint32_t rank, ftc_context_t *ctx)
{
    if (w != NULL && rank < w->cfg.n)
        w->procs[rank].ctx = ctx;
}

void ftc_logp_hold(ftc_logp_world_t *w, uint32_t rank, uint64_t t)
{
    if (w == NULL || rank >= w->cfg.n || t <= w->now)
        return;
    w->procs[rank].hold_until = t;
    lp_push(w, lp_event(w, t, EV_WAKE, rank));
}

/* --- Fault injection ---------------------------------------------------- */

void ftc_logp_crash(ftc_logp_world_t *w, uint32_t rank)
{
    if (w != NULL && rank < w->cfg.n)
        lp_crash_now(w, &w->procs[rank]);
}

void ftc_logp_crash_at(ftc_logp_world_t *w, uint32_t rank, uint64_t t)
{
    if (w == NULL || rank >= w->cfg.n)
        return;
    lp_push(w, lp_event(w, max_u64(t, w->now), EV_CRASH, rank));
}

void ftc_logp_crash_after_sends(ftc_logp_world_t *w, uint32_t rank, uint64_t k)
{
    if (w == NULL || rank >= w->cfg.n || (w->procs[rank].flags & LP_F_CRASHED))
        return;
    if (k == 0) {
        lp_crash_now(w, &w->procs[rank]);
    } else {
        w->cold[rank].crash_countdown = k;
        w->procs[rank].flags |= LP_F_COUNTDOWN;
    }
}

int ftc_logp_is_crashed(const ftc_logp_world_t *w, uint32_t rank)
{
    return w != NULL && rank < w->cfg.n
           && (w->procs[rank].flags & LP_F_CRASHED) != 0;
}

uint64_t ftc_logp_crash_time(const ftc_logp_world_t *w, uint32_t rank)
{
    return w != NULL && rank < w->cfg.n ? w->cold[rank].crash_ns : UINT64_MAX;
}

/* --- The CPU ------------------------------------------------------------ */

/* Inbound queue: FIFO, or by class without passing a message of the same
 * sender (per-pair order is part of the transport contract). */
static void lp_enqueue_inbound(ftc_logp_world_t *w, lp_proc_t *p, lp_msg_t *m)
{
    m->next = NULL;
    if (w->cfg.queue == FTC_LOGP_QUEUE_FIFO || p->in_head == NULL
        || p->in_tail->cls <= m->cls) {
        if (p->in_tail != NULL)
            p->in_tail->next = m;
        else
            p->in_head = m;
        p->in_tail = m;
    } else {
        lp_msg_t *after = NULL;
        for (lp_msg_t *e = p->in_head; e != NULL; e = e->next)
            if (e->cls <= m->cls || e->src == m->src)
                after = e;
        if (after == NULL) {
            m->next = p->in_head;
            p->in_head = m;
        } else {
            m->next = after->next;
            after->next = m;
            if (p->in_tail == after)
                p->in_tail = m;
        }
    }
    if (++p->inq > p->max_inq) {
        p->max_inq = p->inq;
        if (p->inq > w->stats.max_inbound) {
            w->stats.max_inbound = p->inq;
            w->stats.max_inbound_rank = lp_rank(w, p);
        }
    }
}

/* Unlink the message rank r receives next: the head, or under a service
 * choice the first of a sender at the chosen distance. */
static lp_msg_t *lp_take_inbound(ftc_logp_world_t *w, lp_proc_t *p, uint32_t r)
{
    lp_msg_t *prev = NULL, *m = p->in_head;
    unsigned d = w->cfg.service != NULL
                     ? w->cfg.service(w->cfg.service_arg, r)
                     : 0;
    if (d != 0) {
        for (lp_msg_t *e = p->in_head; e != NULL; prev = e, e = e->next)
            if (w->cfg.distance(w->cfg.service_arg, r, e->src) == d)
                break;
        m = prev != NULL ? prev->next : p->in_head;
        if (m == NULL) {
            prev = NULL;
            m = p->in_head;
        }
    }
    if (prev == NULL)
        p->in_head = m->next;
    else
        prev->next = m->next;
    if (p->in_tail == m)
        p->in_tail = prev;
    return m;
}

static int lp_unit(const ftc_logp_world_t *w, int what)
{
    return w->cfg.parallelism == 2 ? what : 0;
}

/* With cfg.sends_first: the send to start next when the earliest queued
 * message that goes first is to leave now, and the message before it in
 * the queue; NULL when none goes first. That is the earliest one itself,
 * or, when an earlier message has its destination, the earliest such
 * (per-pair order): those going first keep their own order (a tree's
 * DATA leave largest subtree first). Send queues are short (a process's
 * DATA to its children, and the answers it owes): a walk is cheap. */
static lp_msg_t *lp_first_send(const lp_proc_t *p, lp_msg_t **prev_out)
{
    lp_msg_t *prev = NULL, *m = p->sq_head;
    while (m != NULL && !m->first) {
        prev = m;
        m = m->next;
    }
    if (m == NULL)
        return NULL;
    lp_msg_t *eprev = NULL;
    for (lp_msg_t *e = p->sq_head; e != m; eprev = e, e = e->next)
        if (e->dest == m->dest) {
            *prev_out = eprev;
            return e;
        }
    *prev_out = prev;
    return m;
}

static void lp_start(ftc_logp_world_t *w, lp_proc_t *p, int what)
{
    int u = lp_unit(w, what);
    uint32_t r = lp_rank(w, p);
    lp_msg_t *m;
    uint64_t cost;
    uint32_t kind;
    if (what == UNIT_RECV) {
        m = lp_take_inbound(w, p, r);
        p->inq--;
        cost = w->cfg.o;
        kind = EV_RECV_END;
        lp_trace(w, r, FTC_LOGP_RECV_START, m->src);
        lp_trace_msg(w, r, FTC_LOGP_RECV_START, m->src, m);
    } else {
        lp_msg_t *prev = NULL;
        m = w->cfg.sends_first != NULL ? lp_first_send(p, &prev) : NULL;
        if (m == NULL) {
            m = p->sq_head;
            prev = NULL;
        }
        if (prev != NULL)
            prev->next = m->next;
        else
            p->sq_head = m->next;
        if (p->sq_tail == m)
            p->sq_tail = prev;
        cost = w->send_cost;
        kind = EV_SEND_END;
        lp_trace(w, r, FTC_LOGP_SEND_START, m->dest);
    }
    m->next = NULL;
    p->cur[what] = m;
    p->unit_busy[u] = 1;
    ftc_cal_event_t *ev = lp_event(w, w->now + cost, kind, r);
    ev->peer = (uint32_t)u;
    lp_push(w, ev);
}

/* Rank p's CPU chooses what to do next, now (see the file comment). */
static void lp_dispatch(ftc_logp_world_t *w, lp_proc_t *p)
{
    if ((p->flags & LP_F_CRASHED) || p->ctx == NULL || w->now < p->hold_until)
        return;
    int ur = lp_unit(w, UNIT_RECV), us = lp_unit(w, UNIT_SEND);
    /* (With one unit, a send that goes first leaves the receive for the
     * next decision, at the send's end.) */
    lp_msg_t *prev;
    bool send_first = ur == us && w->cfg.sends_first != NULL
                      && lp_first_send(p, &prev) != NULL;
    if (!p->unit_busy[ur] && p->in_head != NULL && !send_first)
        lp_start(w, p, UNIT_RECV);
    for (;;) {
        if ((p->flags & LP_F_CRASHED) || p->unit_busy[us])
            return;
        if (p->flags & LP_F_DONE) {
            p->flags &= (uint8_t)~LP_F_DONE;
            w->stats.events++;
            /* Sends it queues are started by this very loop. */
            uint32_t outer = w->handling;
            w->handling = lp_rank(w, p);
            ftc_transport_send_done(p->ctx, p->done_cookie, FTC_OK);
            w->handling = outer;
            continue;
        }
        if (p->sq_head != NULL)
            lp_start(w, p, UNIT_SEND);
        return;
    }
}

/* --- Running ------------------------------------------------------------ */

/*
 * After its CPU event at time t, p may choose its next activity at once
 * instead of after all other events of t (which saves touching its state
 * again later), when nothing that is still due at t can concern it: every
 * arrival, timer, report and crash due at t comes first (class 0 of the
 * calendar), and with L > 0 and a report delay > 0 none can be created
 * during t; the core did not ask for a wake-up at t; and with parallelism
 * 2 a send completion waits for a receive that may end at t too.
 */
static void lp_decide(ftc_logp_world_t *w, lp_proc_t *p, int recv_end)
{
    if (w->cfg.L > 0 && w->cfg.detect_delay > 0 && p->timer_ev != w->now
        && (w->cfg.parallelism == 1 || recv_end))
        lp_dispatch(w, p);
    else
        lp_mark_dirty(w, p);
}

static int lp_absent(ftc_logp_world_t *w, const lp_proc_t *p)
{
    if (p->ctx != NULL)
        return 0;
    w->stats.dropped_unattached++;
    return 1;
}

static int lp_watching(const lp_cold_t *c, uint32_t peer, uint64_t id)
{
    int64_t i = lp_watch_find(c, peer);
    return i >= 0 && lp_watch_at(c, (uint32_t)i)->id == id;
}

static void lp_handle(ftc_logp_world_t *w, const ftc_cal_event_t *ev)
{
    lp_proc_t *p = &w->procs[ev->rank];

    switch (ev->kind) {
    case EV_ARRIVE: {
        lp_msg_t *m = ev->u.ptr;
        if (p->flags & LP_F_CRASHED) {
            w->stats.dropped_dead++;
            lp_msg_free(w, m);
        } else if (lp_absent(w, p)) {
            lp_msg_free(w, m);
        } else {
            lp_enqueue_inbound(w, p, m);
            lp_trace_msg(w, ev->rank, FTC_LOGP_ARRIVE, m->src, m);
            /* A busy receive unit decides when it finishes. */
            if (!p->unit_busy[lp_unit(w, UNIT_RECV)])
                lp_mark_dirty(w, p);
        }
        return;
    }
    case EV_SEND_END: {
        lp_msg_t *m = p->cur[UNIT_SEND];
        p->cur[UNIT_SEND] = NULL;
        p->unit_busy[ev->peer] = 0;
        p->last_busy_end = w->now;
        if (p->flags & LP_F_CRASHED) {
            w->stats.lost_in_sender++;
            lp_msg_free(w, m);
            return;
        }
        lp_trace(w, ev->rank, FTC_LOGP_SEND_END, m->dest);
        lp_trace_msg(w, ev->rank, FTC_LOGP_SEND_END, m->dest, m);
        p->departed++;
        p->flags |= LP_F_DONE;
        p->done_cookie = m->cookie;
        m->cookie = NULL;
        ftc_cal_event_t *arr = lp_event(w, sat_add(w->now, w->cfg.L),
                                        EV_ARRIVE, m->dest);
        arr->peer = m->src;
        arr->u.ptr = m;
        lp_push(w, arr);
        if ((p->flags & LP_F_COUNTDOWN)
            && --w->cold[ev->rank].crash_countdown == 0) {
            lp_crash_now(w, p);
            return;
        }
        lp_decide(w, p, 0);
        return;
    }
    case EV_RECV_END: {
        lp_msg_t *m = p->cur[UNIT_RECV];
        p->cur[UNIT_RECV] = NULL;
        p->unit_busy[ev->peer] = 0;
        p->last_busy_end = w->now;
        if (p->flags & LP_F_CRASHED) {
            w->stats.dropped_dead++;
            lp_msg_free(w, m);
            return;
        }
        lp_trace(w, ev->rank, FTC_LOGP_RECV_END, m->src);
        p->received++;
        w->stats.messages_delivered++;
        w->stats.events++;
        w->handling = ev->rank;
        if (ftc_transport_recv(p->ctx, m->src, m->data, m->len) != FTC_OK)
            w->stats.messages_rejected++;
        w->handling = LP_NONE;
        lp_msg_free(w, m);
        lp_decide(w, p, 1);
        return;
    }
    case EV_TIMER:
        if (p->timer_ev == ev->time)
            p->timer_ev = UINT64_MAX;
        if ((p->flags & LP_F_CRASHED) || !(p->flags & LP_F_TIMER))
            return;
        if (p->timer_ns > w->now) {
            if (p->timer_ev == UINT64_MAX) {
                p->timer_ev = p->timer_ns;
                lp_push(w, lp_event(w, p->timer_ns, EV_TIMER, ev->rank));
            }
            return;
        }
        p->flags &= (uint8_t)~LP_F_TIMER;
        if (lp_absent(w, p))
            return;
        w->stats.events++;
        w->stats.timer_fires++;
        ftc_transport_timer_fired(p->ctx);
        lp_mark_dirty(w, p);
        return;
    case EV_PEER_FAILED:
        if ((p->flags & LP_F_CRASHED)
            || !lp_watching(&w->cold[ev->rank], ev->peer, ev->u.gen)
            || lp_absent(w, p))
            return;
        w->stats.events++;
        w->stats.peer_failed_reports++;
        ftc_transport_peer_failed(p->ctx, ev->peer);
        lp_mark_dirty(w, p);
        return;
    case EV_CRASH:
        w->stats.events++;
        lp_crash_now(w, p);
        return;
    case EV_WAKE:
        if (w->now >= p->hold_until)
            lp_mark_dirty(w, p);
        return;
    default:
        return;
    }
}

static uint64_t lp_run(ftc_logp_world_t *w, uint64_t until, uint64_t max_events,
                       int *drained)
{
    *drained = 0;
    if (w == NULL || w->running)
        return 0;
    w->running = true;
    uint64_t start = w->stats.events;
    for (;;) {
        if (w->stats.events - start >= max_events)
            break;
        uint32_t idx = ftc_cal_pop_now(&w->cal);
        if (idx != FTC_CAL_NONE) {
            ftc_cal_event_t ev = *ftc_cal_at(&w->cal, idx);
            ftc_cal_release(&w->cal, idx);

            lp_handle(w, &ev);
            continue;
        }
        if (w->dirty_len > 0) {
            lp_proc_t *p = &w->procs[w->dirty[w->dirty_head]];
            if (++w->dirty_head == w->cfg.n)
                w->dirty_head = 0;
            w->dirty_len--;
            p->flags &= (uint8_t)~LP_F_DIRTY;

            lp_dispatch(w, p);
            continue;
        }
        if (!ftc_cal_advance(&w->cal, until)) {
            *drained = 1;
            break;
        }
        w->now = w->cal.now;
    }
    w->running = false;
    return w->stats.events - start;
}

uint64_t ftc_logp_run(ftc_logp_world_t *w, uint64_t max_events)
{
    int drained;
    return lp_run(w, UINT64_MAX, max_events, &drained);
}

uint64_t ftc_logp_run_until(ftc_logp_world_t *w, uint64_t t,
                            uint64_t max_events)
{
    int drained;
    uint64_t handled = lp_run(w, t, max_events, &drained);
    if (drained && w->now < t) {
        w->now = t;
        ftc_cal_set_now(&w->cal, t);
    }
    return handled;
}

uint64_t ftc_logp_now(const ftc_logp_world_t *w)
{
    return w ? w->now : 0;
}

uint64_t ftc_logp_messages_sent(const ftc_logp_world_t *w)
{
    return w ? w->stats.messages_sent : 0;
}

void ftc_logp_stats(const ftc_logp_world_t *w, ftc_logp_stats_t *out)
{
    if (out == NULL)
        return;
    if (w == NULL) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = w->stats;
    out->max_live_events = w->cal.max_live;
}

void ftc_logp_rank_stats(const ftc_logp_world_t *w, uint32_t rank,
                         ftc_logp_rank_stats_t *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (w == NULL || rank >= w->cfg.n)
        return;
    const lp_proc_t *p = &w->procs[rank];
    out->sends = p->sends;
    out->departed = p->departed;
    out->received = p->received;
    out->busy = (uint64_t)p->departed * w->send_cost
                + (uint64_t)p->received * w->cfg.o;
    out->last_busy_end = p->last_busy_end;
    out->max_inbound = p->max_inq;
}

size_t ftc_logp_memory(const ftc_logp_world_t *w)
{
    if (w == NULL)
        return 0;
    size_t watch_bytes = 0;
    for (uint32_t r = 0; r < w->cfg.n; r++)
        watch_bytes += (size_t)w->cold[r].capmore * sizeof(lp_watch_t);
    return sizeof(*w)
           + (size_t)w->cfg.n
                 * (sizeof(lp_proc_t) + sizeof(lp_cold_t) + sizeof(uint32_t))
           + ftc_cal_memory(&w->cal) + w->msg_bytes + watch_bytes
           + w->nslabs * (size_t)LP_BLOCK * LP_BLOCKS_PER_SLAB;
}
