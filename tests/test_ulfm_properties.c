/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agreement's properties (ftcoll/mitigation.h, docs/ulfm.md) over
 * failure schedules on the loopback backend:
 *
 *   termination   every rank that did not crash delivers, once, FTC_OK;
 *   uniform       every rank that delivered, one that crashed right after
 *                 included, delivered the same value and failed set;
 *   validity      each rank contributes every bit but its own ("allbut"),
 *                 so the value names its contributors: every member
 *                 outside the failed set contributed, bits of non-members
 *                 stay set, and every member in the failed set crashed;
 *   cost          with no failure, the failure-free round's messages:
 *                 two recursive-doubling exchanges, 2 p log2 p + 4 (n - p)
 *                 with p the largest power of two <= n (rd2; rd4, radix
 *                 k = 4: 2 p (k - 1) log_k p + 4 (n - p) with p the
 *                 largest power of k <= n; tree: four waves of n - 1).
 *
 * Schedules: exhaustive for n <= 9 (no crash; every rank crashing before
 * the operation, right after each of its sends, or as it delivers; every
 * pair of ranks, each at any of those points), with the transport reporting
 * deaths and with the core's keepalives alone; then
 * seeded random schedules up to n = 1024 with up to 10 crashes, jitter
 * and both detection modes. Every injected crash is checked to have
 * happened (a schedule whose crash could not fire is counted apart).
 *
 *   test_ulfm_properties [--max-n N] [--random RUNS] [--seed S]
 *                        [--agree-round rd2|rd4|tree]
 *   test_ulfm_properties ... --expect-uniform-violation
 *   test_ulfm_properties --one N SEED DETECT r:k[,r:k...] [JITTER [NINV [NOPS]]]
 *                        [--agree-round rd2|rd4|tree]
 * replays one schedule (k = 0: crashed before the operation; k = d: as it
 * delivers, before it sends anything more; NINV: ranks
 * 0..NINV-1 invalidate the group as the agreement starts, which random
 * schedules do a third of the time: the agreement must not notice;
 * NOPS 2: two agreements in flight at once, each checked, which random
 * schedules do a quarter of the time). A failure prints the --one line
 * that replays it. --expect-uniform-violation (last) turns the verdict
 * round, for the agreement's mutants (tests/meson.build): success only if
 * uniform agreement was violated. --agree-round sets the agreement's
 * failure-free round on every rank's group (ftc_group_set_ulfm_params;
 * default rd2), so one build checks each.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"

#include "ulfm_args.h"
#include "ulfm_world.h"

#define MAX_CRASH 16

/* A crash point: as the rank delivers, from its deliver callback. A
 * member whose last send comes before its delivery (a round that ends
 * with the messages it receives) can only crash "right after it
 * delivered" so; the crash points after sends would miss it. */
#define AT_DELIVERY UINT64_MAX

typedef struct schedule {
    uint32_t n;
    uint64_t seed;
    int detect;          /* 1: the transport reports deaths; 0: keepalives */
    uint64_t jitter_ns;
    uint32_t nops;       /* agreements in flight at once: 1 or 2 (0: 1) */
    uint32_t ninv;       /* ranks 0..ninv-1 invalidate the group as the
                            agreement starts: it must not matter */
    uint32_t ncrash;
    ulfm_crash_t crash[MAX_CRASH];
} schedule_t;

typedef struct rank_result {
    uint64_t at_ns;      /* virtual time of the delivery */
    int delivered;
    int status;
    uint64_t value;
    uint32_t nfailed;
    uint32_t *failed;
} rank_result_t;

typedef struct outcome {
    uint64_t last_ns;            /* the last delivery, virtual time */
    uint32_t crashed;            /* ranks crashed at the end */
    uint32_t fired;              /* injected crashes that happened */
    uint32_t delivered_then_crashed;
    uint64_t messages;
} outcome_t;

/* The failure-free round every rank's group runs (--agree-round). */
static ftc_agree_round_t agree_round = FTC_AGREE_ROUND_RD2;

static rank_result_t *results;
static ftc_lb_world_t *cur_world;
static const struct schedule *cur_schedule; /* NULL: no crash to inject */

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_result_t *r = &results[(uintptr_t)arg];
    if (cur_schedule != NULL) {
        uint32_t rank = (uint32_t)((uintptr_t)arg % cur_schedule->n);
        for (uint32_t i = 0; i < cur_schedule->ncrash; i++)
            if (cur_schedule->crash[i].rank == rank
                && cur_schedule->crash[i].k == AT_DELIVERY)
                ftc_lb_crash(cur_world, rank);
    }
    r->at_ns = ftc_lb_now(cur_world);
    r->delivered++;
    r->status = c->status;
    if (c->recvbuf != NULL)
        memcpy(&r->value, c->recvbuf, sizeof(r->value));
    free(r->failed);
    r->failed = NULL;
    r->nfailed = c->nfailed;
    if (c->nfailed > 0) {
        r->failed = malloc(sizeof(uint32_t) * c->nfailed);
        if (r->failed == NULL)
            abort();
        memcpy(r->failed, c->failed, sizeof(uint32_t) * c->nfailed);
    }
}

