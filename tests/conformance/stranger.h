/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the stranger tools of the UCX and libfabric backends
 * (ftcoll_foreign_ucx.c, ftcoll_foreign_ofi.c) share: reading a live
 * job's rendezvous files, and the core messages every backend's stranger
 * sends. ftcoll_foreign.c (ZeroMQ) predates this file and keeps its own.
 *
 * The payloads, and what the core's decoder (lib/wire/wire.c) makes of each:
 *
 *   random      100 random bytes, never the magic     -> dropped_version
 *   random, 10  too short for a core header           -> dropped_truncated
 *   (0 bytes)                                         -> dropped_truncated
 *   other_job   a well-formed probe of another job    -> dropped_foreign
 *   broken      other_job with one bit off            -> dropped_checksum
 */
#ifndef FTC_TEST_STRANGER_H
#define FTC_TEST_STRANGER_H

#include <stddef.h>
#include <stdint.h>

#include "wire/wire.h"

typedef struct stranger_msgs {
    unsigned char random[100];
    unsigned char other_job[FTC_WIRE_HEADER_SIZE];
    unsigned char broken[FTC_WIRE_HEADER_SIZE];
} stranger_msgs_t;

/* Fill m; other_job's token is made to differ from job_token (the job's,
 * from the rendezvous), so the decoder cannot take it for the job's. */
void stranger_msgs_init(stranger_msgs_t *m, uint64_t job_token);

/* A token that is not job_token: what the strangers put in their backend
 * headers. */
uint64_t stranger_wrong_token(uint64_t job_token);

/*
 * Rank `rank`'s contribution to allgather number `round` of the file
 * rendezvous in dir (ag<round>.<rank>, written by the job's bootstrap),
 * waiting up to timeout_ms for it to appear. On success returns 0, *data
 * (malloc'd, free it) holds *len bytes, and *token the job token of the
 * file's header. -1 (said on stderr) if it never appeared or is not a
 * rendezvous file.
 */
int stranger_read_rdv(const char *dir, unsigned round, unsigned rank,
                      int timeout_ms, unsigned char **data, size_t *len,
                      uint64_t *token);

#endif
