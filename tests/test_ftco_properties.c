/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's property checker (Margolin & Barak, Definitions 3.1
 * and 3.2; docs/ftco.md, "Guarantees"), on the loopback backend.
 *
 *   exhaustive: every crash set of size <= fmax, each member crashing
 *     before the operation or right after its K-th send, K = 0 .. (its
 *     sends in the failure-free run) + 2; root included, for every n in
 *     [nmin, nmax], every collective asked for, k-nomial and k-ary trees.
 *   random: seeded random crash sets and crash points, and with --spread
 *     random arrival times (Appendix B's imbalance), up to n = 1024.
 *   one: the schedule of --crash r:K,r:before,... only.
 * With --second, a second operation follows on the same group, where the
 * crashed ranks are known failed at some ranks and not at others.
 * With --ack-timeout-ns T the family's per-message timeouts are on; with
 * --slow r,... those ranks' messages take 10 s (a stopped process): they
 * count as failed once the group excluded them. With --slow each, one
 * rank is stopped per schedule: every rank in turn (exhaustive), or a
 * seeded random one, a root of the tree every other run (random).
 *
 * Every run asserts, with "live" the processes not crashed at the end:
 *   1. termination: every live process delivered, exactly once, and no
 *      process delivered twice;
 *   2. reduce/allreduce: the result is the reduction of exactly the
 *      contributions the completion does not list as missing, each once
 *      (each input is (1, a random 40-bit value), summed: a contribution
 *      counted twice or a wrong set shows in both words), and every live
 *      process's contribution is in it (RemainingNodes within
 *      ReducedNodes);
 *   3. consistency: every live process that delivered an allreduce has
 *      the same result and the same missing list; a bcast delivers the
 *      root's value at every live process, or, only when the root
 *      crashed, FTC_EROOT_FAILED at every live process;
 *   4. the injected crashes happened (the schedule was not vacuous).
 * A stopped process counts as failed once the group excluded it; a
 * healthy one may not be excluded, but in a world of two (the crashes
 * leave the stopped one and one other: check_run), where either or both
 * may be, and each is checked with the other counted failed.
 *
 * Failure detection: the loopback's transport reports (default), or with
 * --keepalive only the core's keepalive probes.
 * A violation prints the schedule that reproduces it (the first 20, or
 * --show N); --mode one --crash ... --trace replays one and prints every
 * message sent, every failure a process declares and every delivery, in
 * virtual time.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll_loopback.h"
/* --trace: the messages' headers, and what a context counts as observed */
#include "core/context.h"
#include "wire/wire.h"
/* --mutant: the exchange's rules, one dropped (lib/algo/ftco/exchange.h) */
#include "algo/ftco/exchange.h"
#include "algo/ftco/kinds.h"

#define MAXF 8

typedef struct crash {
    uint32_t rank;
    uint64_t after; /* UINT64_MAX: before the operation */
} crash_t;

typedef struct sched {
    uint32_t n, root;
    ftc_coll_t coll;
    ftc_tree_t tree;
    bool keepalive_only;
    uint64_t seed;
    uint64_t spread_ns;   /* arrival times uniform in [0, spread_ns] */
    uint64_t ack_timeout_ns; /* the family's per-message timeouts */
    uint32_t nslow;       /* these ranks are slow (a SIGSTOP's effect):  */
    uint32_t slow[MAXF];  /* their messages take 10 s longer */
    bool slow_each;       /* --slow each: one stopped rank per schedule */
    bool second;          /* then a second operation on the same group,
                             where some know of the crashes, some not */
    uint32_t ncrash;
    crash_t crash[MAXF];
} sched_t;

typedef struct rank_out {
    uint32_t rank;
    int calls;
    int status;
    int64_t val[2];
    uint32_t nfailed;
    uint32_t *failed;
} rank_out_t;

typedef struct run {
    const sched_t *s;
    ftc_lb_world_t *w;
    ftc_context_t **ctx;
    ftc_group_t **g;
    int64_t (*in)[2];
    int64_t (*out)[2];
    rank_out_t *res;
    uint64_t *sends;   /* per rank, after the run */
    uint64_t msgs, events;
    bool second;       /* the second operation is being checked */
    int64_t also_gone; /* a live rank checked as failed (world of two) */
} run_t;

static uint64_t runs, failures, total_msgs;
static const char *colls_arg = "reduce,bcast,allreduce";

/* ---- --trace ------------------------------------------------------------ */

