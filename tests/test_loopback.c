/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the loopback backend on its own. The core's entry points are
 * replaced by a test double that records every call, so the test checks
 * what the loopback promises (timing, order, faults, determinism) without
 * depending on the core.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftcoll/error.h"
#include "ftcoll/transport.h"
#include "ftcoll_loopback.h"
#include "core_double.h"
#include "check.h"

/* --- The core, replaced (tests/support/core_double.h) ------------------- */

static ftc_lb_world_t *g_world;
static uint64_t g_progress_calls; /* of every fixture's contexts */

static uint64_t world_now(void *arg)
{
    (void)arg;
    return ftc_lb_now(g_world);
}

/* on_timer: a periodic timer, re-armed from inside timer_fired. */
static void rearm_1000_later(ftc_context_t *ctx)
{
    ftc_lb_ops()->timer_arm(ctx->ep, ftc_lb_now(g_world) + 1000);
}

/* on_recv: the loopback must refuse to run from inside a callback. */
static int g_nested_run_result;
static void try_nested_run(ftc_context_t *ctx, uint32_t src, const void *buf,
                           size_t len)
{
    g_nested_run_result = (int)ftc_lb_run(g_world, 10) + ftc_lb_step(g_world);
}

/* --- Harness ------------------------------------------------------------ */

typedef struct fixture {
    ftc_lb_world_t *w;
    struct ftc_context *ctx;
    uint32_t n;
} fixture_t;

static void fx_init(fixture_t *f, const ftc_lb_config_t *cfg)
{
    f->n = cfg->n;
    if (ftc_lb_world_create(cfg, &f->w) != FTC_OK)
        abort();
    f->ctx = calloc(f->n, sizeof(*f->ctx));
    if (f->ctx == NULL)
        abort();
    for (uint32_t r = 0; r < f->n; r++) {
        core_double_init(&f->ctx[r], r, ftc_lb_endpoint(f->w, r));
        ftc_lb_attach(f->w, r, &f->ctx[r]);
    }
    g_world = f->w;
    core_double_reset();
    core_double_clock(world_now, NULL);
}

static void fx_init_n(fixture_t *f, uint32_t n)
{
    ftc_lb_config_t cfg;
    ftc_lb_config_init(&cfg);
    cfg.n = n;
    fx_init(f, &cfg);
}

static void fx_fini(fixture_t *f)
{
    ftc_lb_world_destroy(f->w);
    for (uint32_t r = 0; r < f->n; r++)
        g_progress_calls += f->ctx[r].progress_calls;
    free(f->ctx);
    g_world = NULL;
}

/* Payload: source, sequence number, issue time, a free word. */
typedef struct payload {
    uint64_t src, seq, issued, extra;
} payload_t;

static int send_msg(fixture_t *f, uint32_t src, uint32_t dest, uint64_t seq,
                    void *cookie)
{
    payload_t p = {src, seq, ftc_lb_now(f->w), 0};
    return ftc_lb_ops()->send(f->ctx[src].ep, dest, &p, sizeof(p), cookie);
}

static payload_t rec_payload(const core_record_t *r)
{
    payload_t p;
    memcpy(&p, r->raw, sizeof(p));
    return p;
}

/* --- Tests -------------------------------------------------------------- */

static void test_config_and_create(void)
{
    ftc_lb_config_t cfg;
    ftc_lb_world_t *w = (ftc_lb_world_t *)&cfg;

    ftc_lb_config_init(&cfg);
    CHECK_EQ(cfg.n, 0);
    CHECK_EQ(cfg.latency_ns, 1000);
    CHECK_EQ(cfg.jitter_ns, 0);
    CHECK_EQ(cfg.send_cost_ns, 100);
    CHECK_EQ(cfg.detect_delay_ns, 50000);
    CHECK(cfg.drop_prob == 0.0 && cfg.corrupt_prob == 0.0);

    CHECK_EQ(ftc_lb_world_create(&cfg, &w), FTC_EINVAL);  /* n == 0 */
    CHECK(w == NULL);
    cfg.n = 4;
    CHECK_EQ(ftc_lb_world_create(NULL, &w), FTC_EINVAL);
    CHECK_EQ(ftc_lb_world_create(&cfg, NULL), FTC_EINVAL);
    cfg.drop_prob = 1.5;
    CHECK_EQ(ftc_lb_world_create(&cfg, &w), FTC_EINVAL);
    cfg.drop_prob = 0.0;
    cfg.corrupt_prob = NAN;
    CHECK_EQ(ftc_lb_world_create(&cfg, &w), FTC_EINVAL);
    cfg.corrupt_prob = -0.1;
    CHECK_EQ(ftc_lb_world_create(&cfg, &w), FTC_EINVAL);
    cfg.corrupt_prob = 0.0;
    cfg.n = 1u << 31;
    CHECK_EQ(ftc_lb_world_create(&cfg, &w), FTC_EINVAL);
    cfg.n = 4;
    CHECK_EQ(ftc_lb_world_create(&cfg, &w), FTC_OK);
    CHECK(w != NULL);
    CHECK(ftc_lb_endpoint(w, 3) != NULL);
    CHECK(ftc_lb_endpoint(w, 4) == NULL);
    CHECK(ftc_lb_endpoint(w, 0) != ftc_lb_endpoint(w, 1));
    CHECK_EQ(ftc_lb_now(w), 0);
    CHECK_EQ(ftc_lb_run(w, 100), 0);
    CHECK_EQ(ftc_lb_step(w), 0);
    ftc_lb_world_destroy(w);
    ftc_lb_world_destroy(NULL);

    const ftc_transport_ops_t *ops = ftc_lb_ops();
    CHECK_EQ(ops->size, sizeof(ftc_transport_ops_t));
    CHECK(ops->send && ops->timer_arm && ops->timer_cancel && ops->now);
    CHECK(ops->watch && ops->unwatch);
    CHECK(ops->progress == NULL);
}

