/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "scenario.h"
#include "stream.h"
#include "report.h"

typedef struct stream_rank {
    struct stream_run *run;
    uint32_t rank;
    ftc_context_t *ctx;
    ftc_group_t *group;
    uint32_t started, delivered;
    uint64_t sends_at_start[FTC_STREAM_MAX_OPS + 1];
    bool leaving, finalize_done;
    int64_t *in;            /* one input per operation in flight */
    int64_t *out;           /* one result buffer per operation */
} stream_rank_t;

typedef struct stream_op_arg {
    stream_rank_t *r;
    uint32_t k;
} stream_op_arg_t;

typedef struct stream_run {
    const ftc_stream_t *s;
    ftc_stream_result_t *res;
    ftc_lb_world_t *w;
    stream_rank_t *ranks;
    stream_op_arg_t *args;  /* [rank * nops + k] */
    bool closing;
} stream_run_t;

void ftc_stream_init(ftc_stream_t *s)
{
    memset(s, 0, sizeof(*s));
    s->colls[0] = FTC_COLL_ALLREDUCE;
    s->ncolls = 1;
    ftc_coll_args_init(&s->args);
    ftc_corrected_params_init(&s->corrected);
    s->args.dtype = FTC_INT64;
    s->n = 6;
    s->nops = 3;
    s->window = 1;
    s->seed = 1;
    s->latency_ns = 1000;
    s->send_cost_ns = 100;
    s->detect_delay_ns = 50000;
    s->suspect_timeout_ns = 1000000;
    s->probe_timeout_ns = 2000000;
}

ftc_coll_t ftc_stream_coll(const ftc_stream_t *s, uint32_t k)
{
    return s->colls[k % (s->ncolls ? s->ncolls : 1)];
}

uint32_t ftc_stream_root(const ftc_stream_t *s, uint32_t k)
{
    return s->rotate_root ? (uint32_t)(((uint64_t)s->args.root + k) % s->n)
                          : s->args.root;
}

static size_t elems(const ftc_stream_t *s)
{
    return (size_t)s->n + 2;
}

static ftc_stream_delivery_t *delivery(const ftc_stream_result_t *res,
                                       uint32_t r, uint32_t k)
{
    return &res->d[(size_t)r * res->nops + k];
}

static void start_op(stream_rank_t *r);

static void leave(stream_rank_t *r)
{
    stream_run_t *run = r->run;
    run->res->exited[r->rank] = true;
    ftc_lb_crash(run->w, r->rank);
}

static void on_finalized(const ftc_completion_t *c, void *arg)
{
    stream_rank_t *r = arg;
    if (r->run->closing)
        return;
    r->finalize_done = true;
    (void)c;
    leave(r);
}

static void maybe_leave(stream_rank_t *r)
{
    const ftc_stream_t *s = r->run->s;
    if (!s->exit_after_last || r->leaving || r->delivered < s->nops)
        return;
    r->leaving = true;
    if (!s->finalize) {
        leave(r);
        return;
    }
    if (ftc_group_finalize(r->group, on_finalized, r) != FTC_OK)
        leave(r);
}

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    stream_op_arg_t *oa = arg;
    stream_rank_t *r = oa->r;
    stream_run_t *run = r->run;
    if (run->closing)
        return;
    const ftc_stream_t *s = run->s;
    ftc_stream_delivery_t *d = delivery(run->res, r->rank, oa->k);
    if (d->count++ > 0)
        return; /* the checker flags it; keep the first */
    r->delivered++;
    d->status = c->status;
    d->at_ns = ftc_lb_now(run->w);
    d->failed_count = c->failed_count;
    if (c->nfailed > 0) {
        d->failed = malloc(sizeof(uint32_t) * c->nfailed);
        if (d->failed != NULL) {
            memcpy(d->failed, c->failed, sizeof(uint32_t) * c->nfailed);
            d->nfailed = c->nfailed;
        }
    }
    ftc_coll_t coll = ftc_stream_coll(s, oa->k);
    if (c->status == FTC_OK
        && (coll != FTC_COLL_REDUCE || r->rank == ftc_stream_root(s, oa->k))) {
        d->has_value = true;
        d->value = malloc(sizeof(int64_t) * elems(s));
        if (d->value != NULL)
            memcpy(d->value, r->out + (size_t)oa->k * elems(s),
                   sizeof(int64_t) * elems(s));
    }
    start_op(r);
    maybe_leave(r);
}

