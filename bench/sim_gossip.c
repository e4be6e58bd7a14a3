/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-sim for the gossip family (docs/gossip.md, docs/simulator.md):
 * `ftcoll-sim --algo push-sum|push-flow|pcf ...` lands here. Each run is
 * one allreduce on the loopback under the run's faults (loss, bit flips,
 * crashes, cut links), checked by the family's property checker
 * (bench/gossip_checker.c) unless --no-check, and reported per run: the
 * largest relative error of any live process against the exact aggregate
 * over the contributing processes, iterations and messages per process.
 * --trace-error K prints, every K-th iteration, the largest and smallest
 * error over the processes (the paper's Figures 4 and 7).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "gossip_checker.h"
#include "json.h"
#include "sim_gossip.h"

#define PROG "ftcoll-sim"

static void usage(FILE *out)
{
    fputs(
        "usage: ftcoll-sim --algo push-sum|push-flow|pcf [options]\n"
        "  -n N                            processes (8)\n"
        "  --neighbours full|hypercube|torus3d|ring|bus   (full)\n"
        "  --torus XxYxZ                   torus3d's sides (default: as\n"
        "                                  cubic as n's factors allow)\n"
        "  --partner random|round-robin    (random)\n"
        "  --target EPS                    relative accuracy of the local\n"
        "                                  test (0: 1e-14 double, 1e-6 float)\n"
        "  --op sum|avg                    aggregate (avg)\n"
        "  --dtype double|float            (double)\n"
        "  --count C                       values per process (1)\n"
        "  --max-iterations K              cap before delivery (20000)\n"
        "  --exclusion flows|all           PCF's failure handling (flows)\n"
        "  --bitflip-tolerant              PCF's section III variant\n"
        "  --loss P                        message loss probability\n"
        "  --bitflips P                    probability of one flipped bit in\n"
        "                                  a message's flows (checksum off)\n"
        "  --crash R:K,...                 rank R crashes right after its\n"
        "                                  K-th send (K=0: before the start)\n"
        "  --crashes K                     K random ranks (K <= 4) crash after\n"
        "                                  a random send in [1, --crash-window]\n"
        "                                  or, if they deliver first, at\n"
        "                                  their delivery\n"
        "  --crash-window W                sends (50)\n"
        "  --link-fail A-B@I,...           cut the link A-B for good as A\n"
        "                                  ends its I-th iteration (0: before)\n"
        "  --link-fail-reported            both ends' transports report each\n"
        "                                  cut at once, so both exclude the\n"
        "                                  link at iteration I (the paper's\n"
        "                                  Figure 4); else only the keepalive\n"
        "                                  finds it, some periods later\n"
        "  --suspect-ns, --probe-ns NS     the keepalive that finds a cut link\n"
        "                                  (with --link-fail: 20000 each, two\n"
        "                                  periods; else the core's defaults)\n"
        "  --latency-ns, --jitter-ns NS    the network (1000 and 0; the\n"
        "                                  period between iterations is 10 us)\n"
        "  --period-ns NS                  time between two iterations (10000)\n"
        "  --spread-ns NS                  processes start at seeded times in\n"
        "                                  [0, NS] (0)\n"
        "  --seed S                        seed of the run (1)\n"
        "  --runs N                        seeds S, S+1, ... (1)\n"
        "  --trace-error K                 every K-th iteration: iteration,\n"
        "                                  largest and smallest error (stdout)\n"
        "  --json                          one JSON object on stdout\n"
        "  --no-check                      report, do not assert the\n"
        "                                  family's properties\n"
        "Runs on the loopback model (1 us latency, 10 us period).\n",
        out);
}

static const struct option gossip_options[] = {
    {"algo", required_argument, NULL, 'a'},
    {"neighbours", required_argument, NULL, 'N'},
    {"torus", required_argument, NULL, 'T'},
    {"partner", required_argument, NULL, 'p'},
    {"target", required_argument, NULL, 'e'},
    {"op", required_argument, NULL, 'o'},
    {"dtype", required_argument, NULL, 'd'},
    {"count", required_argument, NULL, 'c'},
    {"max-iterations", required_argument, NULL, 'm'},
    {"exclusion", required_argument, NULL, 'x'},
    {"bitflip-tolerant", no_argument, NULL, 'B'},
    {"loss", required_argument, NULL, 'l'},
    {"bitflips", required_argument, NULL, 'b'},
    {"crash", required_argument, NULL, 'C'},
    {"crashes", required_argument, NULL, 'K'},
    {"crash-window", required_argument, NULL, 'W'},
    {"link-fail", required_argument, NULL, 'L'},
    {"link-fail-reported", no_argument, NULL, 'R'},
    {"spread-ns", required_argument, NULL, 'D'},
    {"latency-ns", required_argument, NULL, 'G'},
    {"period-ns", required_argument, NULL, 'I'},
    {"jitter-ns", required_argument, NULL, 'J'},
    {"suspect-ns", required_argument, NULL, 'S'},
    {"probe-ns", required_argument, NULL, 'P'},
    {"seed", required_argument, NULL, 's'},
    {"runs", required_argument, NULL, 'r'},
    {"trace-error", required_argument, NULL, 't'},
    {"json", no_argument, NULL, 'j'},
    {"no-check", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

bool ftc_sim_gossip_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc)
            v = argv[i + 1];
        else if (strncmp(argv[i], "--algo=", 7) == 0)
            v = argv[i] + 7;
        if (v != NULL)
            return strcmp(v, "push-sum") == 0 || strcmp(v, "push-flow") == 0
                   || strcmp(v, "pcf") == 0;
    }
    return false;
}

