/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Property test: runs collectives on the loopback backend under fault
 * schedules and asserts the papers' properties on every run (checker.h).
 *
 *   exhaustive: every failed set of size <= F and, for each failed rank,
 *     every crash point: before the operation, or right after its K-th
 *     send for K = 0 .. (its sends in the failure-free run).
 *   random: seeded random failed sets and crash points, large n.
 *
 * A violation prints the ftcoll-sim command line that reproduces it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/butterfly_part.h"
#include "checker.h"
#include "scenario.h"

static uint64_t runs, failures;
static int verbose;

static void print_repro(const ftc_scenario_t *s)
{
    fprintf(stderr, "  reproduce: ftcoll-sim --coll %s --algo %s -n %u -f %u "
                    "--root %u --fault-info %s --correction %s -d %u "
                    "--tree %s -k %u --seed %" PRIu64,
            ftc_coll_name(s->coll), ftc_algo_name(s->args.algo), s->n,
            s->args.f, s->args.root,
            s->corrected.fault_info == FTC_FAULT_LIST    ? "list"
            : s->corrected.fault_info == FTC_FAULT_COUNT ? "count"
                                                    : "bit",
            s->corrected.correction == FTC_CORRECTION_CHECKED ? "checked"
                                                         : "opportunistic",
            s->corrected.distance, ftc_tree_kind_name(s->corrected.bcast_tree.kind),
            s->corrected.bcast_tree.k, s->seed);
    if (s->corrected.allreduce != FTC_ALLREDUCE_AUTO)
        fprintf(stderr, " --allreduce %s",
                ftc_allreduce_algo_name(s->corrected.allreduce));
    if (s->detect_delay_ns == UINT64_MAX)
        fprintf(stderr, " --detect-ns never");
    if (s->jitter_ns)
        fprintf(stderr, " --jitter-ns %" PRIu64, s->jitter_ns);
    if (s->start_spread_ns)
        fprintf(stderr, " --spread-ns %" PRIu64, s->start_spread_ns);
    if (s->args.dtype != FTC_INT64)
        fprintf(stderr, " --dtype %s", ftc_dtype_name(s->args.dtype));
    if (s->input == FTC_INPUT_RANDOM)
        fprintf(stderr, " --input random:%" PRIu64 " --count %" PRIu64,
                s->input_seed, s->args.count);
    for (uint32_t i = 0; i < s->nfail; i++)
        fprintf(stderr, "%s%u", i ? "," : " --fail ", s->fail[i]);
    for (uint32_t i = 0; i < s->ncrash; i++)
        fprintf(stderr, "%s%u:%" PRIu64, i ? "," : " --crash ",
                s->crash[i].rank, s->crash[i].after_sends);
    fprintf(stderr, "\n");
}

/* Run and check one scenario; sends (optional) gets each rank's sends. */
static void run_one(const ftc_scenario_t *s, uint64_t *sends)
{
    ftc_scenario_result_t res;
    char err[256], msg[512];
    runs++;
    if (ftc_scenario_run(s, &res, err, sizeof(err)) != FTC_OK) {
        failures++;
        fprintf(stderr, "FAIL: scenario refused: %s\n", err);
        print_repro(s);
        return;
    }
    int v = ftc_check(s, &res, msg, sizeof(msg));
    if (v != 0) {
        failures++;
        if (failures <= 20) {
            fprintf(stderr, "FAIL: %s\n", msg);
            print_repro(s);
        }
    } else if (verbose) {
        print_repro(s);
    }
    if (sends != NULL)
        for (uint32_t r = 0; r < res.n; r++)
            sends[r] = res.ranks[r].stats.msgs_sent;
    ftc_scenario_result_free(&res);
}

/* One fault per failed rank: UINT64_MAX is "before the operation", other
 * values a crash after that many sends. */
static void run_schedule(const ftc_scenario_t *base, const uint32_t *ranks,
                         const uint64_t *points, uint32_t k)
{
    ftc_scenario_t s = *base;
    s.nfail = 0;
    s.ncrash = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (points[i] == UINT64_MAX) {
            s.fail[s.nfail++] = ranks[i];
        } else {
            s.crash[s.ncrash].rank = ranks[i];
            s.crash[s.ncrash++].after_sends = points[i];
        }
    }
    run_one(&s, NULL);
}

