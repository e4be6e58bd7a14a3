/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Property test over streams of operations on one group (bench/stream.h):
 * crashes placed in operation k after K of the rank's own sends in it,
 * while operations k-1 and k+1 are lingering or in flight, and every
 * operation of the stream checked.
 *
 *   exhaustive: every set of at most F crashing ranks and, for each, every
 *     crash point: before the stream, or in every operation after each
 *     send index K = 0 .. (its sends in that operation without failures)+1.
 *   random: seeded random streams (collective mix, window, root rotation,
 *     jitter, crash points), large n.
 *   regress: the schedules that found bugs, kept.
 *
 * A violation prints the stream that reproduces it. Last line:
 * "N passed, M failed" (runs).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

static uint64_t runs, failures;
static int verbose;

static bool run_one(const ftc_stream_t *s, ftc_stream_result_t *keep)
{
    ftc_stream_result_t res;
    char err[256], msg[512], desc[768];
    runs++;
    if (ftc_stream_run(s, &res, err, sizeof(err)) != FTC_OK) {
        failures++;
        ftc_stream_describe(s, desc, sizeof(desc));
        fprintf(stderr, "FAIL: stream refused: %s\n  %s\n", err, desc);
        return false;
    }
    int v = ftc_stream_check(s, &res, msg, sizeof(msg));
    if (v != 0) {
        failures++;
        if (failures <= 20) {
            ftc_stream_describe(s, desc, sizeof(desc));
            fprintf(stderr, "FAIL: %s\n  stream: %s\n", msg, desc);
        }
    } else if (verbose) {
        ftc_stream_describe(s, desc, sizeof(desc));
        fprintf(stderr, "ok %s\n", desc);
    }
    if (keep != NULL)
        *keep = res;
    else
        ftc_stream_result_free(&res);
    return v == 0;
}

typedef struct point {
    uint32_t op;      /* FTC_STREAM_BEFORE or an operation */
    uint64_t sends;
} point_t;

typedef struct plan {
    ftc_stream_t base;
    const uint64_t *sends;  /* failure-free [rank * nops + op] */
    bool all_ops;           /* crash points in every op, or the middle one */
    uint64_t landed_checked, landed_missing;
} plan_t;

static void run_points(plan_t *p, const uint32_t *ranks, const point_t *pts,
                       uint32_t k)
{
    ftc_stream_t s = p->base;
    s.nfaults = k;
    for (uint32_t i = 0; i < k; i++) {
        s.faults[i].rank = ranks[i];
        s.faults[i].op = pts[i].op;
        s.faults[i].after_sends = pts[i].sends;
    }
    ftc_stream_result_t res;
    if (run_one(&s, &res)) {
        /* Every crash point within the rank's failure-free sends of its
         * operation must have landed there: a schedule that crashes
         * nobody proves nothing. Points past those sends may land later
         * (failures elsewhere change the counts), so they are not
         * required to. The first crashing rank is not disturbed by the
         * others before its own point when it is alone. */
        for (uint32_t i = 0; i < k; i++) {
            const point_t *q = &pts[i];
            bool must = k == 1 && (q->op == FTC_STREAM_BEFORE
                                   || q->sends < p->sends[(size_t)ranks[i]
                                                          * s.nops + q->op]);
            if (!must)
                continue;
            p->landed_checked++;
            if (!res.landed[i]) {
                p->landed_missing++;
                failures++;
                char desc[768];
                ftc_stream_describe(&s, desc, sizeof(desc));
                fprintf(stderr, "FAIL: crash %u did not land in its "
                        "operation\n  stream: %s\n", i, desc);
            }
        }
    }
    ftc_stream_result_free(&res);
}

static void enumerate(plan_t *p, const uint32_t *ranks, point_t *pts,
                      uint32_t k, uint32_t i)
{
    if (i == k) {
        run_points(p, ranks, pts, k);
        return;
    }
    pts[i].op = FTC_STREAM_BEFORE;
    pts[i].sends = 0;
    enumerate(p, ranks, pts, k, i + 1);
    uint32_t nops = p->base.nops;
    uint32_t lo = p->all_ops ? 0 : nops / 2, hi = p->all_ops ? nops : lo + 1;
    for (uint32_t op = lo; op < hi; op++) {
        uint64_t top = p->sends[(size_t)ranks[i] * nops + op] + 1;
        for (uint64_t kk = 0; kk <= top; kk++) {
            pts[i].op = op;
            pts[i].sends = kk;
            enumerate(p, ranks, pts, k, i + 1);
        }
    }
}