static uint64_t allbut(uint32_t r)
{
    return ~(UINT64_C(1) << (r % 64));
}

static void print_schedule(const schedule_t *s, FILE *f)
{
    fprintf(f, "--one %" PRIu32 " %" PRIu64 " %d ", s->n, s->seed, s->detect);
    if (s->ncrash == 0)
        fputs("-", f);
    for (uint32_t i = 0; i < s->ncrash; i++) {
        fprintf(f, "%s%" PRIu32 ":", i ? "," : "", s->crash[i].rank);
        if (s->crash[i].k == AT_DELIVERY)
            fputc('d', f);
        else
            fprintf(f, "%" PRIu64, s->crash[i].k);
    }
    if (s->jitter_ns || s->ninv || s->nops == 2)
        fprintf(f, " %" PRIu64 " %u %u", s->jitter_ns, s->ninv, s->nops);
    if (agree_round != FTC_AGREE_ROUND_RD2)
        fprintf(f, " --agree-round %s", ftc_agree_round_name(agree_round));
    fputc('\n', f);
}

static int violations;
static int uniform_violations;

#define VIOLATION(s, ...)                                                      \
    do {                                                                       \
        violations++;                                                          \
        if (violations <= 20) {                                                \
            fprintf(stderr, "VIOLATION: ");                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n  replay: ");                                   \
            print_schedule(s, stderr);                                         \
        }                                                                      \
    } while (0)

/* Messages of a failure-free agreement of n ranks (early.c): two rounds
 * of log_k p exchanges among the first p (the largest power of the radix
 * k <= n), k - 1 partners each, and per extra rank two messages in and
 * two out; in tree waves (agree.c), one message per member but the root
 * in each of the four waves. */
static uint64_t failure_free_messages(uint32_t n)
{
    if (agree_round == FTC_AGREE_ROUND_TREE)
        return 4 * (uint64_t)(n - 1);
    uint64_t radix = agree_round == FTC_AGREE_ROUND_RD4 ? 4 : 2;
    uint64_t k = radix < n ? radix : n;
    uint64_t p, l;
    for (k = k < 2 ? 2 : k;; k--) {
        for (p = 1, l = 0; p <= n / k; p *= k)
            l++;
        if (k == 2 || (l + 2) * (k - 1) <= 64)
            break;
    }
    return 2 * p * l * (k - 1) + 4 * (n - p);
}

static bool in_list(const uint32_t *v, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Run one schedule and check every property; returns what happened. */
static outcome_t run_schedule(const schedule_t *s)
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
    ulfm_world_set_round(&world, agree_round);
    ftc_lb_world_t *w = world.lb;
    cur_world = w;
    ftc_group_t **g = world.g;
    const bool *before = world.before;
    uint32_t nops = s->nops == 2 ? 2 : 1;
    uint64_t *val = calloc((size_t)n * nops, sizeof(*val));
    results = calloc((size_t)n * nops, sizeof(*results));
    if (!val || !results)
        abort();
    /* (the crashes at delivery come from on_deliver) */
    ulfm_crash_t by_sends[MAX_CRASH];
    uint32_t nby_sends = 0;
    for (uint32_t i = 0; i < s->ncrash; i++)
        if (s->crash[i].k != AT_DELIVERY)
            by_sends[nby_sends++] = s->crash[i];
    ulfm_world_inject(&world, by_sends, nby_sends);
    cur_schedule = s;
    /* (with two in flight, each rank starts both at once) */
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t op = 0; op < nops; op++) {
            if (before[r])
                continue;
            size_t i = (size_t)op * n + r;
            int rc = ftc_init_agree(g[r], allbut(r), &val[i], on_deliver,
                                    (void *)(uintptr_t)i, NULL);
            if (rc != FTC_OK)
                VIOLATION(s, "rank %u: ftc_init_agree returned %s", r,
                          ftc_err_name(rc));
        }
    for (uint32_t r = 0; r < s->ninv && r < n; r++)
        if (!before[r] && ftc_group_invalidate(g[r]) != FTC_OK)
            VIOLATION(s, "rank %u: invalidate refused", r);
    ftc_lb_run(w, UINT64_MAX);
    cur_schedule = NULL;
    out.messages = ftc_lb_messages_sent(w);

    for (uint32_t i = 0; i < s->ncrash; i++)
        out.fired += ftc_lb_is_crashed(w, s->crash[i].rank) != 0;
    for (size_t i = 0; i < (size_t)n * nops; i++)
        if (results[i].delivered && results[i].at_ns > out.last_ns)
            out.last_ns = results[i].at_ns;
    for (uint32_t op = 0; op < nops; op++) {
    const rank_result_t *res = results + (size_t)op * n;
        /* termination, and at most one delivery anywhere */
        for (uint32_t r = 0; r < n; r++) {
            bool dead = ftc_lb_is_crashed(w, r);
            out.crashed += dead;
            if (res[r].delivered > 1)
                VIOLATION(s, "rank %u delivered %d times", r, res[r].delivered);
            if (!dead && (res[r].delivered != 1 || res[r].status != FTC_OK))
                VIOLATION(s, "termination: live rank %u delivered %d times, "
                          "status %s", r, res[r].delivered,
                          ftc_err_name(res[r].status));
            if (dead && res[r].delivered)
                out.delivered_then_crashed++;
        }

        /* uniform agreement: against the first rank that delivered */
        int ref = -1;
        for (uint32_t r = 0; r < n && ref < 0; r++)
            if (res[r].delivered && res[r].status == FTC_OK)
                ref = (int)r;
        if (ref >= 0) {
            const rank_result_t *R = &res[ref];
            for (uint32_t r = 0; r < n; r++) {
                const rank_result_t *x = &res[r];
                if (!x->delivered || x->status != FTC_OK)
                    continue;
                if (x->value != R->value || x->nfailed != R->nfailed
                    || (x->nfailed > 0
                        && memcmp(x->failed, R->failed,
                                  sizeof(uint32_t) * x->nfailed) != 0)) {
                    uniform_violations++;
                    VIOLATION(s, "uniform agreement: rank %u (%s) delivered "
                              "%#" PRIx64 " with %u failed, rank %d %#" PRIx64
                              " with %u", r,
                              ftc_lb_is_crashed(w, r) ? "crashed" : "alive",
                              x->value, x->nfailed, ref, R->value, R->nfailed);
                }
            }
            /* validity */
            for (uint32_t i = 0; i < R->nfailed; i++) {
                if (R->failed[i] >= n || !ftc_lb_is_crashed(w, R->failed[i]))
                    VIOLATION(s, "validity: rank %u is in the failed set but "
                              "did not crash", R->failed[i]);
                if (i > 0 && R->failed[i - 1] >= R->failed[i])
                    VIOLATION(s, "the failed set is not sorted and distinct");
            }
            for (uint32_t r = 0; r < n; r++) {
                bool contributed = (R->value & (UINT64_C(1) << (r % 64))) == 0;
                if (!in_list(R->failed, R->nfailed, r) && !contributed)
                    VIOLATION(s, "validity: rank %u is not in the failed set, "
                              "but its contribution is not in %#" PRIx64, r,
                              R->value);
                if (n <= 64 && before[r] && contributed)
                    VIOLATION(s, "validity: rank %u crashed before the "
                              "operation, yet contributed", r);
            }
            if (n < 64 && (R->value >> n) != (UINT64_MAX >> n))
                VIOLATION(s, "validity: bits beyond the members cleared: %#"
                          PRIx64, R->value);
        }
    }
    if (s->ncrash == 0 && s->ninv == 0 && nops == 1
        && out.messages != failure_free_messages(n))
        VIOLATION(s, "cost: %" PRIu64 " messages with no failure, expected %"
                  PRIu64, out.messages, failure_free_messages(n));

    ulfm_world_destroy(&world);
    for (size_t i = 0; i < (size_t)n * nops; i++)
        free(results[i].failed);
    free(results);
    results = NULL;
    free(val);
    return out;
}

typedef struct tally {
    uint64_t runs, crashes_injected, crashes_fired, delivered_then_crashed;
    uint64_t schedules_all_fired;
} tally_t;

static void account(tally_t *t, const schedule_t *s, const outcome_t *o)
{
    t->runs++;
    t->crashes_injected += s->ncrash;
    t->crashes_fired += o->fired;
    t->delivered_then_crashed += o->delivered_then_crashed;
    t->schedules_all_fired += o->fired == s->ncrash;
}

/* Sends each rank makes in a failure-free agreement of n ranks. */
static void sends_per_rank(uint32_t n, uint64_t *sends)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    ulfm_world_t world;
    ulfm_world_create(&lc, NULL, 7, 0, &world);
    ulfm_world_set_round(&world, agree_round);
    ftc_lb_world_t *w = world.lb;
    cur_world = w;
    uint64_t *val = calloc(n, sizeof(*val));
    results = calloc(n, sizeof(*results));
    if (!val || !results)
        abort();
    for (uint32_t r = 0; r < n; r++)
        if (ftc_init_agree(world.g[r], allbut(r), &val[r], on_deliver,
                           (void *)(uintptr_t)r, NULL) != FTC_OK)
            abort();
    ftc_lb_run(w, UINT64_MAX);
    for (uint32_t r = 0; r < n; r++)
        sends[r] = ftc_lb_rank_messages_sent(w, r);
    ulfm_world_destroy(&world);
    for (uint32_t r = 0; r < n; r++)
        free(results[r].failed);
    free(results);
    results = NULL;
    free(val);
}

