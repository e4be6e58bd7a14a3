/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithm registry and the core services a family uses, through the
 * real API and dispatch on the loopback backend:
 *  - a do-nothing family, written here as a new family would be (its
 *    parameter struct, its check, its create, its entry) and added with
 *    ftc_algo_register, runs an allreduce: every rank delivers FTC_OK with
 *    its own input. It completes from a per-operation timer and draws from
 *    the seeded random stream, so both services are exercised;
 *  - the builtin families are listed with their parameters;
 *  - every size field (config, args, family params) accepts an older,
 *    smaller struct and defaults the rest, and refuses a larger one;
 *  - ftc_cancel, ftc_version, ftc_config_from_env and the knob table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "algo/algo.h"
#include "algo/registry.h"
#include "check.h"


/* ---- the do-nothing family: what a new family's folder holds ---------- */

#define FTC_ALGO_NOOP ((ftc_algo_t)200)

/* Its public parameter header would hold this. */
typedef struct noop_params {
    size_t size;
    uint64_t delay_ns;   /* when the operation completes, after its start */
    uint32_t draws;      /* random numbers to draw first */
} noop_params_t;

static const noop_params_t noop_defaults = {
    .size = sizeof(noop_params_t),
    .delay_ns = 1000,
    .draws = 3,
};

typedef struct noop_op {
    ftc_cop_t base;
    uint64_t value;      /* its own input, delivered as the result */
} noop_op_t;

static int noop_checks, noop_timers;
static uint64_t noop_last_draw[8];

static void noop_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                        const uint8_t *payload, uint32_t grank)
{
    (void)op, (void)hdr, (void)payload, (void)grank;
}

static void noop_on_failed(ftc_cop_t *op, uint32_t grank)
{
    (void)op, (void)grank;
}

static void noop_on_timer(ftc_cop_t *op)
{
    noop_op_t *n = (noop_op_t *)op;
    noop_timers++;
    if (op->nbytes > 0 && op->args.recvbuf != NULL)
        memcpy(op->args.recvbuf, &n->value, op->nbytes);
    ftc_cop_complete(op, FTC_OK);
    ftc_cop_finish(op);
}

static void noop_destroy(ftc_cop_t *op)
{
    ftc_cop_delete(op);
}

static const ftc_cop_vtable_t noop_vt = {
    .on_msg = noop_on_msg,
    .on_peer_failed = noop_on_failed,
    .on_timer = noop_on_timer,
    .destroy = noop_destroy,
};

static int noop_check(const ftc_group_t *g, const ftc_coll_args_t *args,
                      ftc_coll_t coll, const void *params)
{
    (void)g, (void)coll;
    const noop_params_t *p = params;
    noop_checks++;
    if (args->count > 1 || ftc_dtype_size(args->dtype) > 8)
        return FTC_EINVAL;
    return p->delay_ns > 0 ? FTC_OK : FTC_EINVAL;
}

static int noop_create(ftc_group_t *g, const ftc_coll_args_t *args,
                       const void *params, ftc_coll_t coll, ftc_cop_t **out)
{
    const noop_params_t *p = params;
    noop_op_t *n = ftc_cop_new(g, sizeof(*n), 0);
    if (n == NULL)
        return FTC_ENOMEM;
    ftc_cop_setup(g, args, coll, &n->base, &noop_vt, (uint32_t)p->delay_ns);
    if (n->base.nbytes > 0)
        memcpy(&n->value, args->sendbuf, n->base.nbytes);
    ftc_cop_register(&n->base);
    uint64_t draw = 0;
    for (uint32_t i = 0; i < p->draws; i++)
        draw = ftc_cop_random(&n->base);
    noop_last_draw[g->me % 8] = draw;
    ftc_cop_timer_arm(&n->base, ftc_cop_now(&n->base) + p->delay_ns);
    *out = &n->base;
    return FTC_OK;
}

static const ftc_algo_param_info_t noop_param_info[] = {
    {"delay_ns", "1000", "time from start to completion"},
    {"draws", "3", "random numbers drawn at start"},
};

/* Its registry line would be this entry. */
static const ftc_algo_entry_t noop_family = {
    .info = {
        .id = FTC_ALGO_NOOP,
        .name = "noop",
        .colls = FTC_COLL_BIT(FTC_COLL_ALLREDUCE),
        .summary = "does nothing: each rank delivers its own input",
        .params_type = "noop_params_t",
        .params = noop_param_info,
        .nparams = 2,
    },
    .params_size = sizeof(noop_params_t),
    .params_default = &noop_defaults,
    .check = noop_check,
    .create = {[FTC_COLL_ALLREDUCE] = noop_create},
};

