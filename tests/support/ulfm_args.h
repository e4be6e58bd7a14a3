/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command line both ulfm schedule tests take:
 *   [--max-n N] [--random RUNS] [--seed S] [--agree-round rd2|rd4|tree]
 * N, the largest n of the exhaustive schedules, is 1 to 16 (their crash
 * points are counted in arrays of 16); every other value but the round is
 * a whole number. The round is the agreement's failure-free round, set on
 * every rank's group (ftc_group_set_ulfm_params).
 */
#ifndef FTC_TEST_ULFM_ARGS_H
#define FTC_TEST_ULFM_ARGS_H

#include <stdint.h>

#include "ftcoll/mitigation.h"

typedef struct ulfm_args {
    uint32_t max_n;
    uint64_t runs;       /* random schedules */
    uint64_t seed;
    ftc_agree_round_t round;
} ulfm_args_t;

/* Parses argv[first..argc-1] over the defaults already in *a. On an
 * unknown option, a missing or malformed value, or N out of range,
 * prints to stderr what is wrong (naming the option) and the usage line
 * `usage` (with argv[0]), and returns 2, the exit status of bad usage;
 * else 0. */
int ulfm_args_parse(int argc, char **argv, const char *usage, ulfm_args_t *a);

#endif
