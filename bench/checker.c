/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "report.h"
#include "sim_ulfm.h"


/* The algorithm's messages: what the theorems count. With segments
 * (ftc_config_t's segment_size, --segment) one message is several on the
 * wire, plus credits: count what the operations sent instead. Without
 * them the transport's count, which also catches a stray control
 * message. */
/* Whether the operation's values may have left as segments: a segment
 * size was set, or the value is large enough for the library's default
 * one. A payload is the value plus the algorithm's own fields, so only
 * a value up to half the default segment is sure to travel whole. */
static bool may_segment(const ftc_scenario_t *s,
                        const ftc_scenario_result_t *res)
{
    return s->segment_size != 0
           || res->nbytes > FTC_SEGMENT_SIZE_DEFAULT / 2;
}

static uint64_t algo_messages(const ftc_scenario_t *s,
                              const ftc_scenario_result_t *res)
{
    if (!may_segment(s, res))
        return res->messages;
    uint64_t m = 0;
    for (uint32_t r = 0; r < res->n; r++)
        if (!res->ranks[r].failed)
            m += res->ranks[r].stats.msgs_sent;
    return m;
}

uint64_t ftc_expected_reduce_messages(uint32_t n, uint32_t f)
{
    uint64_t a = (n - 1) % (f + 1) + 1;
    return (uint64_t)f * (f + 1) * ((n - 1) / (f + 1)) + a * (a - 1) + (n - 1);
}

uint64_t ftc_expected_butterfly_messages(uint32_t n)
{
    uint64_t p = 1, steps = 0;
    while (2 * p <= n) {
        p *= 2;
        steps++;
    }
    return p * steps + 2 * (n - p);
}

uint64_t ftc_expected_bcast_opportunistic_messages(const ftc_tree_t *t,
                                                   uint32_t n, uint32_t d)
{
    uint64_t total = n - 1;
    uint32_t cap = 64;
    uint32_t *ch = malloc(sizeof(uint32_t) * cap);
    if (ch == NULL)
        return 0;
    for (uint32_t p = 0; p < n; p++) {
        uint32_t k = ftc_tree_children(t, n, p, NULL, 0);
        if (k > cap) {
            uint32_t *c2 = realloc(ch, sizeof(uint32_t) * k);
            if (c2 == NULL)
                break;
            ch = c2;
            cap = k;
        }
        ftc_tree_children(t, n, p, ch, k);
        for (uint32_t off = 1; off <= d && (uint64_t)p + off < n; off++) {
            bool child = false;
            for (uint32_t i = 0; i < k; i++)
                if (ch[i] == p + off)
                    child = true;
            if (!child)
                total++;
        }
    }
    free(ch);
    return total;
}

static bool is_float(ftc_dtype_t t)
{
    return t == FTC_FLOAT || t == FTC_DOUBLE;
}

/* Equal, up to rounding for floating point (reduction order varies). */
static bool values_equal(const ftc_scenario_t *s, const void *a, const void *b,
                         size_t nbytes)
{
    if (!is_float(s->args.dtype))
        return memcmp(a, b, nbytes) == 0;
    for (uint64_t i = 0; i < s->args.count; i++) {
        double x, y;
        if (s->args.dtype == FTC_FLOAT) {
            float fx, fy;
            memcpy(&fx, (const float *)a + i, 4);
            memcpy(&fy, (const float *)b + i, 4);
            x = fx;
            y = fy;
        } else {
            memcpy(&x, (const double *)a + i, 8);
            memcpy(&y, (const double *)b + i, 8);
        }
        double tol = (s->args.dtype == FTC_FLOAT ? 1e-4 : 1e-10)
                     * (fabs(x) + fabs(y) + 1.0);
        if (fabs(x - y) > tol)
            return false;
    }
    return true;
}

/* Is v the reduction over some S, non-failed <= S <= non-failed + in-op
 * failed? Tries every subset of the in-operation failures (a few). */
