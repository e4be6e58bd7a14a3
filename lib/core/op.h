/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An operation: one in-flight collective at this process, its table of
 * hooks, its lifecycle (set-up, registration, completion, lingering,
 * freeing) and its memory. Nothing here is visible to embedders or
 * backends.
 */
#ifndef FTC_CORE_OP_H
#define FTC_CORE_OP_H

#include <string.h>

#include "core/group.h"

#pragma GCC visibility push(hidden)

/* Operation memory is carved in multiples of this (core/op_mem.c). */
#define FTC_MEM_ALIGN _Alignof(max_align_t)

static inline size_t ftc_mem_round(size_t n)
{
    return (n + FTC_MEM_ALIGN - 1) & ~(size_t)(FTC_MEM_ALIGN - 1);
}

/* ---- operations (one in-flight collective at this process) ---------- */

typedef struct ftc_cop_vtable {
    /* Whether a message for this operation (its algorithm and signature
     * already matched) has a kind and family flags of its family: else it
     * is dropped and counted (dropped_badmsg), never given to on_msg. */
    bool (*msg_valid)(const ftc_wire_header_t *hdr);
    /* A message for this operation, already decoded, checked against the
     * operation's signature and by msg_valid. grank is the sender's group
     * rank. */
    void (*on_msg)(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                   const uint8_t *payload, uint32_t grank);
    /* A group member was declared failed. */
    void (*on_peer_failed)(ftc_cop_t *op, uint32_t grank);
    /* A send this operation asked to hear about has completed. */
    void (*on_send_done)(ftc_cop_t *op);
    /* A send made with ftc_cop_send_timed has left (the transport
     * completed it) for group rank grank: a timeout on its answer starts
     * now, not when the send was issued (it may have waited behind
     * others, or behind receives). Optional. */
    void (*on_sent)(ftc_cop_t *op, uint32_t grank);
    /* A keepalive exchange with a member carried its progress word for
     * this operation (what progress_word returns there). The word means
     * what the family says: the corrected allreduce sends its root
     * attempt, and a member behind moves forward on it. */
    void (*on_peer_progress)(ftc_cop_t *op, uint32_t grank, uint32_t word);
    /* A member probed us about this operation: it is waiting on us. A
     * family that holds what the member waits for may send it again (the
     * corrected bcast answers with a copy, so a process the correction
     * missed is not stranded while the root lives). */
    void (*on_probe)(ftc_cop_t *op, uint32_t grank);
    /* An opaque word of where this operation is here, carried by the
     * keepalives about it (NULL: 0). */
    uint32_t (*progress_word)(const ftc_cop_t *op);
    /* The operation's own timer (ftc_cop_timer_arm) expired. */
    void (*on_timer)(ftc_cop_t *op);
    void (*destroy)(ftc_cop_t *op);
    /* The operation goes on when its group is stopped (ftc_group_stop):
     * the ulfm family's agreement, which is how members get past it. */
    bool survives_stop;
} ftc_cop_vtable_t;

struct ftc_cop {
    const ftc_cop_vtable_t *vt;
    ftc_group_t *group;
    uint64_t seq;
    ftc_coll_t coll;
    ftc_coll_args_t args;   /* sendbuf is not used after init */
    uint32_t signature;
    /* args' built-in reduction kernel (NULL for FTC_USER; a
     * broadcast reduces nothing, and its signature has no operator),
     * chosen once with the signature (ftc_cop_reduce). */
    ftc_reduce_kernel_fn reduce_kernel;
    /* Family flags every message of the operation carries
     * (ftc_cop_header), for what the family says about all of them. */
    uint16_t wire_flags;
    size_t nbytes;          /* count * element size */
    /* The group's signature memo generation it was set up under
     * (ftc_cop_template). */
    uint32_t sig_gen;

    /* From here to mem_next: the state of one run, which
     * ftc_cop_restart clears when a template is taken again. */