static int bad(const char *flag, const char *why)
{
    fprintf(stderr, PROG ": %s: %s\n", flag, why);
    return 2;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (s == NULL || *s == '\0' || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0')
        return false;
    *out = v;
    return true;
}

static bool parse_prob(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= 0.0 && v <= 1.0))
        return false;
    *out = v;
    return true;
}

/* Sides X <= Y <= Z of a torus with X*Y*Z = n, as close to a cube as n's
 * factors allow. */
static void auto_torus(uint32_t n, uint32_t t[3])
{
    uint32_t x = 1;
    for (uint32_t a = 1; (uint64_t)a * a * a <= n; a++)
        if (n % a == 0)
            x = a;
    uint32_t rest = n / x, y = 1;
    for (uint32_t b = x; (uint64_t)b * b <= rest; b++)
        if (rest % b == 0)
            y = b;
    if (y < x)
        y = 1;
    t[0] = x, t[1] = y, t[2] = rest / y;
}

typedef struct opts {
    gc_run_t run;              /* the template; seed and crashes per run */
    char *crash_arg, *cut_arg;
    uint32_t random_crashes;
    uint64_t crash_window;
    uint64_t seed;
    uint32_t runs;
    uint32_t trace_every;
    bool json, check;
    bool cuts_reported;        /* --link-fail-reported */
} opts_t;

static int parse_crashes(const char *arg, gc_run_t *run)
{
    char *copy = strdup(arg), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        uint64_t r, k;
        if (colon == NULL) {
            rc = bad("--crash", "expected R:K, e.g. 3:10");
            break;
        }
        *colon = '\0';
        if (!parse_u64(tok, &r) || !parse_u64(colon + 1, &k) || r >= run->n) {
            rc = bad("--crash", "R must be a rank below -n, K a send count");
            break;
        }
        if (run->ncrash == GC_MAX_CRASH) {
            rc = bad("--crash", "at most 4 crashes");
            break;
        }
        for (uint32_t i = 0; i < run->ncrash; i++)
            if (run->crash[i].rank == r) {
                rc = bad("--crash", "a rank listed twice");
                break;
            }
        if (rc != 0)
            break;
        gc_crash_t *c = &run->crash[run->ncrash++];
        c->rank = (uint32_t)r;
        c->before = k == 0;
        c->after = k;
    }
    free(copy);
    return rc;
}

