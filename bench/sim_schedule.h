/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-sim --schedule: the failure schedule a run drew, printed, and
 * checked against what happened. Two runs that are to be compared under
 * identical faults (docs/ftco.md, "Side by side with the corrected
 * family") print the same line, and a fault that was drawn but did not
 * take place fails the run instead of passing unnoticed.
 */
#ifndef FTC_SIM_SCHEDULE_H
#define FTC_SIM_SCHEDULE_H

#include <stdio.h>

#include "scenario.h"

/* Prints one line to out:
 *   schedule: n N fault_seed S inactive K [r,...] crashes C [r@t,...]
 *     happened I/K C/C
 * (the explicit --fail ranks count among the inactive ones), and checks
 * that every drawn rank is marked failed in res, the inactive ones before
 * the operation, and that no other rank failed. Returns the number of
 * mismatches (0: every injected fault happened, and nothing else), or -1
 * when the schedule cannot be drawn (out of memory). */
int ftc_sim_schedule_report(FILE *out, const ftc_scenario_t *s,
                            const ftc_scenario_result_t *res);

#endif