/* ---- a loopback world -------------------------------------------------- */

#define N 4

typedef struct world {
    ftc_lb_world_t *w;
    ftc_context_t *ctx[N];
    ftc_group_t *g[N];
    int delivered[N];
    int status[N];
    uint64_t in[N], out[N];
} world_t;

static world_t *cur;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    int r = (int)(intptr_t)arg;
    cur->delivered[r]++;
    cur->status[r] = c->status;
}

static void world_init(world_t *W, const ftc_config_t *cfg)
{
    memset(W, 0, sizeof(*W));
    cur = W;
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    if (ftc_lb_world_create(&lc, &W->w) != FTC_OK)
        abort();
    for (int r = 0; r < N; r++) {
        if (ftc_context_create((uint32_t)r, N, ftc_lb_ops(),
                               ftc_lb_endpoint(W->w, (uint32_t)r), cfg,
                               &W->ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(W->w, (uint32_t)r, W->ctx[r]);
        if (ftc_group_create(W->ctx[r], 1, 0, N, NULL, &W->g[r]) != FTC_OK)
            abort();
    }
}

static void world_fini(world_t *W)
{
    for (int r = 0; r < N; r++)
        ftc_context_destroy(W->ctx[r]);
    ftc_lb_world_destroy(W->w);
}

static ftc_coll_args_t args_for(world_t *W, int r, ftc_algo_t algo)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = algo;
    a.dtype = FTC_UINT64;
    a.count = 1;
    W->in[r] = 100 + (uint64_t)r;
    a.sendbuf = &W->in[r];
    a.recvbuf = &W->out[r];
    a.deliver = on_deliver;
    a.deliver_arg = (void *)(intptr_t)r;
    return a;
}

/* ---- tests -------------------------------------------------------------- */

static void test_noop_family(void)
{
    CHECK_MSG(ftc_algo_register(&noop_family) == FTC_OK, "register noop");
    CHECK_MSG(ftc_algo_register(&noop_family) == FTC_EINVAL,
           "the same id twice is refused");
    ftc_algo_t id;
    CHECK_MSG(ftc_algo_parse("noop", &id) == FTC_OK && id == FTC_ALGO_NOOP,
           "ftc_algo_parse finds it");
    CHECK_MSG(strcmp(ftc_algo_name(FTC_ALGO_NOOP), "noop") == 0,
           "ftc_algo_name names it");

    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.seed = 7;
    world_t W;
    world_init(&W, &cfg);
    noop_checks = noop_timers = 0;
    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a = args_for(&W, r, FTC_ALGO_NOOP);
        CHECK_MSG(ftc_init_allreduce(W.g[r], &a, NULL) == FTC_OK, "init %d", r);
    }
    CHECK_MSG(noop_checks == N, "its check ran at every rank (%d)", noop_checks);
    CHECK_MSG(W.delivered[0] == 0, "nothing delivered inside init");
    ftc_lb_run(W.w, 1000000);
    CHECK_MSG(noop_timers == N, "its per-operation timer fired at every rank "
                             "(%d)", noop_timers);
    for (int r = 0; r < N; r++)
        CHECK_MSG(W.delivered[r] == 1 && W.status[r] == FTC_OK
                   && W.out[r] == W.in[r],
               "rank %d delivered its own input once", r);
    bool distinct = true;
    for (int r = 1; r < N; r++)
        if (noop_last_draw[r] == noop_last_draw[0])
            distinct = false;
    CHECK_MSG(distinct, "ranks draw different random numbers");
    uint64_t first = noop_last_draw[1];

    /* A collective it does not provide, and a bad parameter. */
    ftc_coll_args_t a = args_for(&W, 0, FTC_ALGO_NOOP);
    CHECK_MSG(ftc_init_bcast(W.g[0], &a, NULL) == FTC_ENOTSUP,
           "bcast is not provided");
    noop_params_t p = noop_defaults;
    p.delay_ns = 0;
    a.params = &p;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
           "its check refuses delay 0");
    world_fini(&W);

    /* The same seed, the same stream. */
    world_init(&W, &cfg);
    for (int r = 0; r < N; r++) {
        a = args_for(&W, r, FTC_ALGO_NOOP);
        (void)ftc_init_allreduce(W.g[r], &a, NULL);
    }
    ftc_lb_run(W.w, 1000000);
    CHECK_MSG(noop_last_draw[1] == first, "seeded: the same draws again");
    world_fini(&W);
}