    bool delivered;         /* completion queued (or already called) */
    bool callback_done;     /* deliver callback has returned */
    bool finished;          /* no duties left: free once callback_done */
    bool queued;            /* on the context's completion queue */
    bool cont_wanted;       /* wants on_send_done on the next turn */
    uint32_t timed_sends;   /* ftc_cop_send_timed sends not left yet: they
                               pin the op until on_sent */
    /* Delivered, but kept to answer peers that are behind (a stranded
     * bcast receiver's probe, a late allreduce round) until retire_at
     * collectives of the group have delivered here. */
    bool lingering;
    bool in_linger;          /* on the group's lingerers' list */
    bool on_reap;            /* on the context's list to free */
    uint64_t retire_at;
    /* args.timeout_ns after start (timeout.at; 0: none, or no longer
     * relevant: delivered or finished), a node of the context's heap of
     * operation deadlines (core/timeout.c). */
    ftc_timer_node_t timeout;
    /* ftc_cop_timer_arm's deadline (timer.at; 0: none), a node of the
     * context's heap of timers, or of its list of due ones while a timer
     * turn fires them (core/timer.c). */
    ftc_timer_node_t timer;
    bool timer_in_heap;

    ftc_completion_t comp;
    uint32_t *comp_failed;  /* storage behind comp.failed */

    ftc_cop_t *next, *prev;  /* group's list of live operations */
    ftc_cop_t *next_done;    /* context's completion queue */
    ftc_cop_t *next_reap;    /* context's list of operations to free */
    ftc_cop_t *next_cont;    /* context's continuation list */
    /* The group's lingerers, oldest first: they retire in this order,
     * and none is freed before it retired. */
    ftc_cop_t *next_linger;

    /* The operation's buffers are carved from space allocated with it
     * (ftc_cop_alloc); what does not fit goes to chunks freed with it. */
    uint8_t *mem_next, *mem_end;
    struct ftc_mem_chunk *mem_chunks;
    size_t mem_block;        /* bytes of the block the op lives in */
};

/* ftc_wire_signature of in[0..6] (collective, algorithm, root, f,
 * dtype, op, variant) and count, remembered as g's last with the value's
 * size and the reduction kernel (core/op.c). */
uint32_t ftc_group_signature_miss(ftc_group_t *g, const uint32_t in[7],
                                  uint64_t count);

/* count times the element size of args, for the space of an operation
 * about to be created: the group's signature memo has it when the count
 * and datatype are its last operation's, as in a stream of like calls. */
static inline size_t ftc_cop_value_bytes(const ftc_group_t *g,
                                         const ftc_coll_args_t *args)
{
    if (g->sig_memo.valid && g->sig_memo.count == args->count
        && g->sig_memo.in[4] == (uint32_t)args->dtype)
        return g->sig_memo.nbytes;
    return (size_t)args->count * ftc_dtype_size(args->dtype);
}

/* Common op set-up for ftc_init_*: the arguments and the signature,
 * which covers the generic arguments and variant, a digest of whatever
 * else the members must agree on (the family's parameters). args.params
 * is left NULL: a family that reads its parameters later keeps a copy
 * and points it there. Inline, with the group's signature memo (a stream
 * of calls with the same arguments, the common case, pays eight
 * comparisons instead of the hash's eight mixing rounds): every
 * operation of every family runs it once, and as a call its prologue,
 * epilogue and argument passing were a fifth of its cost. */
/* The inputs of an operation's signature that the group's memo keeps
 * (besides the count): one definition for the set-up and a template's
 * test, so that both compare the same things. */
static inline void ftc_cop_sig_inputs(const ftc_coll_args_t *args,
                                      ftc_coll_t coll, uint32_t variant,
                                      uint32_t in[7])
{
    in[0] = (uint32_t)coll;
    in[1] = (uint32_t)args->algo;
    in[2] = args->root;
    in[3] = args->f;
    in[4] = (uint32_t)args->dtype;
    in[5] = coll == FTC_COLL_BCAST ? 0 : (uint32_t)args->op;
    in[6] = variant ^ (args->checked ? 1u << 30 : 0)
            ^ (args->uniform ? 1u << 29 : 0);
}

