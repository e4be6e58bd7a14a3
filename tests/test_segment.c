/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segmentation (lib/core/segment.h): large payloads as trains of segments under
 * a credit window, reassembled with a bound.
 *
 *   - collectives on the loopback with a 64-byte segment size and values
 *     around the boundary (1 element up to many segments): every result
 *     exact, and the wire really carried segments;
 *   - the sender, on a transport that records what it is given: a train
 *     stops after segment_window segments until credits come, a keepalive
 *     answer goes out at once while the train waits, and a credit for
 *     segments never sent moves nothing;
 *   - the receiver, fed segments by hand: in order they deliver the
 *     value; a duplicate, an overlap, a gap, an offset or length out of
 *     range, a reserved field set, another message's header and a total
 *     above the bound are each dropped and counted, nothing delivered,
 *     and the memory held never exceeds the bound; a legitimate train
 *     still delivers afterwards;
 *   - a bcast root that crashes after each of its sends in turn (so
 *     inside its trains): every live rank delivers once, and an FTC_OK
 *     value is the root's.
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "core/context.h"
#include "core/segment.h"
#include "wire/wire.h"
#include "algo/corrected/kinds.h"
#include "check.h"

#define SEG 64u         /* segment payload bytes in these tests */
#define TOKEN UINT64_C(0x5E65E65E)

/* Authentication on (the job key below): segments are MACed over a
 * digest of their bytes (FTC_WF_DIGEST). */
static bool keyed;
static const uint8_t job_key[16] = {7, 1, 8, 2, 8, 1, 8, 2,
                                    8, 4, 5, 9, 0, 4, 5, 2};

static void config(ftc_config_t *cfg)
{
    ftc_config_init(cfg);
    if (keyed) {
        cfg->auth = 1;
        memcpy(cfg->auth_key, job_key, sizeof(job_key));
    }
    cfg->job_token = TOKEN;
    cfg->suspect_timeout_ns = 1000000;
    cfg->probe_timeout_ns = 2000000;
    cfg->segment_size = SEG;
    cfg->segment_window = 2;
}

/* ---- collectives on the loopback --------------------------------------- */

typedef struct rank_out {
    int status;
    int delivered;
} rank_out_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_out_t *o = arg;
    o->status = c->status;
    o->delivered++;
}

/* Run coll over n ranks with count int64 elements; rank r's input element
 * i is (r + 1) * (i + 1). crash_rank crashes after crash_after sends
 * (UINT64_MAX: nobody). Returns how many wire messages were segments. */
static void run_coll(ftc_coll_t coll, uint32_t n, uint32_t f, uint64_t count,
                     uint32_t crash_rank, uint64_t crash_after,
                     int64_t **out, rank_out_t *res, uint64_t *segments)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    ftc_lb_world_t *w;
    if (ftc_lb_world_create(&lc, &w) != FTC_OK)
        abort();
    ftc_config_t cfg;
    config(&cfg);
    ftc_context_t *ctx[8];
    ftc_group_t *g[8];
    int64_t *in[8];
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(w, r),
                               &cfg, &ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(w, r, ctx[r]);
        if (ftc_group_create(ctx[r], 1, 0, n, NULL, &g[r]) != FTC_OK)
            abort();
        in[r] = malloc(count * sizeof(int64_t));
        out[r] = calloc(count, sizeof(int64_t));
        for (uint64_t i = 0; i < count; i++)
            in[r][i] = (int64_t)(r + 1) * (int64_t)(i + 1);
        res[r].status = 1;
        res[r].delivered = 0;
    }
    if (crash_after != UINT64_MAX)
        ftc_lb_crash_after_sends(w, crash_rank, crash_after);
    for (uint32_t r = 0; r < n; r++) {
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.f = f;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = count;
        a.sendbuf = in[r];
        a.recvbuf = out[r];
        a.deliver = on_deliver;
        a.deliver_arg = &res[r];
        int rc = coll == FTC_COLL_BCAST ? ftc_init_bcast(g[r], &a, NULL)
                 : coll == FTC_COLL_REDUCE ? ftc_init_reduce(g[r], &a, NULL)
                                           : ftc_init_allreduce(g[r], &a, NULL);
        CHECK_MSG(rc == FTC_OK, "init rank %u", r);
    }
    ftc_lb_run(w, 10000000);
    *segments = 0;
    for (uint32_t r = 0; r < n; r++) {
        ftc_counters_t c;
        ftc_context_counters(ctx[r], &c);
        /* Without loss or forgery nothing is dropped as bad. */
        CHECK_MSG(c.dropped_badmsg == 0, "rank %u dropped %" PRIu64 " as bad",
                  r, c.dropped_badmsg);
        CHECK_MSG(c.dropped_foreign == 0, "rank %u refused %" PRIu64 " as "
                  "unauthenticated", r, c.dropped_foreign);
        if (ctx[r]->seg != NULL)
            CHECK_MSG(ftc_segment_held_bytes(ctx[r]) == 0 || crash_after
                          != UINT64_MAX, "rank %u holds a partial message", r);
    }
    ftc_lb_stats_t st;
    ftc_lb_stats(w, &st);
    *segments = st.messages_sent;
    for (uint32_t r = 0; r < n; r++) {
        ftc_context_destroy(ctx[r]);
        free(in[r]);
    }
    ftc_lb_world_destroy(w);
}

