/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lingering operations retire, and are freed, as later ones deliver
 * (lib/core/settle.c, retire_lingering; lib/core/op.h, ftc_cop_linger,
 * FTC_LINGER_OPS). On the loopback, n = 3, a stream of 3 x
 * FTC_LINGER_OPS allreduces, each run to the end before the next
 * starts, with the corrected family's exchange, its reduce + bcast, and
 * the tree (whose operations do not linger). After every allreduce, at
 * every rank:
 *
 *   - the result is the exact sum, delivered once with FTC_OK;
 *   - the group's lingerers' list holds min(k, FTC_LINGER_OPS - 1)
 *     operations after the k-th allreduce (the corrected family; none
 *     for the tree): an operation retires at the FTC_LINGER_OPS-th
 *     delivery on its group counting its own, which is the one that
 *     retires the oldest; oldest first, none overdue (retire_at above
 *     the group's delivery count);
 *   - the group's list of operations holds exactly the lingerers: every
 *     retired one was freed at that settle, none waits for a later walk.
 *
 * Fails if retirement stops (the list grows past FTC_LINGER_OPS), if a
 * retired operation is not handed to the reaper (the operations' list
 * grows), or if an operation retires early.
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/op.h"
#include "ftcoll/corrected.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"
#include "loopback_groups.h"

enum { N = 3, CALLS = 3 * FTC_LINGER_OPS };

static uint32_t count_ops(const ftc_group_t *g)
{
    uint32_t k = 0;
    for (const ftc_cop_t *op = g->ops; op != NULL; op = op->next)
        k++;
    return k;
}

/* The lingerers' list: its length; ok is false if it is out of order,
 * holds an operation not marked as on it, or one already overdue. */
static uint32_t count_lingering(const ftc_group_t *g, bool *ok)
{
    uint32_t k = 0;
    uint64_t last = 0;
    *ok = true;
    for (const ftc_cop_t *op = g->linger_head; op != NULL;
         op = op->next_linger) {
        if (!op->in_linger || op->retire_at < last
            || op->retire_at <= g->colls_done)
            *ok = false;
        last = op->retire_at;
        k++;
    }
    return k;
}

static void run(ftc_algo_t algo, ftc_allreduce_algo_t variant,
                const char *what)
{
    check_set_context(what);
    ftc_lb_world_t *lb;
    ftc_context_t *ctx[N];
    ftc_group_t *g[N];
    if (!loopback_groups_create(N, &lb, ctx, g))
        return;
    bool lingers = algo == FTC_ALGO_CORRECTED;
    uint32_t wrong = 0, bad_linger = 0, bad_ops = 0;
    for (uint32_t k = 1; k <= CALLS; k++) {
        ftc_corrected_params_t cp;
        ftc_corrected_params_init(&cp);
        cp.allreduce = variant;
        int64_t in[N], out[N], want = 0;
        outcome_t res[N];
        memset(res, 0, sizeof(res));
        for (uint32_t r = 0; r < N; r++) {
            in[r] = (int64_t)(k * 131 + r * 17) - 200;
            out[r] = -999;
            want += in[r];
        }
        for (uint32_t r = 0; r < N; r++) {
            ftc_coll_args_t a = loopback_int64_args(
                algo, 1, algo == FTC_ALGO_CORRECTED ? &cp : NULL, 1, &in[r],
                &out[r], &res[r]);
            if (!CHECK_OK(ftc_init_allreduce(g[r], &a, NULL)))
                abort();
        }
        ftc_lb_run(lb, UINT64_MAX);
        uint32_t want_linger = !lingers            ? 0
                               : k < FTC_LINGER_OPS ? k
                                                    : FTC_LINGER_OPS - 1;
        for (uint32_t r = 0; r < N; r++) {
            if (res[r].calls != 1 || res[r].status != FTC_OK
                || out[r] != want) {
                if (wrong++ < 5)
                    fprintf(stderr, "%s: allreduce %u, rank %u: %d calls,"
                            " status %d, %" PRId64 " (want %" PRId64 ")\n",
                            what, k, r, res[r].calls, res[r].status, out[r],
                            want);
            }
            bool in_order;
            uint32_t nl = count_lingering(g[r], &in_order);
            uint32_t nops = count_ops(g[r]);
            if (nl != want_linger || !in_order) {
                if (bad_linger++ < 5)
                    fprintf(stderr, "%s: allreduce %u, rank %u: %u lingering"
                            " (want %u)%s\n", what, k, r, nl, want_linger,
                            in_order ? "" : ", out of order or overdue");
            }
            if (nops != nl) {
                if (bad_ops++ < 5)
                    fprintf(stderr, "%s: allreduce %u, rank %u: %u"
                            " operations, %u lingering\n", what, k, r, nops,
                            nl);
            }
        }
    }
    CHECK_EQ(wrong, 0u);
    CHECK_EQ(bad_linger, 0u);
    CHECK_EQ(bad_ops, 0u);
    loopback_groups_destroy(N, lb, ctx, g);
}

int main(void)
{
    run(FTC_ALGO_CORRECTED, FTC_ALLREDUCE_EXCHANGE, "exchange");
    run(FTC_ALGO_CORRECTED, FTC_ALLREDUCE_REDUCE_BCAST, "reduce+bcast");
    run(FTC_ALGO_TREE, FTC_ALLREDUCE_AUTO, "tree");
    return check_report();
}