/* Whether g's signature memo holds exactly these inputs and count. */
static inline bool ftc_cop_sig_memo_hit(const ftc_group_t *g,
                                        const uint32_t in[7], uint64_t count)
{
    const uint32_t *m = g->sig_memo.in;
    /* Field by field: a memcmp call of 28 bytes cost more than these. */
    return g->sig_memo.valid && g->sig_memo.count == count && m[0] == in[0]
           && m[1] == in[1] && m[2] == in[2] && m[3] == in[3]
           && m[4] == in[4] && m[5] == in[5] && m[6] == in[6];
}

/* The call's own fields of op: sequence number, arguments, completion
 * (ftc_cop_setup, and ftc_cop_restart for a template taken again). */
static inline void ftc_cop_set_call(ftc_group_t *g, ftc_cop_t *op,
                                    const ftc_coll_args_t *args)
{
    op->args = *args;
    op->args.sendbuf = NULL;
    /* The caller's struct is not ours to keep: a family that reads its
     * parameters later points this at its own copy. */
    op->args.params = NULL;
    op->seq = g->next_seq;
    op->comp.status = FTC_OK;
    op->comp.recvbuf = args->recvbuf;
    op->comp.stats.root = args->root;
}

static inline int ftc_cop_setup(ftc_group_t *g, const ftc_coll_args_t *args,
                                ftc_coll_t coll, ftc_cop_t *op,
                                const ftc_cop_vtable_t *vt, uint32_t variant)
{
    op->vt = vt;
    op->group = g;
    op->coll = coll;
    ftc_cop_set_call(g, op, args);
    uint32_t in[7];
    ftc_cop_sig_inputs(args, coll, variant, in);
    if (ftc_cop_sig_memo_hit(g, in, args->count))
        op->signature = g->sig_memo.signature;
    else
        op->signature = ftc_group_signature_miss(g, in, args->count);
    /* (the count and datatype are in what the memo compares) */
    op->nbytes = g->sig_memo.nbytes;
    op->sig_gen = g->sig_memo.gen;
    op->reduce_kernel = g->sig_memo.kernel;
    return FTC_OK;
}
/* ftc_cop_register (take the group's next sequence number, link op
 * first in the group's list) is inline, at the end of this file. */

/*
 * A steady stream's operation (docs/latency.md, "A steady stream's
 * path"): a family whose operation's shape (its peers, its buffers'
 * layout, the fields its create computes from the group and the
 * arguments) depends on nothing but the group, its signature and its
 * variant may free it with ftc_cop_delete_template. The group's next
 * operation of the same family, set up under the same signature memo
 * generation (so with the very same signature inputs: any miss bumps
 * it), takes the block back with ftc_cop_template and ftc_cop_restart,
 * which clear only the state of one run (the fields from `delivered` to
 * `mem_next`) and set the call's own (sequence number, buffers,
 * callback); the family then resets its own per-run fields and starts.
 */
/* The block of g's last operation if it was freed as a template of vt
 * under the current signature generation, and (coll, args, variant)
 * repeat that signature's inputs exactly; else NULL (set up anew). */
static inline ftc_cop_t *ftc_cop_template_of(const ftc_group_t *g,
                                             const ftc_cop_vtable_t *vt,
                                             ftc_coll_t coll)
{
    const ftc_cop_t *t = g->spare_op;
    if (t == NULL || !g->spare_is_template || t->vt != vt
        || t->sig_gen != g->sig_memo.gen || t->coll != coll)
        return NULL;
    return (ftc_cop_t *)t;
}
/* Whether (coll, args, variant) repeat the inputs of the signature that
 * a template of ftc_cop_template_of was set up under. Apart from that
 * function for a family whose variant is cheaper to check against the
 * template's own parameters than to compute (the corrected allreduce). */
static inline bool ftc_cop_template_fits(const ftc_group_t *g,
                                         const ftc_coll_args_t *args,
                                         ftc_coll_t coll, uint32_t variant)
{
    uint32_t in[7];
    ftc_cop_sig_inputs(args, coll, variant, in);
    return ftc_cop_sig_memo_hit(g, in, args->count);
}
static inline ftc_cop_t *ftc_cop_template(const ftc_group_t *g,
                                          const ftc_cop_vtable_t *vt,
                                          const ftc_coll_args_t *args,
                                          ftc_coll_t coll, uint32_t variant)
{
    ftc_cop_t *t = ftc_cop_template_of(g, vt, coll);
    if (t == NULL || !ftc_cop_template_fits(g, args, coll, variant))
        return NULL;
    return t;
}
/* Take op (what ftc_cop_template returned) as the group's next
 * operation: its run's state cleared, the call's sequence number,
 * arguments and completion set, its space carved again from the start
 * (the family carves the same sizes in the same order). */
