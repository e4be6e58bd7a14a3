/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's last checked call (lib/api/call_memo.h): after a call that
 * passed, a call that differs from it in one argument, one byte of the
 * family parameters, its buffers or its callback is checked and refused
 * as it would be on a fresh group, and a call like it is accepted; the
 * same for every argument changed alone after a call that the entry
 * point's quick path (lib/api/collective.c, init_quick) takes, and for
 * an invalidated group. Over a
 * transport that drops everything (only the calls' return codes count).
 *
 * Last line: "N passed, M failed".
 */
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/corrected.h"
#include "ftcoll/tree.h"
#include "ftcoll/mitigation.h"
#include "check.h"
#include "null_transport.h"

static void ignore(const ftc_completion_t *c, void *arg) { (void)c, (void)arg; }

static int64_t in = 1, out;

static void good_args(ftc_coll_args_t *a, ftc_algo_t algo, const void *params)
{
    ftc_coll_args_init(a);
    a->algo = algo;
    a->f = 1;
    a->dtype = FTC_INT64;
    a->count = 1;
    a->sendbuf = &in;
    a->recvbuf = &out;
    a->deliver = ignore;
    a->params = params;
}

static void test_algo(ftc_algo_t algo)
{
    ftc_context_t *ctx;
    ftc_group_t *g;
    if (!CHECK_OK(ftc_context_create(0, 4, &ftc_test_null_ops, NULL,
                                     NULL, &ctx))
        || !CHECK_OK(ftc_group_create(ctx, 1, 0, 4, NULL, &g)))
        return;
    ftc_corrected_params_t cp;
    ftc_corrected_params_init(&cp);
    ftc_tree_params_t tp;
    ftc_tree_params_init(&tp);
    void *params = algo == FTC_ALGO_CORRECTED ? (void *)&cp : (void *)&tp;
    ftc_coll_args_t a;
    for (int pass = 0; pass < 2; pass++) {
        /* twice: with the parameters given, then with none */
        const void *p = pass == 0 ? params : NULL;
        good_args(&a, algo, p);
        CHECK_OK(ftc_init_allreduce(g, &a, NULL));
        CHECK_OK(ftc_init_allreduce(g, &a, NULL));     /* like it */

        good_args(&a, algo, p);
        a.root = 4;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
        good_args(&a, algo, p);
        a.f = 4;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
        good_args(&a, algo, p);
        a.dtype = (ftc_dtype_t)999;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
        good_args(&a, algo, p);
        a.count = (uint64_t)1 << 40;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EOVERFLOW);
        good_args(&a, algo, p);
        a.op = FTC_USER;        /* without user_fn */
        CHECK(ftc_init_allreduce(g, &a, NULL) < 0);
        good_args(&a, algo, p);
        a.checked = 2;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
        good_args(&a, algo, p);
        a.sendbuf = NULL;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
        good_args(&a, algo, p);
        a.recvbuf = NULL;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
        good_args(&a, algo, p);
        a.deliver = NULL;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
        /* The same collective as another one (bcast after allreduce). */
        good_args(&a, algo, p);
        CHECK_OK(ftc_init_bcast(g, &a, NULL));
        /* And the good call still passes after all these. */
        good_args(&a, algo, p);
        CHECK_OK(ftc_init_allreduce(g, &a, NULL));
    }
    /* One byte of the parameters changed to a bad value, the struct
     * itself the same. */
    good_args(&a, algo, params);
    CHECK_OK(ftc_init_allreduce(g, &a, NULL));
    if (algo == FTC_ALGO_CORRECTED)
        cp.bcast_tree.kind = (ftc_tree_kind_t)99;
    else
        tp.bcast_tree.kind = (ftc_tree_kind_t)99;
    CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
    if (algo == FTC_ALGO_CORRECTED) {
        ftc_corrected_params_init(&cp);
        cp.allreduce = (ftc_allreduce_algo_t)77;
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVAL);
    }
    ftc_context_destroy(ctx);
}

