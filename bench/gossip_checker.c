/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip family's property checker (docs/gossip.md, "Guarantees").
 * One allreduce runs on the loopback under the run's faults (loss, bit
 * flips, crashes, cut links); then:
 *
 *  1. every live process delivered, exactly once, and its operation ended
 *     (stopped iterating) by the time the network went quiet;
 *  2. accuracy: a live process's estimate is within c(n) * target of the
 *     exact aggregate (long double) over a set S of processes, where S
 *     holds every survivor and no process that crashed before the
 *     operation. Without failures S is everyone; with failures S may also
 *     hold some that crashed during it (a process that converged before a
 *     failure keeps what it delivered). PCF may also deliver the value its
 *     mass account implies: the survivors' inputs less what they had
 *     cancelled on the links that failed, whether or not they learned of
 *     the failure (its guarantee, docs/gossip.md;
 *     pcf_account, from each link's record).
 *     Push-sum is not held to this under loss or failures (it does not
 *     tolerate them; only 1 is asserted);
 *  3. mass conservation: for push-flow and PCF, at every live process,
 *     input = mass + what it records as sent to its live neighbours +
 *     what it wrote off with failed ones, to rounding; for push-sum
 *     without loss or failures, the live masses sum to the inputs; and
 *     nothing is written off in a run without failures. PCF writes off
 *     what its excluded links had cancelled and nothing else, and the two
 *     ends of a failed link agree on what they cancelled where their
 *     rounds agree (cancellations_agree).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "algo/gossip/gossip.h"
#include "algo/gossip/neighbours.h"
#include "core/context.h"
#include "core/group.h"
#include "wire/wire.h"
#include "gossip_checker.h"

typedef struct rank_state {
    bool delivered_twice;
    int delivered;
    int status;
    ftc_gossip_report_t report;
    double *in, *out;           /* count each, as double */
    float *in_f, *out_f;
    bool final_seen;
    bool still_ticking;
    double *mass, *x, *wo;      /* m each */
    double *wo_check;           /* m: PCF (EXCLUDE_FLOWS), what it had
                                   cancelled on the links it excluded: its
                                   written_off must be that */
    double identity_residual;   /* relative */
    uint32_t unnoticed;         /* its links to a crashed neighbour it
                                   never excluded */
    uint32_t nlinks;            /* PCF runs with failures: each link's */
    uint32_t *peer, *round;     /* neighbour, round and */
    double *link_cancelled;     /* what was cancelled on it (m each), at
                                   the end or, for a crashed rank, as it
                                   crashed (cancellations_agree) */
} rank_state_t;

typedef struct checker {
    const gc_run_t *run;
    ftc_lb_world_t *w;
    bool any_delivered;
    uint32_t crashed_at_first;  /* ranks crashed when the first delivered */
    uint32_t cut_at_first;      /* links cut then */
    uint64_t sent_at_last_delivery; /* the world's sends when the latest
                                    delivery so far happened */
    long double *agg_all;       /* the trace's reference: everyone */
    double *trace_max, *trace_min; /* per traced iteration */
    uint64_t trace_len;
    rank_state_t *rs;
    uint32_t m;
    ftc_group_t **groups;
} checker_t;

static checker_t *cur;

/* The loopback only schedules the reports of a reported cut, so this is
 * safe inside a process's iteration (the tick observer). */
static void cut_link(ftc_lb_world_t *w, const gc_cut_t *c)
{
    if (c->reported)
        ftc_lb_cut_link_reported(w, c->a, c->b);
    else
        ftc_lb_cut_link(w, c->a, c->b);
}

static uint32_t cuts_now(const checker_t *C)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < C->run->ncut; i++)
        k += ftc_lb_is_cut(C->w, C->run->cut[i].a, C->run->cut[i].b) != 0;
    return k;
}

void gc_run_init(gc_run_t *run, uint32_t n)
{
    memset(run, 0, sizeof(*run));
    run->algo = FTC_ALGO_PCF;
    run->n = n;
    ftc_gossip_params_init(&run->params);
    run->dtype = FTC_DOUBLE;
    run->count = 1;
    run->seed = 1;
}

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_state_t *r = arg;
    if (r->delivered > 0)
        r->delivered_twice = true;
    r->delivered++;
    r->status = c->status;
    /* A drawn crash whose send had not come yet lands here. Crashing only
     * marks the endpoint dead, so this is safe inside the callback: what
     * the rank sends after it is dropped. */
    uint32_t me = (uint32_t)(r - cur->rs);
    for (uint32_t i = 0; i < cur->run->ncrash; i++) {
        const gc_crash_t *k = &cur->run->crash[i];
        if (k->rank == me && !k->before
            && (cur->run->crash_or_at_delivery >> i & 1u))
            ftc_lb_crash(cur->w, me);
    }
    cur->sent_at_last_delivery = ftc_lb_messages_sent(cur->w);
    if (!cur->any_delivered) {
        cur->any_delivered = true;
        for (uint32_t i = 0; i < cur->run->n; i++)
            cur->crashed_at_first += ftc_lb_is_crashed(cur->w, i) != 0;
        cur->cut_at_first = cuts_now(cur);
    }
}