static void enumerate_points(const ftc_scenario_t *base, const uint64_t *sends,
                             const uint32_t *ranks, uint64_t *points,
                             uint32_t k, uint32_t i)
{
    if (i == k) {
        run_schedule(base, ranks, points, k);
        return;
    }
    points[i] = UINT64_MAX;
    enumerate_points(base, sends, ranks, points, k, i + 1);
    /* Sends happen in the failure-free count or a few more when others
     * fail (corrections sweep further); cover a margin. */
    uint64_t top = sends[ranks[i]] + 2;
    for (uint64_t kk = 0; kk <= top; kk++) {
        points[i] = kk;
        enumerate_points(base, sends, ranks, points, k, i + 1);
    }
}

static void enumerate_sets(const ftc_scenario_t *base, const uint64_t *sends,
                           uint32_t *ranks, uint32_t k, uint32_t want,
                           uint32_t next)
{
    if (k == want) {
        uint64_t points[8];
        enumerate_points(base, sends, ranks, points, k, 0);
        return;
    }
    for (uint32_t r = next; r < base->n; r++) {
        ranks[k] = r;
        enumerate_sets(base, sends, ranks, k + 1, want, r + 1);
    }
}

static void exhaustive(const ftc_scenario_t *base, uint32_t max_failures)
{
    uint64_t *sends = calloc(base->n, sizeof(uint64_t));
    ftc_scenario_t clean = *base;
    clean.nfail = clean.ncrash = 0;
    run_one(&clean, sends);
    uint32_t ranks[8];
    for (uint32_t want = 1; want <= max_failures && want < base->n; want++)
        enumerate_sets(base, sends, ranks, 0, want, 0);
    free(sends);
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void random_runs(const ftc_scenario_t *base, uint32_t count,
                        uint64_t seed, uint32_t max_failures)
{
    rng_state = seed;
    for (uint32_t i = 0; i < count; i++) {
        ftc_scenario_t s = *base;
        s.seed = rnd();
        s.nfail = s.ncrash = 0;
        uint32_t k = (uint32_t)(rnd() % (max_failures + 1));
        for (uint32_t j = 0; j < k; j++) {
            uint32_t r;
            bool dup;
            do {
                r = (uint32_t)(rnd() % s.n);
                dup = false;
                for (uint32_t t = 0; t < s.nfail; t++)
                    dup |= s.fail[t] == r;
                for (uint32_t t = 0; t < s.ncrash; t++)
                    dup |= s.crash[t].rank == r;
            } while (dup);
            if (rnd() % 2 == 0) {
                s.fail[s.nfail++] = r;
            } else {
                s.crash[s.ncrash].rank = r;
                s.crash[s.ncrash++].after_sends = rnd() % 12;
            }
        }
        run_one(&s, NULL);
    }
}

static ftc_coll_t parse_coll(const char *v)
{
    if (strcmp(v, "reduce") == 0)
        return FTC_COLL_REDUCE;
    if (strcmp(v, "bcast") == 0)
        return FTC_COLL_BCAST;
    return FTC_COLL_ALLREDUCE;
}

/* The variants worth covering for one collective, algorithm and (n, f). */
static void sweep_variants(ftc_scenario_t *s, uint32_t max_failures,
                           const char *mode, uint32_t count, uint64_t seed)
{
    static const ftc_fault_info_t infos[] = {FTC_FAULT_LIST, FTC_FAULT_COUNT,
                                             FTC_FAULT_BIT};
    static const ftc_correction_t corrs[] = {FTC_CORRECTION_CHECKED,
                                             FTC_CORRECTION_OPPORTUNISTIC};
    bool is_random = strcmp(mode, "random") == 0;
    uint32_t ninfo = s->coll == FTC_COLL_BCAST || s->args.algo == FTC_ALGO_TREE
                         ? 1 : 3;
    uint32_t ncorr = s->coll == FTC_COLL_REDUCE || s->args.algo == FTC_ALGO_TREE
                         ? 1 : 2;
    for (uint32_t i = 0; i < ninfo; i++) {
        for (uint32_t c = 0; c < ncorr; c++) {
            /* The full cross product only for the default of the other
             * axis: variants are independent modules. */
            if (i > 0 && c > 0)
                continue;
            s->corrected.fault_info = infos[i];
            s->corrected.correction = corrs[c];
            s->corrected.distance = s->args.f + 1;
            if (is_random)
                random_runs(s, count, seed + i * 7 + c, max_failures);
            else
                exhaustive(s, max_failures);
        }
    }
}

int main(int argc, char **argv)
{
    const char *mode = "exhaustive";
    const char *colls = "reduce,bcast,allreduce";
    const char *algo = "corrected";
    uint32_t nmin = 1, nmax = 9, fmax = 2, count = 100, extra = 0;
    uint64_t segment = 0;   /* --segment: ftc_config_t's segment_size */
    /* --count: elements of a --dtype/--op run's random values. More
     * elements, more chances that two folds in different orders differ
     * in their last bits (the checker's bit-identity check). */
    uint64_t dcount = 3;
    uint64_t seed = 1;
    bool keepalive = false, jitter = false, rotate = false;
    const char *dtype = NULL, *opname = NULL;
    ftc_allreduce_algo_t allreduce = FTC_ALLREDUCE_AUTO;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) mode = argv[++i];
        else if (strcmp(argv[i], "--colls") == 0 && i + 1 < argc) colls = argv[++i];
        else if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc) algo = argv[++i];
        else if (strcmp(argv[i], "--nmin") == 0 && i + 1 < argc) nmin = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--nmax") == 0 && i + 1 < argc) nmax = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--fmax") == 0 && i + 1 < argc) fmax = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) count = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--beyond-f") == 0 && i + 1 < argc) extra = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--keepalive") == 0) keepalive = true;
        else if (strcmp(argv[i], "--jitter") == 0) jitter = true;
        else if (strcmp(argv[i], "--rotate-root") == 0) rotate = true;
        else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) dtype = argv[++i];
        else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) opname = argv[++i];
        else if (strcmp(argv[i], "--segment") == 0 && i + 1 < argc) segment = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) dcount = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--mutant") == 0 && i + 1 < argc) {
            /* The butterfly broken on purpose (butterfly_part.h): the
             * run must then fail. */
            const char *mu = argv[++i];
            if (strcmp(mu, "butterfly-reassociate") == 0)
                ftc_butterfly_mutant = FTC_BUTTERFLY_MUTANT_REASSOCIATE;
            else if (strcmp(mu, "butterfly-skip-last") == 0)
                ftc_butterfly_mutant = FTC_BUTTERFLY_MUTANT_SKIP_LAST;
            else {
                fprintf(stderr, "--mutant: butterfly-reassociate or butterfly-skip-last\n");
                return 2;
            }
        }
        else if (strcmp(argv[i], "--allreduce") == 0 && i + 1 < argc) {
            if (ftc_allreduce_algo_parse(argv[++i], &allreduce) != FTC_OK) {
                fprintf(stderr, "--allreduce: auto, reduce_bcast, exchange or butterfly\n");
                return 2;
            }
        }
        else if (strcmp(argv[i], "-v") == 0) verbose = 1;
        else {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    char collbuf[128];
    snprintf(collbuf, sizeof(collbuf), "%s", colls);
    for (char *c = strtok(collbuf, ","); c != NULL; c = strtok(NULL, ",")) {
        for (uint32_t n = nmin; n <= nmax; n = n < 16 ? n + 1 : n * 4) {
            for (uint32_t f = 0; f <= fmax && f < n; f++) {
                ftc_scenario_t s;
                ftc_scenario_init(&s);
                s.coll = parse_coll(c);
                (void)ftc_algo_parse(algo, &s.args.algo);
                s.n = n;
                s.args.f = f;
                s.seed = seed;
                s.args.root = rotate ? n - 1 : 0;
                s.segment_size = segment;
                s.corrected.allreduce = allreduce;
                if (dtype != NULL || opname != NULL) {
                    /* Random values of another type or operation: the
                     * checker then matches the result against the
                     * reductions over every admissible set of inputs. */
                    if ((dtype != NULL
                         && ftc_dtype_parse(dtype, &s.args.dtype) != FTC_OK)
                        || (opname != NULL
                            && ftc_op_parse(opname, &s.args.op) != FTC_OK)) {
                        fprintf(stderr, "bad --dtype or --op\n");
                        return 2;
                    }
                    s.input = FTC_INPUT_RANDOM;
                    s.input_seed = seed + n;
                    s.args.count = dcount;
                } else {
                    s.input = FTC_INPUT_UNIT;
                    s.args.count = (uint64_t)n + 2;
                }
                if (keepalive)
                    s.detect_delay_ns = UINT64_MAX;
                if (jitter)
                    s.jitter_ns = 3000;
                /* The tree baseline tolerates nothing: faults only show
                 * that it ends with an error instead of hanging. */
                uint32_t faults = s.args.algo == FTC_ALGO_TREE ? (f > 0 ? f : 1)
                                                               : f + extra;
                sweep_variants(&s, faults, mode, count, seed + n * 131 + f);
            }
        }
    }
    printf("%" PRIu64 " passed, %" PRIu64 " failed\n", runs - failures, failures);
    return failures == 0 ? 0 : 1;
}
