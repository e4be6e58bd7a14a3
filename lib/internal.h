/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core internals shared by the context, the failure monitor and the
 * collectives. Nothing here is visible to embedders or backends.
 */
#ifndef FTC_LIB_INTERNAL_H
#define FTC_LIB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"
#include "wire.h"

typedef struct ftc_cop ftc_cop_t;

/* ---- operations (one in-flight collective at this process) ---------- */

typedef struct ftc_op_vtable {
    /* A message for this operation, already decoded and checked against
     * the operation's signature. grank is the sender's group rank. */
    void (*on_msg)(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                   const uint8_t *payload, uint32_t grank);
    /* A group member was declared failed. */
    void (*on_peer_failed)(ftc_cop_t *op, uint32_t grank);
    /* A send this operation asked to hear about has completed. */
    void (*on_send_done)(ftc_cop_t *op);
    /* A keepalive exchange with a member carried this operation's round:
     * the member is in `round` (allreduce moves forward on it). */
    void (*on_peer_round)(ftc_cop_t *op, uint32_t grank, uint32_t round);
    /* A member probed us about this operation: it is waiting on us. A
     * broadcast that holds the value answers with a copy, so a process the
     * correction missed is not stranded while the root lives. */
    void (*on_probe)(ftc_cop_t *op, uint32_t grank);
    /* Round this process is in (allreduce), for op-aware keepalives. */
    uint32_t (*current_round)(const ftc_cop_t *op);
    void (*destroy)(ftc_cop_t *op);
} ftc_op_vtable_t;

struct ftc_cop {
    const ftc_op_vtable_t *vt;
    ftc_group_t *group;
    uint64_t seq;
    ftc_coll_t coll;
    ftc_coll_args_t args;   /* sendbuf is not used after init */
    uint32_t signature;
    size_t nbytes;          /* count * element size */

    bool delivered;         /* completion queued (or already called) */
    bool callback_done;     /* deliver callback has returned */
    bool finished;          /* no duties left: free once callback_done */
    bool queued;            /* on the context's completion queue */
    bool cont_wanted;       /* wants on_send_done on the next turn */
    /* Delivered, but kept to answer peers that are behind (a stranded
     * bcast receiver's probe, a late allreduce round) until retire_at
     * collectives of the group have delivered here. */
    bool lingering;
    bool in_linger;          /* on the group's lingerers' list */
    bool on_reap;            /* on the context's list to free */
    uint64_t retire_at;
    uint64_t deadline;       /* args.timeout_ns after start; 0: none */

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
     * (ftc_op_alloc); what does not fit goes to chunks freed with it. */
    uint8_t *mem_next, *mem_end;
    struct ftc_mem_chunk *mem_chunks;
    size_t mem_block;        /* bytes of the block the op lives in */
};

/* ---- groups ---------------------------------------------------------- */

typedef struct ftc_pending_msg {
    struct ftc_pending_msg *next;
    ftc_wire_header_t hdr;
    uint32_t src;           /* world rank */
    uint8_t payload[];      /* hdr.payload_len bytes */
} ftc_pending_msg_t;

struct ftc_group {
    ftc_context_t *ctx;
    uint32_t id, epoch, n, me;
    /* group rank -> world rank; all NULL for the identity group (the
     * whole world in order), which keeps a context O(1) in the world size
     * so a simulator can host a million of them. */
    uint32_t *members;
    uint32_t *by_world;         /* sorted world ranks ... */
    uint32_t *by_world_grank;   /* ... and their group ranks */
    uint64_t next_seq;
    ftc_cop_t *ops;              /* live operations, any state */
    ftc_pending_msg_t *pending; /* messages for operations not started */
    uint64_t colls_done;        /* deliveries here: retires lingerers */
    ftc_cop_t *linger_head, *linger_tail;
    /* The block of the last operation freed, for the next one: a stream
     * of collectives then costs no malloc at all. */
    void *spare_op;
    size_t spare_op_size;
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
    ftc_group_t *next;
};

/* ---- the failure monitor's per-peer watch ---------------------------- */

typedef struct ftc_watch {
    uint32_t peer;          /* world rank */
    uint32_t refs;          /* operations waiting on peer */
    uint64_t deadline;      /* next probe, or the probe's expiry */
    bool probing;
    /* The operation that first asked, for op-aware keepalives. */
    uint32_t group_id, epoch;
    uint64_t seq;
} ftc_watch_t;

struct ftc_context {
    uint32_t rank, size;
    ftc_transport_ops_t ops;
    void *tp;
    ftc_config_t cfg;

    /* Known-failed world ranks, sorted: O(failures), not O(world). */
    uint32_t *failed;
    uint32_t nfailed, capfailed;
    uint32_t *fail_queue;       /* declared, not yet told to operations */
    uint32_t fail_queue_len, fail_queue_cap;
    bool excluded;

