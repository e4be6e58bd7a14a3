/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-bench: latency of one collective over real processes, OSU
 * style, with every result checked and optional failures, over any backend
 * this build has (zmq, ucx, libfabric: FTCOLL_BACKEND, which ftcoll-run
 * --backend sets; default the first built in).
 *
 *   ftcoll-run -n 8 --backend ucx -- ftcoll-bench --coll allreduce \
 *       --algo corrected -f 1 --sizes 8,64,1024 --iters 1000 \
 *       [--kill 3@500] [--json|--csv] [--pingpong] [--wait spin]
 *
 * Started by ftcoll-run (file rendezvous), by a PMIx launcher, or alone
 * (one rank). Iterations are numbered from 0 across the whole sweep,
 * warm-up included. At iteration g rank r contributes (r+1)*(g+1+i) to
 * element i (int64, sum), so every rank can check a result on its own:
 *   - a reduce root's or allreduce's value must be (g+1+i) * W where W is
 *     the sum of (r+1) over a valid set: every rank that is not a victim
 *     (and this rank) in, a victim in or out as a whole, a rank that killed
 *     or stopped itself before iteration g out;
 *   - a bcast must deliver the root's input;
 *   - with the list scheme (the default), every rank the result's failed
 *     list does not name must be in W (a named one may be, or not);
 *   - statuses other than FTC_OK are accepted only when the faults explain
 *     them (more victims than f, a victim root, a tree with a victim).
 * Survivors of an allreduce must also agree: each prints a digest of all
 * its results, which the caller compares.
 *
 * Faults: --kill R@G makes rank R SIGKILL itself as it starts iteration G,
 * --crash R@G[:US] once it has started iteration G and progressed it for
 * US microseconds (default 0: right after ftc_init_*, whose first sends
 * may be out), --stop R@G SIGSTOP itself as it starts iteration G
 * (ftcoll-run resumes it at the end; it should learn that it was
 * excluded). --victims lists ranks that something else
 * (ftcoll-run --kill/--stop) may kill at any time.
 *
 * Faults from outside are tied to progress, never to a time (a job may be
 * over before a time comes, on a faster or idler machine): --cue R@G makes
 * rank R print {"rank":R,"event":"cue","iter":G} as it starts iteration G,
 * which ftcoll-run acts on (--kill R@R:'"cue","iter":G}'), and --hold R@H
 * makes R, a victim from outside, wait before iteration H until it has
 * been killed or stopped (without progressing until the signal lands, so
 * that it is never killed in the middle of a send; after a stop it
 * progresses again, to learn that it was excluded): the
 * fault lands somewhere in [G, H], wherever the launcher's signal finds
 * it, but always inside the stream. --gate H:FILE makes every rank wait
 * before iteration H until FILE exists (a driver's cue to go on). A hold
 * or gate that lasts FTCOLL_BENCH_OP_TIMEOUT is a hang. The dying rank prints
 * {"rank":R,"event":"kill","iter":G,"t_ns":T} first ("crash", "stop") (CLOCK_MONOTONIC, one
 * clock per host), and survivors report when they delivered iteration G
 * ("marks"), which gives the time from a failure to delivery.
 *
 * Output (stdout): the latency table from the lowest live rank (avg, min
 * and max over ranks of each rank's mean; p50 and p99: the worst rank's;
 * over the operations that delivered FTC_OK, the others are counted in
 * the summary's "errors"),
 * as CSV or JSON lines on request, then one JSON line per surviving rank:
 *   {"rank":R,"completed":N,"ok":K,"errors":E,"wrong":W,"excluded":false,
 *    "failed":[...],"last":[...],"digest":"...","marks":[[G,T]],...}
 * A corrected allreduce's summary names the variant that ran in
 * "allreduce" (--allreduce, auto resolved with ftc_group_allreduce_algo
 * for this group and transport), and every summary but --coll agree|shrink's counts in
 * "op_msgs_sent" the messages the stream's collectives (warm-up
 * included) sent as their own, by the time each delivered
 * (ftc_stats_t.msgs_sent summed): not the core's probes and other
 * control messages, which "counters" and "transport" count with them.
 * The summary's "transport" object says what the backend counted, and in
 * "reports" which peers it reported failed by itself, how and when (the
 * others the core found by its keepalive or learnt from a collective).
 * --pingpong first measures the raw transport between ranks 0 and 1
 * (ZeroMQ PAIR, UCP active messages, a libfabric RDM endpoint), outside
 * ftcoll, for comparison within the same run.
 *
 * Trees: --tree binomial|knomial|kary with -k K gives ftco, the plain
 * tree family and the corrected family one tree (bench_tree.h says what
 * each runs on it), so that they can be compared on the same tree;
 * without it each family keeps its default.
 *
 * Waiting: --wait block (default) lets the backend sleep on its
 * descriptor when there is nothing to do, which is right when ranks share
 * cores; --wait spin polls progress without sleeping, which is what a
 * latency measurement wants when each rank has a core.
 *
 * Wrong use, on purpose (the conformance suite's wrong-use cases give one
 * rank other options than the rest): --bad-arg KIND@G makes this rank's
 * call at iteration G invalid (null-buffer, huge-count: 2^40 elements,
 * bad-op), --checked runs every call in checked mode. (--uniform runs
 * every allreduce in uniform mode, ftc_coll_args_t.uniform: the corrected
 * family's allreduce only; an iteration whose members took different
 * roots' values then ends with FTC_EPROC_FAILED at every member, which a
 * fault explains.) With --usage-errors
 * the statuses of usage errors (FTC_EMISMATCH, FTC_EPEER_INVALID,
 * FTC_ETIMEDOUT, and this rank's refused call) count as errors, not
 * wrong results, and the summary lists the first iterations' statuses
 * and values ("results": [[G, status, key]]) for the caller to compare
 * across ranks; "statuses" always counts operations by how they ended.
 *
 * Membership: messages are authenticated with the job key when the
 * bootstrap has one (ftcoll-run and PMIx do; docs/security.md), so a
 * process outside the job cannot act on the ranks; --no-auth sends the
 * job token only, for trusted fabrics (and to measure what the MAC costs).
 *
 * Environment: FTCOLL_BACKEND, FTCOLL_SUSPECT_MS, FTCOLL_PROBE_MS (the
 * core's timeouts), the backend's own (FTCOLL_ZMQ_*, FTCOLL_UCX_*,
 * FTCOLL_OFI_*, UCX_*, FI_*), FTCOLL_BENCH_OP_TIMEOUT (seconds an
 * operation may take before the bench declares a hang, default 60).
 * Exit status: 0 all good; 1 a wrong result; 2 usage; 3 a hang; 4 setup.
 *
 * At the end, after its summary line, every live rank takes part in one
 * more allreduce, whose result nobody reads: a rank that delivers it knows
 * that every other live rank has printed its summary, so no rank leaves
 * (and looks failed to the others) while another still counts failures.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_transport.h"
#include "bench_ulfm.h"
#include "cli.h"
#include "json.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll/gossip.h"
#include "bench_loss.h"
#include "bench_survivors.h"
#include "bench_tree.h"
#include "ftcoll_bootstrap.h"

#define MAX_PLAN 64
#define MAX_SIZES 64
#define MAX_MARKS 64

typedef struct plan_entry {
    uint32_t rank;
    uint64_t iter;
    int sig;                    /* SIGKILL or SIGSTOP */
    bool mid;                   /* --crash: inside the operation */
    uint64_t mid_us;            /* progress this long after init, then die */
    uint64_t sends;             /* --crash-sends: after this many sends */
    bool in_shrink;             /* ... of the iteration's shrink */
} plan_entry_t;

typedef struct hold {
    uint32_t rank;              /* --hold; UINT32_MAX for --gate: all */
    uint64_t iter;
    const char *file;           /* --gate: wait for it; --hold: NULL */
} hold_t;

typedef struct opts {
    ftc_coll_t coll;
    bool no_coll;               /* --coll none: pingpong only */
    ftc_algo_t algo;
    uint32_t f;
    uint32_t root;
    size_t sizes[MAX_SIZES];
    uint32_t nsizes;
    uint64_t iters, warmup;
    plan_entry_t plan[MAX_PLAN];
    uint32_t nplan;
    uint32_t victims[MAX_PLAN]; /* may be killed from outside */
    uint32_t nvictims;
    plan_entry_t cues[MAX_PLAN];        /* --cue: rank and iter */
    uint32_t ncues;
    hold_t holds[MAX_PLAN];             /* --hold and --gate */
    uint32_t nholds;
    bool pingpong, json, csv, quiet;
    bool no_auth;               /* --no-auth: the job token only */
    bool checked, usage_errors; /* --checked, --usage-errors */
    bool uniform;               /* --uniform */
    int bad_arg;                /* --bad-arg: BAD_* */
    uint64_t bad_arg_iter;
    bool spin;                  /* --wait spin */
    ftc_fault_info_t fault_info;
    uint64_t ack_timeout_us; /* ftco's ack_timeout_ns / 1000; 0: off */
    bench_tree_t tree;          /* --tree, -k (bench_tree.h) */
    ftc_correction_t correction;
    ftc_allreduce_algo_t allreduce; /* --allreduce (corrected allreduce) */
    double interval_ms;         /* pause between iterations */
    uint64_t gossip_period_ns;  /* --gossip-period-us; 0: the family's */
    double gossip_target;       /* --gossip-target; 0: the family's */
    double loss;                /* --loss: gossip messages dropped */
    uint64_t loss_seed;         /* --loss-seed (1) */
    double op_timeout_s;
    /* --coll agree|shrink (bench_ulfm.c) and its options. */
    bool ulfm, ulfm_shrink, with_allreduce;
    ftc_agree_round_t agree_round;  /* --agree-round (rd2) */
    bool agree_round_given;
    int64_t invalidate_rank;
    uint64_t invalidate_iter;
} opts_t;

enum { BAD_NONE, BAD_NULL_BUFFER, BAD_HUGE_COUNT, BAD_OP };
#define MAX_RESULTS 64
#define MAX_STATUS 64           /* -status, for the tally */

typedef struct bench {
    opts_t o;
    uint32_t rank, n;
    ftc_bootstrap_t *boot;
    const bench_backend_t *be;
    void *t;                    /* the backend object */
    char describe[192];
    ftc_context_t *ctx;
    ftc_group_t *group;

    /* The operation in flight. */
    uint64_t g;                 /* iteration number */
    bool done;
    int status;
    uint64_t t_deliver;
    uint64_t msgs_sent;         /* its stats.msgs_sent in its callback */
    uint32_t nfailed_list;
    uint32_t *failed_list;      /* n entries */

    /* Tallies. */
    uint64_t completed, ok, errors, wrong, list_mismatch, late_ok;
    /* The stream's operations' own messages (warm-up included), as each
     * one's completion counted them: the summary's "op_msgs_sent". */
    uint64_t op_msgs_sent;
    uint64_t digest;
    int64_t last[4];
    uint32_t nlast;
    bool excluded;
    bool auth;                  /* messages carry the job key's MAC */
    /* Gossip (--algo push-sum|push-flow|pcf): the largest relative error
     * of an operation of a job without faults, and the most iterations a
     * process ran before delivering (its report). */
    double gossip_max_err;
    uint64_t gossip_max_iter;
    ftc_gossip_report_t gossip_report;
    survivors_t survivors;      /* errors against the survivors' average */
    uint64_t mark_iter[MAX_MARKS], mark_t[MAX_MARKS];
    uint32_t nmarks;
    uint64_t by_status[MAX_STATUS];     /* operations ended with -index */
    int64_t results[MAX_RESULTS][3];    /* --usage-errors: [g, status, key] */
    uint32_t nresults;
    char first_wrong[256];
} bench_t;

static uint64_t now_ns(void)
{
    return bench_now_ns();
}

static void die(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ftcoll-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stdout);
    exit(code);
}

/* --- Options ------------------------------------------------------------ */

static void usage(FILE *f)
{
    fputs(
        "usage: ftcoll-bench [--coll reduce|bcast|allreduce|agree|shrink|none]\n"
        "         [--algo corrected|tree|ftco|push-sum|push-flow|pcf] [-f F]\n"
        "         [--root R] [--gossip-period-us P] [--loss P]\n"
        "         [--loss-seed S] [--gossip-target EPS]\n"
        "         [--sizes 8,64,...] [--iters N] [--warmup W]\n"
        "         [--kill RANK@ITER]... [--crash RANK@ITER[:US]]...\n"
        "         [--stop RANK@ITER]... [--die-after-exchange RANK]\n"
        "         [--victims R,R,...] [--interval-ms MS]\n"
        "         [--cue RANK@ITER]... [--hold RANK@ITER]...\n"
        "         [--gate ITER:FILE]...\n"
        "         [--fault-info list|count|bit]\n"
        "         [--correction checked|opportunistic]\n"
        "         [--ack-timeout-us US] (ftco: per-message timeout base)\n"
        "         [--tree binomial|knomial|kary] [-k K] (ftco, tree and\n"
        "         corrected on one tree: bench_tree.h)\n"
        "         [--allreduce auto|reduce_bcast|exchange|butterfly]\n"
        "         [--pingpong] [--wait block|spin] [--json] [--csv] [--quiet]\n"
        "         [--no-auth] [--checked] [--uniform] [--usage-errors]\n"
        "         [--bad-arg null-buffer|huge-count|bad-op@ITER]\n"
        "         [--crash-sends RANK@ITER:K[:shrink]]... [--invalidate RANK@ITER]\n"
        "         [--with-allreduce] [--agree-round rd2|rd4|tree]\n"
        "                              (agree and shrink: bench_ulfm.c)\n"
        "         [-h|--help] [-V|--version]\n"
        "Every --opt value may also be written --opt=value.\n"
        "Run it under ftcoll-run or a PMIx launcher (docs/running.md);\n"
        "FTCOLL_BACKEND (or ftcoll-run --backend) picks the backend.\n",
        f);
}

static uint64_t parse_u64(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || *s == '\0' || *s == '-')
        die(2, "%s wants a non-negative integer, got '%s'", what, s);
    return v;
}

static void parse_list(const char *s, const char *what, uint64_t *out,
                       uint32_t max, uint32_t *n)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", s);
    *n = 0;
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (*n == max)
            die(2, "%s: at most %u entries", what, max);
        out[(*n)++] = parse_u64(tok, what);
    }
    if (*n == 0)
        die(2, "%s wants a comma-separated list", what);
}

