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
    FTC_COLL_FINALIZE = 4,  /* ftc_group_finalize's completion */
    FTC_COLL_AGREE = 5,     /* ftc_init_agree (ftcoll/mitigation.h) */
    FTC_COLL_SHRINK = 6     /* ftc_init_shrink (ftcoll/mitigation.h) */
} ftc_coll_t;

/* The algorithm families. A family's id is declared here for the first
 * two; a family added later declares its own in its parameter header
 * (ftcoll/<family>.h), and the registry (ftcoll/algo.h) lists them all. */
typedef enum ftc_algo {
    FTC_ALGO_CORRECTED = 1, /* Kuettler & Haertig: tolerates f failures */
    FTC_ALGO_TREE = 2       /* plain trees: no tolerance, the baseline; a
                               failure ends the collective with
                               FTC_EPEER_FAILED instead of a hang */
} ftc_algo_t;

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
    ftc_deliver_fn deliver;       /* required */
    void *deliver_arg;
    /* 0: none (default). Otherwise the operation ends with FTC_ETIMEDOUT
     * if it has not delivered this long after this process started it,
     * and every member is told, so a member that never calls (or calls a
     * collective the others do not) cannot hang the rest. Pick it well
     * above the operation's time with failures (per failure that no
     * transport reports, the keepalive's whole budget: suspect timeout
     * plus every probe of the back-off, ftc_config_t). */
    uint64_t timeout_ns;
    /* 0 (default) or 1: checked mode. The operation is paired with a small
     * corrected allreduce of its argument signature (the two run side by
     * side, and the call takes two places in the group's sequence), and
     * delivers only when both have: FTC_EMISMATCH at every member if any
     * member called it with other arguments (a root that believes itself
     * the root, another collective, ...), which the default cannot catch
     * before some member delivers (docs/semantics.md, "Usage errors").
     * Every member must pass the same value. Costs one allreduce of 16
     * bytes. */
    uint32_t checked;
    /* The algorithm family's own parameters: a struct that starts with
     * its size_t size (ftcoll/corrected.h, ftcoll/tree.h), or NULL for
     * the family's defaults. Read during ftc_init_* only. A struct of an
     * older, smaller size gets defaults for the fields it lacks. */
    const void *params;
    /* 0 (default) or 1: uniform mode, allreduce of the corrected family
     * only. Every member that delivers FTC_OK, one that crashes right
     * after included, delivers the same value (the plain allreduce
     * promises it of the members that stay alive). The allreduce is
     * followed by a ulfm agreement (ftcoll/mitigation.h) on which root's
     * value each member holds, and delivers only after it: the call takes
     * two places in the group's sequence, and costs an agreement (log2 n
     * exchange steps with no failure, docs/ulfm.md). If the members that
     * took part do not all hold the same root's value (a member took an
     * older root's value and failed), every member that delivers gets
     * FTC_EPROC_FAILED instead, or its own error: retry on the survivors.
     * Every member must pass the same value. timeout_ns bounds the
     * agreement too (a member that never calls). FTC_EINVAL with checked
     * mode or another collective, FTC_ENOTSUP with another family. */
    uint32_t uniform;
} ftc_coll_args_t;

/* The smallest size accepted: the struct up to and including recvbuf.
 * Any size from there up to sizeof(ftc_coll_args_t) is accepted, the
 * fields past it taking their defaults (ftc_coll_args_init). The layout
 * is that of 0.3, when the corrected family's fields moved to its own
 * struct (ftcoll/corrected.h): a program built against 0.2 or older must
 * be rebuilt (the shared library's soname moved to libftcoll.so.1). */
#define FTC_COLL_ARGS_SIZE_MIN                                              \
    (offsetof(ftc_coll_args_t, recvbuf) + sizeof(void *))

/* Defaults: corrected, root 0, f 1, int32 sum, count 0, no timeout, not
 * checked, params NULL (the family's defaults). */
void ftc_coll_args_init(ftc_coll_args_t *args);

typedef struct ftc_stats {
    uint64_t msgs_sent, msgs_received, bytes_sent, bytes_received;
    uint32_t failures_detected; /* group members this process learned had
                                   failed while the operation was running */
    /* Reduce root (and allreduce's deciding root): the logical child, 1..f+1,
     * whose subtree value it used; 0 if none (no result, or not the root). */
    uint32_t root_subtree;
    uint32_t retries;   /* allreduce: roots tried after the first */
    uint32_t root;      /* group rank of the root that produced the result;
                           FTC_ROOT_NONE when no root did (the corrected
                           exchange allreduce's exchange round, where
                           every member reduced all inputs itself) */
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

/* stats.root of a result that no root produced. */
#define FTC_ROOT_NONE UINT32_MAX

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
/* Names of the registered families (ftcoll/algo.h): "?" / FTC_EINVAL for
 * an unknown one. */
const char *ftc_algo_name(ftc_algo_t algo);
int ftc_algo_parse(const char *name, ftc_algo_t *out);

/*
 * End operation seq of group here, now, with FTC_ECANCELED (deliver runs
 * from the next entry point, as always). Returns FTC_OK; FTC_EINVAL for a
 * NULL group or when no live operation of the group has that sequence
 * number; FTC_EBUSY if it already delivered here. What peers see: the
 * operation ends at every member that has not delivered it yet, with
 * FTC_EPEER_INVALID (they are told at once, and a late one learns it
 * from a probe), as when a member's call is refused; members that
 * delivered are not affected. The operation keeps its place in the
 * group's sequence, so later operations pair up as before.
 */
int ftc_cancel(ftc_group_t *group, uint64_t seq);

#ifdef __cplusplus
}
#endif
#endif
