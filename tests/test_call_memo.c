/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's last checked call (lib/api/call_memo.h): after a call that
 * passed, a call that differs from it in one argument, one byte of the
 * family parameters, its buffers or its callback is checked and refused
 * as it would be on a fresh group, and a call like it is accepted. Over a
 * transport that drops everything (only the calls' return codes count).
 *
 * Last line: "N passed, M failed".
 */
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/corrected.h"
#include "ftcoll/tree.h"
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

int main(void)
{
    test_algo(FTC_ALGO_CORRECTED);
    test_algo(FTC_ALGO_TREE);
    return check_report();
}