static void test_boundaries(void)
{
    /* Element counts whose value is 1 element, one short of a segment,
     * exactly one, one over, and many segments. */
    const uint64_t counts[] = {1, SEG / 8 - 1, SEG / 8, SEG / 8 + 1,
                               40 * SEG / 8 + 3};
    const ftc_coll_t colls[] = {FTC_COLL_ALLREDUCE, FTC_COLL_REDUCE,
                                FTC_COLL_BCAST};
    for (size_t c = 0; c < 3; c++)
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
            uint32_t n = 4;
            uint64_t count = counts[k];
            int64_t *out[8];
            rank_out_t res[8];
            uint64_t msgs;
            run_coll(colls[c], n, 1, count, 0, UINT64_MAX, out, res, &msgs);
            for (uint32_t r = 0; r < n; r++) {
                CHECK_MSG(res[r].delivered == 1 && res[r].status == FTC_OK,
                          "coll %d count %" PRIu64 " rank %u: %d deliveries, "
                          "status %d", (int)colls[c], count, r,
                          res[r].delivered, res[r].status);
                bool has = colls[c] != FTC_COLL_REDUCE || r == 0;
                bool exact = true;
                for (uint64_t i = 0; has && i < count; i++) {
                    int64_t want = colls[c] == FTC_COLL_BCAST
                                       ? (int64_t)(i + 1)
                                       : 10 * (int64_t)(i + 1);
                    if (out[r][i] != want)
                        exact = false;
                }
                CHECK_MSG(exact, "coll %d count %" PRIu64 " rank %u: wrong "
                          "value", (int)colls[c], count, r);
                free(out[r]);
            }
            /* A value over a segment went as several messages. */
            if (count * 8 > 2 * SEG)
                CHECK_MSG(msgs > 4 * n, "count %" PRIu64 ": %" PRIu64
                          " messages, no segments?", count, msgs);
        }
}

/* A bcast root that crashes after each of its sends in turn. */
static void test_crash_mid_train(void)
{
    const uint32_t n = 4;
    const uint64_t count = 6 * SEG / 8 + 1;   /* 7 segments */
    for (uint64_t k = 0; k < 60; k++) {
        int64_t *out[8];
        rank_out_t res[8];
        uint64_t msgs;
        run_coll(FTC_COLL_BCAST, n, 1, count, 0, k, out, res, &msgs);
        for (uint32_t r = 1; r < n; r++) {
            CHECK_MSG(res[r].delivered == 1, "crash after %" PRIu64 ": rank %u "
                      "delivered %d times", k, r, res[r].delivered);
            if (res[r].status == FTC_OK) {
                bool exact = true;
                for (uint64_t i = 0; i < count; i++)
                    if (out[r][i] != (int64_t)(i + 1))
                        exact = false;
                CHECK_MSG(exact, "crash after %" PRIu64 ": rank %u FTC_OK "
                          "with another value", k, r);
            }
        }
        for (uint32_t r = 0; r < n; r++)
            free(out[r]);
    }
}

/* ---- a transport that records what it is given ------------------------ */

typedef struct rec_msg {
    uint32_t dest;
    size_t len;
    uint8_t *buf;
} rec_msg_t;

