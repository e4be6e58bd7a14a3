/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The watch a steady stream keeps between its operations
 * (ftc_monitor_release_keep, lib/core/monitor.h), on the loopback with
 * the core's keepalive an hour long, so that only the transport's report
 * can tell a crash, for each allreduce that keeps its watches: the plain
 * tree's, and the corrected family's exchange (f = 1, which survives the
 * crash: the survivors deliver FTC_OK, their inputs' sum). A stream is
 * FTC_LINGER_OPS + 6 operations long, so that the exchange's later
 * operations start from a template (a retired one's block, which
 * lingered) and the crashes below hit one that did; that templates
 * were taken is checked (the group's count of them):
 *
 *   - between: a member crashes after an operation ended everywhere and
 *     before the next starts. The survivors learn it with no operation
 *     live (the kept watch carries the transport's report), and the next
 *     operation ends at once (the tree: FTC_EPEER_FAILED; the exchange
 *     starts past the victim, into its reduce + bcast rounds). Fails if
 *     the watch is dropped at the end of an operation (nobody would hear
 *     the report until the next operation watched again);
 *   - during: a member crashes before its first send of the stream's
 *     next operation, which took the kept watch again: the survivors end
 *     it within the transport's report delay, not the keepalive's hour.
 *     Fails if the kept watch is not re-armed for the transport (the
 *     operation would wait for the keepalive);
 *   - partway (the exchange, n >= 3): a member crashes after its input
 *     reached one peer of the stream's next operation; the survivors
 *     agree on the value (with its input or without), all FTC_OK;
 *   - signature change: an operation with another count after a stream
 *     drops the kept watches (one unwatch per rank that kept one, then a
 *     watch anew) and its result is right;
 *   - pause: a stream that stops for longer than the suspect timeout
 *     (short here) drops its kept watches: watch and unwatch balanced
 *     before the contexts go.
 *
 * Every assertion counts events (operations, watch calls) or virtual
 * time; none reads a wall clock. Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/group.h"
#include "core/op.h"
#include "ftcoll/corrected.h"
#include "ftcoll/ftcoll.h"
#include "counted_watches.h"
#include "ftcoll_loopback.h"

enum { NMAX = 8, STREAM = FTC_LINGER_OPS + 6 };
_Static_assert((int)NMAX <= (int)COUNTED_NMAX, "counted_watches.h counts up to COUNTED_NMAX ranks");
/* 10 ms of virtual time: a fault-free operation takes a few us here,
 * a transport's report 50 us (ftc_lb_config_t.detect_delay_ns). */
static const uint64_t STEP_NS = 10000000ull;

static ftc_context_t *ctx[NMAX];
static ftc_group_t *grp[NMAX];
/* The allreduce under test: the corrected exchange (true) or the tree. */
static bool exchange;

typedef struct outcome {
    int calls, status;
} outcome_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    outcome_t *o = arg;
    o->calls++;
    o->status = c->status;
}

static bool setup(uint32_t n, uint64_t suspect_ns)
{
    nranks = n;
    memset(watches, 0, sizeof(watches));
    memset(unwatches, 0, sizeof(unwatches));
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = 1;
    if (!CHECK_OK(ftc_lb_world_create(&lc, &lb)))
        return false;
    const ftc_transport_ops_t *counting = counted_ops();
    if (!CHECK(counting != NULL))
        return false;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.suspect_timeout_ns = suspect_ns;
    cfg.probe_timeout_ns = suspect_ns;
    for (uint32_t r = 0; r < n; r++) {
        if (!CHECK_OK(ftc_context_create(r, n, counting,
                                         ftc_lb_endpoint(lb, r), &cfg,
                                         &ctx[r])))
            abort();
        ftc_lb_attach(lb, r, ctx[r]);
        if (!CHECK_OK(ftc_group_create(ctx[r], 1, 0, n, NULL, &grp[r])))
            abort();
    }
    return true;
}

static void teardown(void)
{
    for (uint32_t r = 0; r < nranks; r++) {
        ftc_group_destroy(grp[r]);
        ftc_context_destroy(ctx[r]);
    }
    ftc_lb_world_destroy(lb);
}

/* What a survivor delivers when a member crashed before its input went
 * out: the tree gives up, the corrected exchange (f = 1) goes on
 * without it. */
static int crash_status(void)
{
    return exchange ? FTC_OK : FTC_EPEER_FAILED;
}

/* One allreduce of count int64s at every live rank (the tree's or the
 * exchange's); returns how many live ranks delivered status (and, for
 * FTC_OK, the sum of every input but absent's: a rank whose input never
 * went out, or UINT32_MAX). */
static uint32_t allreduce(uint32_t count, int want_status, uint32_t absent)
{
    int64_t in[NMAX][2], out[NMAX][2];
    outcome_t res[NMAX];
    memset(res, 0, sizeof(res));
    int64_t want[2] = {0, 0};
    for (uint32_t r = 0; r < nranks; r++) {
        for (uint32_t i = 0; i < count; i++) {
            in[r][i] = 1 + (int64_t)r * 10 + i;
            if (r != absent && !ftc_lb_is_crashed(lb, r))
                want[i] += in[r][i];
        }
        if (ftc_lb_is_crashed(lb, r))
            continue;
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        ftc_corrected_params_t cp;
        ftc_corrected_params_init(&cp);
        cp.allreduce = FTC_ALLREDUCE_EXCHANGE;
        a.algo = exchange ? FTC_ALGO_CORRECTED : FTC_ALGO_TREE;
        a.f = exchange ? 1 : 0;
        a.params = exchange ? &cp : NULL;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = count;
        a.sendbuf = in[r];
        a.recvbuf = out[r];
        a.deliver = on_deliver;
        a.deliver_arg = &res[r];
        if (!CHECK_OK(ftc_init_allreduce(grp[r], &a, NULL)))
            abort();
    }
    /* Virtual time enough for the operation and the transport's report
     * (detect_delay_ns), far below the keepalive's: run to quiescence,
     * the loopback would fire the kept watches' expiry too. */
    ftc_lb_run_until(lb, ftc_lb_now(lb) + STEP_NS, UINT64_MAX);
    uint32_t ok = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        if (ftc_lb_is_crashed(lb, r))
            continue;
        if (res[r].calls != 1 || res[r].status != want_status)
            continue;
        if (want_status == FTC_OK
            && (out[r][0] != want[0] || (count > 1 && out[r][1] != want[1])))
            continue;
        ok++;
    }
    return ok;
}

static const char *algo_name(void)
{
    return exchange ? "exchange" : "tree";
}

/* The exchange's stream took templates (its like calls after the first
 * FTC_LINGER_OPS + 1, at every rank). */
static void check_templates_taken(void)
{
    if (!exchange)
        return;
    for (uint32_t r = 0; r < nranks; r++)
        if (!ftc_lb_is_crashed(lb, r))
            CHECK(grp[r]->templates_taken > 0);
}

static const uint64_t HOUR = 3600ull * 1000000000ull;

/* A crash between two operations of the stream reaches the survivors
 * through the kept watch, before the next operation starts. */
static void between(uint32_t n, uint32_t victim)
{
    char what[64];
    snprintf(what, sizeof(what), "%s between, n=%u, victim %u", algo_name(),
             n, victim);
    check_set_context(what);
    if (!setup(n, HOUR))
        return;
    for (uint32_t k = 0; k < STREAM; k++)
        CHECK_EQ(allreduce(1, FTC_OK, UINT32_MAX), n);
    ftc_lb_crash(lb, victim);
    ftc_lb_run_until(lb, ftc_lb_now(lb) + STEP_NS, UINT64_MAX);
    check_templates_taken();
    /* Who talks to the victim in the tree (its parent and children)
     * kept a watch on it: at n = 2, the other rank; in the exchange,
     * everybody. */
    uint32_t knew = 0;
    for (uint32_t r = 0; r < n; r++)
        if (r != victim && ftc_context_is_failed(ctx[r], victim))
            knew++;
    if (n == 2 || exchange)
        CHECK_EQ(knew, n - 1);
    else
        CHECK(knew >= 1);
    /* The next operation: every survivor ends it within STEP_NS, none
     * waits for the keepalive's hour. */
    CHECK_EQ(allreduce(1, crash_status(), victim), n - 1);
    teardown();
}

/* A crash in the stream's next operation, which took the kept watch
 * again: the transport's report ends it, not the keepalive. */
static void during(uint32_t n, uint32_t victim)
{
    char what[64];
    snprintf(what, sizeof(what), "%s during, n=%u, victim %u", algo_name(),
             n, victim);
    check_set_context(what);
    if (!setup(n, HOUR))
        return;
    for (uint32_t k = 0; k < STREAM; k++)
        CHECK_EQ(allreduce(1, FTC_OK, UINT32_MAX), n);
    check_templates_taken();
    uint64_t w_before = 0;
    for (uint32_t r = 0; r < n; r++)
        w_before += watches[r];
    ftc_lb_crash_after_sends(lb, victim, 0);
    /* Ended within STEP_NS: by the transport's report, not the
     * keepalive's hour. */
    CHECK_EQ(allreduce(1, crash_status(), victim), n - 1);
    CHECK(ftc_lb_is_crashed(lb, victim));   /* the fault landed */
    /* At n = 2 the watches were all kept ones: none was asked anew. */
    if (n == 2) {
        uint64_t w_after = 0;
        for (uint32_t r = 0; r < n; r++)
            w_after += watches[r];
        CHECK_EQ(w_after, w_before);
    }
    teardown();
}

/* The exchange only: a member crashes after its input reached one
 * peer of the stream's next operation (a template's), n >= 3. The
 * survivors agree (docs/corrected.md §5): every one delivers FTC_OK and
 * the same value, the sum with the victim's input or without it, within
 * the transport's report delay. */
static void partway(uint32_t n, uint32_t victim)
{
    char what[64];
    snprintf(what, sizeof(what), "exchange partway, n=%u, victim %u", n,
             victim);
    check_set_context(what);
    if (!setup(n, HOUR))
        return;
    for (uint32_t k = 0; k < STREAM; k++)
        CHECK_EQ(allreduce(1, FTC_OK, UINT32_MAX), n);
    check_templates_taken();
    ftc_lb_crash_after_sends(lb, victim, 1);
    int64_t in[NMAX], out[NMAX], with = 0;
    outcome_t res[NMAX];
    memset(res, 0, sizeof(res));
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    cp.allreduce = FTC_ALLREDUCE_EXCHANGE;
    for (uint32_t r = 0; r < n; r++) {
        in[r] = 1 + (int64_t)r * 10;
        with += in[r];
        out[r] = -1;
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.algo = FTC_ALGO_CORRECTED;
        a.f = 1;
        a.params = &cp;
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = 1;
        a.sendbuf = &in[r];
        a.recvbuf = &out[r];
        a.deliver = on_deliver;
        a.deliver_arg = &res[r];
        if (!CHECK_OK(ftc_init_allreduce(grp[r], &a, NULL)))
            abort();
    }
    ftc_lb_run_until(lb, ftc_lb_now(lb) + STEP_NS, UINT64_MAX);
    /* The fault landed: the victim is down, after its one send (an
     * uncrashed victim would let every rank agree on the full sum). */
    CHECK(ftc_lb_is_crashed(lb, victim));
    int64_t without = with - in[victim], value = 0;
    bool first = true;
    uint32_t agreed = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (r == victim)
            continue;
        if (res[r].calls != 1 || res[r].status != FTC_OK)
            continue;
        if (out[r] != with && out[r] != without)
            continue;
        if (first)
            value = out[r];
        first = false;
        if (out[r] == value)
            agreed++;
    }
    CHECK_EQ(agreed, n - 1);
    teardown();
}