static void test_send_basic(void)
{
    fixture_t f;
    fx_init_n(&f, 2);
    int cookie;

    CHECK_EQ(send_msg(&f, 0, 1, 42, &cookie), FTC_OK);
    CHECK_EQ(ftc_lb_messages_sent(f.w), 1);
    CHECK_EQ(core_nrecords, 0);               /* nothing before the world runs */
    CHECK_EQ(ftc_lb_run(f.w, 100), 2);
    CHECK_EQ(core_nrecords, 2);
    CHECK_EQ(core_records[0].kind, CORE_SEND_DONE);
    CHECK_EQ(core_records[0].rank, 0);
    CHECK_EQ(core_records[0].t, 100);
    CHECK(core_records[0].cookie == &cookie);
    CHECK_EQ(core_records[0].status, FTC_OK);
    CHECK_EQ(core_records[1].kind, CORE_RECV);
    CHECK_EQ(core_records[1].rank, 1);
    CHECK_EQ(core_records[1].a, 0);
    CHECK_EQ(core_records[1].t, 1000);
    CHECK_EQ(core_records[1].len, sizeof(payload_t));
    CHECK_EQ(rec_payload(&core_records[1]).seq, 42);
    CHECK_EQ(ftc_lb_now(f.w), 1000);

    /* The bytes were copied: the caller's buffer is not read later. */
    core_nrecords = 0;
    unsigned char buf[3] = {1, 2, 3};
    CHECK_EQ(ftc_lb_ops()->send(f.ctx[1].ep, 0, buf, 3, NULL), FTC_OK);
    buf[0] = 9;
    ftc_lb_run(f.w, 100);
    const core_record_t *r = core_double_find(CORE_RECV, 0, 0);
    CHECK(r != NULL && r->len == 3 && r->raw[0] == 1 && r->raw[2] == 3);
    CHECK(r != NULL && r->t == 2000);

    /* Zero-length message, self-send, bad destination. */
    core_nrecords = 0;
    CHECK_EQ(ftc_lb_ops()->send(f.ctx[0].ep, 0, NULL, 0, NULL), FTC_OK);
    CHECK_EQ(ftc_lb_ops()->send(f.ctx[0].ep, 2, buf, 3, NULL), FTC_EINVAL);
    CHECK_EQ(ftc_lb_messages_sent(f.w), 3);
    ftc_lb_run(f.w, 100);
    r = core_double_find(CORE_RECV, 0, 0);
    CHECK(r != NULL && r->len == 0 && r->a == 0);
    CHECK_EQ(ftc_lb_ops()->now(f.ctx[0].ep), ftc_lb_now(f.w));
    CHECK_EQ(g_progress_calls, 0);
    fx_fini(&f);
}

static void test_send_serialisation(void)
{
    fixture_t f;
    fx_init_n(&f, 3);
    int cookies[8];

    for (int i = 0; i < 5; i++)
        CHECK_EQ(send_msg(&f, 0, 1 + (uint32_t)(i % 2), (uint64_t)i,
                          &cookies[i]),
                 FTC_OK);
    CHECK_EQ(send_msg(&f, 1, 2, 0, &cookies[5]), FTC_OK);  /* independent */
    ftc_lb_run(f.w, 1000);
    CHECK_EQ(core_double_count(CORE_SEND_DONE, 0), 5);
    for (size_t i = 0; i < 5; i++) {
        const core_record_t *r = core_double_find(CORE_SEND_DONE, 0, i);
        CHECK(r != NULL && r->t == 100 * (i + 1) && r->cookie == &cookies[i]);
    }
    const core_record_t *r1 = core_double_find(CORE_SEND_DONE, 1, 0);
    CHECK(r1 != NULL && r1->t == 100);
    /* Arrival counts from the issue, not from the completion. */
    for (size_t i = 0; i < 3; i++) {
        const core_record_t *r = core_double_find(CORE_RECV, 1, i);
        CHECK(r != NULL && r->t == 1000);
    }

    /* An idle rank's next send completes cost after it is issued. */
    ftc_lb_run_until(f.w, 10000, 1000);
    CHECK_EQ(ftc_lb_now(f.w), 10000);
    core_nrecords = 0;
    send_msg(&f, 0, 1, 0, &cookies[6]);
    send_msg(&f, 0, 1, 1, &cookies[7]);
    ftc_lb_run(f.w, 1000);
    CHECK(core_double_find(CORE_SEND_DONE, 0, 0) && core_double_find(CORE_SEND_DONE, 0, 0)->t == 10100);
    CHECK(core_double_find(CORE_SEND_DONE, 0, 1) && core_double_find(CORE_SEND_DONE, 0, 1)->t == 10200);
    fx_fini(&f);

    /* send_cost 0: completion at once, still on a later turn. */
    ftc_lb_config_t cfg;
    ftc_lb_config_init(&cfg);
    cfg.n = 2;
    cfg.send_cost_ns = 0;
    fx_init(&f, &cfg);
    send_msg(&f, 0, 1, 0, NULL);
    CHECK_EQ(core_nrecords, 0);
    CHECK_EQ(ftc_lb_step(f.w), 1);
    CHECK(core_nrecords == 1 && core_records[0].kind == CORE_SEND_DONE && core_records[0].t == 0);
    fx_fini(&f);
}

static void test_fifo_under_jitter(void)
{
    ftc_lb_config_t cfg;
    ftc_lb_config_init(&cfg);
    cfg.n = 8;
    cfg.seed = 7;
    cfg.jitter_ns = 50000;
    fixture_t f;
    fx_init(&f, &cfg);

    uint64_t seq[8][8] = {{0}};
    for (int round = 0; round < 200; round++) {
        for (uint32_t s = 0; s < 8; s++)
            for (uint32_t d = 0; d < 8; d++)
                if (s != d)
                    send_msg(&f, s, d, seq[s][d]++, NULL);
        ftc_lb_run_until(f.w, ftc_lb_now(f.w) + 300, UINT64_MAX);
    }
    ftc_lb_run(f.w, UINT64_MAX);

    uint64_t expect[8][8] = {{0}};
    uint64_t ordered = 0, misordered = 0, min_lat = UINT64_MAX, max_lat = 0;
    uint64_t overtaken = 0;    /* a later issue arrived before an earlier */
    uint64_t last_issue[8] = {0};
    for (size_t i = 0; i < core_nrecords; i++) {
        const core_record_t *r = &core_records[i];
        if (r->kind != CORE_RECV)
            continue;
        payload_t p = rec_payload(r);
        if (p.seq == expect[p.src][r->rank]++)
            ordered++;
        else
            misordered++;
        uint64_t lat = r->t - p.issued;
        min_lat = lat < min_lat ? lat : min_lat;
        max_lat = lat > max_lat ? lat : max_lat;
        if (p.issued < last_issue[r->rank])
            overtaken++;
        last_issue[r->rank] = p.issued;
    }
    CHECK_EQ(ordered, 200 * 56);
    CHECK_EQ(misordered, 0);
    CHECK(min_lat >= 1000);
    CHECK(max_lat > 30000);     /* jitter acted ... */
    CHECK(overtaken > 100);     /* ... and reordered across pairs */
    fx_fini(&f);
}

/* A small world where receivers forward messages: sends from callbacks,
 * all kinds of events, every random feature. Returns a hash of the trace. */
static uint64_t g_scenario_sends;

static void forward_on_recv(struct ftc_context *c, uint32_t src,
                            const void *buf, size_t len)
{
    payload_t p;
    if (len != sizeof(p))
        return;
    memcpy(&p, buf, sizeof(p));
    if (p.extra >= 4)
        return;
    p.extra++;
    uint32_t n = 16;
    uint32_t dest = (uint32_t)((c->rank * 7 + p.seq + p.extra) % n);
    g_scenario_sends++;
    ftc_lb_ops()->send(c->ep, dest, &p, sizeof(p), NULL);
    if (p.seq % 5 == 0)
        ftc_lb_ops()->timer_arm(c->ep, ftc_lb_now(g_world) + 700 * p.extra);
}

