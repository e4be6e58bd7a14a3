/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A group: its members, its operation sequence, its live operations and
 * the messages that arrived for operations not started yet.
 */
#ifndef FTC_CORE_GROUP_H
#define FTC_CORE_GROUP_H

#include "core/context.h"
#include "util/reduce_kernel.h"
#include "wire/wire.h"

#pragma GCC visibility push(hidden)

struct ftc_pending_msg {
    struct ftc_pending_msg *next;
    ftc_wire_header_t hdr;
    uint32_t src;           /* world rank */
    uint8_t payload[];      /* hdr.payload_len bytes */
};

struct ftc_group {
    ftc_context_t *ctx;
    uint32_t id, epoch, n, me;
    /* group rank -> world rank; all NULL for the identity group (the
     * whole world in order), which keeps a context O(1) in the world size
     * so a simulator can host a million of them. */
    uint32_t *members;
    uint32_t *by_world;         /* sorted world ranks ... */
    uint32_t *by_world_grank;   /* ... and their group ranks */
    /* Or, with members NULL and nabsent > 0: the world in order but for
     * these sorted world ranks. What a shrink of the identity group makes
     * (ftc_group_create_excluding): O(failures), not O(world), per
     * process. */
    uint32_t *absent;
    uint32_t nabsent;
    uint64_t next_seq;
    ftc_cop_t *ops;              /* live operations, any state */
    ftc_pending_msg_t *pending; /* messages for operations not started */
    /* Their accounting per source, sorted by source (core/pending.h). */
    struct ftc_pending_src *pending_src;
    uint32_t npending_src, cap_pending_src;
    uint64_t colls_done;        /* deliveries here: retires lingerers */
    ftc_cop_t *linger_head, *linger_tail;
    /* The block of the last operation freed, for the next one: a stream
     * of collectives then costs no malloc at all. */
    void *spare_op;
    size_t spare_op_size;
    /* spare_op holds an operation its family freed as a template
     * (ftc_cop_delete_template): its shape is the stream's next like
     * operation's (ftc_cop_template). */
    bool spare_is_template;
    /* Templates taken again (ftc_cop_restart): what a test counts to
     * see a stream's like calls take the steady stream's path. */
    uint64_t templates_taken;
    /* The last operation's signature and what it hashed (ftc_cop_setup):
     * a stream of calls with the same arguments, the common case, pays
     * eight comparisons instead of the hash's eight mixing rounds. */
    struct {
        uint32_t in[7];
        uint64_t count;
        uint32_t signature;
        bool valid;
        /* The built-in kernel of its operator on its datatype (in[5],
         * in[4]; NULL for FTC_USER), which the operation's reductions
         * call (ftc_cop_reduce). */
        ftc_reduce_kernel_fn kernel;
        size_t nbytes;          /* count times in[4]'s size */
        /* Bumped by every miss: an operation set up under the same
         * generation had this very signature (ftc_cop_template). */
        uint32_t gen;
    } sig_memo;
    /* Operations that ended with a usage error, remembered so a peer
     * still waiting in one learns it from a probe instead of hanging. */
    struct {
        uint64_t seq;
        int status;
    } ended[8];
    uint32_t nended;
    /* Operations a peer told us (FTC_MSG_ENDED) it ended with a usage
     * error before we started them: they end as soon as they start. */
    struct {
        uint64_t seq;
        int status;
    } told_ended[8];
    uint32_t ntold_ended;
    /* 0, or the status the group was stopped with (core/stop.c). */
    int stopped;
    /* ftc_group_destroy (or the context's) is under way: the deliver
     * callbacks it runs may call in, and every call that would start
     * something on the group is refused with FTC_ECANCELED. */
    bool destroying;
    /* State families keep per group (ftc_group_ext). */
    struct ftc_group_ext *ext;
    /* The algorithms' topology plan for this group (algo/plan.h): the
     * tree nodes a stream of like operations reads instead of computing
     * them again. Freed with the group by plan_free. */
    void *plan;
    void (*plan_free)(void *plan);
    /* The last call that passed the argument checks (api/call_memo.h),
     * one block (free). */
    void *call_memo;
    ftc_group_t *next;
};

/* ftc_group_world_rank, without the call for the identity group (the
 * whole world in order, the common case): every send and many messages
 * ask. */
