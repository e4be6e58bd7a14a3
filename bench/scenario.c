/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "scenario.h"

typedef struct sim_rank {
    struct sim_run *run;
    uint32_t rank;
    ftc_context_t *ctx;
    ftc_group_t *group;
    void *in, *out;
} sim_rank_t;

typedef struct sim_run {
    const ftc_scenario_t *s;
    ftc_scenario_result_t *res;
    ftc_lb_world_t *w;
    sim_rank_t *ranks;
    bool closing;           /* destroy-time cancellations are not results */
    int init_error;
} sim_run_t;

void ftc_scenario_init(ftc_scenario_t *s)
{
    memset(s, 0, sizeof(*s));
    s->coll = FTC_COLL_ALLREDUCE;
    ftc_coll_args_init(&s->args);
    s->args.dtype = FTC_INT64;
    s->args.count = 1;
    s->n = 8;
    s->input = FTC_INPUT_RANK;
    s->seed = 1;
    s->latency_ns = 1000;
    s->jitter_ns = 0;
    s->send_cost_ns = 100;
    s->detect_delay_ns = 50000;
    s->suspect_timeout_ns = 1000000;
    s->probe_timeout_ns = 2000000;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Store v as element i of a dtype buffer (integers truncate). */
static void put(void *buf, ftc_dtype_t t, uint64_t i, double v, uint64_t iv,
                bool use_int)
{
    uint8_t *p = (uint8_t *)buf + i * ftc_dtype_size(t);
    int64_t s = use_int ? (int64_t)iv : (int64_t)v;
    uint64_t u = use_int ? iv : (uint64_t)(v < 0 ? 0 : v);
    switch (t) {
    case FTC_INT8: { int8_t x = (int8_t)s; memcpy(p, &x, 1); break; }
    case FTC_INT16: { int16_t x = (int16_t)s; memcpy(p, &x, 2); break; }
    case FTC_INT32: { int32_t x = (int32_t)s; memcpy(p, &x, 4); break; }
    case FTC_INT64: memcpy(p, &s, 8); break;
    case FTC_UINT8: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); break; }
    case FTC_UINT16: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
    case FTC_UINT32: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
    case FTC_UINT64: memcpy(p, &u, 8); break;
    case FTC_FLOAT: { float x = use_int ? (float)iv : (float)v; memcpy(p, &x, 4); break; }
    case FTC_DOUBLE: { double x = use_int ? (double)iv : v; memcpy(p, &x, 8); break; }
    default: break;
    }
}

int ftc_scenario_input(const ftc_scenario_t *s, uint32_t rank, void *buf)
{
    const ftc_dtype_t t = s->args.dtype;
    for (uint64_t i = 0; i < s->args.count; i++) {
        switch (s->input) {
        case FTC_INPUT_RANK:
            put(buf, t, i, rank, rank, true);
            break;
        case FTC_INPUT_POW2:
            put(buf, t, i, 0, 1ull << rank, true);
            break;
        case FTC_INPUT_CONST:
            put(buf, t, i, s->input_value, 0, false);
            break;
        case FTC_INPUT_RANDOM: {
            uint64_t r = mix64(s->input_seed ^ mix64(rank * 0x10001ull + i));
            if (t == FTC_FLOAT || t == FTC_DOUBLE)
                put(buf, t, i, (double)(r >> 11) / 9007199254740992.0, 0, false);
            else
                put(buf, t, i, 0, r % 100, true);
            break;
        }
        case FTC_INPUT_UNIT: {
            uint64_t v = 0;
            if (i == rank || i == s->n)
                v = 1;
            else if (i == (uint64_t)s->n + 1)
                v = rank + 1;
            put(buf, t, i, 0, v, true);
            break;
        }
        }
    }
    return FTC_OK;
}

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    sim_rank_t *r = arg;
    sim_run_t *run = r->run;
    if (run->closing)
        return;
    ftc_rank_result_t *rr = &run->res->ranks[r->rank];
    rr->delivered++;
    if (rr->delivered > 1)
        return; /* the checker flags it; keep the first result */
    rr->status = c->status;
    rr->deliver_ns = ftc_lb_now(run->w);
    rr->stats = c->stats;
    if (c->nfailed > 0) {
        rr->failed_list = malloc(sizeof(uint32_t) * c->nfailed);
        if (rr->failed_list != NULL) {
            memcpy(rr->failed_list, c->failed, sizeof(uint32_t) * c->nfailed);
            rr->nfailed_list = c->nfailed;
        }
    }
    bool gets_value = c->status == FTC_OK
                      && (run->s->coll != FTC_COLL_REDUCE
                          || r->rank == run->s->args.root);
    if (gets_value) {
        rr->has_value = true;
        if (run->res->nbytes > 0)
            memcpy(rr->value, r->out, run->res->nbytes);
    }
    if (rr->deliver_ns > run->res->time_ns)
        run->res->time_ns = rr->deliver_ns;
}