static void parse_plan(opts_t *o, const char *s, int sig, bool mid)
{
    const char *at = strchr(s, '@');
    if (at == NULL || o->nplan == MAX_PLAN)
        die(2, "--kill/--crash/--stop want RANK@ITER, got '%s'", s);
    char r[32], it[32];
    snprintf(r, sizeof(r), "%.*s", (int)(at - s), s);
    plan_entry_t *p = &o->plan[o->nplan++];
    p->rank = (uint32_t)parse_u64(r, "--kill/--crash/--stop rank");
    p->sig = sig;
    p->mid = mid;
    const char *colon = strchr(at + 1, ':');
    if (colon != NULL && !mid)
        die(2, "only --crash takes :MICROSECONDS");
    snprintf(it, sizeof(it), "%.*s",
             (int)(colon != NULL ? colon - (at + 1) : (long)strlen(at + 1)),
             at + 1);
    p->iter = parse_u64(it, "--kill/--crash/--stop iteration");
    if (colon != NULL)
        p->mid_us = parse_u64(colon + 1, "--crash microseconds");
}

/* RANK@ITER, as --cue and --hold take it. */
static void parse_rank_iter(const char *s, const char *what, uint32_t *rank,
                            uint64_t *iter)
{
    const char *at = strchr(s, '@');
    if (at == NULL)
        die(2, "%s wants RANK@ITER, got '%s'", what, s);
    char r[32];
    snprintf(r, sizeof(r), "%.*s", (int)(at - s), s);
    *rank = (uint32_t)parse_u64(r, what);
    *iter = parse_u64(at + 1, what);
}

/* Long-only options get distinct values from 256 up, so that getopt_long
 * refuses a prefix of several ("--c") instead of taking the first. */
static const struct option bench_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"pingpong", no_argument, NULL, 256},
    {"json", no_argument, NULL, 257},
    {"csv", no_argument, NULL, 258},
    {"quiet", no_argument, NULL, 259},
    {"coll", required_argument, NULL, 260},
    {"algo", required_argument, NULL, 261},
    {"wait", required_argument, NULL, 262},
    {"root", required_argument, NULL, 263},
    {"sizes", required_argument, NULL, 264},
    {"iters", required_argument, NULL, 265},
    {"warmup", required_argument, NULL, 266},
    {"kill", required_argument, NULL, 267},
    {"crash", required_argument, NULL, 268},
    {"stop", required_argument, NULL, 269},
    {"victims", required_argument, NULL, 270},
    {"cue", required_argument, NULL, 271},
    {"hold", required_argument, NULL, 272},
    {"gate", required_argument, NULL, 273},
    {"interval-ms", required_argument, NULL, 274},
    {"fault-info", required_argument, NULL, 275},
    {"correction", required_argument, NULL, 276},
    {"die-after-exchange", required_argument, NULL, 277},
    {"no-auth", no_argument, NULL, 278},
    {"checked", no_argument, NULL, 279},
    {"usage-errors", no_argument, NULL, 280},
    {"bad-arg", required_argument, NULL, 281},
    {"crash-sends", required_argument, NULL, 282},
    {"invalidate", required_argument, NULL, 283},
    {"with-allreduce", no_argument, NULL, 284},
    {"uniform", no_argument, NULL, 285},
    {"ack-timeout-us", required_argument, NULL, 286},
    {"allreduce", required_argument, NULL, 287},
    {"gossip-period-us", required_argument, NULL, 288},
    {"loss", required_argument, NULL, 289},
    {"gossip-target", required_argument, NULL, 291},
    {"loss-seed", required_argument, NULL, 290},
    {"tree", required_argument, NULL, 292},
    {"agree-round", required_argument, NULL, 310},
    {NULL, 0, NULL, 0},
};

/* The gossip family: doubles averaged, each process its own estimate. */
static bool is_gossip(const opts_t *o)
{
    return o->algo == FTC_ALGO_PUSH_SUM || o->algo == FTC_ALGO_PUSH_FLOW
           || o->algo == FTC_ALGO_PCF;
}