static uint64_t run_scenario(uint64_t seed, uint64_t jitter, double drop,
                             double corrupt, size_t *nrecs)
{
    ftc_lb_config_t cfg;
    ftc_lb_config_init(&cfg);
    cfg.n = 16;
    cfg.seed = seed;
    cfg.jitter_ns = jitter;
    cfg.drop_prob = drop;
    cfg.corrupt_prob = corrupt;
    cfg.detect_delay_ns = 3000;
    fixture_t f;
    fx_init(&f, &cfg);
    for (uint32_t r = 0; r < 16; r++)
        f.ctx[r].on_recv = forward_on_recv;

    ftc_lb_ops()->watch(f.ctx[0].ep, 5);
    ftc_lb_ops()->watch(f.ctx[1].ep, 5);
    ftc_lb_crash_at(f.w, 5, 2500);
    ftc_lb_crash_after_sends(f.w, 9, 6);
    for (uint32_t r = 0; r < 16; r++)
        for (uint64_t k = 0; k < 8; k++)
            send_msg(&f, r, (uint32_t)((r + k + 1) % 16), k, NULL);
    ftc_lb_run(f.w, UINT64_MAX);

    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < core_nrecords; i++) {
        const core_record_t *r = &core_records[i];
        uint64_t v[6] = {(uint64_t)r->kind, r->rank, r->t, r->a, r->len,
                         r->hash};
        h = (h ^ core_double_hash(v, sizeof(v))) * 0x100000001b3ULL;
    }
    *nrecs = core_nrecords;
    fx_fini(&f);
    return h;
}

static void test_determinism(void)
{
    size_t n1, n2, n3, n4, n5;
    uint64_t a = run_scenario(1, 5000, 0.05, 0.05, &n1);
    uint64_t b = run_scenario(1, 5000, 0.05, 0.05, &n2);
    uint64_t c = run_scenario(2, 5000, 0.05, 0.05, &n3);
    CHECK(n1 > 500);
    CHECK_EQ(a, b);
    CHECK_EQ(n1, n2);
    CHECK(a != c);

    /* Without random features the seed does not matter. */
    uint64_t d = run_scenario(1, 0, 0, 0, &n4);
    uint64_t e = run_scenario(99, 0, 0, 0, &n5);
    CHECK_EQ(d, e);
    CHECK_EQ(n4, n5);
    /* Jitter alone changes the trace with the seed. */
    CHECK(run_scenario(3, 2000, 0, 0, &n4) != run_scenario(4, 2000, 0, 0, &n5));
}

static void test_timers(void)
{
    fixture_t f;
    fx_init_n(&f, 2);
    const ftc_transport_ops_t *ops = ftc_lb_ops();
    void *ep = f.ctx[0].ep;

    /* Re-arming earlier replaces; the stale entry is not handled. */
    ops->timer_arm(ep, 5000);
    ops->timer_arm(ep, 3000);
    CHECK_EQ(ftc_lb_run(f.w, 100), 1);
    CHECK(core_nrecords == 1 && core_records[0].kind == CORE_TIMER && core_records[0].t == 3000);
    CHECK_EQ(ftc_lb_now(f.w), 3000);    /* the stale entry moved no clock */

    /* Re-arming later replaces too. */
    core_nrecords = 0;
    ops->timer_arm(ep, 4000);
    ops->timer_arm(ep, 8000);
    ftc_lb_run(f.w, 100);
    CHECK(core_nrecords == 1 && core_records[0].t == 8000);

    /* Cancel; cancel then arm. */
    core_nrecords = 0;
    ops->timer_arm(ep, 9000);
    ops->timer_cancel(ep);
    CHECK_EQ(ftc_lb_run(f.w, 100), 0);
    CHECK_EQ(core_nrecords, 0);
    ops->timer_cancel(ep);
    ops->timer_arm(ep, 9500);
    ftc_lb_run(f.w, 100);
    CHECK(core_nrecords == 1 && core_records[0].t == 9500);

    /* Same deadline twice: one wake-up. A deadline in the past: now. */
    core_nrecords = 0;
    ops->timer_arm(ep, 12000);
    ops->timer_arm(ep, 12000);
    ftc_lb_run(f.w, 100);
    CHECK(core_nrecords == 1 && core_records[0].t == 12000);
    core_nrecords = 0;
    ops->timer_arm(ep, 5);
    CHECK_EQ(core_nrecords, 0);               /* never from inside the op */
    ftc_lb_run(f.w, 100);
    CHECK(core_nrecords == 1 && core_records[0].t == 12000);

    /* Fired timers are disarmed: a cancel after firing is harmless, and
     * arm-fire-arm works. Re-arm from inside timer_fired: periodic. */
    core_nrecords = 0;
    f.ctx[0].on_timer = rearm_1000_later;
    ops->timer_arm(ep, 13000);
    CHECK_EQ(ftc_lb_run(f.w, 5), 5);
    CHECK_EQ(core_nrecords, 5);
    for (size_t i = 0; i < 5 && i < core_nrecords; i++)
        CHECK_EQ(core_records[i].t, 13000 + 1000 * i);
    f.ctx[0].on_timer = NULL;
    ftc_lb_run(f.w, 100);
    CHECK_EQ(core_nrecords, 6);

    /* Timers of two ranks are independent. */
    core_nrecords = 0;
    ops->timer_arm(f.ctx[0].ep, 30000);
    ops->timer_arm(f.ctx[1].ep, 30000);
    ops->timer_cancel(f.ctx[0].ep);
    ftc_lb_run(f.w, 100);
    CHECK(core_nrecords == 1 && core_records[0].rank == 1);

    /* Many re-arms leave one wake-up. */
    core_nrecords = 0;
    for (uint64_t i = 0; i < 1000; i++)
        ops->timer_arm(ep, 40000 + (i * 7919) % 5000);
    CHECK_EQ(ftc_lb_run(f.w, UINT64_MAX), 1);
    CHECK(core_nrecords == 1 && core_records[0].t == 40000 + (999 * 7919) % 5000);

    /* A crashed rank's timer never fires, armed before or after. */
    core_nrecords = 0;
    ops->timer_arm(ep, 50000);
    ftc_lb_crash(f.w, 0);
    ops->timer_arm(ep, 50001);
    ops->timer_cancel(ep);
    ops->timer_arm(ep, 50002);
    CHECK_EQ(ftc_lb_run(f.w, 100), 0);
    CHECK_EQ(core_nrecords, 0);
    fx_fini(&f);
}

/* Moot entries move no clock, and what is scheduled after them is due at
 * its own time even when that is before theirs: the event queue must not
 * have moved on to the moot entries' time. An event due at the largest
 * time is an event like any other. */