static int parse_cuts(const char *arg, gc_run_t *run)
{
    char *copy = strdup(arg), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(tok, '-'), *at = strchr(tok, '@');
        uint64_t a, b, k;
        if (dash == NULL || at == NULL || at < dash) {
            rc = bad("--link-fail", "expected A-B@I, e.g. 0-1@75");
            break;
        }
        *dash = '\0', *at = '\0';
        if (!parse_u64(tok, &a) || !parse_u64(dash + 1, &b)
            || !parse_u64(at + 1, &k) || a >= run->n || b >= run->n || a == b) {
            rc = bad("--link-fail", "A and B: two ranks below -n; I: an "
                                    "iteration");
            break;
        }
        if (run->ncut == GC_MAX_CUT) {
            rc = bad("--link-fail", "at most 4 links");
            break;
        }
        gc_cut_t *c = &run->cut[run->ncut++];
        c->a = (uint32_t)a, c->b = (uint32_t)b, c->after = k;
    }
    free(copy);
    return rc;
}

static int parse(int argc, char **argv, opts_t *o)
{
    gc_run_t *run = &o->run;
    gc_run_init(run, 8);
    o->crash_window = 50;

    o->seed = 1;
    o->runs = 1;
    o->check = true;
    const char *neigh = "full", *torus = NULL;
    bool n_given = false;
    int c, li = -1;
    char flag[32];
    opterr = 0;
    optind = 0;
    /* -n first: the rank checks of --crash and --link-fail need it. */
    while ((c = getopt_long(argc, argv, ":hVn:", gossip_options, &li)) != -1) {
        li = -1;
        if (c == 'n') {
            uint64_t n;
            if (!parse_u64(optarg, &n) || n < 1 || n > (1u << 24))
                return bad("-n", "expected 1..16777216");
            run->n = (uint32_t)n;
            n_given = true;
        }
    }
    (void)n_given;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":hVn:", gossip_options, &li)) != -1) {
        const char *f = cli_flag(c, li, gossip_options, flag, sizeof(flag));
        const char *v = optarg;
        li = -1;
        uint64_t u;
        switch (c) {
        case '?':
        case ':':
            return cli_refuse(PROG, c, argv, gossip_options);
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            cli_print_version(PROG);
            return 0;
        case 'n':
            break;
        case 'a':
            run->algo = strcmp(v, "push-sum") == 0    ? FTC_ALGO_PUSH_SUM
                        : strcmp(v, "push-flow") == 0 ? FTC_ALGO_PUSH_FLOW
                                                      : FTC_ALGO_PCF;
            if (strcmp(v, "pcf") != 0 && run->algo == FTC_ALGO_PCF)
                return bad(f, "expected push-sum, push-flow or pcf");
            break;
        case 'N':
            neigh = v;
            break;
        case 'T':
            torus = v;
            break;
        case 'p':
            if (strcmp(v, "random") == 0)
                run->params.partner = FTC_PARTNER_RANDOM;
            else if (strcmp(v, "round-robin") == 0)
                run->params.partner = FTC_PARTNER_ROUND_ROBIN;
            else
                return bad(f, "expected random or round-robin");
            break;
        case 'e': {
            char *end;
            double e = strtod(v, &end);
            if (*v == '\0' || *end != '\0' || !(e >= 0.0))
                return bad(f, "expected a relative accuracy >= 0");
            run->params.target = e;
            break;
        }
        case 'o':
            if (strcmp(v, "sum") == 0)
                run->params.aggregate = FTC_GOSSIP_SUM;
            else if (strcmp(v, "avg") == 0)
                run->params.aggregate = FTC_GOSSIP_AVERAGE;
            else
                return bad(f, "expected sum or avg");
            break;
        case 'd':
            if (strcmp(v, "double") == 0)
                run->dtype = FTC_DOUBLE;
            else if (strcmp(v, "float") == 0)
                run->dtype = FTC_FLOAT;
            else
                return bad(f, "expected double or float (gossip averages "
                              "real numbers)");
            break;
        case 'c':
            if (!parse_u64(v, &u) || u > 1u << 20)
                return bad(f, "expected 0..1048576");
            run->count = (uint32_t)u;
            break;
        case 'm':
            if (!parse_u64(v, &u) || u == 0)
                return bad(f, "expected a count > 0");
            run->params.max_iterations = u;
            break;
        case 'x':
            if (strcmp(v, "flows") == 0)
                run->params.exclusion = FTC_GOSSIP_EXCLUDE_FLOWS;
            else if (strcmp(v, "all") == 0)
                run->params.exclusion = FTC_GOSSIP_EXCLUDE_ALL;
            else
                return bad(f, "expected flows or all");
            break;
        case 'B':
            run->params.bitflip_tolerant = 1;
            break;
        case 'l':
            if (!parse_prob(v, &run->drop_prob))
                return bad(f, "expected a probability in [0, 1]");
            break;
        case 'b':
            if (!parse_prob(v, &run->flip_prob))
                return bad(f, "expected a probability in [0, 1]");
            break;
        case 'C':
            o->crash_arg = optarg;
            break;
        case 'K':
            if (!parse_u64(v, &u) || u > GC_MAX_CRASH)
                return bad(f, "expected 0..4");
            o->random_crashes = (uint32_t)u;
            break;
        case 'W':
            if (!parse_u64(v, &u) || u == 0)
                return bad(f, "expected a send count > 0");
            o->crash_window = u;
            break;
        case 'L':
            o->cut_arg = optarg;
            break;
        case 'R':
            o->cuts_reported = true;
            break;
        case 'I':
            if (!parse_u64(v, &u) || u == 0)
                return bad(f, "expected nanoseconds > 0");
            run->params.period_ns = u;
            break;
        case 'D':
        case 'G':
        case 'J':
            if (!parse_u64(v, c == 'D'   ? &run->spread_ns
                              : c == 'G' ? &run->latency_ns
                                         : &run->jitter_ns))
                return bad(f, "expected nanoseconds");
            break;
        case 'S':
        case 'P':
            if (!parse_u64(v, &u) || u == 0)
                return bad(f, "expected nanoseconds > 0");
            *(c == 'S' ? &run->suspect_ns : &run->probe_ns) = u;
            break;
        case 's':
            if (!parse_u64(v, &o->seed))
                return bad(f, "expected an integer");
            break;
        case 'r':
            if (!parse_u64(v, &u) || u == 0 || u > 1000000)
                return bad(f, "expected 1..1000000");
            o->runs = (uint32_t)u;
            break;
        case 't':
            if (!parse_u64(v, &u) || u == 0 || u > 1000000)
                return bad(f, "expected an iteration step 1..1000000");
            o->trace_every = (uint32_t)u;
            break;
        case 'j':
            o->json = true;
            break;
        case 'q':
            o->check = false;
            break;
        default:
            return cli_refuse(PROG, '?', argv, gossip_options);
        }
    }
    if (optind < argc)
        return bad(argv[optind], "unexpected operand");
    static const struct {
        const char *name;
        ftc_gossip_neighbours_t v;
    } shapes[] = {{"full", FTC_NEIGHBOURS_FULL},
                  {"hypercube", FTC_NEIGHBOURS_HYPERCUBE},
                  {"torus3d", FTC_NEIGHBOURS_TORUS3D},
                  {"ring", FTC_NEIGHBOURS_RING},
                  {"bus", FTC_NEIGHBOURS_BUS}};
    bool found = false;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        if (strcmp(neigh, shapes[i].name) == 0) {
            run->params.neighbours = shapes[i].v;
            found = true;
        }
    if (!found)
        return bad("--neighbours", "expected full, hypercube, torus3d, ring "
                                   "or bus");
    if (torus != NULL) {
        if (run->params.neighbours != FTC_NEIGHBOURS_TORUS3D)
            return bad("--torus", "only with --neighbours torus3d");
        unsigned x, y, z;
        char tail;
        if (sscanf(torus, "%ux%ux%u%c", &x, &y, &z, &tail) != 3
            || (uint64_t)x * y * z != run->n)
            return bad("--torus", "expected XxYxZ with X*Y*Z = -n");
        run->params.torus[0] = x, run->params.torus[1] = y;
        run->params.torus[2] = z;
    } else if (run->params.neighbours == FTC_NEIGHBOURS_TORUS3D) {
        auto_torus(run->n, run->params.torus);
    }
    if (run->algo == 0)
        return bad("--algo", "push-sum, push-flow or pcf");
    int rc;
    if (o->crash_arg != NULL && (rc = parse_crashes(o->crash_arg, run)) != 0)
        return rc;
    if (o->cut_arg != NULL && (rc = parse_cuts(o->cut_arg, run)) != 0)
        return rc;
    if (o->cuts_reported && run->ncut == 0)
        return bad("--link-fail-reported", "needs --link-fail");
    for (uint32_t i = 0; i < run->ncut; i++)
        run->cut[i].reported = o->cuts_reported;
    /* A cut link not reported is found by the keepalive alone: unless
     * told otherwise, probe a silent neighbour after two periods, and
     * with the core's back-off (probe_backoff 3: waits of 2, 4, 8 and 16
     * periods) give up on it 32 periods after it fell silent (the
     * loopback's round trip is 2 us, so nobody live is ever suspected).
     * Without cuts, the core's defaults: the transport reports crashes,
     * and the message counts hold no probes. */
    if (run->ncut > 0 && run->suspect_ns == 0)
        run->suspect_ns = 2 * 10000;
    if (run->ncut > 0 && run->probe_ns == 0)
        run->probe_ns = 2 * 10000;
    if (run->ncrash + o->random_crashes > GC_MAX_CRASH)
        return bad("--crashes", "with --crash: at most 4 crashes in all");
    if (o->random_crashes >= run->n)
        return bad("--crashes", "must leave a live process");
    if (run->flip_prob > 0 && o->check)
        run->accuracy_recorded_only = true; /* docs/gossip.md, bit flips */
    const char *why = NULL;
    if (ftc_gossip_params_check(&run->params, run->algo, run->n, run->dtype,
                                FTC_SUM, &why) != FTC_OK)
        return bad("--algo", why != NULL ? why : "parameters refused");
    return -1;
}