static bool is_valid_reduction(const ftc_scenario_t *s,
                               const ftc_scenario_result_t *res,
                               const void *v)
{
    uint32_t inop[20];
    uint32_t ninop = 0;
    for (uint32_t r = 0; r < res->n; r++) {
        if (res->ranks[r].failed && !res->ranks[r].pre_failed) {
            if (ninop == 20)
                return true; /* too many to enumerate: not checked */
            inop[ninop++] = r;
        }
    }
    size_t nb = res->nbytes ? res->nbytes : 1;
    uint8_t *acc = malloc(nb);
    if (acc == NULL)
        return false;
    bool ok = false;
    for (uint64_t mask = 0; mask < (1ull << ninop) && !ok; mask++) {
        bool first = true;
        for (uint32_t r = 0; r < res->n; r++) {
            bool in = !res->ranks[r].failed;
            for (uint32_t i = 0; i < ninop; i++)
                if (inop[i] == r && (mask >> i & 1))
                    in = true;
            if (!in)
                continue;
            if (first) {
                memcpy(acc, res->inputs[r], res->nbytes);
                first = false;
            } else {
                ftc_reduce_local(acc, res->inputs[r], s->args.count,
                                 s->args.dtype, s->args.op, s->args.user_fn,
                                 s->args.user_arg);
            }
        }
        if (first)
            break; /* nobody alive */
        ok = values_equal(s, acc, v, res->nbytes);
    }
    free(acc);
    return ok;
}

static uint32_t count_failed(const ftc_scenario_result_t *res)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < res->n; r++)
        k += res->ranks[r].failed;
    return k;
}

static uint64_t latest_live_start(const ftc_scenario_result_t *res)
{
    uint64_t t = 0;
    for (uint32_t r = 0; r < res->n; r++)
        if (!res->ranks[r].failed && res->ranks[r].start_ns > t)
            t = res->ranks[r].start_ns;
    return t;
}

static void check_common(const ftc_scenario_t *s,
                         const ftc_scenario_result_t *res, ftc_report_t *rep)
{
    if (res->hit_event_limit)
        ftc_report_violation(rep, "the run did not end by itself within %llu events",
                (unsigned long long)res->events);
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        if (rr->delivered > 1)
            ftc_report_violation(rep, "rank %u delivered %u times (at most once)", r,
                    rr->delivered);
        if (!rr->failed && rr->delivered == 0)
            ftc_report_violation(rep, "non-failed rank %u never delivered (hang)", r);
    }
    (void)s;
}

/* The completion states exactly which inputs a result holds (list
 * scheme: failed = the members whose input it misses; count scheme:
 * failed_count = how many; bit scheme: FTC_FAILED_UNKNOWN). Checkable
 * where the inputs name their contributors (FTC_INPUT_UNIT, int64 sum):
 * element i of the result is 1 exactly when rank i's input is in. */
static void check_exclusion(const ftc_scenario_t *s,
                            const ftc_scenario_result_t *res, uint32_t r,
                            ftc_report_t *rep)
{
    const ftc_rank_result_t *rr = &res->ranks[r];
    if (s->input != FTC_INPUT_UNIT || s->args.dtype != FTC_INT64
        || s->args.op != FTC_SUM || s->args.algo != FTC_ALGO_CORRECTED
        || !rr->has_value || s->lean)
        return;
    const int64_t *v = rr->value;
    uint32_t excluded = 0;
    for (uint32_t i = 0; i < res->n; i++)
        excluded += v[i] == 0;
    switch (s->corrected.fault_info) {
    case FTC_FAULT_LIST: {
        bool ok = rr->nfailed_list == excluded && rr->failed_count == excluded;
        for (uint32_t i = 0; ok && i < rr->nfailed_list; i++)
            ok = rr->failed_list[i] < res->n && v[rr->failed_list[i]] == 0;
        if (!ok)
            ftc_report_violation(rep, "rank %u: its failed list (%u ranks, count %u) is "
                    "not the %u inputs its result misses", r,
                    rr->nfailed_list, rr->failed_count, excluded);
        break;
    }
    case FTC_FAULT_COUNT:
        if (rr->failed_count != excluded)
            ftc_report_violation(rep, "rank %u: failed_count %u but its result misses %u "
                    "inputs", r, rr->failed_count, excluded);
        break;
    case FTC_FAULT_BIT:
        if (rr->failed_count != FTC_FAILED_UNKNOWN)
            ftc_report_violation(rep, "rank %u: the bit scheme cannot know the failures, "
                    "yet reports %u", r, rr->failed_count);
        break;
    }
}