static void start_rank(sim_rank_t *r)
{
    sim_run_t *run = r->run;
    const ftc_scenario_t *s = run->s;
    ftc_rank_result_t *rr = &run->res->ranks[r->rank];
    rr->start_ns = ftc_lb_now(run->w);
    for (uint32_t i = 0; i < s->ncrash; i++) {
        if (s->crash[i].rank != r->rank)
            continue;
        if (s->crash[i].after_sends == 0)
            ftc_lb_crash(run->w, r->rank);
        else
            ftc_lb_crash_after_sends(run->w, r->rank, s->crash[i].after_sends);
    }
    ftc_coll_args_t a = s->args;
    a.sendbuf = r->in;
    a.recvbuf = r->out;
    a.deliver = on_deliver;
    a.deliver_arg = r;
    int rc;
    if (s->coll == FTC_COLL_REDUCE)
        rc = ftc_init_reduce(r->group, &a, NULL);
    else if (s->coll == FTC_COLL_BCAST)
        rc = ftc_init_bcast(r->group, &a, NULL);
    else
        rc = ftc_init_allreduce(r->group, &a, NULL);
    if (rc != FTC_OK && run->init_error == FTC_OK)
        run->init_error = rc;
}

typedef struct start_entry {
    uint64_t at;
    uint32_t rank;
} start_entry_t;

static int cmp_start(const void *a, const void *b)
{
    const start_entry_t *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int fail(char *err, size_t errlen, const char *msg)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", msg);
    return FTC_EINVAL;
}

