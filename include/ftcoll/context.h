/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Contexts and groups.
 *
 * A context is one process's handle on a job of `size` processes: its world
 * rank, the transport, the configuration, and the set of processes it knows
 * to have failed. Failure is of a process, so that set is shared by every
 * group of the context, and it only grows (suspicion is final).
 *
 * A group is an ordered subset of the world on which collectives run, named
 * by (group id, epoch). Every member must start the group's collectives in
 * the same order: the n-th collective started on a group is operation
 * sequence number n at every member.
 */
#ifndef FTCOLL_CONTEXT_H
#define FTCOLL_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/knob.h"
#include "ftcoll/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_group ftc_group_t;

typedef struct ftc_config {
    /* sizeof(ftc_config_t) as the caller was compiled; ftc_config_init
     * sets it. */
    size_t size;
    /* Every message carries it; a message with another token is dropped
     * (FTC_EFOREIGN). Pick one per job, e.g. from the launcher. */
    uint64_t job_token;
    /* How long an operation waits on a silent peer before it probes that
     * peer with a keepalive: no less, and up to a quarter more (the
     * silence is found by checks a quarter of this apart, so that no
     * message needs a clock read). */
    uint64_t suspect_timeout_ns;
    /* How long a probe may go unanswered before its wait is extended
     * (probe_backoff below) or, with no back-off, before the peer is
     * declared failed (for good: the peer, if alive, learns it was
     * excluded). */
    uint64_t probe_timeout_ns;
    /* Added in 0.2 (a caller built against 0.1's smaller struct, by its
     * size, gets auth 0). auth = 1: every message carries, in place of the
     * job token, its SipHash-2-4 under auth_key, and a message without the
     * right MAC is dropped (FTC_EAUTH, counted as dropped_foreign): only
     * holders of the job's secret can send to, or speak for, a member
     * (docs/security.md). The key comes from the launcher (ftcoll-run,
     * PMIx), never from the wire; every rank of the job must use the same.
     * auth = 0: the job token only (trusted fabrics; the token is in clear
     * in every message). */
    uint32_t auth;
    uint8_t auth_key[16];
    /* Added in 0.3. Seeds the random stream operations draw from (gossip
     * partners, jitter), mixed with the rank: the same seed, the same
     * run. Default 0. */
    uint64_t seed;
    /* Added in 0.3. A message whose payload is longer than segment_size
     * bytes travels as segments of at most that many payload bytes (fewer
     * if the transport's max_msg_size says so), at most segment_window of
     * them in flight per destination at once, so a keepalive answer never
     * waits behind more than segment_window segments and a peer streaming
     * a large value is heard from with every segment (docs/decisions.md).
     * 0 picks the default: FTC_SEGMENT_SIZE_DEFAULT,
     * FTC_SEGMENT_WINDOW_DEFAULT. */
    uint64_t segment_size;
    uint32_t segment_window;
    /* Added after 0.3's segment_window (a caller built without them, by
     * its size, gets the defaults). Messages a peer sends for operations
     * of a group that have not started here yet are kept until they
     * start, at most pending_max_msgs messages and pending_max_bytes
     * bytes (payloads plus about 100 bytes each) per source and group. A
     * peer that would exceed it is running farther ahead than this
     * process allows: it is excluded (its operations end with
     * FTC_EEXCLUDED; ours complete without it, as around a crash), never
     * silently dropped from (docs/api.md, "Running ahead"). 0 picks the
     * default: FTC_PENDING_MAX_BYTES_DEFAULT, FTC_PENDING_MAX_MSGS_DEFAULT. */
    uint64_t pending_max_bytes;
    uint32_t pending_max_msgs;
    /* Added after 0.3, with the budget above. How many times the wait for an unanswered probe is
     * extended by twice the last extension: probe_timeout_ns, then
     * 2 x probe_timeout_ns more, ... up to 2^probe_backoff x
     * probe_timeout_ns, and the peer is declared failed when the last
     * runs out, so a peer that answers a probe within
     * (2^(probe_backoff+1) - 1) x probe_timeout_ns of it being sent is
     * never declared failed (one probe: channels are reliable). Any
     * message from the peer ends the series. The core may wait longer
     * on a host where it saw long silences lately (docs/decisions.md). 0: one probe (0.3's
     * detector); at most FTC_PROBE_BACKOFF_MAX; default
     * FTC_PROBE_BACKOFF_DEFAULT (docs/decisions.md, "Failure
     * detection"). The transport's own death reports act at once,
     * whatever this is. */
    uint32_t probe_backoff;
} ftc_config_t;

#define FTC_SEGMENT_SIZE_DEFAULT ((uint64_t)256 * 1024)
#define FTC_SEGMENT_WINDOW_DEFAULT 4u
#define FTC_PENDING_MAX_MSGS_DEFAULT 65536u
#define FTC_PENDING_MAX_BYTES_DEFAULT ((uint64_t)1 << 30)
#define FTC_PROBE_BACKOFF_DEFAULT 3u
#define FTC_PROBE_BACKOFF_MAX 16u

/* sizeof(ftc_config_t) in 0.1. Any size from sizeof(size_t) up to
 * sizeof(ftc_config_t) is accepted: an older, smaller struct gets the
 * defaults (ftc_config_init) for the fields it lacks. */