static void test_listing(void)
{
    uint32_t n = ftc_algo_count();
    CHECK_MSG(n >= 2, "at least the two builtin families (%u)", n);
    bool corrected = false, tree = false;
    for (uint32_t i = 0; i < n; i++) {
        const ftc_algo_info_t *info = ftc_algo_info(i);
        CHECK_MSG(info != NULL && info->name != NULL && info->summary != NULL,
               "family %u is described", i);
        if (info == NULL)
            continue;
        for (uint32_t k = 0; k < info->nparams; k++)
            CHECK_MSG(info->params[k].name != NULL
                       && info->params[k].default_value != NULL
                       && info->params[k].meaning != NULL,
                   "%s parameter %u is described", info->name, k);
        if (strcmp(info->name, "corrected") == 0)
            corrected = info->id == FTC_ALGO_CORRECTED && info->nparams == 5
                        && (info->colls & FTC_COLL_BIT(FTC_COLL_REDUCE));
        if (strcmp(info->name, "tree") == 0)
            tree = info->id == FTC_ALGO_TREE;
    }
    CHECK_MSG(corrected && tree, "corrected and tree are listed");
    /* Every family has an id and a name of its own: two families that
     * took the same id would make one of them unreachable. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++) {
            const ftc_algo_info_t *a = ftc_algo_info(i), *b = ftc_algo_info(j);
            if (a == NULL || b == NULL)
                continue;
            CHECK_MSG(a->id != b->id, "%s and %s share id %d", a->name,
                      b->name, (int)a->id);
            CHECK_MSG(strcmp(a->name, b->name) != 0, "two families named %s",
                      a->name);
        }
    CHECK_MSG(ftc_algo_info(n) == NULL, "nothing past the end");
    ftc_algo_t id;
    CHECK_MSG(ftc_algo_parse("gossip-nope", &id) == FTC_EINVAL, "unknown name");
    CHECK_MSG(strcmp(ftc_algo_name((ftc_algo_t)77), "?") == 0, "unknown id");
}

/* An older caller's smaller structs: the fields they have, defaults for
 * the rest. */
static void test_sizes(void)
{
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.size = offsetof(ftc_config_t, probe_timeout_ns); /* older, smaller */
    cfg.suspect_timeout_ns = 5000;
    cfg.probe_timeout_ns = 0;   /* past its size: must not be read */
    ftc_lb_world_t *w;
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = 1;
    if (ftc_lb_world_create(&lc, &w) != FTC_OK)
        abort();
    ftc_context_t *ctx = NULL;
    CHECK_MSG(ftc_context_create(0, 1, ftc_lb_ops(), ftc_lb_endpoint(w, 0), &cfg,
                              &ctx) == FTC_OK,
           "a truncated config is accepted");
    ftc_context_destroy(ctx);
    /* 0.3's struct: no probe_backoff, so the default, whatever lies past
     * its size; a value beyond the maximum is refused. */
    ftc_config_init(&cfg);
    cfg.size = FTC_CONFIG_SIZE_0_3;
    cfg.probe_backoff = 999;
    CHECK_MSG(ftc_context_create(0, 1, ftc_lb_ops(), ftc_lb_endpoint(w, 0),
                                 &cfg, &ctx) == FTC_OK,
              "0.3's config is accepted, probe_backoff unread");
    ftc_context_destroy(ctx);
    cfg.size = sizeof(cfg);
    CHECK_MSG(ftc_context_create(0, 1, ftc_lb_ops(), ftc_lb_endpoint(w, 0),
                                 &cfg, &ctx) == FTC_EINVAL,
              "probe_backoff beyond FTC_PROBE_BACKOFF_MAX is refused");
    cfg.probe_backoff = FTC_PROBE_BACKOFF_DEFAULT;
    cfg.size = sizeof(cfg) + 8;
    CHECK_MSG(ftc_context_create(0, 1, ftc_lb_ops(), ftc_lb_endpoint(w, 0), &cfg,
                              &ctx) == FTC_EINVAL,
           "a larger (newer) config is refused");
    ftc_lb_world_destroy(w);

    world_t W;
    world_init(&W, NULL);
    /* args cut after recvbuf: deliver would be past it, so refused... */
    ftc_coll_args_t a = args_for(&W, 0, FTC_ALGO_CORRECTED);
    a.size = FTC_COLL_ARGS_SIZE_MIN;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
           "args without deliver (by its size) are refused");
    a.size = FTC_COLL_ARGS_SIZE_MIN - 1;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
           "args below the minimum size are refused");
    a.size = sizeof(a) + 8;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
           "larger (newer) args are refused");
    world_fini(&W);

    /* ... and cut before params (0.2's fields), with corrected params cut
     * before the bcast tree: a full allreduce runs with the defaults. */
    world_init(&W, NULL);
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    cp.size = offsetof(ftc_corrected_params_t, distance);
    cp.correction = FTC_CORRECTION_OPPORTUNISTIC;
    cp.distance = 0;                 /* past its size: default 2 instead */
    cp.bcast_tree.kind = (ftc_tree_kind_t)99; /* past its size */
    cp.fault_info = FTC_FAULT_COUNT;
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < N; r++) {
            W.delivered[r] = 0;
            a = args_for(&W, r, FTC_ALGO_CORRECTED);
            a.params = &cp;
            /* pass 0: args of 0.2 (no params field: the defaults);
             * pass 1: full args, truncated params. */
            if (pass == 0)
                a.size = offsetof(ftc_coll_args_t, params);
            int rc = ftc_init_allreduce(W.g[r], &a, NULL);
            CHECK_MSG(rc == FTC_OK, "pass %d rank %d: truncated struct: %s",
                   pass, r, ftc_strerror(rc));
        }
        ftc_lb_run(W.w, 100000000);
        for (int r = 0; r < N; r++)
            CHECK_MSG(W.delivered[r] == 1 && W.status[r] == FTC_OK
                       && W.out[r] == 100 + 101 + 102 + 103,
                   "pass %d rank %d: the sum with default parameters", pass,
                   r);
    }
    /* The fields within its size are read: a bad one is refused. (A
     * refused call takes its place in the group's sequence: last.) */
    a = args_for(&W, 0, FTC_ALGO_CORRECTED);
    a.params = &cp;
    cp.fault_info = (ftc_fault_info_t)77;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
           "a bad field within the params' size is read and refused");
    cp.size = sizeof(cp) + 8;
    a = args_for(&W, 0, FTC_ALGO_CORRECTED);
    a.params = &cp;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
           "larger (newer) params are refused");
    cp.size = 0;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
           "params of size 0 are refused");
    world_fini(&W);
}

