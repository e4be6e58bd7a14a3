/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context's state: configuration, the known-failed set, the groups,
 * the failure monitor's watches, the completion and continuation queues
 * and the one transport timer. Nothing here is visible to embedders or
 * backends.
 */
#ifndef FTC_CORE_CONTEXT_H
#define FTC_CORE_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"
#include "core/bulk_pool.h"
#include "core/timer_heap.h"

/* Internal: hidden from the shared library and marked so in libftcoll.a
 * (docs/architecture.md, "Internal names"). */
#pragma GCC visibility push(hidden)

typedef struct ftc_cop ftc_cop_t;
typedef struct ftc_pending_msg ftc_pending_msg_t;
struct ftc_send_rec;

/* ---- the failure monitor's per-peer watch ---------------------------- */

/* Probe series remembered after their watch went (core/monitor.c). */
#define FTC_LAPSED_MAX 4
typedef struct ftc_lapsed {
    uint64_t series_at;
    uint32_t peer;
} ftc_lapsed_t;

typedef struct ftc_watch {
    /* The 64-bit fields first, then the 32-bit, then the flags: 80 bytes,
     * not the 96 that declaration order padded to (the simulator keeps a
     * table of them per process; docs/simulator.md, section 5). */
    /* Not probing: the next check (core/monitor.c, "Lazy silence"), at
     * the latest when the silence reaches suspect_timeout_ns. Probing:
     * the probe's expiry. */
    uint64_t deadline;
    /* Not probing: the silence counted so far starts at silent_from (the
     * latest check that found heard set). */
    uint64_t silent_from;
    /* While probing: how long the current probe waits (core/monitor.c,
     * the back-off), and when the series' first probe went out. */
    uint64_t window;
    uint64_t series_at;
    /* When the last probe went out: an answer to the only one
     * outstanding, within its first wait, is a prompt round trip
     * (core/cutoff.c, "a third process"). */
    uint64_t probe_at;
    uint64_t seq;           /* of the operation that first asked */
    uint32_t peer;          /* world rank */
    uint32_t refs;          /* operations waiting on peer */
    /* While probing: how many probes of the series went unanswered
     * before the current one. */
    uint32_t backoff;
    uint32_t probes_out;    /* probes sent to peer and not answered yet */
    /* The operation that first asked, for op-aware keepalives (with
     * seq). */
    uint32_t group_id, epoch;
    bool probing;
    /* Not probing: a message came since the last check (set without a
     * clock read, on every message). */
    bool heard;
    /* Another member claims the peer failed (core/monitor.c,
     * ftc_monitor_verify): one of refs is the claim's, and the series
     * is one probe long. */
    bool verifying;
    /* Its last waiter left inside a hold (ftc_monitor_hold): it stays, in
     * whatever silence or series it was, until a waiter takes it again
     * or the hold ends; held_keep: that waiter's release kept it. */
    bool held, held_keep;
} ftc_watch_t;

/* When this process last answered a peer's probe (core/cutoff.c). */
typedef struct ftc_probe_answer {
    uint32_t peer;          /* world rank */
    uint64_t at;            /* transport time of the answer (UINT64_MAX:
                               none yet) */
    uint64_t asked_at;      /* when we last answered a family's question
                               of the peer (ftc_cutoff_note_asked;
                               UINT64_MAX: none yet) */
    bool refuted;           /* we refuted its verdict and declared it
                               failed (core/cutoff.c) */
} ftc_probe_answer_t;

/* The peers this process has sent to (core/talked.c): world ranks + 1
 * (0: an empty slot) in an open-addressed table of 2^(32 - shift)
 * slots, at most half full; NULL until the first send. */
typedef struct ftc_talked {
    uint32_t *keys;
    uint32_t n;
    uint32_t shift;
} ftc_talked_t;

/* One outstanding send that the backend completes later (core/send.c). */
typedef struct ftc_send_link {
    struct ftc_send_link *prev, *next;
} ftc_send_link_t;

struct ftc_context {
    uint32_t rank, size;
    ftc_transport_ops_t ops;
    void *tp;
    ftc_config_t cfg;
    /* ops.cost_hints' answer (FTC_TRANSPORT_*), asked at creation. */
    uint32_t cost_hints;