static void parse_opts(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->coll = FTC_COLL_ALLREDUCE;
    o->algo = FTC_ALGO_CORRECTED;
    o->f = 1;
    o->sizes[0] = 8;
    o->nsizes = 1;
    o->iters = 1000;
    o->warmup = 10;
    o->fault_info = FTC_FAULT_LIST;
    o->correction = FTC_CORRECTION_CHECKED;
    o->op_timeout_s = 60;
    o->invalidate_rank = -1;
    const char *env = getenv("FTCOLL_BENCH_OP_TIMEOUT");
    if (env != NULL && *env != '\0')
        o->op_timeout_s = (double)parse_u64(env, "FTCOLL_BENCH_OP_TIMEOUT");

    int opt, li = -1;
    char flag[32];
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":hVf:k:", bench_options, &li)) !=
           -1) {
        const char *a = cli_flag(opt, li, bench_options, flag, sizeof(flag));
        const char *v = optarg;
        li = -1;
        if (opt == '?' || opt == ':') {
            fflush(stdout);
            exit(cli_refuse("ftcoll-bench", opt, argv, bench_options));
        }
        if (opt == 'h') {
            usage(stdout);
            exit(0);
        }
        if (opt == 'V') {
            cli_print_version("ftcoll-bench");
            exit(0);
        }
        if (strcmp(a, "--pingpong") == 0) {
            o->pingpong = true;
            continue;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(a, "--csv") == 0) {
            o->csv = true;
            continue;
        }
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        if (strcmp(a, "--no-auth") == 0) {
            o->no_auth = true;
            continue;
        }
        if (strcmp(a, "--checked") == 0) {
            o->checked = true;
            continue;
        }
        if (strcmp(a, "--uniform") == 0) {
            o->uniform = true;
            continue;
        }
        if (strcmp(a, "--usage-errors") == 0) {
            o->usage_errors = true;
            continue;
        }
        if (strcmp(a, "--with-allreduce") == 0) {
            o->with_allreduce = true;
            continue;
        }
        if (strcmp(a, "--coll") == 0) {
            if (strcmp(v, "reduce") == 0)
                o->coll = FTC_COLL_REDUCE;
            else if (strcmp(v, "bcast") == 0)
                o->coll = FTC_COLL_BCAST;
            else if (strcmp(v, "allreduce") == 0)
                o->coll = FTC_COLL_ALLREDUCE;
            else if (strcmp(v, "none") == 0)
                o->no_coll = true;
            else if (strcmp(v, "agree") == 0 || strcmp(v, "shrink") == 0) {
                o->ulfm = true;
                o->ulfm_shrink = v[0] == 's';
                o->coll = o->ulfm_shrink ? FTC_COLL_SHRINK : FTC_COLL_AGREE;
                o->algo = FTC_ALGO_ULFM;
            } else
                die(2, "--coll: reduce, bcast, allreduce, agree, shrink or "
                       "none");
        } else if (strcmp(a, "--algo") == 0) {
            if (ftc_algo_parse(v, &o->algo) != FTC_OK)
                die(2, "--algo: corrected, tree, ftco, push-sum, push-flow "
                       "or pcf");
        } else if (strcmp(a, "-f") == 0) {
            o->f = (uint32_t)parse_u64(v, "-f");
        } else if (strcmp(a, "--tree") == 0) {
            const char *why;
            if (bench_tree_parse_kind(&o->tree, v, &why) != 0)
                die(2, "--tree: %s, got '%s'", why, v);
        } else if (strcmp(a, "-k") == 0) {
            uint64_t k = parse_u64(v, "-k");
            if (k > UINT32_MAX)
                die(2, "-k: too large");
            o->tree.k = (uint32_t)k;
            o->tree.k_given = true;
        } else if (strcmp(a, "--wait") == 0) {
            if (strcmp(v, "spin") == 0)
                o->spin = true;
            else if (strcmp(v, "block") != 0)
                die(2, "--wait: block or spin");
        } else if (strcmp(a, "--root") == 0) {
            o->root = (uint32_t)parse_u64(v, "--root");
        } else if (strcmp(a, "--sizes") == 0) {
            uint64_t s[MAX_SIZES];
            parse_list(v, "--sizes", s, MAX_SIZES, &o->nsizes);
            for (uint32_t k = 0; k < o->nsizes; k++) {
                if (s[k] == 0 || s[k] > ((uint64_t)1 << 30))
                    die(2, "--sizes: 1 .. 2^30 bytes");
                o->sizes[k] = (size_t)s[k];
            }
        } else if (strcmp(a, "--iters") == 0) {
            o->iters = parse_u64(v, "--iters");
        } else if (strcmp(a, "--warmup") == 0) {
            o->warmup = parse_u64(v, "--warmup");
        } else if (strcmp(a, "--kill") == 0) {
            parse_plan(o, v, SIGKILL, false);
        } else if (strcmp(a, "--crash") == 0) {
            parse_plan(o, v, SIGKILL, true);
        } else if (strcmp(a, "--stop") == 0) {
            parse_plan(o, v, SIGSTOP, false);
        } else if (strcmp(a, "--victims") == 0) {
            uint64_t s[MAX_PLAN];
            parse_list(v, "--victims", s, MAX_PLAN, &o->nvictims);
            for (uint32_t k = 0; k < o->nvictims; k++)
                o->victims[k] = (uint32_t)s[k];
        } else if (strcmp(a, "--cue") == 0) {
            if (o->ncues == MAX_PLAN)
                die(2, "--cue: at most %u", MAX_PLAN);
            plan_entry_t *c = &o->cues[o->ncues++];
            parse_rank_iter(v, "--cue", &c->rank, &c->iter);
        } else if (strcmp(a, "--hold") == 0 || strcmp(a, "--gate") == 0) {
            if (o->nholds == MAX_PLAN)
                die(2, "--hold/--gate: at most %u", MAX_PLAN);
            hold_t *h = &o->holds[o->nholds++];
            if (a[2] == 'h') {
                parse_rank_iter(v, "--hold", &h->rank, &h->iter);
                h->file = NULL;
            } else {
                const char *colon = strchr(v, ':');
                if (colon == NULL || colon[1] == '\0')
                    die(2, "--gate wants ITER:FILE, got '%s'", v);
                char it[32];
                snprintf(it, sizeof(it), "%.*s", (int)(colon - v), v);
                h->rank = UINT32_MAX;
                h->iter = parse_u64(it, "--gate");
                h->file = colon + 1;
            }
        } else if (strcmp(a, "--interval-ms") == 0) {
            o->interval_ms = (double)parse_u64(v, "--interval-ms");
        } else if (strcmp(a, "--fault-info") == 0) {
            if (ftc_fault_info_parse(v, &o->fault_info) != FTC_OK)
                die(2, "--fault-info: list, count or bit");
        } else if (strcmp(a, "--ack-timeout-us") == 0) {
            o->ack_timeout_us = parse_u64(v, "--ack-timeout-us");
        } else if (strcmp(a, "--bad-arg") == 0) {
            const char *at = strchr(v, '@');
            size_t k = at != NULL ? (size_t)(at - v) : 0;
            if (k == 11 && strncmp(v, "null-buffer", k) == 0)
                o->bad_arg = BAD_NULL_BUFFER;
            else if (k == 10 && strncmp(v, "huge-count", k) == 0)
                o->bad_arg = BAD_HUGE_COUNT;
            else if (k == 6 && strncmp(v, "bad-op", k) == 0)
                o->bad_arg = BAD_OP;
            else
                die(2, "--bad-arg wants null-buffer, huge-count or bad-op"
                       "@ITER, got '%s'", v);
            o->bad_arg_iter = parse_u64(at + 1, "--bad-arg iteration");
        } else if (strcmp(a, "--loss") == 0) {
            char *end;
            o->loss = strtod(v, &end);
            if (*end != '\0' || end == v || !(o->loss > 0.0 && o->loss < 1.0))
                die(2, "--loss: expected a probability in (0, 1), got '%s'", v);
        } else if (strcmp(a, "--gossip-target") == 0) {
            char *end;
            o->gossip_target = strtod(v, &end);
            if (*end != '\0' || end == v || !(o->gossip_target > 0.0))
                die(2, "--gossip-target: expected a relative accuracy > 0, "
                       "got '%s'", v);
        } else if (strcmp(a, "--loss-seed") == 0) {
            o->loss_seed = parse_u64(v, "--loss-seed");
        } else if (strcmp(a, "--gossip-period-us") == 0) {
            o->gossip_period_ns = parse_u64(v, "--gossip-period-us") * 1000;
            if (o->gossip_period_ns == 0)
                die(2, "--gossip-period-us: expected microseconds > 0");
        } else if (strcmp(a, "--correction") == 0) {
            if (ftc_correction_parse(v, &o->correction) != FTC_OK)
                die(2, "--correction: checked or opportunistic");
        } else if (strcmp(a, "--allreduce") == 0) {
            if (ftc_allreduce_algo_parse(v, &o->allreduce) != FTC_OK)
                die(2, "--allreduce: auto, reduce_bcast, exchange or butterfly");
        } else if (strcmp(a, "--crash-sends") == 0) {
            bench_ulfm_fault_t cf;
            if (!bench_ulfm_parse_crash_sends(v, &cf) || o->nplan == MAX_PLAN)
                die(2, "--crash-sends wants RANK@ITER:K[:shrink] (K >= 1 sends), got "
                       "'%s'", v);
            o->plan[o->nplan++] = (plan_entry_t){.rank = cf.rank,
                .iter = cf.iter, .sig = SIGKILL, .mid = true,
                .sends = cf.sends, .in_shrink = cf.in_shrink};
        } else if (strcmp(a, "--agree-round") == 0) {
            if (ftc_agree_round_parse(v, &o->agree_round) != FTC_OK)
                die(2, "--agree-round: rd2, rd4 or tree, got '%s'", v);
            o->agree_round_given = true;
        } else if (strcmp(a, "--invalidate") == 0) {
            uint32_t r;
            parse_rank_iter(v, "--invalidate", &r, &o->invalidate_iter);
            o->invalidate_rank = r;
        } else if (strcmp(a, "--die-after-exchange") == 0) {
            /* Dead from before iteration 0 on, as --kill R@0 is, for the
             * checks of who may be missing from a result. */
            if (o->nplan == MAX_PLAN)
                die(2, "--die-after-exchange: at most %u faults", MAX_PLAN);
            plan_entry_t *p = &o->plan[o->nplan++];
            p->rank = (uint32_t)parse_u64(v, "--die-after-exchange");
            p->iter = 0;
            p->sig = SIGKILL;
            p->mid = false;
            bench_die_after_exchange = p->rank;
        } else {
            die(2, "unknown option %s (--help)", a);
        }
    }
    if (optind < argc)
        die(2, "unexpected argument '%s': ftcoll-bench takes options only "
               "(--help)", argv[optind]);
    bool sends = false;
    for (uint32_t k = 0; k < o->nplan; k++)
        sends = sends || o->plan[k].sends != 0;
    if (!o->ulfm && (sends || o->invalidate_rank >= 0 || o->with_allreduce))
        die(2, "--crash-sends, --invalidate and --with-allreduce go with "
               "--coll agree or shrink");
    if (!o->ulfm && o->agree_round_given)
        die(2, "--agree-round: the agreement's failure-free round goes with "
               "--coll agree or shrink only");
    if (o->ack_timeout_us != 0 && o->algo != FTC_ALGO_FTCO)
        die(2, "--ack-timeout-us: the per-message timeouts belong to "
               "--algo ftco");
    const char *tree_flag = NULL; /* the checks that need no n */
    const char *tree_why = bench_tree_check(&o->tree, o->algo, 0, &tree_flag);
    if (tree_why != NULL)
        die(2, "%s: %s", tree_flag, tree_why);
    if (o->ack_timeout_us > UINT64_MAX / 1000)
        die(2, "--ack-timeout-us: too large");
    if (o->loss > 0.0 && !is_gossip(o))
        die(2, "--loss: the gossip family only (--algo push-sum, push-flow "
               "or pcf): the others assume a reliable transport");
    if (is_gossip(o) && (o->no_coll || o->coll != FTC_COLL_ALLREDUCE))
        die(2, "--algo %s: allreduce only (the gossip family)",
            ftc_algo_name(o->algo));
    /* Uniform mode agrees on the root whose broadcast each member took
     * (docs/ulfm.md, "Uniform allreduce"): refused here, with the reason,
     * where the library would refuse every call. */
    if (o->uniform && (o->no_coll || o->coll != FTC_COLL_ALLREDUCE))
        die(2, "--uniform: allreduce only, not --coll %s",
            o->no_coll ? "none" : ftc_coll_name(o->coll));
    if (o->uniform && o->algo != FTC_ALGO_CORRECTED)
        die(2, "--uniform: the corrected family only (--algo corrected): "
               "it agrees on the root whose broadcast each member took, and "
               "--algo %s has no such root", ftc_algo_name(o->algo));
    if (o->uniform && o->checked)
        die(2, "--uniform with --checked: a call is one or the other");
}

/* --- Who may fail, and what a result may be ------------------------------ */

static bool is_external_victim(const bench_t *b, uint32_t r)
{
    for (uint32_t k = 0; k < b->o.nvictims; k++)
        if (b->o.victims[k] == r)
            return true;
    for (uint32_t k = 0; k < b->o.nholds; k++)
        if (b->o.holds[k].rank == r)
            return true;
    return false;
}

/* The earliest iteration at which r kills or stops itself, or UINT64_MAX;
 * *mid tells whether it dies inside that iteration (--crash). */