static uint32_t rank_of_group(const ftc_group_t *g)
{
    uint32_t r = g->me; /* the world group: group rank = world rank */
    return r < cur->run->n && cur->groups[r] == g ? r : UINT32_MAX;
}

static double rel_error(uint32_t count, const double *v, const long double *a);

/* The trace: each traced iteration's largest and smallest error over the
 * processes that ran it. */
static void on_tick(const ftc_gossip_op_t *g, void *arg)
{
    (void)arg;
    checker_t *C = cur;
    if (C == NULL)
        return;
    uint32_t me = g->base.group->me;
    if (me < C->run->nslow && C->run->slow_iterations == g->iterations)
        ftc_lb_set_delay(C->w, me, 0);
    for (uint32_t i = 0; i < C->run->ncut; i++) {
        const gc_cut_t *c = &C->run->cut[i];
        if (c->after == g->iterations && c->a == g->base.group->me)
            cut_link(C->w, c);
    }
    if (C->trace_max == NULL || !g->have_est)
        return;
    uint32_t every = C->run->trace_every ? C->run->trace_every : 1;
    if (g->iterations % every != 0)
        return;
    uint64_t i = g->iterations / every;
    if (i >= C->trace_len)
        return;
    double e = rel_error(C->run->count, g->est, C->agg_all);
    if (!(e <= C->trace_max[i]))
        C->trace_max[i] = e;
    if (!(e >= C->trace_min[i]))
        C->trace_min[i] = e;
}

/* PCF (EXCLUDE_FLOWS): what this process's written_off must equal, the
 * sum of what the links it excluded had cancelled: nothing else is
 * written off. With EXCLUDE_ALL nothing is. (What was cancelled on links
 * that failed unnoticed enters V from the per-link records, pcf_account.) */
static void written_off_expected(const ftc_gossip_final_t *fin,
                                 double *wo_check)
{
    uint32_t m = fin->m;
    for (uint32_t k = 0; k < m; k++)
        wo_check[k] = 0.0;
    if (fin->written_off == NULL
        || fin->op->params.exclusion == FTC_GOSSIP_EXCLUDE_ALL)
        return;
    for (uint32_t i = 0; i < fin->nlinks; i++) {
        const ftc_gossip_link_t *l = &fin->links[i];
        if (l->cancelled != NULL && !l->alive)
            for (uint32_t k = 0; k < m; k++)
                wo_check[k] += l->cancelled[k];
    }
}

static void on_final(const ftc_gossip_final_t *fin, void *arg)
{
    (void)arg;
    if (cur == NULL)
        return;
    uint32_t r = rank_of_group(fin->group);
    if (r == UINT32_MAX)
        return;
    rank_state_t *s = &cur->rs[r];
    uint32_t m = fin->m;
    s->final_seen = true;
    s->still_ticking = fin->op->ticking;
    for (uint32_t i = 0; i < fin->nlinks; i++)
        s->unnoticed += fin->links[i].alive
                        && ftc_lb_is_crashed(cur->w, fin->links[i].peer);
    if (fin->written_off != NULL && s->peer == NULL
        && (cur->run->ncrash > 0 || cur->run->ncut > 0)) {
        s->nlinks = fin->nlinks;
        s->peer = calloc(fin->nlinks ? fin->nlinks : 1, sizeof(uint32_t));
        s->round = calloc(fin->nlinks ? fin->nlinks : 1, sizeof(uint32_t));
        s->link_cancelled = calloc((size_t)(fin->nlinks ? fin->nlinks : 1) * m,
                                   sizeof(double));
        for (uint32_t i = 0; i < fin->nlinks; i++) {
            s->peer[i] = fin->links[i].peer;
            s->round[i] = fin->links[i].r;
            memcpy(s->link_cancelled + (size_t)i * m, fin->links[i].cancelled,
                   sizeof(double) * m);
        }
    }
    memcpy(s->mass, fin->mass, sizeof(double) * m);
    memcpy(s->x, fin->x, sizeof(double) * m);
    if (fin->written_off != NULL)
        memcpy(s->wo, fin->written_off, sizeof(double) * m);
    written_off_expected(fin, s->wo_check);
    if (fin->op->rules->outflow == NULL)
        return;
    double *t = calloc(m, sizeof(double)), *sum = calloc(m, sizeof(double)),
           *scale = calloc(m, sizeof(double));
    for (uint32_t i = 0; i < fin->nlinks; i++) {
        if (!fin->links[i].alive)
            continue;
        fin->op->rules->outflow(fin->op, &fin->links[i], t);
        for (uint32_t k = 0; k < m; k++) {
            sum[k] += t[k];
            scale[k] += fabs(t[k]);
        }
    }
    double worst = 0.0;
    for (uint32_t k = 0; k < m; k++) {
        double wo = fin->written_off != NULL ? fin->written_off[k] : 0.0;
        double res = fin->x[k] - fin->mass[k] - sum[k] - wo;
        double sc = fabs(fin->x[k]) + fabs(fin->mass[k]) + scale[k] + fabs(wo);
        double rel = sc > 0.0 ? fabs(res) / sc : fabs(res);
        if (!(rel <= worst))
            worst = rel;
    }
    s->identity_residual = worst;
    free(t), free(sum), free(scale);
}

