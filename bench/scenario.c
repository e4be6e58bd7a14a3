/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_logp.h"
#include "ftcoll_loopback.h"
#include "rng.h"
#include "scenario.h"
#include "sim_ftco.h"
#include "sim_paper_metrics.h"
#include "sim_ulfm.h"
#include "wire/wire.h"
#include "algo/corrected/kinds.h"
#include "algo/tree/kinds.h"

typedef struct sim_rank {
    struct sim_run *run;
    uint32_t rank;
    ftc_context_t *ctx;
    ftc_group_t *group;
    ftc_group_t *newgroup;  /* a shrink's (sim_ulfm.c) */
    void *in, *out;
} sim_rank_t;

typedef struct sim_run {
    const ftc_scenario_t *s;
    ftc_scenario_result_t *res;
    ftc_lb_world_t *w;      /* loopback model */
    ftc_logp_world_t *lp;   /* LogP model */
    sim_rank_t *ranks;
    bool closing;           /* destroy-time cancellations are not results */
    int init_error;
    ftc_sim_service_state_t *service; /* LogP, ftco: sim_ftco.h */
    uint64_t *departs;      /* LogP: when each message left its sender */
    size_t ndeparts, capdeparts;
    ftc_pm_t *pm;           /* LogP: Margolin & Barak's measures */
} sim_run_t;

/* ---- the two backends behind one face ---------------------------------- */

static uint64_t b_now(const sim_run_t *run)
{
    return run->lp ? ftc_logp_now(run->lp) : ftc_lb_now(run->w);
}

static void b_crash(sim_run_t *run, uint32_t r)
{
    if (run->lp)
        ftc_logp_crash(run->lp, r);
    else
        ftc_lb_crash(run->w, r);
}

static void b_crash_at(sim_run_t *run, uint32_t r, uint64_t t)
{
    if (run->lp)
        ftc_logp_crash_at(run->lp, r, t);
    else
        ftc_lb_crash_at(run->w, r, t);
}

static void b_crash_after_sends(sim_run_t *run, uint32_t r, uint64_t k)
{
    if (run->lp)
        ftc_logp_crash_after_sends(run->lp, r, k);
    else
        ftc_lb_crash_after_sends(run->w, r, k);
}

static bool b_is_crashed(const sim_run_t *run, uint32_t r)
{
    return run->lp ? ftc_logp_is_crashed(run->lp, r) != 0
                   : ftc_lb_is_crashed(run->w, r) != 0;
}

static uint64_t b_run(sim_run_t *run, uint64_t max)
{
    return run->lp ? ftc_logp_run(run->lp, max) : ftc_lb_run(run->w, max);
}

static uint64_t b_run_until(sim_run_t *run, uint64_t t, uint64_t max)
{
    return run->lp ? ftc_logp_run_until(run->lp, t, max)
                   : ftc_lb_run_until(run->w, t, max);
}

static uint64_t b_messages(const sim_run_t *run)
{
    return run->lp ? ftc_logp_messages_sent(run->lp)
                   : ftc_lb_messages_sent(run->w);
}

void ftc_scenario_init(ftc_scenario_t *s)
{
    memset(s, 0, sizeof(*s));
    s->coll = FTC_COLL_ALLREDUCE;
    ftc_coll_args_init(&s->args);
    ftc_corrected_params_init(&s->corrected);
    ftc_ftco_params_init(&s->ftco);
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
    s->model = FTC_MODEL_LOOPBACK;
    s->logp_L = 2;
    s->logp_o = 1;
    s->logp_g = 1;
    s->parallelism = 1;
    s->protect_root = true;
    ftc_scenario_default_kind_classes(s->kind_class);
}

void ftc_scenario_use_logp(ftc_scenario_t *s)
{
    s->model = FTC_MODEL_LOGP;
    s->logp_L = 2;
    s->logp_o = 1;
    s->logp_g = 1;
    s->parallelism = 1;
    s->queue = FTC_QUEUE_FIFO;
    s->detect_delay_ns = 100;
    s->suspect_timeout_ns = 1000;
    s->probe_timeout_ns = 2000;
}