/* Arm the crashes scheduled for operation k of r (or for the stream's
 * start, k = FTC_STREAM_BEFORE). */
static void arm_faults(stream_rank_t *r, uint32_t k)
{
    stream_run_t *run = r->run;
    const ftc_stream_t *s = run->s;
    for (uint32_t i = 0; i < s->nfaults; i++) {
        const ftc_stream_fault_t *f = &s->faults[i];
        if (f->rank != r->rank || f->op != k)
            continue;
        if (k == FTC_STREAM_BEFORE || f->after_sends == 0)
            ftc_lb_crash(run->w, r->rank);
        else
            ftc_lb_crash_after_sends(run->w, r->rank, f->after_sends);
    }
}

static void start_op(stream_rank_t *r)
{
    stream_run_t *run = r->run;
    const ftc_stream_t *s = run->s;
    uint32_t window = s->window ? s->window : 1;
    while (r->started < s->nops && r->started < r->delivered + window
           && !ftc_lb_is_crashed(run->w, r->rank)) {
        uint32_t k = r->started++;
        r->sends_at_start[k] = ftc_lb_rank_messages_sent(run->w, r->rank);
        arm_faults(r, k);
        if (ftc_lb_is_crashed(run->w, r->rank))
            return; /* crashed as it started k: it never calls init */
        size_t e = elems(s);
        int64_t *in = r->in + (size_t)k * e;
        memset(in, 0, sizeof(int64_t) * e);
        in[r->rank] = 1;
        in[s->n] = 1;
        in[s->n + 1] = (int64_t)k + 1;
        ftc_coll_args_t a = s->args;
        ftc_tree_params_t tree_params;
        a.params = ftc_scenario_params(a.algo, &s->corrected, &tree_params);
        a.dtype = FTC_INT64;
        a.op = FTC_SUM;
        a.count = e;
        a.root = ftc_stream_root(s, k);
        a.sendbuf = in;
        a.recvbuf = r->out + (size_t)k * e;
        a.deliver = on_deliver;
        a.deliver_arg = &run->args[(size_t)r->rank * s->nops + k];
        ftc_coll_t coll = ftc_stream_coll(s, k);
        int rc = coll == FTC_COLL_REDUCE ? ftc_init_reduce(r->group, &a, NULL)
                 : coll == FTC_COLL_BCAST ? ftc_init_bcast(r->group, &a, NULL)
                                          : ftc_init_allreduce(r->group, &a,
                                                               NULL);
        if (rc != FTC_OK && run->res->init_error == FTC_OK)
            run->res->init_error = rc;
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return FTC_EINVAL;
}

int ftc_stream_run(const ftc_stream_t *s, ftc_stream_result_t *res,
                   char *err, size_t errlen)
{
    memset(res, 0, sizeof(*res));
    if (s->n == 0 || s->n > 4096)
        return refuse(err, errlen, "n must be in 1..4096");
    if (s->nops == 0 || s->nops > FTC_STREAM_MAX_OPS)
        return refuse(err, errlen, "nops must be in 1..%d", FTC_STREAM_MAX_OPS);
    if (s->nfaults > FTC_STREAM_MAX_FAULTS)
        return refuse(err, errlen, "too many faults");
    for (uint32_t i = 0; i < s->nfaults; i++)
        if (s->faults[i].rank >= s->n
            || (s->faults[i].op != FTC_STREAM_BEFORE
                && s->faults[i].op >= s->nops))
            return refuse(err, errlen, "fault %u: no such rank or operation",
                          i);
    stream_run_t run = {.s = s, .res = res};
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = s->n;
    lc.seed = s->seed;
    lc.latency_ns = s->latency_ns;
    lc.jitter_ns = s->jitter_ns;
    lc.send_cost_ns = s->send_cost_ns;
    lc.detect_delay_ns = s->detect_delay_ns;
    if (ftc_lb_world_create(&lc, &run.w) != FTC_OK)
        return refuse(err, errlen, "cannot create the loopback world");
    if (s->detect_delay_by_rank != NULL)
        for (uint32_t r = 0; r < s->n; r++)
            ftc_lb_set_detect_delay(run.w, r, s->detect_delay_by_rank[r]);
    res->n = s->n;
    res->nops = s->nops;
    size_t e = elems(s);
    size_t cells = (size_t)s->n * s->nops;
    res->crashed = calloc(s->n, sizeof(bool));
    res->exited = calloc(s->n, sizeof(bool));
    res->started = calloc(s->n, sizeof(uint32_t));
    res->crash_op = calloc(s->n, sizeof(uint32_t));
    res->sends_in_op = calloc(cells, sizeof(uint64_t));
    res->d = calloc(cells, sizeof(ftc_stream_delivery_t));
    run.ranks = calloc(s->n, sizeof(stream_rank_t));
    run.args = calloc(cells, sizeof(stream_op_arg_t));
    int64_t *buf = calloc(2 * cells * e, sizeof(int64_t));
    int rc = FTC_OK;
    if (res->crashed == NULL || res->exited == NULL || res->started == NULL
        || res->crash_op == NULL || res->sends_in_op == NULL || res->d == NULL
        || run.ranks == NULL || run.args == NULL || buf == NULL)
        rc = FTC_ENOMEM;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 0x57AEA0000ull ^ s->seed;
    cfg.suspect_timeout_ns = s->suspect_timeout_ns;
    cfg.probe_timeout_ns = s->probe_timeout_ns;
    if (s->segment_size != 0)
        cfg.segment_size = s->segment_size;
    for (uint32_t r = 0; r < s->n && rc == FTC_OK; r++) {
        stream_rank_t *sr = &run.ranks[r];
        sr->run = &run;
        sr->rank = r;
        sr->in = buf + (size_t)r * s->nops * e;
        sr->out = buf + (cells + (size_t)r * s->nops) * e;
        for (uint32_t k = 0; k < s->nops; k++) {
            run.args[(size_t)r * s->nops + k].r = sr;
            run.args[(size_t)r * s->nops + k].k = k;
        }
        rc = ftc_context_create(r, s->n, ftc_lb_ops(),
                                ftc_lb_endpoint(run.w, r), &cfg, &sr->ctx);
        if (rc == FTC_OK) {
            ftc_lb_attach(run.w, r, sr->ctx);
            rc = ftc_group_create(sr->ctx, 1, 0, s->n, NULL, &sr->group);
        }
    }
    if (rc == FTC_OK) {
        for (uint32_t r = 0; r < s->n; r++)
            arm_faults(&run.ranks[r], FTC_STREAM_BEFORE);
        for (uint32_t r = 0; r < s->n; r++)
            start_op(&run.ranks[r]);
        uint64_t max = s->max_events ? s->max_events : 20000000ull;
        res->events = ftc_lb_run(run.w, max);
        res->hit_event_limit = res->events >= max;
        res->messages = ftc_lb_messages_sent(run.w);
        res->end_ns = ftc_lb_now(run.w);
        for (uint32_t r = 0; r < s->n; r++) {
            stream_rank_t *sr = &run.ranks[r];
            res->crashed[r] = ftc_lb_is_crashed(run.w, r) && !res->exited[r];
            ftc_counters_t c;
            ftc_context_counters(sr->ctx, &c);
            res->probes += c.probes_sent;
            res->started[r] = sr->started;
            res->crash_op[r] = sr->started == 0 ? FTC_STREAM_BEFORE
                                                : sr->started - 1;
            sr->sends_at_start[sr->started] = ftc_lb_rank_messages_sent(run.w, r);
            for (uint32_t k = 0; k < sr->started; k++)
                res->sends_in_op[(size_t)r * s->nops + k] =
                    sr->sends_at_start[k + 1] - sr->sends_at_start[k];
        }
        for (uint32_t i = 0; i < s->nfaults; i++) {
            const ftc_stream_fault_t *f = &s->faults[i];
            /* Landed in its operation: the rank crashed, in op f->op (or
             * before the stream). */
            res->landed[i] = res->crashed[f->rank]
                             && res->crash_op[f->rank] == f->op;
        }
    }
    run.closing = true;
    if (run.ranks != NULL)
        for (uint32_t r = 0; r < s->n; r++)
            ftc_context_destroy(run.ranks[r].ctx);
    ftc_lb_world_destroy(run.w);
    free(run.ranks);
    free(run.args);
    free(buf);
    if (rc != FTC_OK) {
        ftc_stream_result_free(res);
        return refuse(err, errlen, "set-up failed: %s", ftc_strerror(rc));
    }
    return FTC_OK;
}

void ftc_stream_result_free(ftc_stream_result_t *res)
{
    if (res->d != NULL)
        for (size_t i = 0; i < (size_t)res->n * res->nops; i++) {
            free(res->d[i].failed);
            free(res->d[i].value);
        }
    free(res->crashed);
    free(res->exited);
    free(res->started);
    free(res->crash_op);
    free(res->sends_in_op);
    free(res->d);
    memset(res, 0, sizeof(*res));
}

/* ---- the checker ------------------------------------------------------- */


/* Decode a result into its contributor set (bitmap in `in`, n entries):
 * true when it is a sum of distinct inputs of operation k, each once. */
static bool decode(const ftc_stream_t *s, uint32_t k, const int64_t *v,
                   bool *in, uint32_t *size, char *why, size_t whylen)
{
    uint32_t n = s->n;
    int64_t cnt = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i] != 0 && v[i] != 1) {
            snprintf(why, whylen, "element %u is %" PRId64
                     " (an input counted twice, or garbage)", i, v[i]);
            return false;
        }
        in[i] = v[i] == 1;
        cnt += v[i];
    }
    if (v[n] != cnt) {
        snprintf(why, whylen, "count element %" PRId64 " but %" PRId64
                 " contributors", v[n], cnt);
        return false;
    }
    if (v[n + 1] != (int64_t)(k + 1) * cnt) {
        snprintf(why, whylen, "operation tag %" PRId64 ", want %" PRId64
                 " (an input of another operation)", v[n + 1],
                 (int64_t)(k + 1) * cnt);
        return false;
    }
    *size = (uint32_t)cnt;
    return true;
}