static inline uint32_t ftc_group_world_of(const ftc_group_t *g,
                                          uint32_t grank)
{
    if (g->members == NULL && g->nabsent == 0)
        return grank < g->n ? grank : UINT32_MAX;
    return ftc_group_world_rank(g, grank);
}

static inline bool ftc_group_member_failed(const ftc_group_t *g,
                                           uint32_t grank)
{
    if (g->ctx->nfailed == 0)
        return false;
    return ftc_ctx_is_failed(g->ctx, ftc_group_world_of(g, grank));
}
/* -1 if world rank w is not a member. */
int64_t ftc_group_rank_lookup(const ftc_group_t *g, uint32_t w);
/* The same, without the call for the identity group (every message
 * asks). */
static inline int64_t ftc_group_rank_of(const ftc_group_t *g, uint32_t w)
{
    if (g->members == NULL && g->nabsent == 0)
        return w < g->n ? (int64_t)w : -1;
    return ftc_group_rank_lookup(g, w);
}
/* Create at g's process the group (id, epoch) of g's members but the
 * group ranks in skip (sorted, distinct), in their old order: O(|skip| +
 * g's absent ranks) when g is the world or a shrink of it, O(g's size)
 * when g has an explicit member list. FTC_EINVAL when this process is in
 * skip or (id, epoch) exists here; FTC_ENOMEM. */
int ftc_group_create_excluding(ftc_group_t *g, uint32_t id, uint32_t epoch,
                               const uint32_t *skip, uint32_t nskip,
                               ftc_group_t **out);
/* The group (id, epoch) of ctx, or NULL. Inline for the first group of
 * the context's list (the newest; a job of one group has only it): every
 * message received asks, and the call was a third of the answer's cost.
 * Any other walks the list. */
ftc_group_t *ftc_group_find_walk(ftc_context_t *ctx, uint32_t id,
                                 uint32_t epoch);
static inline ftc_group_t *ftc_group_find(ftc_context_t *ctx, uint32_t id,
                                          uint32_t epoch)
{
    ftc_group_t *g = ctx->groups;
    if (g != NULL && g->id == id && g->epoch == epoch)
        return g;
    return ftc_group_find_walk(ctx, id, epoch);
}
/* End every operation of g: undelivered ones with status. */
void ftc_group_cancel_ops(ftc_group_t *g, int status);
void ftc_pending_free_list(ftc_pending_msg_t *m);

/* ---- usage errors every member sees (core/ended.c) --------------------- */

/* A call on g was refused (status): its operation still takes its place
 * in the group's sequence, and every member learns that it ended. */
void ftc_group_refused(ftc_group_t *g, int status);
/* The usage error operation seq ended with here, or FTC_OK. */
int ftc_group_ended_status(const ftc_group_t *g, uint64_t seq);
/* A status that ends an operation at every member (mismatch, ...). */
bool ftc_is_usage_status(int status);

/* ---- the group stop (core/stop.c) -------------------------------------
 *
 * Stop g with status (negative) at every live member: each member that
 * learns it, by this call or from a peer, tells every other live member
 * once, so every live member learns it even when members crash meanwhile
 * (O(n) messages per member: an error path). Every live operation of g
 * that has not delivered ends with status, except those whose table says
 * survives_stop; from then on ftc_init_* on g returns status (the call
 * still takes its place in the sequence, silently: the members are
 * stopped too). Idempotent; the first status stays. A family builds on
 * it (the ulfm family's invalidate); the core gives it no meaning. */
void ftc_group_stop(ftc_group_t *g, int status);

/* ---- per-family group state ---------------------------------------------
 *
 * A family may keep state per group, keyed by its algorithm id, freed
 * with free_fn when the group is destroyed. */
struct ftc_group_ext {
    struct ftc_group_ext *next;
    uint32_t algo;
    void *data;
    void (*free_fn)(void *data);
};
/* The state algo keeps on g, or NULL. */
void *ftc_group_ext_get(const ftc_group_t *g, uint32_t algo);
/* Keep data for algo on g (replacing none: FTC_EINVAL if there is some);
 * FTC_ENOMEM. */
int ftc_group_ext_set(ftc_group_t *g, uint32_t algo, void *data,
                      void (*free_fn)(void *data));

#pragma GCC visibility pop

#endif