/* splitmix64: the inputs, reproducible from the seed (gossip_checker.h). */
uint64_t gc_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void gc_draw_crashes(gc_run_t *run, uint32_t count, uint64_t window)
{
    uint64_t s = run->seed * 0x2545f4914f6cdd1dull + 17;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t r;
        bool dup;
        do {
            r = (uint32_t)(gc_splitmix(&s) % run->n);
            dup = false;
            for (uint32_t i = 0; i < run->ncrash; i++)
                dup |= run->crash[i].rank == r;
        } while (dup);
        gc_crash_t *c = &run->crash[run->ncrash++];
        c->rank = r;
        c->before = false;
        c->after = 1 + gc_splitmix(&s) % window;
        run->crash_or_at_delivery |= 1u << (run->ncrash - 1);
    }
}

static double unit(uint64_t *s)
{
    return (double)(gc_splitmix(s) >> 11) / 9007199254740992.0;
}

/* comp[r]: the connected component of live rank r in the neighbourhood
 * graph without the crashed ranks (a failure may cut it) ... */
static bool cut_edge(const gc_run_t *run, const bool *cut_done, uint32_t a,
                     uint32_t b)
{
    for (uint32_t i = 0; i < run->ncut; i++)
        if (cut_done[i] && ((run->cut[i].a == a && run->cut[i].b == b)
                            || (run->cut[i].a == b && run->cut[i].b == a)))
            return true;
    return false;
}

/* ... and without the links that were cut. */
static void components(const gc_run_t *run, const bool *live,
                       const bool *cut_done, uint32_t *comp)
{
    uint32_t n = run->n;
    uint32_t *row = calloc(n, sizeof(uint32_t)), *stack = calloc(n, sizeof(uint32_t));
    for (uint32_t r = 0; r < n; r++)
        comp[r] = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++) {
        if (!live[r] || comp[r] != UINT32_MAX)
            continue;
        uint32_t top = 0;
        stack[top++] = r;
        comp[r] = r;
        while (top > 0) {
            uint32_t v = stack[--top];
            uint32_t k = ftc_gossip_neighbours(&run->params, n, v, row);
            for (uint32_t i = 0; i < k; i++)
                if (live[row[i]] && comp[row[i]] == UINT32_MAX
                    && !cut_edge(run, cut_done, v, row[i])) {
                    comp[row[i]] = r;
                    stack[top++] = row[i];
                }
        }
    }
    free(row), free(stack);
}

/* The exact aggregate over the ranks in mask (bit r), in long double. */
static void aggregate(const gc_run_t *run, const rank_state_t *rs,
                      const bool *in_set, long double *agg)
{
    uint32_t count = run->count;
    long double w = 0;
    for (uint32_t k = 0; k < count; k++)
        agg[k] = 0;
    for (uint32_t r = 0; r < run->n; r++) {
        if (!in_set[r])
            continue;
        for (uint32_t k = 0; k < count; k++)
            agg[k] += rs[r].in[k];
        w += run->params.aggregate == FTC_GOSSIP_AVERAGE ? 1 : 0;
    }
    if (run->params.aggregate == FTC_GOSSIP_AVERAGE && w > 0)
        for (uint32_t k = 0; k < count; k++)
            agg[k] /= w;
}

static double rel_error(uint32_t count, const double *v, const long double *a)
{
    long double diff = 0, size = 0;
    for (uint32_t k = 0; k < count; k++) {
        long double d = fabsl((long double)v[k] - a[k]);
        if (!(d <= diff))
            diff = d;
        if (fabsl(a[k]) > size)
            size = fabsl(a[k]);
    }
    return (double)(size > 0 ? diff / size : diff);
}

static void fail(gc_outcome_t *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(gc_outcome_t *out, const char *fmt, ...)
{
    if (!out->ok)
        return;
    out->ok = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->why, sizeof(out->why), fmt, ap);
    va_end(ap);
}

/* The records the value above is computed from, against the other end's.
 * PCF's rounds (pcf.c) cancel on both ends of a link exactly opposite
 * values: the leader its passive flow, the follower the negation it
 * adopted, so where both ends' records stand at the same round they are
 * exact negations of each other (a sum of negated values rounds to the
 * negated sum). A crashed neighbour's record is as it crashed; where the
 * rounds differ by one (a round change in flight at the crash or the
 * cut) the two differ by that round's passive flow, which no end keeps,
 * and the pair is only counted. So a process that recorded anything but
 * what it cancelled with its neighbour on a failed link (its live flows,
 * say) is caught wherever the rounds agree, whatever its own written_off
 * says. */
static void cancellations_agree(const checker_t *C, const bool *live,
                                const bool *cut_done, gc_outcome_t *out)
{
    const gc_run_t *run = C->run;
    uint32_t m = C->m;
    for (uint32_t r = 0; r < run->n; r++) {
        const rank_state_t *a = &C->rs[r];
        if (!live[r] || a->peer == NULL)
            continue;
        for (uint32_t i = 0; i < a->nlinks; i++) {
            uint32_t q = a->peer[i];
            if (live[q] && !cut_edge(run, cut_done, r, q))
                continue;
            const rank_state_t *b = &C->rs[q];
            uint32_t j = 0;
            while (b->peer != NULL && j < b->nlinks && b->peer[j] != r)
                j++;
            if (b->peer == NULL || j == b->nlinks)
                continue; /* crashed before the operation: nothing */
            if (a->round[i] != b->round[j]) {
                out->cancel_pairs_skipped++;
                continue;
            }
            out->cancel_pairs_checked++;
            const double *ca = a->link_cancelled + (size_t)i * m;
            const double *cb = b->link_cancelled + (size_t)j * m;
            for (uint32_t k = 0; k < m; k++)
                if (ca[k] != -cb[k])
                    fail(out, "rank %u recorded %.17g as cancelled with "
                              "failed neighbour %u, which had cancelled "
                              "%.17g in the same round %u", r, ca[k], q,
                         cb[k], a->round[i]);
        }
    }
}

