/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm family in the scenario runner (ftcoll-sim --coll agree, shrink,
 * invalidate; docs/ulfm.md): how a rank starts each of them, what the
 * runner records of a delivery, and the checker of their properties. The
 * scenario runner (scenario.c), the checker (checker.c) and ftcoll-sim
 * call in here through one hook each, so the family's logic stays in one
 * file.
 *
 *   agree       every rank calls ftc_init_agree with its input as a
 *               64-bit value (--input allbut: every bit but its own),
 *               on its group set to the failure-free round of
 *               --agree-round (so is shrink's).
 *   shrink      every rank calls ftc_init_shrink (new group id 2). A
 *               shrink needs a failure known before the call (or an
 *               invalidation): the ranks of --fail / --faults fail before
 *               it and every live rank has been told, as after the error
 *               that prompted the shrink.
 *   invalidate  every rank starts an allreduce (the scenario's arguments)
 *               and the root invalidates the group right after its own
 *               call: every live rank's allreduce must end and every live
 *               rank must learn of the invalidation.
 */
#ifndef FTC_BENCH_SIM_ULFM_H
#define FTC_BENCH_SIM_ULFM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "scenario.h"

/* --coll invalidate: not a collective of the library, so a value of the
 * bench's own beyond ftc_coll_t's. */
#define FTC_SIM_COLL_INVALIDATE ((ftc_coll_t)64)

/* The id of the group a shrink creates (the scenario's group is 1). */
#define FTC_SIM_SHRINK_ID 2u

/* Whether coll is one of the family's scenarios. */
bool ftc_sim_ulfm_is_coll(ftc_coll_t coll);

/* The name of coll for output: "invalidate", or ftc_coll_name's. */
const char *ftc_sim_coll_name(ftc_coll_t coll);

/* Parse a --coll value of the family into *coll; false if it is none. */
bool ftc_sim_ulfm_parse_coll(const char *v, ftc_coll_t *coll);

/* ftcoll-sim's checks and defaults once the flags are parsed: agree and
 * shrink take a 64-bit value (uint64, count 1, band) and allbut input
 * unless input_given; a random crash window of four tree depths (the
 * agreement's four waves) unless window_given; --agree-round (round_given)
 * with them only. Returns NULL, or why the flags do not fit (then *flag
 * names the flag). */
const char *ftc_sim_ulfm_prepare(ftc_scenario_t *s, bool input_given,
                                 bool window_given, bool round_given,
                                 const char **flag);

/* Start rank's part: returns the init call's result. out holds the
 * agreement's value; *newgroup gets the shrink's new group. */
int ftc_sim_ulfm_start(const ftc_scenario_t *s, uint32_t rank,
                       ftc_group_t *group, void *in, void *out,
                       ftc_deliver_fn deliver, void *deliver_arg,
                       ftc_group_t **newgroup);

/* Record a delivery's family-specific part in rr (the new group of a
 * shrink that delivered FTC_OK: newgroup, else NULL). */
void ftc_sim_ulfm_record(const ftc_scenario_t *s, const ftc_completion_t *c,
                         ftc_group_t *newgroup, ftc_rank_result_t *rr);

/* Record what rank knows at the end of the run (before teardown). */
void ftc_sim_ulfm_after_run(const ftc_scenario_t *s, ftc_group_t *group,
                            ftc_rank_result_t *rr);

/* The family's properties (docs/ulfm.md); same contract as ftc_check. */
int ftc_sim_ulfm_check(const ftc_scenario_t *s,
                       const ftc_scenario_result_t *res, char *msg,
                       size_t msglen);

/* The per-rank JSON members of the family (inside the rank's object). */
void ftc_sim_ulfm_json_rank(json_t *j, const ftc_scenario_t *s,
                            const ftc_rank_result_t *rr);

/* Free what ftc_sim_ulfm_record kept in rr. */
void ftc_sim_ulfm_rank_free(ftc_rank_result_t *rr);

#endif
