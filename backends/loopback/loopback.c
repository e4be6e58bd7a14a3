/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback world: endpoints, the transport ops, fault injection and the
 * event loop. The contract is in ftcoll_loopback.h; the event queue, the
 * pair map and the random numbers are in files of their own; the event
 * queue is the simulators' calendar (backends/sim), used with one class,
 * which hands out events in (time, scheduling order).
 *
 * Every effect on a core is an event in the queue, handled by ftc_lb_run();
 * the ops only schedule. Events that may have become moot carry what is
 * needed to tell (a timer's arm generation, a watch's id) and are checked
 * when they come due, which is cheaper than finding them in the queue.
 */
#include "ftcoll_loopback.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar.h"
#include "msg_pool.h"
#include "pair_map.h"
#include "rng.h"

#define LB_NONE UINT32_MAX

/* The calendar's window: arrivals and send completions fall mostly within
 * latency + jitter + send cost of now; a bound keeps a huge latency from
 * costing a huge ring (later events wait in the calendar's heap). */
#define LB_MAX_WINDOW (UINT64_C(1) << 16)
/* ... and, in a large world, at least this wide (a ring of 16384 buckets,
 * 256 KiB), so that the wake-ups of processes that work in periods of
 * some microseconds (the gossip family's 10 us iterations) go straight
 * into the ring too: in the heap, each cost a push and a pop of O(log n)
 * cache misses in a large simulation. A small world keeps the narrow
 * ring: its heap is small, and the property checkers build one world per
 * schedule, hundreds of thousands, where a wide ring's allocation and
 * page faults were their top cost. The order of events is the same
 * whatever the window (calendar.h). */
#define LB_MIN_WINDOW UINT64_C(12000)
#define LB_WIDE_WORLD 64u /* ranks */

enum {
    LB_EV_ARRIVE,      /* msg reaches rank; peer = source */
    LB_EV_SEND_DONE,   /* completion of rank's send; cookie */
    LB_EV_TIMER,       /* rank's wake-up; gen = its arm generation */
    LB_EV_PEER_FAILED, /* rank learns peer died; gen = the watch's id */
    LB_EV_CRASH        /* rank crashes (ftc_lb_crash_at) */
};

/* One rank's side of the network. Its address is the `transport` pointer
 * the core passes back to every op. */
typedef struct lb_endpoint {
    ftc_lb_world_t *world;
    ftc_context_t *ctx;
    uint32_t rank;
    int crashed;
    uint64_t crash_ns;
    uint64_t extra_delay_ns;
    uint64_t detect_delay_ns;  /* reports of crashes TO this rank */
    uint64_t send_free_ns;     /* completion time of its latest send */
    uint64_t sends;
    uint64_t crash_countdown;  /* sends left before it crashes; 0: none */
    int deaf;                  /* every message to it is dropped */
    uint64_t deaf_countdown;   /* sends left before it goes deaf; 0: none */
    uint64_t cut_countdown;    /* sends left before its link to cut_peer
                                  is cut; 0: none */
    uint32_t cut_peer;
    int timer_armed;
    uint64_t timer_ns;
    uint64_t timer_gen;        /* bumped by every arm and cancel */
    uint32_t watchers;         /* first watch of this rank as peer */
} lb_endpoint_t;

/* "watcher watches peer". Entries live in a pool and are linked per peer,
 * so a crash finds its watchers without scanning the world. */
typedef struct lb_watch {
    uint64_t id;               /* unique for the world's lifetime */
    uint32_t watcher, peer;
    uint32_t prev, next;       /* in the peer's list, or next free entry */
} lb_watch_t;

struct ftc_lb_world {
    ftc_lb_config_t cfg;
    lb_endpoint_t *eps;
    ftc_calendar_t queue;
    ftc_lb_rng_t rng;
    uint64_t now;
    int running;
    /* (src, dest) -> arrival time of the latest message: pair FIFO.
     * Kept only once some message took longer than latency_ns: until
     * then every arrival is its send time + latency_ns, no later than any
     * message sent after it can arrive, and a large simulation saves a
     * hash table of every pair that ever spoke (two lookups per send). */
    ftc_lb_pair_map_t last_arrival;
    int delays_vary;
    /* (watcher, peer) -> index in watches. */
    ftc_lb_pair_map_t watch_index;
    /* (min, max) of the ranks of a cut link -> 1. */
    ftc_lb_pair_map_t cut_links;
    lb_watch_t *watches;
    uint32_t watches_cap;
    uint32_t watches_free;
    uint64_t next_watch_id;
    ftc_lb_stats_t stats;
    ftc_lb_msg_pool_t msgs;
    /* The event handled last, if it handed a message to a core. */
    int last_was_arrival;
    uint32_t last_src, last_dest;
};

