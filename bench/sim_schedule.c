/* SPDX-License-Identifier: BSD-3-Clause */
/* ftcoll-sim --schedule (sim_schedule.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "sim_schedule.h"

int ftc_sim_schedule_report(FILE *out, const ftc_scenario_t *s,
                            const ftc_scenario_result_t *res)
{
    uint32_t nrf = s->random_fail, nrc = s->random_crash;
    uint32_t *pre = malloc(sizeof(uint32_t) * (nrf ? nrf : 1));
    uint32_t *crank = malloc(sizeof(uint32_t) * (nrc ? nrc : 1));
    uint64_t *ctime = malloc(sizeof(uint64_t) * (nrc ? nrc : 1));
    uint8_t *drawn = calloc(s->n, 1);
    /* The same draw as the run's: fault_seed and the scenario decide it,
     * the algorithm does not. */
    if (pre == NULL || crank == NULL || ctime == NULL || drawn == NULL
        || ftc_scenario_draw_faults(s, pre, crank, ctime, NULL, 0) != FTC_OK) {
        free(pre);
        free(crank);
        free(ctime);
        free(drawn);
        return -1;
    }
    int bad = 0;
    uint32_t inactive_ok = 0, crash_ok = 0;
    fprintf(out, "schedule: n %u fault_seed %" PRIu64 " inactive %u [", s->n,
            s->fault_seed, s->nfail + nrf);
    for (uint32_t i = 0; i < s->nfail + nrf; i++) {
        uint32_t r = i < s->nfail ? s->fail[i] : pre[i - s->nfail];
        fprintf(out, "%s%u", i ? "," : "", r);
        drawn[r] = 1;
        inactive_ok += res->ranks[r].pre_failed && res->ranks[r].failed;
    }
    fprintf(out, "] crashes %u [", nrc);
    for (uint32_t i = 0; i < nrc; i++) {
        uint32_t r = crank[i];
        fprintf(out, "%s%u@%" PRIu64, i ? "," : "", r, ctime[i]);
        drawn[r] = 2;
        crash_ok += res->ranks[r].failed && !res->ranks[r].pre_failed;
    }
    bad += (int)(s->nfail + nrf - inactive_ok) + (int)(nrc - crash_ok);
    /* A rank that failed without being drawn (explicit --crash entries are
     * the caller's own and counted as such) means another schedule ran. */
    for (uint32_t r = 0; r < s->n; r++) {
        if (!res->ranks[r].failed || drawn[r] != 0)
            continue;
        bool explicit_crash = false;
        for (uint32_t i = 0; i < s->ncrash; i++)
            explicit_crash = explicit_crash || s->crash[i].rank == r;
        bad += !explicit_crash;
    }
    fprintf(out, "] happened %u/%u %u/%u%s\n", inactive_ok, s->nfail + nrf,
            crash_ok, nrc, bad ? " MISMATCH" : "");
    free(pre);
    free(crank);
    free(ctime);
    free(drawn);
    return bad;
}