typedef struct rec_tp {
    rec_msg_t msgs[4096];
    uint32_t n;
    uint64_t now;
    bool armed;             /* the core asked for a timer turn */
} rec_tp_t;

static int rt_send(void *tp, uint32_t dest, const void *buf, size_t len,
                   void *cookie)
{
    rec_tp_t *t = tp;
    (void)cookie;
    if (t->n < 4096) {
        t->msgs[t->n].dest = dest;
        t->msgs[t->n].len = len;
        t->msgs[t->n].buf = malloc(len);
        memcpy(t->msgs[t->n].buf, buf, len);
        t->n++;
    }
    return FTC_SEND_INLINE;
}
static void rt_arm(void *tp, uint64_t d) { (void)d; ((rec_tp_t *)tp)->armed = true; }
static void rt_cancel(void *tp) { ((rec_tp_t *)tp)->armed = false; }
static uint64_t rt_now(void *tp) { return ((rec_tp_t *)tp)->now; }

static const ftc_transport_ops_t rt_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = rt_send,
    .timer_arm = rt_arm,
    .timer_cancel = rt_cancel,
    .now = rt_now,
};

static void rt_clear(rec_tp_t *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->msgs[i].buf);
    t->n = 0;
}

static ftc_wire_header_t decode(const rec_msg_t *m)
{
    ftc_wire_header_t h;
    int rc = ftc_wire_decode(m->buf, m->len, TOKEN, 2, &h);
    CHECK_MSG(rc == FTC_OK, "recorded message does not decode: %d", rc);
    return h;
}

static void control(ftc_context_t *ctx, uint32_t from, uint8_t kind,
                    uint32_t round)
{
    uint8_t buf[FTC_WIRE_HEADER_SIZE];
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = kind;
    h.group_id = 1;
    h.sender = from;
    h.word = round;
    h.job_token = TOKEN;
    h.payload_len = 0;
    ftc_wire_encode(&h, buf);
    (void)ftc_transport_recv(ctx, from, buf, sizeof(buf));
}

static void noop_deliver(const ftc_completion_t *c, void *arg)
{
    (void)c;
    (void)arg;
}

static void test_sender_window(void)
{
    rec_tp_t *t = calloc(1, sizeof(*t));
    ftc_config_t cfg;
    config(&cfg);
    ftc_context_t *ctx;
    ftc_group_t *g;
    if (ftc_context_create(0, 2, &rt_ops, t, &cfg, &ctx) != FTC_OK
        || ftc_group_create(ctx, 1, 0, 2, NULL, &g) != FTC_OK)
        abort();
    const uint64_t count = 10 * SEG / 8;    /* 10 segments */
    int64_t *v = calloc(count, sizeof(int64_t));
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.dtype = FTC_INT64;
    a.count = count;
    a.sendbuf = v;
    a.recvbuf = v;
    a.deliver = noop_deliver;
    CHECK_MSG(ftc_init_bcast(g, &a, NULL) == FTC_OK, "bcast at the root");
    uint32_t segs = 0;
    for (uint32_t i = 0; i < t->n; i++)
        segs += (decode(&t->msgs[i]).flags & FTC_WF_SEGMENT) != 0;
    CHECK_MSG(segs == 2, "the window is 2: %u segments sent before a credit",
              segs);
    rt_clear(t);

    /* A keepalive probe while the train waits: answered at once. */
    control(ctx, 1, FTC_MSG_PROBE, 0);
    bool acked = false;
    for (uint32_t i = 0; i < t->n; i++)
        acked |= decode(&t->msgs[i]).kind == FTC_MSG_PROBE_ACK;
    CHECK_MSG(acked, "probe answer waited behind the train");
    rt_clear(t);

    /* A credit for segments never sent moves nothing. */
    ftc_counters_t c0, c1;
    ftc_context_counters(ctx, &c0);
    control(ctx, 1, FTC_MSG_SEG_CREDIT, 7);
    ftc_context_counters(ctx, &c1);
    CHECK_MSG(t->n == 0, "a forged credit released %u messages", t->n);
    CHECK_MSG(c1.dropped_badmsg == c0.dropped_badmsg + 1,
              "a forged credit is not counted");

    /* Credits one by one release the rest, in order. */
    uint32_t next_off = 2 * SEG;
    for (uint32_t k = 1; k <= 10; k++) {
        control(ctx, 1, FTC_MSG_SEG_CREDIT, k);
        for (uint32_t i = 0; i < t->n; i++) {
            ftc_wire_header_t h = decode(&t->msgs[i]);
            /* Only the first train (a probe's copy may follow it). */
            if (!(h.flags & FTC_WF_SEGMENT) || next_off == count * 8)
                continue;
            const uint8_t *p = t->msgs[i].buf + FTC_WIRE_HEADER_SIZE;
            uint32_t off = (uint32_t)p[4] | (uint32_t)p[5] << 8
                           | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
            CHECK_MSG(off == next_off, "segment at %u, expected %u", off,
                      next_off);
            next_off = off + (h.payload_len - FTC_WIRE_SEGMENT_HDR);
        }
        rt_clear(t);
    }
    CHECK_MSG(next_off == count * 8, "the train ended at %u of %" PRIu64,
              next_off, count * 8);
    ftc_context_destroy(ctx);
    rt_clear(t);
    free(t);
    free(v);
}