static void fmt_set(const bool *in, uint32_t n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n && o + 12 < len; i++)
        if (in[i])
            o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "", i);
}

/* What the completion says the result excludes, against what it does. */
static void check_exclusion(const ftc_stream_t *s, ftc_report_t *rep, uint32_t r,
                            uint32_t k, const ftc_stream_delivery_t *d,
                            const bool *in, uint32_t size)
{
    uint32_t excluded = s->n - size;
    switch (s->corrected.fault_info) {
    case FTC_FAULT_LIST: {
        bool ok = d->nfailed == excluded && d->failed_count == excluded;
        for (uint32_t i = 0; ok && i < d->nfailed; i++)
            if (d->failed[i] >= s->n || in[d->failed[i]]
                || (i > 0 && d->failed[i] <= d->failed[i - 1]))
                ok = false;
        if (!ok) {
            char a[256], b[256];
            size_t o = 0;
            a[0] = 0;
            for (uint32_t i = 0; i < d->nfailed && o + 12 < sizeof(a); i++)
                o += (size_t)snprintf(a + o, sizeof(a) - o, "%s%u",
                                      i ? "," : "", d->failed[i]);
            bool *out = calloc(s->n, sizeof(bool));
            if (out != NULL) {
                for (uint32_t i = 0; i < s->n; i++)
                    out[i] = !in[i];
                fmt_set(out, s->n, b, sizeof(b));
                free(out);
            }
            ftc_report_violation(rep, "op %u rank %u: failed list {%s} (count %u) but the "
                    "result excludes {%s}", k, r, a, d->failed_count,
                    out != NULL ? b : "?");
        }
        break;
    }
    case FTC_FAULT_COUNT:
        if (d->nfailed != 0 || d->failed_count != excluded)
            ftc_report_violation(rep, "op %u rank %u: failed_count %u but the result "
                    "excludes %u inputs", k, r, d->failed_count, excluded);
        break;
    case FTC_FAULT_BIT:
        if (d->nfailed != 0 || d->failed_count != FTC_FAILED_UNKNOWN)
            ftc_report_violation(rep, "op %u rank %u: the bit scheme reports %u failures "
                    "(it cannot know them)", k, r, d->failed_count);
        break;
    }
}

