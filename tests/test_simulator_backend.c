/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the LogP backend on its own (docs/simulator.md). The core's
 * entry points are a test double that records every call with its virtual
 * time, so each rule of the cost model is checked to the time unit:
 * send cost max(o, g), latency L, receive cost o, parallelism 1 and 2,
 * receives before sends, send completions after receives, queue policies,
 * holds, crashes, timers and failure reports; the message trace
 * (trace_msg: departure, arrival, receive, with the bytes).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "ftcoll/transport.h"
#include "ftcoll_logp.h"
#include "core_double.h"
#include "check.h"

/* --- The core, replaced (tests/support/core_double.h) ------------------- */

static ftc_logp_world_t *g_w;
static unsigned char g_cookies[256];

static uint64_t world_now(void *arg)
{
    (void)arg;
    return ftc_logp_now(g_w);
}

/* A message's tag: its first byte (the tests send one byte). */
static int tag_of(const core_record_t *r)
{
    return r->len > 0 ? r->raw[0] : 0;
}

static int send1(ftc_context_t *ctx, uint32_t dest, unsigned char byte)
{
    g_cookies[byte] = byte;
    return ftc_logp_ops()->send(ctx->ep, dest, &byte, 1, &g_cookies[byte]);
}

/* What a rank answers: on receiving a message whose first byte is `on`,
 * it sends one byte `tag` to `to`. on = -1: never. */
typedef struct reply {
    int on;
    uint32_t to;
    unsigned char tag;
} reply_t;

static reply_t g_reply[8];

static void reply_on_recv(ftc_context_t *ctx, uint32_t src, const void *buf,
                          size_t len)
{
    const reply_t *rp = &g_reply[ctx->rank];
    unsigned char b = len > 0 ? ((const unsigned char *)buf)[0] : 0;
    if (rp->on >= 0 && b == (unsigned char)rp->on)
        send1(ctx, rp->to, rp->tag);
}

/* --- World set-up -------------------------------------------------------- */

static ftc_context_t g_ctx[8];

/* What trace_msg reported, when a test asks for it (world() passes it). */
typedef struct msg_event {
    uint64_t t;
    uint32_t rank, peer;
    ftc_logp_trace_kind_t what;
    int byte;
} msg_event_t;

static msg_event_t g_events[32];
static int g_nevents;
static ftc_logp_trace_msg_fn g_trace_msg;

static void record_msg(void *arg, uint64_t t, uint32_t rank,
                       ftc_logp_trace_kind_t what, uint32_t peer,
                       const void *buf, size_t len)
{
    (void)arg;
    if (g_nevents < 32)
        g_events[g_nevents++] = (msg_event_t){
            t, rank, peer, what,
            len > 0 ? ((const unsigned char *)buf)[0] : -1};
}

static unsigned classify_first_byte(const void *buf, size_t len, void *arg)
{
    (void)arg;
    /* tag 0x1C (class 1, id C): the class is the high nibble */
    return len > 0 ? ((const unsigned char *)buf)[0] >> 4 : 0;
}

static void world(uint32_t n, uint64_t L, uint64_t o, uint64_t g, uint32_t par,
                  int priority)
{
    ftc_logp_world_destroy(g_w);
    ftc_logp_config_t c;
    ftc_logp_config_init(&c);
    c.n = n;
    c.L = L;
    c.o = o;
    c.g = g;
    c.parallelism = par;
    c.detect_delay = 5;
    c.trace_msg = g_trace_msg;
    if (priority) {
        c.queue = FTC_LOGP_QUEUE_PRIORITY;
        c.classify = classify_first_byte;
    }
    if (ftc_logp_world_create(&c, &g_w) != FTC_OK) {
        fprintf(stderr, "cannot create world\n");
        exit(1);
    }
    for (uint32_t r = 0; r < n; r++) {
        core_double_init(&g_ctx[r], r, ftc_logp_endpoint(g_w, r));
        g_ctx[r].on_recv = reply_on_recv;
        g_reply[r] = (reply_t){-1, 0, 0};
        ftc_logp_attach(g_w, r, &g_ctx[r]);
    }
    core_double_reset();
    core_double_clock(world_now, NULL);
}