    ftc_counters_t counters;
    /* Segment queues and partial messages (segment.c); NULL until a
     * large message is sent or received. */
    struct ftc_seg_state *seg;
    ftc_group_t *groups;
    ftc_pending_msg_t *orphans; /* messages for groups not created yet */
    size_t orphan_bytes;        /* held there, bounded by FTC_ORPHAN_MAX_BYTES */

    ftc_watch_t *watches;
    uint32_t nwatches, capwatches;

    ftc_cop_t *done_head, *done_tail;
    ftc_cop_t *cont_head;
    /* Operations that became free-able (finished, callback run, not
     * pinned): settle frees these, and never walks the groups for them
     * (a group keeps 64 lingering allreduces). */
    ftc_cop_t *reap_head;
    bool cont_timer;            /* a continuation waits for a timer turn */
    uint32_t timed_ops;         /* live operations with a deadline */
    bool settling;
    bool timer_armed;
    uint64_t timer_deadline;
};

/* ---- context services (context.c) ----------------------------------- */

/* Send a message of this operation to group rank dest. payload may be
 * split in up to three parts that are concatenated. When notify is set the
 * operation's on_send_done runs after the send completes (on a later
 * turn). Returns FTC_OK or a negative error (dest then counts as failed). */
typedef struct ftc_iov {
    const void *base;
    size_t len;
} ftc_iov_t;

int ftc_op_send(ftc_cop_t *op, uint32_t dest, ftc_wire_header_t *hdr,
                const ftc_iov_t *iov, int iovcnt, bool notify);

/* Fill the fields every message of op carries. */
void ftc_op_header(const ftc_cop_t *op, ftc_wire_header_t *hdr,
                   ftc_msg_kind_t kind, uint32_t round);

/* Queue op's completion; deliver runs when the current entry point ends. */
void ftc_op_complete(ftc_cop_t *op, int status);

/* The operation has no duties left (it may still await its callback). */
void ftc_op_finish(ftc_cop_t *op);

/* Messages for a group this process has not created (yet) are kept for
 * it, up to this many bytes in all; beyond, they are dropped (counted as
 * dropped_stale). A peer creates a group moments before us and sends at
 * once: that needs little. Without the bound, anyone who can send to us
 * (the job token is in clear when auth is off) could grow us without end
 * with messages for groups that never exist (docs/security.md). */
#define FTC_ORPHAN_MAX_BYTES ((size_t)64 << 20)

/* How many later deliveries on its group a delivered operation lingers. */
#define FTC_LINGER_OPS 64
/* Keep op (delivered) to serve peers that are behind; see lingering. */
void ftc_op_linger(ftc_cop_t *op);

/* The group declared this process failed: end every operation with
 * FTC_EEXCLUDED and go silent, as the crash we are taken for. */
void ftc_ctx_become_excluded(ftc_context_t *ctx);

/* Declare world rank r failed (final). Operations hear of it when the
 * current entry point settles. */
void ftc_ctx_declare_failed(ftc_context_t *ctx, uint32_t r);

bool ftc_group_member_failed(const ftc_group_t *g, uint32_t grank);
/* -1 if world rank w is not a member. */
int64_t ftc_group_rank_of(const ftc_group_t *g, uint32_t w);

/* After ftc_init_*: deliver must not run inside init, so a completion or
 * failure queued there only arms an immediate timer. */
void ftc_ctx_after_init(ftc_context_t *ctx);

/* Replay messages that arrived before op was started. */
void ftc_op_replay_pending(ftc_cop_t *op);

/* Common argument checks and op set-up for ftc_init_*. */
int ftc_op_setup(ftc_group_t *g, const ftc_coll_args_t *args, ftc_coll_t coll,
                 ftc_cop_t *op, const ftc_op_vtable_t *vt);
void ftc_op_register(ftc_cop_t *op);
/* Frees what ftc_op_alloc and ftc_op_set_failed took (not op itself). */
void ftc_op_free_storage(ftc_cop_t *op);
/* ftc_op_free_storage, then op's block (kept by its group for the next
 * operation, or freed). */
void ftc_op_delete(ftc_cop_t *op);

/*
 * An operation's memory (collective.c). A module allocates its operation
 * with ftc_op_new(g, sizeof(its struct), space): one block, the struct
 * zeroed, then `space` bytes from which ftc_op_alloc carves the
 * operation's buffers (input, partial values, peer lists, the value).
 * Carved memory is never freed on its own: all of it goes with the
 * operation (ftc_op_delete). When the space is used up (a later round, a
 * long failure list, an estimate too small) ftc_op_alloc takes a new
 * chunk from malloc, also freed with the operation.
 *
 * Why: an operation used to make a dozen small allocations, and at a
 * stream of small collectives malloc and free were a quarter of the
 * core's instructions (glibc's calloc bypasses its thread cache, whose
 * bins hold only 7 blocks, and an allreduce is too big for it). Now it is
 * one block, which the group keeps for the next operation.
 */
