/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process cut off from its group must not evict it (docs/decisions.md).
 *
 * One member goes deaf (ftc_lb_deafen_after_sends: it hears nothing from
 * its k-th send on, while everybody still hears it) during a stream of
 * corrected allreduces: two batches of three, the second started when the
 * first has run out of events, so that it also runs after every verdict
 * the deaf member reached. The deaf member times out the peers it waits
 * on and tells them they are excluded; they answered its probes while
 * running, so they know it is the one that does not hear. For f = 1 and 2,
 * n = 4..9 (--nmax: to 16), every member as the deaf one, and deafness from every send
 * index of its failure-free stream (0 .. its sends + 1), checked:
 *
 *   - every member delivers every operation exactly once;
 *   - no member that hears is excluded by a message of the deaf member
 *     (the rule), unless the deaf member is an operation's first root:
 *     then it decides a result, whose failure list excludes the members
 *     it named (the rule does not cover that; counted and printed);
 *   - each member that hears ends each operation FTC_OK, FTC_EEXCLUDED or
 *     FTC_ETOO_MANY_FAILURES, and never FTC_EEXCLUDED when the deaf
 *     member roots no operation and decides no result: its later rounds
 *     are checked, not taken as evidence that the roots it passed failed
 *     (core/monitor.c, ftc_monitor_verify). Not FTC_OK in every run: the
 *     deaf member can become a later round's root (its own timeouts pass
 *     the roots before it) and decide a result whose failure list names
 *     the members it timed out. The rule does not cover that; the runs
 *     where it happens are counted and printed;
 *   - every FTC_OK of an operation, the deaf member's included, is the
 *     same value, and it holds every input exactly once except those of
 *     the deaf member and of members that ended an operation otherwise
 *     (at most once): never a wrong FTC_OK;
 *   - the deaf member ends each operation FTC_OK (that value),
 *     FTC_EEXCLUDED or FTC_ETOO_MANY_FAILURES;
 *   - the fault happened: a member deafened at or before its last
 *     failure-free send is deaf at the end.
 *
 * The keepalive is the only detector (the loopback reports crashes only,
 * and nobody crashes). "test_cutoff [--allreduce NAME] N F DEAF K"
 * repeats one run, as each FAIL line prints it. Last
 * line: "N passed, M failed" (runs). "--allreduce NAME" runs that
 * variant of the corrected allreduce instead of auto's pick (the
 * butterfly passes since it watches every member up to n = 16, as the
 * exchange does: docs/corrected.md §5.7).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"

/* --allreduce: the corrected allreduce's variant (default auto). */
static ftc_allreduce_algo_t allreduce_variant = FTC_ALLREDUCE_AUTO;

#define BATCH 3
#define NOPS (2 * BATCH)
#define NMAX 16   /* --nmax's largest */
/* The unit input (docs/decisions.md, "The unit input"): rank r gives 1 at
 * r, 1 at n and r + 1 at n + 1. */
#define COUNT (NMAX + 2)

typedef struct rank_run {
    int64_t in[COUNT];
    int64_t out[NOPS][COUNT];
    int status[NOPS];
    uint32_t delivered[NOPS];
} rank_run_t;

typedef struct run {
    uint32_t n, f;
    rank_run_t ranks[NMAX];
    uint64_t sends[NMAX];     /* each rank's sends over the stream */
    bool deaf_at_end;
    uint32_t deaf;
    /* Some result was produced by the deaf member (it became the root of
     * a later round after timing out the earlier ones). */
    bool deaf_decided;
    /* A member that hears was excluded by a message of the deaf one. */
    bool excluded_by_deaf;
    uint32_t excluded_rank;
} run_t;

typedef struct slot {
    run_t *run;
    uint32_t rank, op;
} slot_t;

static uint64_t runs, failures;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    slot_t *s = arg;
    rank_run_t *rr = &s->run->ranks[s->rank];
    rr->delivered[s->op]++;
    rr->status[s->op] = c->status;
    /* (A failed status names the root that decided it too.) */
    if (s->rank != s->run->deaf && c->stats.root == s->run->deaf
        && (c->status == FTC_OK || c->status == FTC_ETOO_MANY_FAILURES))
        s->run->deaf_decided = true;
}