/* ---- the receiver, fed by hand ----------------------------------------- */

typedef struct rx {
    rec_tp_t *t;
    ftc_context_t *ctx;
    ftc_group_t *g;
    int64_t *out;
    rank_out_t res;
    ftc_wire_header_t base;     /* the bcast's header, from rank 0 */
} rx_t;

#define RX_COUNT (5 * SEG / 8)  /* 5 segments */

static void rx_init(rx_t *x)
{
    memset(x, 0, sizeof(*x));
    x->t = calloc(1, sizeof(*x->t));
    ftc_config_t cfg;
    config(&cfg);
    if (ftc_context_create(1, 2, &rt_ops, x->t, &cfg, &x->ctx) != FTC_OK
        || ftc_group_create(x->ctx, 1, 0, 2, NULL, &x->g) != FTC_OK)
        abort();
    x->out = calloc(RX_COUNT, sizeof(int64_t));
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.dtype = FTC_INT64;
    a.count = RX_COUNT;
    a.recvbuf = x->out;
    a.deliver = on_deliver;
    a.deliver_arg = &x->res;
    CHECK_MSG(ftc_init_bcast(x->g, &a, NULL) == FTC_OK, "bcast at rank 1");
    memset(&x->base, 0, sizeof(x->base));
    x->base.kind = FTC_CORR_MSG_BCAST;
    x->base.coll = FTC_COLL_BCAST;
    x->base.algo = (uint8_t)x->g->ops->args.algo;
    x->base.group_id = 1;
    x->base.sender = 0;
    x->base.signature = x->g->ops->signature;
    x->base.job_token = TOKEN;
}

static void rx_fini(rx_t *x)
{
    ftc_context_destroy(x->ctx);
    rt_clear(x->t);
    free(x->t);
    free(x->out);
}

static uint64_t rx_bad(const rx_t *x)
{
    ftc_counters_t c;
    ftc_context_counters(x->ctx, &c);
    return c.dropped_badmsg;
}

/* Feed one segment: value bytes [off, off + len) of the root's value
 * (element i = i + 1), claiming total, with id and reserved as given. */
static int rx_seg(rx_t *x, const ftc_wire_header_t *hdr, uint32_t id,
                  uint32_t off, uint32_t len, uint32_t total,
                  uint32_t reserved)
{
    size_t plen = FTC_WIRE_SEGMENT_HDR + len;
    uint8_t *buf = calloc(1, FTC_WIRE_HEADER_SIZE + plen);
    uint8_t *p = buf + FTC_WIRE_HEADER_SIZE;
    uint32_t f[4] = {id, off, total, reserved};
    for (int k = 0; k < 4; k++)
        for (int b = 0; b < 4; b++)
            p[4 * k + b] = (uint8_t)(f[k] >> (8 * b));
    for (uint32_t i = 0; i < len; i++) {
        uint64_t byte = (uint64_t)off + i;
        int64_t elem = (int64_t)(byte / 8 + 1);
        p[FTC_WIRE_SEGMENT_HDR + i] = (uint8_t)(elem >> (8 * (byte % 8)));
    }
    ftc_wire_header_t h = *hdr;
    h.flags = (uint16_t)(h.flags | FTC_WF_SEGMENT);
    h.payload_len = (uint32_t)plen;
    ftc_wire_encode(&h, buf);
    int rc = ftc_transport_recv(x->ctx, 0, buf, FTC_WIRE_HEADER_SIZE + plen);
    free(buf);
    return rc;
}

