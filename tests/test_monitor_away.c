/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failure monitor does not blame a peer for silence that was this
 * process's own (core/monitor.c, "away"): while one call into the core
 * works on a large value, the process reads nothing, so a peer's answer
 * may sit unread in its transport.
 *
 * Rank 0 of 2 runs over a transport whose clock moves between calls as
 * the test says, and inside a call only when it is given bytes to send,
 * by a set cost per byte: starting an allreduce of a large value (512
 * KiB, sent at once) then costs the process time inside the call. An
 * allreduce already waits on rank 1, which never answers. The test
 * checks that
 *   - the cost really landed inside the call, and the monitor counted
 *     it away;
 *   - a start that outlasts what was left of the suspect timeout is
 *     followed by no probe to rank 1;
 *   - a start that outlasts what was left of a probe's timeout (by less
 *     than half of it: a late timer alone would not be noticed) leaves
 *     rank 1 neither declared failed nor told it was excluded;
 *   - silence observed outside calls still counts: with time moving on
 *     between calls, rank 1 is probed and then declared failed, as the
 *     timeouts say;
 *   - a process whose own call lately took `took` gives a silent peer
 *     4 x took of probes before declaring it failed (this host keeps
 *     processes from reading that long), no earlier and within a probe
 *     more.
 * The back-off of probes is off here (probe_backoff 0): it would hide
 * what the discount does; tests/test_detector.c tests it.
 *
 * Last line: "N passed, M failed".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "check.h"
#include "core/context.h"
#include "wire/wire.h"

#define TOKEN UINT64_C(0xA3A7A3A7)
#define SUSPECT_NS 1000000u          /* 1 ms */
#define PROBE_NS 2000000u            /* 2 ms */
#define SEG (64u * 1024)             /* segment payload bytes */
#define COUNT ((uint64_t)8 * SEG / 8) /* int64 elements: 512 KiB */

typedef struct clock_tp {
    uint64_t now;
    uint64_t timer;             /* armed deadline, UINT64_MAX: none */
    uint32_t probes, excluded;  /* sent to rank 1 */
    uint64_t cost;              /* ns per byte handed over */
} clock_tp_t;

static int ct_send(void *tp, uint32_t dest, const void *buf, size_t len,
                   void *cookie)
{
    clock_tp_t *t = tp;
    (void)cookie;
    ftc_wire_header_t h;
    if (dest == 1 && ftc_wire_decode(buf, len, TOKEN, 2, &h) == FTC_OK) {
        t->probes += h.kind == FTC_MSG_PROBE;
        t->excluded += h.kind == FTC_MSG_EXCLUDED;
    }
    /* Handing over bytes is this process's own work. */
    t->now += (uint64_t)len * t->cost;
    return FTC_SEND_INLINE;
}

static void ct_arm(void *tp, uint64_t d) { ((clock_tp_t *)tp)->timer = d; }
static void ct_cancel(void *tp) { ((clock_tp_t *)tp)->timer = UINT64_MAX; }
static uint64_t ct_now(void *tp) { return ((clock_tp_t *)tp)->now; }

static const ftc_transport_ops_t ct_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = ct_send,
    .timer_arm = ct_arm,
    .timer_cancel = ct_cancel,
    .now = ct_now,
};

/* Fire the timer if it is due now (as a backend's loop would). */
static void fire_if_due(ftc_context_t *ctx, clock_tp_t *t)
{
    if (t->timer != UINT64_MAX && t->timer <= t->now) {
        t->timer = UINT64_MAX;
        ftc_transport_timer_fired(ctx);
    }
}

/* Time passes outside any call, in steps, the timer firing as it falls
 * due: silence this process observes. */
static void idle(ftc_context_t *ctx, clock_tp_t *t, uint64_t ns)
{
    for (uint64_t end = t->now + ns; t->now < end;) {
        t->now += SUSPECT_NS / 10;
        fire_if_due(ctx, t);
    }
}

static void noop_deliver(const ftc_completion_t *c, void *arg)
{
    (void)c;
    (void)arg;
}

static int start_large(ftc_group_t *g, int64_t *v)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.dtype = FTC_INT64;
    a.count = COUNT;
    a.sendbuf = v;
    a.recvbuf = v;
    a.deliver = noop_deliver;
    return ftc_init_allreduce(g, &a, NULL);
}