static void test_moot_entries_and_the_clock(void)
{
    fixture_t f;
    fx_init_n(&f, 2);
    const ftc_transport_ops_t *ops = ftc_lb_ops();
    void *ep = f.ctx[0].ep;

    ops->timer_arm(ep, 9000);
    ops->timer_arm(ep, 2000);           /* the entry at 9000 is moot */
    CHECK_EQ(ftc_lb_run(f.w, UINT64_MAX), 1);
    CHECK_EQ(ftc_lb_now(f.w), 2000);

    core_nrecords = 0;
    ops->timer_arm(ep, 4000);
    send_msg(&f, 1, 0, 0, NULL);        /* done 2100, arrives 3000 */
    CHECK_EQ(ftc_lb_run(f.w, UINT64_MAX), 3);
    CHECK_EQ(core_nrecords, 3);
    if (core_nrecords == 3) {
        CHECK(core_records[0].kind == CORE_SEND_DONE && core_records[0].t == 2100);
        CHECK(core_records[1].kind == CORE_RECV && core_records[1].t == 3000);
        CHECK(core_records[2].kind == CORE_TIMER && core_records[2].t == 4000);
    }

    core_nrecords = 0;
    ops->timer_arm(ep, UINT64_MAX);
    CHECK_EQ(ftc_lb_run(f.w, UINT64_MAX), 1);
    CHECK(core_nrecords == 1 && core_records[0].kind == CORE_TIMER);
    CHECK_EQ(ftc_lb_now(f.w), UINT64_MAX);
    fx_fini(&f);
}

static void test_run_step_until(void)
{
    fixture_t f;
    fx_init_n(&f, 3);
    send_msg(&f, 0, 1, 0, NULL);        /* done 100, arrives 1000 */
    ftc_lb_ops()->timer_arm(f.ctx[2].ep, 3000);
    CHECK_EQ(ftc_lb_run_until(f.w, 2000, UINT64_MAX), 2);
    CHECK_EQ(ftc_lb_now(f.w), 2000);
    CHECK_EQ(ftc_lb_run_until(f.w, 1500, UINT64_MAX), 0);
    CHECK_EQ(ftc_lb_now(f.w), 2000);    /* time never goes back */
    CHECK_EQ(ftc_lb_step(f.w), 1);
    CHECK_EQ(ftc_lb_now(f.w), 3000);
    CHECK_EQ(ftc_lb_step(f.w), 0);

    /* max_events stops run_until before t: the clock stays put. */
    send_msg(&f, 0, 1, 1, NULL);
    send_msg(&f, 0, 2, 2, NULL);
    CHECK_EQ(ftc_lb_run_until(f.w, 10000, 1), 1);
    CHECK_EQ(ftc_lb_now(f.w), 3100);
    CHECK_EQ(ftc_lb_run(f.w, UINT64_MAX), 3);

    /* No nested runs from inside a callback. */
    f.ctx[1].on_recv = try_nested_run;
    g_nested_run_result = -1;
    send_msg(&f, 0, 1, 3, NULL);
    send_msg(&f, 0, 1, 4, NULL);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(g_nested_run_result, 0);
    CHECK_EQ(core_double_count(CORE_RECV, 1), 4);

    ftc_lb_stats_t st;
    ftc_lb_stats(f.w, &st);
    CHECK_EQ(st.events, 2 + 1 + 4 + 4);
    CHECK_EQ(st.messages_sent, 5);
    CHECK_EQ(st.messages_delivered, 5);
    fx_fini(&f);
}

static void test_crash_semantics(void)
{
    const ftc_transport_ops_t *ops = ftc_lb_ops();
    fixture_t f;
    fx_init_n(&f, 4);
    ftc_lb_stats_t st;

    /* Destination crashes while the message is in flight: dropped. The
     * sender still gets its completion (it does not mean delivery). */
    send_msg(&f, 0, 1, 0, NULL);
    ftc_lb_run_until(f.w, 500, UINT64_MAX);
    ftc_lb_crash(f.w, 1);
    CHECK(ftc_lb_is_crashed(f.w, 1));
    CHECK(!ftc_lb_is_crashed(f.w, 0));
    CHECK(!ftc_lb_is_crashed(f.w, 99));
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_double_count(CORE_RECV, 1), 0);
    CHECK_EQ(core_double_count(CORE_SEND_DONE, 0), 1);
    ftc_lb_stats(f.w, &st);
    CHECK_EQ(st.dropped_dead, 1);

    /* Sender crashes right after sending: the message left, it arrives;
     * the dead sender gets no completion. */
    core_nrecords = 0;
    send_msg(&f, 2, 3, 7, NULL);
    ftc_lb_crash(f.w, 2);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_double_count(CORE_RECV, 3), 1);
    CHECK_EQ(core_double_count(CORE_SEND_DONE, 2), 0);
    CHECK_EQ(core_nrecords, 1);

    /* A crashed rank's sends go nowhere and are not counted; its other ops
     * are harmless. */
    core_nrecords = 0;
    uint64_t sent = ftc_lb_messages_sent(f.w);
    CHECK_EQ(send_msg(&f, 2, 3, 8, NULL), FTC_SEND_INLINE);
    CHECK_EQ(send_msg(&f, 1, 0, 8, NULL), FTC_SEND_INLINE);
    CHECK_EQ(ftc_lb_messages_sent(f.w), sent);
    CHECK_EQ(ftc_lb_rank_messages_sent(f.w, 2), 1);
    ops->watch(f.ctx[2].ep, 1);
    ops->unwatch(f.ctx[2].ep, 1);
    ops->watch(f.ctx[2].ep, 0);
    ops->timer_arm(f.ctx[2].ep, 0);
    ops->timer_cancel(f.ctx[2].ep);
    CHECK_EQ(ops->now(f.ctx[2].ep), ftc_lb_now(f.w));
    ftc_lb_inject(f.w, 2, 0, "x", 1, 0);
    ftc_lb_crash(f.w, 2);                  /* again: no-op */
    ftc_lb_crash_after_sends(f.w, 2, 1);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_nrecords, 0);

    /* Scheduled crash at 150, between rank 0's two completions (100, 200).
     * A timer due at 150 but armed after the crash was scheduled comes
     * after it, so it never fires. Both messages had left: they arrive. */
    fx_fini(&f);
    fx_init_n(&f, 4);
    ftc_lb_crash_at(f.w, 0, 150);
    send_msg(&f, 0, 1, 0, NULL);       /* done at 100 */
    send_msg(&f, 0, 1, 1, NULL);       /* done at 200: lost to the crash */
    ops->timer_arm(f.ctx[0].ep, 150);  /* same time as the crash, later */
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK(ftc_lb_is_crashed(f.w, 0));
    CHECK_EQ(core_double_count(CORE_SEND_DONE, 0), 1);
    CHECK_EQ(core_double_count(CORE_TIMER, 0), 0);
    CHECK_EQ(core_double_count(CORE_RECV, 1), 2);
    /* crash_at in the past means now. */
    ftc_lb_crash_at(f.w, 3, 10);
    CHECK_EQ(ftc_lb_step(f.w), 1);
    CHECK(ftc_lb_is_crashed(f.w, 3));
    CHECK_EQ(ftc_lb_now(f.w), 1000);
    fx_fini(&f);
}

