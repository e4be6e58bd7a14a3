/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport interface: what a backend supplies to the core, and the
 * entry points through which it feeds events back. The core does no I/O,
 * reads no clock and starts no thread; everything it needs from the outside
 * world goes through these operations.
 *
 * Threading and re-entrancy. A context is single-threaded: the embedder
 * serialises every call into it. An operation below must NOT call back into
 * the core (no ftc_transport_* call from inside send, timer_arm, ...); queue
 * the event and feed it on a later turn of your loop. The core never calls
 * these operations from inside a user's deliver callback's caller chain in a
 * way that breaks this rule.
 *
 * Ranks here are world ranks: 0 .. size-1 of the context.
 */
#ifndef FTCOLL_TRANSPORT_H
#define FTCOLL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_context ftc_context_t;

/* Returned by send when the backend is already done with the buffer. */
#define FTC_SEND_INLINE 1

/* A cost_hints bit: each message costs its sender and its receiver much
 * more than a hop adds to latency (a kernel socket: a system call on each
 * side, as over TCP or a Unix socket), so fewer messages per process beat
 * fewer hops. */
#define FTC_TRANSPORT_COSTLY_MESSAGES 1u

typedef struct ftc_transport_ops {
    /*
     * sizeof(ftc_transport_ops_t) as the backend was compiled. The core
     * reads only the fields that fit, so a backend built against an older
     * header keeps working when fields are appended (libfabric's rule).
     */
    size_t size;

    /*
     * Send len bytes at buf to world rank dest, without blocking.
     * Returns:
     *  - FTC_SEND_INLINE: the backend copied or sent the bytes; buf may be
     *    reused at once and no completion follows;
     *  - FTC_OK: the backend keeps buf (unchanged, owned by the core) until
     *    it calls ftc_transport_send_done(ctx, cookie, status) on a later
     *    turn; exactly one such call follows;
     *  - a negative ftc_error_t: nothing was sent and no completion follows.
     *    FTC_EOVERFLOW (the message exceeds what this transport carries)
     *    ends the collective with FTC_EOVERFLOW at every member; any other
     *    error makes the core treat dest as failed.
     * A send to a dead peer may succeed: completion never means delivery.
     * Messages between one pair of ranks must arrive in order, or be lost
     * only when one of the two fails. Required.
     */
    int (*send)(void *tp, uint32_t dest, const void *buf, size_t len,
                void *cookie);

    /*
     * The core keeps its own timers and asks for one wake-up: call
     * ftc_transport_timer_fired(ctx) once, on a later turn, at or after
     * deadline_ns (on the clock of now()). Arming replaces any earlier
     * deadline. Required.
     */
    void (*timer_arm)(void *tp, uint64_t deadline_ns);

    /* Forget the armed deadline, if any. Required. */
    void (*timer_cancel)(void *tp);

    /* Monotonic time in nanoseconds; virtual time in a simulator. Required. */
    uint64_t (*now)(void *tp);

    /*
     * Ask the backend to report, through ftc_transport_peer_failed(), any
     * transport-level sign that peer died (connection reset, endpoint error,
     * CQ error entry). The core calls watch while an operation waits on
     * peer, and unwatch when none does, or, for a steady stream of like
     * operations on a group, once the stream changes, pauses for a
     * suspect timeout or its group goes: a report in between is acted on
     * (the peer is declared failed). Calls are balanced and never nest
     * for the same peer. Optional (NULL): then only the core's keepalive
     * probes detect failures, after the configured timeouts.
     */
    void (*watch)(void *tp, uint32_t peer);
    void (*unwatch)(void *tp, uint32_t peer);

    /*
     * Drive the transport (poll a UCX worker, a libfabric CQ, ...) and feed
     * what it finds through the entry points below. Called by
     * ftc_progress(). Returns the number of events handled, or a negative
     * ftc_error_t. Optional (NULL) for backends driven from outside.
     */
    int (*progress)(void *tp);

    /*
     * The core declared peer failed, for any reason (its own keepalive
     * timeout, a failure list, a transport report): final. The backend may
     * close its connection and drop what it still queues for peer. Must
     * not call back into the core. Optional (NULL).
     */
    void (*peer_down)(void *tp, uint32_t peer);

    /*
     * The longest message (header included) send accepts, in bytes; 0: no
     * limit. The core segments longer payloads (ftc_config_t's
     * segment_size) so that no message it sends exceeds this. Optional
     * (0). Appended in 0.3: a backend built against an older header has
     * it 0, and its send may still refuse a message with FTC_EOVERFLOW.
     */
    size_t max_msg_size;

    /*
     * What this transport's messages cost, for the algorithms that choose
     * by it (the corrected allreduce's auto: docs/corrected.md §5.7):
     * FTC_TRANSPORT_COSTLY_MESSAGES or 0. Asked once, when the context is
     * created. Every member of a group must answer alike, as they run one
     * transport configured alike: the choice is signed into every
     * message, and members that chose otherwise end their collectives
     * with FTC_EMISMATCH. Optional (NULL: 0, the choice for fast
     * interconnects and shared memory). Appended in 0.10.
     */
    uint32_t (*cost_hints)(void *tp);
} ftc_transport_ops_t;

/*
 * Entry points for the backend. Each may run user deliver callbacks before
 * it returns.
 *
 * Teardown: ftc_context_destroy frees the buffers of sends still in flight
 * (those that returned FTC_OK and have had no send_done yet). Before
 * destroying a context, the backend must be done with them: let them
 * complete (flush) or cancel them so that the transport no longer reads
 * them. No entry point may be called for a destroyed context.
 */

/* Source unknown to the transport: trust the header's sender field. */
#define FTC_RANK_UNKNOWN UINT32_MAX

/*
 * A message arrived from world rank src (or FTC_RANK_UNKNOWN). The core
 * copies what it keeps; buf is the caller's again on return. Returns FTC_OK
 * if the message was accepted, or why it was dropped (FTC_ETRUNCATED,
 * FTC_ECHECKSUM, FTC_EVERSION, FTC_EFOREIGN, FTC_ESTALE, FTC_EBADMSG). A
 * dropped message is also counted in the context's counters.
 */
int ftc_transport_recv(ftc_context_t *ctx, uint32_t src, const void *buf,
                       size_t len);

/* Completion of a send that returned FTC_OK. status is FTC_OK, or negative
 * if the backend knows the message was not sent (the core then treats the
 * destination as failed). */
void ftc_transport_send_done(ftc_context_t *ctx, void *cookie, int status);

/* The deadline passed to timer_arm has been reached. */
void ftc_transport_timer_fired(ftc_context_t *ctx);

/* The transport knows peer died. Final: the core excludes peer for good. */
void ftc_transport_peer_failed(ftc_context_t *ctx, uint32_t peer);

/* Calls ops->progress if there is one; returns its result, else 0. */
int ftc_progress(ftc_context_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
