/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The failure monitor's lazy silence (core/monitor.c): a message from a
 * watched peer only sets a mark, and the clock is read at checks, one
 * every suspect_timeout / FTC_WATCH_CHECKS (the period P) while an
 * operation waits. The bound it promises, asserted exactly on the
 * loopback's virtual clock (2 ranks, corrected allreduces f = 1, once
 * with the exchange, whose watches are kept between operations, and once
 * with the reduce + bcast rounds, whose watches are new every operation;
 * no transport reports a death, so the keepalive is the only detector):
 *
 *   silent  Rank 1 runs a stream with rank 0, then stops starting
 *           operations while rank 0 starts one more and waits on it. The
 *           start of rank 1's last operation is swept over two check
 *           periods in steps of P / 50, so its last word reaches rank 0
 *           at every phase of rank 0's checks. Rank 0's first probe to
 *           rank 1 (suspicion) goes out no earlier than S after rank 1's
 *           last word, and no later than S + P after the later of that
 *           word and the start of rank 0's wait. The sweep must meet
 *           both ends of that window (a lateness under P / 8 and one over
 *           P * 7 / 8), or the phases it claims to cover were not (a
 *           detector exact to the ns, as the one before lazy silence,
 *           fails this part: revisit it with the detector).
 *   steady  Rank 1 stays alive and starts each operation 0.5 S to 0.95 S
 *           after its last one ended, for 64 operations (over 30 S):
 *           rank 0, waiting on it each time, never probes it, nobody is
 *           declared failed, every operation ends FTC_OK with the sum.
 *
 * Both fail as they should with the monitor mutated: a check that
 * ignores the mark (silence counted from the watch's start) probes a live
 * peer and suspects a silent one early; checks once per S only (P = S)
 * suspect up to S late.
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/corrected.h"
#include "ftcoll_loopback.h"
#include "check.h"
#include "core/monitor.h"

#define S_NS 1000000u                   /* suspect timeout */
#define P_NS (S_NS / FTC_WATCH_CHECKS)  /* check period */
#define PROBE_NS 2000000u
#define NOPS_MAX 80
#define SWEEP_STEPS 100                 /* two check periods, P / 50 apart */

typedef struct rank_state {
    uint32_t started, delivered;
    bool busy;
    int64_t in, out[NOPS_MAX];
    int status[NOPS_MAX];
} rank_state_t;

typedef struct slot {
    rank_state_t *rs;
    uint32_t op;
} slot_t;

typedef struct world {
    ftc_lb_world_t *lb;
    ftc_context_t *ctx[2];
    ftc_group_t *g[2];
    rank_state_t rs[2];
    slot_t slots[2][NOPS_MAX];
    ftc_allreduce_algo_t algo;
} world_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    slot_t *s = arg;
    s->rs->status[s->op] = c->status;
    s->rs->delivered++;
    s->rs->busy = false;
}

static bool world_init(world_t *w, ftc_allreduce_algo_t algo)
{
    *w = (world_t){.algo = algo};
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = 2;
    lc.seed = 1;
    lc.detect_delay_ns = UINT64_MAX;    /* only the keepalive detects */
    if (!CHECK_OK(ftc_lb_world_create(&lc, &w->lb)))
        return false;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 0x1A2C;
    cfg.suspect_timeout_ns = S_NS;
    cfg.probe_timeout_ns = PROBE_NS;
    for (uint32_t r = 0; r < 2; r++) {
        w->rs[r].in = r + 1;
        if (!CHECK_OK(ftc_context_create(r, 2, ftc_lb_ops(),
                                         ftc_lb_endpoint(w->lb, r), &cfg,
                                         &w->ctx[r])))
            return false;
        ftc_lb_attach(w->lb, r, w->ctx[r]);
        if (!CHECK_OK(ftc_group_create(w->ctx[r], 1, 0, 2, NULL, &w->g[r])))
            return false;
    }
    return true;
}

static void world_free(world_t *w)
{
    for (uint32_t r = 0; r < 2; r++)
        ftc_context_destroy(w->ctx[r]);
    ftc_lb_world_destroy(w->lb);
}