static void test_crash_after_sends(void)
{
    for (uint64_t k = 1; k <= 3; k++) {
        fixture_t f;
        fx_init_n(&f, 7);
        /* Sends before the call do not count towards k. */
        CHECK_EQ(send_msg(&f, 0, 6, 99, NULL), FTC_OK);
        ftc_lb_crash_after_sends(f.w, 0, k);
        CHECK(!ftc_lb_is_crashed(f.w, 0));
        for (uint32_t d = 1; d <= 5; d++) {
            int rc = send_msg(&f, 0, d, d, NULL);
            CHECK_EQ(rc, d < k ? FTC_OK : FTC_SEND_INLINE);
        }
        CHECK(ftc_lb_is_crashed(f.w, 0));
        CHECK_EQ(ftc_lb_rank_messages_sent(f.w, 0), 1 + k);
        CHECK_EQ(ftc_lb_messages_sent(f.w), 1 + k);
        ftc_lb_run(f.w, UINT64_MAX);
        CHECK_EQ(core_double_count(CORE_RECV, 6), 1);
        for (uint32_t d = 1; d <= 5; d++)
            CHECK_EQ(core_double_count(CORE_RECV, d), d <= k ? 1 : 0);
        CHECK_EQ(core_double_count(CORE_SEND_DONE, 0), 0);
        fx_fini(&f);
    }

    /* Crashing from inside a callback: rank 0 echoes, dies at its 2nd. */
    fixture_t f;
    fx_init_n(&f, 2);
    f.ctx[0].on_recv = forward_on_recv;   /* forwards to (0*7+seq+1)%16 */
    ftc_lb_crash_after_sends(f.w, 0, 2);
    /* forward_on_recv sends to (seq + 1) % 16 here: seq 0, 16, 32 all
     * forward to rank 1. */
    for (uint64_t s = 0; s < 3; s++) {
        payload_t p = {1, 16 * s, 0, 0};
        ftc_lb_ops()->send(f.ctx[1].ep, 0, &p, sizeof(p), NULL);
    }
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_double_count(CORE_RECV, 0), 2);   /* the third found it dead */
    CHECK_EQ(core_double_count(CORE_RECV, 1), 2);
    CHECK_EQ(ftc_lb_rank_messages_sent(f.w, 0), 2);
    fx_fini(&f);
}

/* A deaf rank hears nothing from the point it went deaf, keeps sending,
 * and is heard; nobody is told. */
static void test_deafen(void)
{
    for (uint64_t k = 0; k <= 3; k++) {
        fixture_t f;
        fx_init_n(&f, 7);
        CHECK_EQ(send_msg(&f, 0, 6, 99, NULL), FTC_OK);
        ftc_lb_run(f.w, UINT64_MAX);
        CHECK_EQ(core_double_count(CORE_RECV, 6), 1); /* before: heard */
        ftc_lb_deafen_after_sends(f.w, 0, k);
        CHECK_EQ(ftc_lb_is_deaf(f.w, 0), k == 0);
        /* Rank 0 sends to 1..5; after each, rank 6 sends to rank 0. */
        for (uint32_t d = 1; d <= 5; d++) {
            CHECK_EQ(send_msg(&f, 0, d, d, NULL), FTC_OK);
            CHECK_EQ(send_msg(&f, 6, 0, 100 + d, NULL), FTC_OK);
            ftc_lb_run(f.w, UINT64_MAX);
        }
        CHECK(ftc_lb_is_deaf(f.w, 0));
        CHECK(!ftc_lb_is_crashed(f.w, 0));
        /* Everybody still hears the deaf rank, its sends complete. */
        for (uint32_t d = 1; d <= 5; d++)
            CHECK_EQ(core_double_count(CORE_RECV, d), 1);
        CHECK_EQ(core_double_count(CORE_SEND_DONE, 0), 6);
        /* It heard rank 6 only while its k-th send had not gone out. */
        uint64_t heard = k == 0 ? 0 : k - 1;
        CHECK_EQ(core_double_count(CORE_RECV, 0), heard);
        ftc_lb_stats_t st;
        ftc_lb_stats(f.w, &st);
        CHECK_EQ(st.dropped_deaf, 5 - heard);
        CHECK_EQ(st.peer_failed_reports, 0);
        fx_fini(&f);
    }

    /* A message in flight when the rank goes deaf is dropped too; a rank
     * nobody deafened is unaffected; bad arguments are ignored. */
    fixture_t f;
    fx_init_n(&f, 3);
    CHECK_EQ(send_msg(&f, 1, 0, 1, NULL), FTC_OK);
    ftc_lb_deafen(f.w, 0);
    ftc_lb_deafen(f.w, 3);
    ftc_lb_deafen(NULL, 0);
    CHECK(!ftc_lb_is_deaf(f.w, 3));
    CHECK(!ftc_lb_is_deaf(NULL, 0));
    CHECK_EQ(send_msg(&f, 0, 2, 2, NULL), FTC_OK);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_double_count(CORE_RECV, 0), 0);
    CHECK_EQ(core_double_count(CORE_RECV, 2), 1);
    CHECK(!ftc_lb_is_deaf(f.w, 1));
    fx_fini(&f);
}

/* ftc_lb_last_arrival names the message the last event handed to a core,
 * and nothing after an event that handed none. */
static void test_last_arrival(void)
{
    fixture_t f;
    fx_init_n(&f, 4);
    uint32_t src = 99, dest = 99;
    CHECK_EQ(ftc_lb_last_arrival(f.w, &src, &dest), 0);
    CHECK_EQ(ftc_lb_last_arrival(NULL, &src, &dest), 0);
    CHECK_EQ(send_msg(&f, 2, 3, 1, NULL), FTC_OK);
    int arrivals = 0, others = 0;
    while (ftc_lb_step(f.w)) {
        if (ftc_lb_last_arrival(f.w, &src, &dest)) {
            arrivals++;
            CHECK_EQ(src, 2);
            CHECK_EQ(dest, 3);
        } else {
            others++;   /* the send's completion */
        }
    }
    CHECK_EQ(arrivals, 1);
    CHECK_EQ(others, 1);
    fx_fini(&f);
}