/* A lost timer or message would silently change what a test checks, and
 * the void ops cannot report it: out of memory ends the run instead. */
static void lb_out_of_memory(void)
{
    fputs("ftcoll loopback: out of memory\n", stderr);
    abort();
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Queues an event of rank due at `at` (>= now). Arrivals and completions
 * carry ptr (the message, the cookie), the others gen. */
static void lb_schedule(ftc_lb_world_t *w, uint64_t at, uint32_t kind,
                        uint32_t rank, uint32_t peer, void *ptr, uint64_t gen)
{
    uint32_t idx = ftc_cal_alloc(&w->queue);
    if (idx == FTC_CAL_NONE)
        lb_out_of_memory();
    ftc_cal_event_t *ev = ftc_cal_at(&w->queue, idx);
    ev->time = at;
    ev->rank = rank;
    ev->peer = peer;
    ev->kind = (uint16_t)kind;
    if (kind == LB_EV_ARRIVE || kind == LB_EV_SEND_DONE)
        ev->u.ptr = ptr;
    else
        ev->u.gen = gen;
    ftc_cal_push(&w->queue, idx);
}

static void lb_schedule_peer_failed(ftc_lb_world_t *w, const lb_watch_t *wt,
                                    uint64_t at)
{
    lb_schedule(w, at, LB_EV_PEER_FAILED, wt->watcher, wt->peer, NULL,
                wt->id);
}

static void lb_crash_now(ftc_lb_world_t *w, uint32_t rank)
{
    lb_endpoint_t *ep = &w->eps[rank];
    if (ep->crashed)
        return;
    ep->crashed = 1;
    ep->crash_ns = w->now;
    ep->timer_armed = 0;
    ep->crash_countdown = 0;

    /* Each watcher's transport takes its own time to notice. */
    for (uint32_t i = ep->watchers; i != LB_NONE; i = w->watches[i].next) {
        uint64_t delay = w->eps[w->watches[i].watcher].detect_delay_ns;
        if (delay != UINT64_MAX)
            lb_schedule_peer_failed(w, &w->watches[i],
                                    sat_add(w->now, delay));
    }
}

/* --- The transport ops -------------------------------------------------- */

static int lb_link_cut(const ftc_lb_world_t *w, uint32_t a, uint32_t b)
{
    uint64_t v;
    if (w->cut_links.len == 0)
        return 0;
    return ftc_lb_map_get(&w->cut_links, a < b ? a : b, a < b ? b : a, &v);
}

/* The cut links map to LB_CUT_SILENT or LB_CUT_REPORTED. */
#define LB_CUT_SILENT 1
#define LB_CUT_REPORTED 2

static void lb_cut_now(ftc_lb_world_t *w, uint32_t a, uint32_t b)
{
    uint64_t v;
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (ftc_lb_map_get(&w->cut_links, lo, hi, &v))
        return; /* already cut; a reported cut stays reported */
    if (ftc_lb_map_put(&w->cut_links, lo, hi, LB_CUT_SILENT) != 0)
        lb_out_of_memory();
}

static int lb_link_cut_reported(const ftc_lb_world_t *w, uint32_t a,
                                uint32_t b)
{
    uint64_t v;
    if (w->cut_links.len == 0)
        return 0;
    return ftc_lb_map_get(&w->cut_links, a < b ? a : b, a < b ? b : a, &v)
           && v == LB_CUT_REPORTED;
}

static int lb_send(void *tp, uint32_t dest, const void *buf, size_t len,
                   void *cookie)
{
    lb_endpoint_t *ep = tp;
    ftc_lb_world_t *w = ep->world;

    if (ep->crashed)
        return FTC_SEND_INLINE;
    if (dest >= w->cfg.n || (buf == NULL && len > 0))
        return FTC_EINVAL;

    ep->sends++;
    w->stats.messages_sent++;

    ftc_lb_msg_t *msg = ftc_lb_msg_get(&w->msgs, len);
    if (msg == NULL)
        lb_out_of_memory();
    if (len > 0)
        memcpy(msg->data, buf, len);

    /* Draw in a fixed order, and only for the features that are on, so that
     * a seed gives the same run whatever the sends' contents. */
    uint64_t jitter = 0;
    if (w->cfg.jitter_ns > 0)
        jitter = ftc_lb_rng_upto(&w->rng, w->cfg.jitter_ns);
    int drop = ftc_lb_rng_chance(&w->rng, w->cfg.drop_prob);
    if (ftc_lb_rng_chance(&w->rng, w->cfg.corrupt_prob)
        && len > w->cfg.corrupt_skip) {
        uint64_t span = (uint64_t)(len - w->cfg.corrupt_skip) * 8;
        uint64_t bit = (uint64_t)w->cfg.corrupt_skip * 8
                       + ftc_lb_rng_upto(&w->rng, span - 1);
        msg->data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        w->stats.corrupted++;
    }

    if (drop) {
        w->stats.dropped_random++;
        ftc_lb_msg_release(&w->msgs, msg);
    } else if (lb_link_cut(w, ep->rank, dest)) {
        w->stats.dropped_cut++;
        ftc_lb_msg_release(&w->msgs, msg);
    } else {
        uint64_t soonest = sat_add(w->now, w->cfg.latency_ns);
        uint64_t at = sat_add(soonest, sat_add(jitter, ep->extra_delay_ns));
        if (at != soonest)
            w->delays_vary = 1;
        if (w->delays_vary) {
            /* A pair missing from the map has sent only before delays
             * varied, each message to arrive latency_ns after its send:
             * by soonest. */
            uint64_t last;
            if (ftc_lb_map_get(&w->last_arrival, ep->rank, dest, &last))
                at = max_u64(at, last);
            if (ftc_lb_map_put(&w->last_arrival, ep->rank, dest, at) != 0)
                lb_out_of_memory();
        }

        lb_schedule(w, at, LB_EV_ARRIVE, dest, ep->rank, msg, 0);
    }

    if (ep->deaf_countdown > 0 && --ep->deaf_countdown == 0)
        ep->deaf = 1;
    if (ep->cut_countdown > 0 && --ep->cut_countdown == 0)
        lb_cut_now(w, ep->rank, ep->cut_peer);
    if (ep->crash_countdown > 0 && --ep->crash_countdown == 0) {
        lb_crash_now(w, ep->rank);
        return FTC_SEND_INLINE;
    }

    ep->send_free_ns = sat_add(max_u64(w->now, ep->send_free_ns),
                               w->cfg.send_cost_ns);
    lb_schedule(w, ep->send_free_ns, LB_EV_SEND_DONE, ep->rank, 0, cookie, 0);
    return FTC_OK;
}

static void lb_timer_arm(void *tp, uint64_t deadline_ns)
{
    lb_endpoint_t *ep = tp;
    ftc_lb_world_t *w = ep->world;

    if (ep->crashed)
        return;
    uint64_t at = max_u64(deadline_ns, w->now);
    /* The core re-arms the same deadline often; keeping the queued wake-up
     * saves a heap entry that would only be discarded. */
    if (ep->timer_armed && ep->timer_ns == at)
        return;
    ep->timer_armed = 1;
    ep->timer_ns = at;
    ep->timer_gen++;

    lb_schedule(w, at, LB_EV_TIMER, ep->rank, 0, NULL, ep->timer_gen);
}

static void lb_timer_cancel(void *tp)
{
    lb_endpoint_t *ep = tp;
    ep->timer_armed = 0;
    ep->timer_gen++;
}

static uint64_t lb_now(void *tp)
{
    const lb_endpoint_t *ep = tp;
    return ep->world->now;
}

static uint32_t lb_watch_alloc(ftc_lb_world_t *w)
{
    if (w->watches_free == LB_NONE) {
        uint32_t cap = w->watches_cap ? w->watches_cap * 2 : 64;
        if (cap <= w->watches_cap || cap == LB_NONE)
            lb_out_of_memory();
        lb_watch_t *p = realloc(w->watches, (size_t)cap * sizeof(*p));
        if (p == NULL)
            lb_out_of_memory();
        /* Chain the new entries in increasing order: which entry a watch
         * gets must not depend on anything but the sequence of calls. */
        for (uint32_t i = w->watches_cap; i < cap; i++)
            p[i].next = i + 1 < cap ? i + 1 : LB_NONE;
        w->watches_free = w->watches_cap;
        w->watches = p;
        w->watches_cap = cap;
    }
    uint32_t i = w->watches_free;
    w->watches_free = w->watches[i].next;
    return i;
}

static void lb_watch(void *tp, uint32_t peer)
{
    lb_endpoint_t *ep = tp;
    ftc_lb_world_t *w = ep->world;
    uint64_t existing;

    if (ep->crashed || peer >= w->cfg.n ||
        ftc_lb_map_get(&w->watch_index, ep->rank, peer, &existing))
        return;

    uint32_t i = lb_watch_alloc(w);
    lb_watch_t *wt = &w->watches[i];
    lb_endpoint_t *pe = &w->eps[peer];
    wt->id = ++w->next_watch_id;
    wt->watcher = ep->rank;
    wt->peer = peer;
    wt->prev = LB_NONE;
    wt->next = pe->watchers;
    if (pe->watchers != LB_NONE)
        w->watches[pe->watchers].prev = i;
    pe->watchers = i;
    if (ftc_lb_map_put(&w->watch_index, ep->rank, peer, i) != 0)
        lb_out_of_memory();

    if (pe->crashed && ep->detect_delay_ns != UINT64_MAX)
        lb_schedule_peer_failed(
            w, wt, max_u64(sat_add(pe->crash_ns, ep->detect_delay_ns),
                           w->now));
    else if (lb_link_cut_reported(w, ep->rank, peer))
        lb_schedule_peer_failed(w, wt, w->now);
}

static void lb_unwatch(void *tp, uint32_t peer)
{
    lb_endpoint_t *ep = tp;
    ftc_lb_world_t *w = ep->world;
    uint64_t idx;

    if (peer >= w->cfg.n ||
        !ftc_lb_map_get(&w->watch_index, ep->rank, peer, &idx))
        return;
    uint32_t i = (uint32_t)idx;
    lb_watch_t *wt = &w->watches[i];
    if (wt->prev != LB_NONE)
        w->watches[wt->prev].next = wt->next;
    else
        w->eps[peer].watchers = wt->next;
    if (wt->next != LB_NONE)
        w->watches[wt->next].prev = wt->prev;
    wt->id = 0;
    wt->next = w->watches_free;
    w->watches_free = i;
    ftc_lb_map_remove(&w->watch_index, ep->rank, peer);
}

static const ftc_transport_ops_t lb_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = lb_send,
    .timer_arm = lb_timer_arm,
    .timer_cancel = lb_timer_cancel,
    .now = lb_now,
    .watch = lb_watch,
    .unwatch = lb_unwatch,
    .progress = NULL,
};