#define FTC_CONFIG_SIZE_0_1 offsetof(ftc_config_t, auth)
/* sizeof(ftc_config_t) in 0.2, still accepted. */
#define FTC_CONFIG_SIZE_0_2 offsetof(ftc_config_t, seed)
/* sizeof(ftc_config_t) in 0.3 (before the early-message budget and the
 * probe back-off), still accepted. */
#define FTC_CONFIG_SIZE_0_3 offsetof(ftc_config_t, pending_max_bytes)

/* Defaults: job token 0, suspect after 100 ms (to 125 ms), then a probe
 * whose wait is 200 ms, extended by 400, 800 and 1600 ms (probe_backoff
 * 3): a peer silent for 3.1 s (to 3.125 s) while an operation waits on it
 * is declared failed (longer after long silences lately); auth off, seed 0, segments of
 * 256 KiB, 4 in flight per destination, early messages up to 65536 and
 * 1 GiB per source and group. */
void ftc_config_init(ftc_config_t *cfg);

/*
 * Override cfg's core knobs from FTCOLL_* environment variables (the
 * table below lists them), leaving the others as they are: call
 * ftc_config_init first. FTC_OK, or FTC_EINVAL if a variable is set to
 * something that is not a valid value for it; cfg is then unchanged and,
 * when bad is not NULL, *bad names the variable. FTCOLL_JOB_TOKEN is
 * hexadecimal, as ftcoll-run writes it; FTCOLL_JOB_KEY (32 hexadecimal
 * digits, made by ftcoll-run or the PMIx bootstrap) sets auth = 1 and
 * auth_key. The library never reads the environment on its own: the
 * embedder decides whether to call this.
 */
int ftc_config_from_env(ftc_config_t *cfg, const char **bad);

/* One FTCOLL_* knob, for tools that list them (ftcoll-info): the same
 * struct as the backends' and the bootstrap's knob tables. */
typedef ftc_knob_t ftc_knob_info_t;

/* How many knobs there are; ftc_config_knob(i) below it gives each (NULL
 * beyond). */
uint32_t ftc_config_knob_count(void);
const ftc_knob_info_t *ftc_config_knob(uint32_t i);

/*
 * Create a context for world rank `rank` of `size` (1 <= size < 2^31,
 * rank < size). ops is copied; transport is passed back as the first
 * argument of every op. cfg may be NULL for the defaults.
 */
int ftc_context_create(uint32_t rank, uint32_t size,
                       const ftc_transport_ops_t *ops, void *transport,
                       const ftc_config_t *cfg, ftc_context_t **ctx_out);

/* Ends every collective still in flight with FTC_ECANCELED (their deliver
 * callbacks run from here), destroys the groups, frees everything, the
 * buffers of in-flight sends included: the backend must have flushed or
 * cancelled those first (transport.h, "Teardown"). A call from one of
 * those callbacks that would start something on a group being destroyed
 * returns FTC_ECANCELED and starts nothing; after the destroy, the
 * context and its groups are freed memory, as after free(). */
void ftc_context_destroy(ftc_context_t *ctx);

uint32_t ftc_context_rank(const ftc_context_t *ctx);
uint32_t ftc_context_size(const ftc_context_t *ctx);

/* 1 if world rank r is known to have failed, 0 if not. */
int ftc_context_is_failed(const ftc_context_t *ctx, uint32_t r);

/* The known-failed world ranks in increasing order: writes at most max,
 * returns how many there are. */
uint32_t ftc_context_failed(const ftc_context_t *ctx, uint32_t *out,
                            uint32_t max);

/* 1 once this process learned that the others declared it failed. */
int ftc_context_is_excluded(const ftc_context_t *ctx);

/* What the context has counted since it was created. */
typedef struct ftc_counters {
    uint64_t msgs_sent, msgs_received, bytes_sent, bytes_received;
    uint64_t dropped_truncated, dropped_checksum, dropped_version,
             dropped_foreign, dropped_stale, dropped_badmsg;
    uint64_t late;          /* copies for an ended operation that the
                               algorithm expects (corrections): discarded */
    uint64_t probes_sent, failures_detected;
} ftc_counters_t;

void ftc_context_counters(const ftc_context_t *ctx, ftc_counters_t *out);

/*
 * Create group (group_id, epoch) of the context over `nmembers` world ranks
 * listed in `members` in group-rank order (NULL: the whole world, in
 * order). The calling process must be a member; members must be distinct
 * and < size. Two live groups of one context may not share (id, epoch).
 */
int ftc_group_create(ftc_context_t *ctx, uint32_t group_id, uint32_t epoch,
                     uint32_t nmembers, const uint32_t *members,
                     ftc_group_t **group_out);

/* Collectives still in flight on the group end with FTC_ECANCELED. From
 * their deliver callbacks, calls that would start something on group
 * (a collective, agree, shrink, invalidate, finalize) return
 * FTC_ECANCELED, and destroying it again does nothing. */
void ftc_group_destroy(ftc_group_t *group);

uint32_t ftc_group_size(const ftc_group_t *group);
uint32_t ftc_group_rank(const ftc_group_t *group);   /* mine */
uint32_t ftc_group_id(const ftc_group_t *group);
uint32_t ftc_group_epoch(const ftc_group_t *group);
uint32_t ftc_group_world_rank(const ftc_group_t *group, uint32_t group_rank);

/* Known-failed members, as group ranks in increasing order: writes at most
 * max, returns how many there are. */
uint32_t ftc_group_failed(const ftc_group_t *group, uint32_t *out,
                          uint32_t max);

#ifdef __cplusplus
}
#endif
#endif