static uint64_t planned_death_at(const bench_t *b, uint32_t r, bool *mid)
{
    uint64_t it = UINT64_MAX;
    bool m = false;
    for (uint32_t k = 0; k < b->o.nplan; k++) {
        const plan_entry_t *p = &b->o.plan[k];
        if (p->rank == r && (p->iter < it || (p->iter == it && !p->mid))) {
            it = p->iter;
            m = p->mid;
        }
    }
    if (mid != NULL)
        *mid = m;
    return it;
}

static uint64_t planned_death(const bench_t *b, uint32_t r)
{
    return planned_death_at(b, r, NULL);
}

static bool is_victim(const bench_t *b, uint32_t r)
{
    return is_external_victim(b, r) || planned_death(b, r) != UINT64_MAX;
}

static uint32_t victim_count(const bench_t *b)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < b->n; r++)
        k += is_victim(b, r);
    return k;
}

enum { MUST = 0, MAY = 1, OUT = 2 };

/* Must rank r's input be in iteration g's result, may it, or may it not?
 * A rank that dies as it starts iteration k delivered k-1 (so it is in
 * every earlier result) and never contributes to k or later; k-1 itself
 * is left open, as it ended around the time of the death. One that dies
 * inside k (--crash) may or may not be in k. */
static int membership(const bench_t *b, uint32_t r, uint64_t g)
{
    bool mid;
    uint64_t k = planned_death_at(b, r, &mid);
    if (r == b->rank)   /* alive, unless this is a stopped rank's late run */
        return k != UINT64_MAX && g >= k ? MAY : MUST;
    if (k != UINT64_MAX) {
        if (g > k || (g == k && !mid))
            return OUT;
        if (g == k || g + 1 == k)
            return MAY;
    }
    return is_external_victim(b, r) ? MAY : MUST;
}

/* membership(), narrowed by the result's failed list (list scheme): it
 * names the ranks that failed, so every rank it does not name must be in
 * the result (IMPOSSIBLE if that rank cannot be: dead before iteration g,
 * yet not named). A named rank keeps its membership: it may have failed
 * after its input went in. */
enum { IMPOSSIBLE = 3 };
static int result_membership(const bench_t *b, uint32_t r)
{
    int m = membership(b, r, b->g);
    if (b->o.fault_info != FTC_FAULT_LIST)
        return m;
    for (uint32_t k = 0; k < b->nfailed_list; k++)
        if (b->failed_list[k] == r)
            return m;
    return m == OUT ? IMPOSSIBLE : MUST;
}

/* Is W the sum of (r+1) over a valid set for iteration g? Subset sum over
 * the optional ranks (their values are small: a table is enough). */
static bool valid_sum(const bench_t *b, uint64_t W)
{
    uint64_t must = 0, optional_total = 0;
    for (uint32_t r = 0; r < b->n; r++) {
        int m = result_membership(b, r);
        if (m == IMPOSSIBLE)
            return false;
        if (m == MUST)
            must += r + 1;
        else if (m == MAY)
            optional_total += r + 1;
    }
    if (W < must || W - must > optional_total)
        return false;
    /* Nothing optional (no failure planned or reported): W is the sum of
     * everybody's, checked above, with no table to fill. */
    if (optional_total == 0)
        return true;
    uint64_t d = W - must;
    bool *can = calloc(optional_total + 1, sizeof(bool));
    if (can == NULL)
        die(4, "out of memory");
    can[0] = true;
    for (uint32_t r = 0; r < b->n; r++) {
        if (result_membership(b, r) != MAY)
            continue;
        for (uint64_t s = optional_total; s >= r + 1; s--)
            if (can[s - (r + 1)])
                can[s] = true;
    }
    bool ok = can[d];
    free(can);
    return ok;
}

/* Which non-OK statuses the faults explain. A rank that was stopped is a
 * failed process to the others: anything goes after it resumes. */
static bool status_explained(const bench_t *b, int status)
{
    if (b->o.usage_errors
        && (status == FTC_EMISMATCH || status == FTC_EPEER_INVALID
            || status == FTC_ETIMEDOUT
            || (b->o.bad_arg != BAD_NONE && b->g == b->o.bad_arg_iter)))
        return true;
    if (b->g >= planned_death(b, b->rank))
        return true;
    uint32_t v = victim_count(b);
    switch (status) {
    case FTC_ETOO_MANY_FAILURES:
        return b->o.algo == FTC_ALGO_CORRECTED && v > b->o.f;
    case FTC_EROOT_FAILED:
        return is_victim(b, b->o.root) || v > b->o.f;
    case FTC_EPEER_FAILED:
        /* Gossip: PCF left with no positive weight after a failure, or a
         * sum whose root failed (docs/gossip.md). */
        return (b->o.algo == FTC_ALGO_TREE || is_gossip(&b->o)) && v > 0;
    case FTC_ETIMEDOUT:
        return is_gossip(&b->o) && v > 0;
    case FTC_EEXCLUDED:
        return is_victim(b, b->rank);
    case FTC_EPROC_FAILED:
        /* Uniform mode: the members took different roots' values (a root
         * failed mid-broadcast), and all of them report it. */
        return b->o.uniform && v > 0;
    default:
        return false;
    }
}

/* The run's digest, compared between ranks: one word in, a multiply and
 * a shift (the upper half folded down, so every bit of v reaches every
 * bit of h over the next words). It runs between two operations, where
 * its time delays this rank's next send and so every peer's latency: a
 * byte-wise FNV-1a took 24 dependent multiplies per operation. */