int ftc_scenario_run(const ftc_scenario_t *s, ftc_scenario_result_t *res,
                     char *err, size_t errlen)
{
    memset(res, 0, sizeof(*res));
    if (s->n == 0 || s->n > (1u << 24))
        return fail(err, errlen, "-n must be between 1 and 16777216");
    if (s->args.f >= s->n)
        return fail(err, errlen, "-f must be smaller than -n");
    if (s->args.root >= s->n)
        return fail(err, errlen, "--root must be a rank below -n");
    if (s->nfail > FTC_SCENARIO_MAX_FAULTS || s->ncrash > FTC_SCENARIO_MAX_FAULTS)
        return fail(err, errlen, "too many faults");
    for (uint32_t i = 0; i < s->nfail; i++)
        if (s->fail[i] >= s->n)
            return fail(err, errlen, "--fail names a rank outside 0..n-1");
    for (uint32_t i = 0; i < s->ncrash; i++)
        if (s->crash[i].rank >= s->n)
            return fail(err, errlen, "--crash names a rank outside 0..n-1");
    if (s->input == FTC_INPUT_POW2 && s->n > 63)
        return fail(err, errlen, "--input pow2 needs n <= 63 (2^r must fit)");
    if (s->input == FTC_INPUT_UNIT && s->args.count != (uint64_t)s->n + 2)
        return fail(err, errlen, "unit input needs count = n + 2");
    size_t esize = ftc_dtype_size(s->args.dtype);
    if (esize == 0)
        return fail(err, errlen, "invalid --dtype");

    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = s->n;
    lc.seed = s->seed;
    lc.latency_ns = s->latency_ns;
    lc.jitter_ns = s->jitter_ns;
    lc.send_cost_ns = s->send_cost_ns;
    lc.detect_delay_ns = s->detect_delay_ns;
    sim_run_t run = {.s = s, .res = res};
    int rc = ftc_lb_world_create(&lc, &run.w);
    if (rc != FTC_OK)
        return fail(err, errlen, "cannot create the loopback world");

    res->n = s->n;
    res->nbytes = (size_t)s->args.count * esize;
    res->ranks = calloc(s->n, sizeof(*res->ranks));
    res->inputs = calloc(s->n, sizeof(void *));
    run.ranks = calloc(s->n, sizeof(*run.ranks));
    if (res->ranks == NULL || res->inputs == NULL || run.ranks == NULL) {
        free(run.ranks);
        ftc_lb_world_destroy(run.w);
        ftc_scenario_result_free(res);
        return FTC_ENOMEM;
    }
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 0x5EED0000ull ^ s->seed;
    cfg.suspect_timeout_ns = s->suspect_timeout_ns;
    cfg.probe_timeout_ns = s->probe_timeout_ns;
    size_t nb = res->nbytes ? res->nbytes : 1;
    for (uint32_t r = 0; r < s->n && rc == FTC_OK; r++) {
        sim_rank_t *sr = &run.ranks[r];
        sr->run = &run;
        sr->rank = r;
        sr->in = calloc(1, nb);
        sr->out = calloc(1, nb);
        res->ranks[r].value = calloc(1, nb);
        res->inputs[r] = sr->in;
        if (sr->in == NULL || sr->out == NULL || res->ranks[r].value == NULL) {
            rc = FTC_ENOMEM;
            break;
        }
        ftc_scenario_input(s, r, sr->in);
        rc = ftc_context_create(r, s->n, ftc_lb_ops(), ftc_lb_endpoint(run.w, r),
                                &cfg, &sr->ctx);
        if (rc == FTC_OK) {
            ftc_lb_attach(run.w, r, sr->ctx);
            rc = ftc_group_create(sr->ctx, 1, 0, s->n, NULL, &sr->group);
        }
    }
    if (rc == FTC_OK) {
        for (uint32_t i = 0; i < s->nfail; i++) {
            ftc_lb_crash(run.w, s->fail[i]);
            res->ranks[s->fail[i]].pre_failed = true;
        }
        /* Ranks start in time order; the world runs in between, so a
         * late starter finds its peers' messages already queued. */
        start_entry_t *starts = malloc(sizeof(*starts) * s->n);
        uint32_t nstart = 0;
        uint64_t max = s->max_events ? s->max_events : 50000000ull;
        for (uint32_t r = 0; r < s->n && starts != NULL; r++) {
            if (res->ranks[r].pre_failed)
                continue;
            starts[nstart].rank = r;
            starts[nstart++].at = s->start_spread_ns == 0
                                      ? 0
                                      : mix64(s->seed * 31 + r)
                                            % (s->start_spread_ns + 1);
        }
        if (starts != NULL)
            qsort(starts, nstart, sizeof(*starts), cmp_start);
        for (uint32_t i = 0; i < nstart; i++) {
            if (starts[i].at > 0)
                res->events += ftc_lb_run_until(run.w, starts[i].at, max);
            start_rank(&run.ranks[starts[i].rank]);
        }
        free(starts);
        res->events += ftc_lb_run(run.w, max);
        res->hit_event_limit = res->events >= max;
        res->messages = ftc_lb_messages_sent(run.w);
        for (uint32_t r = 0; r < s->n; r++) {
            res->ranks[r].failed = ftc_lb_is_crashed(run.w, r) != 0;
            ftc_counters_t c;
            ftc_context_counters(run.ranks[r].ctx, &c);
            res->totals.msgs_sent += c.msgs_sent;
            res->totals.msgs_received += c.msgs_received;
            res->totals.dropped_truncated += c.dropped_truncated;
            res->totals.dropped_checksum += c.dropped_checksum;
            res->totals.dropped_version += c.dropped_version;
            res->totals.dropped_foreign += c.dropped_foreign;
            res->totals.dropped_stale += c.dropped_stale;
            res->totals.dropped_badmsg += c.dropped_badmsg;
            res->totals.late += c.late;
            res->totals.probes_sent += c.probes_sent;
            res->totals.failures_detected += c.failures_detected;
        }
        if (run.init_error != FTC_OK) {
            rc = run.init_error;
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "ftc_init_%s: %s", ftc_coll_name(s->coll),
                         ftc_strerror(rc));
        }
    }
    run.closing = true;
    for (uint32_t r = 0; r < s->n; r++) {
        ftc_context_destroy(run.ranks[r].ctx);
        free(run.ranks[r].out);
        /* in stays, as res->inputs[r] */
    }
    free(run.ranks);
    ftc_lb_world_destroy(run.w);
    if (rc != FTC_OK) {
        ftc_scenario_result_free(res);
        if (rc == FTC_ENOMEM)
            return fail(err, errlen, "out of memory");
    }
    return rc;
}

void ftc_scenario_result_free(ftc_scenario_result_t *res)
{
    if (res->ranks != NULL) {
        for (uint32_t r = 0; r < res->n; r++) {
            free(res->ranks[r].failed_list);
            free(res->ranks[r].value);
        }
    }
    if (res->inputs != NULL)
        for (uint32_t r = 0; r < res->n; r++)
            free(res->inputs[r]);
    free(res->ranks);
    free(res->inputs);
    memset(res, 0, sizeof(*res));
}