static inline void ftc_cop_restart(ftc_group_t *g, ftc_cop_t *op,
                                   const ftc_coll_args_t *args, size_t size)
{
    g->spare_op = NULL;
    g->spare_is_template = false;
    g->templates_taken++;
    memset(&op->delivered, 0,
           offsetof(ftc_cop_t, mem_next) - offsetof(ftc_cop_t, delivered));
    ftc_cop_set_call(g, op, args);
    op->mem_next = (uint8_t *)op + ftc_mem_round(size);
    op->mem_end = (uint8_t *)op + op->mem_block;
}

/* inout = inout OP in, element-wise over op's count, with op's operator
 * and datatype (checked when it was created). The built-in kernel
 * chosen with its signature is called directly; only FTC_USER goes
 * through ftc_reduce_local. */
static inline void ftc_cop_reduce(const ftc_cop_t *op, void *inout,
                                  const void *in)
{
    if (op->reduce_kernel != NULL)
        op->reduce_kernel(inout, in, op->args.count);
    else
        (void)ftc_reduce_local(inout, in, op->args.count, op->args.dtype,
                               op->args.op, op->args.user_fn,
                               op->args.user_arg);
}

/* ftc_cop_started (op just started: end it if a peer already told us it
 * ended; arm its timeout, args.timeout_ns) and ftc_cop_told_ended (the
 * usage error a peer told us op ended with before it started here,
 * FTC_MSG_ENDED, or FTC_OK) are inline, at the end of this file; an
 * operation that could deliver while it is being created (its inputs
 * all replayed) asks told_ended first: started() would end it with that
 * status, and a result must not overtake it. */
int ftc_cop_told_ended_find(const ftc_cop_t *op);

/* Replay messages that arrived before op was started (core/dispatch.c). */
void ftc_cop_replay_held(ftc_cop_t *op);
/* Inline: every operation asks, and mostly nothing is held. */
static inline void ftc_cop_replay_pending(ftc_cop_t *op)
{
    if (op->group->pending != NULL)
        ftc_cop_replay_held(op);
}

/* ftc_cop_complete (queue op's completion; deliver runs when the
 * current entry point ends) is inline, at the end of this file. */

/* ftc_cop_finish (the operation has no duties left; it may still await
 * its callback) is inline, at the end of this file. */

/* How many later deliveries on its group a delivered operation lingers. */
#define FTC_LINGER_OPS 64
/* ftc_cop_linger (keep op, delivered, to serve peers that are behind;
 * see lingering) is inline, at the end of this file. */

/* ---- per-operation timers (core/timer.c) ------------------------------
 *
 * One deadline per operation, multiplexed on the context's one transport
 * timer: on_timer runs once the transport's clock reaches at (absolute,
 * the transport's now()). Arming again moves it; a finished operation's
 * timer never fires. The core stays sans-I/O: it only asks the transport
 * for a wake-up. */
void ftc_cop_timer_arm(ftc_cop_t *op, uint64_t at);
void ftc_cop_timer_cancel_armed(ftc_cop_t *op);
/* Inline: every operation cancels as it finishes, and most never armed
 * one. */
static inline void ftc_cop_timer_cancel(ftc_cop_t *op)
{
    if (op->timer.at != 0)
        ftc_cop_timer_cancel_armed(op);
}
/* The transport's clock, for deadlines. */
uint64_t ftc_cop_now(const ftc_cop_t *op);

/* ---- operation timeouts (core/timeout.c) -------------------------------
 *
 * args.timeout_ns bounds an operation from its start to its delivery.
 * The deadlines of the operations still waiting are kept in a heap, so
 * that settling finds the earliest without looking at the ones that
 * delivered (64 linger per group). */
