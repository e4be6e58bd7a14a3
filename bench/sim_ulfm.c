/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm family in the scenario runner (sim_ulfm.h): starting agree,
 * shrink and invalidate at a rank, recording their deliveries, and
 * checking the properties docs/ulfm.md states:
 *
 * agree and shrink
 *   termination   every rank that did not fail delivers, once, FTC_OK;
 *   uniform       every rank that delivered FTC_OK, crashed or not,
 *                 delivered the same value and the same failed set;
 *   validity      every member of the failed set failed; the value is the
 *                 AND of a set of inputs that holds every member outside
 *                 the failed set and no rank that failed before the call
 *                 (with --input allbut the value names its contributors);
 *   cost          agree with no failure at all: the failure-free round's
 *                 messages (rd2: 2 p log2 p + 4 (n - p), p the largest
 *                 power of two <= n; rd4 alike at radix 4; tree: 4 (n - 1)).
 * shrink, besides
 *   every rank that delivered holds the same (id 2, epoch 1) of size
 *   n - |failed set|, whose members are the ranks outside the failed set
 *   in their old order (checked member by member up to 4096 ranks, at
 *   the boundaries of the failed set above), with itself in it.
 * invalidate
 *   every live rank's pending allreduce ends (FTC_EINVALIDATED, or FTC_OK
 *   where it completed before the invalidation reached it) and, when any
 *   rank that learned of it is alive, every live rank learned of it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/mitigation.h"
#include "report.h"
#include "sim_ulfm.h"

/* Up to this size a shrink's new group is compared member by member at
 * every rank and printed in --json (n^2 work); above, at the failed
 * set's boundaries only (O(failures) per rank). */
#define FULL_MEMBERS_UPTO 4096u

bool ftc_sim_ulfm_is_coll(ftc_coll_t coll)
{
    return coll == FTC_COLL_AGREE || coll == FTC_COLL_SHRINK
           || coll == FTC_SIM_COLL_INVALIDATE;
}

const char *ftc_sim_coll_name(ftc_coll_t coll)
{
    return coll == FTC_SIM_COLL_INVALIDATE ? "invalidate" : ftc_coll_name(coll);
}

bool ftc_sim_ulfm_parse_coll(const char *v, ftc_coll_t *coll)
{
    if (strcmp(v, "agree") == 0)
        *coll = FTC_COLL_AGREE;
    else if (strcmp(v, "shrink") == 0)
        *coll = FTC_COLL_SHRINK;
    else if (strcmp(v, "invalidate") == 0)
        *coll = FTC_SIM_COLL_INVALIDATE;
    else
        return false;
    return true;
}

const char *ftc_sim_ulfm_prepare(ftc_scenario_t *s, bool input_given,
                                 bool window_given, bool round_given,
                                 const char **flag)
{
    if (round_given && s->coll != FTC_COLL_AGREE
        && s->coll != FTC_COLL_SHRINK) {
        *flag = "--agree-round";
        return "the agreement's failure-free round goes with --coll agree "
               "or shrink only";
    }
    if (s->input == FTC_INPUT_ALLBUT
        && (s->args.dtype == FTC_FLOAT || s->args.dtype == FTC_DOUBLE)) {
        *flag = "--input";
        return "allbut needs an integer --dtype";
    }
    if (!ftc_sim_ulfm_is_coll(s->coll))
        return NULL;
    if (s->coll == FTC_SIM_COLL_INVALIDATE)
        return NULL; /* the pending allreduce takes the usual arguments */
    /* The agreement's value is one 64-bit word, ANDed. */
    s->args.dtype = FTC_UINT64;
    s->args.count = 1;
    s->args.op = FTC_BAND;
    s->args.algo = FTC_ALGO_ULFM;
    s->args.f = 0; /* (any number of failures: -f means nothing here) */
    if (!input_given)
        s->input = FTC_INPUT_ALLBUT;
    if (s->coll == FTC_COLL_SHRINK && s->nfail == 0 && s->random_fail == 0) {
        *flag = "--coll";
        return "shrink needs a failure known before the call (MPI: "
               "shrinking a group with none is an error of class ARG): "
               "give --fail R or --faults K";
    }
    /* Four waves (gather, propose, ack, decide) instead of a bcast's
     * one down and one up: spread random crashes over all of them. */
    if (s->random_crash > 0 && !window_given)
        s->crash_window *= 2;
    return NULL;
}