static void test_peer_failed(void)
{
    const ftc_transport_ops_t *ops = ftc_lb_ops();
    fixture_t f;

    /* Crash while watched: crash time + detect delay, watchers only. */
    fx_init_n(&f, 4);
    ops->watch(f.ctx[0].ep, 1);
    ops->watch(f.ctx[2].ep, 1);
    ops->watch(f.ctx[3].ep, 2);
    ftc_lb_run_until(f.w, 1000, UINT64_MAX);
    ftc_lb_crash(f.w, 1);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_nrecords, 2);
    const core_record_t *r = core_double_find(CORE_PEER_FAILED, 0, 0);
    CHECK(r != NULL && r->a == 1 && r->t == 51000);
    r = core_double_find(CORE_PEER_FAILED, 2, 0);
    CHECK(r != NULL && r->a == 1 && r->t == 51000);
    CHECK_EQ(core_double_count(CORE_PEER_FAILED, 3), 0);
    fx_fini(&f);

    /* Watch after the crash: at crash + delay, or at the watch if later. */
    fx_init_n(&f, 4);
    ftc_lb_crash(f.w, 1);
    ftc_lb_run_until(f.w, 10000, UINT64_MAX);
    ops->watch(f.ctx[0].ep, 1);
    ftc_lb_run_until(f.w, 100000, UINT64_MAX);
    ops->watch(f.ctx[2].ep, 1);
    ftc_lb_run(f.w, UINT64_MAX);
    r = core_double_find(CORE_PEER_FAILED, 0, 0);
    CHECK(r != NULL && r->t == 50000);
    r = core_double_find(CORE_PEER_FAILED, 2, 0);
    CHECK(r != NULL && r->t == 100000);
    CHECK_EQ(core_nrecords, 2);
    fx_fini(&f);

    /* Unwatch before the report: none. Unwatch and watch again: exactly
     * one, for the new watch. A crashed watcher: none. */
    fx_init_n(&f, 5);
    ops->watch(f.ctx[0].ep, 1);
    ops->watch(f.ctx[2].ep, 1);
    ops->watch(f.ctx[3].ep, 1);
    ops->watch(f.ctx[3].ep, 1);           /* nesting is ignored */
    ftc_lb_crash(f.w, 1);
    ftc_lb_run_until(f.w, 20000, UINT64_MAX);
    ops->unwatch(f.ctx[0].ep, 1);
    ops->unwatch(f.ctx[2].ep, 1);
    ops->watch(f.ctx[2].ep, 1);
    ftc_lb_crash(f.w, 3);
    ops->unwatch(f.ctx[4].ep, 1);         /* never watched: harmless */
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_nrecords, 1);
    r = core_double_find(CORE_PEER_FAILED, 2, 0);
    CHECK(r != NULL && r->a == 1 && r->t == 50000);
    fx_fini(&f);

    /* Detection disabled. */
    ftc_lb_config_t cfg;
    ftc_lb_config_init(&cfg);
    cfg.n = 3;
    cfg.detect_delay_ns = UINT64_MAX;
    fx_init(&f, &cfg);
    ops->watch(f.ctx[0].ep, 1);
    ftc_lb_crash(f.w, 1);
    ftc_lb_crash(f.w, 2);
    ops->watch(f.ctx[0].ep, 2);
    CHECK_EQ(ftc_lb_run(f.w, UINT64_MAX), 0);
    CHECK_EQ(core_nrecords, 0);
    fx_fini(&f);

    /* Detect delay 0: reported on the next turn, not inside the crash. */
    cfg.detect_delay_ns = 0;
    fx_init(&f, &cfg);
    ops->watch(f.ctx[0].ep, 1);
    ftc_lb_crash(f.w, 1);
    CHECK_EQ(core_nrecords, 0);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK(core_nrecords == 1 && core_records[0].t == 0);
    fx_fini(&f);

    /* A delay per watcher: each is told at its own time, the world's
     * delay stays for the others, UINT64_MAX silences one watcher, and a
     * watch after the crash uses the watcher's delay too. */
    fx_init_n(&f, 5);
    ftc_lb_set_detect_delay(f.w, 0, 7000);
    ftc_lb_set_detect_delay(f.w, 2, 90000);
    ftc_lb_set_detect_delay(f.w, 3, UINT64_MAX);
    ftc_lb_set_detect_delay(f.w, 99, 1);      /* no such rank: ignored */
    ftc_lb_set_detect_delay(NULL, 0, 1);      /* harmless */
    ops->watch(f.ctx[0].ep, 1);
    ops->watch(f.ctx[2].ep, 1);
    ops->watch(f.ctx[3].ep, 1);
    ftc_lb_crash(f.w, 1);
    ftc_lb_run_until(f.w, 20000, UINT64_MAX);
    ops->watch(f.ctx[4].ep, 1);
    ftc_lb_run(f.w, UINT64_MAX);
    r = core_double_find(CORE_PEER_FAILED, 0, 0);
    CHECK(r != NULL && r->a == 1 && r->t == 7000);
    r = core_double_find(CORE_PEER_FAILED, 2, 0);
    CHECK(r != NULL && r->a == 1 && r->t == 90000);
    CHECK_EQ(core_double_count(CORE_PEER_FAILED, 3), 0);
    r = core_double_find(CORE_PEER_FAILED, 4, 0);
    CHECK(r != NULL && r->a == 1 && r->t == 50000);
    CHECK_EQ(core_nrecords, 3);
    fx_fini(&f);
}

/* Watch churn against a model: the pool, the per-peer lists and the map
 * must agree after many watches and unwatches. */
static void test_watch_churn(void)
{
    enum { N = 40 };
    static unsigned char watched[N][N];
    const ftc_transport_ops_t *ops = ftc_lb_ops();
    fixture_t f;
    fx_init_n(&f, N);
    memset(watched, 0, sizeof(watched));

    uint64_t x = 12345;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t a = (uint32_t)(x % N), b = (uint32_t)((x >> 20) % N);
        if (a == b)
            continue;
        if (watched[a][b])
            ops->unwatch(f.ctx[a].ep, b);
        else
            ops->watch(f.ctx[a].ep, b);
        watched[a][b] ^= 1;
    }
    /* Crash the first 10 ranks; expect one report per live watcher. */
    uint64_t expected = 0;
    for (uint32_t p = 0; p < 10; p++)
        for (uint32_t a = 10; a < N; a++)
            expected += watched[a][p];
    for (uint32_t p = 0; p < 10; p++)
        ftc_lb_crash(f.w, p);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_nrecords, expected);
    uint64_t good = 0;
    for (size_t i = 0; i < core_nrecords; i++)
        if (core_records[i].kind == CORE_PEER_FAILED && core_records[i].a < 10 &&
            core_records[i].rank >= 10 && watched[core_records[i].rank][core_records[i].a])
            good++;
    CHECK_EQ(good, expected);
    CHECK(expected > 50);
    fx_fini(&f);
}