/* Crash point i of a rank that sends `sends` messages in a failure-free
 * run: before the operation (0), after each of its sends and two more
 * (for the resends failures cause), then as it delivers. */
static uint64_t crash_point(uint64_t i, uint64_t sends)
{
    return i <= sends + 2 ? i : AT_DELIVERY;
}

/* Every schedule of n ranks with at most two crashes, at every crash
 * point of each (crash_point). */
static void exhaustive(uint32_t n, tally_t *t)
{
    uint64_t sends[16];
    sends_per_rank(n, sends);
    schedule_t s = {.n = n, .detect = 1};
    outcome_t o = run_schedule(&s);
    account(t, &s, &o);
    for (int detect = 1; detect >= 0; detect--)
        for (uint32_t a = 0; a < n; a++)
            for (uint64_t ia = 0; ia <= sends[a] + 3; ia++) {
                uint64_t ka = crash_point(ia, sends[a]);
                s = (schedule_t){.n = n, .detect = detect, .ncrash = 1,
                                 .seed = ia};
                s.crash[0] = (ulfm_crash_t){a, ka};
                o = run_schedule(&s);
                account(t, &s, &o);
                /* Alone, a crash within the failure-free run's sends, or
                 * at the delivery every live rank makes, must happen. */
                if ((ka <= sends[a] || ka == AT_DELIVERY) && o.fired != 1)
                    VIOLATION(&s, "the injected crash did not happen");
            }
    for (int detect = 1; detect >= 0; detect--)
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++)
            for (uint64_t ia = 0; ia <= sends[a] + 3; ia++)
                for (uint64_t ib = 0; ib <= sends[b] + 3; ib++) {
                    s = (schedule_t){.n = n, .detect = detect, .ncrash = 2,
                                     .seed = ia * 31 + ib};
                    s.crash[0] = (ulfm_crash_t){a, crash_point(ia, sends[a])};
                    s.crash[1] = (ulfm_crash_t){b, crash_point(ib, sends[b])};
                    o = run_schedule(&s);
                    account(t, &s, &o);
                }
}