int ftc_sim_ulfm_start(const ftc_scenario_t *s, uint32_t rank,
                       ftc_group_t *group, void *in, void *out,
                       ftc_deliver_fn deliver, void *deliver_arg,
                       ftc_group_t **newgroup)
{
    if (s->coll == FTC_COLL_AGREE || s->coll == FTC_COLL_SHRINK) {
        ftc_ulfm_params_t p;
        ftc_ulfm_params_init(&p);
        p.agree_round = s->agree_round;
        int rc = ftc_group_set_ulfm_params(group, &p);
        if (rc != FTC_OK)
            return rc;
    }
    if (s->coll == FTC_COLL_AGREE) {
        uint64_t v;
        memcpy(&v, in, sizeof(v));
        return ftc_init_agree(group, v, out, deliver, deliver_arg, NULL);
    }
    if (s->coll == FTC_COLL_SHRINK)
        return ftc_init_shrink(group, FTC_SIM_SHRINK_ID, newgroup, deliver,
                               deliver_arg, NULL);
    ftc_coll_args_t a = s->args;
    ftc_tree_params_t tree_params;
    a.params = ftc_scenario_params(a.algo, &s->corrected, &tree_params);
    a.sendbuf = in;
    a.recvbuf = out;
    a.deliver = deliver;
    a.deliver_arg = deliver_arg;
    int rc = ftc_init_allreduce(group, &a, NULL);
    if (rc == FTC_OK && rank == s->args.root)
        rc = ftc_group_invalidate(group);
    return rc;
}

/* Whether g holds exactly the ranks 0..n-1 outside the sorted list
 * failed, in order, and me among them: member by member for small n, at
 * each failed rank's neighbours otherwise. */
static bool group_is_complement(const ftc_group_t *g, uint32_t n,
                                const uint32_t *failed, uint32_t nfailed,
                                uint32_t me)
{
    if (ftc_group_size(g) != n - nfailed)
        return false;
    if (ftc_group_world_rank(g, ftc_group_rank(g)) != me)
        return false;
    if (n <= FULL_MEMBERS_UPTO) {
        uint32_t k = 0, next = 0;
        for (uint32_t w = 0; w < n; w++) {
            if (next < nfailed && failed[next] == w) {
                next++;
                continue;
            }
            if (ftc_group_world_rank(g, k++) != w)
                return false;
        }
        return true;
    }
    /* Group rank f - i is the first live rank after failed[i] = f, and
     * f - i - 1 the last before it. */
    for (uint32_t i = 0; i < nfailed; i++) {
        uint32_t f = failed[i], gr = f - i;
        uint32_t after = f + 1;
        for (uint32_t j = i + 1; j < nfailed && failed[j] == after; j++)
            after++;
        if (after < n && ftc_group_world_rank(g, gr) != after)
            return false;
        if (gr > 0 && ftc_group_world_rank(g, gr - 1) >= f)
            return false;
    }
    return true;
}

void ftc_sim_ulfm_record(const ftc_scenario_t *s, const ftc_completion_t *c,
                         ftc_group_t *newgroup, ftc_rank_result_t *rr)
{
    if (s->coll != FTC_COLL_SHRINK)
        return;
    rr->has_value = false; /* a shrink has no value, only its new group */
    if (c->status != FTC_OK || newgroup == NULL)
        return;
    rr->new_group = true;
    rr->new_id = ftc_group_id(newgroup);
    rr->new_epoch = ftc_group_epoch(newgroup);
    rr->new_size = ftc_group_size(newgroup);
    uint32_t me = ftc_group_world_rank(newgroup, ftc_group_rank(newgroup));
    rr->new_members_ok = group_is_complement(newgroup, s->n, c->failed,
                                             c->nfailed, me);
    if (s->n <= FULL_MEMBERS_UPTO) {
        rr->new_members = malloc(sizeof(uint32_t) * rr->new_size);
        for (uint32_t i = 0; rr->new_members != NULL && i < rr->new_size; i++)
            rr->new_members[i] = ftc_group_world_rank(newgroup, i);
    }
}

void ftc_sim_ulfm_after_run(const ftc_scenario_t *s, ftc_group_t *group,
                            ftc_rank_result_t *rr)
{
    if (ftc_sim_ulfm_is_coll(s->coll))
        rr->invalidated = ftc_group_is_invalidated(group) != 0;
}

void ftc_sim_ulfm_rank_free(ftc_rank_result_t *rr)
{
    free(rr->new_members);
    rr->new_members = NULL;
}

static uint64_t input_of(const ftc_scenario_result_t *res, uint32_t r)
{
    uint64_t v;
    memcpy(&v, res->inputs[r], sizeof(v));
    return v;
}

static bool same_failed(const ftc_rank_result_t *a, const ftc_rank_result_t *b)
{
    return a->nfailed_list == b->nfailed_list
           && (a->nfailed_list == 0
               || memcmp(a->failed_list, b->failed_list,
                         sizeof(uint32_t) * a->nfailed_list) == 0);
}