static uint64_t t_of(int k, uint32_t r, int i)
{
    const core_record_t *x = core_double_find(k, r, i);
    return x ? x->t : UINT64_MAX;
}

/* --- Tests --------------------------------------------------------------- */

/* Sends of one rank go one after the other, max(o, g) each; each message
 * is receivable L after it left and handed to the core o after that. */
static void test_send_timing(void)
{
    world(2, 5, 2, 3, 1, 0);
    for (unsigned char b = 1; b <= 3; b++)
        CHECK_MSG(send1(&g_ctx[0], 1, b) == FTC_OK, "send");
    ftc_logp_run(g_w, UINT64_MAX);
    for (int i = 0; i < 3; i++) {
        CHECK_MSG(t_of(CORE_SEND_DONE, 0, i) == 3u * (unsigned)(i + 1),
                  "send_done %d at %" PRIu64 ", want %d", i,
                  t_of(CORE_SEND_DONE, 0, i), 3 * (i + 1));
        CHECK_MSG(t_of(CORE_RECV, 1, i) == 3u * (unsigned)(i + 1) + 5 + 2,
                  "recv %d at %" PRIu64 ", want %d", i, t_of(CORE_RECV, 1, i),
                  3 * (i + 1) + 7);
        const core_record_t *r = core_double_find(CORE_RECV, 1, i);
        CHECK_MSG(r && tag_of(r) == i + 1 && r->a == 0, "order and source");
    }
    ftc_logp_rank_stats_t st;
    ftc_logp_rank_stats(g_w, 0, &st);
    CHECK_MSG(st.sends == 3 && st.departed == 3 && st.busy == 9 &&
                  st.last_busy_end == 9,
              "sender stats %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
              st.sends, st.departed, st.busy, st.last_busy_end);
    ftc_logp_rank_stats(g_w, 1, &st);
    CHECK_MSG(st.received == 3 && st.busy == 6 && st.last_busy_end == 16,
              "receiver stats");
    CHECK_MSG(ftc_logp_messages_sent(g_w) == 3, "messages sent");
}

/* g < o: a send still costs max(o, g) = o. */
static void test_gap_below_overhead(void)
{
    world(2, 1, 4, 1, 1, 0);
    send1(&g_ctx[0], 1, 1);
    send1(&g_ctx[0], 1, 2);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(t_of(CORE_RECV, 1, 0) == 4 + 1 + 4, "first at %" PRIu64,
              t_of(CORE_RECV, 1, 0));
    CHECK_MSG(t_of(CORE_RECV, 1, 1) == 8 + 1 + 4, "second at %" PRIu64,
              t_of(CORE_RECV, 1, 1));
}

/* Two messages arriving together: received one after the other, o each,
 * in the order they left; the inbound queue held both. */
static void test_inbound_queue(void)
{
    world(3, 2, 1, 1, 1, 0);
    send1(&g_ctx[0], 1, 10);
    send1(&g_ctx[2], 1, 12);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(t_of(CORE_RECV, 1, 0) == 4 && core_double_find(CORE_RECV, 1, 0)->a == 0,
              "first from 0 at 4");
    CHECK_MSG(t_of(CORE_RECV, 1, 1) == 5 && core_double_find(CORE_RECV, 1, 1)->a == 2,
              "second from 2 at 5");
    ftc_logp_stats_t st;
    ftc_logp_stats(g_w, &st);
    CHECK_MSG(st.max_inbound == 2 && st.max_inbound_rank == 1, "max inbound %u",
              st.max_inbound);
}

/* trace_msg: every message's departure (sender), arrival in a live
 * rank's queue and receive start (receiver), with its bytes, in time
 * order; a message to a crashed rank departs and never arrives. */