static uint64_t digest_add(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void wrong(bench_t *b, const char *fmt, ...)
{
    b->wrong++;
    if (b->first_wrong[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->first_wrong, sizeof(b->first_wrong), fmt, ap);
    va_end(ap);
    fprintf(stderr, "ftcoll-bench: rank %u: WRONG: %s\n", b->rank,
            b->first_wrong);
}

/* Check the result of iteration g (out holds it). */
/* A gossip average of in[i] = (r+1) (g+1+i) over the processes: exactly
 * (n+1)/2 (g+1+i) in a job without faults, to the family's tolerance
 * 4 n target (docs/gossip.md); with faults, or once this process
 * knows of any failure, push-flow's value is the
 * average over some set of processes, so within the inputs' range, and
 * PCF's (excluding flows) is documented to be no aggregate after an
 * early failure, so only counted. Estimates differ in their last bits
 * from process to process: the digest holds the status only. */
static void check_gossip(bench_t *b, const int64_t *out_bits, size_t count)
{
    const opts_t *o = &b->o;
    uint64_t g = b->g;
    /* A failure this process knows of (planned, or a suspicion of a live
     * peer on a starved machine) makes the value that of the survivors or
     * PCF's mass account, not everyone's average. */
    bool faults = o->nplan > 0 || o->nvictims > 0
                  || ftc_group_failed(b->group, NULL, 0) > 0;
    double tol = 4.0 * b->n * 1e-14;
    b->digest = digest_add(digest_add(b->digest, g), 0);
    if (b->gossip_report.iterations > b->gossip_max_iter)
        b->gossip_max_iter = b->gossip_report.iterations;
    for (size_t i = 0; i < count; i++) {
        double v;
        memcpy(&v, &out_bits[i], sizeof(v));
        double scale = (double)(g + 1 + i);
        double exact = scale * (b->n + 1) / 2.0;
        if (!faults) {
            double e = fabs(v - exact) / exact;
            if (!(e <= b->gossip_max_err))
                b->gossip_max_err = e;
            if (!(e <= tol)) {
                wrong(b, "iteration %" PRIu64 ": average %.17g is %.3g from "
                         "%.17g (tolerance %.3g)", g, v, e, exact, tol);
                return;
            }
        } else if (o->algo == FTC_ALGO_PUSH_FLOW
                   && !(v >= scale * (1 - tol) && v <= scale * b->n * (1 + tol))) {
            wrong(b, "iteration %" PRIu64 ": average %.17g outside the inputs' "
                     "range [%.17g, %.17g]", g, v, scale, scale * b->n);
            return;
        }
    }
}

static void check(bench_t *b, const int64_t *out, size_t count)
{
    const opts_t *o = &b->o;
    uint64_t g = b->g, key = 0;
    b->completed++;
    if (b->status <= 0 && -b->status < MAX_STATUS)
        b->by_status[-b->status]++;
    if (b->o.usage_errors && b->nresults < MAX_RESULTS) {
        int64_t *r = b->results[b->nresults++];
        r[0] = (int64_t)g;
        r[1] = b->status;
        r[2] = b->status == FTC_OK && count > 0
                   && (o->coll != FTC_COLL_REDUCE || b->rank == o->root)
                   ? out[0] : 0;
    }
    if (b->status == FTC_EEXCLUDED || ftc_context_is_excluded(b->ctx))
        b->excluded = true;
    if (is_gossip(o))
        survivors_result(&b->survivors, g, b->status,
                         b->gossip_report.converged != 0,
                         out, count);
    if (b->status != FTC_OK) {
        if (status_explained(b, b->status))
            b->errors++;
        else
            wrong(b, "iteration %" PRIu64 ": %s", g, ftc_err_name(b->status));
        b->digest = digest_add(digest_add(b->digest, g),
                               (uint64_t)(int64_t)b->status);
        return;
    }
    b->ok++;
    if (is_gossip(o)) {
        check_gossip(b, out, count);
        return;
    }
    /* FTC_OK for an operation whose result names this rank as failed: the
     * others had excluded it, and it should have ended with
     * FTC_EEXCLUDED (a core issue; see the report of issue 3). Counted
     * apart, and wrong only for a rank that is no victim. */
    for (uint32_t k = 0; k < b->nfailed_list; k++) {
        if (b->failed_list[k] != b->rank)
            continue;
        b->late_ok++;
        if (!is_victim(b, b->rank))
            wrong(b, "iteration %" PRIu64 ": FTC_OK with itself in the "
                     "result's failed list", g);
        b->digest = digest_add(digest_add(b->digest, g), 1);
        return;
    }
    bool has_value = o->coll != FTC_COLL_REDUCE || b->rank == o->root;
    if (has_value && o->coll == FTC_COLL_BCAST) {
        for (size_t i = 0; i < count; i++) {
            int64_t want = (int64_t)(o->root + 1) * (int64_t)(g + 1 + i);
            if (out[i] != want) {
                wrong(b, "iteration %" PRIu64 ": bcast element %zu is %" PRId64
                         ", the root's is %" PRId64, g, i, out[i], want);
                break;
            }
        }
        key = (uint64_t)out[0];
    } else if (has_value) {
        /* Everybody's sum first: a multiply, where the division the other
         * results need took as long as a shared-memory hop. */
        int64_t all = (int64_t)b->n * (b->n + 1) / 2;
        int64_t W = out[0] == all * (int64_t)(g + 1)
                        ? all
                        : out[0] / (int64_t)(g + 1);
        bool shape = out[0] == W * (int64_t)(g + 1) && W > 0;
        for (size_t i = 1; i < count && shape; i++)
            shape = out[i] == W * (int64_t)(g + 1 + i);
        if (!shape)
            wrong(b, "iteration %" PRIu64 ": result %" PRId64 " ... is not "
                     "(g+1+i) * W for one W", g, out[0]);
        else if (!valid_sum(b, (uint64_t)W))
            wrong(b, "iteration %" PRIu64 ": W = %" PRId64 " is no sum of "
                     "(r+1) over a valid set of ranks", g, W);
        key = (uint64_t)W;
        /* The list scheme states exactly whose inputs the result misses
         * (docs/semantics.md, "What a result holds"): W is the sum over
         * everybody else. */
        if (shape && o->fault_info == FTC_FAULT_LIST) {
            uint64_t listed = (uint64_t)b->n * (b->n + 1) / 2;
            for (uint32_t k = 0; k < b->nfailed_list; k++)
                listed -= b->failed_list[k] + 1;
            if (listed != (uint64_t)W) {
                b->list_mismatch++;
                wrong(b, "iteration %" PRIu64 ": W = %" PRId64 " but the "
                         "failed list leaves %" PRIu64, g, W, listed);
            }
        }
    }
    if (has_value) {
        b->nlast = count < 4 ? (uint32_t)count : 4;
        memcpy(b->last, out, sizeof(int64_t) * b->nlast);
    }
    b->digest = digest_add(digest_add(digest_add(b->digest, g), 0), key);
}

/* --- Running operations ------------------------------------------------- */

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    bench_t *b = arg;
    b->done = true;
    b->status = c->status;
    b->t_deliver = now_ns();
    b->msgs_sent = c->stats.msgs_sent;
    b->nfailed_list = c->nfailed < b->n ? c->nfailed : b->n;
    if (b->nfailed_list > 0)
        memcpy(b->failed_list, c->failed, sizeof(uint32_t) * b->nfailed_list);
}

/* Progress until the operation in flight delivers. what names it (with
 * " iteration <g>" appended unless iter is NO_ITER), formatted only for
 * the error: the wait is on the latency's critical path. */
#define NO_ITER UINT64_MAX
static void wait_op_within(bench_t *b, const char *what, uint64_t iter,
                           double timeout_s)
{
    /* The hang limit starts at the first check, not before the first
     * poll: a clock read there (20-60 ns on a VM's kvm-clock) fell
     * between an operation's start and its delivery, the bench's own cost
     * timed as the collective's, where Open MPI's mpi_allreduce reads the
     * clock at the two ends only. The limit comes at most 64 polls or one
     * blocking poll later. */
    uint64_t limit = 0;
    uint64_t timeout_ns = (uint64_t)(timeout_s * 1e9);
    int timeout_ms = b->o.spin ? 0 : 100;
    /* Spinning, the clock is read every 64th poll only (30 ns a read on
     * this VM's kvm-clock, time a delivery would wait for). */
    for (uint32_t spins = 1; !b->done; spins++) {
        int rc = b->be->progress(b->t, timeout_ms);
        if (rc < 0)
            die(4, "rank %u: progress: %s", b->rank, ftc_strerror(rc));
        if (b->done || (timeout_ms == 0 && spins % 64 != 0))
            continue;
        uint64_t t = now_ns();
        if (limit == 0)
            limit = t + timeout_ns;
        else if (t > limit) {
            if (iter == NO_ITER)
                die(3, "rank %u: HANG: %s not delivered after %.0f s",
                    b->rank, what, timeout_s);
            die(3, "rank %u: HANG: %s iteration %" PRIu64 " not delivered "
                   "after %.0f s", b->rank, what, iter, timeout_s);
        }
    }
}

static void wait_op(bench_t *b, const char *what, uint64_t iter)
{
    wait_op_within(b, what, iter, b->o.op_timeout_s);
}

/* Keep the transport going for ms milliseconds (answering peers). */
static void idle(bench_t *b, double ms)
{
    uint64_t end = now_ns() + (uint64_t)(ms * 1e6);
    for (uint64_t t = now_ns(); t < end; t = now_ns()) {
        int left = (int)((end - t) / 1000000) + 1;
        b->be->progress(b->t, left);
    }
}

static int start_op(bench_t *b, ftc_coll_t coll, ftc_coll_args_t *a)
{
    b->done = false;
    if (coll == FTC_COLL_REDUCE)
        return ftc_init_reduce(b->group, a, NULL);
    if (coll == FTC_COLL_BCAST)
        return ftc_init_bcast(b->group, a, NULL);
    return ftc_init_allreduce(b->group, a, NULL);
}

/* The planned death of this rank at iteration g, if any: before the
 * operation starts (mid = false) or inside it (mid = true). */
/* One line the driver reads as a rank's progress: what happened to it at
 * which iteration, and when (CLOCK_MONOTONIC) if with_time. */
static void print_event(uint32_t rank, const char *event, uint64_t iter,
                        bool with_time)
{
    json_t j;
    json_to_file(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "rank");
    json_uint(&j, rank);
    json_key(&j, "event");
    json_string(&j, event);
    json_key(&j, "iter");
    json_uint(&j, iter);
    if (with_time) {
        json_key(&j, "t_ns");
        json_uint(&j, now_ns());
    }
    json_object_end(&j);
    putchar('\n');
}

static void maybe_die(bench_t *b, bool mid)
{
    for (uint32_t k = 0; k < b->o.nplan; k++) {
        const plan_entry_t *p = &b->o.plan[k];
        if (p->rank != b->rank || p->iter != b->g || p->mid != mid)
            continue;
        if (mid) {
            uint64_t end = now_ns() + p->mid_us * 1000u;
            while (now_ns() < end && !b->done)
                b->be->progress(b->t, 0);
        }
        const char *event = p->sig == SIGSTOP ? "stop"
                            : mid             ? "crash"
                                              : "kill";
        print_event(b->rank, event, b->g, true);
        fflush(stdout);
        fflush(stderr);
        raise(p->sig);
    }
}

/* A SIGCONT reached this process (it was stopped and resumed). */
static volatile sig_atomic_t continued;

static void on_sigcont(int sig)
{
    (void)sig;
    continued = 1;
}

/* From the start, so that a stop that lands before the hold is known
 * there too. false: the hold will progress instead of waiting quietly. */
static bool watch_sigcont(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigcont;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGCONT, &sa, NULL) == 0;
}

static bool sigcont_watched;

/*
 * A held victim waits for its signal without progressing: nothing of this
 * process (the core's sends, UCX's keepalive messages) is being written
 * into a peer when the signal lands. A process killed in the middle of a
 * send over shared memory leaves the receiver's FIFO (UCX sm and posix:
 * one FIFO per receiver, shared by every sender) with a slot it claimed
 * and never filled, and the receiver reads nothing more from anyone, for
 * good (docs/backends.md section 7). Progressing at its hold, a victim
 * killed right after it printed the hold was sometimes still writing the
 * tail of its last iteration: a healthy peer went deaf at that instant,
 * timed everybody out and excluded the group (2 to 4 jobs in 150 of the
 * kill-from-outside case at n = 8). A SIGKILL ends the process in here; a
 * SIGSTOP stops it here, and once resumed (or if it had been stopped and
 * resumed before it came to the hold) the hold progresses, so that the
 * rank learns that it was excluded.
 */