/* Validity of the agreed value v with the agreed failed set of ref. */
static void check_value(const ftc_scenario_result_t *res,
                        const ftc_rank_result_t *ref, uint64_t v,
                        ftc_report_t *rep)
{
    /* S holds every member outside the failed set: v has no bit their
     * AND lacks. S holds no rank that failed before the call: v has
     * every bit the AND of all the others has. */
    uint64_t outside = UINT64_MAX, possible = UINT64_MAX;
    uint32_t next = 0;
    for (uint32_t r = 0; r < res->n; r++) {
        bool in_failed = next < ref->nfailed_list && ref->failed_list[next] == r;
        next += in_failed;
        if (!in_failed)
            outside &= input_of(res, r);
        if (!res->ranks[r].pre_failed)
            possible &= input_of(res, r);
    }
    if ((v & ~outside) != 0)
        ftc_report_violation(rep, "validity: %#" PRIx64 " misses the input of "
                             "a member outside the failed set (their AND is %#"
                             PRIx64 ")", v, outside);
    if ((possible & ~v) != 0)
        ftc_report_violation(rep, "validity: %#" PRIx64 " clears a bit that "
                             "only ranks dead before the call, or nobody, "
                             "cleared (the AND of all the others is %#" PRIx64
                             ")", v, possible);
}

/* A failure-free agreement ends in its failure-free round (docs/ulfm.md,
 * "Cost"): rd2, two recursive-doubling exchanges among the largest power
 * of two p <= n, the n - p others folded in and out by one message each
 * way per exchange: 2 p log2 p + 4 (n - p) messages; rd4 the same with
 * radix k = 4 (k - 1 partners per step, p the largest power of 4 <= n);
 * tree, four waves of n - 1 messages. */
static uint64_t failure_free_messages(ftc_agree_round_t round, uint64_t n)
{
    if (round == FTC_AGREE_ROUND_TREE)
        return 4 * (n - 1);
    uint64_t radix = round == FTC_AGREE_ROUND_RD4 ? 4 : 2;
    uint64_t k = radix < n ? radix : n;
    uint64_t p, lg;
    for (k = k < 2 ? 2 : k;; k--) {
        for (p = 1, lg = 0; p <= n / k; p *= k)
            lg++;
        if (k == 2 || (lg + 2) * (k - 1) <= 64)
            break;
    }
    return 2 * p * lg * (k - 1) + 4 * (n - p);
}

static void check_agreement(const ftc_scenario_t *s,
                            const ftc_scenario_result_t *res, ftc_report_t *rep)
{
    const ftc_rank_result_t *ref = NULL;
    uint32_t refr = 0, k = 0;
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        k += rr->failed;
        if (!rr->failed && rr->delivered == 1 && rr->status != FTC_OK)
            ftc_report_violation(rep, "termination: rank %u delivered %s, not "
                                 "FTC_OK", r, ftc_err_name(rr->status));
        if (rr->delivered && rr->status == FTC_OK && ref == NULL) {
            ref = rr;
            refr = r;
        }
    }
    if (ref == NULL)
        return;
    uint64_t refv;
    memcpy(&refv, ref->value, sizeof(refv));
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        if (!rr->delivered || rr->status != FTC_OK)
            continue;
        if (!same_failed(rr, ref))
            ftc_report_violation(rep, "uniform agreement: rank %u (%s) delivered "
                                 "%u failed, rank %u %u (or other ranks)", r,
                                 rr->failed ? "crashed" : "alive",
                                 rr->nfailed_list, refr, ref->nfailed_list);
        if (s->coll == FTC_COLL_AGREE) {
            uint64_t v;
            memcpy(&v, rr->value, sizeof(v));
            if (v != refv)
                ftc_report_violation(rep, "uniform agreement: rank %u (%s) "
                                     "delivered %#" PRIx64 ", rank %u %#" PRIx64,
                                     r, rr->failed ? "crashed" : "alive", v,
                                     refr, refv);
        } else {
            if (!rr->new_group || rr->new_id != FTC_SIM_SHRINK_ID
                || rr->new_epoch != 1 || rr->new_size != ref->new_size)
                ftc_report_violation(rep, "shrink: rank %u's new group is (id %u,"
                                     " epoch %u, size %u), rank %u's (%u, %u, "
                                     "%u); want (%u, 1)", r, rr->new_id,
                                     rr->new_epoch, rr->new_size, refr,
                                     ref->new_id, ref->new_epoch, ref->new_size,
                                     FTC_SIM_SHRINK_ID);
            if (rr->new_group && !rr->new_members_ok)
                ftc_report_violation(rep, "shrink: rank %u's new group is not the"
                                     " ranks outside the failed set in old order"
                                     " (or misses itself)", r);
        }
    }
    for (uint32_t i = 0; i < ref->nfailed_list; i++) {
        uint32_t f = ref->failed_list[i];
        if (f >= res->n || !res->ranks[f].failed)
            ftc_report_violation(rep, "validity: rank %u is in the failed set "
                                 "but did not fail", f);
        else if (res->ranks[f].delivered && res->ranks[f].status == FTC_OK)
            ftc_report_violation(rep, "validity: rank %u delivered, yet it is "
                                 "in the failed set it delivered", f);
        if (i > 0 && ref->failed_list[i - 1] >= f)
            ftc_report_violation(rep, "the failed set is not sorted and "
                                 "distinct");
    }
    if (ref->nfailed_list == 0 && ref->failed_count != 0)
        ftc_report_violation(rep, "the failed set was not recorded");
    if (s->coll == FTC_COLL_AGREE)
        check_value(res, ref, refv, rep);
    if (s->coll == FTC_COLL_AGREE && k == 0 && s->start_spread_ns == 0
        && res->totals.probes_sent == 0
        && res->messages != failure_free_messages(s->agree_round, res->n))
        ftc_report_violation(rep, "cost: %" PRIu64 " messages with no failure,"
                             " expected %" PRIu64 " (--agree-round %s)",
                             res->messages,
                             failure_free_messages(s->agree_round, res->n),
                             ftc_agree_round_name(s->agree_round));
}