static void test_trace_msg(void)
{
    g_trace_msg = record_msg;
    g_nevents = 0;
    world(4, 2, 1, 1, 1, 0);
    ftc_logp_crash(g_w, 3);
    send1(&g_ctx[0], 1, 10);
    send1(&g_ctx[2], 1, 12);
    send1(&g_ctx[0], 3, 13);
    ftc_logp_run(g_w, UINT64_MAX);
    static const msg_event_t want[] = {
        {1, 0, 1, FTC_LOGP_SEND_END, 10},  {1, 2, 1, FTC_LOGP_SEND_END, 12},
        {2, 0, 3, FTC_LOGP_SEND_END, 13},  {3, 1, 0, FTC_LOGP_ARRIVE, 10},
        {3, 1, 2, FTC_LOGP_ARRIVE, 12},    {3, 1, 0, FTC_LOGP_RECV_START, 10},
        {4, 1, 2, FTC_LOGP_RECV_START, 12}};
    int nwant = (int)(sizeof(want) / sizeof(want[0]));
    CHECK_MSG(g_nevents == nwant, "%d message events, want %d", g_nevents,
              nwant);
    for (int i = 0; i < nwant; i++) {
        int found = 0;
        for (int k = 0; k < g_nevents; k++)
            found += g_events[k].t == want[i].t
                     && g_events[k].rank == want[i].rank
                     && g_events[k].peer == want[i].peer
                     && g_events[k].what == want[i].what
                     && g_events[k].byte == want[i].byte;
        CHECK_MSG(found == 1, "event %d (t %" PRIu64 ", rank %u, kind %d, "
                  "byte %d) seen %d times", i, want[i].t, want[i].rank,
                  (int)want[i].what, want[i].byte, found);
    }
    for (int k = 1; k < g_nevents; k++)
        CHECK_MSG(g_events[k - 1].t <= g_events[k].t, "events in time order");
    g_trace_msg = NULL;
}

/* Parallelism 1: a send queued while a message waits starts only after
 * that message was received. Parallelism 2: it overlaps. */
static void test_receive_priority(void)
{
    for (uint32_t par = 1; par <= 2; par++) {
        world(2, 0, 1, 1, par, 0);
        g_reply[1].on = 1;
        g_reply[1].to = 0;
        g_reply[1].tag = 9;
        send1(&g_ctx[0], 1, 1); /* departs 1, handed to 1 at 2 */
        send1(&g_ctx[0], 1, 2); /* departs 2, waits at 1 from 2 */
        ftc_logp_run(g_w, UINT64_MAX);
        CHECK_MSG(t_of(CORE_RECV, 1, 1) == 3, "par %u: second handed at %" PRIu64,
                  par, t_of(CORE_RECV, 1, 1));
        /* par 1: the reply (issued at 2) starts after the receive, at 3,
         * leaves at 4, is handed to 0 at 5. par 2: starts at 2 -> 4. */
        uint64_t want = par == 1 ? 5 : 4;
        CHECK_MSG(t_of(CORE_RECV, 0, 0) == want,
                  "par %u: reply handed at %" PRIu64 ", want %" PRIu64, par,
                  t_of(CORE_RECV, 0, 0), want);
    }
}

/* A send completion is handed to the core when the CPU would go idle:
 * after a receive that was waiting (parallelism 1). */
static void test_completion_after_receive(void)
{
    for (uint32_t par = 1; par <= 2; par++) {
        world(2, 0, 1, 1, par, 0);
        send1(&g_ctx[0], 1, 1); /* departs at 1 */
        send1(&g_ctx[1], 0, 2); /* arrives at 0 at 1 */
        ftc_logp_run(g_w, UINT64_MAX);
        const core_record_t *done = core_double_find(CORE_SEND_DONE, 0, 0);
        const core_record_t *recv = core_double_find(CORE_RECV, 0, 0);
        CHECK_MSG(done && recv, "both happened");
        if (done == NULL || recv == NULL)
            continue;
        if (par == 1)
            CHECK_MSG(done->t == 2 && recv->t == 2 && recv < done,
                      "par 1: recv at %" PRIu64 " then send_done at %" PRIu64,
                      recv->t, done->t);
        else
            CHECK_MSG(done->t == 1 && recv->t == 2,
                      "par 2: send_done at %" PRIu64 ", recv at %" PRIu64,
                      done->t, recv->t);
    }
}