void ftc_scenario_default_kind_classes(uint8_t cls[16])
{
    for (int k = 0; k < 16; k++)
        cls[k] = 3;
    /* The families' kinds (each in its own space; these numbers do not
     * collide): tree phases first, then corrections. */
    cls[FTC_CORR_MSG_BCAST] = 0;
    cls[FTC_CORR_MSG_TREE_UP] = 0;
    cls[FTC_CORR_MSG_UPCORR] = 0;
    cls[FTC_TREE_MSG_ABORT] = 0;
    cls[FTC_CORR_MSG_NUDGE] = 0;
    cls[FTC_CORR_MSG_CORRECT] = 1;
}

/* The core's kinds (from FTC_MSG_CORE_MIN): keepalives and exclusion in
 * class 2, the rest last. */
static unsigned core_kind_class(unsigned kind)
{
    return kind == FTC_MSG_PROBE || kind == FTC_MSG_PROBE_ACK
                   || kind == FTC_MSG_EXCLUDED
               ? 2
               : 3;
}

/* The LogP backend's classifier for FTC_QUEUE_KIND: byte 5 of a message is
 * its kind (lib/wire/wire.h); the bench may know the wire format, the backend
 * may not. */
static unsigned classify_kind(const void *buf, size_t len, void *arg)
{
    const uint8_t *cls = arg;
    if (len < FTC_WIRE_HEADER_SIZE)
        return 255;
    unsigned kind = ((const uint8_t *)buf)[5];
    if (kind >= FTC_MSG_CORE_MIN)
        return core_kind_class(kind);
    return cls[kind & 15];
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
        case FTC_INPUT_ALLBUT: {
            size_t bits = 8 * ftc_dtype_size(t);
            put(buf, t, i, 0, ~(1ull << (rank % bits)), true);
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
    rr->deliver_ns = b_now(run);
    ftc_pm_delivered(run->pm, r->rank, rr->deliver_ns);
    rr->stats = c->stats;
    rr->failed_count = c->failed_count;
    if (c->nfailed > 0 && !run->s->lean) {
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
    ftc_sim_ulfm_record(run->s, c, r->newgroup, rr);
    if (rr->deliver_ns > run->res->time_ns)
        run->res->time_ns = rr->deliver_ns;
    if (run->s->trace != NULL)
        fprintf(run->s->trace, "%6llu %7u deliver    %s\n",
                (unsigned long long)rr->deliver_ns, r->rank,
                ftc_err_name(c->status));
}

static void start_rank(sim_rank_t *r)
{
    sim_run_t *run = r->run;
    const ftc_scenario_t *s = run->s;
    ftc_rank_result_t *rr = &run->res->ranks[r->rank];
    rr->start_ns = b_now(run);
    for (uint32_t i = 0; i < s->ncrash; i++) {
        if (s->crash[i].rank != r->rank)
            continue;
        if (s->crash[i].after_sends == 0)
            b_crash(run, r->rank);
        else
            b_crash_after_sends(run, r->rank, s->crash[i].after_sends);
    }
    ftc_coll_args_t a = s->args;
    ftc_tree_params_t tree_params;
    a.params = a.algo == FTC_ALGO_FTCO
                   ? (const void *)&s->ftco
                   : ftc_scenario_params(a.algo, &s->corrected, &tree_params);
    a.sendbuf = r->in;
    a.recvbuf = r->out;
    a.deliver = on_deliver;
    a.deliver_arg = r;
    int rc;
    if (ftc_sim_ulfm_is_coll(s->coll))
        rc = ftc_sim_ulfm_start(s, r->rank, r->group, r->in, r->out,
                                on_deliver, r, &r->newgroup);
    else if (s->coll == FTC_COLL_REDUCE)
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

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A standard normal draw from two uniform hashes (Box-Muller). */
static double normal_draw(uint64_t a, uint64_t b)
{
    double u1 = (double)(mix64(a) >> 11) * 0x1.0p-53;
    double u2 = (double)(mix64(b) >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

/* When rank r of a run with this seed starts (arrival imbalance). */
static uint64_t start_time(const ftc_scenario_t *s, uint32_t r)
{
    uint64_t w = s->start_spread_ns;
    if (w == 0)
        return 0;
    if (s->spread_kind == FTC_SPREAD_UNIFORM)
        return mix64(s->seed * 31 + r) % (w + 1);
    double sd = (double)w;
    double t = 3.0 * sd + sd * normal_draw(s->seed * 31 + r,
                                           s->seed * 37 + r + 0x5EED);
    if (t < 0)
        t = 0;
    if (t > 6.0 * sd)
        t = 6.0 * sd;
    return (uint64_t)(t + 0.5);
}

/* The random faults (scenario.h). */
int ftc_scenario_draw_faults(const ftc_scenario_t *s, uint32_t *pre,
                             uint32_t *crash_rank, uint64_t *crash_time,
                             char *err, size_t errlen)
{
    uint32_t want = s->random_fail + s->random_crash;
    if (want == 0)
        return FTC_OK;
    uint64_t *taken = calloc((s->n + 63) / 64, sizeof(uint64_t));
    if (taken == NULL)
        return FTC_ENOMEM;
    uint64_t avail = s->n;
    for (uint32_t i = 0; i < s->nfail; i++) {
        uint32_t r = s->fail[i];
        if (!(taken[r / 64] >> (r % 64) & 1)) {
            taken[r / 64] |= 1ull << (r % 64);
            avail--;
        }
    }
    if (s->protect_root && !(taken[s->args.root / 64] >> (s->args.root % 64) & 1)) {
        taken[s->args.root / 64] |= 1ull << (s->args.root % 64);
        avail--;
    }
    if (want > avail) {
        free(taken);
        if (err != NULL && errlen > 0)
            snprintf(err, errlen,
                     "--faults/--crashes: %u random failures but only %llu "
                     "ranks can fail (n %u, explicit failures, protected root)",
                     want, (unsigned long long)avail, s->n);
        return FTC_EINVAL;
    }
    ftc_lb_rng_t rng;
    ftc_lb_rng_seed(&rng, s->fault_seed ^ 0xFA017ull);
    for (uint32_t i = 0; i < want; i++) {
        uint32_t r;
        if (avail > 2 * (uint64_t)(want - i)) {
            /* Sparse: rejection sampling. */
            do
                r = (uint32_t)ftc_lb_rng_upto(&rng, s->n - 1);
            while (taken[r / 64] >> (r % 64) & 1);
        } else {
            /* Dense: the k-th untaken rank (O(n), only when most fail). */
            uint64_t k = ftc_lb_rng_upto(&rng, avail - 1);
            for (r = 0;; r++)
                if (!(taken[r / 64] >> (r % 64) & 1) && k-- == 0)
                    break;
        }
        taken[r / 64] |= 1ull << (r % 64);
        avail--;
        if (i < s->random_fail) {
            pre[i] = r;
        } else {
            crash_rank[i - s->random_fail] = r;
            crash_time[i - s->random_fail] =
                ftc_lb_rng_upto(&rng, s->crash_window);
        }
    }
    free(taken);
    return FTC_OK;
}

static int check_scenario(const ftc_scenario_t *s, char *err, size_t errlen)
{
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
    if (s->random_fail + s->random_crash > 0
        && (uint64_t)s->nfail + s->random_fail + s->random_crash >= s->n)
        return fail(err, errlen,
                    "--faults/--crashes: more failures than ranks (at "
                    "least one rank must stay alive)");
    if (s->input == FTC_INPUT_POW2 && s->n > 63)
        return fail(err, errlen, "--input pow2 needs n <= 63 (2^r must fit)");
    if (s->input == FTC_INPUT_UNIT && s->args.count != (uint64_t)s->n + 2)
        return fail(err, errlen, "unit input needs count = n + 2");
    if (ftc_dtype_size(s->args.dtype) == 0)
        return fail(err, errlen, "invalid --dtype");
    if (s->model == FTC_MODEL_LOGP && s->parallelism > 2)
        return fail(err, errlen, "--parallelism must be 1 or 2");
    if (s->model != FTC_MODEL_LOGP && s->model != FTC_MODEL_LOOPBACK)
        return fail(err, errlen, "--model must be loopback or logp");
    return FTC_OK;
}

static void trace_line(void *arg, uint64_t t, uint32_t rank,
                       ftc_logp_trace_kind_t what, uint32_t peer)
{
    static const char *const names[] = {"send-start", "send-end",
                                        "recv-start", "recv-end", "crash"};
    if (what == FTC_LOGP_CRASH)
        fprintf(arg, "%6llu %7u crash\n", (unsigned long long)t, rank);
    else
        fprintf(arg, "%6llu %7u %-10s %s %u\n", (unsigned long long)t, rank,
                names[what], what <= FTC_LOGP_SEND_END ? "to" : "from", peer);
}

/* Every CPU activity: the departures are kept (messages_at_reach), and
 * with --trace everything is printed. */
static void trace_departures(void *arg, uint64_t t, uint32_t rank,
                             ftc_logp_trace_kind_t what, uint32_t peer)
{
    sim_run_t *run = arg;
    if (what == FTC_LOGP_SEND_END) {
        if (run->ndeparts == run->capdeparts) {
            size_t cap = run->capdeparts ? run->capdeparts * 2 : 4096;
            uint64_t *d = realloc(run->departs, sizeof(uint64_t) * cap);
            if (d != NULL) {
                run->departs = d;
                run->capdeparts = cap;
            }
        }
        if (run->ndeparts < run->capdeparts)
            run->departs[run->ndeparts++] = t;
    }
    if (run->s->trace != NULL)
        trace_line(run->s->trace, t, rank, what, peer);
}

static void trace_messages(void *arg, uint64_t t, uint32_t rank,
                           ftc_logp_trace_kind_t what, uint32_t peer,
                           const void *buf, size_t len)
{
    (void)peer;
    sim_run_t *run = arg;
    ftc_pm_message(run->pm, t, rank, what, buf, len);
}

static int create_world(sim_run_t *run)
{
    const ftc_scenario_t *s = run->s;
    if (s->model == FTC_MODEL_LOGP) {
        ftc_logp_config_t lc;
        ftc_logp_config_init(&lc);
        lc.n = s->n;
        lc.L = s->logp_L;
        lc.o = s->logp_o;
        lc.g = s->logp_g;
        lc.parallelism = s->parallelism ? s->parallelism : 1;
        lc.detect_delay = s->detect_delay_ns;
        lc.trace = trace_departures;
        lc.trace_arg = run;
        int prc = ftc_pm_create(s->n, s->args.algo == FTC_ALGO_FTCO
                                          ? ftc_sim_ftco_is_data
                                          : ftc_pm_any_family_message,
                                &run->pm);
        if (prc != FTC_OK)
            return prc;
        lc.trace_msg = trace_messages;
        if (s->data_sends_first)
            lc.sends_first = ftc_sim_ftco_sends_first;
        if (s->queue == FTC_QUEUE_KIND) {
            lc.queue = FTC_LOGP_QUEUE_PRIORITY;
            lc.classify = classify_kind;
            lc.classify_arg = (void *)(uintptr_t)s->kind_class;
        }
        if (s->service != FTC_SERVICE_NONE) {
            int rc = ftc_sim_service_create(s->service, &s->ftco.tree, s->n,
                                            s->args.root, s->seed,
                                            &run->service);
            if (rc != FTC_OK)
                return rc;
            lc.service = ftc_sim_service_next;
            lc.distance = ftc_sim_service_distance;
            lc.service_arg = run->service;
        }
        return ftc_logp_world_create(&lc, &run->lp);
    }
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = s->n;
    lc.seed = s->seed;
    lc.latency_ns = s->latency_ns;
    lc.jitter_ns = s->jitter_ns;
    lc.send_cost_ns = s->send_cost_ns;
    lc.detect_delay_ns = s->detect_delay_ns;
    return ftc_lb_world_create(&lc, &run->w);
}

/* Whether rank r is a root of the run's tree: ftco's roots (one, or the
 * multi-root trees' m), else the collective's root. */
static bool is_tree_root(const ftc_scenario_t *s, uint32_t r)
{
    if (s->args.algo != FTC_ALGO_FTCO)
        return r == s->args.root;
    uint32_t logical = (uint32_t)(((uint64_t)r + s->n - s->args.root) % s->n);
    return logical < ftc_tree_root_count(&s->ftco.tree, s->n);
}

/* Margolin & Barak's latency, work, output spread and queue
 * (sim_paper_metrics.h), beside ours. */
static void paper_measures(sim_run_t *run)
{
    ftc_scenario_result_t *res = run->res;
    ftc_pm_rank_t *pr = malloc(sizeof(*pr) * (res->n ? res->n : 1));
    if (pr == NULL || run->pm == NULL) {
        free(pr);
        return;
    }
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        pr[r] = (ftc_pm_rank_t){.live = !rr->failed,
                                .delivered = rr->delivered > 0,
                                .root = is_tree_root(run->s, r)};
    }
    ftc_pm_result_t out;
    ftc_pm_summarise(run->pm, pr, &out);
    free(pr);
    res->finish_time_last = out.finish_time_last;
    res->finish_time_first = out.finish_time_first;
    res->messages_by_finish = out.messages_by_finish;
    res->paper_max_queue = out.max_queue;
    res->paper_max_queue_rank = out.max_queue_rank;
}

/* The per-run summary over the ranks that never failed. */
static void summarise(sim_run_t *run)
{
    ftc_scenario_result_t *res = run->res;
    res->first_finish_ns = UINT64_MAX;
    for (uint32_t r = 0; r < res->n; r++) {
        ftc_rank_result_t *rr = &res->ranks[r];
        rr->finish_ns = rr->delivered ? rr->deliver_ns : rr->start_ns;
        if (run->lp != NULL) {
            ftc_logp_rank_stats_t st;
            ftc_logp_rank_stats(run->lp, r, &st);
            if (st.last_busy_end > rr->finish_ns)
                rr->finish_ns = st.last_busy_end;
            rr->max_inbound = st.max_inbound;
            if (st.sends > res->max_rank_sends)
                res->max_rank_sends = st.sends;
        } else if (ftc_lb_rank_messages_sent(run->w, r) > res->max_rank_sends) {
            res->max_rank_sends = ftc_lb_rank_messages_sent(run->w, r);
        }
        if (rr->failed)
            continue;
        res->live++;
        if (!rr->delivered)
            res->undelivered++;
        else if (rr->status != FTC_OK)
            res->bad_status++;
        if (rr->delivered && rr->deliver_ns > res->reach_ns)
            res->reach_ns = rr->deliver_ns;
        if (rr->finish_ns > res->finish_ns)
            res->finish_ns = rr->finish_ns;
        if (rr->finish_ns < res->first_finish_ns)
            res->first_finish_ns = rr->finish_ns;
    }
    if (res->first_finish_ns == UINT64_MAX)
        res->first_finish_ns = 0;
    if (run->lp != NULL) {
        ftc_logp_stats_t st;
        ftc_logp_stats(run->lp, &st);
        res->max_inbound = st.max_inbound;
        res->max_inbound_rank = st.max_inbound_rank;
        for (size_t i = 0; i < run->ndeparts; i++)
            res->messages_at_reach += run->departs[i] <= res->reach_ns;
        paper_measures(run);
    }
}

int ftc_scenario_run(const ftc_scenario_t *s, ftc_scenario_result_t *res,
                     char *err, size_t errlen)
{
    memset(res, 0, sizeof(*res));
    double t_begin = wall_now();
    int rc = check_scenario(s, err, errlen);
    if (rc != FTC_OK)
        return rc;
    size_t esize = ftc_dtype_size(s->args.dtype);

    /* Random faults first: a refused draw costs nothing. */
    uint32_t nrf = s->random_fail, nrc = s->random_crash;
    uint32_t *rfail = malloc(sizeof(uint32_t) * (nrf ? nrf : 1));
    uint32_t *rcrash = malloc(sizeof(uint32_t) * (nrc ? nrc : 1));
    uint64_t *rcrash_t = malloc(sizeof(uint64_t) * (nrc ? nrc : 1));
    if (rfail == NULL || rcrash == NULL || rcrash_t == NULL) {
        rc = FTC_ENOMEM;
    } else {
        rc = ftc_scenario_draw_faults(s, rfail, rcrash, rcrash_t, err, errlen);
    }
    if (rc != FTC_OK) {
        free(rfail);
        free(rcrash);
        free(rcrash_t);
        return rc == FTC_ENOMEM ? fail(err, errlen, "out of memory") : rc;
    }

    sim_run_t run = {.s = s, .res = res};
    rc = create_world(&run);
    if (rc != FTC_OK) {
        ftc_sim_service_destroy(run.service);
        ftc_pm_destroy(run.pm);
        free(rfail);
        free(rcrash);
        free(rcrash_t);
        return fail(err, errlen, rc == FTC_ENOMEM
                                     ? "out of memory"
                                     : "cannot create the simulated world");
    }

    res->n = s->n;
    res->nbytes = (size_t)s->args.count * esize;
    size_t nb = res->nbytes ? res->nbytes : 1;
    /* One slab for every rank's input, output and recorded value: at a
     * million ranks, three small allocations each would cost more than
     * the values. */
    res->ranks = calloc(s->n, sizeof(*res->ranks));
    res->inputs = calloc(s->n, sizeof(void *));
    run.ranks = calloc(s->n, sizeof(*run.ranks));
    res->slab = nb <= SIZE_MAX / 3 / s->n ? calloc((size_t)s->n * 3, nb) : NULL;
    if (res->ranks == NULL || res->inputs == NULL || run.ranks == NULL
        || res->slab == NULL) {
        free(run.ranks);
        free(run.departs);
        free(rfail);
        free(rcrash);
        free(rcrash_t);
        ftc_lb_world_destroy(run.w);
        ftc_logp_world_destroy(run.lp);
        ftc_sim_service_destroy(run.service);
        ftc_pm_destroy(run.pm);
        ftc_scenario_result_free(res);
        return fail(err, errlen, "out of memory");
    }
    uint8_t *slab = res->slab;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 0x5EED0000ull ^ s->seed;
    cfg.suspect_timeout_ns = s->suspect_timeout_ns;
    cfg.probe_timeout_ns = s->probe_timeout_ns;
    if (s->segment_size != 0)
        cfg.segment_size = s->segment_size;
    const ftc_transport_ops_t *ops = run.lp ? ftc_logp_ops() : ftc_lb_ops();
    for (uint32_t r = 0; r < s->n && rc == FTC_OK; r++) {
        sim_rank_t *sr = &run.ranks[r];
        sr->run = &run;
        sr->rank = r;
        sr->in = slab + (size_t)r * nb;
        sr->out = slab + ((size_t)s->n + r) * nb;
        res->ranks[r].value = slab + ((size_t)2 * s->n + r) * nb;
        res->inputs[r] = sr->in;
        ftc_scenario_input(s, r, sr->in);
        void *ep = run.lp ? ftc_logp_endpoint(run.lp, r)
                          : ftc_lb_endpoint(run.w, r);
        rc = ftc_context_create(r, s->n, ops, ep, &cfg, &sr->ctx);
        if (rc == FTC_OK) {
            if (run.lp)
                ftc_logp_attach(run.lp, r, sr->ctx);
            else
                ftc_lb_attach(run.w, r, sr->ctx);
            rc = ftc_group_create(sr->ctx, 1, 0, s->n, NULL, &sr->group);
        }
    }
    double t_setup = wall_now();
    res->wall_setup_s = t_setup - t_begin;
    if (rc == FTC_OK) {
        for (uint32_t i = 0; i < s->nfail; i++) {
            b_crash(&run, s->fail[i]);
            res->ranks[s->fail[i]].pre_failed = true;
        }
        for (uint32_t i = 0; i < nrf; i++) {
            b_crash(&run, rfail[i]);
            res->ranks[rfail[i]].pre_failed = true;
        }
        for (uint32_t i = 0; i < nrc; i++)
            b_crash_at(&run, rcrash[i], rcrash_t[i]);
        /* A shrink follows the error that prompted it: the ranks that
         * failed before it are known at every live rank (sim_ulfm.h). */
        for (uint32_t r = 0; s->coll == FTC_COLL_SHRINK && r < s->n; r++) {
            if (res->ranks[r].pre_failed)
                continue;
            for (uint32_t i = 0; i < s->nfail; i++)
                ftc_transport_peer_failed(run.ranks[r].ctx, s->fail[i]);
            for (uint32_t i = 0; i < nrf; i++)
                ftc_transport_peer_failed(run.ranks[r].ctx, rfail[i]);
        }
        /* Ranks start in time order; the world runs in between, so a
         * late starter finds its peers' messages already queued. Under
         * LogP its CPU is also held until then: those messages wait. */
        start_entry_t *starts = malloc(sizeof(*starts) * s->n);
        uint32_t nstart = 0;
        uint64_t max = s->max_events ? s->max_events : 50000000ull;
        if (s->max_events == 0 && (uint64_t)s->n * 400 > max)
            max = (uint64_t)s->n * 400;
        for (uint32_t r = 0; r < s->n && starts != NULL; r++) {
            if (res->ranks[r].pre_failed)
                continue;
            starts[nstart].rank = r;
            starts[nstart++].at = start_time(s, r);
            ftc_pm_started(run.pm, r, starts[nstart - 1].at);
            if (run.lp != NULL && starts[nstart - 1].at > 0
                && !s->prestart_receives)
                ftc_logp_hold(run.lp, r, starts[nstart - 1].at);
        }
        if (starts != NULL && s->start_spread_ns > 0)
            qsort(starts, nstart, sizeof(*starts), cmp_start);
        for (uint32_t i = 0; i < nstart; i++) {
            if (starts[i].at > 0)
                res->events += b_run_until(&run, starts[i].at, max);
            start_rank(&run.ranks[starts[i].rank]);
        }
        free(starts);
        res->events += b_run(&run, max);
        res->hit_event_limit = res->events >= max;
        res->messages = b_messages(&run);
        for (uint32_t r = 0; r < s->n; r++) {
            res->ranks[r].failed = b_is_crashed(&run, r);
            ftc_sim_ulfm_after_run(s, run.ranks[r].group, &res->ranks[r]);
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
        summarise(&run);
        if (run.lp != NULL)
            res->backend_bytes = ftc_logp_memory(run.lp);
        if (run.init_error != FTC_OK) {
            rc = run.init_error;
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "ftc_init_%s: %s", ftc_coll_name(s->coll),
                         ftc_strerror(rc));
        }
    }
    free(rfail);
    free(rcrash);
    free(rcrash_t);
    double t_run = wall_now();
    res->wall_run_s = t_run - t_setup;
    run.closing = true;
    for (uint32_t r = 0; r < s->n; r++)
        ftc_context_destroy(run.ranks[r].ctx);
    free(run.ranks);
    free(run.departs);
    ftc_lb_world_destroy(run.w);
    ftc_logp_world_destroy(run.lp);
    ftc_sim_service_destroy(run.service);
    ftc_pm_destroy(run.pm);
    res->wall_teardown_s = wall_now() - t_run;
    if (rc != FTC_OK) {
        ftc_scenario_result_free(res);
        if (rc == FTC_ENOMEM)
            return fail(err, errlen, "out of memory");
    }
    return rc;
}

void ftc_scenario_result_free(ftc_scenario_result_t *res)
{
    if (res->ranks != NULL)
        for (uint32_t r = 0; r < res->n; r++) {
            free(res->ranks[r].failed_list);
            ftc_sim_ulfm_rank_free(&res->ranks[r]);
        }
    free(res->slab);
    free(res->ranks);
    free(res->inputs);
    memset(res, 0, sizeof(*res));
}