/* Another signature drops the kept watches (the slow path: watch anew),
 * and the operation is right. */
static void signature_change(uint32_t n)
{
    char what[64];
    snprintf(what, sizeof(what), "%s signature change, n=%u", algo_name(),
             n);
    check_set_context(what);
    if (!setup(n, HOUR))
        return;
    CHECK_EQ(allreduce(1, FTC_OK, UINT32_MAX), n);
    uint64_t w1 = 0, u1 = 0;
    for (uint32_t r = 0; r < n; r++) {
        w1 += watches[r];
        u1 += unwatches[r];
    }
    /* Fault-free: every watch of the first operation is kept. */
    CHECK_EQ(u1, 0u);
    CHECK(w1 > 0);
    CHECK_EQ(allreduce(1, FTC_OK, UINT32_MAX), n);
    uint64_t w2 = 0, u2 = 0;
    for (uint32_t r = 0; r < n; r++) {
        w2 += watches[r];
        u2 += unwatches[r];
    }
    CHECK_EQ(w2, w1);   /* a like call: the kept watches taken again */
    CHECK_EQ(u2, 0u);
    CHECK_EQ(allreduce(2, FTC_OK, UINT32_MAX), n);   /* another count */
    uint64_t w3 = 0, u3 = 0;
    for (uint32_t r = 0; r < n; r++) {
        w3 += watches[r];
        u3 += unwatches[r];
    }
    CHECK_EQ(u3, w1);   /* every kept watch dropped */
    CHECK_EQ(w3, 2 * w1);   /* and watched anew */
    teardown();
}

/* A stream that pauses for longer than the suspect timeout lets its
 * kept watches go. */
static void pause_drops(uint32_t n)
{
    char what[64];
    snprintf(what, sizeof(what), "%s pause, n=%u", algo_name(), n);
    check_set_context(what);
    const uint64_t suspect = 1000000000ull; /* 1 s of virtual time */
    if (!setup(n, suspect))
        return;
    for (uint32_t k = 0; k < STREAM; k++)
        CHECK_EQ(allreduce(1, FTC_OK, UINT32_MAX), n);
    ftc_lb_run_until(lb, ftc_lb_now(lb) + 2 * suspect, UINT64_MAX);
    for (uint32_t r = 0; r < n; r++)
        CHECK_EQ(unwatches[r], watches[r]);
    teardown();
}

int main(void)
{
    for (int x = 0; x < 2; x++) {
        exchange = x == 1;
        for (uint32_t n = 2; n <= 5; n++) {
            for (uint32_t v = 0; v < n; v++) {
                between(n, v);
                during(n, v);
                if (exchange && n >= 3)
                    partway(n, v);
            }
            signature_change(n);
            pause_drops(n);
        }
    }
    return check_report();
}
