/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm family's agreement operation: a failure-free early round of
 * two exchanges, recursive doubling or radix 4 (early.c), or none (the
 * group's choice, ftc_group_set_ulfm_params), and behind it a
 * rotating-coordinator consensus over trees, with Paxos's "highest
 * accepted value" rule (agree.c), that decides a 64-bit AND and a failed
 * set (docs/ulfm.md).
 */
#ifndef FTC_ULFM_AGREE_H
#define FTC_ULFM_AGREE_H

#include "algo/algo.h"
#include "algo/ulfm/idset.h"
#include "ftcoll/mitigation.h"

#pragma GCC visibility push(hidden)

typedef struct ftc_agree ftc_agree_t;


/* What an operation built on the agreement does once it decided. The
 * agreement has written the value and the failed set (sorted group
 * ranks) and will linger to serve members behind; decided must complete
 * the operation (ftc_cop_complete). */
typedef struct ftc_agree_hooks {
    void (*decided)(ftc_agree_t *a, uint64_t value, const uint32_t *failed,
                    uint32_t nfailed);
    /* Optional, for an operation that needs the value only, not the
     * failed set: whether an AND of every member's contribution proves
     * that all contributions were equal (the caller's encoding makes it
     * so). Then the early round decides after its first exchange: every
     * decision any path can reach is an AND of some of those equal
     * contributions, so it is this value. The failed set delivered then
     * is empty, and may differ from another member's. */
    bool (*unanimous)(uint64_t and_of_all);
} ftc_agree_hooks_t;

enum ftc_agree_phase {
    FTC_AGREE_EARLY,        /* in the failure-free early round (early.c) */
    FTC_AGREE_GATHER,       /* collecting the subtree's contributions */
    FTC_AGREE_WAIT_PROPOSE, /* sent them up, waiting for the proposal */
    FTC_AGREE_ACKS,         /* accepted it, collecting the subtree's acks */
    FTC_AGREE_WAIT_DECIDE,  /* sent the acks up, waiting for the decision */
    FTC_AGREE_DECIDED
};

struct ftc_agree {
    ftc_cop_t base;
    const ftc_agree_hooks_t *hooks;
    uint64_t input;
    bool ready;                 /* the input is known (see _deferred) */
    /* The early round's radix, from the group's agree_round at the start:
     * 2 (recursive doubling), 4, or 1 (no early round: the ballots decide
     * from the start, in four tree waves). */
    uint32_t radix;
    uint32_t ballot;            /* = its coordinator's group rank */
    /* The early round (phase FTC_AGREE_EARLY, early.c): round 1 or 2,
     * the next step to finish, the AND of everything received so far
     * (a step ahead included: AND does not mind), and bit s of got1/got2
     * once the round's step-s message arrived. */
    uint8_t early_round;
    uint32_t early_step;
    uint64_t early_and;
    uint64_t early_got1, early_got2;
    enum ftc_agree_phase phase;
    uint32_t parent;            /* where up messages go now (UINT32_MAX: root) */
    /* The gather aggregate of this ballot: AND of the contributions seen,
     * members known failed on the way, the highest accepted proposal. */
    uint64_t and_acc;
    ftc_idset_t fail_acc;
    bool has_acc;
    uint32_t acc_rank;          /* 0: accepted in the early round; b + 1:
                                   in ballot b (the higher, the later) */
    uint64_t acc_value;
    ftc_idset_t acc_failed;
    /* Who sent a gather / an ack in this ballot; down: who waits on us
     * for the proposal and the decision. */
    ftc_idset_t got_gather, got_ack, down;
    ftc_idset_t watching;       /* peers we hold a monitor watch on */
    uint64_t value;             /* decided */
    ftc_idset_t failed;
    bool oom;
};

/* Start the agreement as operation coll of g (agree, or shrink's first
 * step): op_size bytes (at least sizeof(ftc_agree_t), for a caller that
 * embeds it), registered, started, early messages replayed. prepare
 * (when not NULL) fills the caller's part first: the agreement may
 * decide at once (a group of one). */
int ftc_agree_start(ftc_group_t *g, ftc_coll_t coll, uint64_t value,
                    void *recvbuf, ftc_deliver_fn deliver, void *deliver_arg,
                    size_t op_size, const ftc_agree_hooks_t *hooks,
                    void (*prepare)(ftc_agree_t *a, void *arg),
                    void *prepare_arg, ftc_agree_t **out);

/* The same with the input to come (ftc_agree_contribute): the operation
 * takes its place in the group's sequence now, keeps what arrives, and
 * sends nothing before it has the input. variant goes into its signature,
 * so that members calling different things do not pair up; timeout_ns
 * (0: none) ends it with FTC_ETIMEDOUT as any operation's, for a member
 * that never contributes. For an operation whose input is the result of
 * another (uniform.c). */
int ftc_agree_start_deferred(ftc_group_t *g, ftc_coll_t coll, uint32_t variant,
                             uint64_t timeout_ns, void *recvbuf,
                             ftc_deliver_fn deliver, void *deliver_arg,
                             size_t op_size, const ftc_agree_hooks_t *hooks,
                             ftc_agree_t **out);
/* Give a deferred agreement its input (once; later calls do nothing). */
void ftc_agree_contribute(ftc_agree_t *a, uint64_t value);

/* ---- between agree.c, early.c and family.c ---------------------------- */

/* The failure-free round set on g (family.c; the default without one). */
ftc_agree_round_t ftc_ulfm_group_round(const ftc_group_t *g);

/* Send a message of the agreement with word in its header. */
void ftc_agree_send(ftc_agree_t *a, uint32_t dest, uint8_t kind, uint32_t word,
                    const void *payload, size_t len);
/* Hold monitor watches on exactly the members in want. */
void ftc_agree_watch(ftc_agree_t *a, const ftc_idset_t *want);
/* Deliver value with no failed member: the early round completed. */
void ftc_agree_decide_early(ftc_agree_t *a, uint64_t value);
/* Leave the early round for the ballots (agree.c). */
void ftc_agree_leave_early(ftc_agree_t *a);

/* early.c: start the round (a->input set, phase FTC_AGREE_EARLY), or
 * leave it at once when this member knows a failure; move as far as what
 * arrived allows; take one of its messages; list every member this one
 * exchanges with in it (to tell them it left). */
void ftc_agree_early_start(ftc_agree_t *a);
void ftc_agree_early_evaluate(ftc_agree_t *a);
void ftc_agree_early_on_msg(ftc_agree_t *a, const ftc_wire_header_t *hdr,
                            const uint8_t *payload, uint32_t from);
bool ftc_agree_early_partners(const ftc_agree_t *a, ftc_idset_t *out);

#pragma GCC visibility pop

#endif