static void test_cancel(void)
{
    world_t W;
    world_init(&W, NULL);
    /* Ranks 0-2 start, rank 3 never does: the operation cannot complete
     * (f = 1, but rank 3 is alive and answers keepalives); rank 0 gives
     * up on it, and the others are told. */
    ftc_coll_args_t a;
    uint64_t seq = 99;
    for (int r = 0; r < N - 1; r++) {
        a = args_for(&W, r, FTC_ALGO_CORRECTED);
        CHECK_MSG(ftc_init_allreduce(W.g[r], &a, r == 0 ? &seq : NULL) == FTC_OK,
               "init %d", r);
    }
    ftc_lb_run(W.w, 1000);
    CHECK_MSG(W.delivered[0] == 0, "not delivered before cancel");
    CHECK_MSG(ftc_cancel(W.g[0], seq + 1) == FTC_EINVAL, "no such operation");
    CHECK_MSG(ftc_cancel(NULL, seq) == FTC_EINVAL, "NULL group");
    CHECK_MSG(ftc_cancel(W.g[0], seq) == FTC_OK, "cancel");
    CHECK_MSG(W.delivered[0] == 0, "deliver does not run inside cancel");
    ftc_lb_run(W.w, 1000);
    CHECK_MSG(W.delivered[0] == 1 && W.status[0] == FTC_ECANCELED,
           "delivered once, FTC_ECANCELED (%d)", W.status[0]);
    ftc_lb_run(W.w, 100000000);
    for (int r = 1; r < N - 1; r++)
        CHECK_MSG(W.delivered[r] == 1 && W.status[r] == FTC_EPEER_INVALID,
               "rank %d told: FTC_EPEER_INVALID (%d, %d)", r, W.delivered[r],
               W.status[r]);
    /* Rank 3 starts it late: it ends at once with the same status. */
    a = args_for(&W, N - 1, FTC_ALGO_CORRECTED);
    CHECK_MSG(ftc_init_allreduce(W.g[N - 1], &a, NULL) == FTC_OK, "late init");
    ftc_lb_run(W.w, 100000000);
    CHECK_MSG(W.delivered[N - 1] == 1 && W.status[N - 1] == FTC_EPEER_INVALID,
           "the late rank ends too (%d)", W.status[N - 1]);
    CHECK_MSG(ftc_cancel(W.g[0], seq) != FTC_OK, "cancel twice");
    world_fini(&W);
}