/* ftco takes no f: it tolerates any number of failures
 * (docs/ftco.md, Guarantees). */
static bool within_tolerance(const ftc_scenario_t *s, uint32_t k)
{
    return s->args.algo == FTC_ALGO_FTCO || k <= s->args.f;
}

static void check_reduce(const ftc_scenario_t *s,
                         const ftc_scenario_result_t *res, uint32_t k,
                         ftc_report_t *rep)
{
    uint32_t root = s->args.root;
    const ftc_rank_result_t *rr = &res->ranks[root];
    bool within_f = within_tolerance(s, k);
    for (uint32_t r = 0; r < res->n && within_f; r++)
        if (!res->ranks[r].failed && res->ranks[r].delivered
            && res->ranks[r].status != FTC_OK)
            ftc_report_violation(rep, "R5: rank %u delivered %s with %u <= f failures", r,
                    ftc_err_name(res->ranks[r].status), k);
    if (!rr->failed && rr->delivered && rr->status == FTC_OK) {
        if (rr->deliver_ns < latest_live_start(res))
            ftc_report_violation(rep, "R1: root delivered before every live process started");
        if (!is_valid_reduction(s, res, rr->value))
            ftc_report_violation(rep, "R3/R4: root's result is not the reduction over "
                         "the live inputs plus whole failed ones");
        check_exclusion(s, res, root, rep);
    }
}

static void check_allreduce(const ftc_scenario_t *s,
                            const ftc_scenario_result_t *res, uint32_t k,
                            ftc_report_t *rep)
{
    bool within_f = within_tolerance(s, k);
    int first = -1;
    uint64_t t0 = latest_live_start(res);
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        if (rr->failed || !rr->delivered)
            continue;
        if (rr->status != FTC_OK) {
            if (within_f)
                ftc_report_violation(rep, "A3: rank %u delivered %s with %u <= f failures",
                        r, ftc_err_name(rr->status), k);
            continue;
        }
        if (rr->deliver_ns < t0)
            ftc_report_violation(rep, "A1: rank %u delivered before every live process "
                         "started", r);
        check_exclusion(s, res, r, rep);
        if (first < 0) {
            first = (int)r;
            if (!is_valid_reduction(s, res, rr->value))
                ftc_report_violation(rep, "A4/A5: rank %u's result is not the reduction "
                             "over the live inputs plus whole failed ones", r);
        } else if (!values_equal(s, rr->value, res->ranks[first].value,
                                 res->nbytes)) {
            ftc_report_violation(rep, "A5: ranks %d and %u delivered different values",
                    first, r);
        } else if (res->nbytes > 0
                   && memcmp(rr->value, res->ranks[first].value,
                             res->nbytes) != 0) {
            /* The same value means the same bits: one root's bytes, or
             * the exchange's reduction in rank order (corrected.md §5.1),
             * never sums that differ in rounding. */
            ftc_report_violation(rep, "A5: ranks %d and %u delivered values that "
                    "differ in their last bits", first, r);
        }
    }
    /* Every non-failed deliverer agrees on the failed list too. */
    for (uint32_t r = 0; r < res->n && first >= 0; r++) {
        const ftc_rank_result_t *a = &res->ranks[r];
        const ftc_rank_result_t *b = &res->ranks[first];
        if (a->failed || !a->delivered || a->status != FTC_OK)
            continue;
        if (a->nfailed_list != b->nfailed_list
            || (a->nfailed_list > 0
                && memcmp(a->failed_list, b->failed_list,
                          sizeof(uint32_t) * a->nfailed_list) != 0))
            ftc_report_violation(rep, "A5: ranks %d and %u report different failed sets",
                    first, r);
    }
}

