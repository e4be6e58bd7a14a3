/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Uniform allreduce (ftc_coll_args_t.uniform, lib/algo/ulfm/uniform.c)
 * over failure schedules on the loopback backend, beside the plain
 * allreduce on the same schedules:
 *
 *   termination   every rank that did not crash delivers, once, FTC_OK or
 *                 FTC_EPROC_FAILED;
 *   uniform       every rank that delivered FTC_OK, one that crashed
 *                 right after included, delivered the same value; and if
 *                 any rank delivered FTC_OK, every live rank did;
 *   validity      each rank contributes its own bit (OR), so the value
 *                 names its contributors: every live rank's bit is in it
 *                 and no bit beyond the ranks (A4);
 *   no failure    FTC_OK everywhere, every bit;
 *   bad input     uniform = 2, with bcast or reduce, with checked mode:
 *                 FTC_EINVAL; with another family: FTC_ENOTSUP; a
 *                 refused call keeps its two places in the sequence;
 *   absent member with a timeout: every caller ends (not FTC_OK), none
 *                 waits in the agreement for ever.
 *
 * The plain allreduce runs every schedule too, and the same uniform check
 * counts its violations: they must occur (a rank delivers and crashes
 * with a value the survivors never deliver), or the schedules did not
 * exercise what uniform mode is for.
 *
 * Schedules: every crash set of at most two ranks, each before the
 * operation or right after any of its sends, for n <= MAX_N (f = 2),
 * with the transport reporting deaths; then seeded random schedules up
 * to n = 256 with f = 2 .. 4 and up to f crashes, the first roots more
 * often, jitter, keepalives alone a quarter of the time, and half of
 * them with a bcast correction that leaves members behind a failed root
 * (so that members hold different roots' values, and the uniform mode's
 * FTC_EPROC_FAILED path runs), a quarter with rank 0 invalidating the
 * group as the allreduce starts (then FTC_EINVALIDATED is allowed too,
 * and the all-or-none rule for FTC_OK still holds).
 *
 *   test_uniform_allreduce [--max-n N] [--random RUNS] [--seed S]
 *   test_uniform_allreduce --one N SEED DETECT r:k[,r:k...] [JITTER [F [OPP [INV]]]]
 *   test_uniform_allreduce --measure
 * --one replays a schedule (k = 0: before the operation); --measure
 * prints the failure-free latency (virtual) and messages of both modes
 * for n = 16 .. 1024 (docs/ulfm.md's table).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll/mitigation.h"

#include "ulfm_args.h"
#include "ulfm_world.h"

#define MAX_CRASH 4

typedef struct schedule {
    uint32_t n;
    uint64_t seed;
    int detect;
    uint64_t jitter_ns;
    uint32_t f;          /* 0: 2 (n - 1 when smaller) */
    int opportunistic;   /* 1: the bcast's opportunistic correction at
                            distance 1, which leaves more members behind
                            a root that fails mid-broadcast */
    int invalidate;      /* 1: rank 0 invalidates the group as the
                            allreduce starts (FTC_EINVALIDATED allowed) */
    uint32_t ncrash;
    ulfm_crash_t crash[MAX_CRASH];
} schedule_t;

typedef struct rank_result {
    int delivered;
    int status;
    uint64_t value;
    uint64_t at_ns;
} rank_result_t;

typedef struct outcome {
    uint64_t messages, last_ns;
    uint32_t fired, delivered_then_crashed, proc_failed;
    int uniform_violations; /* (counted for the plain mode too) */
} outcome_t;

static rank_result_t *results;
static ftc_lb_world_t *cur_world;
static int violations;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_result_t *r = &results[(uintptr_t)arg];
    r->delivered++;
    r->status = c->status;
    r->at_ns = ftc_lb_now(cur_world);
    if (c->status == FTC_OK && c->recvbuf != NULL)
        memcpy(&r->value, c->recvbuf, sizeof(r->value));
}