/* The run being traced: the loopback's ops, wrapped to print what each
 * rank sends and declares failed. One run at a time (--mode one). */
static bool trace;
static uint64_t show_max = 20;  /* failing schedules printed (--show) */
static const run_t *trace_run;
static ftc_transport_ops_t trace_ops;

static uint32_t trace_rank(void *tp)
{
    for (uint32_t r = 0; trace_run != NULL && r < trace_run->s->n; r++)
        if (ftc_lb_endpoint(trace_run->w, r) == tp)
            return r;
    return UINT32_MAX;
}

static double trace_now(void)
{
    return (double)ftc_lb_now(trace_run->w) / 1e9;
}

static const char *trace_kind(const ftc_wire_header_t *h)
{
    static const char *const family[] = {"?", "UP", "DOWN", "ACK",
                                         "KEEPALIVE", "EXCH"};
    static const char *const core[] = {"PROBE", "PROBE_ACK", "EXCLUDED",
                                       "LEAVE", "ENDED", "STOPPED", "CREDIT"};
    if (h->kind >= FTC_MSG_CORE_MIN && h->kind <= FTC_MSG_CORE_MAX)
        return core[h->kind - FTC_MSG_CORE_MIN];
    return h->kind <= FTCO_MSG_EXCH ? family[h->kind] : "?";
}

static int trace_send(void *tp, uint32_t dest, const void *buf, size_t len,
                      void *cookie)
{
    uint32_t r = trace_rank(tp);
    ftc_wire_header_t h;
    bool dead = r != UINT32_MAX && ftc_lb_is_crashed(trace_run->w, r);
    if (!dead && ftc_wire_decode(buf, len, 0, trace_run->s->n, &h) == FTC_OK)
        printf("%12.6f  %u -> %u  %-9s flags %#06x aux %u seq %" PRIu64 "\n",
               trace_now(), r, dest, trace_kind(&h), h.flags, h.aux, h.seq);
    int rc = ftc_lb_ops()->send(tp, dest, buf, len, cookie);
    if (!dead && r != UINT32_MAX && ftc_lb_is_crashed(trace_run->w, r))
        printf("%12.6f  %u crashes\n", trace_now(), r);
    return rc;
}

static void trace_peer_down(void *tp, uint32_t peer)
{
    uint32_t r = trace_rank(tp);
    if (r == UINT32_MAX)
        return;
    const ftc_context_t *c = trace_run->ctx[r];
    printf("%12.6f  %u declares %u failed (%u of its %u failures its own)\n",
           trace_now(), r, peer, c->nfailed_observed, c->nfailed);
    if (ftc_lb_ops()->peer_down != NULL)
        ftc_lb_ops()->peer_down(tp, peer);
}

static const ftc_transport_ops_t *run_ops(void)
{
    if (!trace)
        return ftc_lb_ops();
    trace_ops = *ftc_lb_ops();
    trace_ops.send = trace_send;
    trace_ops.peer_down = trace_peer_down;
    return &trace_ops;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int64_t input_of(const sched_t *s, uint32_t r)
{
    return (int64_t)(mix(s->seed * 1000003u + r) & 0xFFFFFFFFFFull);
}

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_out_t *o = arg;
    if (trace) {
        printf("%12.6f  %u delivers: %s, listed failed:", trace_now(),
               o->rank, ftc_strerror(c->status));
        for (uint32_t i = 0; i < c->nfailed; i++)
            printf(" %u", c->failed[i]);
        printf("\n");
    }
    o->calls++;
    o->status = c->status;
    free(o->failed);
    o->failed = NULL;
    o->nfailed = c->nfailed;
    if (c->nfailed > 0) {
        o->failed = malloc(sizeof(uint32_t) * c->nfailed);
        memcpy(o->failed, c->failed, sizeof(uint32_t) * c->nfailed);
    }
}

static void print_sched(const sched_t *s)
{
    fprintf(stderr, "  schedule: %s n=%u root=%u tree=%s k=%u%s seed=%" PRIu64
                    " spread=%" PRIu64 " crashes:",
            ftc_coll_name(s->coll), s->n, s->root,
            ftc_tree_kind_name(s->tree.kind), s->tree.k,
            s->keepalive_only ? " keepalive-only" : "", s->seed, s->spread_ns);

    for (uint32_t i = 0; i < s->ncrash; i++) {
        if (s->crash[i].after == UINT64_MAX)
            fprintf(stderr, " %u:before", s->crash[i].rank);
        else
            fprintf(stderr, " %u:%" PRIu64, s->crash[i].rank,
                    s->crash[i].after);
    }
    for (uint32_t i = 0; i < s->nslow; i++)
        fprintf(stderr, "%s%u", i == 0 ? " slow: " : ",", s->slow[i]);
    fprintf(stderr, "%s\n", s->second ? " (then a second operation)" : "");
}

