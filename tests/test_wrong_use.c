/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wrong use across ranks, on the loopback: one rank (the culprit) calls
 * the middle operation of a three-operation stream differently from the
 * others: another collective, another algorithm, root, count, datatype,
 * operator or f, another corrected allreduce variant (reduce + bcast
 * where the others' auto runs the exchange: what a process of another
 * version does, docs/api.md), a refused call (NULL buffer, huge count, bad operator,
 * bad args.size, ...), an extra collective, no call at all, another
 * epoch. Asserted for every case:
 *
 *   - nobody hangs: every call is refused or delivers exactly once;
 *   - no two FTC_OK results of the operation differ;
 *   - where the default catches the mistake (docs/semantics.md, "Usage
 *     errors between peers"), no member delivers FTC_OK for it, each ends
 *     with a status that names the cause, within the configured keepalive
 *     budget (suspect + probe timeout) of the operation's last start;
 *   - the stream goes on: the next operation succeeds everywhere, with
 *     the right value (the sequence stays aligned).
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "check.h"

#define N 4
#define OPS 3
#define CULPRIT 3
#define SUSPECT_NS 1000000ull
#define PROBE_NS 2000000ull
#define TIMEOUT_NS 20000000ull

typedef enum mistake {
    M_NONE,
    M_COLL,         /* another collective */
    M_ALGO,         /* another algorithm */
    M_ROOT,         /* another root */
    M_COUNT,
    M_DTYPE,
    M_OP,
    M_F,
    M_NULL_SEND,    /* refused calls */
    M_HUGE_COUNT,
    M_BAD_OP,
    M_BAD_DTYPE,
    M_BAD_SIZE,
    M_NO_DELIVER,
    M_BAD_ROOT,
    M_BAD_F,
    M_SKIP,         /* never calls the operation (needs timeout_ns) */
    M_EXTRA,        /* calls one more operation (needs timeout_ns) */
    M_SELF_ROOT,    /* rank 1 believes itself the root */
    M_VARIANT,      /* corrected: reduce_bcast against the others' auto */
} mistake_t;

typedef struct tcase {
    const char *name;
    ftc_coll_t coll;        /* what the others run as operation 1 */
    ftc_algo_t algo;
    mistake_t m;
    ftc_coll_t other_coll;  /* M_COLL */
    bool caught;            /* by default: no FTC_OK anywhere for op 1 */
    bool timeout;           /* run with timeout_ns */
    bool checked;           /* every call in checked mode */
} tcase_t;

typedef struct rank_state {
    int rank;
    ftc_group_t *g;
    int next;               /* next script entry to start */
    int nscript;
    ftc_coll_t script_coll[OPS + 1];
    mistake_t script_m[OPS + 1];
    int init_rc[OPS + 1];
    int delivered[OPS + 1];
    int status[OPS + 1];
    uint64_t at[OPS + 1], started[OPS + 1];
    int64_t in[OPS + 1][2], out[OPS + 1][2];
    bool has_value[OPS + 1];
} rank_state_t;

typedef struct cb {
    rank_state_t *r;
    int k;
} cb_t;

static ftc_lb_world_t *world;
static rank_state_t ranks[N];
static cb_t cbs[N][OPS + 1];
static const tcase_t *tc;
static ftc_corrected_params_t variant_params; /* M_VARIANT's */

static void start_next(rank_state_t *r);

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    cb_t *cb = arg;
    rank_state_t *r = cb->r;
    r->delivered[cb->k]++;
    r->status[cb->k] = c->status;
    r->at[cb->k] = ftc_lb_now(world);
    r->has_value[cb->k] = c->status == FTC_OK && c->coll != FTC_COLL_REDUCE;
    start_next(r);
}