static void print_schedule(const schedule_t *s, FILE *f)
{
    fprintf(f, "--one %" PRIu32 " %" PRIu64 " %d ", s->n, s->seed, s->detect);
    if (s->ncrash == 0)
        fputs("-", f);
    for (uint32_t i = 0; i < s->ncrash; i++)
        fprintf(f, "%s%" PRIu32 ":%" PRIu64, i ? "," : "", s->crash[i].rank,
                s->crash[i].k);
    if (s->jitter_ns || s->f || s->opportunistic || s->invalidate)
        fprintf(f, " %" PRIu64 " %u %d %d", s->jitter_ns, s->f,
                s->opportunistic, s->invalidate);
    fputc('\n', f);
}

/* Only the uniform mode's findings are violations; the plain mode's are
 * counted (outcome_t.uniform_violations). */
#define VIOLATION(report, s, ...)                                              \
    do {                                                                       \
        if (report) {                                                          \
            violations++;                                                      \
            if (violations <= 20) {                                            \
                fprintf(stderr, "VIOLATION: ");                                \
                fprintf(stderr, __VA_ARGS__);                                  \
                fprintf(stderr, "\n  replay: ");                               \
                print_schedule(s, stderr);                                     \
            }                                                                  \
        }                                                                      \
    } while (0)

static uint64_t bit_of(uint32_t r)
{
    return UINT64_C(1) << (r % 64);
}

static outcome_t run_schedule(const schedule_t *s, bool uniform)
{
    uint32_t n = s->n;
    outcome_t out = {0};
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = s->seed;
    lc.jitter_ns = s->jitter_ns;
    if (!s->detect)
        lc.detect_delay_ns = UINT64_MAX;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.seed = s->seed;
    ulfm_world_t world;
    ulfm_world_create(&lc, &cfg, 7, 0, &world);
    cur_world = world.lb;
    uint64_t *in = calloc(n, sizeof(*in)), *outv = calloc(n, sizeof(*outv));
    results = calloc(n, sizeof(*results));
    if (!in || !outv || !results)
        abort();
    ulfm_world_inject(&world, s->crash, s->ncrash);
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    if (s->opportunistic) {
        cp.correction = FTC_CORRECTION_OPPORTUNISTIC;
        cp.distance = 1;
    }
    uint32_t f = s->f ? s->f : 2;
    for (uint32_t r = 0; r < n; r++) {
        if (world.before[r])
            continue;
        in[r] = bit_of(r);
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.f = n > f ? f : n - 1;
        a.dtype = FTC_UINT64;
        a.op = FTC_BOR;
        a.count = 1;
        a.sendbuf = &in[r];
        a.recvbuf = &outv[r];
        a.deliver = on_deliver;
        a.deliver_arg = (void *)(uintptr_t)r;
        a.params = &cp;
        a.uniform = uniform ? 1 : 0;
        int rc = ftc_init_allreduce(world.g[r], &a, NULL);
        if (rc != FTC_OK)
            VIOLATION(true, s, "rank %u: ftc_init_allreduce returned %s", r,
                      ftc_err_name(rc));
    }
    if (s->invalidate && !world.before[0]
        && ftc_group_invalidate(world.g[0]) != FTC_OK)
        VIOLATION(true, s, "rank 0: invalidate refused");
    ftc_lb_run(world.lb, UINT64_MAX);
    out.messages = ftc_lb_messages_sent(world.lb);
    for (uint32_t i = 0; i < s->ncrash; i++)
        out.fired += ftc_lb_is_crashed(world.lb, s->crash[i].rank) != 0;

    int ref = -1;
    bool any_ok = false;
    for (uint32_t r = 0; r < n; r++) {
        const rank_result_t *x = &results[r];
        bool dead = ftc_lb_is_crashed(world.lb, r);
        if (x->delivered && x->at_ns > out.last_ns)
            out.last_ns = x->at_ns;
        if (x->delivered > 1)
            VIOLATION(true, s, "rank %u delivered %d times", r, x->delivered);
        if (dead && x->delivered)
            out.delivered_then_crashed++;
        if (!dead && x->delivered != 1)
            VIOLATION(true, s, "termination: live rank %u delivered %d times",
                      r, x->delivered);
        if (!dead && x->delivered && x->status != FTC_OK
            && x->status != FTC_EPROC_FAILED
            && !(s->invalidate && x->status == FTC_EINVALIDATED))
            VIOLATION(uniform, s, "rank %u delivered %s", r,
                      ftc_err_name(x->status));
        if (x->delivered && x->status == FTC_EPROC_FAILED)
            out.proc_failed++;
        if (x->delivered && x->status == FTC_OK) {
            any_ok = true;
            if (ref < 0)
                ref = (int)r;
        }
    }
    if (ref >= 0) {
        uint64_t v = results[ref].value;
        for (uint32_t r = 0; r < n; r++) {
            const rank_result_t *x = &results[r];
            bool dead = ftc_lb_is_crashed(world.lb, r);
            if (x->delivered && x->status == FTC_OK && x->value != v) {
                out.uniform_violations++;
                VIOLATION(uniform, s, "uniform: rank %u (%s) delivered %#"
                          PRIx64 ", rank %d %#" PRIx64, r,
                          dead ? "crashed" : "alive", x->value, ref, v);
            }
            if (any_ok && !dead && x->delivered && x->status != FTC_OK) {
                out.uniform_violations++;
                VIOLATION(uniform, s, "uniform: rank %d delivered FTC_OK, "
                          "live rank %u %s", ref, r, ftc_err_name(x->status));
            }
            if (!dead && !(v & bit_of(r)))
                VIOLATION(uniform, s, "validity: live rank %u's input is "
                          "not in %#" PRIx64, r, v);
        }
        if (n < 64 && (v >> n) != 0)
            VIOLATION(true, s, "validity: bits beyond the ranks in %#" PRIx64,
                      v);
    }
    if (s->ncrash == 0 && !s->invalidate && uniform
        && (ref < 0 || out.proc_failed > 0
            || results[ref].value != (n >= 64 ? UINT64_MAX
                                              : (UINT64_C(1) << n) - 1)))
        VIOLATION(true, s, "no failure, yet not every rank's input");

    ulfm_world_destroy(&world);
    free(results);
    results = NULL;
    free(in);
    free(outv);
    return out;
}