/* Start batch b at every member that is not excluded; an excluded one's
 * call returns FTC_EEXCLUDED, which ends the operation there. */
static int start_batch(run_t *run, ftc_group_t **grp, slot_t (*slots)[NOPS],
                       uint32_t b)
{
    uint32_t n = run->n;
    for (uint32_t r = 0; r < n; r++) {
        rank_run_t *rr = &run->ranks[r];
        for (uint32_t op = b * BATCH; op < (b + 1) * BATCH; op++) {
            slots[r][op] = (slot_t){run, r, op};
            ftc_coll_args_t a;
            ftc_coll_args_init(&a);
            a.algo = FTC_ALGO_CORRECTED;
            a.f = run->f;
            a.root = op % BATCH;
            a.dtype = FTC_INT64;
            a.op = FTC_SUM;
            a.count = n + 2;
            a.sendbuf = rr->in;
            a.recvbuf = rr->out[op];
            a.deliver = on_deliver;
            a.deliver_arg = &slots[r][op];
            ftc_corrected_params_t cp;
            ftc_corrected_params_init(&cp);
            cp.allreduce = allreduce_variant;
            a.params = &cp;
            int rc = ftc_init_allreduce(grp[r], &a, NULL);
            if (rc == FTC_EEXCLUDED) {
                rr->delivered[op]++;
                rr->status[op] = rc;
            } else if (rc != FTC_OK) {
                return rc;
            }
        }
    }
    return FTC_OK;
}

/* One stream; deaf < n deafens that rank after its k-th send (counted from
 * the start of the stream). FTC_OK or why the run could not be set up. */
static int run_stream(run_t *run, uint32_t n, uint32_t f, uint32_t deaf,
                      uint64_t k)
{
    memset(run, 0, sizeof(*run));
    run->n = n;
    run->f = f;
    run->deaf = deaf;
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = 1 + n * 131; /* the clean run's: its first k sends are these */
    lc.jitter_ns = 300;
    ftc_lb_world_t *w;
    int rc = ftc_lb_world_create(&lc, &w);
    if (rc != FTC_OK)
        return rc;
    ftc_context_t *ctx[NMAX] = {0};
    ftc_group_t *grp[NMAX] = {0};
    slot_t slots[NMAX][NOPS];
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 0xC0FF;
    for (uint32_t r = 0; r < n && rc == FTC_OK; r++) {
        rc = ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(w, r),
                                &cfg, &ctx[r]);
        if (rc == FTC_OK) {
            ftc_lb_attach(w, r, ctx[r]);
            rc = ftc_group_create(ctx[r], 1, 0, n, NULL, &grp[r]);
        }
        rank_run_t *rr = &run->ranks[r];
        rr->in[r] = 1;
        rr->in[n] = 1;
        rr->in[n + 1] = r + 1;
    }
    if (deaf < n)
        ftc_lb_deafen_after_sends(w, deaf, k);
    bool excluded[NMAX] = {0};
    for (uint32_t b = 0; b < NOPS / BATCH && rc == FTC_OK; b++) {
        rc = start_batch(run, grp, slots, b);
        /* Step, to see which message excluded a member. */
        for (uint64_t i = 0; rc == FTC_OK && i < 50000000 && ftc_lb_step(w);
             i++) {
            uint32_t src, dest;
            if (!ftc_lb_last_arrival(w, &src, &dest) || dest >= n
                || excluded[dest] || !ftc_context_is_excluded(ctx[dest]))
                continue;
            excluded[dest] = true;
            if (src == deaf && !run->excluded_by_deaf) {
                run->excluded_by_deaf = true;
                run->excluded_rank = dest;
            }
        }
    }
    for (uint32_t r = 0; r < n; r++)
        run->sends[r] = ftc_lb_rank_messages_sent(w, r);
    run->deaf_at_end = deaf < n && ftc_lb_is_deaf(w, deaf);
    for (uint32_t r = 0; r < n; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(w);
    return rc;
}

/* Whether v is the unit input summed over every member, those in `maybe`
 * (a bit per rank) at most once, the others exactly once. */