static void subsets(plan_t *p, uint32_t *ranks, uint32_t k, uint32_t i,
                    uint32_t from)
{
    if (i == k) {
        point_t pts[FTC_STREAM_MAX_FAULTS];
        enumerate(p, ranks, pts, k, 0);
        return;
    }
    for (uint32_t r = from; r < p->base.n; r++) {
        ranks[i] = r;
        subsets(p, ranks, k, i + 1, r + 1);
    }
}

static void exhaustive(const ftc_stream_t *base, uint32_t maxfail, bool all_ops)
{
    plan_t p = {.base = *base, .all_ops = all_ops};
    ftc_stream_result_t ff;
    uint64_t before = failures;
    p.base.nfaults = 0;
    if (!run_one(&p.base, &ff))
        return;
    p.sends = ff.sends_in_op;
    uint32_t ranks[FTC_STREAM_MAX_FAULTS];
    for (uint32_t k = 1; k <= maxfail; k++)
        subsets(&p, ranks, k, 0, 0);
    if (verbose || failures > before) {
        char desc[768];
        ftc_stream_describe(&p.base, desc, sizeof(desc));
        fprintf(stderr, "exhaustive %s: %" PRIu64 " failures, %" PRIu64
                " crashes required to land, %" PRIu64 " did not\n", desc,
                failures - before, p.landed_checked, p.landed_missing);
    }
    ftc_stream_result_free(&ff);
}

/* ---- seeded random ----------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t x = (rng_state += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
static uint64_t upto(uint64_t hi) /* [0, hi] */
{
    return rnd() % (hi + 1);
}

static void random_runs(const ftc_stream_t *base, uint32_t nmin, uint32_t nmax,
                        uint32_t fmax, uint32_t beyond, uint64_t count,
                        uint64_t seed)
{
    rng_state = seed;
    for (uint64_t i = 0; i < count; i++) {
        ftc_stream_t s = *base;
        s.n = nmin + (uint32_t)upto(nmax - nmin);
        s.args.f = (uint32_t)upto(fmax < s.n - 1 ? fmax : s.n - 1);
        s.nops = 3 + (uint32_t)upto(5);
        s.window = 1 + (uint32_t)upto(3);
        s.rotate_root = upto(1);
        s.args.root = (uint32_t)upto(s.n - 1);
        s.seed = rnd();
        s.jitter_ns = upto(1) ? upto(3000) : 0;
        if (base->detect_delay_ns != UINT64_MAX && upto(1))
            s.detect_delay_ns = upto(3000); /* reports racing the messages */
        if (base->ncolls == 0) {
            static const ftc_coll_t all[3] = {FTC_COLL_REDUCE, FTC_COLL_BCAST,
                                              FTC_COLL_ALLREDUCE};
            s.ncolls = 1 + (uint32_t)upto(2);
            for (uint32_t c = 0; c < s.ncolls; c++)
                s.colls[c] = all[upto(2)];
        }
        /* Up to f crashes, or up to f + beyond (then: no hang, and
         * agreement among the FTC_OK deliveries). */
        uint32_t most = s.args.f + beyond;
        if (most > s.n - 1)
            most = s.n - 1;
        if (most > FTC_STREAM_MAX_FAULTS)
            most = FTC_STREAM_MAX_FAULTS;
        s.nfaults = (uint32_t)upto(most);
        uint32_t used[FTC_STREAM_MAX_FAULTS];
        for (uint32_t j = 0; j < s.nfaults; j++) {
            uint32_t r;
            bool dup;
            do {
                r = (uint32_t)upto(s.n - 1);
                dup = false;
                for (uint32_t q = 0; q < j; q++)
                    dup |= used[q] == r;
            } while (dup);
            used[j] = r;
            s.faults[j].rank = r;
            s.faults[j].op = upto(7) == 0 ? FTC_STREAM_BEFORE
                                          : (uint32_t)upto(s.nops - 1);
            s.faults[j].after_sends = upto(2 * (uint64_t)s.args.f + 8);
        }
        run_one(&s, NULL);
    }
}