static void quiet_hold(bench_t *b, uint64_t limit)
{
    if (!sigcont_watched)
        return;
    while (!continued) {
        if (now_ns() > limit)
            die(3, "rank %u: HANG: held before iteration %" PRIu64
                   " for %.0f s: nothing killed or stopped it",
                b->rank, b->g, b->o.op_timeout_s);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Iteration g is about to start: print this rank's cues, then wait at its
 * holds and gates. Returns false if the rank learnt meanwhile that it was
 * excluded (it was stopped, and the others went on). */
static bool before_iteration(bench_t *b)
{
    for (uint32_t k = 0; k < b->o.ncues; k++)
        if (b->o.cues[k].rank == b->rank && b->o.cues[k].iter == b->g)
            print_event(b->rank, "cue", b->g, false);
    for (uint32_t k = 0; k < b->o.nholds; k++) {
        const hold_t *h = &b->o.holds[k];
        if (h->iter != b->g || (h->rank != b->rank && h->rank != UINT32_MAX))
            continue;
        print_event(b->rank, h->file != NULL ? "gate" : "hold", b->g, false);
        fflush(stdout);
        uint64_t limit = now_ns() + (uint64_t)(b->o.op_timeout_s * 1e9);
        if (h->file == NULL)
            quiet_hold(b, limit);
        while (h->file == NULL || access(h->file, F_OK) != 0) {
            if (ftc_context_is_excluded(b->ctx)) {
                b->excluded = true;
                return false;
            }
            if (now_ns() > limit)
                die(3, "rank %u: HANG: %s before iteration %" PRIu64
                       " for %.0f s: %s", b->rank,
                    h->file != NULL ? "gated" : "held", b->g,
                    b->o.op_timeout_s,
                    h->file != NULL ? h->file : "nothing killed or stopped it");
            int rc = b->be->progress(b->t, h->file != NULL ? 10 : 100);
            if (rc < 0)
                die(4, "rank %u: progress: %s", b->rank, ftc_strerror(rc));
        }
    }
    return true;
}

static void record_mark(bench_t *b)
{
    for (uint32_t k = 0; k < b->o.nplan; k++) {
        if (b->o.plan[k].iter == b->g && b->o.plan[k].rank != b->rank
            && b->nmarks < MAX_MARKS) {
            b->mark_iter[b->nmarks] = b->g;
            b->mark_t[b->nmarks++] = b->t_deliver;
            return;
        }
    }
}

static uint32_t reporter(const bench_t *b)
{
    for (uint32_t r = 0; r < b->n; r++)
        if (!ftc_context_is_failed(b->ctx, r))
            return r;
    return b->rank;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
    return (a > c) - (a < c);
}

typedef struct row {
    double avg, min, max, p50, p99;
} row_t;

/* Local mean and percentiles (µs) of k samples (sorted in place). */
static void local_stats(uint64_t *lat, uint64_t k, double out[3])
{
    out[0] = out[1] = out[2] = 0;
    if (k == 0)
        return;
    qsort(lat, k, sizeof(*lat), cmp_u64);
    double sum = 0;
    for (uint64_t i = 0; i < k; i++)
        sum += (double)lat[i];
    out[0] = sum / (double)k / 1e3;
    out[1] = (double)lat[(k - 1) / 2] / 1e3;
    uint64_t i99 = (uint64_t)((double)k * 0.99);
    out[2] = (double)lat[i99 < k ? i99 : k - 1] / 1e3;
}

/* The tolerance of the closing allreduces (statistics, farewell): every
 * victim may be gone by then. */
static uint32_t closing_f(const bench_t *b)
{
    uint32_t fa = b->o.f;
    uint32_t v = victim_count(b);
    if (v > fa)
        fa = v;
    if (fa < 1)
        fa = 1;
    if (fa > b->n - 1)
        fa = b->n - 1;
    return fa;
}

/* Combine per-rank statistics with two fault-tolerant allreduces (so a
 * failed rank costs a row nothing). Falls back to local numbers. The
 * first waits for the slowest rank to finish the row's ops operations,
 * and this rank may be all of them ahead of it (a bcast root delivers
 * at once: with 3 bcasts of 16 MiB over a slow
 * transport it waited for the others' 3 x 7 s and its watchdog, meant
 * for one operation, called that a hang). Every rank still behind
 * watches each of its own operations, so the wait is one operation's
 * guard per operation of the row. */
static row_t aggregate(bench_t *b, const double st[3], uint64_t ops)
{
    row_t row = {st[0], st[0], st[0], st[1], st[2]};
    if (b->excluded)
        return row;
    uint32_t fa = closing_f(b);
    double sum[2] = {st[0], 1}, mx[4] = {st[0], -st[0], st[1], st[2]};
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = FTC_ALGO_CORRECTED;
    a.f = fa;
    a.dtype = FTC_DOUBLE;
    a.deliver = on_deliver;
    a.deliver_arg = b;
    a.op = FTC_SUM;
    a.count = 2;
    a.sendbuf = sum;
    a.recvbuf = sum;
    if (start_op(b, FTC_COLL_ALLREDUCE, &a) != FTC_OK)
        return row;
    wait_op_within(b, "statistics allreduce (sum)", NO_ITER,
                   b->o.op_timeout_s * (double)(ops + 1));
    if (b->status != FTC_OK)
        return row;
    a.op = FTC_MAX;
    a.count = 4;
    a.sendbuf = mx;
    a.recvbuf = mx;
    if (start_op(b, FTC_COLL_ALLREDUCE, &a) != FTC_OK)
        return row;
    wait_op(b, "statistics allreduce (max)", NO_ITER);
    if (b->status != FTC_OK)
        return row;
    row.avg = sum[0] / sum[1];
    row.max = mx[0];
    row.min = -mx[1];
    row.p50 = mx[2];
    row.p99 = mx[3];
    return row;
}

static void print_row(const bench_t *b, const char *kind, size_t size,
                      row_t r)
{
    const opts_t *o = &b->o;
    printf("%-10zu %10.2f %10.2f %10.2f %10.2f %10.2f\n", size, r.avg, r.min,
           r.max, r.p50, r.p99);
    bool raw = strcmp(kind, "pingpong") == 0;
    const char *coll = raw ? "pingpong" : ftc_coll_name(o->coll);
    char algo[32];
    snprintf(algo, sizeof(algo), "%s%s", raw ? "raw-" : "",
             raw ? b->be->name : ftc_algo_name(o->algo));
    if (o->csv)
        printf("csv,%s,%s,%u,%u,%zu,%.3f,%.3f,%.3f,%.3f,%.3f\n", coll, algo,
               o->f, b->n, size, r.avg, r.min, r.max, r.p50, r.p99);
    if (o->json) {
        json_t j;
        json_to_file(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "kind");
        json_string(&j, kind);
        json_key(&j, "coll");
        json_string(&j, coll);
        json_key(&j, "algo");
        json_string(&j, algo);
        if (o->allreduce != FTC_ALLREDUCE_AUTO) {
            json_key(&j, "allreduce");
            json_string(&j, ftc_allreduce_algo_name(o->allreduce));
        }
        json_key(&j, "f");
        json_uint(&j, o->f);
        json_key(&j, "n");
        json_uint(&j, b->n);
        json_key(&j, "size");
        json_uint(&j, size);
        json_key(&j, "avg_us");
        json_fixed(&j, r.avg, 3);
        json_key(&j, "min_us");
        json_fixed(&j, r.min, 3);
        json_key(&j, "max_us");
        json_fixed(&j, r.max, 3);
        json_key(&j, "p50_us");
        json_fixed(&j, r.p50, 3);
        json_key(&j, "p99_us");
        json_fixed(&j, r.p99, 3);
        json_object_end(&j);
        putchar('\n');
    }
}

static void print_header(const bench_t *b, const char *title)
{
    printf("# %s\n", title);
    printf("# %-8s %10s %10s %10s %10s %10s\n", "Size", "Avg(us)", "Min(us)",
           "Max(us)", "P50(us)", "P99(us)");
    if (b->o.csv)
        printf("csv,coll,algo,f,n,size,avg_us,min_us,max_us,p50_us,p99_us\n");
}

static void fill_input(const bench_t *b, int64_t *in, size_t count)
{
    for (size_t i = 0; i < count; i++)
        in[i] = (int64_t)(b->rank + 1) * (int64_t)(b->g + 1 + i);
    if (is_gossip(&b->o))
        for (size_t i = 0; i < count; i++) {
            double d = (double)in[i]; /* exact below 2^53 */
            memcpy(&in[i], &d, sizeof(d));
        }
}

static void run_size(bench_t *b, size_t size)
{
    const opts_t *o = &b->o;
    size_t count = size / 8 ? size / 8 : 1;
    int64_t *in = malloc(count * sizeof(int64_t));
    int64_t *out = malloc(count * sizeof(int64_t));
    uint64_t *lat = malloc((o->iters ? o->iters : 1) * sizeof(uint64_t));
    if (in == NULL || out == NULL || lat == NULL)
        die(4, "out of memory");
    /* The arguments and every family's parameters, set once as a user
     * would: between two operations this rank's work delays its next
     * send, and so every peer's latency (Open MPI's mpi_allreduce calls
     * MPI_Allreduce with its arguments as they are). */
    ftc_coll_args_t a0;
    ftc_coll_args_init(&a0);
    a0.algo = o->algo;
    a0.root = o->root;
    a0.f = o->f;
    a0.dtype = is_gossip(o) ? FTC_DOUBLE : FTC_INT64;
    a0.op = FTC_SUM;
    a0.count = count;
    a0.sendbuf = in;
    a0.recvbuf = out;
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    cp.fault_info = o->fault_info;
    cp.correction = o->correction;
    cp.allreduce = o->allreduce;
    if (o->algo == FTC_ALGO_CORRECTED)
        a0.params = &cp;
    ftc_ftco_params_t fp; /* ftco: its defaults (docs/ftco.md), the */
    ftc_ftco_params_init(&fp); /* radix below n where n leaves a choice */
    if (b->n > 2 && fp.tree.k >= b->n)
        fp.tree.k = b->n - 1;
    fp.ack_timeout_ns = o->ack_timeout_us * 1000;
    if (o->algo == FTC_ALGO_FTCO)
        a0.params = &fp;
    ftc_tree_params_t tp; /* the tree family: its defaults unless --tree */
    ftc_tree_params_init(&tp);
    if (o->algo == FTC_ALGO_TREE)
        a0.params = &tp;
    bench_tree_apply(&o->tree, o->algo, &fp, &tp, &cp);
    ftc_gossip_params_t gp; /* the average, every member a neighbour */
    ftc_gossip_params_init(&gp);
    gp.report = &b->gossip_report;
    if (o->gossip_period_ns > 0)
        gp.period_ns = o->gossip_period_ns;
    if (o->gossip_target > 0.0)
        gp.target = o->gossip_target;
    if (is_gossip(o))
        a0.params = &gp;
    a0.deliver = on_deliver;
    a0.deliver_arg = b;
    a0.checked = o->checked;
    a0.uniform = o->uniform;
    uint64_t k = 0, total = o->warmup + o->iters;
    uint64_t next_note = now_ns() + 2000000000u;
    for (uint64_t it = 0; it < total && !b->excluded; it++) {
        if (!before_iteration(b))
            break;
        maybe_die(b, false);
        fill_input(b, in, count);
        memset(out, 0, count * sizeof(int64_t));
        /* The call's arguments, as prepared before the loop. */
        ftc_coll_args_t a = a0;
        if (o->bad_arg != BAD_NONE && b->g == o->bad_arg_iter) {
            if (o->bad_arg == BAD_NULL_BUFFER)
                a.sendbuf = a.recvbuf = NULL;
            else if (o->bad_arg == BAD_HUGE_COUNT)
                a.count = (size_t)1 << 40;
            else
                a.op = (ftc_op_t)999;
        }
        if (is_gossip(o)) {
            /* Whoever the job kills: from outside, or by its own hand. */
            uint32_t victims[2 * MAX_PLAN], nv = 0;
            for (uint32_t q = 0; q < o->nvictims; q++)
                victims[nv++] = o->victims[q];
            for (uint32_t q = 0; q < o->nplan; q++)
                if (o->plan[q].sig == SIGKILL)
                    victims[nv++] = o->plan[q].rank;
            survivors_start(&b->survivors, b->group, victims, nv, b->g);
        }
        uint64_t t0 = now_ns();
        int rc = start_op(b, o->coll, &a);
        if (rc == FTC_EEXCLUDED) {
            /* Learnt between operations: nothing starts any more. */
            b->excluded = true;
            break;
        }
        if (rc != FTC_OK && o->usage_errors) {
            /* Refused here; the others are told (docs/semantics.md). */
            b->status = rc;
            check(b, out, count);
            b->g++;
            continue;
        }
        if (rc != FTC_OK)
            die(4, "rank %u: ftc_init_%s: %s", b->rank, ftc_coll_name(o->coll),
                ftc_strerror(rc));
        maybe_die(b, true);
        wait_op(b, ftc_coll_name(o->coll), b->g);
        b->op_msgs_sent += b->msgs_sent;
        /* Only operations that delivered a result: one that ended in an
         * error (a failure, an exclusion) took another path and would
         * blur the latency of the collective itself. */
        if (it >= o->warmup && b->status == FTC_OK)
            lat[k++] = b->t_deliver - t0;
        check(b, out, count);
        record_mark(b);
        b->g++;
        if (o->interval_ms > 0)
            idle(b, o->interval_ms);
        if (!o->quiet && now_ns() > next_note && reporter(b) == b->rank) {
            fprintf(stderr, "ftcoll-bench: size %zu: %" PRIu64 "/%" PRIu64
                            " iterations\n", size, it + 1, total);
            next_note = now_ns() + 2000000000u;
        }
    }
    double st[3];
    local_stats(lat, k, st);
    row_t row = aggregate(b, st, total);
    if (reporter(b) == b->rank && !b->excluded)
        print_row(b, "latency", size, row);
    free(in);
    free(out);
    free(lat);
}

/* --- Agree and shrink (bench_ulfm.c) ------------------------------------- */

static bool ulfm_before_iteration(void *arg, uint64_t g)
{
    bench_t *b = arg;
    b->g = g;
    return before_iteration(b);
}

static void ulfm_die_before(void *arg, uint64_t g)
{
    bench_t *b = arg;
    b->g = g;
    maybe_die(b, false);
}

/* The stream of agreements (and shrinks), then this rank's latency row
 * and tallies for the summary; the group is the last shrunk one. */
static void run_ulfm(bench_t *b)
{
    bench_ulfm_fault_t faults[MAX_PLAN];
    for (uint32_t k = 0; k < b->o.nplan; k++) {
        const plan_entry_t *p = &b->o.plan[k];
        faults[k] = (bench_ulfm_fault_t){.rank = p->rank, .iter = p->iter,
            .mid = p->mid, .mid_us = p->mid_us, .sends = p->sends,
            .in_shrink = p->in_shrink};
    }
    uint32_t victims[2 * MAX_PLAN], nv = 0;
    for (uint32_t r = 0; r < b->n && nv < 2 * MAX_PLAN; r++)
        if (is_external_victim(b, r))
            victims[nv++] = r;
    bench_ulfm_host_t h = {
        .ctx = b->ctx, .group = b->group, .rank = b->rank, .n = b->n,
        .progress = b->be->progress, .t = b->t, .spin = b->o.spin,
        .op_timeout_s = b->o.op_timeout_s, .iters = b->o.iters,
        .warmup = b->o.warmup, .f = closing_f(b),
        .with_allreduce = b->o.with_allreduce,
        .agree_round = b->o.agree_round,
        .invalidate_rank = b->o.invalidate_rank,
        .invalidate_iter = b->o.invalidate_iter,
        .faults = faults, .nfaults = b->o.nplan,
        .victims = victims, .nvictims = nv,
        .before_iteration = ulfm_before_iteration,
        .die_before = ulfm_die_before, .arg = b};
    bench_ulfm_tally_t t;
    memset(&t, 0, sizeof(t));
    bench_ulfm_run(&h, b->o.ulfm_shrink, &t);
    b->completed = t.completed;
    b->ok = t.ok;
    b->errors = t.errors;
    b->wrong = t.wrong;
    b->digest = t.digest;
    b->excluded = b->excluded || t.excluded;
    b->group = t.group;
    double st[3];
    local_stats(t.lat_ns, t.lat_count, st);
    row_t row = aggregate(b, st, (uint64_t)b->o.warmup + b->o.iters);
    if (reporter(b) == b->rank && !b->excluded)
        print_row(b, "latency", 8, row);
    free(t.lat_ns);
}

/* --- The raw transport, for comparison ----------------------------------- */

typedef struct barrier_arg {
    bench_t *b;
    atomic_int done;
    int rc;
} barrier_arg_t;

static void *barrier_thread(void *p)
{
    barrier_arg_t *ba = p;
    char one = 1, *all = malloc(ba->b->n);
    ba->rc = all != NULL ? ftc_bootstrap_allgather(ba->b->boot, &one, 1, all)
                         : FTC_ENOMEM;
    free(all);
    atomic_store(&ba->done, 1);
    return NULL;
}

/* Every rank is set up, through the launcher (out of band), before any
 * starts a collective: one that raced ahead (a bcast waits for no one)
 * could otherwise die, as planned, at an iteration that others, slower to
 * set up, had not even connected for. The rendezvous blocks, so it runs
 * on a thread while this one keeps progressing: a peer may still be
 * connecting to this rank. */
static void barrier(bench_t *b)
{
    barrier_arg_t ba = {.b = b, .rc = 0};
    atomic_init(&ba.done, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, barrier_thread, &ba) != 0)
        die(4, "rank %u: pthread_create", b->rank);
    while (!atomic_load(&ba.done))
        (void)b->be->progress(b->t, 1);
    pthread_join(t, NULL);
    if (ba.rc != 0)
        die(4, "rank %u: %s", b->rank, ftc_bootstrap_error(b->boot));
}

static void run_pingpong(bench_t *b)
{
    const opts_t *o = &b->o;
    if (b->n < 2) {
        fprintf(stderr, "ftcoll-bench: --pingpong needs 2 ranks\n");
        return;
    }
    uint64_t *lat = malloc((o->iters ? o->iters : 1) * sizeof(uint64_t));
    if (lat == NULL)
        die(4, "out of memory");
    for (uint32_t k = 0; k < o->nsizes; k++) {
        char title[256], err[512] = "";
        title[0] = '\0';
        int rc = b->be->pingpong(b->boot, o->sizes[k], o->warmup, o->iters,
                                 lat, title, sizeof(title), err, sizeof(err));
        if (rc != FTC_OK)
            die(4, "rank %u: %s", b->rank, err);
        if (b->rank != 0)
            continue;
        if (k == 0) {
            char t[512];
            snprintf(t, sizeof(t), "%s, one-way latency = round trip / 2, "
                     "ranks 0 and 1", title);
            print_header(b, t);
        }
        double st[3];
        local_stats(lat, o->iters, st);
        print_row(b, "pingpong", o->sizes[k],
                  (row_t){st[0], st[0], st[0], st[1], st[2]});
    }
    free(lat);
}

/* --- Set-up and the end ------------------------------------------------- */

static uint64_t env_ms(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return dflt;
    uint64_t v = parse_u64(s, name);
    if (v == 0)
        die(2, "%s must be > 0", name);
    return v;
}

/* --wait spin asks for spinning whatever the machine: say it when the
 * ranks on this host outnumber its CPUs (the backends then yield on an
 * idle poll, so the peers run, but the ranks never sleep: they keep the
 * CPUs from everything else on the host for as long as the job runs). */
static void warn_oversubscribed_spin(const bench_t *b)
{
    if (!b->o.spin || b->rank != 0)
        return;
    const char *v = getenv("FTCOLL_LOCAL_SIZE");
    unsigned long local = v != NULL && *v != '\0' ? strtoul(v, NULL, 10)
                                                  : b->n;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && local > (unsigned long)cpus)
        fprintf(stderr, "ftcoll-bench: warning: --wait spin with %lu ranks "
                        "on %ld CPUs: an idle rank yields the CPU but never "
                        "sleeps (--wait block sleeps when nothing comes)\n",
                local, cpus);
}