/* Priority by class; FIFO within a class; never ahead of an earlier
 * message of the same sender. */
static void test_priority_queue(void)
{
    world(4, 3, 1, 1, 1, 1);
    send1(&g_ctx[1], 0, 0x21); /* class 2 */
    send1(&g_ctx[2], 0, 0x12); /* class 1 */
    send1(&g_ctx[3], 0, 0x03); /* class 0 */
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(core_double_find(CORE_RECV, 0, 0) && tag_of(core_double_find(CORE_RECV, 0, 0)) == 0x03 &&
                  tag_of(core_double_find(CORE_RECV, 0, 1)) == 0x12 &&
                  tag_of(core_double_find(CORE_RECV, 0, 2)) == 0x21,
              "by class");

    world(3, 3, 1, 1, 1, 1);
    send1(&g_ctx[1], 0, 0x21);   /* class 2, leaves at 1 */
    send1(&g_ctx[1], 0, 0x02);   /* class 0, same sender, leaves at 2 */
    send1(&g_ctx[2], 0, 0x23);   /* class 2 */
    send1(&g_ctx[2], 0, 0x24);   /* class 2 */
    ftc_logp_run(g_w, UINT64_MAX);
    /* 0x21 and 0x23 arrive at 4 and 0 starts receiving 0x21; at 5 0x02
     * and 0x24 arrive: 0x02 (class 0) passes 0x23 (another sender), and
     * it would not have passed 0x21 (same sender) had that still been
     * waiting. */
    unsigned char got[4];
    for (int i = 0; i < 4; i++)
        got[i] = core_double_find(CORE_RECV, 0, i) ? tag_of(core_double_find(CORE_RECV, 0, i)) : 0;
    CHECK_MSG(got[0] == 0x21 && got[1] == 0x02 && got[2] == 0x23 &&
                  got[3] == 0x24,
              "order %02x %02x %02x %02x", got[0], got[1], got[2], got[3]);

    /* Rank 0 busy: everything queues; 0x02 may not pass 0x21. */
    world(3, 3, 1, 1, 1, 1);
    ftc_logp_hold(g_w, 0, 100);
    send1(&g_ctx[1], 0, 0x21);
    send1(&g_ctx[1], 0, 0x02);
    send1(&g_ctx[2], 0, 0x13);
    ftc_logp_run(g_w, UINT64_MAX);
    for (int i = 0; i < 3; i++)
        got[i] = core_double_find(CORE_RECV, 0, i) ? tag_of(core_double_find(CORE_RECV, 0, i)) : 0;
    CHECK_MSG(got[0] == 0x13 && got[1] == 0x21 && got[2] == 0x02,
              "per-sender order kept: %02x %02x %02x", got[0], got[1], got[2]);
    CHECK_MSG(t_of(CORE_RECV, 0, 0) == 101, "after the hold");
}

/* A service choice (Margolin & Barak's service distance): the receive
 * takes the first queued message of a sender at the named distance, the
 * head when none is, and a sender's messages stay in their order. Here
 * rank s is at distance s from rank 0, and the distances named are
 * scripted. */
static const unsigned g_service_script[] = {3, 2, 5, 2};
static unsigned g_service_step;

static unsigned scripted_service(void *arg, uint32_t rank)
{
    (void)arg;
    (void)rank;
    unsigned n = sizeof(g_service_script) / sizeof(g_service_script[0]);
    return g_service_step < n ? g_service_script[g_service_step++] : 0;
}