static bool value_ok(const int64_t *v, uint32_t n, uint32_t maybe)
{
    int64_t members = 0, weight = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (v[r] != 1 && !((maybe >> r & 1) && v[r] == 0))
            return false;
        members += v[r];
        weight += v[r] * (int64_t)(r + 1);
    }
    return v[n] == members && v[n + 1] == weight;
}

/* What a run showed beyond pass / fail. */
typedef struct verdict {
    bool hearing_not_ok;   /* a member that hears ended an operation !OK */
    bool hearing_excluded; /* ... and FTC_EEXCLUDED */
} verdict_t;

/* Checks run (deaf member `deaf`, or none if >= n); 0 or a message in why.
 * roots: the deaf member is some operation's first root. */
static int check_run(const run_t *run, uint32_t deaf, bool must_be_deaf,
                     bool roots, verdict_t *v, char *why, size_t len)
{
    uint32_t n = run->n;
    memset(v, 0, sizeof(*v));
    if (must_be_deaf && !run->deaf_at_end)
        return snprintf(why, len, "rank %u never went deaf", deaf), 1;
    if (!roots && run->excluded_by_deaf)
        return snprintf(why, len, "rank %u (hears) was excluded by the deaf "
                        "rank %u", run->excluded_rank, deaf), 1;
    uint32_t maybe = deaf < n ? 1u << deaf : 0;
    for (uint32_t op = 0; op < NOPS; op++)
        for (uint32_t r = 0; r < n; r++)
            if (r != deaf && run->ranks[r].status[op] != FTC_OK) {
                maybe |= 1u << r;
                v->hearing_not_ok = true;
                v->hearing_excluded |= run->ranks[r].status[op]
                                       == FTC_EEXCLUDED;
            }
    for (uint32_t op = 0; op < NOPS; op++) {
        const int64_t *agreed = NULL;
        for (uint32_t r = 0; r < n; r++) {
            const rank_run_t *rr = &run->ranks[r];
            if (rr->delivered[op] != 1)
                return snprintf(why, len, "op %u: rank %u delivered %u times",
                                op, r, rr->delivered[op]), 1;
            int st = rr->status[op];
            if (st != FTC_OK && st != FTC_EEXCLUDED
                && st != FTC_ETOO_MANY_FAILURES)
                return snprintf(why, len, "op %u: rank %u%s ended %s", op, r,
                                r == deaf ? " (deaf)" : "", ftc_err_name(st)),
                       1;
            if (st != FTC_OK)
                continue;
            if (!value_ok(rr->out[op], n, maybe))
                return snprintf(why, len, "op %u: rank %u%s: FTC_OK with a "
                                "wrong value", op, r,
                                r == deaf ? " (deaf)" : ""), 1;
            if (agreed == NULL)
                agreed = rr->out[op];
            else if (memcmp(agreed, rr->out[op], sizeof(int64_t) * (n + 2)))
                return snprintf(why, len, "op %u: rank %u%s disagrees", op,
                                r, r == deaf ? " (deaf)" : ""), 1;
        }
    }
    return 0;
}

/* Runs where the deaf member roots no operation, or some, and in how many
 * of them a member that hears did not end every operation FTC_OK. */
static uint64_t strict_runs, strict_not_ok;
static uint64_t strict_decided, strict_excluded;
static uint64_t root_runs, root_not_ok;

/* A failed run's line, with the command that repeats it: the variant
 * named, so that a failure of cutoff-butterfly repeats as itself. */
static void print_failure(uint32_t n, uint32_t f, uint32_t deaf, uint64_t k,
                          const char *what)
{
    fprintf(stderr, "FAIL n=%u f=%u deaf=%u k=%" PRIu64 " (repro: "
            "test_cutoff --allreduce %s %u %u %u %" PRIu64 "): %s\n", n, f,
            deaf, k, ftc_allreduce_algo_name(allreduce_variant), n, f, deaf, k,
            what);
}

