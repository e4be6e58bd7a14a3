/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worked example of Kuettler & Haertig 4.3: seven processes sum their
 * ranks, process 1 failed before the operation, f = 1. Up-correction pairs
 * {3,4} and {5,6} exchange; process 2 gets nothing from 1; the root takes
 * the value 20 = 2+3+4+5+6 from process 2's subtree (logical child 2) and
 * adds its own 0.
 */
#include <stdio.h>
#include <string.h>

#include "checker.h"
#include "scenario.h"
#include "check.h"

static void run(ftc_coll_t coll, ftc_fault_info_t info, bool keepalive_only)
{
    ftc_scenario_t s;
    ftc_scenario_init(&s);
    s.coll = coll;
    s.n = 7;
    s.args.f = 1;
    s.args.root = 0;
    s.corrected.fault_info = info;
    s.input = FTC_INPUT_RANK;
    s.nfail = 1;
    s.fail[0] = 1;
    if (keepalive_only)
        s.detect_delay_ns = UINT64_MAX;
    ftc_scenario_result_t res;
    char err[256], msg[512];
    int rc = ftc_scenario_run(&s, &res, err, sizeof(err));
    CHECK_MSG(rc == FTC_OK, "scenario: %s", err);
    if (rc != FTC_OK)
        return;
    CHECK_MSG(ftc_check(&s, &res, msg, sizeof(msg)) == 0, "semantics: %s", msg);
    const ftc_rank_result_t *root = &res.ranks[0];
    int64_t v = -1;
    memcpy(&v, root->value, sizeof(v));
    CHECK_MSG(root->delivered == 1 && root->status == FTC_OK && v == 20,
              "%s: root delivered %u status %s value %lld, want 20",
              ftc_coll_name(coll), root->delivered, ftc_err_name(root->status),
              (long long)v);
    CHECK_MSG(root->stats.root_subtree == 2,
              "the root used subtree %u, want 2 (process 1's is broken)",
              root->stats.root_subtree);
    CHECK_MSG(root->stats.failures_detected == 1,
              "the root learned of %u failures, want 1 (process 1, its child)",
              root->stats.failures_detected);
    if (info == FTC_FAULT_LIST)
        CHECK_MSG(root->nfailed_list == 1 && root->failed_list[0] == 1,
                  "failed list has %u entries, want {1}", root->nfailed_list);
    if (coll == FTC_COLL_ALLREDUCE) {
        for (uint32_t r = 2; r < 7; r++) {
            memcpy(&v, res.ranks[r].value, sizeof(v));
            CHECK_MSG(res.ranks[r].status == FTC_OK && v == 20,
                      "rank %u got %lld", r, (long long)v);
        }
    }
    /* Up-correction: {3,4} and {5,6} exchange (4 messages), 2 sends to 1
     * (its failure is not known before); tree phase: 5 live non-roots.
     * With keepalive detection, probes and exclusion notices come on top. */
    if (coll == FTC_COLL_REDUCE && !keepalive_only)
        CHECK_MSG(res.messages == 4 + 1 + 5, "%llu messages, want 10",
                  (unsigned long long)res.messages);
    ftc_scenario_result_free(&res);
}

int main(void)
{
    run(FTC_COLL_REDUCE, FTC_FAULT_LIST, false);
    run(FTC_COLL_REDUCE, FTC_FAULT_COUNT, false);
    run(FTC_COLL_REDUCE, FTC_FAULT_BIT, false);
    run(FTC_COLL_REDUCE, FTC_FAULT_LIST, true);
    run(FTC_COLL_ALLREDUCE, FTC_FAULT_LIST, false);
    run(FTC_COLL_ALLREDUCE, FTC_FAULT_BIT, true);
    return check_report();
}
