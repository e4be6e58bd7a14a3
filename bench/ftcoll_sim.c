/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-sim: run one collective on the loopback backend with a fault
 * schedule, print what every rank delivered, and check the semantics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "scenario.h"

static void usage(FILE *out)
{
    fputs(
        "usage: ftcoll-sim [options]\n"
        "  --coll reduce|bcast|allreduce   collective (allreduce)\n"
        "  --algo corrected|tree           algorithm (corrected)\n"
        "  -n N                            processes (8)\n"
        "  -f F                            failures tolerated, F < N (1)\n"
        "  --root R                        root; allreduce: first root (0)\n"
        "  --op sum|prod|min|max|band|bor|bxor|land|lor   (sum)\n"
        "  --dtype int8..int64|uint8..uint64|float|double (int64)\n"
        "  --count C                       elements (1)\n"
        "  --input rank|pow2|const:V|random:SEED          (rank)\n"
        "  --fail R1,R2,...                ranks failed before the operation\n"
        "  --crash R:K,...                 rank R fails right after its K-th\n"
        "                                  send (K=0: after init, before any)\n"
        "  --fault-info list|count|bit     reduce failure information (list)\n"
        "  --correction opportunistic|checked              (checked)\n"
        "  -d D                            opportunistic distance (2)\n"
        "  --tree binomial|kary|lame|optimal|binomial-inorder  bcast tree\n"
        "  -k K                            arity (kary) or order (lame) (2)\n"
        "  --seed S                        loopback seed (1)\n"
        "  --latency-ns, --jitter-ns, --send-cost-ns   network model\n"
        "  --detect-ns NS|never            transport failure reports (50000)\n"
        "  --suspect-ns, --probe-ns        keepalive timeouts (1e6, 2e6)\n"
        "  --spread-ns NS                  ranks start uniformly in [0, NS]\n"
        "  --json                          one JSON object on stdout\n"
        "  --no-check                      do not check the semantics\n"
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

static void print_json(const ftc_scenario_t *s, const ftc_scenario_result_t *r,
                       int violations, const char *msg)
{
    printf("{\"coll\":\"%s\",\"algo\":\"%s\",\"n\":%u,\"f\":%u,\"root\":%u,"
           "\"messages\":%" PRIu64 ",\"time\":%" PRIu64
           ",\"events\":%" PRIu64 ",\"violations\":%d,\"violation\":\"%s\","
           "\"ranks\":[",
           ftc_coll_name(s->coll), ftc_algo_name(s->args.algo), s->n, s->args.f,
           s->args.root, r->messages, r->time_ns, r->events, violations, msg);
    for (uint32_t i = 0; i < r->n; i++) {
        const ftc_rank_result_t *rr = &r->ranks[i];
        printf("%s{\"rank\":%u,\"failed\":%s,\"delivered\":%s,\"status\":\"%s\","
               "\"sent\":%" PRIu64 ",\"retries\":%u,\"root_used\":%u,"
               "\"failed_seen\":[",
               i ? "," : "", i, rr->failed ? "true" : "false",
               rr->delivered ? "true" : "false",
               rr->delivered ? ftc_err_name(rr->status) : "none",
               rr->stats.msgs_sent, rr->stats.retries, rr->stats.root);
        for (uint32_t j = 0; j < rr->nfailed_list; j++)
            printf("%s%u", j ? "," : "", rr->failed_list[j]);
        printf("],\"value\":");
        if (rr->has_value)
            print_value(stdout, s->args.dtype, rr->value, s->args.count);
        else
            printf("null");
        printf("}");
    }
    printf("]}\n");
}

static void print_table(const ftc_scenario_t *s, const ftc_scenario_result_t *r,
                        int violations, const char *msg)
{
    printf("%s %s  n=%u f=%u root=%u  messages=%" PRIu64 "  time=%.3f us\n",
           ftc_algo_name(s->args.algo), ftc_coll_name(s->coll), s->n, s->args.f,
           s->args.root, r->messages, (double)r->time_ns / 1000.0);
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

int main(int argc, char **argv)
{
    ftc_scenario_t s;
    ftc_scenario_init(&s);
    bool json = false, check = true;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "-h") == 0 || strcmp(f, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(f, "--json") == 0) {
            json = true;
            continue;
        }
        if (strcmp(f, "--no-check") == 0) {
            check = false;
            continue;
        }
        if (i + 1 >= argc)
            return bad(f, "needs a value (see --help)");
        char *v = argv[++i];
        int rc = 0;
        if (strcmp(f, "--coll") == 0) {
            if (strcmp(v, "reduce") == 0) s.coll = FTC_COLL_REDUCE;
            else if (strcmp(v, "bcast") == 0) s.coll = FTC_COLL_BCAST;
            else if (strcmp(v, "allreduce") == 0) s.coll = FTC_COLL_ALLREDUCE;
            else return bad(f, "expected reduce, bcast or allreduce");
        } else if (strcmp(f, "--algo") == 0) {
            if (ftc_algo_parse(v, &s.args.algo) != FTC_OK)
                return bad(f, "expected corrected or tree");
        } else if (strcmp(f, "-n") == 0) {
            if (parse_u32(v, &s.n) != 0 || s.n == 0)
                return bad(f, "N must be a positive integer");
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
            if (strcmp(v, "rank") == 0) s.input = FTC_INPUT_RANK;
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
                return bad(f, "expected rank, pow2, const:V or random:SEED");
            }
        } else if (strcmp(f, "--fail") == 0) {
            rc = parse_list(f, v, &s, false);
        } else if (strcmp(f, "--crash") == 0) {
            rc = parse_list(f, v, &s, true);
        } else if (strcmp(f, "--fault-info") == 0) {
            if (ftc_fault_info_parse(v, &s.args.fault_info) != FTC_OK)
                return bad(f, "expected list, count or bit");
        } else if (strcmp(f, "--correction") == 0) {
            if (ftc_correction_parse(v, &s.args.correction) != FTC_OK)
                return bad(f, "expected opportunistic or checked");
        } else if (strcmp(f, "-d") == 0) {
            if (parse_u32(v, &s.args.distance) != 0 || s.args.distance == 0)
                return bad(f, "D must be a positive integer");
        } else if (strcmp(f, "--tree") == 0) {
            if (ftc_tree_kind_parse(v, &s.args.bcast_tree.kind) != FTC_OK
                || s.args.bcast_tree.kind == FTC_TREE_IF)
                return bad(f, "expected binomial, kary, lame, optimal or "
                              "binomial-inorder");
            if (s.args.bcast_tree.kind == FTC_TREE_OPTIMAL) {
                s.args.bcast_tree.L = 2;
                s.args.bcast_tree.o = 1;
                s.args.bcast_tree.g = 1;
            }
        } else if (strcmp(f, "-k") == 0) {
            if (parse_u32(v, &s.args.bcast_tree.k) != 0 || s.args.bcast_tree.k == 0)
                return bad(f, "K must be a positive integer");
        } else if (strcmp(f, "--seed") == 0) {
            if (parse_u64(v, &s.seed) != 0)
                return bad(f, "S must be a non-negative integer");
        } else if (strcmp(f, "--latency-ns") == 0) {
            if (parse_u64(v, &s.latency_ns) != 0)
                return bad(f, "expected nanoseconds");
        } else if (strcmp(f, "--jitter-ns") == 0) {
            if (parse_u64(v, &s.jitter_ns) != 0)
                return bad(f, "expected nanoseconds");
        } else if (strcmp(f, "--send-cost-ns") == 0) {
            if (parse_u64(v, &s.send_cost_ns) != 0)
                return bad(f, "expected nanoseconds");
        } else if (strcmp(f, "--detect-ns") == 0) {
            if (strcmp(v, "never") == 0)
                s.detect_delay_ns = UINT64_MAX;
            else if (parse_u64(v, &s.detect_delay_ns) != 0)
                return bad(f, "expected nanoseconds or never");
        } else if (strcmp(f, "--suspect-ns") == 0) {
            if (parse_u64(v, &s.suspect_timeout_ns) != 0 || s.suspect_timeout_ns == 0)
                return bad(f, "expected positive nanoseconds");
        } else if (strcmp(f, "--probe-ns") == 0) {
            if (parse_u64(v, &s.probe_timeout_ns) != 0 || s.probe_timeout_ns == 0)
                return bad(f, "expected positive nanoseconds");
        } else if (strcmp(f, "--spread-ns") == 0) {
            if (parse_u64(v, &s.start_spread_ns) != 0)
                return bad(f, "expected nanoseconds");
        } else {
            fprintf(stderr, "ftcoll-sim: unknown option %s\n", f);
            usage(stderr);
            return 2;
        }
        if (rc != 0)
            return rc;
    }
    if (s.args.f >= s.n)
        return bad("-f", "must be smaller than -n");
    if (s.args.root >= s.n)
        return bad("--root", "must be a rank below -n");
    if (ftc_op_check(s.args.op, s.args.dtype, NULL) != FTC_OK
        && s.coll != FTC_COLL_BCAST)
        return bad("--op", "not defined for this --dtype (e.g. band on float)");

    ftc_scenario_result_t res;
    char err[256];
    int rc = ftc_scenario_run(&s, &res, err, sizeof(err));
    if (rc != FTC_OK) {
        fprintf(stderr, "ftcoll-sim: %s\n", err);
        return 2;
    }
    char msg[512] = "";
    int violations = check ? ftc_check(&s, &res, msg, sizeof(msg)) : 0;
    if (json)
        print_json(&s, &res, violations, msg);
    else
        print_table(&s, &res, violations, msg);
    ftc_scenario_result_free(&res);
    return violations == 0 ? 0 : 1;
}
