/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steady stream's template for the corrected allreduce
 * (lib/algo/corrected/allreduce.c, ar_destroy and
 * ftc_allreduce_op_create; lib/core/op.h, ftc_cop_template_of and
 * ftc_cop_template_fits). A delivered corrected allreduce lingers for
 * FTC_LINGER_OPS deliveries, so the block a like call restarts is the one
 * that retired last, 64 operations older, not the last one's: the
 * template must come back only if the group's signature has not changed
 * since that block was set up.
 *
 * On the loopback, per group size n = 2..5, a seeded sequence of
 * corrected calls (f = 1) in which long runs of like calls (so that
 * blocks retire as templates and are taken again) are broken by bursts
 * of changed ones: the root, the count, the operator, the allreduce's
 * kind (exchange or reduce + bcast, the same code and template), the
 * reduce's failure information (list or count), the bcast tree's kind,
 * or a corrected reduce in between (whose block is never a template;
 * the stream goes back to allreduces after the burst).
 * Checked at every call:
 *   - every rank delivers FTC_OK and the value a fresh group gives
 *     (computed here from the inputs);
 *   - rank 0 takes a template exactly when the block it holds is one
 *     from the same signature generation and the call repeats the last
 *     (the group's count of templates taken); a call that changes the
 *     signature never takes one;
 * and per size: both kinds of call ran many times.
 *
 * Fails with the template's signature check switched off (a changed
 * call restarts a template of another count or operator: wrong values,
 * and templates taken where none may be) and if the template is never
 * kept (none taken).
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/group.h"
#include "core/op.h"
#include "ftcoll/corrected.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"
#include "loopback_groups.h"

enum { NMAX = 5, CALLS = 1500, CMAX = 3 };

typedef struct call {
    ftc_coll_t coll;        /* allreduce, or reduce */
    uint32_t root, count;
    ftc_op_t op;
    ftc_allreduce_algo_t algo;
    ftc_fault_info_t fault_info;
    ftc_tree_kind_t bcast_kind;
} call_t;

/* One thing of c changed (it may draw the value it had). */
static void change(call_t *c, uint32_t n)
{
    switch (draw(7)) {
    case 0: c->root = draw(n); break;
    case 1: c->count = 1 + draw(CMAX); break;
    case 2: c->op = draw(2) ? FTC_SUM : FTC_MAX; break;
    case 3:
        c->algo = draw(2) ? FTC_ALLREDUCE_EXCHANGE : FTC_ALLREDUCE_REDUCE_BCAST;
        break;
    case 4: c->fault_info = draw(2) ? FTC_FAULT_LIST : FTC_FAULT_COUNT; break;
    case 5: c->bcast_kind = draw(2) ? FTC_TREE_KARY : FTC_TREE_BINOMIAL; break;
    default:
        c->coll = FTC_COLL_REDUCE;  /* until the burst ends */
        break;
    }
}

static bool same_call(const call_t *a, const call_t *b)
{
    return a->coll == b->coll && a->root == b->root && a->count == b->count
           && a->op == b->op && a->algo == b->algo
           && a->fault_info == b->fault_info && a->bcast_kind == b->bcast_kind;
}

