/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-sim: run one collective on the loopback backend or on the LogP
 * simulator (--model logp, docs/simulator.md) with a fault schedule, print
 * what every rank delivered or a summary, and check the semantics. With
 * --runs N it repeats with seeds seed, seed+1, ... and aggregates.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "checker.h"
#include "cli.h"
#include "json.h"
#include "sim_gossip.h"
#include "scenario.h"
#include "sim_schedule.h"
#include "sim_ulfm.h"

static void usage(FILE *out)
{
    fputs(
        "usage: ftcoll-sim [options]   (--opt=value or --opt value)\n"
        "  --coll reduce|bcast|allreduce   collective (allreduce)\n"
        "  --coll agree|shrink|invalidate  failure mitigation (docs/ulfm.md):\n"
        "                                  agree ANDs a 64-bit input; shrink\n"
        "                                  needs --fail/--faults (known before\n"
        "                                  it); invalidate: every rank starts an\n"
        "                                  allreduce, the root invalidates\n"
        "  --algo corrected|tree|ftco      algorithm (corrected); push-sum,\n"
        "                                  push-flow, pcf: the gossip family's\n"
        "                                  own flags (--algo pcf --help)\n"
        "  -n N                            processes, P: 1..16777216 (8)\n"
        "  -f F                            failures tolerated, F < N (1)\n"
        "  --root R                        root; allreduce: first root (0)\n"
        "  --op sum|prod|min|max|band|bor|bxor|land|lor   (sum)\n"
        "  --dtype int8..int64|uint8..uint64|float|double (int64)\n"
        "  --count C                       elements (1)\n"
        "  --input rank|pow2|const:V|random:SEED|allbut   (rank; agree,\n"
        "                                  shrink: allbut, every bit but the\n"
        "                                  rank's own, so the AND names them)\n"
        "  --fail R1,R2,...                ranks failed before the operation\n"
        "  --crash R:K,...                 rank R fails right after its K-th\n"
        "                                  send (K=0: after init, before any;\n"
        "                                  logp: when that send departs)\n"
        "  --fault-info list|count|bit     reduce failure information (list)\n"
        "  --correction opportunistic|checked              (checked)\n"
        "  --allreduce auto|reduce_bcast|exchange|butterfly (auto)\n"
        "  -d D                            opportunistic distance (2)\n"
        "  --tree binomial|kary|lame|optimal|binomial-inorder  bcast tree\n"
        "  -k K                            arity (kary) or order (lame) (2)\n",
        out);
    /* (ISO C wants string literals below 4096 bytes: a second part.) */
    fputs(
        "ftco (docs/ftco.md): --tree knomial|kary|knomial-multiroot|\n"
        "  kary-multiroot (k roots), -k K|best (4-nomial;\n"
        "  best: the k-nomial radix of least latency for -n, -L, -o), and\n"
        "  --ack-timeout T                 per-message timeout base (0: the\n"
        "                                  failure monitor only)\n"
        "  --service none|rsd|disd         LogP: serve senders by tree distance\n"
        "                                  (Appendix A); implies --queue kind\n"
        "  --order data-first|receives-first  LogP: a queued DATA goes before\n"
        "                                  receives (Algorithm 1; default), or\n"
        "                                  receives always first (flogsim's)\n"
        "  --agree-round rd2|rd4|tree      agree, shrink: the failure-free round\n"
        "                                  (rd2; docs/ulfm.md)\n"
        "  --seed S                        seed of the run (loopback jitter,\n"
        "                                  drops, start times, faults) (1)\n"
        "  --latency-ns, --jitter-ns, --send-cost-ns   network model\n"
        "  --detect-ns NS|never            transport failure reports (50000;\n"
        "                                  logp: 100)\n"
        "  --suspect-ns, --probe-ns        keepalive timeouts (1e6, 2e6; logp:\n"
        "                                  1000, 2000)\n"
        "  --spread-ns NS                  ranks start uniformly in [0, NS]\n"
        "  --json                          one JSON object on stdout\n"
        "  --no-check                      do not check the semantics\n"
        "Simulator (docs/simulator.md):\n"
        "  --model loopback|logp           network model (loopback; -L, -o,\n"
        "                                  -g, --parallelism, --queue imply logp)\n"
        "  -L L, -o O, -g G                LogP latency, overhead, gap in time\n"
        "                                  units (2, 1, 1); 1 unit = 1 ns of the\n"
        "                                  core's clock, so every *-ns flag is\n"
        "                                  in units under logp\n"
        "  --parallelism 1|2               2: a send and a receive may overlap (1)\n"
        "  --queue fifo|kind               inbound queue policy (fifo)\n"
        "  --runs N                        repeat with seeds S, S+1, ... (1)\n"
        "  --faults K|R1,R2,..|list:R,..   K random ranks, or these ranks, fail\n"
        "                                  before the operation\n"
        "  --crashes K                     K random ranks crash at uniformly\n"
        "                                  random times in [0, --crash-window]\n"
        "  --crash-window T                (default: a failure-free tree depth)\n"
        "  --fault-root protect|any        may random faults hit the root (protect)\n"
        "  --fault-seed S                  seed of the random faults (--seed)\n"
        "  --schedule                      print each run's faults on stderr\n"
        "                                  and fail the run if one did not\n"
        "                                  take place\n"
        "  --spread uniform:W|normal:S     arrival imbalance (start times)\n"
        "  --detect T|never, --suspect T, --probe T   as the *-ns flags\n"
        "  --csv                           CSV: one row per run (+ aggregates)\n"
        "  --trace                         LogP: every send, receive, crash and\n"
        "                                  delivery on stderr (small runs)\n"
        "  --summary                       no per-rank output (default above\n"
        "                                  4096 ranks); --ranks: always per-rank\n"
        "  -h, --help                      this text\n"
        "  -V, --version                   the ftcoll version\n"
        "Exit status: 0 ok, 1 a semantic property was violated, 2 bad usage.\n",
        out);
}