static bool start(world_t *w, uint32_t r)
{
    rank_state_t *rs = &w->rs[r];
    uint32_t op = rs->started++;
    w->slots[r][op] = (slot_t){rs, op};
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    cp.allreduce = w->algo;
    a.params = &cp;
    a.algo = FTC_ALGO_CORRECTED;
    a.f = 1;
    a.root = op % 2;
    a.dtype = FTC_INT64;
    a.op = FTC_SUM;
    a.count = 1;
    a.sendbuf = &rs->in;
    a.recvbuf = &rs->out[op];
    a.deliver = on_deliver;
    a.deliver_arg = &w->slots[r][op];
    rs->busy = true;
    return CHECK_OK(ftc_init_allreduce(w->g[r], &a, NULL));
}

static uint64_t probes_sent(const world_t *w, uint32_t r)
{
    ftc_counters_t c;
    ftc_context_counters(w->ctx[r], &c);
    return c.probes_sent;
}

/* What one run saw: rank 1's last word at rank 0, when rank 0 began its
 * last wait, and rank 0's first probe to rank 1 (0: none). */
typedef struct seen {
    uint64_t last_word, wait_from, probe_at;
    uint64_t done_at;           /* when both ranks had delivered all */
    bool failed;
} seen_t;

/* Rank 0 starts its operations back to back, nops0 of them; rank 1
 * starts nops1, the j-th gap(j) after its previous one ended. The run
 * ends at rank 0's first probe, or when nothing is left to do, or at
 * `limit` of virtual time. */
static bool run(world_t *w, uint32_t nops0, uint32_t nops1,
                uint64_t (*gap)(uint32_t j, void *arg), void *arg,
                uint64_t limit, seen_t *seen)
{
    *seen = (seen_t){0};
    uint64_t probes0 = probes_sent(w, 0);
    uint64_t idle1_at = ftc_lb_now(w->lb);  /* when rank 1 last went idle */
    bool was_busy1 = false;
    for (;;) {
        uint64_t now = ftc_lb_now(w->lb);
        if (seen->done_at == 0 && w->rs[0].delivered == nops0
            && w->rs[1].delivered == nops1)
            seen->done_at = now;
        if (!w->rs[0].busy && w->rs[0].started < nops0) {
            seen->wait_from = now;
            if (!start(w, 0))
                return false;
        }
        if (was_busy1 && !w->rs[1].busy)
            idle1_at = now;
        was_busy1 = w->rs[1].busy;
        uint64_t until = limit;
        if (!w->rs[1].busy && w->rs[1].started < nops1) {
            uint64_t at = idle1_at + gap(w->rs[1].started, arg);
            if (now >= at) {
                if (!start(w, 1))
                    return false;
                was_busy1 = true;
                continue;
            }
            until = at;
        }
        if (ftc_lb_run_until(w->lb, until, 1) == 0) {
            if (until == limit)
                break;      /* nothing left before the limit */
            continue;       /* the clock moved to rank 1's next start */
        }
        uint32_t src, dest;
        if (ftc_lb_last_arrival(w->lb, &src, &dest) && src == 1 && dest == 0)
            seen->last_word = ftc_lb_now(w->lb);
        if (probes_sent(w, 0) != probes0) {
            seen->probe_at = ftc_lb_now(w->lb);
            break;
        }
    }
    seen->failed = ftc_context_is_failed(w->ctx[0], 1)
                   || ftc_context_is_failed(w->ctx[1], 0);
    return true;
}

static const char *algo_name(ftc_allreduce_algo_t a)
{
    return a == FTC_ALLREDUCE_EXCHANGE ? "exchange" : "reduce+bcast";
}

/* silent: 4 operations together, rank 1's last one started `phase` ns
 * after it went idle, then rank 0 alone starts a fifth. */
static uint64_t silent_gap(uint32_t j, void *arg)
{
    return j == 3 ? *(uint64_t *)arg : 0;
}