typedef struct tally {
    uint64_t runs, fired, delivered_then_crashed, proc_failed;
    uint64_t plain_violations, plain_runs_violating;
} tally_t;

static void run_both(const schedule_t *s, tally_t *t)
{
    outcome_t u = run_schedule(s, true);
    outcome_t p = run_schedule(s, false);
    t->runs++;
    t->fired += u.fired;
    t->delivered_then_crashed += u.delivered_then_crashed;
    t->proc_failed += u.proc_failed;
    t->plain_violations += (uint64_t)p.uniform_violations;
    t->plain_runs_violating += p.uniform_violations > 0;
}

/* Sends of each rank in a failure-free uniform allreduce. */
static void sends_per_rank(uint32_t n, uint64_t *sends)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    schedule_t s = {.n = n, .detect = 1};
    (void)s;
    ulfm_world_t world;
    ulfm_world_create(&lc, NULL, 7, 0, &world);
    cur_world = world.lb;
    uint64_t in[16], outv[16];
    results = calloc(n, sizeof(*results));
    if (!results)
        abort();
    for (uint32_t r = 0; r < n; r++) {
        in[r] = bit_of(r);
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.f = n > 2 ? 2 : n - 1;
        a.dtype = FTC_UINT64;
        a.op = FTC_BOR;
        a.count = 1;
        a.sendbuf = &in[r];
        a.recvbuf = &outv[r];
        a.deliver = on_deliver;
        a.deliver_arg = (void *)(uintptr_t)r;
        a.uniform = 1;
        if (ftc_init_allreduce(world.g[r], &a, NULL) != FTC_OK)
            abort();
    }
    ftc_lb_run(world.lb, UINT64_MAX);
    for (uint32_t r = 0; r < n; r++)
        sends[r] = ftc_lb_rank_messages_sent(world.lb, r);
    ulfm_world_destroy(&world);
    free(results);
    results = NULL;
}