/* ---- one stream, spelled out (as the failure lines print it) ----------- */

static int parse_crashes(const char *v, ftc_stream_t *s)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", v);
    s->nfaults = 0;
    for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
        if (s->nfaults == FTC_STREAM_MAX_FAULTS)
            return -1;
        ftc_stream_fault_t *f = &s->faults[s->nfaults++];
        unsigned r, op;
        unsigned long long k;
        if (sscanf(t, "%u@before", &r) == 1 && strstr(t, "before") != NULL) {
            f->rank = r;
            f->op = FTC_STREAM_BEFORE;
            f->after_sends = 0;
        } else if (sscanf(t, "%u@%u+%llu", &r, &op, &k) == 3) {
            f->rank = r;
            f->op = op;
            f->after_sends = k;
        } else {
            return -1;
        }
    }
    return 0;
}

static void print_one(const ftc_stream_t *s)
{
    ftc_stream_result_t res;
    char msg[512];
    if (!run_one(s, &res))
        printf("violation\n");
    (void)ftc_stream_check(s, &res, msg, sizeof(msg));
    printf("events %" PRIu64 ", messages %" PRIu64 ", end %" PRIu64 " ns\n",
           res.events, res.messages, res.end_ns);
    for (uint32_t k = 0; k < s->nops; k++) {
        printf("op %u (%s, root %u)\n", k, ftc_coll_name(ftc_stream_coll(s, k)),
               ftc_stream_root(s, k));
        for (uint32_t r = 0; r < s->n; r++) {
            const ftc_stream_delivery_t *d = &res.d[(size_t)r * s->nops + k];
            printf("  rank %u%s: ", r, res.crashed[r] ? " (crashed)" : "");
            if (d->count == 0) {
                printf("-\n");
                continue;
            }
            printf("%s t=%" PRIu64, ftc_err_name(d->status), d->at_ns);
            if (d->has_value && d->value != NULL) {
                printf(" inputs {");
                for (uint32_t i = 0, c = 0; i < s->n; i++)
                    if (d->value[i])
                        printf("%s%u", c++ ? "," : "", i);
                printf("}");
            }
            printf(" failed {");
            for (uint32_t i = 0; i < d->nfailed; i++)
                printf("%s%u", i ? "," : "", d->failed[i]);
            printf("} count %u\n", d->failed_count);
        }
    }
    ftc_stream_result_free(&res);
}

/* ---- the schedules that found bugs ------------------------------------- */

typedef struct regress_case {
    const char *what;
    uint32_t n, f, nops, window, root;
    bool rotate;
    uint64_t seed, jitter_ns;
    uint64_t detect_ns;     /* UINT64_MAX: keepalives only */
    bool no_stall;
    const char *crashes;
    ftc_coll_t coll;            /* 0: allreduce */
    ftc_correction_t correction; /* 0: checked */
} regress_case_t;

/* The schedules that found bugs: each failed before its fix. */
static const regress_case_t regress_cases[] = {
    /* An agreed wrong allreduce (every survivor delivered inputs {0,4},
     * missing live 1, 2, 3): a round-1 message reached a process whose
     * round-1 root was already known failed; it moved on to round 2 while
     * handling the message, then fed rank 4's round-1 tree value (its own
     * input only) into round 2's tree as a subtree free of failures. */
    {"round-1 message fed into round 2", 7, 3, 5, 1, 2, true,
     3696988199685900610ull, 0, UINT64_MAX, false, "6@0+13,5@2+13", 0, 0},
    {"round-1 message fed into round 2, window 2", 7, 3, 6, 2, 2, true,
     13304597177047152314ull, 1899, UINT64_MAX, false,
     "2@0+8,3@before,0@5+14", 0, 0},
    /* A bcast laggard stranded in several operations probed about the
     * first operation that had waited on the root only (a watch kept the
     * first waiter's name): the root answered for that one, which had
     * delivered, never pulled the others, and they probed forever. */
    {"probe named an operation that had delivered", 7, 3, 6, 4, 0, false,
     3417103992930245155ull, 1594, 614, false, "3@before,1@5+8,4@2+1",
     FTC_COLL_BCAST, FTC_CORRECTION_OPPORTUNISTIC},
    /* A laggard's later round: the others, delivered and lingering, only
     * joined when its probe reached them (a suspect timeout), or never
     * (the run did not end). Now the round's tree nudges its children. */
    {"lingerers join a later round only through probes", 5, 1, 6, 4, 4,
     false, 3575368489499214669ull, 0, 1642, true, "4@0+10", 0, 0},
    {"a stall of a suspect timeout after a root crash", 10, 2, 3, 2, 1, true,
     13289117307209042475ull, 0, 1428, true, "1@2+1", 0, 0},
};

