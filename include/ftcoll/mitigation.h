/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Failure mitigation, after MPI's chapter 17 (ULFM): a fault-tolerant
 * agreement, so that the live members of a group can decide something
 * together whatever crashes happen meanwhile. The family is "ulfm"
 * (docs/ulfm.md has the algorithm, its guarantees and what is not built
 * yet). Its operations take their place in the group's sequence like any
 * collective: every member calls them in the same order as the others.
 */
#ifndef FTCOLL_MITIGATION_H
#define FTCOLL_MITIGATION_H

#include <stdint.h>

#include "ftcoll/collective.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The family's id in the registry (ftcoll/algo.h) and on the wire. */
#define FTC_ALGO_ULFM ((ftc_algo_t)3)

/*
 * Agreement (MPI_Comm_iagree, with a 64-bit flag): every live member of
 * group contributes value; deliver runs once at every member that does
 * not fail, with coll FTC_COLL_AGREE, status FTC_OK, *result (also
 * completion.recvbuf) the bitwise AND of a set of contributions, and
 * completion.failed/nfailed the agreed set of failed members (group
 * ranks, sorted). Guarantees, whatever crashes happen during the call,
 * any number of them (docs/ulfm.md):
 *  - termination: every member that does not fail delivers;
 *  - uniform agreement: every member that delivers, even one that fails
 *    right after, delivers the same value and the same failed set;
 *  - validity: the value is the AND of the contributions of a set of
 *    members that holds every member outside the failed set (a member in
 *    it may have contributed before it failed), and of nothing else;
 *    every member in the failed set had failed. Hence every member alive
 *    at the end contributed.
 * It never ends with FTC_EPROC_FAILED: agreement is how a group gets past
 * failures. result must stay valid until deliver. FTC_OK, or (nothing
 * started, deliver never runs) FTC_EINVAL for a NULL group, result or
 * deliver, FTC_EEXCLUDED once the group declared this process failed,
 * FTC_ENOMEM. seq, when not NULL, gets the operation's sequence number.
 */
int ftc_init_agree(ftc_group_t *group, uint64_t value, uint64_t *result,
                   ftc_deliver_fn deliver, void *deliver_arg, uint64_t *seq);

#ifdef __cplusplus
}
#endif
#endif