static void test_drop_and_corrupt(void)
{
    enum { M = 100000 };
    ftc_lb_config_t cfg;
    ftc_lb_config_init(&cfg);
    cfg.n = 2;
    cfg.seed = 5;
    cfg.drop_prob = 0.1;
    cfg.send_cost_ns = 0;
    fixture_t f;
    uint64_t got[2], hash[2];

    for (int run = 0; run < 2; run++) {
        fx_init(&f, &cfg);
        for (uint64_t i = 0; i < M; i++)
            send_msg(&f, 0, 1, i, NULL);
        ftc_lb_run(f.w, UINT64_MAX);
        got[run] = 0;
        hash[run] = 0;
        uint64_t last = 0, inorder = 1;
        for (size_t i = 0; i < core_nrecords; i++) {
            if (core_records[i].kind != CORE_RECV)
                continue;
            uint64_t s = rec_payload(&core_records[i]).seq;
            if (got[run] > 0 && s <= last)
                inorder = 0;
            last = s;
            got[run]++;
            hash[run] = hash[run] * 31 + s;
        }
        CHECK(inorder);
        ftc_lb_stats_t st;
        ftc_lb_stats(f.w, &st);
        CHECK_EQ(st.dropped_random + st.messages_delivered, M);
        CHECK_EQ(ftc_lb_messages_sent(f.w), M);
        CHECK_EQ(core_double_count(CORE_SEND_DONE, 0), M);  /* completion != delivery */
        fx_fini(&f);
    }
    CHECK(got[0] > 88500 && got[0] < 91500);
    CHECK_EQ(got[0], got[1]);
    CHECK_EQ(hash[0], hash[1]);

    /* Corruption: exactly one bit, in about 20% of the messages, on all
     * bit positions. */
    enum { C = 20000 };
    cfg.drop_prob = 0.0;
    cfg.corrupt_prob = 0.2;
    fx_init(&f, &cfg);
    unsigned char msg[16];
    for (int i = 0; i < 16; i++)
        msg[i] = (unsigned char)(0xa5 ^ i);
    for (int i = 0; i < C; i++)
        ftc_lb_ops()->send(f.ctx[0].ep, 1, msg, sizeof(msg), NULL);
    ftc_lb_run(f.w, UINT64_MAX);
    uint64_t corrupted = 0, one_bit = 0;
    unsigned char seen_bits[128] = {0};
    for (size_t i = 0; i < core_nrecords; i++) {
        if (core_records[i].kind != CORE_RECV)
            continue;
        int flips = 0, pos = -1;
        for (int b = 0; b < 128; b++)
            if ((core_records[i].raw[b / 8] ^ msg[b / 8]) >> (b % 8) & 1)
                flips++, pos = b;
        if (flips > 0)
            corrupted++;
        if (flips == 1) {
            one_bit++;
            seen_bits[pos] = 1;
        }
    }
    ftc_lb_stats_t st;
    ftc_lb_stats(f.w, &st);
    CHECK_EQ(core_double_count(CORE_RECV, 1), C);
    CHECK_EQ(corrupted, one_bit);
    CHECK_EQ(st.corrupted, corrupted);
    CHECK(corrupted > C * 18 / 100 && corrupted < C * 22 / 100);
    int all_bits = 1;
    for (int b = 0; b < 128; b++)
        all_bits &= seen_bits[b];
    CHECK(all_bits);
    fx_fini(&f);

    /* Certain loss. */
    cfg.corrupt_prob = 0.0;
    cfg.drop_prob = 1.0;
    fx_init(&f, &cfg);
    for (int i = 0; i < 100; i++)
        send_msg(&f, 0, 1, (uint64_t)i, NULL);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_double_count(CORE_RECV, 1), 0);
    fx_fini(&f);
}

static void test_inject(void)
{
    fixture_t f;
    fx_init_n(&f, 3);
    const unsigned char junk[5] = {0xde, 0xad, 0xbe, 0xef, 0x00};

    ftc_lb_inject(f.w, 1, 2, junk, sizeof(junk), 5000);
    ftc_lb_inject(f.w, 1, FTC_RANK_UNKNOWN, junk, 2, 3000);
    ftc_lb_inject(f.w, 0, 1, NULL, 0, 7000);
    ftc_lb_inject(f.w, 5, 1, junk, 1, 0);            /* no such rank */
    CHECK_EQ(ftc_lb_messages_sent(f.w), 0);
    f.ctx[1].recv_rc = FTC_EFOREIGN;
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK_EQ(core_nrecords, 3);
    const core_record_t *r = core_double_find(CORE_RECV, 1, 0);
    CHECK(r != NULL && r->t == 3000 && r->a == FTC_RANK_UNKNOWN &&
          r->len == 2 && memcmp(r->raw, junk, 2) == 0);
    r = core_double_find(CORE_RECV, 1, 1);
    CHECK(r != NULL && r->t == 5000 && r->a == 2 && r->len == 5 &&
          memcmp(r->raw, junk, 5) == 0);
    r = core_double_find(CORE_RECV, 0, 0);
    CHECK(r != NULL && r->t == 7000 && r->len == 0);

    /* In the past: delivered now. To a crashed rank: dropped. */
    ftc_lb_inject(f.w, 0, 1, junk, 1, 10);
    ftc_lb_crash(f.w, 2);
    ftc_lb_inject(f.w, 2, 1, junk, 1, 8000);
    ftc_lb_run(f.w, UINT64_MAX);
    r = core_double_find(CORE_RECV, 0, 1);
    CHECK(r != NULL && r->t == 7000);
    CHECK_EQ(core_double_count(CORE_RECV, 2), 0);

    ftc_lb_stats_t st;
    ftc_lb_stats(f.w, &st);
    CHECK_EQ(st.messages_injected, 5);
    CHECK_EQ(st.messages_delivered, 4);
    CHECK_EQ(st.messages_rejected, 2);
    CHECK_EQ(st.dropped_dead, 1);
    fx_fini(&f);
}

static void test_delay_and_unattached(void)
{
    fixture_t f;
    fx_init_n(&f, 3);

    ftc_lb_set_delay(f.w, 0, 5000);
    send_msg(&f, 0, 1, 0, NULL);
    send_msg(&f, 1, 2, 0, NULL);
    ftc_lb_run(f.w, UINT64_MAX);
    CHECK(core_double_find(CORE_RECV, 1, 0) && core_double_find(CORE_RECV, 1, 0)->t == 6000);
    CHECK(core_double_find(CORE_RECV, 2, 0) && core_double_find(CORE_RECV, 2, 0)->t == 1000);

    /* A faster message does not overtake a slower one on the same pair. */
    core_nrecords = 0;
    ftc_lb_set_delay(f.w, 0, 10000);
    send_msg(&f, 0, 1, 1, NULL);
    ftc_lb_set_delay(f.w, 0, 0);
    send_msg(&f, 0, 1, 2, NULL);
    send_msg(&f, 0, 2, 3, NULL);        /* another pair: not held back */
    ftc_lb_run(f.w, UINT64_MAX);
    const core_record_t *a = core_double_find(CORE_RECV, 1, 0), *b = core_double_find(CORE_RECV, 1, 1);
    CHECK(a && b && rec_payload(a).seq == 1 && rec_payload(b).seq == 2);
    CHECK(a && b && a->t == 17000 && b->t == 17000);
    CHECK(core_double_find(CORE_RECV, 2, 0) && core_double_find(CORE_RECV, 2, 0)->t == 7000);

    /* A detached rank is absent: its events are dropped and counted. */
    core_nrecords = 0;
    ftc_lb_attach(f.w, 2, NULL);
    send_msg(&f, 0, 2, 0, NULL);
    send_msg(&f, 2, 0, 0, NULL);
    ftc_lb_run(f.w, UINT64_MAX);
    ftc_lb_stats_t st;
    ftc_lb_stats(f.w, &st);
    CHECK_EQ(st.dropped_unattached, 2);   /* the message, the completion */
    CHECK_EQ(core_double_count(CORE_RECV, 0), 1);
    CHECK_EQ(core_double_count(CORE_RECV, 2), 0);
    fx_fini(&f);
}