static void check_op(const ftc_stream_t *s, const ftc_stream_result_t *res,
                     ftc_report_t *rep, uint32_t k, uint32_t nfailed_total)
{
    uint32_t n = s->n;
    ftc_coll_t coll = ftc_stream_coll(s, k);
    uint32_t root = ftc_stream_root(s, k);
    bool within_f = nfailed_total <= s->args.f;
    bool tree = s->args.algo == FTC_ALGO_TREE;
    bool *in = calloc(n, sizeof(bool));
    bool *first_in = calloc(n, sizeof(bool));
    if (in == NULL || first_in == NULL) {
        ftc_report_violation(rep, "out of memory in the checker");
        free(in);
        free(first_in);
        return;
    }
    const ftc_stream_delivery_t *agreed = NULL;
    uint32_t agreed_rank = 0;
    char why[160];
    for (uint32_t r = 0; r < n; r++) {
        const ftc_stream_delivery_t *d = delivery(res, r, k);
        bool live = !res->crashed[r];
        if (d->count > 1)
            ftc_report_violation(rep, "op %u rank %u delivered %u times", k, r, d->count);
        if (live && d->count == 0) {
            ftc_report_violation(rep, "op %u (%s): live rank %u never delivered (a hang)",
                    k, ftc_coll_name(coll), r);
            continue;
        }
        if (d->count == 0)
            continue;
        bool must_ok = live && within_f && !tree;
        if (must_ok && coll == FTC_COLL_BCAST && res->crashed[root])
            must_ok = false; /* B4: the value or FTC_EROOT_FAILED */
        if (must_ok && d->status != FTC_OK)
            ftc_report_violation(rep, "op %u (%s): live rank %u delivered %s with at most "
                    "f failures", k, ftc_coll_name(coll), r,
                    ftc_err_name(d->status));
        if (coll == FTC_COLL_BCAST && live && !tree && res->crashed[root]
            && within_f && d->status != FTC_OK
            && d->status != FTC_EROOT_FAILED)
            ftc_report_violation(rep, "op %u (bcast, root failed): rank %u delivered %s",
                    k, r, ftc_err_name(d->status));
        if (!d->has_value)
            continue;
        if (d->value == NULL) {
            ftc_report_violation(rep, "out of memory recording a value");
            continue;
        }
        uint32_t size = 0;
        if (!decode(s, k, d->value, in, &size, why, sizeof(why))) {
            ftc_report_violation(rep, "op %u (%s) rank %u: wrong value: %s", k,
                    ftc_coll_name(coll), r, why);
            continue;
        }
        if (coll == FTC_COLL_BCAST) {
            if (size != 1 || !in[root])
                ftc_report_violation(rep, "op %u (bcast) rank %u: a value that is not the "
                        "root's input", k, r);
            continue;
        }
        /* Reduce root or allreduce: every input of a live rank, and of a
         * rank that exited, is in (they never failed); a rank that did
         * not start this operation cannot be. R3, A4 (and R4/A5 by the
         * decode: each input whole, once). */
        for (uint32_t q = 0; q < n; q++) {
            if (!res->crashed[q] && !in[q] && (within_f || tree))
                ftc_report_violation(rep, "op %u (%s) rank %u: the result misses the input "
                        "of live rank %u", k, ftc_coll_name(coll), r, q);
            if (in[q] && res->started[q] <= k)
                ftc_report_violation(rep, "op %u (%s) rank %u: holds the input of rank %u, "
                        "which never started it", k, ftc_coll_name(coll), r,
                        q);
        }
        if (!tree)
            check_exclusion(s, rep, r, k, d, in, size);
        if (coll == FTC_COLL_ALLREDUCE && live) {
            if (agreed == NULL) {
                agreed = d;
                agreed_rank = r;
                memcpy(first_in, in, sizeof(bool) * n);
            } else if (memcmp(agreed->value, d->value,
                              sizeof(int64_t) * ((size_t)n + 2)) != 0) {
                char a[256], b[256];
                fmt_set(first_in, n, a, sizeof(a));
                fmt_set(in, n, b, sizeof(b));
                ftc_report_violation(rep, "op %u (allreduce): live ranks %u and %u "
                        "disagree: inputs {%s} vs {%s}", k, agreed_rank, r,
                        a, b);
            } else if (s->corrected.fault_info == FTC_FAULT_LIST
                       && (agreed->nfailed != d->nfailed
                           || (d->nfailed > 0
                               && memcmp(agreed->failed, d->failed,
                                         sizeof(uint32_t) * d->nfailed)))) {
                ftc_report_violation(rep, "op %u (allreduce): live ranks %u and %u deliver "
                        "different failed lists", k, agreed_rank, r);
            }
        }
    }
    free(in);
    free(first_in);
}