static int start_rank(run_t *R, uint32_t r)
{
    const sched_t *s = R->s;
    ftc_ftco_params_t p;
    ftc_ftco_params_init(&p);
    p.tree = s->tree;
    p.ack_timeout_ns = s->ack_timeout_ns;
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = FTC_ALGO_FTCO;
    a.params = &p;
    a.root = s->root;
    a.f = 0; /* ftco does not bound the failures it tolerates */
    a.dtype = FTC_INT64;
    a.op = FTC_SUM;
    a.count = 2;
    R->in[r][0] = 1;
    R->in[r][1] = input_of(s, r);
    a.sendbuf = R->in[r];
    a.recvbuf = R->out[r];
    a.deliver = on_deliver;
    a.deliver_arg = &R->res[r];
    switch (s->coll) {
    case FTC_COLL_REDUCE: return ftc_init_reduce(R->g[r], &a, NULL);
    case FTC_COLL_BCAST: return ftc_init_bcast(R->g[r], &a, NULL);
    default: return ftc_init_allreduce(R->g[r], &a, NULL);
    }
}


/* Run s; R is filled in (free with run_free). */
static void run_sched(const sched_t *s, run_t *R)
{
    uint32_t n = s->n;
    memset(R, 0, sizeof(*R));
    R->s = s;
    R->ctx = calloc(n, sizeof(*R->ctx));
    R->g = calloc(n, sizeof(*R->g));
    R->in = calloc(n, sizeof(*R->in));
    R->out = calloc(n, sizeof(*R->out));
    R->res = calloc(n, sizeof(*R->res));
    R->sends = calloc(n, sizeof(*R->sends));
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = s->seed;
    if (s->keepalive_only)
        lc.detect_delay_ns = UINT64_MAX;
    if (ftc_lb_world_create(&lc, &R->w) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.seed = s->seed;
    trace_run = R;
    for (uint32_t r = 0; r < n; r++) {
        R->res[r].rank = r;
        if (ftc_context_create(r, n, run_ops(), ftc_lb_endpoint(R->w, r),
                               &cfg, &R->ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(R->w, r, R->ctx[r]);
        if (ftc_group_create(R->ctx[r], 1, 0, n, NULL, &R->g[r]) != FTC_OK)
            abort();
    }
    for (uint32_t i = 0; i < s->ncrash; i++) {
        if (s->crash[i].after == UINT64_MAX)
            ftc_lb_crash(R->w, s->crash[i].rank);
        else
            ftc_lb_crash_after_sends(R->w, s->crash[i].rank, s->crash[i].after);
    }
    for (uint32_t i = 0; i < s->nslow; i++)
        ftc_lb_set_delay(R->w, s->slow[i], 10ull * 1000 * 1000 * 1000);
    /* Arrival times: all at 0, or spread (Appendix B). */
    uint64_t *start = calloc(n, sizeof(uint64_t));
    uint32_t *order = calloc(n, sizeof(uint32_t));
    for (uint32_t r = 0; r < n; r++) {
        order[r] = r;
        if (s->spread_ns > 0)
            start[r] = mix(s->seed ^ (0xabcdull + r)) % (s->spread_ns + 1);
    }
    /* insertion sort by start time (n <= a few thousand) */
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = order[i], j = i;
        while (j > 0 && start[order[j - 1]] > start[v]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = order[i];
        if (start[r] > 0)
            ftc_lb_run_until(R->w, start[r], UINT64_MAX);
        if (ftc_lb_is_crashed(R->w, r))
            continue;
        int rc = start_rank(R, r);
        if (rc != FTC_OK) {
            fprintf(stderr, "FAIL: init at %u: %s\n", r, ftc_strerror(rc));
            failures++;
        }
    }
    free(start);
    free(order);
    /* A run that has not ended after this many events is a livelock: the
     * checker reports it (live ranks that never delivered). */
    R->events = ftc_lb_run(R->w, 2000000ull + 20000ull * n);
    for (uint32_t r = 0; r < n; r++)
        R->sends[r] = ftc_lb_rank_messages_sent(R->w, r);
    R->msgs = ftc_lb_messages_sent(R->w);
}

/* The second operation: every live rank starts it once the first has
 * ended everywhere; the crashed ranks are known failed at the ranks that
 * waited on them and unknown at the others. */
static void run_second(run_t *R)
{
    uint32_t n = R->s->n;
    R->second = true;
    for (uint32_t r = 0; r < n; r++) {
        free(R->res[r].failed);
        memset(&R->res[r], 0, sizeof(R->res[r]));
        R->res[r].rank = r;
        R->out[r][0] = R->out[r][1] = 0;
    }
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_lb_is_crashed(R->w, r))
            continue;
        int rc = start_rank(R, r);
        /* A process the group excluded in the first operation is a
         * failed one: the API refuses its later operations with
         * FTC_EEXCLUDED (docs/semantics.md), and check() counts it
         * failed. */
        if (rc == FTC_EEXCLUDED && ftc_context_is_excluded(R->ctx[r]))
            continue;
        if (rc != FTC_OK) {
            fprintf(stderr, "FAIL: second init at %u: %s\n", r, ftc_strerror(rc));
            failures++;
        }
    }
    R->events = ftc_lb_run(R->w, 2000000ull + 20000ull * n);
}

static void run_free(run_t *R)
{
    for (uint32_t r = 0; r < R->s->n; r++) {
        ftc_context_destroy(R->ctx[r]);
        free(R->res[r].failed);
    }
    ftc_lb_world_destroy(R->w);
    free(R->ctx);
    free(R->g);
    free(R->in);
    free(R->out);
    free(R->res);
    free(R->sends);
}

/* Failed for the properties: crashed, or a slow rank the group excluded
 * (the crash it was taken for, at the moment it learnt it: what it
 * delivered before is what a process that crashed after delivering may
 * have seen). Only slow ranks may be excluded (but in a world of two:
 * check_run). */
static bool gone(const run_t *R, uint32_t r)
{
    if (ftc_lb_is_crashed(R->w, r) || (int64_t)r == R->also_gone)
        return true;
    /* In the second operation every excluded process is a failed one,
     * whatever excluded it (a slow one's verdicts may have evicted a
     * healthy one in the first: what that one delivered was checked
     * there); its second operation was refused (run_second). */
    if (R->second && ftc_context_is_excluded(R->ctx[r]))
        return true;
    for (uint32_t i = 0; i < R->s->nslow; i++)
        if (R->s->slow[i] == r)
            return ftc_context_is_excluded(R->ctx[r]) != 0;
    return false;
}

static bool listed(const rank_out_t *o, uint32_t r)
{
    for (uint32_t i = 0; i < o->nfailed; i++)
        if (o->failed[i] == r)
            return true;
    return false;
}

/* The properties; 0 or a message in msg. */
static int check(const run_t *R, char *msg, size_t len)
{
    const sched_t *s = R->s;
    uint32_t n = s->n;
    bool root_live = !gone(R, s->root);
    for (uint32_t i = 0; i < s->ncrash; i++)
        if (!ftc_lb_is_crashed(R->w, s->crash[i].rank)
            && s->crash[i].after <= R->sends[s->crash[i].rank]) {
            snprintf(msg, len, "rank %u should have crashed", s->crash[i].rank);
            return 1;
        }
    if (R->events >= 2000000ull + 20000ull * n) {
        snprintf(msg, len, "no end after %" PRIu64 " events", R->events);
        return 1;
    }
    int64_t ref_sum = 0;
    int ref = -1;
    for (uint32_t r = 0; r < n; r++) {
        bool live = !gone(R, r);
        const rank_out_t *o = &R->res[r];
        if (o->calls > 1) {
            snprintf(msg, len, "rank %u delivered %d times", r, o->calls);
            return 1;
        }
        if (!live)
            continue;
        if (o->calls != 1) {
            snprintf(msg, len, "live rank %u never delivered", r);
            return 1;
        }
        if (s->coll == FTC_COLL_BCAST) {
            if (o->status == FTC_EROOT_FAILED && !root_live)
                ;
            else if (o->status != FTC_OK) {
                snprintf(msg, len, "bcast at %u: %s", r, ftc_strerror(o->status));
                return 1;
            } else if (memcmp(R->out[r], R->in[s->root], 16) != 0
                       && r != s->root) {
                /* in[root] was filled by the root's start; a root that
                 * crashed before starting left it 0, and nobody can
                 * have its value then. */
                snprintf(msg, len, "bcast at %u: wrong value", r);
                return 1;
            }
            if (ref < 0)
                ref = (int)r;
            else if (R->res[ref].status != o->status) {
                snprintf(msg, len, "bcast: %u and %u disagree (%s / %s)",
                         (uint32_t)ref, r, ftc_strerror(R->res[ref].status),
                         ftc_strerror(o->status));
                return 1;
            }
            continue;
        }
        if (o->status != FTC_OK) {
            snprintf(msg, len, "%s at %u: %s", ftc_coll_name(s->coll), r,
                     ftc_strerror(o->status));
            return 1;
        }
        if (s->coll == FTC_COLL_REDUCE && r != s->root)
            continue;
        /* The result is the sum of exactly the unlisted contributions. */
        int64_t cnt = 0, sum = 0;
        for (uint32_t q = 0; q < n; q++)
            if (!listed(o, q)) {
                cnt++;
                sum += input_of(s, q);
            }
        if (R->out[r][0] != cnt || R->out[r][1] != sum) {
            snprintf(msg, len,
                     "%s at %u: result (%" PRId64 ", %" PRId64
                     ") is not the sum of its %" PRId64 " unlisted inputs",
                     ftc_coll_name(s->coll), r, R->out[r][0], R->out[r][1],
                     cnt);
            return 1;
        }
        for (uint32_t q = 0; q < n; q++)
            if (!gone(R, q) && listed(o, q)) {
                snprintf(msg, len, "%s at %u: live rank %u's input missing",
                         ftc_coll_name(s->coll), r, q);
                return 1;
            }
        if (ref < 0) {
            ref = (int)r;
            ref_sum = sum;
        } else if (sum != ref_sum || cnt != R->out[ref][0]) {
            snprintf(msg, len, "allreduce: %u and %u disagree", (uint32_t)ref, r);
            return 1;
        }
    }
    return 0;
}

static bool is_slow(const sched_t *s, uint32_t r)
{
    for (uint32_t i = 0; i < s->nslow; i++)
        if (s->slow[i] == r)
            return true;
    return false;
}

/* A world of two: the crashes left two processes running, one of them
 * stopped. Neither end of a link slow one way can tell which end is at
 * fault, and no rule under final suspicion can keep the healthy one
 * (docs/ftco.md, "A world of two", proves it): the group may exclude
 * either of the two, or both (each has observed most of the world
 * failed: the crashes and the other one). What must hold, and is
 * checked: two that both stay in the group agree (the ordinary check,
 * when neither was excluded); when one or both were excluded, each
 * delivered what the properties ask of it with the other counted
 * failed (a healthy one that was excluded, too: what it delivered
 * before is checked, as everywhere else). */
static int check_run(run_t *R, char *msg, size_t len)
{
    const sched_t *s = R->s;
    uint32_t pair[2], live = 0;
    bool slow_live = false;
    for (uint32_t r = 0; r < s->n; r++)
        if (!ftc_lb_is_crashed(R->w, r)) {
            if (live < 2)
                pair[live] = r;
            live++;
            slow_live |= is_slow(s, r);
        }
    if (R->second || live != 2 || !slow_live
        || (!ftc_context_is_excluded(R->ctx[pair[0]])
            && !ftc_context_is_excluded(R->ctx[pair[1]])))
        return check(R, msg, len);
    for (int i = 0; i < 2; i++) {
        R->also_gone = pair[1 - i];
        int bad = check(R, msg, len);
        R->also_gone = -1;
        if (bad != 0) {
            size_t l = strlen(msg);
            snprintf(msg + l, len - l, " (world of two, %u counted failed)",
                     pair[1 - i]);
            return bad;
        }
    }
    return 0;
}

static uint64_t run_one(const sched_t *s, uint64_t *sends_out)
{
    uint64_t msgs;
    run_t R;
    char msg[256];
    if (trace)
        print_sched(s);
    run_sched(s, &R);
    R.also_gone = -1;
    runs++;
    total_msgs += R.msgs;
    int bad = check_run(&R, msg, sizeof(msg));
    if (trace)
        for (uint32_t r = 0; r < s->n; r++)
            printf("end: rank %u %s%s, delivered %d time(s)%s%s\n", r,
                   ftc_lb_is_crashed(R.w, r) ? "crashed" : "running",
                   ftc_context_is_excluded(R.ctx[r]) ? ", excluded" : "",
                   R.res[r].calls, R.res[r].calls > 0 ? ": " : "",
                   R.res[r].calls > 0 ? ftc_strerror(R.res[r].status) : "");
    if (bad == 0 && s->second) {
        run_second(&R);
        bad = check(&R, msg, sizeof(msg));
        if (bad != 0) {
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof(msg) - l, " (second operation)");
        }
    }
    if (bad != 0) {
        failures++;
        if (failures <= show_max) {
            fprintf(stderr, "FAIL: %s\n", msg);
            print_sched(s);
        }
    }
    if (sends_out != NULL)
        memcpy(sends_out, R.sends, sizeof(uint64_t) * s->n);
    msgs = R.msgs;
    run_free(&R);
    return msgs;
}