const ftc_transport_ops_t *ftc_lb_ops(void)
{
    return &lb_ops;
}

/* --- World life cycle --------------------------------------------------- */

void ftc_lb_config_init(ftc_lb_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->latency_ns = 1000;
    cfg->send_cost_ns = 100;
    cfg->detect_delay_ns = 50000;
}

/* Written so that NaN fails too. */
static int prob_ok(double p)
{
    return p >= 0.0 && p <= 1.0;
}

int ftc_lb_world_create(const ftc_lb_config_t *cfg, ftc_lb_world_t **out)
{
    if (out != NULL)
        *out = NULL;
    if (cfg == NULL || out == NULL || cfg->n == 0 || cfg->n >= (1u << 31) ||
        !prob_ok(cfg->drop_prob) || !prob_ok(cfg->corrupt_prob))
        return FTC_EINVAL;

    ftc_lb_world_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return FTC_ENOMEM;
    w->eps = calloc(cfg->n, sizeof(*w->eps));
    if (w->eps == NULL) {
        free(w);
        return FTC_ENOMEM;
    }
    w->cfg = *cfg;
    for (uint32_t r = 0; r < cfg->n; r++) {
        w->eps[r].world = w;
        w->eps[r].rank = r;
        w->eps[r].watchers = LB_NONE;
        w->eps[r].detect_delay_ns = cfg->detect_delay_ns;
    }
    uint64_t window = sat_add(sat_add(cfg->latency_ns, cfg->jitter_ns),
                              cfg->send_cost_ns);
    window = window < LB_MIN_WINDOW && cfg->n > LB_WIDE_WORLD ? LB_MIN_WINDOW
                                                              : window + 1;
    if (ftc_cal_init(&w->queue, window < LB_MAX_WINDOW ? window
                                                       : LB_MAX_WINDOW) != 0) {
        free(w->eps);
        free(w);
        return FTC_ENOMEM;
    }
    ftc_lb_rng_seed(&w->rng, cfg->seed);
    ftc_lb_map_init(&w->last_arrival);
    ftc_lb_map_init(&w->watch_index);
    ftc_lb_map_init(&w->cut_links);
    ftc_lb_msg_pool_init(&w->msgs);
    w->watches_free = LB_NONE;
    *out = w;
    return FTC_OK;
}