static void random_runs(uint64_t runs, uint64_t seed, tally_t *t)
{
    static const uint32_t sizes[] = {16, 33, 64, 100, 256, 1024};
    uint64_t x = seed;
    for (uint64_t i = 0; i < runs; i++) {
        schedule_t s = {0};
        s.n = sizes[ulfm_splitmix(&x) % (sizeof(sizes) / sizeof(sizes[0]))];
        s.seed = ulfm_splitmix(&x);
        s.detect = (int)(ulfm_splitmix(&x) % 4 != 0);
        s.jitter_ns = ulfm_splitmix(&x) % 2 ? ulfm_splitmix(&x) % 5000 : 0;
        s.ncrash = (uint32_t)(ulfm_splitmix(&x) % 11);
        s.nops = ulfm_splitmix(&x) % 4 == 0 ? 2 : 1;
        /* (invalidation floods: n - 1 messages per member, so only
         * where that stays cheap) */
        s.ninv = s.n <= 100 && ulfm_splitmix(&x) % 3 == 0
                     ? 1 + (uint32_t)(ulfm_splitmix(&x) % 3)
                     : 0;
        for (uint32_t c = 0; c < s.ncrash; c++) {
            uint32_t r = ulfm_fresh_rank(&x, s.crash, c, s.n);
            /* Rank 0 coordinates first: crash it (and the next
             * coordinators) more often than the rest. */
            if (c < 3 && ulfm_splitmix(&x) % 3 == 0) {
                if (!ulfm_crash_has(s.crash, c, c))
                    r = c;
            }
            uint64_t k = ulfm_splitmix(&x) % 10; /* 9: as it delivers */
            s.crash[c] = (ulfm_crash_t){r, k == 9 ? AT_DELIVERY : k};
        }
        outcome_t o = run_schedule(&s);
        account(t, &s, &o);
    }
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
            if (*p == 'd') {
                s.crash[s.ncrash++].k = AT_DELIVERY;
                p++;
            } else {
                s.crash[s.ncrash++].k = strtoull(p, &p, 10);
            }
            if (*p == ',')
                p++;
        }
    }
    if (argc > 6)
        s.jitter_ns = strtoull(argv[6], NULL, 10);
    if (argc > 7)
        s.ninv = (uint32_t)strtoul(argv[7], NULL, 10);
    if (argc > 8)
        s.nops = (uint32_t)strtoul(argv[8], NULL, 10);
    if (s.n == 0)
        return 2;
    outcome_t o = run_schedule(&s);
    printf("messages %" PRIu64 ", last delivery at %" PRIu64 " ns (virtual), "
           "crashed %u, fired %u, delivered then crashed %u, violations %d\n",
           o.messages, o.last_ns, o.crashed, o.fired,
           o.delivered_then_crashed, violations);
    return violations ? 1 : 0;
}