static ftc_coll_args_t args_for(rank_state_t *r, int k, ftc_coll_t *coll)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = tc->algo;
    a.dtype = FTC_INT64;
    a.count = 2;
    a.root = 0;
    a.f = 1;
    r->in[k][0] = r->rank + 1;
    r->in[k][1] = (int64_t)(k + 1) * 1000;
    a.sendbuf = r->in[k];
    a.recvbuf = r->out[k];
    a.deliver = on_deliver;
    cbs[r->rank][k] = (cb_t){r, k};
    a.deliver_arg = &cbs[r->rank][k];
    if (tc->timeout)
        a.timeout_ns = TIMEOUT_NS;
    a.checked = tc->checked;
    *coll = r->script_coll[k];
    switch (r->script_m[k]) {
    case M_NONE: case M_SKIP: case M_EXTRA: break;
    case M_COLL: *coll = tc->other_coll; break;
    case M_ALGO:
        a.algo = a.algo == FTC_ALGO_TREE ? FTC_ALGO_CORRECTED : FTC_ALGO_TREE;
        break;
    case M_ROOT: a.root = 1; break;
    case M_COUNT: a.count = 1; break;
    case M_DTYPE: a.dtype = FTC_UINT64; break;
    case M_OP: a.op = FTC_MAX; break;
    case M_F: a.f = 2; break;
    case M_NULL_SEND: a.sendbuf = NULL; a.recvbuf = NULL; break;
    case M_HUGE_COUNT: a.count = 1ull << 40; break;
    case M_BAD_OP: a.op = (ftc_op_t)999; break;
    case M_BAD_DTYPE: a.dtype = (ftc_dtype_t)999; break;
    case M_BAD_SIZE: a.size = 4; break;
    case M_NO_DELIVER: a.deliver = NULL; break;
    case M_BAD_ROOT: a.root = 99; break;
    case M_BAD_F: a.f = 99; break;
    case M_SELF_ROOT: a.root = 1; break;
    case M_VARIANT:
        ftc_corrected_params_init(&variant_params);
        variant_params.allreduce = FTC_ALLREDUCE_REDUCE_BCAST;
        a.params = &variant_params;
        break;
    }
    return a;
}

static void start_next(rank_state_t *r)
{
    while (r->next < r->nscript) {
        int k = r->next++;
        ftc_coll_t coll;
        ftc_coll_args_t a = args_for(r, k, &coll);
        r->started[k] = ftc_lb_now(world);
        int rc = coll == FTC_COLL_REDUCE  ? ftc_init_reduce(r->g, &a, NULL)
                 : coll == FTC_COLL_BCAST ? ftc_init_bcast(r->g, &a, NULL)
                                          : ftc_init_allreduce(r->g, &a, NULL);
        r->init_rc[k] = rc;
        if (rc == FTC_OK)
            return; /* the next starts from this one's deliver */
    }
}

