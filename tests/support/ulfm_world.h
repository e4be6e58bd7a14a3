/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A loopback world for the ulfm family's tests: n ranks, each with its
 * context attached to the loopback and one group of all n ranks, and the
 * crashes of a failure schedule injected into it. Both ulfm tests
 * (test_ulfm_properties.c, test_ulfm_recovery.c) build their worlds so;
 * one place keeps the two from drifting apart.
 *
 * Setup failures abort: they are faults of the test, not of what it
 * checks.
 */
#ifndef FTC_TEST_ULFM_WORLD_H
#define FTC_TEST_ULFM_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"

/* One crash of a schedule. */
typedef struct ulfm_crash {
    uint32_t rank;
    uint64_t k;          /* 0: before the operation; else after k sends */
} ulfm_crash_t;

typedef struct ulfm_world {
    uint32_t n;
    ftc_lb_world_t *lb;
    ftc_context_t **ctx; /* n contexts, rank r's at ctx[r] */
    ftc_group_t **g;     /* n groups, rank r's at g[r] */
    bool *before;        /* before[r]: rank r crashed before the operation */
} ulfm_world_t;

/* Creates the loopback world lc describes (lc->n ranks), a context per
 * rank with cfg (NULL: defaults), and at each rank the group of all
 * ranks with group_id and epoch. */
void ulfm_world_create(const ftc_lb_config_t *lc, const ftc_config_t *cfg,
                       uint32_t group_id, uint32_t epoch, ulfm_world_t *w);

/* Sets the agreement's failure-free round on every rank's group (aborts
 * if refused). */
void ulfm_world_set_round(ulfm_world_t *w, ftc_agree_round_t round);

/* Injects the schedule's crashes: k = 0 crashes the rank now (and marks
 * it in before[]), k > 0 after its k-th send. */
void ulfm_world_inject(ulfm_world_t *w, const ulfm_crash_t *crash,
                       uint32_t ncrash);

/* splitmix64: the next number of the stream x, so that a random
 * schedule is reproducible from its seed. */
uint64_t ulfm_splitmix(uint64_t *x);

/* Whether rank is among the first ncrash crashes. */
bool ulfm_crash_has(const ulfm_crash_t *crash, uint32_t ncrash, uint32_t rank);

/* A rank of n drawn from x that none of the first ncrash crashes names
 * (ncrash < n). */
uint32_t ulfm_fresh_rank(uint64_t *x, const ulfm_crash_t *crash,
                         uint32_t ncrash, uint32_t n);

/* What a deliver callback saw: how often it ran, and the last status
 * and failed count. ulfm_on_tally is the callback, its arg the tally. */
typedef struct ulfm_tally {
    int calls;
    int status;
    uint32_t nfailed;
} ulfm_tally_t;

void ulfm_on_tally(const ftc_completion_t *c, void *arg);

/* Destroys the contexts (and with them their groups), then the world. */
void ulfm_world_destroy(ulfm_world_t *w);

#endif
