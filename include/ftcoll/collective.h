/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives. Each is non-blocking: ftc_init_<coll>() starts it and returns
 * at once; the deliver callback ends it, exactly once, with a status and the
 * result. Deliver is never called from inside ftc_init_*(): it runs from a
 * transport entry point (ftc_transport_recv, ..._timer_fired, ...). Many
 * collectives may be in flight on one group at once.
 *
 * The guarantees of each algorithm are in docs/semantics.md.
 */
#ifndef FTCOLL_COLLECTIVE_H
#define FTCOLL_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/context.h"
#include "ftcoll/datatype.h"
#include "ftcoll/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ftc_coll {
    FTC_COLL_REDUCE = 1,
    FTC_COLL_BCAST = 2,
    FTC_COLL_ALLREDUCE = 3,
    FTC_COLL_FINALIZE = 4   /* ftc_group_finalize's completion */
} ftc_coll_t;

typedef enum ftc_algo {
    FTC_ALGO_CORRECTED = 1, /* Kuettler & Haertig: tolerates f failures */
    FTC_ALGO_TREE = 2       /* plain trees: no tolerance, the baseline; a
                               failure ends the collective with
                               FTC_EPEER_FAILED instead of a hang */
} ftc_algo_t;

/* Failure information carried up the reduce tree (paper 4.4). */
typedef enum ftc_fault_info {
    FTC_FAULT_LIST = 1,  /* the ranks whose input a value misses:
                            O(failures) bytes; feeds the known-failed set */
    FTC_FAULT_COUNT = 2, /* their number, plus a subtree-failed bit */
    FTC_FAULT_BIT = 3    /* only the subtree-failed bit */
} ftc_fault_info_t;

/* Correction phase of the corrected broadcast (corrected-trees.md 3). */
typedef enum ftc_correction {
    FTC_CORRECTION_OPPORTUNISTIC = 1, /* send to the next d ranks on the ring */
    FTC_CORRECTION_CHECKED = 2        /* both directions until heard from f+1 */
} ftc_correction_t;

struct ftc_completion;
typedef void (*ftc_deliver_fn)(const struct ftc_completion *c, void *arg);

typedef struct ftc_coll_args {
    size_t size;            /* sizeof(ftc_coll_args_t); ftc_coll_args_init */
    ftc_algo_t algo;
    uint32_t root;          /* group rank; for allreduce the first root tried */
    uint32_t f;             /* failures to tolerate, f < group size */
    ftc_dtype_t dtype;
    ftc_op_t op;            /* reduce and allreduce */
    ftc_user_op_fn user_fn; /* FTC_USER only */
    void *user_arg;
    uint64_t count;         /* elements; 0 is allowed */
    /* Input: every process for reduce and allreduce, the root for bcast.
     * Read during ftc_init_* only (the core copies it). */
    const void *sendbuf;
    /* Output: the reduce root, every process for bcast and allreduce.
     * Written just before deliver; must stay valid until then. May equal
     * sendbuf. Others may pass NULL. */
    void *recvbuf;
    ftc_fault_info_t fault_info;  /* corrected reduce and allreduce */
    ftc_correction_t correction;  /* corrected bcast and allreduce */
    uint32_t distance;            /* opportunistic correction distance d */
    ftc_tree_t bcast_tree;        /* tree of the bcast phase */
    ftc_deliver_fn deliver;       /* required */
    void *deliver_arg;
    /* 0: none (default). Otherwise the operation ends with FTC_ETIMEDOUT
     * if it has not delivered this long after this process started it,
     * and every member is told, so a member that never calls (or calls a
     * collective the others do not) cannot hang the rest. Pick it well
     * above the operation's time with failures (suspect + probe timeout
     * per failure). Added in 0.2: a caller compiled against the older,
     * smaller struct (args.size) gets 0. */
    uint64_t timeout_ns;
    /* 0 (default) or 1: checked mode. The operation is paired with a small
     * corrected allreduce of its argument signature (the two run side by
     * side, and the call takes two places in the group's sequence), and
     * delivers only when both have: FTC_EMISMATCH at every member if any
     * member called it with other arguments (a root that believes itself
     * the root, another collective, ...), which the default cannot catch
     * before some member delivers (docs/semantics.md, "Usage errors").
     * Every member must pass the same value. Costs one allreduce of 16
     * bytes. Added in 0.2, with timeout_ns. */
    uint32_t checked;
} ftc_coll_args_t;