void ftc_lb_world_destroy(ftc_lb_world_t *w)
{
    if (w == NULL)
        return;
    /* Arrival events own their messages. */
    while (!ftc_cal_empty(&w->queue)) {
        ftc_cal_set_now(&w->queue, ftc_cal_next_time(&w->queue));
        uint32_t idx;
        while ((idx = ftc_cal_pop_now(&w->queue)) != FTC_CAL_NONE) {
            const ftc_cal_event_t *ev = ftc_cal_at(&w->queue, idx);
            if (ev->kind == LB_EV_ARRIVE)
                ftc_lb_msg_release(&w->msgs, ev->u.ptr);
            ftc_cal_release(&w->queue, idx);
        }
    }
    ftc_cal_fini(&w->queue);
    ftc_lb_map_fini(&w->last_arrival);
    ftc_lb_map_fini(&w->watch_index);
    ftc_lb_map_fini(&w->cut_links);
    ftc_lb_msg_pool_fini(&w->msgs);
    free(w->watches);
    free(w->eps);
    free(w);
}

void *ftc_lb_endpoint(ftc_lb_world_t *w, uint32_t rank)
{
    if (w == NULL || rank >= w->cfg.n)
        return NULL;
    return &w->eps[rank];
}

void ftc_lb_attach(ftc_lb_world_t *w, uint32_t rank, ftc_context_t *ctx)
{
    if (w != NULL && rank < w->cfg.n)
        w->eps[rank].ctx = ctx;
}