/* The timer's turn, if the core asked for one (a parked message). */
static void rx_turn(rx_t *x)
{
    if (x->t->armed) {
        x->t->armed = false;
        ftc_transport_timer_fired(x->ctx);
    }
}

static bool rx_exact(const rx_t *x)
{
    for (uint64_t i = 0; i < RX_COUNT; i++)
        if (x->out[i] != (int64_t)(i + 1))
            return false;
    return true;
}

static void test_receiver(void)
{
    const uint32_t total = RX_COUNT * 8;
    rx_t x;

    /* In order: delivered, exact, nothing held. The whole value waits
     * for the timer's turn (parking); a probe that arrives meanwhile is
     * answered at once. */
    rx_init(&x);
    for (uint32_t off = 0; off < total; off += SEG)
        CHECK_MSG(rx_seg(&x, &x.base, 9, off, SEG, total, 0) == FTC_OK,
                  "segment at %u refused", off);
    CHECK_MSG(x.res.delivered == 0, "the whole value handled inside the "
              "receive that completed it");
    CHECK_MSG(x.t->armed, "a parked value and no timer turn asked for");
    /* Every segment was credited. */
    uint32_t credits = 0;
    for (uint32_t i = 0; i < x.t->n; i++)
        credits += decode(&x.t->msgs[i]).kind == FTC_MSG_SEG_CREDIT;
    CHECK_MSG(credits == total / SEG, "%u credits for %u segments", credits,
              total / SEG);
    rt_clear(x.t);
    control(x.ctx, 0, FTC_MSG_PROBE, 0);
    bool acked = false;
    for (uint32_t i = 0; i < x.t->n; i++)
        acked |= decode(&x.t->msgs[i]).kind == FTC_MSG_PROBE_ACK;
    CHECK_MSG(acked, "a probe behind a parked value was not answered at once");
    CHECK_MSG(x.res.delivered == 0, "the probe's answer waited for the value");
    rx_turn(&x);
    CHECK_MSG(x.res.delivered == 1 && x.res.status == FTC_OK && rx_exact(&x),
              "in-order train not delivered exactly");
    CHECK_MSG(ftc_segment_held_bytes(x.ctx) == 0, "memory held after a train");
    CHECK_MSG(rx_bad(&x) == 0, "a good train counted as bad");
    rx_fini(&x);

    /* Hostile segments: each dropped and counted, nothing delivered. */
    rx_init(&x);
    uint64_t bound = 2ull * total + 16 * 2 + 1024;
    uint64_t bad = 0;
    CHECK_MSG(rx_seg(&x, &x.base, 1, 0, SEG, total, 0) == FTC_OK, "first");
    struct {
        const char *what;
        uint32_t id, off, len, total, reserved;
    } cases[] = {
        {"duplicate", 1, 0, SEG, total, 0},
        {"overlap", 1, SEG / 2, SEG, total, 0},
        {"gap", 1, 2 * SEG, SEG, total, 0},
        {"other id", 2, SEG, SEG, total, 0},
        {"other total", 1, SEG, SEG, total + 8, 0},
        {"offset beyond total", 1, total + 8, SEG, total, 0},
        {"length beyond total", 1, total - 8, SEG, total, 0},
        {"reserved set", 1, SEG, SEG, total, 1},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        int rc = rx_seg(&x, &x.base, cases[k].id, cases[k].off, cases[k].len,
                        cases[k].total, cases[k].reserved);
        bad++;
        CHECK_MSG(rc < 0 && rx_bad(&x) == bad, "%s: rc %d, %" PRIu64
                  " counted", cases[k].what, rc, rx_bad(&x));
        CHECK_MSG(ftc_segment_held_bytes(x.ctx) <= bound, "%s: holds %zu",
                  cases[k].what, ftc_segment_held_bytes(x.ctx));
    }
    /* Another message's header in the middle of a train. */
    ftc_wire_header_t other = x.base;
    other.word = 5;
    CHECK_MSG(rx_seg(&x, &other, 1, SEG, SEG, total, 0) < 0
                  && rx_bad(&x) == ++bad,
              "a segment with another header taken");
    /* A total above the bound: refused before anything is held. */
    CHECK_MSG(rx_seg(&x, &x.base, 3, 0, SEG, (uint32_t)bound + 1, 0) < 0,
              "a total of %" PRIu64 " over the bound taken", bound + 1);
    bad += 2;   /* the train it replaced, and itself */
    CHECK_MSG(rx_bad(&x) == bad, "oversized total not counted (%" PRIu64 ")",
              rx_bad(&x));
    CHECK_MSG(ftc_segment_held_bytes(x.ctx) == 0, "held %zu after refusal",
              ftc_segment_held_bytes(x.ctx));
    CHECK_MSG(x.res.delivered == 0, "something was delivered from junk");
    /* A segment claiming 4 GiB, and one too short for its sub-header. */
    CHECK_MSG(rx_seg(&x, &x.base, 4, 0, SEG, UINT32_MAX, 0) < 0,
              "a 4 GiB total taken");
    CHECK_MSG(ftc_segment_held_bytes(x.ctx) == 0, "held after 4 GiB claim");
    /* And still, a legitimate train delivers. */
    for (uint32_t off = 0; off < total; off += SEG)
        (void)rx_seg(&x, &x.base, 5, off, SEG, total, 0);
    rx_turn(&x);
    CHECK_MSG(x.res.delivered == 1 && x.res.status == FTC_OK && rx_exact(&x),
              "a good train after junk not delivered exactly");
    rx_fini(&x);

    /* The sender dies mid-train: its partial message is freed. */
    rx_init(&x);
    CHECK_MSG(rx_seg(&x, &x.base, 1, 0, SEG, total, 0) == FTC_OK, "first");
    CHECK_MSG(ftc_segment_held_bytes(x.ctx) == total, "holds %zu, want %u",
              ftc_segment_held_bytes(x.ctx), total);
    ftc_transport_peer_failed(x.ctx, 0);
    CHECK_MSG(ftc_segment_held_bytes(x.ctx) == 0, "a dead sender's partial "
              "message kept (%zu bytes)", ftc_segment_held_bytes(x.ctx));
    CHECK_MSG(x.res.delivered == 1, "root's death not delivered");
    rx_fini(&x);
}