static void check_bcast(const ftc_scenario_t *s,
                        const ftc_scenario_result_t *res, ftc_report_t *rep)
{
    uint32_t root = s->args.root;
    bool root_alive = !res->ranks[root].failed;
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        if (!rr->delivered)
            continue;
        if (rr->status == FTC_OK) {
            if (!values_equal(s, rr->value, res->inputs[root], res->nbytes))
                ftc_report_violation(rep, "B1: rank %u delivered a value that is not the "
                             "root's", r);
        } else if (!rr->failed
                   && (root_alive || rr->status != FTC_EROOT_FAILED)) {
            ftc_report_violation(rep, "B3: rank %u delivered %s (root %s)", r,
                    ftc_err_name(rr->status), root_alive ? "alive" : "failed");
        }
    }
}

static void check_tree(const ftc_scenario_t *s,
                       const ftc_scenario_result_t *res, uint32_t k,
                       ftc_report_t *rep)
{
    int first = -1;
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        if (rr->failed || !rr->delivered)
            continue;
        if (rr->status != FTC_OK) {
            if (k == 0)
                ftc_report_violation(rep, "tree: rank %u delivered %s without failures", r,
                        ftc_err_name(rr->status));
            else if (rr->status != FTC_EPEER_FAILED)
                ftc_report_violation(rep, "tree: rank %u delivered %s", r,
                        ftc_err_name(rr->status));
            continue;
        }
        if (!rr->has_value)
            continue;
        if (s->coll == FTC_COLL_BCAST) {
            if (!values_equal(s, rr->value, res->inputs[s->args.root],
                              res->nbytes))
                ftc_report_violation(rep, "tree: rank %u got a value not the root's", r);
            continue;
        }
        if (first < 0) {
            first = (int)r;
            if (!is_valid_reduction(s, res, rr->value))
                ftc_report_violation(rep, "tree: rank %u's FTC_OK result is wrong", r);
        } else if (!values_equal(s, rr->value, res->ranks[first].value,
                                 res->nbytes)) {
            ftc_report_violation(rep, "tree: ranks %d and %u differ", first, r);
        }
    }
    if (k == 0 && s->start_spread_ns == 0) {
        uint64_t want = (uint64_t)(res->n - 1)
                        * (s->coll == FTC_COLL_ALLREDUCE ? 2 : 1);
        if (algo_messages(s, res) != want)
            ftc_report_violation(rep, "tree: %llu messages without failures, expected %llu",
                    (unsigned long long)algo_messages(s, res),
                    (unsigned long long)want);
    }
}

/* ftco (docs/ftco.md): Definitions 3.1 and 3.2 whatever the number of
 * failures, and, failure-free without per-message timeouts (whose
 * KEEPALIVEs depend on timing), a DATA and an ACK per tree edge and
 * direction, 2(n - 1) messages, and for an allreduce too, whose result
 * carries the ACK of the DATA it answers and goes unacknowledged (on a
 * multi-root tree, the roots' exchange instead of their edges:
 * docs/ftco.md). */
static void check_ftco(const ftc_scenario_t *s, const ftc_scenario_result_t *res,
                       uint32_t k, bool clean, ftc_report_t *rep)
{
    if (s->coll == FTC_COLL_REDUCE)
        check_reduce(s, res, k, rep);
    else if (s->coll == FTC_COLL_ALLREDUCE)
        check_allreduce(s, res, k, rep);
    else if (s->coll == FTC_COLL_BCAST)
        check_bcast(s, res, rep);
    if (clean && s->ftco.ack_timeout_ns == 0) {
        uint64_t want = 2 * (uint64_t)(res->n - 1);
        /* An allreduce's result carries the ACK of the UP it answers and
         * goes unacknowledged below the roots ("No ACK of the result"):
         * 2(n - 1). A multi-root allreduce's m roots exchange their
         * values instead (m(m - 1) messages, none ACKed) and then the
         * result, ACKed (2m(m - 1)). */
        uint32_t m = ftc_tree_root_count(&s->ftco.tree, res->n);
        if (s->coll == FTC_COLL_ALLREDUCE && m >= 2)
            want = 2 * ((uint64_t)res->n - m) + 3 * (uint64_t)m * (m - 1);
        if (algo_messages(s, res) != want)
            ftc_report_violation(rep, "ftco: %llu messages without failures, "
                                 "expected %llu",
                                 (unsigned long long)algo_messages(s, res),
                                 (unsigned long long)want);
    }
}