/* op just started: its deadline, if it has a timeout. */
void ftc_cop_timeout_start(ftc_cop_t *op);
void ftc_cop_timeout_cancel_armed(ftc_cop_t *op);
/* Inline: every operation cancels as it delivers, finishes or is freed,
 * and most never had a timeout. */
static inline void ftc_cop_timeout_cancel(ftc_cop_t *op)
{
    if (op->timeout.at != 0)
        ftc_cop_timeout_cancel_armed(op);
}

/* ---- seeded randomness (core/rng.c) -----------------------------------
 *
 * A SplitMix64 stream per context, seeded from ftc_config_t.seed and the
 * rank, so a run is reproducible from its seed and ranks do not draw the
 * same numbers. */
uint64_t ftc_cop_random(ftc_cop_t *op);
/* Uniform in [0, bound) (bound > 0). */
uint64_t ftc_cop_random_below(ftc_cop_t *op, uint64_t bound);

/* Record failed group ranks on the completion (deduplicated, sorted). */
int ftc_cop_set_failed(ftc_cop_t *op, const uint32_t *granks, uint32_t n);

/* End op with a usage error that every member must see (FTC_EMISMATCH,
 * FTC_EOVERFLOW, FTC_EPEER_INVALID), and tell every member at once
 * (FTC_MSG_ENDED), so nobody waits for a probe to learn it. */
void ftc_cop_abort(ftc_cop_t *op, int status);
/* The same; tell says whether to tell the members (not when they told
 * us). */
void ftc_cop_abort_ex(ftc_cop_t *op, int status, bool tell);

/* Pinned: a continuation or a completion still refers to op. */
static inline bool ftc_cop_pinned(const ftc_cop_t *op)
{
    return op->cont_wanted || op->queued || op->timed_sends > 0;
}
/* Queue op for freeing if it became free-able (called where one of the
 * conditions may just have become true). */
static inline void ftc_cop_reap(ftc_cop_t *op)
{
    ftc_context_t *ctx = op->group->ctx;
    op->on_reap = true;
    op->next_reap = ctx->reap_head;
    ctx->reap_head = op;
}
/* Inline: asked where one of the conditions may just have become true,
 * several times in an operation's life, and mostly the answer is no. */
static inline void ftc_cop_maybe_reap(ftc_cop_t *op)
{
    if (op->on_reap || !op->finished || !op->callback_done || ftc_cop_pinned(op)
        || op->in_linger)
        return;
    ftc_cop_reap(op);
}
/* Unlink op from its group and destroy it. */
void ftc_cop_unlink_and_free(ftc_cop_t *op);

/* As ftc_cop_delete, leaving op in the group's spare block as a
 * template for the stream's next like operation (ftc_cop_template): for
 * a family whose shape is the group's, its signature's and its
 * variant's only. */
void ftc_cop_delete_template(ftc_cop_t *op);

/* Frees what ftc_cop_alloc and ftc_cop_set_failed took (not op itself). */
void ftc_cop_free_storage(ftc_cop_t *op);
/* ftc_cop_free_storage, then op's block (kept by its group for the next
 * operation, or freed). */
void ftc_cop_delete(ftc_cop_t *op);

/*
 * An operation's memory (core/op_mem.c). A module allocates its operation
 * with ftc_cop_new(g, sizeof(its struct), space): one block, the struct
 * zeroed, then `space` bytes from which ftc_cop_alloc carves the
 * operation's buffers (input, partial values, peer lists, the value).
 * Carved memory is never freed on its own: all of it goes with the
 * operation (ftc_cop_delete). When the space is used up (a later round, a
 * long failure list, an estimate too small) ftc_cop_alloc takes a new
 * chunk from malloc, also freed with the operation.
 *
 * Why: an operation used to make a dozen small allocations, and at a
 * stream of small collectives malloc and free were a quarter of the
 * core's instructions (glibc's calloc bypasses its thread cache, whose
 * bins hold only 7 blocks, and an allreduce is too big for it). Now it is
 * one block, which the group keeps for the next operation.
 */
