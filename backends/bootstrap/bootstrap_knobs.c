/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bootstrap's environment variables, described for people (ftcoll-info
 * lists them beside the core's and the backends' knobs). Most are set by
 * the launcher, ftcoll-run, rather than by hand: the table says so.
 */
#include <stddef.h>

#include "ftcoll_bootstrap.h"

static const ftc_knob_t knobs[] = {
    {FTC_ENV_RANK, "unset (no file rendezvous)",
     "This process's rank, 0 <= rank < FTCOLL_SIZE. Set: the file "
     "rendezvous is used (ftcoll-run sets it)."},
    {FTC_ENV_SIZE, "unset",
     "How many ranks the job has (ftcoll-run sets it)."},
    {FTC_ENV_RENDEZVOUS, "unset",
     "The file rendezvous's directory, where each rank leaves its address "
     "(ftcoll-run makes a fresh one per job)."},
    {FTC_ENV_JOB_TOKEN, "0",
     "Hexadecimal token shared by the job's ranks, for the core's job "
     "token (ftcoll-run draws one per job)."},
    {FTC_ENV_JOB_KEY, "unset (unauthenticated)",
     "The job's secret: exactly 32 hexadecimal digits, keying the core's "
     "message authentication (ftcoll-run draws one per job)."},
    {FTC_ENV_BOOTSTRAP_TIMEOUT, "30",
     "Seconds a rank waits for the others at the rendezvous, in (0, "
     "86400]; a rank that never arrives is named in the error."},
    {FTC_ENV_SINGLE_HOST, "unset",
     "1: every rank runs on this host; 0: ranks run on several hosts; "
     "unset: the method decides (file: 1, pmix: from PMIx)."},
    {NULL, NULL, NULL},
};

const ftc_knob_t *ftc_bootstrap_knobs(void)
{
    return knobs;
}