    /* Known-failed world ranks, sorted: O(failures), not O(world). */
    uint32_t *failed;
    uint32_t nfailed, capfailed;
    /* Of those, the ones this process found itself (its own probe timed
     * out, its transport reported it), not learned from others: "mutual
     * suspicion" weighs these (core/dispatch.c). */
    uint32_t nfailed_observed;
    /* When this process last declared a peer failed (own or learnt), and
     * when a probe of its own was last answered within its first wait:
     * a prompt round trip after every failure we hold says we are not
     * the cut-off side (core/cutoff.c, "a third process"). */
    uint64_t last_failure_at;
    uint64_t round_trip_at;
    bool round_trip_seen;
    /* Of those, the ones this process's own keepalive timed out (no
     * transport report): a word that rests on a timeout alone may come
     * from a process cut off from the group (core/monitor.c,
     * ftc_monitor_verify). Few: a list. */
    uint32_t *timed_out;
    uint32_t ntimed_out, captimed_out;
    uint32_t *fail_queue;       /* declared, not yet told to operations */
    uint32_t fail_queue_len, fail_queue_cap;
    bool excluded;
    /* The largest payload of one wire message (core/segment.h), fixed by
     * the configuration and the transport's ops at creation: every send
     * asks. */
    size_t seg_payload_max;
    bool skip_checksum;         /* tests only: ftc_ctx_test_skip_checksum */

    ftc_counters_t counters;
    /* Segment queues and partial messages (core/segment.c); NULL until a
     * large message is sent or received. */
    struct ftc_seg_state *seg;
    ftc_group_t *groups;
    ftc_pending_msg_t *orphans; /* messages for groups not created yet */
    size_t orphan_bytes;        /* held there, bounded by FTC_ORPHAN_MAX_BYTES */

    ftc_watch_t *watches;
    uint32_t nwatches, capwatches;
    uint32_t watch_hold;        /* ftc_monitor_hold's depth */
    /* The latest check of the watches (a timer turn's clock) plus the
     * check period: a watch taken now is checked by then, with no clock
     * read of its own (core/monitor.c, "Lazy silence"). 0: no check yet. */
    uint64_t watch_next_check;

    /* Probes answered, per prober: an exclusion from a peer we answered
     * long before says the peer does not hear us (core/cutoff.c). */
    ftc_probe_answer_t *answers;
    uint32_t nanswers, capanswers;

    /* Who gets an exclusion notice (core/notice.c): the peers this
     * process talks to, and those it has told they were excluded (few:
     * a list). */
    ftc_talked_t talked;
    uint32_t *told;
    uint32_t ntold, captold;

    /* Outstanding sends, so destroy can free them: the sentinel of a
     * circular list. */
    ftc_send_link_t sends;
    /* The last send record given back: most sends are done at once
     * (FTC_SEND_INLINE), so the next one reuses it instead of a malloc
     * and a free per message. */
    struct ftc_send_rec *spare_send;
    /* Large blocks given back, for the next large value. */
    ftc_bulk_pool_t bulk;

    ftc_cop_t *done_head, *done_tail;
    ftc_cop_t *cont_head;
    /* Operations that became free-able (finished, callback run, not
     * pinned): settle frees these, and never walks the groups for them
     * (a group keeps 64 lingering allreduces). */
    ftc_cop_t *reap_head;
    bool cont_timer;            /* a continuation waits for a timer turn */
    /* The deadlines (args.timeout_ns) of the operations that have not
     * delivered (core/timeout.c); timeouts.n is how many. */
    ftc_timer_heap_t timeouts;
    uint32_t timer_ops;         /* live operations with a timer armed */
    /* Their timers (core/timer.c): the armed ones in a heap, earliest
     * first; while a timer turn fires them, the due ones taken out of it
     * in a list (through next/prev). */
    ftc_timer_heap_t timers;
    ftc_timer_node_t *timers_due;
    uint64_t rng;               /* SplitMix64 state (core/rng.c) */
    bool settling;
    bool timer_armed;
    /* Nesting depth of the entry points that time this process's own
     * work (core/monitor.c, "away"): only the outermost counts. */
    uint32_t away_depth;
    uint64_t away_ns;           /* discounted so far (tests read it) */
    /* The longest stretch without a word seen lately (a call of our
     * own, a live peer's silence after a probe), and when it ended: how
     * long the host keeps a process from reading, which peers are
     * allowed several times over (core/monitor.c). */
    uint64_t stall_ns, stall_at;
    /* Probe series whose waiters all left before the peer answered, and
     * when each began: the peer's next word still times its silence for
     * the stall record (core/monitor.c, "A lapsed series"). The newest
     * FTC_LAPSED_MAX only, in an array allocated at the first (a
     * process that never saw one, the simulator's every process, pays
     * a pointer). */
    ftc_lapsed_t *lapsed;
    uint32_t nlapsed;
    uint64_t timer_deadline;
    /* Timer turns in a row that ran without the clock (core/settle.c,
     * "at once" turns): bounded, so that deadlines are still looked at
     * while continuations keep the timer busy. */
    uint32_t quick_turns;
};