void *ftc_cop_new(ftc_group_t *g, size_t size, size_t space);
/* The same, zeroing only the struct's first `zeroed` bytes (at least the
 * ftc_cop_t): for a family whose struct ends in parts that their own
 * start clears before anything reads them (the corrected allreduce's
 * exchange, reduce and broadcast parts: zeroing them here too was half
 * the memset of every operation). */
void *ftc_cop_new_prefix(ftc_group_t *g, size_t size, size_t zeroed,
                         size_t space);
void *ftc_cop_alloc_chunk(ftc_cop_t *op, size_t n);
/* n bytes (at least 1), aligned for any type; NULL when out of memory. */
static inline void *ftc_cop_alloc(ftc_cop_t *op, size_t n)
{
    size_t room = (size_t)(op->mem_end - op->mem_next);
    if (n <= room) {
        size_t need = ftc_mem_round(n > 0 ? n : 1);
        if (need <= room) {
            void *p = op->mem_next;
            op->mem_next += need;
            return p;
        }
    }
    return ftc_cop_alloc_chunk(op, n);
}
void *ftc_cop_zalloc_big(ftc_cop_t *op, size_t n);
/* ftc_cop_alloc, zeroed. Inline, and a short one (the families'
 * per-peer states are a few bytes, for which a memset call cost three
 * times the work) zeroed as one 16-byte store: an allocation owns its
 * size rounded up to FTC_MEM_ALIGN, 16 or more on the hosts that take
 * this path. */
static inline void *ftc_cop_zalloc(ftc_cop_t *op, size_t n)
{
    if (n > 16 || FTC_MEM_ALIGN < 16)
        return ftc_cop_zalloc_big(op, n);
    uint8_t *p = ftc_cop_alloc(op, n);
    if (p != NULL)
        memset(p, 0, 16);
    return p;
}

/* ---- an operation's start and completion, inline ----------------------
 *
 * Why inline: every operation of a steady stream is registered, started
 * and completed once, and each of these was a call that did a few loads
 * and stores, with the common answers (no timeout, no peer told us it
 * ended) tested first (docs/latency.md, "Eighth round"). */

/* Take the group's next sequence number; op goes first in its list. */
static inline void ftc_cop_register(ftc_cop_t *op)
{
    ftc_group_t *g = op->group;
    g->next_seq++;
    op->next = g->ops;
    op->prev = NULL;
    if (g->ops != NULL)
        g->ops->prev = op;
    g->ops = op;
}

static inline int ftc_cop_told_ended(const ftc_cop_t *op)
{
    if (op->group->ntold_ended == 0)
        return FTC_OK;      /* nobody told the group of any ended call */
    return ftc_cop_told_ended_find(op);
}

static inline void ftc_cop_started(ftc_cop_t *op)
{
    if (op->args.timeout_ns > 0)
        ftc_cop_timeout_start(op);
    int told = ftc_cop_told_ended(op);
    if (told != FTC_OK)
        ftc_cop_abort_ex(op, told, false);
}

static inline void ftc_cop_complete(ftc_cop_t *op, int status)
{
    if (op->delivered)
        return;
    op->delivered = true;
    ftc_cop_timeout_cancel(op);     /* a timeout bounds the delivery */
    op->comp.status = status;
    ftc_context_t *ctx = op->group->ctx;
    op->queued = true;
    op->next_done = NULL;
    if (ctx->done_tail != NULL)
        ctx->done_tail->next_done = op;
    else
        ctx->done_head = op;
    ctx->done_tail = op;
}

static inline void ftc_cop_finish(ftc_cop_t *op)
{
    op->finished = true;
    ftc_cop_timer_cancel(op);
    ftc_cop_timeout_cancel(op);
    ftc_cop_maybe_reap(op);
}

static inline void ftc_cop_linger(ftc_cop_t *op)
{
    if (op->lingering)
        return;
    ftc_group_t *g = op->group;
    op->lingering = true;
    op->retire_at = g->colls_done + FTC_LINGER_OPS;
    /* retire_at only grows: the list stays in retirement order. */
    op->in_linger = true;
    op->next_linger = NULL;
    if (g->linger_tail != NULL)
        g->linger_tail->next_linger = op;
    else
        g->linger_head = op;
    g->linger_tail = op;
}

#pragma GCC visibility pop

#endif