/* A configuration above what the wire can carry is refused. */
static void test_config(void)
{
    ftc_config_t cfg;
    config(&cfg);
    cfg.segment_size = (uint64_t)UINT32_MAX + 1;
    ftc_context_t *ctx = NULL;
    rec_tp_t *t = calloc(1, sizeof(*t));
    CHECK_MSG(ftc_context_create(0, 2, &rt_ops, t, &cfg, &ctx) == FTC_EINVAL,
              "segment_size 2^32 accepted");
    /* The transport's limit caps the segment. */
    ftc_transport_ops_t ops = rt_ops;
    ops.max_msg_size = FTC_WIRE_HEADER_SIZE + FTC_WIRE_SEGMENT_HDR + 24;
    config(&cfg);
    CHECK_MSG(ftc_context_create(0, 2, &ops, t, &cfg, &ctx) == FTC_OK,
              "create");
    CHECK_MSG(ftc_segment_payload_max(ctx) == 24, "segment %zu, want 24",
              ftc_segment_payload_max(ctx));
    ftc_context_destroy(ctx);
    free(t);
}

/* One value queued for three destinations: one copy, each segment
 * digested once and MACed per destination; every copy decodes under the
 * key to the same bytes; the copy is freed when the last train is out. */
static void test_shared_bytes(void)
{
    rec_tp_t *t = calloc(1, sizeof(*t));
    bool was = keyed;
    keyed = true;
    ftc_config_t cfg;
    config(&cfg);
    keyed = was;
    cfg.segment_window = 64;    /* every segment at once: no credits here */
    ftc_context_t *ctx;
    if (ftc_context_create(0, 4, &rt_ops, t, &cfg, &ctx) != FTC_OK)
        abort();
    enum { LEN = 5 * SEG + 9 };  /* 6 segments, the last short */
    uint8_t value[LEN], other[LEN];
    for (size_t i = 0; i < LEN; i++) {
        value[i] = (uint8_t)(i * 7 + 1);
        other[i] = (uint8_t)(i * 7 + 2);
    }
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = FTC_CORR_MSG_TREE_UP;
    h.algo = FTC_ALGO_CORRECTED;
    h.coll = FTC_COLL_BCAST;
    h.group_id = 9;
    ftc_iov_t iov[2] = {{value, 100}, {value + 100, LEN - 100}};
    /* A slow window, so that the trains wait and share. */
    ctx->cfg.segment_window = 1;
    for (uint32_t d = 1; d < 4; d++)
        CHECK_MSG(ftc_segment_send(ctx, d, &h, iov, 2) == FTC_OK, "queue to %u",
                  d);
    CHECK_MSG(ftc_segment_queued_bytes(ctx) == LEN, "one value to three "
              "destinations: %zu bytes queued, want %u (one copy)",
              ftc_segment_queued_bytes(ctx), (unsigned)LEN);
    /* Other bytes of the same length are not taken for the same. */
    ftc_iov_t iov2 = {other, LEN};
    CHECK_MSG(ftc_segment_send(ctx, 1, &h, &iov2, 1) == FTC_OK, "queue other");
    CHECK_MSG(ftc_segment_queued_bytes(ctx) == 2 * LEN, "another value is "
              "another copy: %zu", ftc_segment_queued_bytes(ctx));
    /* Let everything out: credits for all that was sent, repeatedly. */
    for (int turn = 0; turn < 40; turn++)
        for (uint32_t d = 1; d < 4; d++) {
            uint32_t sent = 0;
            for (uint32_t i = 0; i < t->n; i++) {
                ftc_wire_header_t x;
                if (t->msgs[i].dest == d
                    && ftc_wire_decode_key(t->msgs[i].buf, t->msgs[i].len,
                                           0, job_key, 4, &x) == FTC_OK
                    && (x.flags & FTC_WF_SEGMENT))
                    sent++;
            }
            ftc_segment_credit(ctx, d, sent);
        }
    CHECK_MSG(ftc_segment_queued_bytes(ctx) == 0, "all sent, %zu bytes still "
              "queued", ftc_segment_queued_bytes(ctx));
    /* What each destination got: 6 + 6 (dest 1) or 6 segments, every one
     * digest-MACed, and reassembled, the value's bytes. */
    for (uint32_t d = 1; d < 4; d++) {
        uint8_t got[2][LEN];
        size_t have[2] = {0, 0};
        uint32_t segs = 0, digested = 0, bad = 0;
        for (uint32_t i = 0; i < t->n; i++) {
            if (t->msgs[i].dest != d)
                continue;
            ftc_wire_header_t x;
            if (ftc_wire_decode_key(t->msgs[i].buf, t->msgs[i].len, 0,
                                    job_key, 4, &x) != FTC_OK) {
                bad++;
                continue;
            }
            if (!(x.flags & FTC_WF_SEGMENT))
                continue;
            segs++;
            digested += (x.flags & FTC_WF_DIGEST) != 0;
            const uint8_t *p = t->msgs[i].buf + FTC_WIRE_HEADER_SIZE;
            uint32_t off = (uint32_t)p[4] | (uint32_t)p[5] << 8;
            size_t chunk = x.payload_len - FTC_WIRE_SEGMENT_HDR;
            int which = d == 1 && segs > 6 ? 1 : 0;
            if (off + chunk <= LEN) {
                memcpy(got[which] + off, p + FTC_WIRE_SEGMENT_HDR, chunk);
                have[which] += chunk;
            }
        }
        uint32_t want = d == 1 ? 12 : 6;
        CHECK_MSG(bad == 0 && segs == want && digested == want,
                  "dest %u: %u segments (%u digest-MACed, %u refused), want %u",
                  d, segs, digested, bad, want);
        CHECK_MSG(have[0] == LEN && memcmp(got[0], value, LEN) == 0,
                  "dest %u: the value's bytes", d);
        if (d == 1)
            CHECK_MSG(have[1] == LEN && memcmp(got[1], other, LEN) == 0,
                      "dest 1: the other value's bytes");
    }
    rt_clear(t);
    ftc_context_destroy(ctx);
    free(t);
}

int main(void)
{
    test_boundaries();
    /* Again under a job key: segments MACed over their digests. */
    keyed = true;
    test_boundaries();
    test_crash_mid_train();
    keyed = false;
    test_shared_bytes();
    test_crash_mid_train();
    test_sender_window();
    test_receiver();
    test_config();
    return check_report();
}
