/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Failure mitigation, after MPI's chapter 17 (ULFM): invalidate a group
 * at every member, agree despite crashes, shrink a group to its live
 * members, acknowledge failures, so a runtime can rebuild its groups
 * after crashes. The error classes are FTC_EPROC_FAILED and
 * FTC_EINVALIDATED (ftcoll/error.h). The family is "ulfm"
 * (docs/ulfm.md has the algorithm, its guarantees and what is not built
 * yet). Its agreement also makes the corrected allreduce uniform, on
 * request: ftc_coll_args_t.uniform (ftcoll/collective.h). Its operations take their place in the group's sequence like any
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
#define FTC_ALGO_ULFM ((ftc_algo_t)4)

/*
 * The agreement's failure-free round, a run-time choice per group
 * (docs/ulfm.md, "Choosing the failure-free round"). A uniform agreement
 * needs two rounds in which every member hears from every member even
 * when nothing fails (one to learn the value, one to learn that all
 * learned it); these are three shapes of those two rounds, with the same
 * guarantees (on a failure the same ballots take over). In the LogP model
 * (L = 10, o = 1) at P = 1024:
 *  - FTC_AGREE_ROUND_RD2 (default): recursive doubling, 2 log2 n
 *    dependent steps, log2 n messages per member and round (240 time
 *    units, 20 messages per member);
 *  - FTC_AGREE_ROUND_RD4: exchanges of radix 4, 2 log4 n steps,
 *    3 log4 n messages per member and round (150 units, 30 messages):
 *    the lowest latency;
 *  - FTC_AGREE_ROUND_TREE: four waves over a binomial tree (up, down, up,
 *    down), 4 tree depths, 4 (n - 1) messages in all, under 4 per
 *    member, O(1) (480 units): the fewest messages.
 */
typedef enum ftc_agree_round {
    FTC_AGREE_ROUND_RD2 = 0,
    FTC_AGREE_ROUND_RD4 = 1,
    FTC_AGREE_ROUND_TREE = 2
} ftc_agree_round_t;

/* "rd2", "rd4", "tree" (NULL for another value). */
const char *ftc_agree_round_name(ftc_agree_round_t round);
/* The reverse: FTC_OK, or FTC_EINVAL for NULL or an unknown name. */
int ftc_agree_round_parse(const char *name, ftc_agree_round_t *round);

/* The family's parameters, per group (ftc_group_set_ulfm_params). */
typedef struct ftc_ulfm_params {
    size_t size;                    /* sizeof(ftc_ulfm_params_t); a smaller
                                       (older) size that holds agree_round
                                       gets defaults for the fields added
                                       after it */
    ftc_agree_round_t agree_round;  /* default FTC_AGREE_ROUND_RD2 */
} ftc_ulfm_params_t;

/* The defaults: recursive doubling. */
void ftc_ulfm_params_init(ftc_ulfm_params_t *params);

/*
 * Set the family's parameters on group, as MPI_Comm_set_info sets hints
 * on a communicator: every agreement and shrink started on it from now
 * on (and the agreement of a uniform allreduce) runs with them, and the
 * group a shrink or ftc_group_shrink_excluding creates from it inherits
 * them. Local, no message. Every member must set the same before the
 * same operation: the choice is part of each message's signature, and a
 * member that hears from a peer with another choice ends that operation
 * with FTC_EMISMATCH and tells every member, which ends it so too (never
 * a hang; the ballots' guarantees do not hold across different choices).
 * FTC_OK; FTC_EINVAL for a NULL group or params, a size too small to
 * hold agree_round, or an agree_round that is none of the above;
 * FTC_ENOMEM.
 */
int ftc_group_set_ulfm_params(ftc_group_t *group,
                              const ftc_ulfm_params_t *params);

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
 * failures. (It ends with FTC_ENOMEM if memory runs out on the way,
 * with FTC_EEXCLUDED at a member the others declared failed, and with
 * FTC_EMISMATCH everywhere when members set different failure-free
 * rounds, ftc_group_set_ulfm_params.) result must stay valid until deliver. FTC_OK, or (nothing
 * started, deliver never runs) FTC_EINVAL for a NULL group, result or
 * deliver, FTC_EEXCLUDED once the group declared this process failed,
 * FTC_ENOMEM. As with any collective, a refused call (but for a NULL
 * group or an excluded process) keeps its place in the group's sequence
 * and the members' agreement ends with FTC_EPEER_INVALID. seq, when not
 * NULL, gets the operation's sequence number.
 */
int ftc_init_agree(ftc_group_t *group, uint64_t value, uint64_t *result,
                   ftc_deliver_fn deliver, void *deliver_arg, uint64_t *seq);

/* Drives the transport for ftc_agree: a negative return gives up. */
typedef int (*ftc_progress_fn)(void *arg);