/* --- Fault injection ---------------------------------------------------- */

void ftc_lb_crash(ftc_lb_world_t *w, uint32_t rank)
{
    if (w != NULL && rank < w->cfg.n)
        lb_crash_now(w, rank);
}

void ftc_lb_crash_at(ftc_lb_world_t *w, uint32_t rank, uint64_t at_ns)
{
    if (w == NULL || rank >= w->cfg.n)
        return;
    lb_schedule(w, max_u64(at_ns, w->now), LB_EV_CRASH, rank, 0, NULL, 0);
}

void ftc_lb_crash_after_sends(ftc_lb_world_t *w, uint32_t rank, uint64_t k)
{
    if (w == NULL || rank >= w->cfg.n || w->eps[rank].crashed)
        return;
    if (k == 0)
        lb_crash_now(w, rank);
    else
        w->eps[rank].crash_countdown = k;
}

int ftc_lb_is_crashed(const ftc_lb_world_t *w, uint32_t rank)
{
    return w != NULL && rank < w->cfg.n && w->eps[rank].crashed;
}

void ftc_lb_deafen(ftc_lb_world_t *w, uint32_t rank)
{
    if (w == NULL || rank >= w->cfg.n)
        return;
    w->eps[rank].deaf = 1;
    w->eps[rank].deaf_countdown = 0;
}

void ftc_lb_deafen_after_sends(ftc_lb_world_t *w, uint32_t rank, uint64_t k)
{
    if (w == NULL || rank >= w->cfg.n || w->eps[rank].deaf)
        return;
    if (k == 0)
        ftc_lb_deafen(w, rank);
    else
        w->eps[rank].deaf_countdown = k;
}

int ftc_lb_is_deaf(const ftc_lb_world_t *w, uint32_t rank)
{
    return w != NULL && rank < w->cfg.n && w->eps[rank].deaf;
}

void ftc_lb_cut_link(ftc_lb_world_t *w, uint32_t a, uint32_t b)
{
    if (w == NULL || a >= w->cfg.n || b >= w->cfg.n || a == b)
        return;
    lb_cut_now(w, a, b);
}

