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
 * variant (reduce + bcast, exchange or butterfly: the same code and
 * template; drawn twice as often as the rest, always another), the
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
 *   - an allreduce ran the variant it asked for: all ranks together
 *     sent its failure-free messages (exchange n (n - 1), butterfly
 *     P log2 P + 2 (n - P)), or for reduce + bcast neither of those;
 * and per size: both kinds of call ran many times, and each variant
 * took templates and was switched to from another.
 *
 * Fails with the template's signature check switched off (a changed
 * call restarts a template of another count or operator: wrong values,
 * and templates taken where none may be), if the template is never
 * kept (none taken), and if ftc_corrected_params_alike ignored the
 * variant, or told only reduce + bcast from the two round 0s: a block
 * restarted as another variant's then runs its own variant, with the
 * right value but another message count, at every n = 2..5 (checked by
 * hand; the version that drew exchange and reduce + bcast only, 1500
 * calls, passed with the variant ignored).
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
#include "checker.h"
#include "ftcoll_loopback.h"
#include "loopback_groups.h"

enum { NMAX = 5, CALLS = 5000, CMAX = 3 };

typedef struct call {
    ftc_coll_t coll;        /* allreduce, or reduce */
    uint32_t root, count;
    ftc_op_t op;
    ftc_allreduce_algo_t algo;
    ftc_fault_info_t fault_info;
    ftc_tree_kind_t bcast_kind;
} call_t;

/* The allreduce's variants a stream switches among. */
enum { NVARIANTS = 3 };
static const ftc_allreduce_algo_t variants[NVARIANTS] = {
    FTC_ALLREDUCE_REDUCE_BCAST, FTC_ALLREDUCE_EXCHANGE,
    FTC_ALLREDUCE_BUTTERFLY};

static uint32_t variant_index(ftc_allreduce_algo_t algo)
{
    for (uint32_t v = 0; v < NVARIANTS; v++)
        if (variants[v] == algo)
            return v;
    abort();
}

/* One thing of c changed (it may draw the value it had, but for the
 * allreduce's variant, drawn twice as often as the rest and always
 * another: a stream's switches among the three are what the template
 * must tell apart). */
static void change(call_t *c, uint32_t n)
{
    switch (draw(8)) {
    case 0: c->root = draw(n); break;
    case 1: c->count = 1 + draw(CMAX); break;
    case 2: c->op = draw(2) ? FTC_SUM : FTC_MAX; break;
    case 3:
    case 7:
        c->algo = variants[(variant_index(c->algo) + 1 + draw(NVARIANTS - 1))
                           % NVARIANTS];
        break;
    case 4: c->fault_info = draw(2) ? FTC_FAULT_LIST : FTC_FAULT_COUNT; break;
    case 5: c->bcast_kind = draw(2) ? FTC_TREE_KARY : FTC_TREE_BINOMIAL; break;
    case 6:
        c->coll = FTC_COLL_REDUCE;  /* until the burst ends */
        break;
    }
}

/* The messages a failure-free allreduce of this variant sends in all, or
 * 0 for reduce + bcast, whose count depends on the tree and the
 * correction: the exchange n (n - 1), the butterfly the checker's
 * P log2 P + 2 (n - P) (docs/corrected.md §5.6). */
static uint64_t round0_messages(ftc_allreduce_algo_t algo, uint32_t n)
{
    if (algo == FTC_ALLREDUCE_EXCHANGE)
        return (uint64_t)n * (n - 1);
    return algo == FTC_ALLREDUCE_BUTTERFLY ? ftc_expected_butterfly_messages(n)
                                           : 0;
}

/* Every message every rank's context sent so far. */
static uint64_t messages_sent(ftc_context_t *const *ctx, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t r = 0; r < n; r++) {
        ftc_counters_t c;
        ftc_context_counters(ctx[r], &c);
        sum += c.msgs_sent;
    }
    return sum;
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
    uint32_t other_variant = 0;
    /* Per variant: allreduce calls, templates taken, and calls that
     * switched to it from another variant. */
    uint32_t calls_of[NVARIANTS] = {0}, took_of[NVARIANTS] = {0},
             into[NVARIANTS] = {0};
    ftc_allreduce_algo_t last_algo = c.algo; /* the last allreduce's */
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
        uint64_t sent_before = messages_sent(ctx, n);
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
        if (c.coll == FTC_COLL_ALLREDUCE) {
            uint32_t v = variant_index(c.algo);
            calls_of[v]++;
            if (taken)
                took_of[v]++;
            if (c.algo != last_algo)
                into[v]++;
            last_algo = c.algo;
        }
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
        uint64_t sent = messages_sent(ctx, n) - sent_before;
        /* The call ran the variant it asked for, whatever block it
         * took: a round 0's exact count, or reduce + bcast's, which is
         * neither (n = 2..5: 6, 12, 22, 32 against at most 20). */
        if (c.coll == FTC_COLL_ALLREDUCE) {
            uint64_t r0 = round0_messages(c.algo, n);
            bool as_asked =
                r0 != 0 ? sent == r0
                        : sent != round0_messages(FTC_ALLREDUCE_EXCHANGE, n)
                              && sent != round0_messages(
                                     FTC_ALLREDUCE_BUTTERFLY, n);
            if (!as_asked) {
                if (other_variant < 5)
                    fprintf(stderr, "call %u (%s): %" PRIu64 " messages,"
                            " another variant's\n", k,
                            ftc_allreduce_algo_name(c.algo), sent);
                other_variant++;
            }
        }
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
    for (uint32_t v = 0; v < NVARIANTS; v++)
        printf("  %-12s %4u allreduces, %4u took a template, switched to"
               " %u times\n", ftc_allreduce_algo_name(variants[v]),
               calls_of[v], took_of[v], into[v]);
    CHECK_EQ(wrong, 0u);
    CHECK_EQ(mistaken, 0u);
    CHECK_EQ(other_variant, 0u);
    /* Both paths ran, many times. */
    CHECK(took >= CALLS / 4);
    CHECK(changed >= 5);
    /* Every variant ran as a steady stream (its templates taken) and
     * was switched to from another: a stream that restarted one's block
     * as another's would show above. */
    for (uint32_t v = 0; v < NVARIANTS; v++) {
        CHECK(took_of[v] >= 10);
        CHECK(into[v] >= 1);
    }
    loopback_groups_destroy(n, lb, ctx, g);
}

int main(void)
{
    draw_state = 0x9e3779b97f4a7c15ull;     /* this test's own sequence */
    for (uint32_t n = 2; n <= NMAX; n++)
        run(n);
    return check_report();
}