static unsigned distance_is_rank(void *arg, uint32_t rank, uint32_t src)
{
    (void)arg;
    (void)rank;
    return src;
}

static void test_service_choice(void)
{
    world(4, 3, 1, 1, 1, 0);
    ftc_logp_world_destroy(g_w);
    ftc_logp_config_t c;
    ftc_logp_config_init(&c);
    c.n = 4;
    c.L = 3;
    c.service = scripted_service;
    c.distance = distance_is_rank;
    CHECK_MSG(ftc_logp_world_create(&c, &g_w) == FTC_OK, "service world");
    for (uint32_t r = 0; r < 4; r++) {
        core_double_init(&g_ctx[r], r, ftc_logp_endpoint(g_w, r));
        g_ctx[r].on_recv = reply_on_recv;
        g_reply[r] = (reply_t){-1, 0, 0};
        ftc_logp_attach(g_w, r, &g_ctx[r]);
    }
    core_double_reset();
    core_double_clock(world_now, NULL);
    g_service_step = 0;
    ftc_logp_hold(g_w, 0, 100); /* everything queues first */
    send1(&g_ctx[1], 0, 0x01);
    send1(&g_ctx[2], 0, 0x02);
    send1(&g_ctx[2], 0, 0x04);
    send1(&g_ctx[3], 0, 0x03);
    ftc_logp_run(g_w, UINT64_MAX);
    unsigned char got[4];
    for (int i = 0; i < 4; i++)
        got[i] = core_double_find(CORE_RECV, 0, i)
                     ? tag_of(core_double_find(CORE_RECV, 0, i)) : 0;
    /* 3: rank 3's; 2: rank 2's first; 5: nobody, the head (rank 1's);
     * 2: rank 2's second. */
    CHECK_MSG(got[0] == 0x03 && got[1] == 0x02 && got[2] == 0x01
                  && got[3] == 0x04,
              "served by distance: %02x %02x %02x %02x", got[0], got[1],
              got[2], got[3]);
    CHECK_MSG(g_service_step == 4, "one choice per receive (%u)",
              g_service_step);

    c.distance = NULL;
    ftc_logp_world_t *w = NULL;
    CHECK_MSG(ftc_logp_world_create(&c, &w) == FTC_EINVAL && w == NULL,
              "service without distance");
}

/* Sends that go first (cfg.sends_first; Margolin & Barak's Algorithm 1
 * passes DATA on before it answers or reads): here tags 0xD_. */
static int tag_goes_first(const void *buf, size_t len, void *arg)
{
    (void)arg;
    return len > 0 && (((const unsigned char *)buf)[0] >> 4) == 0xD;
}

static void world_first(uint32_t n, uint64_t L, int first)
{
    world(n, L, 1, 1, 1, 0);
    ftc_logp_world_destroy(g_w);
    ftc_logp_config_t c;
    ftc_logp_config_init(&c);
    c.n = n;
    c.L = L;
    c.detect_delay = 5;
    c.sends_first = first ? tag_goes_first : NULL;
    if (ftc_logp_world_create(&c, &g_w) != FTC_OK) {
        fprintf(stderr, "cannot create world\n");
        exit(1);
    }
    for (uint32_t r = 0; r < n; r++) {
        core_double_init(&g_ctx[r], r, ftc_logp_endpoint(g_w, r));
        g_ctx[r].on_recv = reply_on_recv;
        g_reply[r] = (reply_t){-1, 0, 0};
        ftc_logp_attach(g_w, r, &g_ctx[r]);
    }
    core_double_reset();
    core_double_clock(world_now, NULL);
}

/* A send that goes first leaves before the other sends queued ahead of
 * it, except one to its own destination (which leaves just before it),
 * and those that go first keep their order; and while one is queued the
 * CPU sends before it receives. Without the callback: FIFO, receives
 * first. */