void ftc_lb_cut_link_reported(ftc_lb_world_t *w, uint32_t a, uint32_t b)
{
    if (w == NULL || a >= w->cfg.n || b >= w->cfg.n || a == b)
        return;
    if (ftc_lb_map_put(&w->cut_links, a < b ? a : b, a < b ? b : a,
                       LB_CUT_REPORTED) != 0)
        lb_out_of_memory();
    /* Each end that watches the other hears now, whatever its
     * detect_delay_ns: the report is of the cut, not of a crash. */
    uint64_t idx;
    if (ftc_lb_map_get(&w->watch_index, a, b, &idx))
        lb_schedule_peer_failed(w, &w->watches[idx], w->now);
    if (ftc_lb_map_get(&w->watch_index, b, a, &idx))
        lb_schedule_peer_failed(w, &w->watches[idx], w->now);
}

void ftc_lb_cut_link_after_sends(ftc_lb_world_t *w, uint32_t a, uint32_t b,
                                 uint64_t k)
{
    if (w == NULL || a >= w->cfg.n || b >= w->cfg.n || a == b)
        return;
    if (k == 0) {
        lb_cut_now(w, a, b);
    } else {
        w->eps[a].cut_countdown = k;
        w->eps[a].cut_peer = b;
    }
}

int ftc_lb_is_cut(const ftc_lb_world_t *w, uint32_t a, uint32_t b)
{
    return w != NULL && a < w->cfg.n && b < w->cfg.n && lb_link_cut(w, a, b);
}

void ftc_lb_set_delay(ftc_lb_world_t *w, uint32_t rank, uint64_t extra_ns)
{
    if (w != NULL && rank < w->cfg.n)
        w->eps[rank].extra_delay_ns = extra_ns;
}

void ftc_lb_set_detect_delay(ftc_lb_world_t *w, uint32_t rank,
                             uint64_t delay_ns)
{
    if (w != NULL && rank < w->cfg.n)
        w->eps[rank].detect_delay_ns = delay_ns;
}

void ftc_lb_inject(ftc_lb_world_t *w, uint32_t dest, uint32_t claimed_src,
                   const void *buf, size_t len, uint64_t at_ns)
{
    if (w == NULL || dest >= w->cfg.n || (buf == NULL && len > 0))
        return;
    ftc_lb_msg_t *msg = ftc_lb_msg_get(&w->msgs, len);
    if (msg == NULL)
        lb_out_of_memory();
    if (len > 0)
        memcpy(msg->data, buf, len);
    w->stats.messages_injected++;

    lb_schedule(w, max_u64(at_ns, w->now), LB_EV_ARRIVE, dest, claimed_src,
                msg, 0);
}

/* --- Running ------------------------------------------------------------ */

/* 1 if rank has no context to hand events to (counted: it is the caller's
 * bug, or a rank the test left out on purpose). */
static int lb_absent(ftc_lb_world_t *w, const lb_endpoint_t *ep)
{
    if (ep->ctx != NULL)
        return 0;
    w->stats.dropped_unattached++;
    return 1;
}

/* Hands ev to its core. Returns 1 if it did, 0 if ev was moot. */
static int lb_dispatch(ftc_lb_world_t *w, const ftc_cal_event_t *ev)
{
    lb_endpoint_t *ep = &w->eps[ev->rank];
    uint64_t idx;

    switch (ev->kind) {
    case LB_EV_ARRIVE: {
        /* The event is the message's only owner: every path frees it. */
        ftc_lb_msg_t *msg = ev->u.ptr;
        int handled = 0;
        if (ep->crashed) {
            w->stats.dropped_dead++;
        } else if (ep->deaf) {
            w->stats.dropped_deaf++;
        } else if (lb_link_cut(w, ev->peer, ev->rank)) {
            w->stats.dropped_cut++;
        } else if (!lb_absent(w, ep)) {
            w->now = ev->time;
            w->stats.messages_delivered++;
            w->last_was_arrival = 1;
            w->last_src = ev->peer;
            w->last_dest = ev->rank;
            if (ftc_transport_recv(ep->ctx, ev->peer, msg->data, msg->len) !=
                FTC_OK)
                w->stats.messages_rejected++;
            handled = 1;
        }
        ftc_lb_msg_release(&w->msgs, msg);
        return handled;
    }
    case LB_EV_SEND_DONE:
        if (ep->crashed || lb_absent(w, ep))
            return 0;
        w->now = ev->time;
        ftc_transport_send_done(ep->ctx, ev->u.ptr, FTC_OK);
        return 1;
    case LB_EV_TIMER:
        if (ep->crashed || !ep->timer_armed || ep->timer_gen != ev->u.gen)
            return 0;
        ep->timer_armed = 0;
        if (lb_absent(w, ep))
            return 0;
        w->now = ev->time;
        ftc_transport_timer_fired(ep->ctx);
        return 1;
    case LB_EV_PEER_FAILED:
        /* The watch must be the one the report was scheduled for: after an
         * unwatch and a new watch, the new watch has its own report. */
        if (ep->crashed ||
            !ftc_lb_map_get(&w->watch_index, ev->rank, ev->peer, &idx) ||
            w->watches[idx].id != ev->u.gen || lb_absent(w, ep))
            return 0;
        w->now = ev->time;
        w->stats.peer_failed_reports++;
        ftc_transport_peer_failed(ep->ctx, ev->peer);
        return 1;
    case LB_EV_CRASH:
        if (ep->crashed)
            return 0;
        w->now = ev->time;
        lb_crash_now(w, ev->rank);
        return 1;
    default:
        return 0;
    }
}

