/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the stranger tools of the backends (ftcoll_foreign.c for ZeroMQ,
 * ftcoll_foreign_ucx.c, ftcoll_foreign_ofi.c) share: reading a live job's
 * rendezvous files, and the core messages every backend's stranger sends
 * (ftcoll_foreign.c predates this file and keeps its own garbage; it
 * takes the forged messages from here).
 *
 * The payloads, and what the core's decoder (lib/wire/wire.c) makes of each:
 *
 *   random      100 random bytes, never the magic     -> dropped_version
 *   random, 10  too short for a core header           -> dropped_truncated
 *   (0 bytes)                                         -> dropped_truncated
 *   other_job   a well-formed probe of another job    -> dropped_foreign
 *   broken      other_job with one bit off            -> dropped_checksum
 *
 * And the forged ones: what a stranger that read the job token (it is in
 * the rendezvous files, and in clear in every message) sends to act on a
 * member. Each carries the job's token and a right checksum, so without
 * the job key the core would take it (tests/test_hostile.c shows it does);
 * with the key it has no MAC, or a wrong one, and is dropped as foreign:
 *
 *   excluded    FTC_MSG_EXCLUDED "from rank 0": you were declared failed
 *   inject      FTC_CORR_MSG_TREE_UP "from rank 1" with a value (10^9) for a
 *               later operation of group 1, signed as an 8-byte
 *               allreduce of ftcoll-bench's defaults (without a key, a
 *               message of the wrong signature still ends the operation:
 *               FTC_EMISMATCH)
 *   guessed     excluded, MACed under a key that is not the job's
 *   flood       STRANGER_FLOOD messages of STRANGER_FLOOD_PAYLOAD bytes for
 *               a group that does not exist (without a key the core keeps
 *               such messages, up to FTC_ORPHAN_MAX_BYTES in all)
 *
 * All STRANGER_FORGED count in dropped_foreign with the key.
 */
#ifndef FTC_TEST_STRANGER_H
#define FTC_TEST_STRANGER_H

#include <stddef.h>
#include <stdint.h>

#include "wire/wire.h"

enum {
    STRANGER_FLOOD = 64,
    STRANGER_FLOOD_PAYLOAD = 1024,
    STRANGER_FORGED = 3 + STRANGER_FLOOD,
    /* The longest message here. */
    STRANGER_MSG_MAX = FTC_WIRE_HEADER_SIZE + STRANGER_FLOOD_PAYLOAD
};

typedef struct stranger_msgs {
    unsigned char random[100];
    unsigned char other_job[FTC_WIRE_HEADER_SIZE];
    unsigned char broken[FTC_WIRE_HEADER_SIZE];
    unsigned char excluded[FTC_WIRE_HEADER_SIZE];
    unsigned char inject[FTC_WIRE_HEADER_SIZE + 8];
    unsigned char guessed[FTC_WIRE_HEADER_SIZE];
    unsigned char flood[FTC_WIRE_HEADER_SIZE + STRANGER_FLOOD_PAYLOAD];
} stranger_msgs_t;

/* Fill m; other_job's token is made to differ from job_token (the job's,
 * from the rendezvous), so the decoder cannot take it for the job's; the
 * forged messages carry job_token. */
void stranger_msgs_init(stranger_msgs_t *m, uint64_t job_token);

/* Forged message i (0 .. STRANGER_FORGED - 1) and its length. */
const unsigned char *stranger_forged(const stranger_msgs_t *m, unsigned i,
                                     size_t *len);

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

/*
 * Every stranger's command line, "PROG DIR N" (bench/cli.h's rules): -1
 * with *dir (the job's rendezvous) and *n (its size, 1 .. 65536) set, to
 * go on with; otherwise the exit status (0 after --help or --version, 2
 * after a bad command line, said on stderr).
 */
int stranger_args(const char *prog, int argc, char *argv[], const char **dir,
                  unsigned *n);

#endif