static void regressions(const ftc_stream_t *base)
{
    for (size_t i = 0; i < sizeof(regress_cases) / sizeof(regress_cases[0]);
         i++) {
        const regress_case_t *c = &regress_cases[i];
        ftc_stream_t s = *base;
        s.n = c->n;
        s.args.f = c->f;
        s.nops = c->nops;
        s.window = c->window;
        s.args.root = c->root;
        s.rotate_root = c->rotate;
        s.seed = c->seed;
        s.jitter_ns = c->jitter_ns;
        s.detect_delay_ns = c->detect_ns;
        s.no_stall = c->no_stall;
        s.colls[0] = c->coll ? c->coll : FTC_COLL_ALLREDUCE;
        s.ncolls = 1;
        if (c->correction)
            s.corrected.correction = c->correction;
        if (parse_crashes(c->crashes, &s) != 0) {
            fprintf(stderr, "FAIL: regression '%s': bad crash list\n",
                    c->what);
            failures++;
            continue;
        }
        uint64_t before = failures;
        run_one(&s, NULL);
        if (failures > before)
            fprintf(stderr, "  (regression: %s)\n", c->what);
    }
}

/* ---- main -------------------------------------------------------------- */

static int parse_colls(const char *v, ftc_stream_t *s)
{
    s->ncolls = 0;
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *t = strtok(buf, ","); t != NULL && s->ncolls < 4;
         t = strtok(NULL, ",")) {
        if (strcmp(t, "reduce") == 0)
            s->colls[s->ncolls++] = FTC_COLL_REDUCE;
        else if (strcmp(t, "bcast") == 0)
            s->colls[s->ncolls++] = FTC_COLL_BCAST;
        else if (strcmp(t, "allreduce") == 0)
            s->colls[s->ncolls++] = FTC_COLL_ALLREDUCE;
        else if (strcmp(t, "mix") == 0)
            s->ncolls = 0;
        else
            return -1;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: test_streams [--mode exhaustive|random|regress] "
            "[--colls reduce,bcast,allreduce|mix] [--nmin N] [--nmax N] "
            "[--fmax F] [--ops K] [--window W] [--all-ops] "
            "[--fault-info list|count|bit|all] [--correction checked|"
            "opportunistic] [--allreduce auto|reduce_bcast|exchange|butterfly] [--keepalive] [--exit] [--finalize] [--no-stall] "
            "[--runs N] [--beyond-f K] [--seed S] [--algo corrected|tree] "
            "[--segment BYTES] [-v]\n"
            "       test_streams --mode one --n N --f F --ops K --window W "
            "--root R [--rotate] --seed S --jitter NS --crash R@OP+SENDS,"
            "R@before,...\n");
}