/* Handles events due at or before until_ns. Sets *drained when it stopped
 * for want of such events rather than because of max_events. */
static uint64_t lb_run(ftc_lb_world_t *w, uint64_t until_ns,
                       uint64_t max_events, int *drained)
{
    uint64_t handled = 0;
    *drained = 0;
    if (w == NULL || w->running)
        return 0;
    w->running = 1;
    for (;;) {
        /* next_time is UINT64_MAX both for an event due then and for none;
         * emptiness tells them apart. */
        uint64_t next = ftc_cal_next_time(&w->queue);
        if (ftc_cal_empty(&w->queue) || next > until_ns) {
            *drained = 1;
            break;
        }
        if (handled >= max_events)
            break;
        ftc_cal_set_now(&w->queue, next);
        uint32_t idx = ftc_cal_pop_now(&w->queue);
        ftc_cal_event_t ev = *ftc_cal_at(&w->queue, idx);
        ftc_cal_release(&w->queue, idx);
        w->last_was_arrival = 0;
        if (lb_dispatch(w, &ev)) {
            handled++;
            w->stats.events++;
        }
    }
    /* Moot events move the calendar but not the clock (w->now is that of
     * the last event handled). Stopping for max_events, the last event
     * popped was handled, so the two agree; stopping for want of events,
     * either t_ns is ahead of both (ftc_lb_run_until sets both to it) or
     * the queue is empty and the calendar can go back to the clock, so
     * that what is scheduled between runs is due at its own time. */
    if (ftc_cal_empty(&w->queue))
        ftc_cal_rewind(&w->queue, w->now);
    w->running = 0;
    return handled;
}

uint64_t ftc_lb_run(ftc_lb_world_t *w, uint64_t max_events)
{
    int drained;
    return lb_run(w, UINT64_MAX, max_events, &drained);
}

uint64_t ftc_lb_run_until(ftc_lb_world_t *w, uint64_t t_ns,
                          uint64_t max_events)
{
    int drained;
    uint64_t handled = lb_run(w, t_ns, max_events, &drained);
    if (drained && w->now < t_ns) {
        w->now = t_ns;
        ftc_cal_set_now(&w->queue, t_ns);
    }
    return handled;
}

int ftc_lb_step(ftc_lb_world_t *w)
{
    int drained;
    return lb_run(w, UINT64_MAX, 1, &drained) == 1;
}

int ftc_lb_last_arrival(const ftc_lb_world_t *w, uint32_t *src,
                        uint32_t *dest)
{
    if (w == NULL || !w->last_was_arrival)
        return 0;
    if (src != NULL)
        *src = w->last_src;
    if (dest != NULL)
        *dest = w->last_dest;
    return 1;
}

uint64_t ftc_lb_now(const ftc_lb_world_t *w)
{
    return w ? w->now : 0;
}

uint64_t ftc_lb_messages_sent(const ftc_lb_world_t *w)
{
    return w ? w->stats.messages_sent : 0;
}

uint64_t ftc_lb_rank_messages_sent(const ftc_lb_world_t *w, uint32_t rank)
{
    return w != NULL && rank < w->cfg.n ? w->eps[rank].sends : 0;
}

void ftc_lb_stats(const ftc_lb_world_t *w, ftc_lb_stats_t *out)
{
    if (out == NULL)
        return;
    if (w == NULL)
        memset(out, 0, sizeof(*out));
    else
        *out = w->stats;
}