/* Takes --agree-round NAME out of argv, wherever it is (--one's
 * arguments are positional); 2 if NAME is none of the rounds. */
static int take_round(int *argc, char **argv)
{
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--agree-round") != 0)
            continue;
        if (i + 1 >= *argc
            || ftc_agree_round_parse(argv[i + 1], &agree_round) != FTC_OK) {
            fprintf(stderr, "--agree-round: wants rd2, rd4 or tree\n");
            return 2;
        }
        for (int j = i; j + 2 <= *argc; j++)
            argv[j] = argv[j + 2];
        *argc -= 2;
        i--;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (take_round(&argc, argv) != 0)
        return 2;
    if (argc > 1 && strcmp(argv[1], "--one") == 0)
        return parse_one(argc, argv);
    bool expect_uniform_violation =
        argc > 1 && strcmp(argv[argc - 1], "--expect-uniform-violation") == 0;
    if (expect_uniform_violation)
        argc--;
    ulfm_args_t args = {.max_n = 9, .runs = 300, .seed = 1};
    int bad = ulfm_args_parse(argc, argv, "[--max-n N (1 to 16)] [--random "
                              "RUNS] [--seed S] | --one N SEED DETECT r:k,...",
                              &args);
    if (bad)
        return bad;
    uint32_t max_n = args.max_n;
    uint64_t runs = args.runs, seed = args.seed;
    tally_t ex = {0}, rnd = {0};
    for (uint32_t n = 1; n <= max_n; n++)
        exhaustive(n, &ex);
    random_runs(runs, seed, &rnd);
    printf("agree round %s\n", ftc_agree_round_name(agree_round));
    printf("exhaustive n <= %u: %" PRIu64 " schedules, %" PRIu64
           " crashes injected, %" PRIu64 " happened, %" PRIu64
           " schedules with every crash happening, %" PRIu64
           " ranks delivered and then crashed\n",
           max_n, ex.runs, ex.crashes_injected, ex.crashes_fired,
           ex.schedules_all_fired, ex.delivered_then_crashed);
    printf("random (seed %" PRIu64 "): %" PRIu64 " schedules up to n = 1024, %"
           PRIu64 " crashes injected, %" PRIu64 " happened, %" PRIu64
           " ranks delivered and then crashed\n",
           seed, rnd.runs, rnd.crashes_injected, rnd.crashes_fired,
           rnd.delivered_then_crashed);
    /* The schedules must have exercised what they claim to. */
    if (ex.runs > 1 && max_n >= 3 && ex.delivered_then_crashed == 0) {
        fprintf(stderr, "no rank delivered and then crashed: uniform "
                        "agreement was not exercised\n");
        violations++;
    }
    if (expect_uniform_violation) {
        /* A mutant: the checker must have caught it breaking uniform
         * agreement, whatever else it broke. */
        printf("%s: %d uniform-agreement violations (%d in all)\n",
               uniform_violations ? "mutant rejected" : "FAIL: mutant passed",
               uniform_violations, violations);
        printf("%d passed, %d failed\n", uniform_violations ? 1 : 0,
               uniform_violations ? 0 : 1);
        return uniform_violations ? 0 : 1;
    }
    printf("%s: %d violations\n", violations ? "FAIL" : "ok", violations);
    /* The closing line every test of the project ends with: schedules
     * checked, and violations. */
    printf("%" PRIu64 " passed, %d failed\n",
           violations ? 0 : ex.runs + rnd.runs, violations);
    return violations ? 1 : 0;
}