/* Message buffers are reused (backends/loopback/msg_pool.h): every size,
 * from empty to larger than the largest class, arrives intact, also when
 * its buffer held a longer message before; and a message whose buffer is
 * dropped (loss, a dead or deaf receiver) frees it for the next. */
static void test_buffer_reuse(void)
{
    static const size_t lens[] = {0, 1, 63, 64, 65, 1000, 65536, 65537,
                                  200000};
    enum { NLENS = sizeof(lens) / sizeof(lens[0]), ROUNDS = 3 };
    unsigned char *buf = malloc(200000);
    if (buf == NULL)
        abort();
    fixture_t f;
    fx_init_n(&f, 2);
    for (int round = 0; round < ROUNDS; round++) {
        core_nrecords = 0;
        /* Longest first in the later rounds: short messages then get
         * buffers that held long ones. */
        for (size_t k = 0; k < NLENS; k++) {
            size_t len = lens[round == 0 ? k : NLENS - 1 - k];
            for (size_t i = 0; i < len; i++)
                buf[i] = (unsigned char)(i * 7 + len + (size_t)round);
            CHECK_EQ(ftc_lb_ops()->send(f.ctx[0].ep, 1, buf, len, NULL),
                     FTC_OK);
        }
        ftc_lb_run(f.w, UINT64_MAX);
        CHECK_EQ(core_double_count(CORE_RECV, 1), NLENS);
        for (size_t k = 0; k < NLENS; k++) {
            size_t len = lens[round == 0 ? k : NLENS - 1 - k];
            for (size_t i = 0; i < len; i++)
                buf[i] = (unsigned char)(i * 7 + len + (size_t)round);
            const core_record_t *r = core_double_find(CORE_RECV, 1, k);
            CHECK(r != NULL && r->len == len
                  && r->hash == core_double_hash(buf, len));
        }
    }
    /* Dropped on the way and at a dead receiver: freed, nothing leaks
     * (ASan) and nothing arrives. */
    ftc_lb_crash(f.w, 1);
    for (size_t k = 0; k < NLENS; k++)
        (void)ftc_lb_ops()->send(f.ctx[0].ep, 1, buf, lens[k], NULL);
    ftc_lb_run(f.w, UINT64_MAX);
    ftc_lb_stats_t st;
    ftc_lb_stats(f.w, &st);
    CHECK_EQ(st.dropped_dead, NLENS);
    /* Still queued when the world goes: freed by its destruction. */
    core_nrecords = 0;
    for (size_t k = 0; k < NLENS; k++)
        (void)ftc_lb_ops()->send(f.ctx[1].ep, 0, buf, lens[k], NULL);
    fx_fini(&f);
    free(buf);
}

/* The pair FIFO is kept only once some message takes longer than the
 * latency (loopback.c, last_arrival): messages sent before that, and a
 * slow message after them, still arrive in order, and a fast one never
 * overtakes the slow one. */
static void test_fifo_when_delays_start_late(void)
{
    fixture_t f;
    fx_init_n(&f, 2);
    send_msg(&f, 0, 1, 0, NULL);            /* t = 0: arrives at 1000 */
    ftc_lb_run_until(f.w, 500, UINT64_MAX);
    send_msg(&f, 0, 1, 1, NULL);            /* 1500 */
    ftc_lb_set_delay(f.w, 0, 3000);
    send_msg(&f, 0, 1, 2, NULL);            /* 4500 */
    ftc_lb_set_delay(f.w, 0, 0);
    send_msg(&f, 0, 1, 3, NULL);            /* 1500, held to 4500 */
    ftc_lb_run(f.w, UINT64_MAX);
    static const uint64_t want_t[] = {1000, 1500, 4500, 4500};
    for (uint64_t k = 0; k < 4; k++) {
        const core_record_t *r = core_double_find(CORE_RECV, 1, k);
        CHECK(r != NULL && rec_payload(r).seq == k && r->t == want_t[k]);
    }
    fx_fini(&f);
}

/* 2000 ranks, 200k messages: each arrival is forwarded until the budget
 * is spent. A test of scale, not of speed: it asserts what happened, and
 * prints the time only as information (speed is bench/'s to measure, and
 * a time limit fails on a slow or busy machine). */
static uint64_t g_budget;
static uint64_t g_rng = 88172645463325252ULL;

static void perf_on_recv(struct ftc_context *c, uint32_t src,
                         const void *buf, size_t len)
{
    if (g_budget == 0)
        return;
    g_budget--;
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    uint32_t dest = (uint32_t)(g_rng % 2000);
    ftc_lb_ops()->send(c->ep, dest, buf, len, NULL);
    if ((g_rng >> 40) % 8 == 0)
        ftc_lb_ops()->timer_arm(c->ep, ftc_lb_now(g_world) + 5000);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_performance(void)
{
    enum { N = 2000, TOTAL = 200000 };
    ftc_lb_config_t cfg;
    ftc_lb_config_init(&cfg);
    cfg.n = N;
    cfg.seed = 11;
    cfg.jitter_ns = 2000;
    fixture_t f;
    double t0 = seconds();
    fx_init(&f, &cfg);
    core_recording = false;
    for (uint32_t r = 0; r < N; r++) {
        f.ctx[r].on_recv = perf_on_recv;
        ftc_lb_ops()->watch(f.ctx[r].ep, (r + 1) % N);
    }
    g_budget = TOTAL - 10 * N;
    for (uint32_t r = 0; r < N; r++)
        for (uint32_t k = 0; k < 10; k++)
            send_msg(&f, r, (r * 31 + k * 977) % N, k, NULL);
    ftc_lb_crash_at(f.w, 17, 5000);
    uint64_t events = ftc_lb_run(f.w, UINT64_MAX);
    double dt = seconds() - t0;

    ftc_lb_stats_t st;
    ftc_lb_stats(f.w, &st);
    printf("perf: %u ranks, %" PRIu64 " messages, %" PRIu64
           " events in %.3f s\n", N, st.messages_sent, events, dt);
    CHECK_EQ(st.messages_sent, TOTAL);
    CHECK_EQ(st.messages_delivered + st.dropped_dead, TOTAL);
    uint64_t recvs = 0;
    for (uint32_t r = 0; r < N; r++)
        recvs += f.ctx[r].recvs;
    CHECK_EQ(recvs, st.messages_delivered);
    CHECK_EQ(st.peer_failed_reports, 1);
    CHECK(events > TOTAL * 2);
    fx_fini(&f);
}

int main(void)
{
    test_config_and_create();
    test_send_basic();
    test_send_serialisation();
    test_fifo_under_jitter();
    test_determinism();
    test_timers();
    test_moot_entries_and_the_clock();
    test_run_step_until();
    test_crash_semantics();
    test_crash_after_sends();
    test_deafen();
    test_last_arrival();
    test_peer_failed();
    test_watch_churn();
    test_drop_and_corrupt();
    test_inject();
    test_delay_and_unattached();
    test_buffer_reuse();
    test_fifo_when_delays_start_late();
    test_performance();

    CHECK_EQ(core_reentries, 0);
    CHECK_EQ(g_progress_calls, 0);
    return check_report();
}