int main(int argc, char **argv)
{
    const char *mode = "exhaustive";
    uint32_t nmin = 2, nmax = 5, fmax = 2, beyond = 0;
    uint64_t count = 100, seed = 1;
    bool all_ops = false, all_schemes = false;
    ftc_stream_t base;
    ftc_stream_init(&base);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = true;
        if (strcmp(a, "-v") == 0) {
            verbose = 1;
            takes = false;
        } else if (strcmp(a, "--all-ops") == 0) {
            all_ops = true;
            takes = false;
        } else if (strcmp(a, "--keepalive") == 0) {
            base.detect_delay_ns = UINT64_MAX;
            takes = false;
        } else if (strcmp(a, "--exit") == 0) {
            base.exit_after_last = true;
            takes = false;
        } else if (strcmp(a, "--finalize") == 0) {
            base.exit_after_last = true;
            base.finalize = true;
            takes = false;
        } else if (strcmp(a, "--no-stall") == 0) {
            base.no_stall = true;
            takes = false;
        } else if (strcmp(a, "--rotate") == 0) {
            base.rotate_root = true;
            takes = false;
        } else if (v == NULL) {
            usage();
            return 2;
        } else if (strcmp(a, "--n") == 0) {
            base.n = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--f") == 0) {
            base.args.f = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--root") == 0) {
            base.args.root = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--detect-ns") == 0) {
            base.detect_delay_ns = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--jitter") == 0) {
            base.jitter_ns = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--segment") == 0) {
            /* Small segments: every message becomes several, and every
             * crash point of a schedule falls inside a train. */
            base.segment_size = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--crash") == 0) {
            if (parse_crashes(v, &base) != 0) {
                usage();
                return 2;
            }
        } else if (strcmp(a, "--mode") == 0) {
            mode = v;
        } else if (strcmp(a, "--colls") == 0) {
            if (parse_colls(v, &base) != 0) {
                usage();
                return 2;
            }
        } else if (strcmp(a, "--nmin") == 0) {
            nmin = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--nmax") == 0) {
            nmax = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--beyond-f") == 0) {
            beyond = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--fmax") == 0) {
            fmax = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--ops") == 0) {
            base.nops = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--window") == 0) {
            base.window = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--runs") == 0) {
            count = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--seed") == 0) {
            seed = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--algo") == 0) {
            if (ftc_algo_parse(v, &base.args.algo) != FTC_OK) {
                usage();
                return 2;
            }
        } else if (strcmp(a, "--fault-info") == 0) {
            if (strcmp(v, "all") == 0)
                all_schemes = true;
            else if (ftc_fault_info_parse(v, &base.corrected.fault_info) != FTC_OK) {
                usage();
                return 2;
            }
        } else if (strcmp(a, "--correction") == 0) {
            if (ftc_correction_parse(v, &base.corrected.correction) != FTC_OK) {
                usage();
                return 2;
            }
        } else if (strcmp(a, "--allreduce") == 0) {
            if (ftc_allreduce_algo_parse(v, &base.corrected.allreduce)
                != FTC_OK) {
                usage();
                return 2;
            }
        } else {
            fprintf(stderr, "test_streams: unknown option '%s'\n", a);
            usage();
            return 2;
        }
        if (takes)
            i++;
    }
    if (nmin < 1 || nmax < nmin || base.nops == 0
        || base.nops > FTC_STREAM_MAX_OPS) {
        usage();
        return 2;
    }
    static const ftc_fault_info_t schemes[3] = {FTC_FAULT_LIST,
                                                FTC_FAULT_COUNT, FTC_FAULT_BIT};
    uint32_t nschemes = all_schemes ? 3 : 1;
    for (uint32_t si = 0; si < nschemes; si++) {
        ftc_stream_t b = base;
        if (all_schemes)
            b.corrected.fault_info = schemes[si];
        if (strcmp(mode, "exhaustive") == 0) {
            if (b.ncolls == 0) {
                fprintf(stderr, "test_streams: exhaustive needs --colls\n");
                return 2;
            }
            for (uint32_t n = nmin; n <= nmax; n++)
                for (uint32_t f = 0; f <= fmax && f < n; f++) {
                    ftc_stream_t s = b;
                    s.n = n;
                    s.args.f = f;
                    exhaustive(&s, f, all_ops);
                }
        } else if (strcmp(mode, "random") == 0) {
            random_runs(&b, nmin, nmax, fmax, beyond, count, seed + si);
        } else if (strcmp(mode, "one") == 0) {
            b.seed = seed;
            print_one(&b);
        } else if (strcmp(mode, "regress") == 0) {
            regressions(&b);
        } else {
            usage();
            return 2;
        }
    }
    printf("%" PRIu64 " passed, %" PRIu64 " failed\n", runs - failures,
           failures);
    return failures == 0 ? 0 : 1;
}