int main(void)
{
    clock_tp_t *t = calloc(1, sizeof(*t));
    t->now = 1000;
    t->timer = UINT64_MAX;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = TOKEN;
    cfg.suspect_timeout_ns = SUSPECT_NS;
    cfg.probe_timeout_ns = PROBE_NS;
    /* One probe, then the verdict: with a back-off, the expiry in step 2
     * would only send the next probe, and say nothing about the
     * discount (tests/test_detector.c tests the back-off). */
    cfg.probe_backoff = 0;
    cfg.segment_size = SEG;
    cfg.segment_window = 64;    /* whole values leave at once: no credits */
    ftc_context_t *ctx;
    ftc_group_t *g;
    if (!CHECK_OK(ftc_context_create(0, 2, &ct_ops, t, &cfg, &ctx))
        || !CHECK_OK(ftc_group_create(ctx, 1, 0, 2, NULL, &g)))
        return check_report();
    int64_t *v[3];
    for (int i = 0; i < 3; i++)
        v[i] = calloc(COUNT, sizeof(int64_t));

    /* 0. An allreduce waits on rank 1 (its start costs nothing). */
    t->cost = 0;
    CHECK_OK(start_large(g, v[0]));
    fire_if_due(ctx, t);
    CHECK_EQ(t->probes, 0u);

    /* 1. Half a suspect timeout of observed silence, then a start that
     * costs more than the other half, inside the call. */
    idle(ctx, t, SUSPECT_NS / 2);
    t->cost = 3;
    uint64_t before = t->now;
    CHECK_OK(start_large(g, v[1]));
    uint64_t took = t->now - before;
    CHECK_MSG(took > SUSPECT_NS, "the start cost only %llu ns: no fault "
              "injected", (unsigned long long)took);
    CHECK_MSG(ctx->away_ns >= took,
              "the monitor counted %llu ns away of a %llu ns call",
              (unsigned long long)ctx->away_ns, (unsigned long long)took);
    fire_if_due(ctx, t);
    CHECK_MSG(t->probes == 0, "rank 1 probed for our own %llu ns of work",
              (unsigned long long)took);

    /* 2. Observed silence until the probe goes out, most of its timeout
     * more, then a start that outlasts the rest of it. */
    t->cost = 0;
    while (t->probes == 0 && t->now < before + 10 * SUSPECT_NS)
        idle(ctx, t, SUSPECT_NS / 10);
    CHECK_MSG(t->probes == 1, "%u probes after a suspect timeout of "
              "observed silence, expected 1", t->probes);
    idle(ctx, t, PROBE_NS * 3 / 4);
    t->cost = 2;
    before = t->now;
    CHECK_OK(start_large(g, v[2]));
    took = t->now - before;
    CHECK_MSG(took > PROBE_NS / 4 && took < PROBE_NS / 2 + PROBE_NS / 4,
              "the start cost %llu ns: not past the probe's expiry, or so "
              "far past it that a late timer would be noticed anyway",
              (unsigned long long)took);
    fire_if_due(ctx, t);
    CHECK_MSG(!ftc_context_is_failed(ctx, 1),
              "rank 1 declared failed while we did not read");
    CHECK_EQ(t->excluded, 0u);

    /* 3. Silence observed between calls still counts. */
    t->cost = 0;
    idle(ctx, t, 2 * (SUSPECT_NS + PROBE_NS));
    CHECK_MSG(ftc_context_is_failed(ctx, 1),
              "rank 1, silent while we read, never declared failed");
    CHECK_EQ(t->excluded, 1u);

    ftc_context_destroy(ctx);

    /* 4. A fresh context whose start costs it `took` inside the call:
     * rank 1, silent from then on, is given FTC_STALL_FACTOR (4) times
     * that before it is declared failed, in probes of PROBE_NS; no
     * earlier, and within one probe more. */
    memset(t, 0, sizeof(*t));
    t->now = 1000;
    t->timer = UINT64_MAX;
    if (!CHECK_OK(ftc_context_create(0, 2, &ct_ops, t, &cfg, &ctx))
        || !CHECK_OK(ftc_group_create(ctx, 1, 0, 2, NULL, &g)))
        return check_report();
    t->cost = 5;
    before = t->now;
    CHECK_OK(start_large(g, v[0]));
    took = t->now - before;
    uint64_t quiet_from = t->now;
    CHECK_MSG(4 * took > SUSPECT_NS + 3 * PROBE_NS,
              "the start cost only %llu ns: the stall rule is not tested",
              (unsigned long long)took);
    t->cost = 0;
    uint64_t declared = 0;
    while (declared == 0 && t->now < quiet_from + 10 * (4 * took)) {
        idle(ctx, t, SUSPECT_NS / 10);
        if (ftc_context_is_failed(ctx, 1))
            declared = t->now;
    }
    CHECK_MSG(declared >= quiet_from + SUSPECT_NS + 4 * took,
              "rank 1 declared failed %llu ns into its silence: before 4 "
              "times our own %llu ns call (and the suspect timeout)",
              (unsigned long long)(declared - quiet_from),
              (unsigned long long)took);
    CHECK_MSG(declared != 0
                  && declared <= quiet_from + SUSPECT_NS + 4 * took
                                     + PROBE_NS + SUSPECT_NS / 10,
              "rank 1 declared failed %llu ns into its silence: past 4 "
              "times our own %llu ns call, the suspect timeout and a probe",
              (unsigned long long)(declared - quiet_from),
              (unsigned long long)took);
    /* One probe: the series only waits longer (channels are reliable). */
    CHECK_EQ(t->probes, 1u);
    CHECK_EQ(t->excluded, 1u);
    ftc_context_destroy(ctx);

    for (int i = 0; i < 3; i++)
        free(v[i]);
    free(t);
    return check_report();
}
