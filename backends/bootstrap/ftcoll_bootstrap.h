/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bootstrap: who am I, how many are we, and an out-of-band allgather to
 * swap endpoint addresses before the transport exists (DESIGN.md 7).
 * ftcoll itself only ever sees the allgather callback; this helper offers
 * two implementations of it, and a runtime may bring its own.
 *
 *  - file: the rendezvous of ftcoll-run (one host). FTCOLL_RANK,
 *    FTCOLL_SIZE, FTCOLL_RENDEZVOUS (a directory), FTCOLL_JOB_TOKEN and
 *    FTCOLL_JOB_KEY come from the launcher. Each rank writes its blob to a file in the
 *    directory (atomically: write, then rename) and polls until every
 *    rank's file exists.
 *  - pmix: under mpirun, srun --mpi=pmix or prterun. Rank and size from
 *    PMIx_Init and PMIX_JOB_SIZE; blobs through PMIx_Put, Commit,
 *    Fence(PMIX_COLLECT_DATA) and Get. No MPI is linked.
 *  - single: no launcher at all: rank 0 of 1.
 *
 * Waiting is bounded: FTCOLL_BOOTSTRAP_TIMEOUT seconds (default 30). A
 * rank that never arrives makes the others fail with a message naming it.
 * Not thread-safe; one bootstrap per process.
 */
#ifndef FTCOLL_BOOTSTRAP_H
#define FTCOLL_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/knob.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The out-of-band allgather the library takes (e.g. ftc_zmq_exchange):
 * every rank contributes len bytes (the same len everywhere) at mine; on
 * success all holds size * len bytes, rank r's at all + r * len. Returns 0,
 * or non-zero if the exchange failed (it may then be unusable).
 */
typedef int (*ftc_allgather_fn)(void *arg, const void *mine, size_t len,
                                void *all);

typedef struct ftc_bootstrap ftc_bootstrap_t;

/*
 * Pick the method from the environment: file if FTCOLL_RANK is set, else
 * pmix if PMIX_RANK or PMIX_NAMESPACE is, else single. On error returns a
 * negative ftc_error_t and writes a message to err (if not NULL):
 * FTC_EINVAL (bad environment), FTC_ENOTSUP (PMIx launcher but built
 * without PMIx), FTC_ETRANSPORT (PMIx refused), FTC_ENOMEM.
 */
int ftc_bootstrap_open(ftc_bootstrap_t **out, char *err, size_t errlen);

/* The file rendezvous in dir, explicitly. timeout_ms < 0: wait forever. */
int ftc_bootstrap_file_open(const char *dir, uint32_t rank, uint32_t size,
                            uint64_t job_token, int timeout_ms,
                            ftc_bootstrap_t **out, char *err, size_t errlen);

/* PMIx, explicitly (FTC_ENOTSUP when built without it). */
int ftc_bootstrap_pmix_open(int timeout_ms, ftc_bootstrap_t **out, char *err,
                            size_t errlen);

uint32_t ftc_bootstrap_rank(const ftc_bootstrap_t *b);
uint32_t ftc_bootstrap_size(const ftc_bootstrap_t *b);

/* Shared by the job's ranks and unlikely elsewhere: use it as the core's
 * job token. FTCOLL_JOB_TOKEN (file), a hash of the namespace (pmix). */
uint64_t ftc_bootstrap_job_token(const ftc_bootstrap_t *b);

/*
 * The job's secret: 16 bytes the same at every rank and known to no other
 * process, for the core's ftc_config_t.auth_key (docs/security.md). It
 * never travels on ftcoll's transports: file: FTCOLL_JOB_KEY, 32 hex
 * digits that ftcoll-run draws from getrandom() for each job; pmix: rank 0
 * draws it and the others get it from PMIx's job-private key-value store
 * (Put, Commit, Fence, Get) while the bootstrap opens; single: drawn
 * here. Returns 1 and fills key, or 0 (key zeroed) if the job has none:
 * a file rendezvous whose launcher set no FTCOLL_JOB_KEY (the ranks then
 * run unauthenticated, with the job token only). A malformed
 * FTCOLL_JOB_KEY already failed ftc_bootstrap_open.
 */
int ftc_bootstrap_job_key(const ftc_bootstrap_t *b, uint8_t key[16]);

/* "file", "pmix" or "single". */
const char *ftc_bootstrap_method(const ftc_bootstrap_t *b);

/*
 * Whether every rank of the job runs on this host: 1 yes, 0 no (the job
 * spans hosts), -1 unknown. The transports use it to listen on the
 * loopback interface only when nothing else is needed (the backends'
 * single_host setting). single: 1. file: 1 (ftcoll-run starts every rank
 * on its own host). pmix: PMIX_LOCAL_SIZE == PMIX_JOB_SIZE, -1 if PMIx
 * does not say. FTCOLL_SINGLE_HOST=1 or 0 overrides all of these (e.g. a
 * file rendezvous on a shared file system, ranks started by hand on
 * several hosts).
 */
int ftc_bootstrap_single_host(const ftc_bootstrap_t *b);

/*
 * An ftc_allgather_fn: pass the bootstrap as arg. Collective: every rank
 * calls it the same number of times with the same len. Returns 0 or a
 * negative ftc_error_t (FTC_ETRANSPORT on timeout or a rank that is gone;
 * ftc_bootstrap_error says which).
 */
int ftc_bootstrap_allgather(void *b, const void *mine, size_t len, void *all);

/* Why the last call failed ("" if it did not). */
const char *ftc_bootstrap_error(const ftc_bootstrap_t *b);

/* NULL is a no-op. */
void ftc_bootstrap_close(ftc_bootstrap_t *b);

/* Environment variables of the file rendezvous (ftcoll-run sets them). */
#define FTC_ENV_RANK "FTCOLL_RANK"
#define FTC_ENV_SIZE "FTCOLL_SIZE"
#define FTC_ENV_RENDEZVOUS "FTCOLL_RENDEZVOUS"
#define FTC_ENV_JOB_TOKEN "FTCOLL_JOB_TOKEN"
/* The job key: exactly 32 hexadecimal digits (either case), byte i of the
 * key being digits 2i and 2i+1. */
#define FTC_ENV_JOB_KEY "FTCOLL_JOB_KEY"
#define FTC_ENV_BOOTSTRAP_TIMEOUT "FTCOLL_BOOTSTRAP_TIMEOUT"
/* 1 or 0: every rank on this host, or not (ftc_bootstrap_single_host);
 * the backends' ftc_*_config_from_env read it too. */
#define FTC_ENV_SINGLE_HOST "FTCOLL_SINGLE_HOST"

/* The variables above, described for people (ftcoll-info): a const array
 * ending with an entry whose name is NULL, as each backend's knobs. */
const ftc_knob_t *ftc_bootstrap_knobs(void);

#ifdef __cplusplus
}
#endif
#endif