static int bad(const char *flag, const char *why)
{
    fprintf(stderr, "ftcoll-sim: %s: %s\n", flag, why);
    return 2;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s == '\0' || *s == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    if (parse_u64(s, &v) != 0 || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static void print_value(FILE *out, ftc_dtype_t t, const void *buf, uint64_t count)
{
    const uint8_t *p = buf;
    size_t es = ftc_dtype_size(t);
    fputc('[', out);
    for (uint64_t i = 0; i < count; i++, p += es) {
        if (i > 0)
            fputc(',', out);
        switch (t) {
        case FTC_INT8: { int8_t v; memcpy(&v, p, 1); fprintf(out, "%d", v); break; }
        case FTC_INT16: { int16_t v; memcpy(&v, p, 2); fprintf(out, "%d", v); break; }
        case FTC_INT32: { int32_t v; memcpy(&v, p, 4); fprintf(out, "%" PRId32, v); break; }
        case FTC_INT64: { int64_t v; memcpy(&v, p, 8); fprintf(out, "%" PRId64, v); break; }
        case FTC_UINT8: { uint8_t v; memcpy(&v, p, 1); fprintf(out, "%u", v); break; }
        case FTC_UINT16: { uint16_t v; memcpy(&v, p, 2); fprintf(out, "%u", v); break; }
        case FTC_UINT32: { uint32_t v; memcpy(&v, p, 4); fprintf(out, "%" PRIu32, v); break; }
        case FTC_UINT64: { uint64_t v; memcpy(&v, p, 8); fprintf(out, "%" PRIu64, v); break; }
        case FTC_FLOAT: { float v; memcpy(&v, p, 4); fprintf(out, "%.9g", (double)v); break; }
        case FTC_DOUBLE: { double v; memcpy(&v, p, 8); fprintf(out, "%.17g", v); break; }
        default: break;
        }
    }
    fputc(']', out);
}

/* One run's figures, as printed and aggregated. */
typedef struct run_summary {
    uint64_t seed;
    uint64_t messages, time, events;
    uint64_t reach, finish, first_finish, spread;
    uint64_t last_start, latency; /* Margolin & Barak: FinishTime_last -
                                     StartTime_last */
    double msgs_per_proc;
    double work_at_reach; /* per process (scenario.h) */
    /* Margolin & Barak's own measures (sim_paper_metrics.h): a process
     * finishes when it has delivered and passed the value on. */
    uint64_t finish_time_first, finish_time_last;
    uint64_t paper_latency, paper_output_spread;
    double paper_work;
    uint32_t paper_max_queue;
    uint64_t max_rank_msgs;
    uint32_t max_inbound, live, undelivered, bad_status, failed;
    int violations;
    double wall_s, setup_s, run_s, teardown_s, check_s;
} run_summary_t;

static void summary_of(const ftc_scenario_result_t *r, int violations,
                       double wall, uint64_t seed, run_summary_t *out)
{
    memset(out, 0, sizeof(*out));
    out->seed = seed;
    out->messages = r->messages;
    out->time = r->time_ns;
    out->events = r->events;
    out->reach = r->reach_ns;
    out->finish = r->finish_ns;
    out->first_finish = r->first_finish_ns;
    out->spread = r->finish_ns - r->first_finish_ns;
    for (uint32_t i = 0; i < r->n; i++)
        if (!r->ranks[i].failed && r->ranks[i].start_ns > out->last_start)
            out->last_start = r->ranks[i].start_ns;
    out->latency = r->finish_ns > out->last_start
                       ? r->finish_ns - out->last_start
                       : 0;
    out->msgs_per_proc = r->n ? (double)r->messages / r->n : 0;
    out->work_at_reach = r->n ? (double)r->messages_at_reach / r->n : 0;
    out->finish_time_first = r->finish_time_first;
    out->finish_time_last = r->finish_time_last;
    out->paper_latency = r->finish_time_last > out->last_start
                             ? r->finish_time_last - out->last_start
                             : 0;
    out->paper_output_spread = r->finish_time_last > r->finish_time_first
                                   ? r->finish_time_last - r->finish_time_first
                                   : 0;
    out->paper_work = r->n ? (double)r->messages_by_finish / r->n : 0;
    out->paper_max_queue = r->paper_max_queue;
    out->max_rank_msgs = r->max_rank_sends;
    out->max_inbound = r->max_inbound;
    out->live = r->live;
    out->undelivered = r->undelivered;
    out->bad_status = r->bad_status;
    out->failed = r->n - r->live;
    out->violations = violations;
    out->wall_s = wall;
    out->setup_s = r->wall_setup_s;
    out->run_s = r->wall_run_s;
    out->teardown_s = r->wall_teardown_s;
}

/* The metrics, in output order: name, and how to read one from a run. */
#define METRICS(X)                                                            \
    X(reach, (double)m->reach)                                                \
    X(finish, (double)m->finish)                                              \
    X(first_finish, (double)m->first_finish)                                  \
    X(spread, (double)m->spread)                                              \
    X(messages, (double)m->messages)                                          \
    X(msgs_per_proc, m->msgs_per_proc)                                        \
    X(max_rank_msgs, (double)m->max_rank_msgs)                                \
    X(max_inbound, (double)m->max_inbound)                                    \
    X(failed, (double)m->failed)                                              \
    X(undelivered, (double)m->undelivered)                                    \
    X(bad_status, (double)m->bad_status)                                      \
    X(violations, (double)m->violations)                                      \
    X(events, (double)m->events)                                              \
    X(wall_s, m->wall_s)                                                      \
    X(setup_s, m->setup_s)                                                    \
    X(run_s, m->run_s)                                                        \
    X(teardown_s, m->teardown_s)                                              \
    X(check_s, m->check_s)                                                    \
    X(last_start, (double)m->last_start)                                      \
    X(latency, (double)m->latency)                                            \
    X(work_at_reach, m->work_at_reach)                                        \
    X(finish_time_first, (double)m->finish_time_first)                        \
    X(finish_time_last, (double)m->finish_time_last)                          \
    X(paper_latency, (double)m->paper_latency)                                \
    X(paper_work, m->paper_work)                                              \
    X(paper_output_spread, (double)m->paper_output_spread)                    \
    X(paper_max_queue, (double)m->paper_max_queue)

enum {
#define X(name, expr) M_##name,
    METRICS(X)
#undef X
    M_COUNT
};

static const char *const metric_names[] = {
#define X(name, expr) #name,
    METRICS(X)
#undef X
};

static void metric_values(const run_summary_t *m, double *v)
{
#define X(name, expr) v[M_##name] = (expr);
    METRICS(X)
#undef X
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return ru.ru_maxrss;
}

/* One rank's value: count elements of type t, as a JSON array. */
static void json_value(json_t *j, ftc_dtype_t t, const void *buf,
                       uint64_t count)
{
    const uint8_t *p = buf;
    size_t es = ftc_dtype_size(t);
    json_array_begin(j);
    for (uint64_t i = 0; i < count; i++, p += es) {
        switch (t) {
        case FTC_INT8: { int8_t v; memcpy(&v, p, 1); json_int(j, v); break; }
        case FTC_INT16: { int16_t v; memcpy(&v, p, 2); json_int(j, v); break; }
        case FTC_INT32: { int32_t v; memcpy(&v, p, 4); json_int(j, v); break; }
        case FTC_INT64: { int64_t v; memcpy(&v, p, 8); json_int(j, v); break; }
        case FTC_UINT8: { uint8_t v; memcpy(&v, p, 1); json_uint(j, v); break; }
        case FTC_UINT16: { uint16_t v; memcpy(&v, p, 2); json_uint(j, v); break; }
        case FTC_UINT32: { uint32_t v; memcpy(&v, p, 4); json_uint(j, v); break; }
        case FTC_UINT64: { uint64_t v; memcpy(&v, p, 8); json_uint(j, v); break; }
        case FTC_FLOAT: { float v; memcpy(&v, p, 4); json_general(j, (double)v, 9); break; }
        case FTC_DOUBLE: { double v; memcpy(&v, p, 8); json_general(j, v, 17); break; }
        default: break;
        }
    }
    json_array_end(j);
}

/* The network model's members. */
static void json_model(json_t *j, const ftc_scenario_t *s)
{
    json_key(j, "model");
    if (s->model != FTC_MODEL_LOGP) {
        json_string(j, "loopback");
        return;
    }
    json_string(j, "logp");
    json_key(j, "L");
    json_uint(j, s->logp_L);
    json_key(j, "o");
    json_uint(j, s->logp_o);
    json_key(j, "g");
    json_uint(j, s->logp_g);
    json_key(j, "parallelism");
    json_uint(j, s->parallelism ? s->parallelism : 1);
    json_key(j, "queue");
    json_string(j, s->queue == FTC_QUEUE_KIND ? "kind" : "fifo");
}

/* One run's figures, as members. */
static void json_summary(json_t *j, const run_summary_t *m)
{
    json_key(j, "seed");
    json_uint(j, m->seed);
    json_key(j, "reach");
    json_uint(j, m->reach);
    json_key(j, "finish");
    json_uint(j, m->finish);
    json_key(j, "first_finish");
    json_uint(j, m->first_finish);
    json_key(j, "spread");
    json_uint(j, m->spread);
    json_key(j, "msgs_per_proc");
    json_fixed(j, m->msgs_per_proc, 4);
    json_key(j, "max_rank_msgs");
    json_uint(j, m->max_rank_msgs);
    json_key(j, "max_inbound");
    json_uint(j, m->max_inbound);
    json_key(j, "finish_time_first");
    json_uint(j, m->finish_time_first);
    json_key(j, "finish_time_last");
    json_uint(j, m->finish_time_last);
    json_key(j, "paper_latency");
    json_uint(j, m->paper_latency);
    json_key(j, "paper_work");
    json_fixed(j, m->paper_work, 4);
    json_key(j, "paper_output_spread");
    json_uint(j, m->paper_output_spread);
    json_key(j, "paper_max_queue");
    json_uint(j, m->paper_max_queue);
    json_key(j, "live");
    json_uint(j, m->live);
    json_key(j, "failed_ranks");
    json_uint(j, m->failed);
    json_key(j, "undelivered");
    json_uint(j, m->undelivered);
    json_key(j, "bad_status");
    json_uint(j, m->bad_status);
    json_key(j, "wall_s");
    json_fixed(j, m->wall_s, 4);
    json_key(j, "setup_s");
    json_fixed(j, m->setup_s, 4);
    json_key(j, "run_s");
    json_fixed(j, m->run_s, 4);
    json_key(j, "teardown_s");
    json_fixed(j, m->teardown_s, 4);
    json_key(j, "check_s");
    json_fixed(j, m->check_s, 4);
}

/* What every --json output starts with: the collective and its size. */
static void json_operation(json_t *j, const ftc_scenario_t *s)
{
    json_key(j, "coll");
    json_string(j, ftc_sim_coll_name(s->coll));
    json_key(j, "algo");
    json_string(j, ftc_algo_name(s->args.algo));
    json_key(j, "n");
    json_uint(j, s->n);
    json_key(j, "f");
    json_uint(j, s->args.f);
    json_key(j, "root");
    json_uint(j, s->args.root);
}

/* The outcome of a run as members: messages, time, the checker's word. */
static void json_outcome(json_t *j, const ftc_scenario_result_t *r,
                         int violations, const char *msg)
{
    json_key(j, "messages");
    json_uint(j, r->messages);
    json_key(j, "time");
    json_uint(j, r->time_ns);
    json_key(j, "events");
    json_uint(j, r->events);
    json_key(j, "violations");
    json_int(j, violations);
    json_key(j, "violation");
    json_string(j, msg);
}

static void print_json(const ftc_scenario_t *s, const ftc_scenario_result_t *r,
                       int violations, const char *msg,
                       const run_summary_t *m, bool per_rank)
{
    json_t j;
    json_to_file(&j, stdout);
    json_object_begin(&j);
    json_operation(&j, s);
    json_outcome(&j, r, violations, msg);
    json_summary(&j, m);
    json_model(&j, s);
    json_key(&j, "peak_rss_kb");
    json_int(&j, peak_rss_kb());
    if (per_rank) {
        json_key(&j, "ranks");
        json_array_begin(&j);
        for (uint32_t i = 0; i < r->n; i++) {
            const ftc_rank_result_t *rr = &r->ranks[i];
            json_object_begin(&j);
            json_key(&j, "rank");
            json_uint(&j, i);
            json_key(&j, "failed");
            json_bool(&j, rr->failed);
            json_key(&j, "delivered");
            json_bool(&j, rr->delivered);
            json_key(&j, "status");
            json_string(&j, rr->delivered ? ftc_err_name(rr->status) : "none");
            json_key(&j, "sent");
            json_uint(&j, rr->stats.msgs_sent);
            json_key(&j, "retries");
            json_uint(&j, rr->stats.retries);
            json_key(&j, "root_used");
            json_uint(&j, rr->stats.root);
            json_key(&j, "failed_seen");
            json_array_begin(&j);
            for (uint32_t k = 0; k < rr->nfailed_list; k++)
                json_uint(&j, rr->failed_list[k]);
            json_array_end(&j);
            ftc_sim_ulfm_json_rank(&j, s, rr);
            json_key(&j, "value");
            if (rr->has_value)
                json_value(&j, s->args.dtype, rr->value, s->args.count);
            else
                json_null(&j);
            json_object_end(&j);
        }
        json_array_end(&j);
    }
    json_object_end(&j);
    putchar('\n');
}

static void print_table(const ftc_scenario_t *s, const ftc_scenario_result_t *r,
                        int violations, const char *msg, bool per_rank)
{
    if (s->model == FTC_MODEL_LOGP)
        printf("%s %s  n=%u f=%u root=%u  messages=%" PRIu64 "  time=%" PRIu64
               " units (logp L=%" PRIu64 " o=%" PRIu64 " g=%" PRIu64 ")\n",
               ftc_algo_name(s->args.algo), ftc_sim_coll_name(s->coll), s->n,
               s->args.f, s->args.root, r->messages, r->time_ns, s->logp_L,
               s->logp_o, s->logp_g);
    else
        printf("%s %s  n=%u f=%u root=%u  messages=%" PRIu64 "  time=%.3f us\n",
               ftc_algo_name(s->args.algo), ftc_sim_coll_name(s->coll), s->n,
               s->args.f, s->args.root, r->messages, (double)r->time_ns / 1000.0);
    if (!per_rank)
        goto verdict;
    printf("%5s  %-7s  %-22s  %5s  %-12s  %s\n", "rank", "state", "status",
           "sent", "failed seen", "value");
    for (uint32_t i = 0; i < r->n; i++) {
        const ftc_rank_result_t *rr = &r->ranks[i];
        const char *state = rr->pre_failed ? "failed" : rr->failed ? "crashed" : "live";
        char seen[64] = "-";
        size_t off = 0;
        for (uint32_t j = 0; j < rr->nfailed_list && off + 12 < sizeof(seen); j++)
            off += (size_t)snprintf(seen + off, sizeof(seen) - off, "%s%u",
                                    j ? "," : "", rr->failed_list[j]);
        printf("%5u  %-7s  %-22s  %5" PRIu64 "  %-12s  ", i, state,
               rr->delivered ? ftc_err_name(rr->status) : "(no delivery)",
               rr->stats.msgs_sent, seen);
        if (rr->has_value)
            print_value(stdout, s->args.dtype, rr->value,
                        s->args.count > 8 ? 8 : s->args.count);
        else
            printf("-");
        printf("\n");
    }
verdict:
    if (violations == 0)
        printf("semantics: all properties hold\n");
    else
        printf("semantics: %d violation(s); first: %s\n", violations, msg);
}

static int parse_list(const char *flag, char *arg, ftc_scenario_t *s, bool crash)
{
    for (char *tok = strtok(arg, ","); tok != NULL; tok = strtok(NULL, ",")) {
        uint32_t rank;
        uint64_t k = 0;
        char *colon = strchr(tok, ':');
        if (crash) {
            if (colon == NULL)
                return bad(flag, "expected R:K");
            *colon = '\0';
            if (parse_u64(colon + 1, &k) != 0)
                return bad(flag, "K must be a non-negative integer");
        }
        if (parse_u32(tok, &rank) != 0)
            return bad(flag, "expected a rank number");
        if (crash) {
            if (s->ncrash == FTC_SCENARIO_MAX_FAULTS)
                return bad(flag, "too many entries");
            s->crash[s->ncrash].rank = rank;
            s->crash[s->ncrash++].after_sends = k;
        } else {
            if (s->nfail == FTC_SCENARIO_MAX_FAULTS)
                return bad(flag, "too many entries");
            s->fail[s->nfail++] = rank;
        }
    }
    return 0;
}

/* A value in time units (LogP) or ns (loopback) for a *-ns style flag. */
static int parse_time(const char *flag, const char *v, uint64_t *out,
                      bool allow_never, bool positive)
{
    if (allow_never && strcmp(v, "never") == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    if (parse_u64(v, out) != 0 || (positive && *out == 0)) {
        fprintf(stderr, "ftcoll-sim: %s: expected a %s integer (time units "
                        "under --model logp, ns otherwise)%s, got '%s'\n",
                flag, positive ? "positive" : "non-negative",
                allow_never ? " or never" : "", v);
        return 2;
    }
    return 0;
}

/* The flag f as a string that outlives the parse when it belongs to the
 * LogP model only, else NULL. */
static const char *logp_flag_name(const char *f)
{
    static const char *const names[] = {"-L", "-o", "-g", "--parallelism",
                                        "--queue", "--service", "--order"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(f, names[i]) == 0)
            return names[i];
    return NULL;
}

#define SIM_SHORT_OPTIONS ":hVn:f:d:k:L:o:g:"

/* Long-only options get distinct values from 256 up, so that getopt_long
 * refuses a prefix of several ("--co") instead of taking the first. */
static const struct option sim_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"json", no_argument, NULL, 256},
    {"csv", no_argument, NULL, 257},
    {"summary", no_argument, NULL, 258},
    {"ranks", no_argument, NULL, 259},
    {"no-check", no_argument, NULL, 260},
    {"trace", no_argument, NULL, 261},
    {"coll", required_argument, NULL, 262},
    {"algo", required_argument, NULL, 263},
    {"root", required_argument, NULL, 264},
    {"op", required_argument, NULL, 265},
    {"dtype", required_argument, NULL, 266},
    {"count", required_argument, NULL, 267},
    {"input", required_argument, NULL, 268},
    {"fail", required_argument, NULL, 269},
    {"crash", required_argument, NULL, 270},
    {"fault-info", required_argument, NULL, 271},
    {"correction", required_argument, NULL, 272},
    {"tree", required_argument, NULL, 273},
    {"seed", required_argument, NULL, 274},
    {"latency-ns", required_argument, NULL, 275},
    {"jitter-ns", required_argument, NULL, 276},
    {"send-cost-ns", required_argument, NULL, 277},
    {"detect-ns", required_argument, NULL, 278},
    {"detect", required_argument, NULL, 279},
    {"suspect-ns", required_argument, NULL, 280},
    {"suspect", required_argument, NULL, 281},
    {"probe-ns", required_argument, NULL, 282},
    {"probe", required_argument, NULL, 283},
    {"spread-ns", required_argument, NULL, 284},
    {"spread", required_argument, NULL, 285},
    {"model", required_argument, NULL, 286},
    {"parallelism", required_argument, NULL, 287},
    {"queue", required_argument, NULL, 288},
    {"runs", required_argument, NULL, 289},
    {"faults", required_argument, NULL, 290},
    {"crashes", required_argument, NULL, 291},
    {"crash-window", required_argument, NULL, 292},
    {"fault-root", required_argument, NULL, 293},
    {"fault-seed", required_argument, NULL, 294},
    {"service", required_argument, NULL, 295},
    {"ack-timeout", required_argument, NULL, 296},
    {"allreduce", required_argument, NULL, 297},
    {"schedule", no_argument, NULL, 298},
    {"order", required_argument, NULL, 299},
    {"agree-round", required_argument, NULL, 310},
    {NULL, 0, NULL, 0},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Depth of a failure-free binomial broadcast: the default crash window. */
static uint64_t default_crash_window(const ftc_scenario_t *s)
{
    uint64_t levels = 0;
    while (levels < 32 && (1ull << levels) < s->n)
        levels++;
    if (levels == 0)
        levels = 1;
    if (s->model == FTC_MODEL_LOGP) {
        uint64_t sc = s->logp_o > s->logp_g ? s->logp_o : s->logp_g;
        return 2 * levels * (sc + s->logp_L + s->logp_o);
    }
    return 2 * levels * (s->send_cost_ns + s->latency_ns);
}

#define SUMMARY_ABOVE 4096u

int main(int argc, char **argv)
{
    if (ftc_sim_gossip_wanted(argc, argv))
        return ftc_sim_gossip_main(argc, argv);
    ftc_scenario_t s;
    ftc_scenario_init(&s);
    bool json = false, csv = false, check = true, schedule = false;
    int per_rank = -1; /* -1: by size */
    uint32_t runs = 1;
    bool fault_seed_given = false, crash_window_given = false;
    bool order_given = false;
    bool tree_given = false, k_given = false, k_best = false;
    bool input_given = false, agree_round_given = false;
    const char *fail_flag = "--fail", *loopback_flag = NULL;
    const char *model_arg = NULL, *logp_flag = NULL;

    /* The model decides the defaults of the time flags: find it first
     * (mistakes are reported by the second pass). */
    int c, li = -1;
    char flag[32];
    opterr = 0;
    while ((c = getopt_long(argc, argv, SIM_SHORT_OPTIONS, sim_options,
                            &li)) != -1) {
        const char *f = cli_flag(c, li, sim_options, flag, sizeof(flag));
        li = -1;
        if (strcmp(f, "--model") == 0)
            model_arg = optarg;
        else if (logp_flag == NULL)
            logp_flag = logp_flag_name(f);
    }
    optind = 0; /* glibc: start the second pass afresh */
    if (model_arg != NULL && strcmp(model_arg, "logp") != 0
        && strcmp(model_arg, "loopback") != 0)
        return bad("--model", "expected loopback or logp");
    if (model_arg != NULL && strcmp(model_arg, "loopback") == 0
        && logp_flag != NULL)
        return bad(logp_flag, "belongs to the LogP model, not --model loopback");
    if ((model_arg != NULL && strcmp(model_arg, "logp") == 0) || logp_flag != NULL)
        ftc_scenario_use_logp(&s);

    while ((c = getopt_long(argc, argv, SIM_SHORT_OPTIONS, sim_options,
                            &li)) != -1) {
        const char *f = cli_flag(c, li, sim_options, flag, sizeof(flag));
        char *v = optarg;
        li = -1;
        if (c == '?' || c == ':')
            return cli_refuse("ftcoll-sim", c, argv, sim_options);
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 'V') {
            cli_print_version("ftcoll-sim");
            return 0;
        }
        if (strcmp(f, "--json") == 0) {
            json = true;
            continue;
        }
        if (strcmp(f, "--csv") == 0) {
            csv = true;
            continue;
        }
        if (strcmp(f, "--summary") == 0) {
            per_rank = 0;
            continue;
        }
        if (strcmp(f, "--ranks") == 0) {
            per_rank = 1;
            continue;
        }
        if (strcmp(f, "--no-check") == 0) {
            check = false;
            continue;
        }
        if (strcmp(f, "--trace") == 0) {
            s.trace = stderr;
            continue;
        }
        if (strcmp(f, "--schedule") == 0) {
            schedule = true;
            continue;
        }
        int rc = 0;
        if (strcmp(f, "--coll") == 0) {
            if (strcmp(v, "reduce") == 0) s.coll = FTC_COLL_REDUCE;
            else if (strcmp(v, "bcast") == 0) s.coll = FTC_COLL_BCAST;
            else if (strcmp(v, "allreduce") == 0) s.coll = FTC_COLL_ALLREDUCE;
            else if (!ftc_sim_ulfm_parse_coll(v, &s.coll))
                return bad(f, "expected reduce, bcast, allreduce, agree, "
                              "shrink or invalidate");
        } else if (strcmp(f, "--agree-round") == 0) {
            agree_round_given = true;
            if (ftc_agree_round_parse(v, &s.agree_round) != FTC_OK)
                return bad(f, "expected rd2, rd4 or tree");
        } else if (strcmp(f, "--algo") == 0) {
            if (ftc_algo_parse(v, &s.args.algo) != FTC_OK)
                return bad(f, "expected corrected, tree or ftco");
        } else if (strcmp(f, "-n") == 0) {
            if (parse_u32(v, &s.n) != 0 || s.n == 0)
                return bad(f, "N (the number of processes, P) must be a "
                              "positive integer");
            if (s.n > (1u << 24))
                return bad(f, "N must be at most 16777216");
        } else if (strcmp(f, "-f") == 0) {
            if (parse_u32(v, &s.args.f) != 0)
                return bad(f, "F must be a non-negative integer");
        } else if (strcmp(f, "--root") == 0) {
            if (parse_u32(v, &s.args.root) != 0)
                return bad(f, "R must be a non-negative integer");
        } else if (strcmp(f, "--op") == 0) {
            if (ftc_op_parse(v, &s.args.op) != FTC_OK || s.args.op == FTC_USER)
                return bad(f, "unknown operation");
        } else if (strcmp(f, "--dtype") == 0) {
            if (ftc_dtype_parse(v, &s.args.dtype) != FTC_OK)
                return bad(f, "unknown datatype");
        } else if (strcmp(f, "--count") == 0) {
            if (parse_u64(v, &s.args.count) != 0)
                return bad(f, "C must be a non-negative integer");
        } else if (strcmp(f, "--input") == 0) {
            input_given = true;
            if (strcmp(v, "rank") == 0) s.input = FTC_INPUT_RANK;
            else if (strcmp(v, "allbut") == 0) s.input = FTC_INPUT_ALLBUT;
            else if (strcmp(v, "pow2") == 0) s.input = FTC_INPUT_POW2;
            else if (strncmp(v, "const:", 6) == 0) {
                char *end;
                s.input = FTC_INPUT_CONST;
                s.input_value = strtod(v + 6, &end);
                if (*end != '\0' || end == v + 6)
                    return bad(f, "const:V needs a number");
            } else if (strncmp(v, "random:", 7) == 0) {
                s.input = FTC_INPUT_RANDOM;
                if (parse_u64(v + 7, &s.input_seed) != 0)
                    return bad(f, "random:SEED needs an integer seed");
            } else {
                return bad(f, "expected rank, pow2, const:V, random:SEED or "
                              "allbut");
            }
        } else if (strcmp(f, "--fail") == 0) {
            rc = parse_list(f, v, &s, false);
        } else if (strcmp(f, "--crash") == 0) {
            rc = parse_list(f, v, &s, true);
        } else if (strcmp(f, "--fault-info") == 0) {
            if (ftc_fault_info_parse(v, &s.corrected.fault_info) != FTC_OK)
                return bad(f, "expected list, count or bit");
        } else if (strcmp(f, "--correction") == 0) {
            if (ftc_correction_parse(v, &s.corrected.correction) != FTC_OK)
                return bad(f, "expected opportunistic or checked");
        } else if (strcmp(f, "--allreduce") == 0) {
            if (ftc_allreduce_algo_parse(v, &s.corrected.allreduce) != FTC_OK)
                return bad(f, "expected auto, reduce_bcast, exchange or butterfly");
        } else if (strcmp(f, "-d") == 0) {
            if (parse_u32(v, &s.corrected.distance) != 0 || s.corrected.distance == 0)
                return bad(f, "D must be a positive integer");
        } else if (strcmp(f, "--tree") == 0) {
            tree_given = true;
            if (ftc_tree_kind_parse(v, &s.corrected.bcast_tree.kind) != FTC_OK
                || s.corrected.bcast_tree.kind == FTC_TREE_IF)
                return bad(f, "expected binomial, kary, lame, optimal, "
                              "binomial-inorder, knomial, kary-multiroot or "
                              "knomial-multiroot");
        } else if (strcmp(f, "-k") == 0) {
            k_given = true;
            k_best = strcmp(v, "best") == 0; /* sim_ftco.c picks it */
            if (!k_best && (parse_u32(v, &s.corrected.bcast_tree.k) != 0
                            || s.corrected.bcast_tree.k == 0))
                return bad(f, "K must be a positive integer or best");
        } else if (strcmp(f, "--seed") == 0) {
            if (parse_u64(v, &s.seed) != 0)
                return bad(f, "S must be a non-negative integer");
        } else if (strcmp(f, "--latency-ns") == 0) {
            loopback_flag = f;
            rc = parse_time(f, v, &s.latency_ns, false, false);
        } else if (strcmp(f, "--jitter-ns") == 0) {
            loopback_flag = f;
            rc = parse_time(f, v, &s.jitter_ns, false, false);
        } else if (strcmp(f, "--send-cost-ns") == 0) {
            loopback_flag = f;
            rc = parse_time(f, v, &s.send_cost_ns, false, false);
        } else if (strcmp(f, "--detect-ns") == 0 || strcmp(f, "--detect") == 0) {
            rc = parse_time(f, v, &s.detect_delay_ns, true, false);
        } else if (strcmp(f, "--suspect-ns") == 0 || strcmp(f, "--suspect") == 0) {
            rc = parse_time(f, v, &s.suspect_timeout_ns, false, true);
        } else if (strcmp(f, "--probe-ns") == 0 || strcmp(f, "--probe") == 0) {
            rc = parse_time(f, v, &s.probe_timeout_ns, false, true);
        } else if (strcmp(f, "--spread-ns") == 0) {
            s.spread_kind = FTC_SPREAD_UNIFORM;
            rc = parse_time(f, v, &s.start_spread_ns, false, false);
        } else if (strcmp(f, "--spread") == 0) {
            if (strncmp(v, "uniform:", 8) == 0)
                s.spread_kind = FTC_SPREAD_UNIFORM;
            else if (strncmp(v, "normal:", 7) == 0)
                s.spread_kind = FTC_SPREAD_NORMAL;
            else
                return bad(f, "expected uniform:W or normal:S");
            rc = parse_time(f, strchr(v, ':') + 1, &s.start_spread_ns, false,
                            false);
        } else if (strcmp(f, "--model") == 0) {
            /* handled before the loop */
        } else if (strcmp(f, "-L") == 0 || strcmp(f, "-o") == 0
                   || strcmp(f, "-g") == 0) {
            uint64_t *dst = f[1] == 'L' ? &s.logp_L
                            : f[1] == 'o' ? &s.logp_o : &s.logp_g;
            if (parse_u64(v, dst) != 0 || *dst > (1ull << 40)) {
                fprintf(stderr, "ftcoll-sim: %s: the LogP %s must be a "
                                "non-negative integer number of time units "
                                "(at most 2^40), got '%s'\n",
                        f, f[1] == 'L' ? "latency L"
                           : f[1] == 'o' ? "overhead o" : "gap g", v);
                return 2;
            }
        } else if (strcmp(f, "--parallelism") == 0) {
            if (parse_u32(v, &s.parallelism) != 0
                || (s.parallelism != 1 && s.parallelism != 2))
                return bad(f, "must be 1 (send or receive at a time) or 2 "
                              "(a send and a receive may overlap)");
        } else if (strcmp(f, "--queue") == 0) {
            if (strcmp(v, "fifo") == 0)
                s.queue = FTC_QUEUE_FIFO;
            else if (strcmp(v, "kind") == 0)
                s.queue = FTC_QUEUE_KIND;
            else
                return bad(f, "expected fifo or kind");
        } else if (strcmp(f, "--runs") == 0) {
            if (parse_u32(v, &runs) != 0 || runs == 0)
                return bad(f, "N must be a positive integer");
        } else if (strcmp(f, "--faults") == 0) {
            const char *list = strncmp(v, "list:", 5) == 0 ? v + 5
                               : strchr(v, ',') != NULL ? v
                                                         : NULL;
            if (list != NULL) {
                fail_flag = "--faults";
                rc = parse_list(f, (char *)list, &s, false);
            } else if (parse_u32(v, &s.random_fail) != 0) {
                return bad(f, "expected a count K, a list R1,R2,... or "
                              "list:R");
            }
        } else if (strcmp(f, "--crashes") == 0) {
            if (parse_u32(v, &s.random_crash) != 0)
                return bad(f, "K must be a non-negative integer");
        } else if (strcmp(f, "--crash-window") == 0) {
            rc = parse_time(f, v, &s.crash_window, false, false);
            crash_window_given = true;
        } else if (strcmp(f, "--fault-root") == 0) {
            if (strcmp(v, "protect") == 0)
                s.protect_root = true;
            else if (strcmp(v, "any") == 0)
                s.protect_root = false;
            else
                return bad(f, "expected protect or any");
        } else if (strcmp(f, "--service") == 0) {
            if (ftc_sim_service_parse(v, &s.service) != FTC_OK)
                return bad(f, "expected none, rsd or disd");
        } else if (strcmp(f, "--order") == 0) {
            if (strcmp(v, "data-first") == 0)
                s.receives_first = false;
            else if (strcmp(v, "receives-first") == 0)
                s.receives_first = true;
            else
                return bad(f, "expected data-first or receives-first");
            order_given = true;
        } else if (strcmp(f, "--ack-timeout") == 0) {
            rc = parse_time(f, v, &s.ftco.ack_timeout_ns, false, false);
        } else if (strcmp(f, "--fault-seed") == 0) {
            if (parse_u64(v, &s.fault_seed) != 0)
                return bad(f, "S must be a non-negative integer");
            fault_seed_given = true;
        } else {
            fprintf(stderr, "ftcoll-sim: unknown option %s\n", f);
            usage(stderr);
            return 2;
        }
        if (rc != 0)
            return rc;
    }
    if (optind < argc)
        return bad(argv[optind], "unexpected argument: ftcoll-sim takes "
                                 "options only (see --help)");
    if (loopback_flag != NULL && s.model == FTC_MODEL_LOGP)
        return bad(loopback_flag, "belongs to --model loopback; the LogP "
                                  "model takes -L, -o and -g");
    if (s.args.f >= s.n
        && (s.coll != FTC_COLL_AGREE && s.coll != FTC_COLL_SHRINK))
        return bad("-f", "must be smaller than -n");
    const char *ftco_flag = NULL, *ftco_why = NULL;
    if (ftc_sim_ftco_settle(&s, tree_given, k_given, k_best, &ftco_flag,
                            &ftco_why))
        return bad(ftco_flag, ftco_why);
    if (order_given && s.args.algo != FTC_ALGO_FTCO)
        return bad("--order", "the DATA-first order belongs to --algo ftco");
    if (s.args.root >= s.n)
        return bad("--root", "must be a rank below -n");
    for (uint32_t i = 0; i < s.nfail; i++)
        if (s.fail[i] >= s.n)
            return bad(fail_flag, "names a rank outside 0..n-1");
    for (uint32_t i = 0; i < s.ncrash; i++)
        if (s.crash[i].rank >= s.n)
            return bad("--crash", "names a rank outside 0..n-1");
    if (s.random_fail >= s.n)
        return bad("--faults", "more failures than ranks: K must be below -n");
    if (s.random_crash >= s.n)
        return bad("--crashes", "more failures than ranks: K must be below -n");
    if ((uint64_t)s.nfail + s.random_fail + s.random_crash
        >= (uint64_t)s.n + (s.random_fail + s.random_crash == 0))
        return bad(s.random_crash ? "--crashes" : "--faults",
                   "more failures than ranks (together with the explicit "
                   "ones, at least one rank must stay alive)");
    if (ftc_op_check(s.args.op, s.args.dtype, NULL) != FTC_OK
        && s.coll != FTC_COLL_BCAST)
        return bad("--op", "not defined for this --dtype (e.g. band on float)");
    if (s.corrected.bcast_tree.kind == FTC_TREE_OPTIMAL) {
        /* The LogP-optimal tree needs the model's parameters. */
        s.corrected.bcast_tree.L = (uint32_t)(s.model == FTC_MODEL_LOGP ? s.logp_L : 2);
        s.corrected.bcast_tree.o = (uint32_t)(s.model == FTC_MODEL_LOGP ? s.logp_o : 1);
        s.corrected.bcast_tree.g = (uint32_t)(s.model == FTC_MODEL_LOGP ? s.logp_g : 1);
        if (s.corrected.bcast_tree.o == 0 && s.corrected.bcast_tree.g == 0)
            return bad("--tree", "optimal needs o > 0 or g > 0");
    }
    if (s.random_crash > 0 && !crash_window_given)
        s.crash_window = default_crash_window(&s);
    const char *ulfm_flag = NULL, *ulfm_why =
        ftc_sim_ulfm_prepare(&s, input_given, crash_window_given,
                             agree_round_given, &ulfm_flag);
    if (ulfm_why != NULL)
        return bad(ulfm_flag, ulfm_why);
    if (per_rank < 0)
        per_rank = s.n <= SUMMARY_ABOVE;

    uint64_t seed0 = s.seed, fseed0 = fault_seed_given ? s.fault_seed : s.seed;
    run_summary_t *sums = calloc(runs, sizeof(*sums));
    if (sums == NULL)
        return bad("--runs", "out of memory");
    int worst = 0;
    if (csv) {
        printf("run,coll,algo,model,n,f,L,o,g,parallelism,seed");
        for (int k = 0; k < M_COUNT; k++)
            printf(",%s", metric_names[k]);
        printf("\n");
    }
    json_t jruns; /* --json with --runs: one object around every run */
    json_to_file(&jruns, stdout);
    if (json && runs > 1) {
        json_object_begin(&jruns);
        json_operation(&jruns, &s);
        json_model(&jruns, &s);
        json_key(&jruns, "runs");
        json_array_begin(&jruns);
    }
    for (uint32_t run = 0; run < runs; run++) {
        s.seed = seed0 + run;
        s.fault_seed = fseed0 + run;
        ftc_scenario_result_t res;
        char err[256];
        double t0 = now_s();
        int rc = ftc_scenario_run(&s, &res, err, sizeof(err));
        double wall = now_s() - t0;
        if (rc != FTC_OK) {
            fprintf(stderr, "ftcoll-sim: %s\n", err);
            free(sums);
            return 2;
        }
        char msg[512] = "";
        double t1 = now_s();
        int violations = check ? ftc_check(&s, &res, msg, sizeof(msg)) : 0;
        /* --schedule: the faults drawn, and whether each took place; one
         * that did not counts as a violation (sim_schedule.h). */
        if (schedule && ftc_sim_schedule_report(stderr, &s, &res) != 0) {
            violations++;
            snprintf(msg, sizeof(msg), "%s", "the schedule above did not "
                                             "take place as drawn");
        }
        double check_s = now_s() - t1;
        if (violations > worst)
            worst = violations;
        summary_of(&res, violations, wall + check_s, s.seed, &sums[run]);
        sums[run].check_s = check_s;
        if (csv) {
            double v[M_COUNT];
            metric_values(&sums[run], v);
            printf("%u,%s,%s,%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%u,%" PRIu64,
                   run, ftc_sim_coll_name(s.coll), ftc_algo_name(s.args.algo),
                   s.model == FTC_MODEL_LOGP ? "logp" : "loopback", s.n,
                   s.args.f, s.logp_L, s.logp_o, s.logp_g,
                   s.parallelism ? s.parallelism : 1, s.seed);
            for (int k = 0; k < M_COUNT; k++)
                printf(",%.10g", v[k]);
            printf("\n");
        } else if (json && runs == 1) {
            print_json(&s, &res, violations, msg, &sums[run], per_rank);
        } else if (json) {
            json_object_begin(&jruns);
            json_summary(&jruns, &sums[run]);
            json_outcome(&jruns, &res, violations, msg);
            json_object_end(&jruns);
        } else if (runs == 1) {
            print_table(&s, &res, violations, msg, per_rank);
            printf("reach=%" PRIu64 " finish=%" PRIu64 " first_finish=%" PRIu64
                   " spread=%" PRIu64 " msgs/proc=%.3f max_rank_msgs=%" PRIu64
                   " max_inbound=%u live=%u undelivered=%u bad_status=%u\n"
                   " work_at_reach=%.3f\n"
                   "paper: latency=%" PRIu64 " work=%.3f output_spread=%" PRIu64
                   " max_queue=%u (finish_time_first=%" PRIu64
                   " finish_time_last=%" PRIu64 ")\n"
                   "wall=%.3fs (setup %.3f, run %.3f, teardown %.3f, check"
                   " %.3f) peak_rss=%ldKB\n",
                   sums[run].reach, sums[run].finish, sums[run].first_finish,
                   sums[run].spread, sums[run].msgs_per_proc,
                   sums[run].max_rank_msgs, sums[run].max_inbound,
                   sums[run].live, sums[run].undelivered, sums[run].bad_status,
                   sums[run].work_at_reach, sums[run].paper_latency,
                   sums[run].paper_work, sums[run].paper_output_spread,
                   sums[run].paper_max_queue, sums[run].finish_time_first,
                   sums[run].finish_time_last, wall, res.wall_setup_s, res.wall_run_s, res.wall_teardown_s,
                   sums[run].check_s, peak_rss_kb());
        } else {
            if (run == 0)
                printf("%4s %6s %8s %8s %8s %6s %10s %8s %7s %6s %5s %5s %7s\n",
                       "run", "seed", "reach", "finish", "first", "spread",
                       "messages", "msg/proc", "max_inq", "failed", "undel",
                       "viol", "wall_s");
            printf("%4u %6" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
                   " %6" PRIu64 " %10" PRIu64 " %8.3f %7u %6u %5u %5d %7.3f\n",
                   run, s.seed, sums[run].reach, sums[run].finish,
                   sums[run].first_finish, sums[run].spread, sums[run].messages,
                   sums[run].msgs_per_proc, sums[run].max_inbound,
                   sums[run].failed, sums[run].undelivered, violations, wall);
            if (violations)
                printf("     violation: %s\n", msg);
        }
        ftc_scenario_result_free(&res);
    }
    if (runs > 1) {
        double mean[M_COUNT] = {0}, mn[M_COUNT], mx[M_COUNT];
        for (uint32_t run = 0; run < runs; run++) {
            double v[M_COUNT];
            metric_values(&sums[run], v);
            for (int k = 0; k < M_COUNT; k++) {
                mean[k] += v[k] / runs;
                if (run == 0 || v[k] < mn[k])
                    mn[k] = v[k];
                if (run == 0 || v[k] > mx[k])
                    mx[k] = v[k];
            }
        }
        if (csv) {
            const char *lab[3] = {"mean", "min", "max"};
            const double *val[3] = {mean, mn, mx};
            for (int a = 0; a < 3; a++) {
                printf("%s,%s,%s,%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                       ",%u,",
                       lab[a], ftc_sim_coll_name(s.coll), ftc_algo_name(s.args.algo),
                       s.model == FTC_MODEL_LOGP ? "logp" : "loopback", s.n,
                       s.args.f, s.logp_L, s.logp_o, s.logp_g,
                       s.parallelism ? s.parallelism : 1);
                for (int k = 0; k < M_COUNT; k++)
                    printf(",%.10g", val[a][k]);
                printf("\n");
            }
        } else if (json) {
            json_array_end(&jruns);
            json_key(&jruns, "aggregate");
            json_object_begin(&jruns);
            for (int k = 0; k < M_COUNT; k++) {
                json_key(&jruns, metric_names[k]);
                json_object_begin(&jruns);
                json_key(&jruns, "mean");
                json_general(&jruns, mean[k], 10);
                json_key(&jruns, "min");
                json_general(&jruns, mn[k], 10);
                json_key(&jruns, "max");
                json_general(&jruns, mx[k], 10);
                json_object_end(&jruns);
            }
            json_object_end(&jruns);
            json_key(&jruns, "peak_rss_kb");
            json_int(&jruns, peak_rss_kb());
            json_object_end(&jruns);
            putchar('\n');
        } else {
            printf("%11s %8.1f %8.1f %8.1f %6.1f %10.1f %8.3f %7.1f %6.1f "
                   "%5.1f %5.1f %7.3f\n",
                   "mean", mean[M_reach], mean[M_finish], mean[M_first_finish],
                   mean[M_spread], mean[M_messages], mean[M_msgs_per_proc],
                   mean[M_max_inbound], mean[M_failed], mean[M_undelivered],
                   mean[M_violations], mean[M_wall_s]);
            printf("%11s %8.0f %8.0f %8.0f %6.0f %10.0f %8.3f %7.0f %6.0f "
                   "%5.0f %5.0f %7.3f\n",
                   "min", mn[M_reach], mn[M_finish], mn[M_first_finish],
                   mn[M_spread], mn[M_messages], mn[M_msgs_per_proc],
                   mn[M_max_inbound], mn[M_failed], mn[M_undelivered],
                   mn[M_violations], mn[M_wall_s]);
            printf("%11s %8.0f %8.0f %8.0f %6.0f %10.0f %8.3f %7.0f %6.0f "
                   "%5.0f %5.0f %7.3f\n",
                   "max", mx[M_reach], mx[M_finish], mx[M_first_finish],
                   mx[M_spread], mx[M_messages], mx[M_msgs_per_proc],
                   mx[M_max_inbound], mx[M_failed], mx[M_undelivered],
                   mx[M_violations], mx[M_wall_s]);
            printf("peak_rss=%ldKB\n", peak_rss_kb());
        }
    }
    free(sums);
    return worst == 0 ? 0 : 1;
}
