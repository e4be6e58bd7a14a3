/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steady stream's template (lib/core/op.h, ftc_cop_template and
 * ftc_cop_restart; the tree family): a group's next operation of the
 * same family and signature starts from the last one's block and shape,
 * and anything else is set up anew. On the loopback, per group size
 * n = 2..7, a seeded sequence of tree collectives in which each call
 * repeats the last one or changes one thing (collective, root, count,
 * operator, the bcast tree's kind) gives at every rank the result a
 * fresh group gives (computed here from the inputs), and after every
 * fault-free operation the group's spare block is a template while the
 * group's plan holds every shape (roots 0 and 1); with every rank a
 * root at n = 7 the plan fills, and an operation whose tree nodes are
 * its own is not kept as a template (under ASan, one that was read
 * its freed chunk). Counted
 * (at rank 0): the like calls, which set nothing up (the group's
 * signature memo generation does not move), and the changed ones, which
 * miss the memo; every call is one or the other (the first misses), and each
 * kind is at least an eighth of them.
 *
 * Fails if the template is taken across a signature change (a count,
 * root or operator of the last run: wrong sums) or never kept.
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/group.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/tree.h"
#include "ftcoll_loopback.h"
#include "loopback_groups.h"

enum { NMAX = 7, CALLS = 200, CMAX = 3 };

typedef struct call {
    ftc_coll_t coll;
    uint32_t root, count;
    ftc_op_t op;
    ftc_tree_kind_t bcast_kind;
} call_t;

/* roots: the roots drawn from (0..roots-1). With few, the group's plan
 * (8 tree nodes) holds every shape and every operation must leave a
 * template; with every rank a root and both bcast trees (n = 7: 14
 * nodes) it fills, operations carve their nodes in their own memory,
 * and those must not (their next run would read freed memory: ASan). */
static void run(uint32_t n, uint32_t roots, bool plan_fits)
{
    char what[48];
    snprintf(what, sizeof(what), "n=%u, %u roots", n, roots);
    check_set_context(what);
    ftc_lb_world_t *lb;
    ftc_context_t *ctx[NMAX];
    ftc_group_t *g[NMAX];
    if (!loopback_groups_create(n, &lb, ctx, g))
        return;
    call_t c = {FTC_COLL_ALLREDUCE, 0, 1, FTC_SUM, FTC_TREE_BINOMIAL};
    uint32_t wrong = 0, not_kept = 0, like = 0, changed = 0;
    for (uint32_t k = 0; k < CALLS; k++) {
        if (k > 0) {
            switch (draw(8)) {  /* half the calls repeat the last one */
            case 0: c.coll = (ftc_coll_t)draw(3); break;
            case 1: c.root = draw(roots); break;
            case 2: c.count = 1 + draw(CMAX); break;
            case 3: c.op = draw(2) ? FTC_SUM : FTC_MAX; break;
            default: break;
            }
            if (draw(16) == 0)
                c.bcast_kind = draw(2) ? FTC_TREE_KARY : FTC_TREE_BINOMIAL;
        }
        ftc_tree_params_t tp;
        ftc_tree_params_init(&tp);
        tp.bcast_tree.kind = c.bcast_kind;
        if (c.bcast_kind == FTC_TREE_KARY)
            tp.bcast_tree.k = 3;
        int64_t in[NMAX][CMAX], out[NMAX][CMAX], want[CMAX];
        outcome_t res[NMAX];
        memset(res, 0, sizeof(res));
        for (uint32_t i = 0; i < c.count; i++)
            want[i] = c.op == FTC_SUM ? 0 : INT64_MIN;
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t i = 0; i < c.count; i++) {
                in[r][i] = (int64_t)((k * 31 + r * 7 + i * 3) % 17) - 5;
                out[r][i] = -999;
                if (c.coll == FTC_COLL_BCAST)
                    want[i] = in[c.root][i];
                else if (c.op == FTC_SUM)
                    want[i] += in[r][i];
                else if (in[r][i] > want[i])
                    want[i] = in[r][i];
            }
        uint32_t gen_before = g[0]->sig_memo.gen;
        bool was_template = g[0]->spare_is_template;
        for (uint32_t r = 0; r < n; r++) {
            ftc_coll_args_t a = loopback_int64_args(
                FTC_ALGO_TREE, 0, &tp, c.count, in[r], out[r], &res[r]);
            a.root = c.root;
            a.op = c.op;
            int rc = c.coll == FTC_COLL_REDUCE ? ftc_init_reduce(g[r], &a, NULL)
                     : c.coll == FTC_COLL_BCAST ? ftc_init_bcast(g[r], &a, NULL)
                                                 : ftc_init_allreduce(g[r], &a, NULL);
            if (!CHECK_OK(rc))
                abort();
        }
        /* A like call sets nothing up (the signature memo is not even
         * asked); another signature misses it. */
        if (g[0]->sig_memo.gen != gen_before)
            changed++;
        else if (was_template)
            like++;
        ftc_lb_run(lb, UINT64_MAX);
        for (uint32_t r = 0; r < n; r++) {
            bool has_out = c.coll != FTC_COLL_REDUCE || r == c.root;
            bool ok = res[r].calls == 1 && res[r].status == FTC_OK;
            for (uint32_t i = 0; has_out && i < c.count; i++)
                if (out[r][i] != want[i])
                    ok = false;
            if (!ok) {
                if (wrong < 5)
                    fprintf(stderr, "call %u (coll %d root %u count %u op %d"
                            " bcast %d): rank %u wrong\n", k, (int)c.coll,
                            c.root, c.count, (int)c.op, (int)c.bcast_kind, r);
                wrong++;
            }
            if (!g[r]->spare_is_template)
                not_kept++;
        }
    }
    CHECK_EQ(wrong, 0u);
    if (plan_fits) {
        CHECK_EQ(not_kept, 0u);
        /* Both paths ran, many times (about half the calls repeat; a
         * drawn change may repeat the value it replaces). */
        CHECK(like >= CALLS / 4);
        CHECK(changed >= CALLS / 8);
        CHECK_EQ(like + changed, (uint32_t)CALLS); /* the first misses too */
    } else {
        CHECK(not_kept > 0);    /* the full plan's case ran */
    }
    loopback_groups_destroy(n, lb, ctx, g);
}

int main(void)
{
    for (uint32_t n = 2; n <= NMAX; n++)
        run(n, 2, true);
    run(NMAX, NMAX, false);
    return check_report();
}