/* A failure-free run costs a DATA and its ACK per tree edge and phase:
 * 2(n-1) for reduce and bcast. An allreduce's result carries the ACK of
 * the DATA it answers (docs/ftco.md, "ACKs carried by the result")
 * and goes unacknowledged to every process that is not a root
 * (docs/ftco.md, "No ACK of the result"), it costs 2(n-1), the plain
 * tree's UP and DOWN per edge (the paper's 3 per process had the DOWN's
 * ACK too). With
 * per-message timeouts the ACKs go as the paper sends them, 4(n-1), but
 * for the DATA that completes the root's collection: the result leaves in
 * the same turn and carries its ACK. A multi-root allreduce's m roots
 * exchange their values instead (m(m-1) messages, none ACKed) and then
 * send each other the result, ACKed (2m(m-1): the wait that makes a
 * cut-off root accept its exclusion), so only the n - m edges below them
 * cost two (four with per-message timeouts, less the ACKs a root owes
 * its children: they wait for the result, which carries them). */
static void check_clean(const sched_t *s, uint64_t msgs)
{
    uint64_t want = 2ull * (s->n - 1);
    uint64_t m = ftc_tree_root_count(&s->tree, s->n);
    if (s->coll == FTC_COLL_ALLREDUCE && s->ack_timeout_ns == 0) {
        /* An UP and a DOWN per edge below the roots: the result carries
         * the ACK of the UP and goes unacknowledged to every process
         * that is not a root (docs/ftco.md, "No ACK of the result"). */
        want = 2ull * (s->n - m) + 3 * m * (m - 1);
    } else if (s->coll == FTC_COLL_ALLREDUCE && m >= 2) {
        uint64_t below = 0; /* the roots' children in their own trees */
        for (uint32_t r = 0; r < m; r++)
            below += ftc_tree_children(&s->tree, s->n, r, NULL, 0);
        below -= m - 1;
        want = 4ull * (s->n - m) + 3 * m * (m - 1) - below;
    } else if (s->coll == FTC_COLL_ALLREDUCE && s->n >= 2) {
        want = 4ull * (s->n - 1) - 1;
    }
    if (msgs != want) {
        failures++;
        fprintf(stderr, "FAIL: failure-free run sent %" PRIu64
                        " messages, not %" PRIu64 "\n", msgs, want);
        print_sched(s);
    }
}