static void test_silent(ftc_allreduce_algo_t algo)
{
    uint64_t late_min = UINT64_MAX, late_max = 0;
    for (uint32_t step = 0; step < SWEEP_STEPS; step++) {
        world_t w;
        if (!world_init(&w, algo)) {
            world_free(&w);
            return;
        }
        uint64_t phase = (uint64_t)step * (2 * P_NS) / SWEEP_STEPS;
        seen_t s;
        bool ok = run(&w, 5, 4, silent_gap, &phase,
                      ftc_lb_now(w.lb) + 8 * S_NS, &s);
        world_free(&w);
        if (!ok)
            return;
        if (!CHECK_MSG(s.probe_at != 0 && s.last_word != 0,
                       "%s phase %" PRIu64 ": no probe of the silent rank "
                       "(last word at %" PRIu64 ")", algo_name(algo), phase,
                       s.last_word))
            return;
        uint64_t from = s.last_word > s.wait_from ? s.last_word : s.wait_from;
        if (!CHECK_MSG(s.probe_at >= s.last_word + S_NS,
                       "%s phase %" PRIu64 ": suspected %" PRIu64 " ns after "
                       "its last word, before the suspect timeout %u",
                       algo_name(algo), phase, s.probe_at - s.last_word,
                       S_NS))
            return;
        if (!CHECK_MSG(s.probe_at <= from + S_NS + P_NS,
                       "%s phase %" PRIu64 ": suspected %" PRIu64 " ns after "
                       "the later of its last word and the wait's start, "
                       "past S + S/%u = %u", algo_name(algo), phase,
                       s.probe_at - from, FTC_WATCH_CHECKS, S_NS + P_NS))
            return;
        uint64_t late = s.probe_at - from - S_NS;
        late_min = late < late_min ? late : late_min;
        late_max = late > late_max ? late : late_max;
    }
    /* The sweep met the check at once and a whole period late. */
    CHECK_MSG(late_min < P_NS / 8 && late_max > P_NS * 7 / 8,
              "%s: lateness past S only in [%" PRIu64 ", %" PRIu64 "] ns "
              "over the sweep: the last words did not cover the check "
              "period %u", algo_name(algo), late_min, late_max, P_NS);
}

/* steady: gaps from 0.5 S to 0.95 S, in an order that jumps about. */
static uint64_t steady_gap(uint32_t j, void *arg)
{
    (void)arg;
    return S_NS / 2 + (uint64_t)((j * 37u) % 46u) * (S_NS / 100);
}

static void test_steady(ftc_allreduce_algo_t algo)
{
    world_t w;
    if (!world_init(&w, algo)) {
        world_free(&w);
        return;
    }
    const uint32_t nops = 64;
    uint64_t t0 = ftc_lb_now(w.lb);
    seen_t s;
    if (run(&w, nops, nops, steady_gap, NULL, t0 + 100 * S_NS, &s)) {
        CHECK_MSG(s.probe_at == 0,
                  "%s: the live rank 1 probed at %" PRIu64 " ns, %" PRIu64
                  " ns after its last word", algo_name(algo),
                  s.probe_at - t0, s.probe_at - s.last_word);
        CHECK_MSG(!s.failed, "%s: a live rank declared failed",
                  algo_name(algo));
        CHECK_MSG(s.done_at > t0 + 30 * (uint64_t)S_NS,
                  "%s: the stream lasted only %" PRIu64 " ns",
                  algo_name(algo), s.done_at - t0);
        CHECK_EQ(probes_sent(&w, 1), 0u);
        for (uint32_t r = 0; r < 2; r++) {
            CHECK_EQ(w.rs[r].delivered, nops);
            for (uint32_t op = 0; op < w.rs[r].delivered; op++)
                if (!CHECK_MSG(w.rs[r].status[op] == FTC_OK
                                   && w.rs[r].out[op] == 3,
                               "%s: rank %u op %u: %s, %" PRId64,
                               algo_name(algo), r, op,
                               ftc_strerror(w.rs[r].status[op]),
                               w.rs[r].out[op]))
                    break;
        }
    }
    world_free(&w);
}

int main(void)
{
    const ftc_allreduce_algo_t algos[] = {FTC_ALLREDUCE_EXCHANGE,
                                          FTC_ALLREDUCE_REDUCE_BCAST};
    for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
        test_steady(algos[i]);
        test_silent(algos[i]);
    }
    return check_report();
}