int ftc_check(const ftc_scenario_t *s, const ftc_scenario_result_t *res,
              char *msg, size_t msglen)
{
    if (ftc_sim_ulfm_is_coll(s->coll))
        return ftc_sim_ulfm_check(s, res, msg, msglen);
    ftc_report_t rep = {0, msg, msglen};
    if (msg != NULL && msglen > 0)
        msg[0] = '\0';
    uint32_t k = count_failed(res);
    check_common(s, res, &rep);
    if (s->args.algo == FTC_ALGO_TREE) {
        check_tree(s, res, k, &rep);
        return rep.violations;
    }
    bool clean = k == 0 && s->nfail == 0 && s->ncrash == 0
                 && s->start_spread_ns == 0 && res->totals.probes_sent == 0;
    if (s->args.algo == FTC_ALGO_FTCO) {
        check_ftco(s, res, k, clean, &rep);
        return rep.violations;
    }
    /* Opportunistic correction skips a copy to a neighbour it has already
     * heard from, so its count depends on the order of arrivals, and
     * segments (whose trains take credits and turns) change that order:
     * its exact count is checked unsegmented only. */
    bool opp_count = !may_segment(s, res);
    switch (s->coll) {
    case FTC_COLL_REDUCE:
        check_reduce(s, res, k, &rep);
        if (clean && algo_messages(s, res)
                         != ftc_expected_reduce_messages(res->n, s->args.f))
            ftc_report_violation(&rep,
                    "Theorem 5: %llu messages, expected %llu",
                    (unsigned long long)algo_messages(s, res),
                    (unsigned long long)ftc_expected_reduce_messages(
                        res->n, s->args.f));
        break;
    case FTC_COLL_ALLREDUCE:
        check_allreduce(s, res, k, &rep);
        if (ftc_allreduce_algo_resolve(s->corrected.allreduce, res->n)
            == FTC_ALLREDUCE_EXCHANGE) {
            /* One hop: every process sends its input to every other. */
            uint64_t want = (uint64_t)res->n * (res->n - 1);
            if (clean && algo_messages(s, res) != want)
                ftc_report_violation(&rep, "exchange: %llu messages, expected %llu",
                        (unsigned long long)algo_messages(s, res),
                        (unsigned long long)want);
        } else if (ftc_allreduce_algo_resolve(s->corrected.allreduce, res->n)
                   == FTC_ALLREDUCE_BUTTERFLY) {
            uint64_t want = ftc_expected_butterfly_messages(res->n);
            if (clean && algo_messages(s, res) != want)
                ftc_report_violation(&rep, "butterfly: %llu messages, expected %llu",
                        (unsigned long long)algo_messages(s, res),
                        (unsigned long long)want);
        } else if (clean && opp_count
            && s->corrected.correction == FTC_CORRECTION_OPPORTUNISTIC) {
            uint64_t want = ftc_expected_reduce_messages(res->n, s->args.f)
                            + ftc_expected_bcast_opportunistic_messages(
                                &s->corrected.bcast_tree, res->n, s->corrected.distance);
            if (algo_messages(s, res) != want)
                ftc_report_violation(&rep, "Theorem 7: %llu messages, expected %llu",
                        (unsigned long long)algo_messages(s, res),
                        (unsigned long long)want);
        }
        break;
    case FTC_COLL_BCAST:
        check_bcast(s, res, &rep);
        if (clean && opp_count
            && s->corrected.correction == FTC_CORRECTION_OPPORTUNISTIC) {
            uint64_t want = ftc_expected_bcast_opportunistic_messages(
                &s->corrected.bcast_tree, res->n, s->corrected.distance);
            if (algo_messages(s, res) != want)
                ftc_report_violation(&rep, "bcast: %llu messages, expected %llu",
                        (unsigned long long)algo_messages(s, res),
                        (unsigned long long)want);
        }
        break;
    case FTC_COLL_FINALIZE:
    case FTC_COLL_AGREE:
    case FTC_COLL_SHRINK:
        /* (agreement and shrink are checked by sim_ulfm.c, above) */
        ftc_report_violation(&rep, "%s is not a scenario collective",
                             ftc_coll_name(s->coll));
        break;
    }
    return rep.violations;
}