static void setup(bench_t *b)
{
    char err[512] = "";
    int rc = ftc_bootstrap_open(&b->boot, err, sizeof(err));
    if (rc != FTC_OK)
        die(4, "%s", err);
    b->rank = ftc_bootstrap_rank(b->boot);
    b->n = ftc_bootstrap_size(b->boot);
    b->be = bench_backend_find(getenv("FTCOLL_BACKEND"), err, sizeof(err));
    if (b->be == NULL)
        die(4, "%s", err);
    const opts_t *o = &b->o;
    if (o->f >= b->n)
        die(2, "-f %u needs more than %u ranks", o->f, b->n);
    if (o->root >= b->n)
        die(2, "--root %u is not a rank (n = %u)", o->root, b->n);
    const char *tree_flag = NULL;
    const char *tree_why = bench_tree_check(&o->tree, o->algo, b->n, &tree_flag);
    if (tree_why != NULL)
        die(2, "%s: %s (n = %u)", tree_flag, tree_why, b->n);
    for (uint32_t k = 0; k < o->nplan; k++)
        if (o->plan[k].rank >= b->n)
            die(2, "--kill/--crash/--crash-sends/--stop/--die-after-exchange rank %u is "
                   "not a rank", o->plan[k].rank);
    if (o->invalidate_rank >= (int64_t)b->n)
        die(2, "--invalidate rank %" PRId64 " is not a rank (n = %u)",
            o->invalidate_rank, b->n);
    b->failed_list = calloc(b->n, sizeof(uint32_t));
    if (b->failed_list == NULL)
        die(4, "out of memory");
    warn_oversubscribed_spin(b);

    bench_die_wait_s = o->op_timeout_s;
    rc = b->be->open(b->boot, &b->t, err, sizeof(err));
    if (rc != FTC_OK)
        die(4, "rank %u: %s", b->rank, err);
    b->be->describe(b->t, b->describe, sizeof(b->describe));

    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = ftc_bootstrap_job_token(b->boot);
    uint8_t key[16];
    if (!o->no_auth && ftc_bootstrap_job_key(b->boot, key) == 1) {
        cfg.auth = 1;
        memcpy(cfg.auth_key, key, sizeof(key));
    }
    b->auth = cfg.auth != 0;
    cfg.suspect_timeout_ns = env_ms("FTCOLL_SUSPECT_MS", 100) * 1000000u;
    cfg.probe_timeout_ns = env_ms("FTCOLL_PROBE_MS", 200) * 1000000u;
    /* Payloads longer than this travel as segments (ftc_config_t). */
    const char *seg = getenv("FTCOLL_SEGMENT_BYTES");
    if (seg != NULL && *seg != '\0') {
        char *end;
        unsigned long long v = strtoull(seg, &end, 10);
        if (*end != '\0' || v == 0 || v > UINT32_MAX / 2)
            die(2, "FTCOLL_SEGMENT_BYTES: %s is no byte count in "
                   "1 .. 2^31", seg);
        cfg.segment_size = v;
    }
    const char *win = getenv("FTCOLL_SEGMENT_WINDOW");
    if (win != NULL && *win != '\0') {
        char *end;
        unsigned long v = strtoul(win, &end, 10);
        if (*end != '\0' || v == 0 || v > 1024)
            die(2, "FTCOLL_SEGMENT_WINDOW: %s is no count in 1 .. 1024",
                win);
        cfg.segment_window = (uint32_t)v;
    }
    /* Probes that back off before a verdict (ftc_config_t.probe_backoff);
     * 0 is the single probe of 0.3, for before/after measurements. */
    const char *backoff = getenv("FTCOLL_PROBE_BACKOFF");
    if (backoff != NULL && *backoff != '\0') {
        char *end;
        unsigned long v = strtoul(backoff, &end, 10);
        if (*end != '\0' || *backoff == '-' || v > FTC_PROBE_BACKOFF_MAX)
            die(2, "FTCOLL_PROBE_BACKOFF: %s is no count in 0 .. %u",
                backoff, FTC_PROBE_BACKOFF_MAX);
        cfg.probe_backoff = (uint32_t)v;
    }
    /* The core keeps every message within what the backend sends. */
    ftc_transport_ops_t ops = *b->be->ops();
    if (b->be->max_msg != NULL)
        ops.max_msg_size = b->be->max_msg(b->t);
    void *ops_arg = b->be->ops_arg(b->t);
    if (o->ulfm)    /* --crash-sends counts this rank's sends */
        bench_ulfm_wrap_send(&ops, &ops_arg);
    if (o->loss > 0.0)
        bench_loss_wrap_send(&ops, o->loss, o->loss_seed ? o->loss_seed : 1,
                             b->rank);
    rc = ftc_context_create(b->rank, b->n, &ops, ops_arg, &cfg, &b->ctx);
    if (rc == FTC_OK) {
        b->be->attach(b->t, b->ctx);
        rc = ftc_group_create(b->ctx, 1, 0, b->n, NULL, &b->group);
    }
    if (rc != FTC_OK)
        die(4, "rank %u: context: %s", b->rank, ftc_strerror(rc));
}