static void exhaustive(uint32_t n, tally_t *t)
{
    uint64_t sends[16];
    sends_per_rank(n, sends);
    schedule_t s = {.n = n, .detect = 1};
    run_both(&s, t);
    for (uint32_t a = 0; a < n; a++)
        for (uint64_t ka = 0; ka <= sends[a] + 2; ka++) {
            s = (schedule_t){.n = n, .detect = 1, .ncrash = 1, .seed = ka};
            s.crash[0] = (ulfm_crash_t){a, ka};
            run_both(&s, t);
        }
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++)
            for (uint64_t ka = 0; ka <= sends[a] + 2; ka++)
                for (uint64_t kb = 0; kb <= sends[b] + 2; kb++) {
                    s = (schedule_t){.n = n, .detect = 1, .ncrash = 2,
                                     .seed = ka * 31 + kb};
                    s.crash[0] = (ulfm_crash_t){a, ka};
                    s.crash[1] = (ulfm_crash_t){b, kb};
                    run_both(&s, t);
                }
}

static void random_runs(uint64_t runs, uint64_t seed, tally_t *t)
{
    static const uint32_t sizes[] = {16, 33, 64, 100, 256};
    uint64_t x = seed;
    for (uint64_t i = 0; i < runs; i++) {
        schedule_t s = {0};
        s.n = sizes[ulfm_splitmix(&x) % (sizeof(sizes) / sizeof(sizes[0]))];
        s.seed = ulfm_splitmix(&x);
        s.detect = (int)(ulfm_splitmix(&x) % 4 != 0);
        s.jitter_ns = ulfm_splitmix(&x) % 2 ? ulfm_splitmix(&x) % 5000 : 0;
        s.f = 2 + (uint32_t)(ulfm_splitmix(&x) % 3);
        s.opportunistic = ulfm_splitmix(&x) % 2 == 0;
        s.invalidate = ulfm_splitmix(&x) % 4 == 0;
        s.ncrash = (uint32_t)(ulfm_splitmix(&x) % (s.f + 1)); /* <= f */
        for (uint32_t c = 0; c < s.ncrash; c++) {
            uint32_t r = ulfm_fresh_rank(&x, s.crash, c, s.n);
            /* The first roots, more often than the rest. */
            if (ulfm_splitmix(&x) % 2 == 0 && !ulfm_crash_has(s.crash, c, c))
                r = c;
            /* Within the allreduce's sends (a root mid-broadcast), or
             * up to past the agreement's, to crash ranks that delivered. */
            uint64_t span = ulfm_splitmix(&x) % 2 ? 12 : 40;
            s.crash[c] = (ulfm_crash_t){r, ulfm_splitmix(&x) % span};
        }
        run_both(&s, t);
    }
}

/* Failure-free latency and messages of both modes, n = 16 .. 1024. */
static int measure(void)
{
    printf("| n | plain allreduce | messages | uniform allreduce | messages "
           "| ratio |\n|---|---|---|---|---|---|\n");
    for (uint32_t n = 16; n <= 1024; n *= 4) {
        schedule_t s = {.n = n, .detect = 1};
        outcome_t p = run_schedule(&s, false);
        outcome_t u = run_schedule(&s, true);
        printf("| %u | %.1f µs | %" PRIu64 " | %.1f µs | %" PRIu64
               " | %.2f |\n", n, (double)p.last_ns / 1000, p.messages,
               (double)u.last_ns / 1000, u.messages,
               (double)u.last_ns / (double)p.last_ns);
    }
    return violations ? 1 : 0;
}

/* Bad input: each refused with its code, and a refused uniform call
 * keeps its two places in the sequence (the members whose call went
 * through run two operations). */