/* Messages for a group this process has not created (yet) are kept for
 * it, up to this many bytes in all; beyond, they are dropped (counted as
 * dropped_stale). A peer creates a group moments before us and sends at
 * once: that needs little. Without the bound, anyone who can send to us
 * (the job token is in clear when auth is off) could grow us without end
 * with messages for groups that never exist (docs/security.md). */
#define FTC_ORPHAN_MAX_BYTES ((size_t)64 << 20)


/* The group declared this process failed: end every operation with
 * FTC_EEXCLUDED and go silent, as the crash we are taken for. */
void ftc_ctx_become_excluded(ftc_context_t *ctx);

/* ftc_context_is_failed, without the call while nothing failed (the
 * common case, on every message). */
static inline bool ftc_ctx_is_failed(const ftc_context_t *ctx, uint32_t r)
{
    return ctx->nfailed != 0 && ftc_context_is_failed(ctx, r) != 0;
}

/* Declare world rank r failed (final). Operations hear of it when the
 * current entry point settles. */
void ftc_ctx_declare_failed(ftc_context_t *ctx, uint32_t r);
/* The same, for a failure this process observed itself. */
/* Whether this process's own keepalive timed world rank r out. */
bool ftc_ctx_timed_out(const ftc_context_t *ctx, uint32_t r);
/* Declare r failed because this process's own probe of it expired. */
void ftc_ctx_declare_timed_out(ftc_context_t *ctx, uint32_t r);
void ftc_ctx_declare_observed_failed(ftc_context_t *ctx, uint32_t r);

/* Seed the context's random stream (core/rng.c). */
void ftc_ctx_rng_seed(ftc_context_t *ctx, uint64_t seed);

/* For tests only: accept messages whose checksum is wrong (unkeyed
 * contexts), so that a bit flipped in flight reaches the algorithm: the
 * gossip family's tolerance of corrupted flows is tested this way. */
void ftc_ctx_test_skip_checksum(ftc_context_t *ctx, bool skip);

/* Operation timeouts (core/timeout.c): the earliest deadline of an
 * operation not delivered (UINT64_MAX: none), and end those past it. */
static inline uint64_t ftc_ctx_next_timeout(const ftc_context_t *ctx)
{
    const ftc_timer_node_t *first = ftc_timer_heap_min(&ctx->timeouts);
    return first != NULL ? first->at : UINT64_MAX;
}
void ftc_ctx_expire_timeouts(ftc_context_t *ctx, uint64_t now);

/* Per-operation timers (core/timer.c): the earliest, and fire the due. */
uint64_t ftc_ctx_next_op_timer(const ftc_context_t *ctx);
void ftc_ctx_fire_op_timers(ftc_context_t *ctx, uint64_t now);

/* ---- settling (core/settle.c) ----------------------------------------- */

/* The end of every entry point: tell operations about failures, run
 * deliver callbacks, free what is finished, re-arm the one timer.
 * Inline for the test that a settle already running (the entry point
 * was called from a callback) does it. */
void ftc_ctx_settle_now(ftc_context_t *ctx);
static inline void ftc_ctx_settle(ftc_context_t *ctx)
{
    if (!ctx->settling)
        ftc_ctx_settle_now(ctx);
}
/* Arm the transport timer for the earliest thing the core waits for. */
void ftc_ctx_rearm(ftc_context_t *ctx);

/* After ftc_init_*: deliver must not run inside init, so a completion or
 * failure queued there only arms an immediate timer. */
void ftc_ctx_after_init(ftc_context_t *ctx);

#pragma GCC visibility pop

#endif