static const char *neigh_name(ftc_gossip_neighbours_t v)
{
    switch (v) {
    case FTC_NEIGHBOURS_HYPERCUBE: return "hypercube";
    case FTC_NEIGHBOURS_TORUS3D: return "torus3d";
    case FTC_NEIGHBOURS_RING: return "ring";
    case FTC_NEIGHBOURS_BUS: return "bus";
    default: return "full";
    }
}

int ftc_sim_gossip_main(int argc, char **argv)
{
    opts_t o;
    memset(&o, 0, sizeof(o));
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    const gc_run_t *t = &o.run;
    json_t jw, *j = NULL;
    if (o.json) {
        j = &jw;
        json_to_file(j, stdout);
        json_object_begin(j);
        json_key(j, "algo");
            json_string(j, ftc_algo_name(t->algo));
        json_key(j, "n");
            json_uint(j, t->n);
        json_key(j, "neighbours");
            json_string(j, neigh_name(t->params.neighbours));
        json_key(j, "aggregate");
            json_string(j, t->params.aggregate == FTC_GOSSIP_SUM
                                        ? "sum" : "avg");
        json_key(j, "dtype");
            json_string(j, t->dtype == FTC_FLOAT ? "float" : "double");
        json_key(j, "count");
            json_uint(j, t->count);
        json_key(j, "target");
            json_general(j, t->params.target, 6);
        json_key(j, "loss");
            json_general(j, t->drop_prob, 6);
        json_key(j, "bitflips");
            json_general(j, t->flip_prob, 6);
        json_key(j, "runs");
        json_array_begin(j);
    } else {
        printf("# %s n=%u %s %s %s count=%u target=%g loss=%g bitflips=%g\n",
               ftc_algo_name(t->algo), t->n, neigh_name(t->params.neighbours),
               t->params.aggregate == FTC_GOSSIP_SUM ? "sum" : "avg",
               t->dtype == FTC_FLOAT ? "float" : "double", t->count,
               t->params.target, t->drop_prob, t->flip_prob);
        if (o.trace_every == 0)
            printf("%-6s %-4s %12s %12s %10s %10s %7s %5s %8s %8s\n", "seed",
                   "ok", "max_rel_err", "err_vs_all", "iterations",
                   "msgs/proc", "crashed", "cuts", "dropped", "flipped");
    }
    uint32_t failed = 0;
    double worst = 0.0, it_sum = 0.0, msg_sum = 0.0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; i < o.runs; i++) {
        gc_run_t run = o.run;
        run.seed = o.seed + i;
        gc_draw_crashes(&run, o.random_crashes, o.crash_window);
        if (o.trace_every > 0) {
            run.trace = stdout;
            run.trace_every = o.trace_every;
        }
        if (!o.check)
            run.accuracy_recorded_only = true;
        gc_outcome_t out;
        gc_check(&run, &out);
        /* A fault that did not happen makes no run of that fault. */
        bool ok = out.ok || !o.check;
        if (o.check && out.missed_crashes > 0)
            ok = false, snprintf(out.why, sizeof(out.why),
                                 "%u scheduled crashes did not happen",
                                 out.missed_crashes);
        if (o.check && out.cuts_done < run.ncut)
            ok = false, snprintf(out.why, sizeof(out.why),
                                 "%u scheduled link cuts did not happen",
                                 run.ncut - out.cuts_done);
        failed += !ok;
        double per_proc = (double)out.messages / run.n;
        worst = out.max_rel_error > worst ? out.max_rel_error : worst;
        it_sum += (double)out.max_iterations;
        msg_sum += per_proc;
        if (j != NULL) {
            json_object_begin(j);
            json_key(j, "seed");
            json_uint(j, run.seed);
            json_key(j, "ok");
            json_bool(j, ok);
            if (!ok) {
                json_key(j, "why");
                json_string(j, out.why);
            }
            json_key(j, "max_rel_error");
            json_general(j, out.max_rel_error, 6);
            json_key(j, "max_err_vs_all");
            json_general(j, out.max_err_vs_all, 6);
            json_key(j, "iterations");
            json_uint(j, out.max_iterations);
            json_key(j, "messages");
            json_uint(j, out.messages);
            json_key(j, "messages_per_process");
            json_general(j, per_proc, 6);
            json_key(j, "at_floor");
            json_uint(j, out.at_floor);
            json_key(j, "max_floor");
            json_general(j, out.max_floor, 6);
            json_key(j, "at_cap");
            json_uint(j, out.at_cap);
            json_key(j, "messages_after_delivery");
            json_uint(j, out.messages_after_delivery);
            json_key(j, "crashed");
            json_uint(j, out.crashed);
            json_key(j, "cuts");
            json_uint(j, out.cuts_done);
            json_key(j, "dropped");
            json_uint(j, out.dropped);
            json_key(j, "dropped_cut");
            json_uint(j, out.dropped_cut);
            json_key(j, "flipped");
            json_uint(j, out.flipped);
            json_key(j, "ended_ok");
            json_uint(j, out.ended_ok);
            json_key(j, "ended_peer_failed");
            json_uint(j, out.ended_peer_failed);
            json_key(j, "ended_timedout");
            json_uint(j, out.ended_timedout);
            json_key(j, "ended_other");
            json_uint(j, out.ended_other);
            if (out.survivors_weight == out.survivors_weight) {
                json_key(j, "survivors_weight");
                json_general(j, out.survivors_weight, 6);
            }
            json_object_end(j);
        } else if (o.trace_every == 0) {
            printf("%-6llu %-4s %12.3g %12.3g %10llu %10.1f %7u %5u %8llu "
                   "%8llu%s%s\n",
                   (unsigned long long)run.seed, ok ? "ok" : "FAIL",
                   out.max_rel_error, out.max_err_vs_all,
                   (unsigned long long)out.max_iterations, per_proc,
                   out.crashed, out.cuts_done,
                   (unsigned long long)out.dropped,
                   (unsigned long long)out.flipped, ok ? "" : "  ",
                   ok ? "" : out.why);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec)
                  + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (j != NULL) {
        json_array_end(j);
        json_key(j, "failed");
            json_uint(j, failed);
        json_key(j, "wall_s");
            json_general(j, wall, 6);
        json_object_end(j);
        fputc('\n', stdout);
    } else {
        printf("# %u runs, %u failed; worst max_rel_error %.3g, mean "
               "iterations %.1f, mean messages/process %.1f; %.2f s\n",
               o.runs, failed, worst, it_sum / o.runs, msg_sum / o.runs, wall);
    }
    return failed > 0 ? 1 : 0;
}