static void run(uint32_t n)
{
    char what[32];
    snprintf(what, sizeof(what), "n=%u", n);
    check_set_context(what);
    ftc_lb_world_t *lb;
    ftc_context_t *ctx[NMAX];
    ftc_group_t *g[NMAX];
    if (!loopback_groups_create(n, &lb, ctx, g))
        return;
    call_t c = {FTC_COLL_ALLREDUCE, 0, 1, FTC_SUM, FTC_ALLREDUCE_EXCHANGE,
                FTC_FAULT_LIST, FTC_TREE_BINOMIAL};
    call_t last = c;
    uint32_t wrong = 0, took = 0, changed = 0, mistaken = 0, burst = 0;
    for (uint32_t k = 0; k < CALLS; k++) {
        /* Long runs of like calls (blocks retire 64 deliveries later, as
         * templates), and bursts of a few changed ones, which may go
         * back to an older call's signature within a lingering window. */
        if (k > 0 && (burst > 0 || draw(150) == 0)) {
            if (burst == 0)
                burst = 1 + draw(5);
            burst--;
            change(&c, n);
        } else {
            c.coll = FTC_COLL_ALLREDUCE;    /* a stream of allreduces */
        }
        ftc_corrected_params_t cp;
        ftc_corrected_params_init(&cp);
        cp.allreduce = c.algo;
        cp.fault_info = c.fault_info;
        cp.bcast_tree.kind = c.bcast_kind;
        if (c.bcast_kind == FTC_TREE_KARY)
            cp.bcast_tree.k = 3;
        int64_t in[NMAX][CMAX], out[NMAX][CMAX], want[CMAX];
        outcome_t res[NMAX];
        memset(res, 0, sizeof(res));
        for (uint32_t i = 0; i < c.count; i++)
            want[i] = c.op == FTC_SUM ? 0 : INT64_MIN;
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t i = 0; i < c.count; i++) {
                in[r][i] = (int64_t)((k * 31 + r * 7 + i * 3) % 17) - 5;
                out[r][i] = -999;
                if (c.op == FTC_SUM)
                    want[i] += in[r][i];
                else if (in[r][i] > want[i])
                    want[i] = in[r][i];
            }
        /* Rank 0 must take a template exactly when it holds a corrected
         * allreduce's block freed as one under the current signature
         * generation (so set up by a call like every one since) and this
         * call repeats the last. */
        const ftc_cop_t *spare = g[0]->spare_op;
        bool expect = g[0]->spare_is_template && spare != NULL
                      && spare->coll == FTC_COLL_ALLREDUCE
                      && spare->sig_gen == g[0]->sig_memo.gen
                      && same_call(&c, &last);
        uint32_t gen_before = g[0]->sig_memo.gen;
        uint64_t taken_before = g[0]->templates_taken;
        for (uint32_t r = 0; r < n; r++) {
            ftc_coll_args_t a = loopback_int64_args(
                FTC_ALGO_CORRECTED, 1, &cp, c.count, in[r], out[r], &res[r]);
            a.root = c.root;
            a.op = c.op;
            int rc = c.coll == FTC_COLL_REDUCE
                         ? ftc_init_reduce(g[r], &a, NULL)
                         : ftc_init_allreduce(g[r], &a, NULL);
            if (!CHECK_OK(rc))
                abort();
        }
        bool taken = g[0]->templates_taken != taken_before;
        if (taken)
            took++;
        if (g[0]->sig_memo.gen != gen_before)
            changed++;
        /* A changed signature never takes one (it would be another
         * count's, operator's or kind's block). */
        if (taken != expect || (taken && g[0]->sig_memo.gen != gen_before)) {
            if (mistaken < 5)
                fprintf(stderr, "call %u: template %s, expected %s\n", k,
                        taken ? "taken" : "not taken",
                        expect ? "taken" : "not");
            mistaken++;
        }
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
                            " algo %d info %d bcast %d): rank %u wrong\n", k,
                            (int)c.coll, c.root, c.count, (int)c.op,
                            (int)c.algo, (int)c.fault_info,
                            (int)c.bcast_kind, r);
                wrong++;
            }
        }
        last = c;
    }
    printf("n = %u: %u calls, %u took a template, %u changed the"
           " signature\n", n, (unsigned)CALLS, took, changed);
    CHECK_EQ(wrong, 0u);
    CHECK_EQ(mistaken, 0u);
    /* Both paths ran, many times. */
    CHECK(took >= CALLS / 4);
    CHECK(changed >= 5);
    loopback_groups_destroy(n, lb, ctx, g);
}

int main(void)
{
    draw_state = 0x9e3779b97f4a7c15ull;     /* this test's own sequence */
    for (uint32_t n = 2; n <= NMAX; n++)
        run(n);
    return check_report();
}