static void test_sends_first(void)
{
    for (int first = 0; first <= 1; first++) {
        world_first(3, 3, first);
        send1(&g_ctx[0], 1, 0x21);
        send1(&g_ctx[0], 2, 0x22);
        send1(&g_ctx[0], 2, 0xD1);
        send1(&g_ctx[0], 1, 0xD2);
        ftc_logp_run(g_w, UINT64_MAX);
        /* Departures at 1, 2, 3, 4; handed over L + o = 4 later. First:
         * 0x22 (ahead of 0xD1, to its destination), 0xD1, 0x21 (ahead
         * of 0xD2), 0xD2; else the order they were issued. */
        unsigned char a0 = tag_of(core_double_find(CORE_RECV, 1, 0));
        unsigned char a1 = tag_of(core_double_find(CORE_RECV, 1, 1));
        unsigned char b0 = tag_of(core_double_find(CORE_RECV, 2, 0));
        unsigned char b1 = tag_of(core_double_find(CORE_RECV, 2, 1));
        uint64_t want[4] = {first ? 7 : 5, first ? 8 : 8, first ? 5 : 6,
                            first ? 6 : 7};
        CHECK_MSG(a0 == 0x21 && a1 == 0xD2 && b0 == 0x22 && b1 == 0xD1
                      && t_of(CORE_RECV, 1, 0) == want[0]
                      && t_of(CORE_RECV, 1, 1) == want[1]
                      && t_of(CORE_RECV, 2, 0) == want[2]
                      && t_of(CORE_RECV, 2, 1) == want[3],
                  "sends_first %d: rank 1 %02x at %" PRIu64 ", %02x at %"
                  PRIu64 "; rank 2 %02x at %" PRIu64 ", %02x at %" PRIu64,
                  first, a0, t_of(CORE_RECV, 1, 0), a1,
                  t_of(CORE_RECV, 1, 1), b0, t_of(CORE_RECV, 2, 0), b1,
                  t_of(CORE_RECV, 2, 1));

        /* Rank 0 takes 0x05 in [4, 5] and then sends 0xD9 to rank 2,
         * while 0x06 waits: first, the send goes in [5, 6] (handed to 2
         * at 10) and 0x06 is taken in [6, 7]; else 0x06 in [5, 6] and
         * the send in [6, 7] (handed at 11). */
        world_first(3, 3, first);
        g_reply[0] = (reply_t){0x05, 2, 0xD9};
        send1(&g_ctx[1], 0, 0x05);
        send1(&g_ctx[1], 0, 0x06);
        ftc_logp_run(g_w, UINT64_MAX);
        CHECK_MSG(t_of(CORE_RECV, 2, 0) == (first ? 10u : 11u)
                      && t_of(CORE_RECV, 0, 1) == (first ? 7u : 6u),
                  "sends_first %d: the DATA handed at %" PRIu64
                  ", the waiting message at %" PRIu64, first,
                  t_of(CORE_RECV, 2, 0), t_of(CORE_RECV, 0, 1));
    }
}

/* Crash semantics: departed messages arrive, queued ones are lost, and the
 * crashing send's completion is not delivered. */
static void test_crash(void)
{
    world(2, 10, 1, 1, 1, 0);
    for (unsigned char b = 1; b <= 4; b++)
        send1(&g_ctx[0], 1, b);
    ftc_logp_crash_after_sends(g_w, 0, 2);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(core_double_count(CORE_RECV, 1) == 2, "two departed, %zu received",
              core_double_count(CORE_RECV, 1));
    CHECK_MSG(core_double_count(CORE_SEND_DONE, 0) == 1, "one completion");
    CHECK_MSG(ftc_logp_is_crashed(g_w, 0) && ftc_logp_crash_time(g_w, 0) == 2,
              "crashed at 2");

    /* Messages to a crashed rank are dropped; its own sends are inline. */
    world(2, 1, 1, 1, 1, 0);
    ftc_logp_crash(g_w, 1);
    send1(&g_ctx[0], 1, 1);
    CHECK_MSG(send1(&g_ctx[1], 0, 2) == FTC_SEND_INLINE, "dead sends inline");
    ftc_logp_run(g_w, UINT64_MAX);
    ftc_logp_stats_t st;
    ftc_logp_stats(g_w, &st);
    CHECK_MSG(core_double_count(CORE_RECV, 1) == 0 && st.dropped_dead == 1,
              "dropped at the dead");

    /* A crash at a time: what left before it is delivered. */
    world(2, 10, 1, 1, 1, 0);
    for (unsigned char b = 1; b <= 3; b++)
        send1(&g_ctx[0], 1, b);
    ftc_logp_crash_at(g_w, 0, 2); /* before the second send's end at 2 */
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(core_double_count(CORE_RECV, 1) == 1, "crash_at: %zu delivered",
              core_double_count(CORE_RECV, 1));
}