/* ---- exhaustive -------------------------------------------------------- */

static void enum_points(sched_t *s, const uint64_t *sends, uint32_t i)
{
    if (i == s->ncrash) {
        run_one(s, NULL);
        return;
    }
    /* ncrash <= MAXF; said again for gcc -O3, which inlines the recursion
     * past the array's end and refuses it (-Warray-bounds). */
    if (i >= MAXF)
        return;
    s->crash[i].after = UINT64_MAX;
    enum_points(s, sends, i + 1);
    for (uint64_t k = 0; k <= sends[s->crash[i].rank] + 2; k++) {
        s->crash[i].after = k;
        enum_points(s, sends, i + 1);
    }
}

static void enum_sets(sched_t *s, const uint64_t *sends, uint32_t want,
                      uint32_t next)
{
    if (s->ncrash == want) {
        enum_points(s, sends, 0);
        return;
    }
    for (uint32_t r = next; r < s->n; r++) {
        s->crash[s->ncrash++].rank = r;
        enum_sets(s, sends, want, r + 1);
        s->ncrash--;
    }
}

static void exhaustive(sched_t base, uint32_t fmax)
{
    uint64_t *sends = calloc(base.n, sizeof(uint64_t));
    base.ncrash = 0;
    uint64_t clean = run_one(&base, sends);
    if (base.nslow == 0)
        check_clean(&base, clean);
    for (uint32_t f = 1; f <= fmax && f < base.n; f++) {
        sched_t s = base;
        s.ncrash = 0;
        enum_sets(&s, sends, f, 0);
    }
    free(sends);
}