/* One argument changed after a good call: refused with the code a fresh
 * group (no call kept) gives it, whether the good call was kept with
 * its parameters or without. */
typedef void (*mutate_fn)(ftc_coll_args_t *a);

static void bad_algo(ftc_coll_args_t *a) { a->algo = (ftc_algo_t)999; }
static void bad_mismatch(ftc_coll_args_t *a)
{
    a->dtype = FTC_DOUBLE;
    a->op = FTC_BXOR;           /* not defined on floating point */
}
static void bad_uniform(ftc_coll_args_t *a) { a->uniform = 2; }
static void bad_size_big(ftc_coll_args_t *a) { a->size = sizeof(*a) + 8; }
static void bad_size_small(ftc_coll_args_t *a) { a->size = 4; }
static void bad_root(ftc_coll_args_t *a) { a->root = 7; }
static void bad_f(ftc_coll_args_t *a) { a->f = 9; }
static void bad_op(ftc_coll_args_t *a) { a->op = (ftc_op_t)-1; }
static void bad_user(ftc_coll_args_t *a) { a->op = FTC_USER; }
static void bad_count(ftc_coll_args_t *a) { a->count = UINT64_MAX; }
static void bad_send(ftc_coll_args_t *a) { a->sendbuf = NULL; }
static void bad_recv(ftc_coll_args_t *a) { a->recvbuf = NULL; }
static void bad_deliver(ftc_coll_args_t *a) { a->deliver = NULL; }

static int fresh_rc(ftc_algo_t algo, mutate_fn bad)
{
    ftc_context_t *ctx;
    ftc_group_t *g;
    if (ftc_context_create(0, 4, &ftc_test_null_ops, NULL, NULL, &ctx) != 0)
        return 0;
    int rc = 0;
    if (ftc_group_create(ctx, 1, 0, 4, NULL, &g) == FTC_OK) {
        ftc_coll_args_t a;
        good_args(&a, algo, NULL);
        bad(&a);
        rc = ftc_init_allreduce(g, &a, NULL);
    }
    ftc_context_destroy(ctx);
    return rc;
}

static void test_one_change(ftc_algo_t algo)
{
    static const mutate_fn bad[] = {
        bad_algo, bad_mismatch, bad_uniform, bad_size_big, bad_size_small,
        bad_root, bad_f, bad_op, bad_user, bad_count, bad_send, bad_recv,
        bad_deliver,
    };
    ftc_context_t *ctx;
    ftc_group_t *g;
    if (!CHECK_OK(ftc_context_create(0, 4, &ftc_test_null_ops, NULL,
                                     NULL, &ctx))
        || !CHECK_OK(ftc_group_create(ctx, 1, 0, 4, NULL, &g)))
        return;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int want = fresh_rc(algo, bad[i]);
        CHECK(want < 0);
        ftc_coll_args_t a;
        good_args(&a, algo, NULL);
        CHECK_OK(ftc_init_allreduce(g, &a, NULL));
        CHECK_OK(ftc_init_allreduce(g, &a, NULL));     /* kept, and like it */
        bad[i](&a);
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), want);
        bad[i](&a);                                     /* again, now */
        CHECK_RC(ftc_init_allreduce(g, &a, NULL), want);
    }
    /* A group that stopped taking calls: its status, not a start. */
    ftc_coll_args_t a;
    good_args(&a, algo, NULL);
    CHECK_OK(ftc_init_allreduce(g, &a, NULL));
    CHECK_OK(ftc_group_invalidate(g));
    CHECK_RC(ftc_init_allreduce(g, &a, NULL), FTC_EINVALIDATED);
    ftc_context_destroy(ctx);
}

int main(void)
{
    test_algo(FTC_ALGO_CORRECTED);
    test_algo(FTC_ALGO_TREE);
    test_one_change(FTC_ALGO_CORRECTED);
    test_one_change(FTC_ALGO_TREE);
    return check_report();
}