/* A held CPU handles nothing until the hold ends. */
static void test_hold(void)
{
    world(2, 1, 1, 1, 1, 0);
    ftc_logp_hold(g_w, 1, 20);
    send1(&g_ctx[0], 1, 1);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(t_of(CORE_RECV, 1, 0) == 21, "held receive at %" PRIu64,
              t_of(CORE_RECV, 1, 0));
}

/* Timers: fire at the deadline; re-arming replaces; cancel cancels; far
 * deadlines (beyond the calendar window) keep their order. */
static void test_timers(void)
{
    const ftc_transport_ops_t *ops = ftc_logp_ops();
    world(4, 2, 1, 1, 1, 0);
    ops->timer_arm(g_ctx[0].ep, 50);
    ops->timer_arm(g_ctx[0].ep, 30);
    ops->timer_arm(g_ctx[1].ep, 100);
    ops->timer_arm(g_ctx[1].ep, 200);
    ops->timer_arm(g_ctx[2].ep, 70);
    ops->timer_cancel(g_ctx[2].ep);
    ops->timer_arm(g_ctx[3].ep, 5000000);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(core_double_count(CORE_TIMER, 0) == 1 && t_of(CORE_TIMER, 0, 0) == 30,
              "earlier wins");
    CHECK_MSG(core_double_count(CORE_TIMER, 1) == 1 && t_of(CORE_TIMER, 1, 0) == 200,
              "later wins");
    CHECK_MSG(core_double_count(CORE_TIMER, 2) == 0, "cancelled");
    CHECK_MSG(t_of(CORE_TIMER, 3, 0) == 5000000, "far timer at %" PRIu64,
              t_of(CORE_TIMER, 3, 0));

    world(3, 2, 1, 1, 1, 0);
    for (uint32_t r = 0; r < 3; r++)
        ops->timer_arm(g_ctx[2 - r].ep, 1000000);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(core_nrecords == 3 && core_records[0].rank == 2 && core_records[1].rank == 1 &&
                  core_records[2].rank == 0,
              "equal far deadlines fire in arming order");
}

/* Failure reports: detect_delay after the crash, or at watch time if the
 * peer is already dead; none after unwatch. */