/* The sums behind V: v (count; NULL: not wanted) the inputs of in_set
 * less what they cancelled on the scenario's failed links, *w the same
 * for the weight, *wabs the absolute weight terms. */
static void pcf_account(const checker_t *C, const bool *scenario,
                        const bool *in_set, const bool *cut_done,
                        long double *v, long double *w_out,
                        long double *wabs_out)
{
    const gc_run_t *run = C->run;
    uint32_t n = run->n, count = run->count, m = C->m;
    long double w = 0, wabs = 0;
    for (uint32_t k = 0; v != NULL && k < count; k++)
        v[k] = 0;
    for (uint32_t q = 0; q < n; q++) {
        if (!in_set[q])
            continue;
        const rank_state_t *rs = &C->rs[q];
        long double cw = 0;
        for (uint32_t k = 0; v != NULL && k < count; k++)
            v[k] += rs->in[k];
        for (uint32_t i = 0; rs->peer != NULL && i < rs->nlinks; i++) {
            uint32_t p = rs->peer[i];
            if (scenario[p] && !cut_edge(run, cut_done, q, p))
                continue;
            const double *c = rs->link_cancelled + (size_t)i * m;
            for (uint32_t k = 0; v != NULL && k < count; k++)
                v[k] -= c[k];
            cw += c[m - 1];
        }
        w += (long double)rs->x[m - 1] - cw;
        wabs += fabsl((long double)rs->x[m - 1]) + fabsl(cw);
    }
    *w_out = w;
    *wabs_out = wabs;
}

/* PCF (EXCLUDE_FLOWS): the value V its mass account promises over the
 * processes of in_set (one component of a scenario), where the failed
 * links are those to a process not alive in the scenario, or cut: the
 * inputs of in_set less what each had cancelled on such links, from the
 * per-link records (a crashed process's as it crashed). A scenario that
 * counts a process that crashed during the operation as alive is the
 * promise as it stood before that failure (docs/gossip.md, "Node
 * failure"). *w: V's weight; false when it is not positive (no value
 * exists). *kappa: V's
 * conditioning, the sum of the absolute weight terms over the weight: a
 * weight that is a small difference of large written-off parts divides
 * the rounding up. */
static bool pcf_value(const checker_t *C, const bool *scenario,
                      const bool *in_set, const bool *cut_done,
                      long double *v, double *kappa, long double *w_out)
{
    uint32_t count = C->run->count;
    long double w, wabs;
    pcf_account(C, scenario, in_set, cut_done, v, &w, &wabs);
    *w_out = w;
    *kappa = 1.0;
    if (!(w > 0))
        return false;
    /* A sum's weight is the root's 1 (less what was written off): the
     * estimate is a ratio there too. */
    for (uint32_t k = 0; k < count; k++)
        v[k] /= w;
    *kappa = (double)(wabs / w);
    return true;
}

/* V's weight alone (v not needed): the survivors' weight after the
 * scenario's write-offs. */
static void pcf_value_weight(const checker_t *C, const bool *scenario,
                             const bool *in_set, const bool *cut_done,
                             long double *w)
{
    long double wabs;
    pcf_account(C, scenario, in_set, cut_done, NULL, w, &wabs);
}

typedef struct start {
    uint64_t at;
    uint32_t rank;
} start_t;