static void bad_input(void)
{
    schedule_t s = {.n = 1};
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = 1;
    ulfm_world_t world;
    ulfm_world_create(&lc, NULL, 7, 0, &world);
    cur_world = world.lb;
    results = calloc(1, sizeof(*results));
    if (!results)
        abort();
    uint64_t in = 1, outv = 0, seq = UINT64_MAX;
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.f = 0;
    a.dtype = FTC_UINT64;
    a.op = FTC_BOR;
    a.count = 1;
    a.sendbuf = &in;
    a.recvbuf = &outv;
    a.deliver = on_deliver;
    a.deliver_arg = (void *)(uintptr_t)0;
    struct {
        const char *what;
        int coll; /* 0 allreduce, 1 bcast, 2 reduce */
        uint32_t uniform, checked;
        ftc_algo_t algo;
        int want;
    } cases[] = {
        {"uniform = 2", 0, 2, 0, FTC_ALGO_CORRECTED, FTC_EINVAL},
        {"uniform bcast", 1, 1, 0, FTC_ALGO_CORRECTED, FTC_EINVAL},
        {"uniform reduce", 2, 1, 0, FTC_ALGO_CORRECTED, FTC_EINVAL},
        {"uniform and checked", 0, 1, 1, FTC_ALGO_CORRECTED, FTC_EINVAL},
        {"uniform ftco", 0, 1, 0, FTC_ALGO_FTCO, FTC_ENOTSUP},
    };
    uint64_t expect_seq = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        a.uniform = cases[i].uniform;
        a.checked = cases[i].checked;
        a.algo = cases[i].algo;
        int rc = cases[i].coll == 0   ? ftc_init_allreduce(world.g[0], &a, NULL)
                 : cases[i].coll == 1 ? ftc_init_bcast(world.g[0], &a, NULL)
                                      : ftc_init_reduce(world.g[0], &a, NULL);
        if (rc != cases[i].want)
            VIOLATION(true, &s, "bad input %s: %s, expected %s",
                      cases[i].what, ftc_err_name(rc),
                      ftc_err_name(cases[i].want));
        expect_seq += 1 + (cases[i].uniform == 1) + (cases[i].checked == 1);
    }
    /* Then a good uniform call: its place, and it works alone. */
    a.uniform = 1;
    a.checked = 0;
    a.algo = FTC_ALGO_CORRECTED;
    int rc = ftc_init_allreduce(world.g[0], &a, &seq);
    if (rc != FTC_OK || seq != expect_seq)
        VIOLATION(true, &s, "uniform call after refused ones: %s at seq %"
                  PRIu64 ", expected FTC_OK at %" PRIu64, ftc_err_name(rc),
                  seq, expect_seq);
    ftc_lb_run(world.lb, UINT64_MAX);
    if (results[0].delivered != 1 || results[0].status != FTC_OK
        || results[0].value != 1)
        VIOLATION(true, &s, "uniform allreduce of one rank: delivered %d, "
                  "%s, %#" PRIx64, results[0].delivered,
                  ftc_err_name(results[0].status), results[0].value);
    ulfm_world_destroy(&world);
    free(results);
    results = NULL;
}

/* A member that never calls, with a timeout: the others' allreduce
 * gives up, and so must their agreement, which would otherwise wait for
 * the absent member's contribution for ever. Every caller delivers once,
 * not FTC_OK, and the run ends. */
static void absent_member(void)
{
    const uint32_t n = 4;
    schedule_t s = {.n = n};
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    ulfm_world_t world;
    ulfm_world_create(&lc, NULL, 7, 0, &world);
    cur_world = world.lb;
    results = calloc(n, sizeof(*results));
    uint64_t in[4], outv[4];
    if (!results)
        abort();
    for (uint32_t r = 0; r + 1 < n; r++) {
        in[r] = bit_of(r);
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.dtype = FTC_UINT64;
        a.op = FTC_BOR;
        a.count = 1;
        a.sendbuf = &in[r];
        a.recvbuf = &outv[r];
        a.deliver = on_deliver;
        a.deliver_arg = (void *)(uintptr_t)r;
        a.uniform = 1;
        a.timeout_ns = 5000000;
        if (ftc_init_allreduce(world.g[r], &a, NULL) != FTC_OK)
            VIOLATION(true, &s, "absent member: rank %u refused", r);
    }
    ftc_lb_run(world.lb, UINT64_MAX);
    for (uint32_t r = 0; r + 1 < n; r++)
        if (results[r].delivered != 1 || results[r].status == FTC_OK)
            VIOLATION(true, &s, "absent member: rank %u delivered %d times, "
                      "%s", r, results[r].delivered,
                      ftc_err_name(results[r].status));
    ulfm_world_destroy(&world);
    free(results);
    results = NULL;
}