static void test_watch(void)
{
    const ftc_transport_ops_t *ops = ftc_logp_ops();
    world(4, 2, 1, 1, 1, 0);
    ops->watch(g_ctx[0].ep, 1);
    ops->watch(g_ctx[2].ep, 1);
    ops->watch(g_ctx[3].ep, 1);
    ops->unwatch(g_ctx[3].ep, 1);
    ftc_logp_crash_at(g_w, 1, 10);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(t_of(CORE_PEER_FAILED, 0, 0) == 15 &&
                  core_double_find(CORE_PEER_FAILED, 0, 0)->a == 1,
              "report at 15");
    CHECK_MSG(t_of(CORE_PEER_FAILED, 2, 0) == 15, "second watcher");
    CHECK_MSG(core_double_count(CORE_PEER_FAILED, 3) == 0, "unwatched");
    ftc_logp_run_until(g_w, 30, UINT64_MAX);
    ops->watch(g_ctx[3].ep, 1);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(t_of(CORE_PEER_FAILED, 3, 0) == 30,
              "late watch reported at %" PRIu64, t_of(CORE_PEER_FAILED, 3, 0));

    /* Many watches per rank (beyond the inline ones). */
    world(8, 2, 1, 1, 1, 0);
    for (uint32_t p = 1; p < 8; p++)
        ops->watch(g_ctx[0].ep, p);
    ops->unwatch(g_ctx[0].ep, 2);
    ftc_logp_crash(g_w, 6);
    ftc_logp_crash(g_w, 2);
    ftc_logp_run(g_w, UINT64_MAX);
    CHECK_MSG(core_double_count(CORE_PEER_FAILED, 0) == 1 && core_double_find(CORE_PEER_FAILED, 0, 0)->a == 6,
              "only the watched crash is reported");
}

/* Bad configurations are refused. */
static void test_config(void)
{
    ftc_logp_config_t c;
    ftc_logp_world_t *w = NULL;
    ftc_logp_config_init(&c);
    CHECK_MSG(ftc_logp_world_create(&c, &w) == FTC_EINVAL && w == NULL,
              "n = 0");
    c.n = 4;
    c.parallelism = 3;
    CHECK_MSG(ftc_logp_world_create(&c, &w) == FTC_EINVAL, "parallelism 3");
    c.parallelism = 1;
    c.queue = FTC_LOGP_QUEUE_PRIORITY;
    CHECK_MSG(ftc_logp_world_create(&c, &w) == FTC_EINVAL,
              "priority without classify");
    c.queue = FTC_LOGP_QUEUE_FIFO;
    CHECK_MSG(ftc_logp_world_create(&c, &w) == FTC_OK && w != NULL, "good");
    CHECK_MSG(ftc_logp_ops()->send(ftc_logp_endpoint(w, 0), 9, "x", 1, NULL) ==
                  FTC_EINVAL,
              "destination out of range");
    ftc_logp_world_destroy(w);
}

/* Many ranks, one message each, in a ring: O(1) per event. */
static void test_many_ranks(void)
{
    uint32_t n = 100000;
    ftc_logp_config_t c;
    ftc_logp_config_init(&c);
    c.n = n;
    ftc_logp_world_t *w;
    CHECK_MSG(ftc_logp_world_create(&c, &w) == FTC_OK, "big world");
    ftc_context_t *ctx = calloc(n, sizeof(*ctx));
    ftc_logp_world_t *saved = g_w;
    g_w = w;
    core_recording = false;
    for (uint32_t r = 0; r < n; r++) {
        core_double_init(&ctx[r], r, ftc_logp_endpoint(w, r));
        ftc_logp_attach(w, r, &ctx[r]);
    }
    for (uint32_t r = 0; r < n; r++)
        send1(&ctx[r], (r + 1) % n, 1);
    ftc_logp_run(w, UINT64_MAX);
    ftc_logp_stats_t st;
    ftc_logp_stats(w, &st);
    CHECK_MSG(st.messages_delivered == n && ftc_logp_now(w) == 4,
              "ring of %u: %" PRIu64 " delivered, ends at %" PRIu64, n,
              st.messages_delivered, ftc_logp_now(w));
    ftc_logp_world_destroy(w);
    free(ctx);
    g_w = saved;
    core_double_reset();
}

int main(void)
{
    test_send_timing();
    test_gap_below_overhead();
    test_inbound_queue();
    test_trace_msg();
    test_receive_priority();
    test_completion_after_receive();
    test_priority_queue();
    test_service_choice();
    test_sends_first();
    test_crash();
    test_hold();
    test_timers();
    test_watch();
    test_config();
    test_many_ranks();
    CHECK_MSG(core_reentries == 0,
              "an entry point was called from inside another");
    ftc_logp_world_destroy(g_w);
    return check_report();
}