/* Leave with ftc_group_finalize after the summary: it delivers once every
 * other rank has finalized (so printed its summary, and delivered all it
 * needed this rank for) or failed. Leaving then cannot make another rank
 * count this one as failed, however slow the others are. */
static void farewell(bench_t *b)
{
    if (b->excluded || ftc_context_is_excluded(b->ctx) || b->n < 2)
        return;
    b->done = false;
    int rc = ftc_group_finalize(b->group, on_deliver, b);
    if (rc != FTC_OK)
        die(4, "rank %u: ftc_group_finalize: %s", b->rank, ftc_strerror(rc));
    wait_op(b, "finalize", NO_ITER);
}

static void print_summary(bench_t *b)
{
    ftc_counters_t c;
    ftc_context_counters(b->ctx, &c);
    char ts[4096];
    b->be->stats_json(b->t, ts, sizeof(ts));
    uint32_t nf = ftc_context_failed(b->ctx, NULL, 0);
    uint32_t *failed = calloc(nf + 1, sizeof(uint32_t));
    if (failed == NULL)
        die(4, "out of memory");
    ftc_context_failed(b->ctx, failed, nf);

    /* Built in a buffer and written with one call, so that ranks sharing
     * a pipe never interleave their lines. */
    char buf[12288];
    json_t j;
    json_to_buffer(&j, buf, sizeof(buf));
    json_object_begin(&j);
    json_key(&j, "rank");
    json_uint(&j, b->rank);
    json_key(&j, "n");
    json_uint(&j, b->n);
    json_key(&j, "coll");
    json_string(&j, ftc_coll_name(b->o.coll));
    json_key(&j, "algo");
    json_string(&j, ftc_algo_name(b->o.algo));
    json_key(&j, "f");
    json_uint(&j, b->o.f);
    if (b->o.uniform) { /* for the caller to see which mode ran */
        json_key(&j, "uniform");
        json_bool(&j, true);
    }
    if (b->o.algo == FTC_ALGO_CORRECTED && b->o.coll == FTC_COLL_ALLREDUCE
        && !b->o.ulfm) {
        /* Which allreduce the family ran: --allreduce, auto resolved as
         * the family resolves it for this group (the whole world). */
        json_key(&j, "allreduce");
        json_string(&j, ftc_allreduce_algo_name(
                            ftc_group_allreduce_algo(b->group,
                                                     b->o.allreduce)));
    }
    if (!b->o.ulfm) {
        /* What the stream's collectives sent as their own (each one's
         * ftc_completion_t stats.msgs_sent, in its callback): no
         * probe, probe answer or other control message, none of the
         * statistics allreduces, none sent after a delivery (a
         * lingering allreduce serving a late peer, a delivered
         * broadcast's corrections). Against "counters"' context-wide
         * numbers, the algorithm's own count. */
        json_key(&j, "op_msgs_sent");
        json_uint(&j, b->op_msgs_sent);
    }
    json_key(&j, "completed");
    json_uint(&j, b->completed);
    json_key(&j, "ok");
    json_uint(&j, b->ok);
    json_key(&j, "errors");
    json_uint(&j, b->errors);
    json_key(&j, "wrong");
    json_uint(&j, b->wrong);
    json_key(&j, "excluded");
    json_bool(&j, b->excluded);
    json_key(&j, "auth");
    json_bool(&j, b->auth);
    json_key(&j, "failed");
    json_array_begin(&j);
    for (uint32_t i = 0; i < nf; i++)
        json_uint(&j, failed[i]);
    json_array_end(&j);
    json_key(&j, "last");
    json_array_begin(&j);
    for (uint32_t i = 0; i < b->nlast; i++)
        json_int(&j, b->last[i]);
    json_array_end(&j);
    char digest[17];
    snprintf(digest, sizeof(digest), "%016" PRIx64, b->digest);
    json_key(&j, "digest");
    json_string(&j, digest);
    json_key(&j, "marks");
    json_array_begin(&j);
    for (uint32_t i = 0; i < b->nmarks; i++) {
        json_array_begin(&j);
        json_uint(&j, b->mark_iter[i]);
        json_uint(&j, b->mark_t[i]);
        json_array_end(&j);
    }
    json_array_end(&j);
    /* How many operations ended with each status; with --usage-errors,
     * each operation's [iteration, status, result key]. */
    json_key(&j, "statuses");
    json_object_begin(&j);
    for (int i = 0; i < MAX_STATUS; i++) {
        if (b->by_status[i] == 0)
            continue;
        json_key(&j, ftc_err_name(-i));
        json_uint(&j, b->by_status[i]);
    }
    json_object_end(&j);
    json_key(&j, "results");
    json_array_begin(&j);
    for (uint32_t i = 0; i < b->nresults; i++) {
        json_array_begin(&j);
        json_int(&j, b->results[i][0]);
        json_string(&j, ftc_err_name((int)b->results[i][1]));
        json_int(&j, b->results[i][2]);
        json_array_end(&j);
    }
    json_array_end(&j);
    json_key(&j, "list_mismatch");
    json_uint(&j, b->list_mismatch);
    if (is_gossip(&b->o)) {
        json_key(&j, "gossip_max_rel_error");
        json_general(&j, b->gossip_max_err, 6);
        json_key(&j, "gossip_max_iterations");
        json_uint(&j, b->gossip_max_iter);
        survivors_json(&b->survivors, &j);
        json_key(&j, "loss_dropped");
        json_uint(&j, bench_loss_dropped());
    }
    json_key(&j, "late_ok");
    json_uint(&j, b->late_ok);
    const struct {
        const char *name;
        uint64_t value;
    } counters[] = {
        {"dropped_truncated", c.dropped_truncated},
        {"dropped_checksum", c.dropped_checksum},
        {"dropped_version", c.dropped_version},
        {"dropped_foreign", c.dropped_foreign},
        {"dropped_stale", c.dropped_stale},
        {"dropped_badmsg", c.dropped_badmsg},
        {"probes_sent", c.probes_sent},
        {"failures_detected", c.failures_detected},
    };
    json_key(&j, "counters");
    json_object_begin(&j);
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
        json_key(&j, counters[i].name);
        json_uint(&j, counters[i].value);
    }
    json_object_end(&j);
    json_key(&j, "transport");
    json_object_begin(&j);
    json_members(&j, ts);
    /* Peers the backend itself reported: [rank, how, t_ns]. */
    json_key(&j, "reports");
    json_array_begin(&j);
    for (uint32_t r = 0; r < b->n; r++) {
        uint64_t t_ns = 0;
        const char *how = b->be->peer_report(b->t, r, &t_ns);
        if (how == NULL)
            continue;
        json_array_begin(&j);
        json_uint(&j, r);
        json_string(&j, how);
        json_uint(&j, t_ns);
        json_array_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_object_end(&j);
    if (json_truncated(&j))
        die(4, "rank %u: the summary does not fit %zu bytes", b->rank,
            sizeof(buf));
    puts(buf);
    fflush(stdout);
    free(failed);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    bench_t *b = calloc(1, sizeof(*b));
    if (b == NULL)
        die(4, "out of memory");
    survivors_init(&b->survivors);
    parse_opts(argc, argv, &b->o);
    sigcont_watched = watch_sigcont();
    setup(b);

    if (b->o.pingpong)
        run_pingpong(b);
    /* Everyone waits out of band (after a ping-pong, too: a rank that
     * started a collective then would see 0 and 1 as silent). Not with a
     * rank dead since the exchange: the barrier would wait for it, and
     * the survivors have just waited together for its death. */
    if (bench_die_after_exchange < 0)
        barrier(b);
    /* Done with the launcher: with PMIx this finalizes, so that a rank
     * dying later is no lost PMIx client (Slurm's PMIx plugin kills the
     * whole step for one, even under --no-kill: docs/running.md). */
    ftc_bootstrap_close(b->boot);
    b->boot = NULL;
    if (!b->o.no_coll) {
        if (reporter(b) == b->rank) {
            char title[512], tree[48];
            bench_tree_describe(&b->o.tree, tree, sizeof(tree));
            snprintf(title, sizeof(title),
                     "ftcoll-bench: %s, %s, f=%u, n=%u, %s, %s, %" PRIu64
                     " iterations (+%" PRIu64 " warm-up), int64 sum, "
                     "latency per operation",
                     ftc_coll_name(b->o.coll), ftc_algo_name(b->o.algo),
                     b->o.f, b->n, tree, b->describe, b->o.iters, b->o.warmup);
            print_header(b, title);
        }
        if (b->o.ulfm)
            run_ulfm(b);
        for (uint32_t k = 0; k < b->o.nsizes && !b->excluded && !b->o.ulfm;
             k++)
            run_size(b, b->o.sizes[k]);
        print_summary(b);
        farewell(b);
        /* A rank stopped after the others had sent it every operation's
         * data is excluded after it all: it delivers from what was queued
         * and learns it only at finalize, after its summary. */
        if (!b->excluded && ftc_context_is_excluded(b->ctx))
            print_event(b->rank, "excluded", b->g, false);
    }

    /* Let the last messages leave; after finalize nobody waits on us.
     * A courtesy remains: a peer we declared failed while it was stopped
     * is sent FTC_MSG_EXCLUDED, and over UCX tcp a connection closed by
     * our exit can drop it before the resumed peer reads it; answering
     * for a moment more lets it learn its exclusion. Nothing else
     * depends on this pause. */
    b->be->drain(b->t);
    idle(b, 50);
    bool bad = b->wrong > 0 || (b->excluded && !is_victim(b, b->rank));
    bench_ulfm_cleanup();
    ftc_context_destroy(b->ctx);
    b->be->destroy(b->t);
    free(b->failed_list);
    free(b);
    return bad ? 1 : 0;
}