static void run_case(const tcase_t *t)
{
    tc = t;
    check_set_context(t->name);
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    if (ftc_lb_world_create(&lc, &world) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 7;
    cfg.suspect_timeout_ns = SUSPECT_NS;
    cfg.probe_timeout_ns = PROBE_NS;
    ftc_context_t *ctx[N];
    for (int r = 0; r < N; r++) {
        rank_state_t *rs = &ranks[r];
        memset(rs, 0, sizeof(*rs));
        rs->rank = r;
        if (ftc_context_create((uint32_t)r, N, ftc_lb_ops(),
                               ftc_lb_endpoint(world, (uint32_t)r), &cfg,
                               &ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(world, (uint32_t)r, ctx[r]);
        if (ftc_group_create(ctx[r], 9, 1, N, NULL, &rs->g) != FTC_OK)
            abort();
        /* allreduce, the case's operation, allreduce */
        rs->nscript = OPS;
        rs->script_coll[0] = FTC_COLL_ALLREDUCE;
        rs->script_coll[1] = t->coll;
        rs->script_coll[2] = FTC_COLL_ALLREDUCE;
        bool culprit = r == CULPRIT;
        if (culprit && t->m == M_SKIP) {
            rs->nscript = 1; /* stops calling after operation 0 */
        } else if (culprit && t->m == M_EXTRA) {
            rs->nscript = OPS + 1;
            rs->script_coll[1] = t->coll;
            rs->script_coll[2] = t->coll;
            rs->script_coll[3] = FTC_COLL_ALLREDUCE;
        } else if (culprit) {
            rs->script_m[1] = t->m;
        }
        if (t->m == M_SELF_ROOT && r == 1)
            rs->script_m[1] = t->m;
    }
    for (int r = 0; r < N; r++)
        start_next(&ranks[r]);
    uint64_t events = ftc_lb_run(world, 5000000);
    CHECK_MSG(events < 5000000, "the run did not end (%" PRIu64 " events)",
              events);

    /* Nobody hangs. */
    for (int r = 0; r < N; r++) {
        const rank_state_t *rs = &ranks[r];
        CHECK_MSG(rs->next == rs->nscript, "rank %d started %d of %d calls", r,
                  rs->next, rs->nscript);
        for (int k = 0; k < rs->nscript; k++)
            CHECK_MSG(rs->init_rc[k] != FTC_OK || rs->delivered[k] == 1,
                      "rank %d op %d: init %s, delivered %d times", r, k,
                      ftc_err_name(rs->init_rc[k]), rs->delivered[k]);
    }
    /* Operation 1: no two FTC_OK results differ; caught => no FTC_OK, and
     * a status naming the cause, in time. */
    uint64_t last_start = 0;
    for (int r = 0; r < N; r++)
        if (ranks[r].nscript > 1 && ranks[r].started[1] > last_start)
            last_start = ranks[r].started[1];
    const int64_t *ok_value = NULL;
    for (int r = 0; r < N; r++) {
        const rank_state_t *rs = &ranks[r];
        if (rs->nscript < 2 || rs->init_rc[1] != FTC_OK)
            continue;
        int st = rs->status[1];
        /* (Known and documented: by default, a member that believes it
         * is the bcast root delivers its own value before any message
         * can tell it otherwise; checked mode catches it.) */
        bool may_differ = t->m == M_EXTRA
                          || (t->m == M_SELF_ROOT && !t->checked);
        if (st == FTC_OK && rs->has_value[1] && !may_differ) {
            if (ok_value == NULL)
                ok_value = rs->out[1];
            else
                CHECK_MSG(memcmp(ok_value, rs->out[1], sizeof(rs->out[1])) == 0,
                          "rank %d: an FTC_OK result that differs from "
                          "another's",
                          r);
        }
        /* Who must not deliver FTC_OK: everybody for allreduce (its
         * result needs every member's contribution, so the mistake is seen
         * before anyone delivers); the root for reduce (non-roots deliver
         * once their value went up, before anyone can tell); the culprit
         * for bcast (receivers deliver the root's value as it arrives) and
         * for every call it made. */
        ftc_coll_t mine = r == CULPRIT && t->m == M_COLL ? t->other_coll
                                                           : t->coll;
        bool strict = t->caught
                      && (t->checked
                          || (r == CULPRIT ? mine != FTC_COLL_REDUCE
                                           : t->coll == FTC_COLL_ALLREDUCE
                                                 || (t->coll == FTC_COLL_REDUCE
                                                     && r == 0)));
        if (!strict)
            continue;
        CHECK_MSG(st != FTC_OK,
                  "rank %d delivered FTC_OK for a mistaken "
                  "operation",
                  r);
        CHECK_MSG(st == FTC_EMISMATCH || st == FTC_EPEER_INVALID ||
                      st == FTC_ETIMEDOUT || st == FTC_EPEER_FAILED ||
                      st == FTC_EROOT_FAILED,
                  "rank %d ended with %s, which names no usage error", r,
                  ftc_err_name(st));
        uint64_t budget = t->timeout ? TIMEOUT_NS + SUSPECT_NS + PROBE_NS
                                     : SUSPECT_NS + PROBE_NS;
        CHECK_MSG(rs->at[1] <= last_start + budget,
                  "rank %d ended %" PRIu64
                  " ns after the last start (budget %" PRIu64 ")",
                  r, rs->at[1] - last_start, budget);
    }
    /* The culprit's refused call says why, at the culprit. */
    if (t->m >= M_NULL_SEND && t->m <= M_BAD_F && t->caught)
        CHECK_MSG(ranks[CULPRIT].init_rc[1] == FTC_EINVAL ||
                      ranks[CULPRIT].init_rc[1] == FTC_EOVERFLOW ||
                      ranks[CULPRIT].init_rc[1] == FTC_EMISMATCH,
                  "the culprit's call returned %s",
                  ftc_err_name(ranks[CULPRIT].init_rc[1]));
    /* The stream goes on: the last allreduce of everyone but a culprit
     * that skipped or ran one more succeeds with the full sum. */
    if (t->m != M_SKIP && t->m != M_EXTRA) {
        for (int r = 0; r < N; r++) {
            const rank_state_t *rs = &ranks[r];
            CHECK_MSG(rs->delivered[2] == 1 && rs->status[2] == FTC_OK &&
                          rs->out[2][0] == N * (N + 1) / 2 &&
                          rs->out[2][1] == 3000 * N,
                      "rank %d: operation 2 after the mistake: %s, %" PRId64, r,
                      ftc_err_name(rs->status[2]), rs->out[2][0]);
        }
    }
    for (int r = 0; r < N; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(world);
    world = NULL;
}

int main(void)
{
    static const ftc_coll_t colls[3] = {FTC_COLL_REDUCE, FTC_COLL_BCAST,
                                        FTC_COLL_ALLREDUCE};
    static const ftc_algo_t algos[2] = {FTC_ALGO_CORRECTED, FTC_ALGO_TREE};
    char name[160];
    for (int checked = 0; checked <= 1; checked++)
    for (int ai = 0; ai < 2; ai++) {
        for (int ci = 0; ci < 3; ci++) {
            for (int oi = 0; oi < 3; oi++) {
                if (oi == ci)
                    continue;
                snprintf(name, sizeof(name), "%s%s: %s vs %s",
                         checked ? "checked " : "", ftc_algo_name(algos[ai]),
                         ftc_coll_name(colls[ci]), ftc_coll_name(colls[oi]));
                tcase_t t = {name, colls[ci], algos[ai], M_COLL, colls[oi],
                             true, false, checked};
                run_case(&t);
            }
            bool bc = colls[ci] == FTC_COLL_BCAST;
            /* What the default catches (docs/semantics.md); checked mode
             * catches every mistake but these: an operator a bcast does
             * not use is no mistake, nor is f for the tree; an extra call
             * leaves the others' operation whole. */
            struct {
                const char *what;
                mistake_t m;
                bool caught, caught_checked;
            } ms[] = {
                {"algorithm", M_ALGO, true, true},
                {"root", M_ROOT, true, true},
                {"rank 1 believes it is the root", M_SELF_ROOT,
                 !bc && colls[ci] != FTC_COLL_REDUCE, true},
                {"count", M_COUNT, true, true},
                {"datatype", M_DTYPE, true, true},
                {"operator", M_OP, !bc, !bc},
                {"f", M_F, algos[ai] == FTC_ALGO_CORRECTED,
                 algos[ai] == FTC_ALGO_CORRECTED},
                {"NULL buffer", M_NULL_SEND, true, true},
                {"count 2^40", M_HUGE_COUNT, true, true},
                {"bad operator", M_BAD_OP, !bc, !bc},
                {"bad datatype", M_BAD_DTYPE, true, true},
                {"bad args.size", M_BAD_SIZE, true, true},
                {"no deliver callback", M_NO_DELIVER, true, true},
                {"root out of range", M_BAD_ROOT, true, true},
                {"f out of range", M_BAD_F, true, true},
                {"never calls (timeout)", M_SKIP, true, true},
                {"an extra call (timeout)", M_EXTRA, false, false},
                /* Only the allreduce has variants (at N = 4 auto runs
                 * the exchange); the tree family takes no corrected
                 * parameters. */
                {"allreduce variant", M_VARIANT,
                 colls[ci] == FTC_COLL_ALLREDUCE,
                 colls[ci] == FTC_COLL_ALLREDUCE},
            };
            for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
                /* A struct of unknown size cannot say it is checked. */
                if (checked && ms[i].m == M_BAD_SIZE)
                    continue;
                if (ms[i].m == M_VARIANT && algos[ai] != FTC_ALGO_CORRECTED)
                    continue;
                snprintf(name, sizeof(name), "%s%s %s: %s",
                         checked ? "checked " : "", ftc_algo_name(algos[ai]),
                         ftc_coll_name(colls[ci]), ms[i].what);
                tcase_t t = {name, colls[ci], algos[ai], ms[i].m, 0,
                             checked ? ms[i].caught_checked : ms[i].caught,
                             ms[i].m == M_SKIP || ms[i].m == M_EXTRA,
                             checked};
                run_case(&t);
            }
        }
    }
    return check_report();
}