static int parse_one(int argc, char **argv)
{
    if (argc < 6)
        return 2;
    schedule_t s = {0};
    s.n = (uint32_t)strtoul(argv[2], NULL, 10);
    s.seed = strtoull(argv[3], NULL, 10);
    s.detect = atoi(argv[4]);
    if (strcmp(argv[5], "-") != 0) {
        char *p = argv[5];
        while (*p && s.ncrash < MAX_CRASH) {
            s.crash[s.ncrash].rank = (uint32_t)strtoul(p, &p, 10);
            if (*p++ != ':')
                return 2;
            s.crash[s.ncrash++].k = strtoull(p, &p, 10);
            if (*p == ',')
                p++;
        }
    }
    if (argc > 6)
        s.jitter_ns = strtoull(argv[6], NULL, 10);
    if (argc > 7)
        s.f = (uint32_t)strtoul(argv[7], NULL, 10);
    if (argc > 8)
        s.opportunistic = atoi(argv[8]);
    if (argc > 9)
        s.invalidate = atoi(argv[9]);
    if (s.n == 0 || s.n > 100000)
        return 2;
    for (int uniform = 1; uniform >= 0; uniform--) {
        outcome_t o = run_schedule(&s, uniform);
        printf("%s: messages %" PRIu64 ", last delivery at %" PRIu64
               " ns (virtual), fired %u, delivered then crashed %u, "
               "FTC_EPROC_FAILED %u, uniform violations %d\n",
               uniform ? "uniform" : "plain", o.messages, o.last_ns, o.fired,
               o.delivered_then_crashed, o.proc_failed, o.uniform_violations);
    }
    return violations ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--one") == 0)
        return parse_one(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--measure") == 0)
        return measure();
    ulfm_args_t args = {.max_n = 6, .runs = 200, .seed = 1};
    int bad = ulfm_args_parse(argc, argv, "[--max-n N (1 to 16)] [--random "
                              "RUNS] [--seed S] | --one N SEED DETECT r:k,... "
                              "| --measure", &args);
    if (bad)
        return bad;
    bad_input();
    absent_member();
    tally_t ex = {0}, rnd = {0};
    for (uint32_t n = 1; n <= args.max_n; n++)
        exhaustive(n, &ex);
    random_runs(args.runs, args.seed, &rnd);
    printf("exhaustive n <= %u: %" PRIu64 " schedules, %" PRIu64
           " crashes happened, %" PRIu64 " ranks delivered and then crashed, %"
           PRIu64 " FTC_EPROC_FAILED deliveries; plain mode on the same: %"
           PRIu64 " schedules violate uniform agreement\n",
           args.max_n, ex.runs, ex.fired, ex.delivered_then_crashed,
           ex.proc_failed, ex.plain_runs_violating);
    printf("random (seed %" PRIu64 "): %" PRIu64 " schedules up to n = 256, %"
           PRIu64 " crashes happened, %" PRIu64 " ranks delivered and then "
           "crashed, %" PRIu64 " FTC_EPROC_FAILED deliveries; plain mode: %"
           PRIu64 " violating\n",
           args.seed, rnd.runs, rnd.fired, rnd.delivered_then_crashed,
           rnd.proc_failed, rnd.plain_runs_violating);
    /* The schedules must have exercised what uniform mode is for. */
    if (args.max_n >= 4 && ex.plain_runs_violating == 0) {
        fprintf(stderr, "the plain allreduce never violated uniform agreement: "
                        "the schedules did not exercise uniform mode\n");
        violations++;
    }
    if (args.runs >= 200 && rnd.proc_failed == 0) {
        fprintf(stderr, "no rank delivered FTC_EPROC_FAILED: the "
                        "disagreement path did not run\n");
        violations++;
    }
    if (args.max_n >= 4 && ex.delivered_then_crashed == 0) {
        fprintf(stderr, "no rank delivered and then crashed\n");
        violations++;
    }
    printf("%s: %d violations\n", violations ? "FAIL" : "ok", violations);
    printf("%" PRIu64 " passed, %d failed\n",
           violations ? 0 : ex.runs + rnd.runs, violations);
    return violations ? 1 : 0;
}