static void test_version_and_env(void)
{
    uint32_t ma = 99, mi = 99, pa = 99;
    const char *v = ftc_version(&ma, &mi, &pa);
    char want[32];
    snprintf(want, sizeof(want), "%u.%u.%u", ma, mi, pa);
    CHECK_MSG(v != NULL && strcmp(v, want) == 0 && ma == FTC_VERSION_MAJOR
               && mi == FTC_VERSION_MINOR && pa == FTC_VERSION_PATCH,
           "ftc_version: %s", v != NULL ? v : "(null)");

    uint32_t n = ftc_config_knob_count();
    CHECK_MSG(n >= 3, "knobs listed (%u)", n);
    for (uint32_t i = 0; i < n; i++)
        CHECK_MSG(ftc_config_knob(i) != NULL
                   && strncmp(ftc_config_knob(i)->name, "FTCOLL_", 7) == 0,
               "knob %u is FTCOLL_*", i);
    CHECK_MSG(ftc_config_knob(n) == NULL, "nothing past the end");

    ftc_config_t cfg;
    ftc_config_init(&cfg);
    setenv("FTCOLL_SUSPECT_TIMEOUT_NS", "12345", 1);
    setenv("FTCOLL_SEED", "0x10", 1);
    const char *bad = "x";
    CHECK_MSG(ftc_config_from_env(&cfg, &bad) == FTC_OK && bad == NULL,
           "from env");
    CHECK_MSG(cfg.suspect_timeout_ns == 12345 && cfg.seed == 16
               && cfg.probe_timeout_ns == 200000000ull,
           "the knobs set, the others kept");
    setenv("FTCOLL_PROBE_TIMEOUT_NS", "12ms", 1);
    ftc_config_t before = cfg;
    CHECK_MSG(ftc_config_from_env(&cfg, &bad) == FTC_EINVAL && bad != NULL
               && strcmp(bad, "FTCOLL_PROBE_TIMEOUT_NS") == 0,
           "a bad value is named");
    CHECK_MSG(memcmp(&before, &cfg, sizeof(cfg)) == 0, "and changes nothing");
    setenv("FTCOLL_PROBE_TIMEOUT_NS", "0", 1);
    CHECK_MSG(ftc_config_from_env(&cfg, NULL) == FTC_EINVAL, "a 0 timeout");
    unsetenv("FTCOLL_PROBE_TIMEOUT_NS");
    unsetenv("FTCOLL_SUSPECT_TIMEOUT_NS");
    unsetenv("FTCOLL_SEED");
    CHECK_MSG(ftc_config_from_env(NULL, NULL) == FTC_EINVAL, "NULL config");

    /* The job token and key as ftcoll-run hands them out: the token in
     * hexadecimal without 0x, the key as 32 hexadecimal digits. */
    ftc_config_init(&cfg);
    setenv("FTCOLL_JOB_TOKEN", "00000000deadbeef", 1);
    setenv("FTCOLL_JOB_KEY", "000102030405060708090a0b0c0d0e0F", 1);
    CHECK_OK(ftc_config_from_env(&cfg, &bad));
    CHECK_EQ(cfg.job_token, 0xdeadbeefull);
    CHECK_EQ(cfg.auth, 1u);
    CHECK_EQ(cfg.auth_key[0], 0u);
    CHECK_EQ(cfg.auth_key[15], 15u);
    setenv("FTCOLL_JOB_KEY", "0001020304", 1);
    ftc_config_init(&cfg);
    before = cfg;
    CHECK_MSG(ftc_config_from_env(&cfg, &bad) == FTC_EINVAL && bad != NULL
                  && strcmp(bad, "FTCOLL_JOB_KEY") == 0,
              "a short key is named");
    CHECK_MSG(memcmp(&before, &cfg, sizeof(cfg)) == 0, "and changes nothing");
    setenv("FTCOLL_JOB_KEY", "zz0102030405060708090a0b0c0d0e0f", 1);
    CHECK_RC(ftc_config_from_env(&cfg, NULL), FTC_EINVAL);
    unsetenv("FTCOLL_JOB_KEY");
    unsetenv("FTCOLL_JOB_TOKEN");
    bool listed = false;
    for (uint32_t i = 0; i < ftc_config_knob_count(); i++)
        listed |= strcmp(ftc_config_knob(i)->name, "FTCOLL_JOB_KEY") == 0;
    CHECK_MSG(listed, "FTCOLL_JOB_KEY is in the knob table");
}

int main(void)
{
    test_listing();
    test_noop_family();
    test_sizes();
    test_cancel();
    test_version_and_env();
    return check_report();
}