static void check_invalidate(const ftc_scenario_t *s,
                             const ftc_scenario_result_t *res,
                             ftc_report_t *rep)
{
    bool learned_alive = false;
    for (uint32_t r = 0; r < res->n; r++)
        learned_alive |= !res->ranks[r].failed && res->ranks[r].invalidated;
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        if (rr->failed)
            continue;
        if (rr->delivered == 1 && rr->status != FTC_OK
            && rr->status != FTC_EINVALIDATED)
            ftc_report_violation(rep, "invalidate: rank %u's allreduce ended "
                                 "with %s", r, ftc_err_name(rr->status));
        if (learned_alive && !rr->invalidated)
            ftc_report_violation(rep, "invalidate: rank %u is alive and never "
                                 "learned of it, though a live rank did", r);
    }
    const ftc_rank_result_t *root = &res->ranks[s->args.root];
    if (!root->failed && !learned_alive)
        ftc_report_violation(rep, "invalidate: the root (%u) lives, yet no live "
                             "rank holds the group invalidated", s->args.root);
}

int ftc_sim_ulfm_check(const ftc_scenario_t *s,
                       const ftc_scenario_result_t *res, char *msg,
                       size_t msglen)
{
    ftc_report_t rep = {0, msg, msglen};
    if (msg != NULL && msglen > 0)
        msg[0] = '\0';
    if (res->hit_event_limit)
        ftc_report_violation(&rep, "the run did not end by itself within %"
                             PRIu64 " events", res->events);
    for (uint32_t r = 0; r < res->n; r++) {
        const ftc_rank_result_t *rr = &res->ranks[r];
        if (rr->delivered > 1)
            ftc_report_violation(&rep, "rank %u delivered %u times (at most "
                                 "once)", r, rr->delivered);
        if (!rr->failed && rr->delivered == 0)
            ftc_report_violation(&rep, "termination: non-failed rank %u never "
                                 "delivered", r);
    }
    if (s->coll == FTC_SIM_COLL_INVALIDATE)
        check_invalidate(s, res, &rep);
    else
        check_agreement(s, res, &rep);
    return rep.violations;
}

void ftc_sim_ulfm_json_rank(json_t *j, const ftc_scenario_t *s,
                            const ftc_rank_result_t *rr)
{
    if (s->coll == FTC_SIM_COLL_INVALIDATE) {
        json_key(j, "invalidated");
        json_bool(j, rr->invalidated);
        return;
    }
    if (s->coll != FTC_COLL_SHRINK)
        return;
    json_key(j, "group");
    if (!rr->new_group) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_key(j, "id");
    json_uint(j, rr->new_id);
    json_key(j, "epoch");
    json_uint(j, rr->new_epoch);
    json_key(j, "size");
    json_uint(j, rr->new_size);
    json_key(j, "members");
    if (rr->new_members != NULL) {
        json_array_begin(j);
        for (uint32_t i = 0; i < rr->new_size; i++)
            json_uint(j, rr->new_members[i]);
        json_array_end(j);
    } else {
        json_null(j);
    }
    json_object_end(j);
}