/*
 * Blocking agreement, for examples and simple programs: ftc_init_agree
 * with *value, then progress(progress_arg) again and again (NULL: the
 * transport's own, ftc_progress) until it delivers. Returns FTC_OK with
 * *value the agreed AND and, when failed is not NULL, at most max_failed
 * agreed failed members in failed and their number in *nfailed (when not
 * NULL). FTC_EINVAL for a NULL group or value, or progress NULL on a
 * transport with no progress op (the loopback: pass a function that
 * steps it); ftc_init_agree's errors; or the negative value progress
 * returned, which abandons the wait (the agreement goes on inside the
 * library, and its result is dropped).
 */
int ftc_agree(ftc_group_t *group, uint64_t *value, uint32_t *failed,
              uint32_t max_failed, uint32_t *nfailed, ftc_progress_fn progress,
              void *progress_arg);

/*
 * Invalidate group (MPI_Comm_revoke / MPI_COMM_INVALIDATE): not
 * collective, any member may call it, at any time, several at once, and
 * again. Every live member learns it, despite failures during it: each
 * member that learns it tells every other live member once (n - 1
 * messages per member). From then on, at each member as it learns it,
 * every operation of the group that has not delivered ends with
 * FTC_EINVALIDATED, and every later ftc_init_reduce/_bcast/_allreduce on
 * it returns FTC_EINVALIDATED at once (the call keeps its place in the
 * group's sequence). Agreement and shrink go on working: that is how the
 * members get past it. FTC_OK, FTC_EINVAL for a NULL group,
 * FTC_EEXCLUDED once the group declared this process failed.
 */
int ftc_group_invalidate(ftc_group_t *group);

/* 1 once group was invalidated here (by this process or a peer), else 0
 * (and 0 for NULL). */
int ftc_group_is_invalidated(const ftc_group_t *group);

/*
 * Acknowledge the failures this process knows of in group
 * (MPI_Comm_failure_ack): local, no message. FTC_OK, FTC_EINVAL for a
 * NULL group, FTC_ENOMEM.
 */
int ftc_group_failure_ack(ftc_group_t *group);

/* The members acknowledged as failed by the last ftc_group_failure_ack
 * (MPI_Comm_failure_get_acked), as group ranks in increasing order:
 * writes at most max to out, returns how many there are (0 before any
 * ack, and for NULL). */
uint32_t ftc_group_failure_get_acked(const ftc_group_t *group, uint32_t *out,
                                     uint32_t max);

/*
 * Shrink (MPI_Comm_shrink): agree on the failed members of group, as
 * ftc_init_agree does, then create at every member the group of the
 * others, ranked in their old order, as (new_id, epoch of group + 1).
 * deliver runs with coll FTC_COLL_SHRINK, status FTC_OK, failed/nfailed
 * the agreed failed set, and *newgroup (written just before) the new
 * group, usable at once; destroy it as any group. Every member that
 * delivers gets the same members and (id, epoch): uniform, whatever
 * crashes happen during the call. A member of the new group may have
 * failed since (it is then in the context's known-failed set or will
 * be, as in any group). Call it on a group that was invalidated or has a
 * member this process knows failed: otherwise FTC_EINVAL (MPI: an error
 * of class ARG). Also FTC_EINVAL for a NULL group, newgroup or deliver,
 * or when (new_id, epoch + 1) is a live group here; FTC_EEXCLUDED,
 * FTC_ENOMEM. A refused call keeps its place in the sequence, and the
 * members' shrink then ends with FTC_EPEER_INVALID. If the group
 * (new_id, epoch + 1) appears here while the shrink runs, it delivers
 * FTC_EINVAL.
 */
int ftc_init_shrink(ftc_group_t *group, uint32_t new_id,
                    ftc_group_t **newgroup, ftc_deliver_fn deliver,
                    void *deliver_arg, uint64_t *seq);

/*
 * Shrink by a list the caller gives (as NCCL's ncclCommShrink): the new
 * group (new_id, epoch of group + 1) of the members not in exclude (group
 * ranks, any order, duplicates allowed), ranked in their old order,
 * created here at once with no message. Every member of the new group
 * must pass the same list to get the same group; there is no agreement,
 * so use it when the list is already common knowledge (a launcher's
 * verdict, an agreed value). FTC_EINVAL for a NULL group or newgroup, a
 * NULL exclude with nexclude > 0, a rank >= the group's size, this
 * process in the list, or (new_id, epoch + 1) a live group here;
 * FTC_ENOMEM.
 */
int ftc_group_shrink_excluding(ftc_group_t *group, uint32_t new_id,
                               const uint32_t *exclude, uint32_t nexclude,
                               ftc_group_t **newgroup);

#ifdef __cplusplus
}
#endif
#endif
