/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One process's part in one corrected reduce (Kuettler & Haertig 4): the
 * up-correction exchange in groups of f+1, then the tree phase on the
 * I(f)-tree, carrying failure information. Used by the reduce operation
 * and by each round of the allreduce.
 *
 * State is O(f + tree degree) plus, for the list scheme only, the failed
 * ranks it learned.
 */
#ifndef FTC_LIB_REDUCE_PART_H
#define FTC_LIB_REDUCE_PART_H

#include "algo/algo.h"
#include "algo/corrected/corrected.h"

#pragma GCC visibility push(hidden)

/* A value some process accepted in an earlier allreduce round, as opaque
 * bytes (the broadcast payload of that round). Rounds order them. */
typedef struct ftc_accepted {
    bool has;
    uint32_t round;
    uint32_t len;
    uint32_t cap;           /* bytes at blob */
    uint8_t *blob;          /* op's memory (ftc_cop_alloc) */
} ftc_accepted_t;

/* Keep the one from the higher round (copied into op's memory). */
int ftc_accepted_merge(ftc_cop_t *op, ftc_accepted_t *a, uint32_t round,
                       const uint8_t *blob, uint32_t len);
/* The same without a copy: blob stays valid and unchanged as long as op
 * (op's memory nobody writes again, such as a broadcast part's value). A
 * later merge into a never writes over it (cap 0). */
void ftc_accepted_refer(ftc_accepted_t *a, uint32_t round, uint8_t *blob,
                        uint32_t len);

typedef struct ftc_reduce_part ftc_reduce_part_t;
/* From this value size on a part's working values are not the
 * operation's memory (see values below). */
#define FTC_REDUCE_PART_OWN_BYTES ((size_t)64 << 10)

/* Non-root: its value went to its parent (status FTC_OK). Root: result,
 * fails and acc are final (status FTC_OK), or no subtree was free of
 * failures (FTC_ETOO_MANY_FAILURES), or the exact failure list could not
 * be kept (FTC_ENOMEM). Called once. */
typedef void (*ftc_reduce_done_fn)(ftc_reduce_part_t *rp, int status);

/* GONE: no longer waited for (decided, or the round was left). */
enum { FTC_PEER_WAITING = 0, FTC_PEER_GOT = 1, FTC_PEER_FAILED = 2,
       FTC_PEER_GONE = 3 };

struct ftc_reduce_part {
    ftc_cop_t *op;
    ftc_reduce_done_fn done_cb;
    uint32_t round;
    uint32_t root;          /* group rank */
    uint32_t n, me;         /* me is logical */
    uint32_t f;
    ftc_fault_info_t scheme;
    ftc_tree_t tree;
    int64_t parent;         /* logical, -1 at the root */

    /* Up-correction group (without me), then tree children: logical,
     * the group's plan (algo/plan.h), read only. */
    const uint32_t *peers;
    uint8_t *peer_state;
    uint32_t ngroup, nchildren;
    uint32_t group_pending, child_pending;

    const uint8_t *input;   /* the operation's copy */
    /* v, cv (and at the root cand, result) of a value of at least
     * FTC_REDUCE_PART_OWN_BYTES: one block of their own, freed as soon as
     * the part is done or abandoned, because nothing reads them after
     * that and a delivered allreduce lingers (docs/decisions.md, "Large
     * messages"). NULL: they are the operation's memory. */
    uint8_t *values;
    uint8_t *v;             /* input combined with the group's inputs */
    uint8_t *cv;            /* children's values combined */
    bool cv_has;
    bool subtree_failed;
    /* What v (and what is sent up) misses: inputs of up-correction
     * peers that never arrived, here and in the subtree; counted (count
     * scheme), listed as group ranks (list scheme). At the root, once
     * decided: exactly the inputs the result excludes. A lost tree child
     * sets subtree_failed instead. */
    uint32_t fail_count;
    uint32_t *fails;
    uint32_t nfails, capfails;
    ftc_accepted_t acc;     /* highest accepted value seen */

    /* Root only. */
    bool root_in_group;
    uint32_t root_group_children; /* children 1..this hold the root's group */
    bool cand_has;
    uint32_t cand_child;
    uint8_t *cand;
    uint32_t *cand_fails;
    uint32_t ncand_fails, cand_count;
    uint8_t *result;

    bool done;              /* done_cb has run */
    bool abandoned;
};

/* own_acc may be NULL. Sends the up-correction messages. */
int ftc_reduce_part_start(ftc_reduce_part_t *rp, ftc_cop_t *op,
                          ftc_reduce_done_fn done_cb, uint32_t round,
                          uint32_t root, const uint8_t *input,
                          const ftc_accepted_t *own_acc);

/* UPCORR or TREE_UP for this round. */
void ftc_reduce_part_on_msg(ftc_reduce_part_t *rp, const ftc_wire_header_t *hdr,
                            const uint8_t *payload, uint32_t grank);
void ftc_reduce_part_on_failed(ftc_reduce_part_t *rp, uint32_t grank);

/* Leave the round early: tell the parent (if not yet told) that this
 * subtree cannot be used, and stop waiting. */
void ftc_reduce_part_abandon(ftc_reduce_part_t *rp);

/* Release watches, the working values and the failure list (other
 * buffers are the operation's memory), and clear rp for a later round. */
void ftc_reduce_part_destroy(ftc_reduce_part_t *rp);
/* The same without clearing: for an operation that is freed next, whose
 * block nobody reads again (clearing ~250 bytes was a memset call per
 * operation). */
void ftc_reduce_part_release(ftc_reduce_part_t *rp);

/* Bytes of operation memory ftc_reduce_part_start takes in a failure-free
 * round (an estimate: ftc_cop_alloc copes with more). */
size_t ftc_reduce_part_space(const ftc_coll_args_t *args, size_t nbytes,
                             const ftc_group_t *g, uint32_t root);

#pragma GCC visibility pop

#endif
