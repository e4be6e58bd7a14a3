/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's arguments: its check refuses what it cannot run
 * (another tree kind, k < 2, k >= n) with FTC_EINVAL and starts nothing;
 * NULL and an older, smaller parameter struct get the defaults; the
 * registry knows it by name; and a good call runs to a correct result
 * (count 0, max) on the loopback, also in checked mode, where members
 * that disagree on the tree end with FTC_EMISMATCH.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/algo.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll_loopback.h"
#include "check.h"

#define N 5

static ftc_lb_world_t *w;
static ftc_context_t *ctx[N];
static ftc_group_t *grp[N];
static int delivered[N], status[N];
static int64_t in[N], out[N];

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    int r = (int)(intptr_t)arg;
    delivered[r]++;
    status[r] = c->status;
}

static ftc_coll_args_t args_for(int r, const void *params)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = FTC_ALGO_FTCO;
    a.params = params;
    a.f = 0;
    a.dtype = FTC_INT64;
    a.op = FTC_MAX;
    a.count = 1;
    in[r] = 10 * r - 7;
    a.sendbuf = &in[r];
    a.recvbuf = &out[r];
    a.deliver = on_deliver;
    a.deliver_arg = (void *)(intptr_t)r;
    return a;
}

/* Refused at every rank, so the group's sequence (a refused call takes
 * its place in it) stays aligned. */
static void refused(const ftc_ftco_params_t *p, const char *what)
{
    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a = args_for(r, p);
        CHECK_MSG(ftc_init_allreduce(grp[r], &a, NULL) == FTC_EINVAL,
                  "%s is refused with FTC_EINVAL", what);
        CHECK_MSG(ftc_init_reduce(grp[r], &a, NULL) == FTC_EINVAL,
                  "%s (reduce)", what);
        CHECK_MSG(ftc_init_bcast(grp[r], &a, NULL) == FTC_EINVAL, "%s (bcast)",
                  what);
    }
}

/* Every rank runs an allreduce with params; max of the inputs expected. */
static void runs_ok(const void *params, uint64_t count, const char *what)
{
    memset(delivered, 0, sizeof(delivered));
    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a = args_for(r, params);
        a.count = count;
        out[r] = 0;
        CHECK_MSG(ftc_init_allreduce(grp[r], &a, NULL) == FTC_OK, "%s: init %d",
                  what, r);
    }
    ftc_lb_run(w, 1000000);
    for (int r = 0; r < N; r++) {
        CHECK_MSG(delivered[r] == 1 && status[r] == FTC_OK, "%s: rank %d", what,
                  r);
        CHECK_MSG(out[r] == (count > 0 ? 10 * (N - 1) - 7 : 0),
                  "%s: rank %d result %lld", what, r, (long long)out[r]);
    }
}

int main(void)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    if (ftc_lb_world_create(&lc, &w) != FTC_OK)
        return 1;
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    for (uint32_t r = 0; r < N; r++) {
        if (ftc_context_create(r, N, ftc_lb_ops(), ftc_lb_endpoint(w, r), &cfg,
                               &ctx[r]) != FTC_OK)
            return 1;
        ftc_lb_attach(w, r, ctx[r]);
        if (ftc_group_create(ctx[r], 1, 0, N, NULL, &grp[r]) != FTC_OK)
            return 1;
    }

    ftc_algo_t id;
    CHECK_MSG(ftc_algo_parse("ftco", &id) == FTC_OK && id == FTC_ALGO_FTCO,
              "\"ftco\" names the family");
    CHECK_MSG(strcmp(ftc_algo_name(FTC_ALGO_FTCO), "ftco") == 0, "and back");

    ftc_ftco_params_t p;
    ftc_ftco_params_init(&p);
    CHECK_MSG(p.tree.kind == FTC_TREE_KNOMIAL && p.tree.k == 4,
              "default: 4-nomial");
    p.tree.kind = FTC_TREE_BINOMIAL;
    refused(&p, "a tree kind the paper has not (binomial)");
    p.tree.kind = FTC_TREE_LAME;
    refused(&p, "a Lame tree");
    p.tree.kind = (ftc_tree_kind_t)99;
    refused(&p, "an unknown tree kind");
    ftc_ftco_params_init(&p);
    p.tree.k = 1;
    refused(&p, "k = 1");
    p.tree.k = 0;
    refused(&p, "k = 0");
    p.tree.k = N;
    refused(&p, "k = n");
    p.tree.kind = FTC_TREE_KARY;
    p.tree.k = N + 3;
    refused(&p, "k-ary with k > n");
    p.tree.kind = FTC_TREE_KNOMIAL_MULTIROOT;
    p.tree.k = 1;
    refused(&p, "multi-root k-nomial with k = 1");
    p.tree.kind = FTC_TREE_KARY_MULTIROOT;
    p.tree.k = N;
    refused(&p, "multi-root k-ary with k = n");
    ftc_lb_run(w, 1000000);
    for (int r = 0; r < N; r++)
        CHECK_MSG(delivered[r] == 0, "a refused call delivers nothing");

    runs_ok(NULL, 1, "NULL params");
    ftc_ftco_params_init(&p);
    p.tree.kind = FTC_TREE_KARY;
    p.tree.k = 2;
    runs_ok(&p, 1, "binary k-ary");
    p.tree.kind = FTC_TREE_KNOMIAL;
    p.tree.k = N - 1;
    runs_ok(&p, 1, "k = n - 1");
    p.tree.kind = FTC_TREE_KNOMIAL_MULTIROOT;
    p.tree.k = 3;
    runs_ok(&p, 1, "multi-root 3-nomial");
    p.tree.kind = FTC_TREE_KARY_MULTIROOT;
    p.tree.k = 2;
    runs_ok(&p, 1, "multi-root binary k-ary");
    size_t small = sizeof(size_t);
    runs_ok(&small, 1, "a struct of only its size (defaults)");
    runs_ok(NULL, 0, "count 0");

    /* Checked mode pairs the call with a small allreduce of its
     * signature, which covers the family's parameters: members that
     * disagree on the tree all end with FTC_EMISMATCH. */
    memset(delivered, 0, sizeof(delivered));
    for (int r = 0; r < N; r++) {
        ftc_ftco_params_t q;
        ftc_ftco_params_init(&q);
        q.tree.k = r == 2 ? 3 : 2;
        ftc_coll_args_t a = args_for(r, &q);
        a.checked = 1;
        CHECK_MSG(ftc_init_allreduce(grp[r], &a, NULL) == FTC_OK,
                  "checked init");
    }
    ftc_lb_run(w, 1000000);
    for (int r = 0; r < N; r++)
        CHECK_MSG(delivered[r] == 1 && status[r] == FTC_EMISMATCH,
                  "checked, rank %d: %s", r, ftc_strerror(status[r]));
    memset(delivered, 0, sizeof(delivered));
    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a = args_for(r, NULL);
        a.checked = 1;
        CHECK_MSG(ftc_init_allreduce(grp[r], &a, NULL) == FTC_OK,
                  "checked init");
    }
    ftc_lb_run(w, 1000000);
    for (int r = 0; r < N; r++)
        CHECK_MSG(delivered[r] == 1 && status[r] == FTC_OK
                      && out[r] == 10 * (N - 1) - 7,
                  "checked and agreeing, rank %d: %s", r,
                  ftc_strerror(status[r]));

    for (uint32_t r = 0; r < N; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(w);
    return check_report();
}