/* ---- random ------------------------------------------------------------ */

static void random_runs(sched_t base, uint32_t fmax, uint32_t count,
                        uint64_t seed)
{
    uint64_t *sends = calloc(base.n, sizeof(uint64_t));
    base.ncrash = 0;
    uint64_t clean = run_one(&base, sends);
    if (base.spread_ns == 0 && base.nslow == 0)
        check_clean(&base, clean);
    for (uint32_t i = 0; i < count; i++) {
        sched_t s = base;
        s.seed = seed * 7919u + i;
        uint64_t x = mix(s.seed);
        uint32_t f = fmax > 0 ? (uint32_t)(x % (fmax + 1)) : 0;
        s.ncrash = 0;
        if (s.slow_each) {
            /* The roots are where a stopped process has hurt (the
             * multi-root exchange), and few among n: half the runs. */
            uint32_t m = ftc_tree_root_count(&s.tree, s.n);
            x = mix(x);
            s.nslow = 1;
            s.slow[0] = (uint32_t)(x % (i % 2 == 0 ? m : s.n));
        }
        for (uint32_t j = 0; j < f; j++) {
            x = mix(x);
            uint32_t r = (uint32_t)(x % s.n);
            bool dup = false;
            for (uint32_t t = 0; t < s.ncrash; t++)
                dup |= s.crash[t].rank == r;
            if (dup)
                continue;
            x = mix(x);
            s.crash[s.ncrash].rank = r;
            s.crash[s.ncrash++].after =
                x % 3 == 0 ? UINT64_MAX : (x >> 8) % (sends[r] + 2);
        }
        run_one(&s, NULL);
    }
    free(sends);
}