#define FTC_MEM_ALIGN _Alignof(max_align_t)
static inline size_t ftc_mem_round(size_t n)
{
    return (n + FTC_MEM_ALIGN - 1) & ~(size_t)(FTC_MEM_ALIGN - 1);
}
void *ftc_op_new(ftc_group_t *g, size_t size, size_t space);
void *ftc_op_alloc_chunk(ftc_cop_t *op, size_t n);
/* n bytes (at least 1), aligned for any type; NULL when out of memory. */
static inline void *ftc_op_alloc(ftc_cop_t *op, size_t n)
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
    return ftc_op_alloc_chunk(op, n);
}
void *ftc_op_zalloc(ftc_cop_t *op, size_t n);
/* How many children a rank can have in tree over n ranks: exact bounds
 * for the binomial, k-ary and I(f) trees, a guess for the others (an
 * estimate of space only: see above). */
uint32_t ftc_tree_children_bound(const ftc_tree_t *tree, uint32_t n);
/* What space estimates assume: a few children, at most the bound. */
uint32_t ftc_tree_children_guess(const ftc_tree_t *tree, uint32_t n);
/* Rank r's children in tree, in op's memory; *count of them. NULL when
 * out of memory. */
uint32_t *ftc_op_tree_children(ftc_cop_t *op, const ftc_tree_t *tree,
                               uint32_t n, uint32_t r, uint32_t *count);

/* Record failed group ranks on the completion (deduplicated, sorted). */
int ftc_op_set_failed(ftc_cop_t *op, const uint32_t *granks, uint32_t n);

/* ---- failure monitor (monitor.c) ------------------------------------- */

/* An operation starts / stops waiting on world rank peer. */
void ftc_monitor_acquire(ftc_context_t *ctx, uint32_t peer, const ftc_cop_t *op);
void ftc_monitor_release(ftc_context_t *ctx, uint32_t peer);
/* Any message from peer shows it is alive. */
void ftc_monitor_heard(ftc_context_t *ctx, uint32_t peer);
/* Probe or declare expired watches. */
void ftc_monitor_expire(ftc_context_t *ctx, uint64_t now);
uint64_t ftc_monitor_next_deadline(const ftc_context_t *ctx);
void ftc_monitor_forget(ftc_context_t *ctx, uint32_t peer);

/* Control messages (context.c) */
int ftc_ctx_send_control(ftc_context_t *ctx, uint32_t dest,
                         ftc_msg_kind_t kind, const ftc_watch_t *about,
                         uint32_t round);

/* A keepalive probe about op (NULL: none named), carrying what op is
 * here (collective, algorithm, signature) for the peer to compare. */
int ftc_ctx_send_probe(ftc_context_t *ctx, uint32_t dest,
                       const ftc_watch_t *about, uint32_t round,
                       const ftc_cop_t *op);

/* End op with a usage error that every member must see (FTC_EMISMATCH,
 * FTC_EOVERFLOW, FTC_EPEER_INVALID), and tell every member at once
 * (FTC_MSG_ENDED), so nobody waits for a probe to learn it. */
void ftc_op_abort(ftc_cop_t *op, int status);

/* A call on g was refused (status): its operation still takes its place
 * in the group's sequence, and every member learns that it ended. */
void ftc_group_refused(ftc_group_t *g, int status);

/* op just started: end it if a peer already told us it ended; arm its
 * timeout (args.timeout_ns). */
void ftc_op_started(ftc_cop_t *op);

/* ---- collective helpers (collective.c) -------------------------------- */

static inline uint32_t ftc_logical(uint32_t grank, uint32_t root, uint32_t n)
{
    return (uint32_t)(((uint64_t)grank + n - root) % n);
}

static inline uint32_t ftc_physical(uint32_t logical, uint32_t root, uint32_t n)
{
    return (uint32_t)(((uint64_t)logical + root) % n);
}

/* Constructors, one per algorithm module. */
int ftc_reduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                         ftc_cop_t **out);
int ftc_bcast_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                        ftc_cop_t **out);
int ftc_allreduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                            ftc_cop_t **out);
int ftc_tree_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                       ftc_coll_t coll, ftc_cop_t **out);

/* Checked mode (checked.c): start the operation with start, and beside it
 * the allreduce that compares the members' signatures; deliver once both
 * have. *out is the operation; the check's is started too. On error
 * nothing is left running, and g's sequence moved by what started. */
typedef int (*ftc_start_fn)(ftc_group_t *g, const ftc_coll_args_t *args,
                            ftc_coll_t coll, ftc_cop_t **out);
int ftc_checked_start(ftc_group_t *g, const ftc_coll_args_t *args,
                      ftc_coll_t coll, ftc_start_fn start, ftc_cop_t **out);

#endif