static int start_cmp(const void *a, const void *b)
{
    const start_t *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

void gc_check(const gc_run_t *run, gc_outcome_t *out)
{
    memset(out, 0, sizeof(*out));
    out->ok = true;
    uint32_t n = run->n, count = run->count, m = count + 1;
    checker_t C = {.run = run, .m = m};
    C.rs = calloc(n, sizeof(rank_state_t));
    C.groups = calloc(n, sizeof(ftc_group_t *));
    ftc_context_t **ctx = calloc(n, sizeof(ftc_context_t *));
    cur = &C;
    ftc_gossip_set_observer(on_final, NULL);

    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = run->seed;
    lc.drop_prob = run->drop_prob;
    if (run->latency_ns > 0)
        lc.latency_ns = run->latency_ns;
    lc.jitter_ns = run->jitter_ns;
    lc.corrupt_prob = run->flip_prob;
    lc.corrupt_skip = FTC_WIRE_HEADER_SIZE; /* flows, not headers */
    if (ftc_lb_world_create(&lc, &C.w) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.seed = run->seed;
    if (run->suspect_ns > 0)
        cfg.suspect_timeout_ns = run->suspect_ns;
    if (run->probe_ns > 0)
        cfg.probe_timeout_ns = run->probe_ns;
    uint64_t s = run->seed * 7919 + n;
    for (uint32_t r = 0; r < n; r++) {
        rank_state_t *rs = &C.rs[r];
        rs->in = calloc(count ? count : 1, sizeof(double));
        rs->out = calloc(count ? count : 1, sizeof(double));
        rs->in_f = calloc(count ? count : 1, sizeof(float));
        rs->out_f = calloc(count ? count : 1, sizeof(float));
        rs->mass = calloc(m, sizeof(double));
        rs->x = calloc(m, sizeof(double));
        rs->wo = calloc(m, sizeof(double));
        rs->wo_check = calloc(m, sizeof(double));
        for (uint32_t k = 0; k < count; k++) {
            double v = run->mixed_signs ? 2.0 * unit(&s) - 1.0 : 1.0 + unit(&s);
            if (run->dtype == FTC_FLOAT) {
                rs->in_f[k] = (float)v;
                v = rs->in_f[k];
            }
            rs->in[k] = v;
        }
        if (ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(C.w, r),
                               &cfg, &ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(C.w, r, ctx[r]);
        if (r < run->nslow)
            ftc_lb_set_delay(C.w, r, run->slow_ns);
        if (run->flip_prob > 0)
            ftc_ctx_test_skip_checksum(ctx[r], true);
        if (ftc_group_create(ctx[r], 1, 0, n, NULL, &C.groups[r]) != FTC_OK)
            abort();
    }
    bool *crashed_before = calloc(n, sizeof(bool));
    for (uint32_t i = 0; i < run->ncrash; i++) {
        const gc_crash_t *c = &run->crash[i];
        if (c->before) {
            crashed_before[c->rank] = true;
            ftc_lb_crash(C.w, c->rank);
        } else {
            ftc_lb_crash_after_sends(C.w, c->rank, c->after);
        }
    }
    for (uint32_t i = 0; i < run->ncut; i++) {
        const gc_cut_t *c = &run->cut[i];
        if (c->after == 0)
            cut_link(C.w, c);
    }
    /* Everyone's aggregate, before anything ran: the trace's reference. */
    C.agg_all = calloc(count ? count : 1, sizeof(long double));
    {
        bool *all = calloc(n, sizeof(bool));
        for (uint32_t q = 0; q < n; q++)
            all[q] = true;
        aggregate(run, C.rs, all, C.agg_all);
        free(all);
    }
    if (run->trace != NULL) {
        uint32_t every = run->trace_every ? run->trace_every : 1;
        uint64_t cap = run->params.max_iterations ? run->params.max_iterations
                                                  : 100000;
        C.trace_len = 2 * cap / every + 2;
        C.trace_max = malloc(sizeof(double) * C.trace_len);
        C.trace_min = malloc(sizeof(double) * C.trace_len);
        for (uint64_t i = 0; i < C.trace_len; i++) {
            C.trace_max[i] = -1.0;
            C.trace_min[i] = INFINITY;
        }
    }
    if (run->trace != NULL || run->ncut > 0
        || (run->nslow > 0 && run->slow_iterations > 0))
        ftc_gossip_set_tick_observer(on_tick, NULL);
    /* Start times: seeded, in [0, spread_ns]; processes start in that
     * order, the world running up to each start. */
    start_t *order = calloc(n, sizeof(start_t));
    uint64_t ss = run->seed * 0x9e3779b97f4a7c15ull + 3;
    for (uint32_t r = 0; r < n; r++) {
        order[r].rank = r;
        order[r].at = run->spread_ns > 0
                          ? gc_splitmix(&ss) % (run->spread_ns + 1) : 0;
    }
    /* By time, then rank: the same order on every platform's qsort. */
    qsort(order, n, sizeof(start_t), start_cmp);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = order[i].rank;
        if (crashed_before[r])
            continue;
        if (order[i].at > 0)
            ftc_lb_run_until(C.w, order[i].at, 400000000ull);
        rank_state_t *rs = &C.rs[r];
        ftc_gossip_params_t p = run->params;
        p.report = &rs->report;
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.algo = run->algo;
        a.dtype = run->dtype;
        a.op = FTC_SUM;
        a.f = 0; /* gossip reads no f; 1 would be refused at n = 1 */
        a.count = count;
        a.sendbuf = run->dtype == FTC_FLOAT ? (void *)rs->in_f : (void *)rs->in;
        a.recvbuf = run->dtype == FTC_FLOAT ? (void *)rs->out_f : (void *)rs->out;
        a.deliver = on_deliver;
        a.deliver_arg = rs;
        a.params = &p;
        int rc = ftc_init_allreduce(C.groups[r], &a, NULL);
        if (rc != FTC_OK)
            fail(out, "rank %u: ftc_init_allreduce returned %d", r, rc);
    }
    free(order);
    uint64_t cap = run->max_events ? run->max_events : 400000000ull;
    uint64_t ran = ftc_lb_run(C.w, cap);
    if (ran >= cap)
        fail(out, "the run did not end within %llu events",
             (unsigned long long)cap);
    ftc_lb_stats_t st;
    ftc_lb_stats(C.w, &st);
    out->dropped = st.dropped_random;
    out->dropped_cut = st.dropped_cut;
    bool *cut_done = calloc(run->ncut ? run->ncut : 1, sizeof(bool));
    for (uint32_t i = 0; i < run->ncut; i++) {
        cut_done[i] = ftc_lb_is_cut(C.w, run->cut[i].a, run->cut[i].b);
        out->cuts_done += cut_done[i];
    }
    out->flipped = st.corrupted;
    out->messages = ftc_lb_messages_sent(C.w);
    out->messages_after_delivery = out->messages - C.sent_at_last_delivery;
    bool *live = calloc(n, sizeof(bool));
    uint32_t nlive = 0;
    for (uint32_t r = 0; r < n; r++) {
        live[r] = !ftc_lb_is_crashed(C.w, r);
        nlive += live[r];
        if (r < 64)
            out->sends[r] = ftc_lb_rank_messages_sent(C.w, r);
    }
    out->crashed = n - nlive;
    for (uint32_t i = 0; i < run->ncrash; i++)
        if (!run->crash[i].before && live[run->crash[i].rank])
            out->missed_crashes++;
    /* Results, converted to double. */
    for (uint32_t r = 0; r < n; r++)
        if (run->dtype == FTC_FLOAT)
            for (uint32_t k = 0; k < count; k++)
                C.rs[r].out[k] = C.rs[r].out_f[k];
    if (run->plant_rel != 0.0 && run->plant_rank < n)
        for (uint32_t k = 0; k < count; k++)
            C.rs[run->plant_rank].out[k] *= 1.0 + run->plant_rel;
    for (uint32_t r = 0; r < n; r++) {
        ftc_counters_t cnt;
        ftc_context_counters(ctx[r], &cnt);
        out->dropped_badmsg += cnt.dropped_badmsg + cnt.dropped_version
                               + cnt.dropped_truncated + cnt.dropped_foreign
                               + cnt.dropped_checksum;
        ftc_context_destroy(ctx[r]);
    }
    ftc_lb_world_destroy(C.w);

    ftc_gossip_set_tick_observer(NULL, NULL);
    if (run->trace != NULL) {
        uint32_t every = run->trace_every ? run->trace_every : 1;
        fprintf(run->trace, "# iteration max_rel_error min_rel_error (live "
                            "processes against everyone's aggregate)\n");
        for (uint64_t i = 0; i < C.trace_len; i++)
            if (C.trace_max[i] >= 0.0)
                fprintf(run->trace, "%llu %.6g %.6g\n",
                        (unsigned long long)(i * every), C.trace_max[i],
                        C.trace_min[i]);
        free(C.trace_max), free(C.trace_min);
    }
    bool faults = run->ncrash > 0 || run->drop_prob > 0 || run->flip_prob > 0
                  || run->ncut > 0;
    bool failures = out->crashed > 0 || out->cuts_done > 0;
    bool push_sum = run->algo == FTC_ALGO_PUSH_SUM;
    double target = run->params.target > 0 ? run->params.target
                    : run->dtype == FTC_DOUBLE ? 1e-14
                                               : 1e-6;
    double tol = 4.0 * n * target;
    if (run->dtype == FTC_FLOAT && tol < 4 * 1.2e-7)
        tol = 4 * 1.2e-7;
    bool sum_root_lost = run->params.aggregate == FTC_GOSSIP_SUM && !live[0];

    uint32_t during[GC_MAX_CRASH], ndur = 0;
    for (uint32_t i = 0; i < run->ncrash; i++)
        if (!run->crash[i].before && !live[run->crash[i].rank])
            during[ndur++] = run->crash[i].rank;
    uint32_t *comp = calloc(n, sizeof(uint32_t));
    uint32_t *comp_c = calloc(n, sizeof(uint32_t));
    components(run, live, cut_done, comp);
    uint32_t ncand = 2u << ndur;
    uint32_t cand_comp = UINT32_MAX, cand_nc = 0; /* whose cand[] holds */
    double cand_kappa[2u << GC_MAX_CRASH];
    long double *cand = calloc((size_t)ncand * (count ? count : 1),
                               sizeof(long double));
    bool *in_set = calloc(n, sizeof(bool)), *scenario = calloc(n, sizeof(bool));
    bool pcf_promise = run->algo == FTC_ALGO_PCF
                       && run->params.exclusion != FTC_GOSSIP_EXCLUDE_ALL;
    /* A failure after the first delivery: push-flow's fall-back moves the
     * survivors' value after some have delivered the old one (docs). */
    bool late = out->crashed > C.crashed_at_first
                || out->cuts_done > C.cut_at_first;
    out->late_failure = late;
    long double *agg_all = C.agg_all;
    for (uint32_t q = 0; q < n; q++)
        if (live[q] && C.rs[q].delivered == 1 && C.rs[q].status == FTC_OK) {
            double e = rel_error(count, C.rs[q].out, agg_all);
            if (!(e <= out->max_err_vs_all))
                out->max_err_vs_all = e;
        }
    out->survivors_weight = NAN;
    if (pcf_promise && failures) {
        long double w;
        pcf_value_weight(&C, live, live, cut_done, &w);
        out->survivors_weight =
            (double)(run->params.aggregate == FTC_GOSSIP_AVERAGE ? w : w * n);
    }
    long double total_x[1] = {0}, total_mass[1] = {0}, abs_x = 0;
    for (uint32_t r = 0; r < n; r++) {
        rank_state_t *rs = &C.rs[r];
        if (!live[r])
            continue;
        /* 1: delivery and the end. */
        if (rs->delivered != 1) {
            fail(out, "rank %u delivered %d times", r, rs->delivered);
            continue;
        }
        if (!rs->final_seen || rs->still_ticking)
            fail(out, "rank %u: its operation had not stopped when the "
                      "network went quiet", r);
        /* The report: a failure-free run converges by the local test,
         * whose last value is within target; or, push-flow only, within
         * the rounding floor it reports when that was above the target
         * (docs/gossip.md, "Push-flow's rounding floor"). */
        bool at_target = rs->report.converged == FTC_GOSSIP_AT_TARGET
                         && rs->report.error_estimate <= target;
        bool at_floor = rs->report.converged == FTC_GOSSIP_AT_FLOOR
                        && run->algo == FTC_ALGO_PUSH_FLOW
                        && rs->report.error_estimate > target;
        if (!faults && n > 1 && rs->status == FTC_OK
            && (!(at_target || at_floor) || rs->report.iterations == 0
                || rs->report.neighbours_lost != 0))
            fail(out, "rank %u: report converged %u, %llu iterations, error "
                      "estimate %.3g, %u lost", r, rs->report.converged,
                 (unsigned long long)rs->report.iterations,
                 rs->report.error_estimate, rs->report.neighbours_lost);
        if (rs->report.iterations > out->max_iterations)
            out->max_iterations = rs->report.iterations;
        out->ended_ok += rs->status == FTC_OK;
        out->ended_peer_failed += rs->status == FTC_EPEER_FAILED;
        out->ended_timedout += rs->status == FTC_ETIMEDOUT;
        out->ended_other += rs->status != FTC_OK
                            && rs->status != FTC_EPEER_FAILED
                            && rs->status != FTC_ETIMEDOUT;
        out->at_cap += rs->report.converged == FTC_GOSSIP_AT_CAP
                       && rs->report.iterations
                              >= run->params.max_iterations;
        if (rs->status == FTC_OK
            && rs->report.converged == FTC_GOSSIP_AT_FLOOR) {
            out->at_floor++;
            if (rs->report.error_estimate > out->max_floor)
                out->max_floor = rs->report.error_estimate;
        }
        if (sum_root_lost) {
            if (rs->status != FTC_OK && rs->status != FTC_EROOT_FAILED)
                fail(out, "rank %u: status %d with the sum's root failed", r,
                     rs->status);
        } else if ((rs->status == FTC_EPEER_FAILED
                    || rs->status == FTC_ETIMEDOUT) && failures
                   && pcf_promise) {
            /* PCF's exclusion of flows left no positive weight: allowed
             * only where no value exists, V's weight over r's component
             * not positive, and then promptly (op.c,
             * no_estimate_exists), not at the iteration cap. */
            long double w;
            for (uint32_t q = 0; q < n; q++)
                in_set[q] = live[q] && comp[q] == comp[r];
            pcf_value_weight(&C, live, in_set, cut_done, &w);
            if (w > 0)
                fail(out, "rank %u: status %d, but V's weight over its "
                          "component is %.6Lg shares: a value exists", r,
                     rs->status, run->params.aggregate == FTC_GOSSIP_AVERAGE
                                     ? w : w * n);
            else if (rs->report.iterations >= run->params.max_iterations)
                fail(out, "rank %u: status %d only at the iteration cap "
                          "(%llu): V has no positive weight, and it should "
                          "have ended once its own stayed non-positive", r,
                     rs->status, (unsigned long long)rs->report.iterations);
        } else if (rs->status == FTC_ETIMEDOUT && run->accuracy_recorded_only) {
            /* A flip left no positive weight here: no estimate to give. */
        } else if (rs->status != FTC_OK) {
            fail(out, "rank %u: status %d", r, rs->status);
        }
        /* 2: accuracy, against the candidates of r's component: the
         * survivors in it plus any subset of those that crashed during
         * the operation, and for PCF its mass account's value. */
        if (rs->status == FTC_OK && !(push_sum && faults)
            && comp[r] == cand_comp) {
            /* r's component's candidates are those just computed: every
             * process of one component shares them (adding the crashed of
             * a subset back only merges components). */
        } else if (rs->status == FTC_OK && !(push_sum && faults)) {
            uint32_t nc = 0;
            for (uint32_t c = 0; c < (1u << ndur); c++) {
                /* Those of the subset count as alive (not yet excluded):
                 * r's component may reach further through them. */
                memcpy(scenario, live, sizeof(bool) * n);
                for (uint32_t i = 0; i < ndur; i++)
                    if (c & (1u << i))
                        scenario[during[i]] = true;
                components(run, scenario, cut_done, comp_c);
                for (uint32_t q = 0; q < n; q++)
                    in_set[q] = scenario[q] && comp_c[q] == comp_c[r];
                cand_kappa[nc] = 1.0;
                aggregate(run, C.rs, in_set, cand + (size_t)nc++ * count);
                /* PCF: the value its mass account promises for the
                 * failures of this scenario (those of the subset not yet
                 * happened), where one exists. */
                long double w;
                if (pcf_promise
                    && pcf_value(&C, scenario, in_set, cut_done,
                                 cand + (size_t)nc * count, &cand_kappa[nc],
                                 &w))
                    nc++;
            }
            cand_comp = comp[r];
            cand_nc = nc;
        }
        if (rs->status == FTC_OK && !(push_sum && faults)) {
            uint32_t nc = cand_nc;
            /* The candidate nearest in units of its own tolerance. */
            double best = INFINITY, kappa = 1.0, best_scaled = INFINITY;
            for (uint32_t c = 0; c < nc; c++) {
                double e = rel_error(count, rs->out, cand + (size_t)c * count);
                if (!(e / cand_kappa[c] >= best_scaled)) {
                    best_scaled = e / cand_kappa[c];
                    best = e;
                    kappa = cand_kappa[c];
                }
            }
            bool falls_back = run->algo == FTC_ALGO_PUSH_FLOW
                              || (run->algo == FTC_ALGO_PCF
                                  && run->params.exclusion
                                         == FTC_GOSSIP_EXCLUDE_ALL);
            if (late && falls_back) {
                /* Only that the value is a mean of inputs (average). */
                if (run->params.aggregate == FTC_GOSSIP_AVERAGE)
                    for (uint32_t k = 0; k < count; k++) {
                        double lo = INFINITY, hi = -INFINITY;
                        for (uint32_t q = 0; q < n; q++) {
                            lo = C.rs[q].in[k] < lo ? C.rs[q].in[k] : lo;
                            hi = C.rs[q].in[k] > hi ? C.rs[q].in[k] : hi;
                        }
                        double slack = tol * (fabs(lo) + fabs(hi));
                        if (!(rs->out[k] >= lo - slack && rs->out[k] <= hi + slack))
                            fail(out, "rank %u: %.17g is outside the inputs' "
                                      "range after a late failure", r, rs->out[k]);
                    }
            } else {
                if (!(best <= out->max_rel_error))
                    out->max_rel_error = best;
                /* A push-flow process whose test passed at its rounding
                 * floor is held to c(n) times the accuracy it reports
                 * instead of the target it says it did not reach. */
                double tol_r = tol;
                if (run->algo == FTC_ALGO_PUSH_FLOW
                    && rs->report.converged == FTC_GOSSIP_AT_FLOOR
                    && rs->report.error_estimate > target)
                    tol_r = tol / target * rs->report.error_estimate;
                if (!(best <= tol_r * kappa) && !run->accuracy_recorded_only)
                    fail(out, "rank %u: relative error %.3g above %.3g (%llu "
                              "iterations, converged %u, estimate %.17g%s)",
                         r, best, tol_r * kappa,
                         (unsigned long long)rs->report.iterations,
                         rs->report.converged, count ? rs->out[0] : 0.0,
                         late ? ", late failure" : "");
            }
        }
        /* 3: mass conservation. */
        if (!push_sum && !run->accuracy_recorded_only
            && !(rs->identity_residual <= 1e-9))
            fail(out, "rank %u: mass account off by %.3g (relative)", r,
                 rs->identity_residual);
        if (!failures)
            for (uint32_t k = 0; k < m; k++)
                if (rs->wo[k] != 0.0)
                    fail(out, "rank %u wrote off mass without a failure", r);
        /* ... and PCF writes off only what it had cancelled on the links
         * it excluded (the record pcf.c keeps), so the mass account's value
         * above, computed from those records, is the one it promises. */
        if (run->algo == FTC_ALGO_PCF && !run->accuracy_recorded_only)
            for (uint32_t k = 0; k < m; k++) {
                double d = fabs(rs->wo[k] - rs->wo_check[k]);
                double sc = fabs(rs->wo[k]) + fabs(rs->wo_check[k]);
                if (!(d <= 1e-9 * sc))
                    fail(out, "rank %u wrote off %.17g, but had cancelled "
                              "%.17g on the links it excluded", r, rs->wo[k],
                         rs->wo_check[k]);
            }
        out->unnoticed_failed_links += rs->unnoticed;
        total_x[0] += rs->x[0];
        total_mass[0] += rs->mass[0];
        abs_x += fabsl((long double)rs->x[0]);
    }
    if (run->algo == FTC_ALGO_PCF && !run->accuracy_recorded_only
        && run->params.exclusion != FTC_GOSSIP_EXCLUDE_ALL)
        cancellations_agree(&C, live, cut_done, out);
    if (push_sum && !faults && count > 0
        && !(fabsl(total_x[0] - total_mass[0]) <= 1e-12L * abs_x))
        fail(out, "push-sum lost mass: inputs %.17Lg, masses %.17Lg",
             total_x[0], total_mass[0]);

    for (uint32_t r = 0; r < n; r++) {
        free(C.rs[r].in), free(C.rs[r].out), free(C.rs[r].in_f);
        free(C.rs[r].out_f), free(C.rs[r].mass), free(C.rs[r].x);
        free(C.rs[r].wo);
        free(C.rs[r].wo_check), free(C.rs[r].peer), free(C.rs[r].round);
        free(C.rs[r].link_cancelled);
    }
    free(C.rs), free(C.groups), free(ctx), free(live), free(crashed_before);
    free(cand), free(in_set), free(scenario), free(comp), free(comp_c), free(cut_done);
    free(C.agg_all);
    ftc_gossip_set_observer(NULL, NULL);
    cur = NULL;
}