/* ---- main -------------------------------------------------------------- */

static bool want_coll(const char *name)
{
    const char *p = strstr(colls_arg, name);
    while (p != NULL) {
        /* "reduce" is inside "allreduce": match whole names only */
        bool start = p == colls_arg || p[-1] == ',';
        size_t l = strlen(name);
        if (start && (p[l] == ',' || p[l] == '\0'))
            return true;
        p = strstr(p + 1, name);
    }
    return false;
}

int main(int argc, char **argv)
{
    const char *mode = "exhaustive";
    const char *one_crashes = NULL;
    const char *slow_arg = NULL;
    uint64_t ack_timeout = 0;
    uint32_t nmin = 1, nmax = 6, fmax = 2, count = 20;
    uint64_t seed = 1, spread = 0;
    bool keepalive = false, rotate = false, second = false;
    const char *trees = "knomial:2,knomial:3,kary:2";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--mode") == 0 && v) mode = argv[++i];
        else if (strcmp(a, "--nmin") == 0 && v) nmin = (uint32_t)atoi(argv[++i]);
        else if (strcmp(a, "--nmax") == 0 && v) nmax = (uint32_t)atoi(argv[++i]);
        else if (strcmp(a, "--fmax") == 0 && v) fmax = (uint32_t)atoi(argv[++i]);
        else if (strcmp(a, "--runs") == 0 && v) count = (uint32_t)atoi(argv[++i]);
        else if (strcmp(a, "--seed") == 0 && v) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--spread-ns") == 0 && v) spread = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--colls") == 0 && v) colls_arg = argv[++i];
        else if (strcmp(a, "--trees") == 0 && v) trees = argv[++i];
        else if (strcmp(a, "--keepalive") == 0) keepalive = true;
        else if (strcmp(a, "--second") == 0) second = true;
        else if (strcmp(a, "--ack-timeout-ns") == 0 && v) ack_timeout = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--slow") == 0 && v) slow_arg = argv[++i];
        else if (strcmp(a, "--crash") == 0 && v) one_crashes = argv[++i];
        else if (strcmp(a, "--rotate-root") == 0) rotate = true;
        else if (strcmp(a, "--trace") == 0) trace = true;
        else if (strcmp(a, "--show") == 0 && v) show_max = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--mutant") == 0 && v) {
            const char *mu = argv[++i];
            if (strcmp(mu, "keep-values") == 0)
                ftco_exchange_mutant = FTCO_MUTANT_KEEP_VALUES;
            else if (strcmp(mu, "no-commit") == 0)
                ftco_exchange_mutant = FTCO_MUTANT_NO_COMMIT;
            else if (strcmp(mu, "no-gather-roots") == 0)
                ftco_exchange_mutant = FTCO_MUTANT_NO_GATHER_ROOTS;
            else {
                fprintf(stderr, "test_ftco_properties: --mutant: unknown "
                                "'%s' (keep-values, no-commit, "
                                "no-gather-roots)\n", mu);
                return 2;
            }
        }
        else {
            fprintf(stderr, "test_ftco_properties: unknown or incomplete "
                            "argument '%s'\n", a);
            return 2;
        }
    }
    if (nmin < 1 || nmax < nmin || fmax > MAXF) {
        fprintf(stderr, "test_ftco_properties: need 1 <= --nmin <= --nmax "
                        "and --fmax <= %d\n", MAXF);
        return 2;
    }
    static const ftc_coll_t colls[] = {FTC_COLL_REDUCE, FTC_COLL_BCAST,
                                       FTC_COLL_ALLREDUCE};
    char tbuf[1024];
    if (strlen(trees) >= sizeof(tbuf)) {
        fprintf(stderr, "test_ftco_properties: --trees: longer than %zu "
                        "characters\n", sizeof(tbuf) - 1);
        return 2;
    }
    for (uint32_t n = nmin; n <= nmax; n++) {
        for (size_t c = 0; c < 3; c++) {
            if (!want_coll(ftc_coll_name(colls[c])))
                continue;
            snprintf(tbuf, sizeof(tbuf), "%s", trees);
            for (char *tok = strtok(tbuf, ","); tok; tok = strtok(NULL, ",")) {
                char *colon = strchr(tok, ':');
                sched_t s;
                memset(&s, 0, sizeof(s));
                if (colon != NULL)
                    *colon = '\0';
                if (colon == NULL
                    || ftc_tree_kind_parse(tok, &s.tree.kind) != FTC_OK) {
                    fprintf(stderr, "test_ftco_properties: --trees: '%s' "
                                    "is not KIND:K\n", tok);
                    return 2;
                }
                s.tree.k = (uint32_t)atoi(colon + 1);
                if (n > 2 && s.tree.k >= n)
                    continue;
                s.n = n;
                s.coll = colls[c];
                s.keepalive_only = keepalive;
                s.second = second;
                s.ack_timeout_ns = ack_timeout;
                /* --slow r,r,... (ranks >= n are left out), or each */
                s.slow_each = slow_arg != NULL && strcmp(slow_arg, "each") == 0;
                for (const char *q = s.slow_each ? NULL : slow_arg;
                     q != NULL && *q && s.nslow < MAXF;) {
                    uint32_t r = (uint32_t)atoi(q);
                    if (r < n)
                        s.slow[s.nslow++] = r;
                    q = strchr(q, ',');
                    if (q != NULL)
                        q++;
                }
                s.seed = seed;
                s.spread_ns = spread;
                uint32_t nroots = rotate ? n : 1;
                for (uint32_t root = 0; root < nroots; root++) {
                    s.root = root;
                    if (strcmp(mode, "one") == 0) {
                        /* --crash r:K,r:before,... : this schedule only */
                        char cb[256];
                        snprintf(cb, sizeof(cb), "%s", one_crashes ? one_crashes : "");
                        s.ncrash = 0;
                        for (char *cp = cb, *e; cp != NULL && *cp && s.ncrash < MAXF;
                             cp = e) {
                            e = strchr(cp, ',');
                            if (e != NULL)
                                *e++ = '\0';
                            char *col = strchr(cp, ':');
                            if (col == NULL)
                                return 2;
                            *col = '\0';
                            s.crash[s.ncrash].rank = (uint32_t)atoi(cp);
                            s.crash[s.ncrash++].after =
                                strcmp(col + 1, "before") == 0
                                    ? UINT64_MAX
                                    : strtoull(col + 1, NULL, 10);
                        }
                        run_one(&s, NULL);
                    } else if (strcmp(mode, "random") == 0)
                        random_runs(s, fmax, count, seed + n * 31u + root);
                    else if (s.slow_each)
                        for (uint32_t r = 0; r < n; r++) {
                            s.nslow = 1;
                            s.slow[0] = r;
                            exhaustive(s, fmax);
                        }
                    else
                        exhaustive(s, fmax);
                }
            }
        }
    }
    printf("ftco properties (%s, n %u..%u, f <= %u): %" PRIu64 " runs, %" PRIu64
           " messages, %" PRIu64 " failed\n",
           mode, nmin, nmax, fmax, runs, total_msgs, failures);
    return failures == 0 ? 0 : 1;
}