int ftc_stream_check(const ftc_stream_t *s, const ftc_stream_result_t *res,
                     char *msg, size_t msglen)
{
    ftc_report_t rep = {.msg = msg, .len = msglen};
    if (msg != NULL && msglen > 0)
        msg[0] = 0;
    if (res->hit_event_limit)
        ftc_report_violation(&rep, "the run did not end (event limit)");
    if (res->init_error != FTC_OK)
        ftc_report_violation(&rep, "ftc_init_* refused: %s", ftc_err_name(res->init_error));
    uint32_t nfailed = 0;
    for (uint32_t r = 0; r < s->n; r++)
        nfailed += res->crashed[r];
    if (s->no_stall && res->probes > 0)
        ftc_report_violation(&rep, "a stall: %" PRIu64 " keepalive probes although the "
                "transport reported every crash", res->probes);
    for (uint32_t k = 0; k < s->nops; k++)
        check_op(s, res, &rep, k, nfailed);
    return rep.violations;
}

void ftc_stream_describe(const ftc_stream_t *s, char *buf, size_t len)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, len - o,
                          "n=%u f=%u ops=%u window=%u colls=", s->n, s->args.f,
                          s->nops, s->window);
    for (uint32_t i = 0; i < s->ncolls && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "",
                              ftc_coll_name(s->colls[i]));
    if (o < len)
        o += (size_t)snprintf(
            buf + o, len - o,
            " algo=%s fault-info=%s correction=%s root=%u%s seed=%" PRIu64
            " jitter=%" PRIu64 " detect=%s%s\n  repro: test_streams --mode one --n %u --f %u --ops %u --window %u --root %u%s --seed %" PRIu64 " --jitter %" PRIu64 " --detect-ns %" PRIu64 "%s%s --fault-info %s --correction %s",
            ftc_algo_name(s->args.algo),
            s->corrected.fault_info == FTC_FAULT_LIST    ? "list"
            : s->corrected.fault_info == FTC_FAULT_COUNT ? "count"
                                                    : "bit",
            s->corrected.correction == FTC_CORRECTION_CHECKED ? "checked"
                                                         : "opportunistic",
            s->args.root, s->rotate_root ? " rotate" : "", s->seed,
            s->jitter_ns,
            s->detect_delay_ns == UINT64_MAX ? "never" : "backend",
            s->exit_after_last ? (s->finalize ? " exit+finalize" : " exit")
                               : "",
            s->n, s->args.f, s->nops, s->window, s->args.root,
            s->rotate_root ? " --rotate" : "", s->seed, s->jitter_ns,
            s->detect_delay_ns == UINT64_MAX ? 0 : s->detect_delay_ns,
            s->detect_delay_ns == UINT64_MAX ? " --keepalive" : "",
            s->exit_after_last ? (s->finalize ? " --finalize" : " --exit") : "",
            s->corrected.fault_info == FTC_FAULT_LIST    ? "list"
            : s->corrected.fault_info == FTC_FAULT_COUNT ? "count"
                                                    : "bit",
            s->corrected.correction == FTC_CORRECTION_CHECKED ? "checked"
                                                         : "opportunistic");
    if (o < len && s->corrected.allreduce != FTC_ALLREDUCE_AUTO)
        o += (size_t)snprintf(buf + o, len - o, " --allreduce %s",
                              ftc_allreduce_algo_name(s->corrected.allreduce));
    for (uint32_t i = 0; i < s->nfaults && o < len; i++) {
        const ftc_stream_fault_t *f = &s->faults[i];
        if (f->op == FTC_STREAM_BEFORE)
            o += (size_t)snprintf(buf + o, len - o, "%s%u@before",
                                  i ? "," : " --crash ", f->rank);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s%u@%u+%" PRIu64,
                                  i ? "," : " --crash ", f->rank, f->op,
                                  f->after_sends);
    }
    if (o < len && s->ncolls > 0) {
        o += (size_t)snprintf(buf + o, len - o, " --colls ");
        for (uint32_t i = 0; i < s->ncolls && o < len; i++)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "",
                                  ftc_coll_name(s->colls[i]));
    }
}