static void one(uint32_t n, uint32_t f, uint32_t deaf, uint64_t k,
                bool must_be_deaf)
{
    static run_t run;
    char why[256];
    bool roots = deaf < BATCH;
    verdict_t v;
    runs++;
    int rc = run_stream(&run, n, f, deaf, k);
    if (rc != FTC_OK) {
        failures++;
        snprintf(why, sizeof(why), "set-up: %s", ftc_strerror(rc));
        print_failure(n, f, deaf, k, why);
        return;
    }
    if (check_run(&run, deaf, must_be_deaf, roots, &v, why, sizeof(why))) {
        failures++;
        if (failures <= 20)
            print_failure(n, f, deaf, k, why);
        return;
    }
    if (!roots && !run.deaf_decided && v.hearing_excluded) {
        /* Nothing of the deaf member's decides anything here: only its
         * word on others (its timeouts, the rounds it moved to) could
         * exclude a member that hears, and that word is checked before
         * it is taken (core/monitor.c, ftc_monitor_verify). */
        failures++;
        if (failures <= 20)
            print_failure(n, f, deaf, k, "a member that hears ended "
                          "FTC_EEXCLUDED, and the deaf member decided "
                          "nothing");
        return;
    }
    if (!roots) {
        strict_decided += run.deaf_decided;
        strict_excluded += v.hearing_excluded;
    }
    if (roots) {
        root_runs++;
        root_not_ok += v.hearing_not_ok;
    } else {
        strict_runs++;
        strict_not_ok += v.hearing_not_ok;
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: test_cutoff [--allreduce auto|reduce_bcast|"
                    "exchange|butterfly] [--nmax N (4..16, default 9)] "
                    "[N F DEAF K]   (one run; none: all)\n");
    return 2;
}

int main(int argc, char **argv)
{
    static run_t clean;
    uint64_t deafened = 0;
    uint32_t nmax = 9;
    while (argc >= 3 && strncmp(argv[1], "--", 2) == 0) {
        if (strcmp(argv[1], "--allreduce") == 0) {
            if (ftc_allreduce_algo_parse(argv[2], &allreduce_variant)
                != FTC_OK)
                return usage();
        } else if (strcmp(argv[1], "--nmax") == 0) {
            char *end;
            unsigned long v = strtoul(argv[2], &end, 10);
            if (*argv[2] == '\0' || *end != '\0' || v < 4 || v > NMAX)
                return usage();
            nmax = (uint32_t)v;
        } else {
            return usage();
        }
        argv += 2;
        argc -= 2;
    }
    if (argc == 5) {  /* repeat one run a failure printed */
        unsigned long a[4];
        for (int i = 0; i < 4; i++) {
            char *end;
            a[i] = strtoul(argv[i + 1], &end, 10);
            if (*argv[i + 1] == '\0' || *end != '\0')
                return usage();
        }
        if (a[0] < 4 || a[0] > NMAX || a[1] < 1 || a[1] > 2 || a[2] >= a[0])
            return usage();
        one((uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2], a[3], false);
    } else if (argc == 1) {
        for (uint32_t f = 1; f <= 2; f++) {
            for (uint32_t n = 4; n <= nmax; n++) {
                char why[256];
                verdict_t v;
                runs++;
                if (run_stream(&clean, n, f, UINT32_MAX, 0) != FTC_OK
                    || check_run(&clean, UINT32_MAX, false, false, &v, why,
                                 sizeof(why))
                    || v.hearing_not_ok) {
                    failures++;
                    fprintf(stderr, "FAIL n=%u f=%u: failure-free run\n", n,
                            f);
                    continue;
                }
                for (uint32_t d = 0; d < n; d++)
                    for (uint64_t k = 0; k <= clean.sends[d] + 1; k++) {
                        bool must = k <= clean.sends[d];
                        deafened += must;
                        one(n, f, d, k, must);
                    }
            }
        }
    } else {
        return usage();
    }
    printf("%" PRIu64 " runs with a member deafened within the stream\n",
           deafened);
    printf("deaf member roots no operation: %" PRIu64 " runs; a member that "
           "hears ended without a result in %" PRIu64 "\n", strict_runs,
           strict_not_ok);
    printf("  of those, the deaf member decided some result in %" PRIu64
           "; a member that hears ended FTC_EEXCLUDED in %" PRIu64 "\n",
           strict_decided, strict_excluded);
    printf("deaf member roots an operation: %" PRIu64 " runs; a member that "
           "hears ended without a result in %" PRIu64 "\n", root_runs,
           root_not_ok);
    printf("%" PRIu64 " passed, %" PRIu64 " failed\n", runs - failures,
           failures);
    return failures != 0;
}