/* sizeof(ftc_coll_args_t) before timeout_ns was added: still accepted. */
#define FTC_COLL_ARGS_SIZE_0_1 offsetof(ftc_coll_args_t, timeout_ns)

/* Defaults: corrected, root 0, f 1, int32 sum, count 0, list, checked,
 * d = 2, interleaved binomial bcast tree. */
void ftc_coll_args_init(ftc_coll_args_t *args);

typedef struct ftc_stats {
    uint64_t msgs_sent, msgs_received, bytes_sent, bytes_received;
    uint32_t failures_detected; /* group members this process learned had
                                   failed while the operation was running */
    /* Reduce root (and allreduce's deciding root): the logical child, 1..f+1,
     * whose subtree value it used; 0 if none (no result, or not the root). */
    uint32_t root_subtree;
    uint32_t retries;   /* allreduce: roots tried after the first */
    uint32_t root;      /* group rank of the root that produced the result */
} ftc_stats_t;

typedef struct ftc_completion {
    int status;              /* FTC_OK or a negative ftc_error_t */
    ftc_coll_t coll;
    uint64_t seq;            /* operation sequence number in the group */
    ftc_group_t *group;
    void *recvbuf;           /* holds the result when status is FTC_OK and
                                this process receives one */
    ftc_stats_t stats;
    /* Exactly the group ranks whose input the result misses, sorted (list
     * scheme; the reduce root, and every allreduce deliverer, where the list
     * is the same at every survivor): every other member's input is in the
     * result, once. A member that failed after its input went up is not
     * listed. ftc_group_finalize: the members that failed instead of
     * finalizing. Valid during the callback only. */
    uint32_t nfailed;
    const uint32_t *failed;
    /* How many inputs the result misses (list and count schemes), or
     * FTC_FAILED_UNKNOWN (bit scheme: the result is as exact, but the
     * scheme carries no count). */
    uint32_t failed_count;
} ftc_completion_t;

/* failed_count when the scheme cannot know it (FTC_FAULT_BIT). */
#define FTC_FAILED_UNKNOWN UINT32_MAX

/*
 * Start a collective on group. On success returns FTC_OK and, when seq is
 * not NULL, the operation's sequence number. On error nothing was started
 * and deliver will not be called.
 */
int ftc_init_reduce(ftc_group_t *group, const ftc_coll_args_t *args,
                    uint64_t *seq);
int ftc_init_bcast(ftc_group_t *group, const ftc_coll_args_t *args,
                   uint64_t *seq);
int ftc_init_allreduce(ftc_group_t *group, const ftc_coll_args_t *args,
                       uint64_t *seq);

/*
 * Leave the group cleanly, so that no peer still behind loses this
 * process's help (docs/api.md, "Leaving"). Call it after the last
 * operation on the group delivered here (else FTC_EBUSY, nothing
 * started); deliver runs, with status FTC_OK and coll FTC_COLL_FINALIZE,
 * once every other member has finalized too or failed (those that failed
 * are listed in failed/nfailed). Until then keep driving the transport:
 * this process still serves laggards. After it, nobody needs this
 * process any more: destroy the group or the context, or exit. Every
 * member must call it as the group's next operation; a member that never
 * does is waited for like any silent peer (probed, then declared failed).
 * Costs n-1 messages per member.
 */
int ftc_group_finalize(ftc_group_t *group, ftc_deliver_fn deliver, void *arg);

const char *ftc_coll_name(ftc_coll_t coll);
const char *ftc_algo_name(ftc_algo_t algo);
int ftc_algo_parse(const char *name, ftc_algo_t *out);
int ftc_fault_info_parse(const char *name, ftc_fault_info_t *out);
int ftc_correction_parse(const char *name, ftc_correction_t *out);

#ifdef __cplusplus
}
#endif
#endif
