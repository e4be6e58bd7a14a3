/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A test double of the core, for testing a backend on its own. It defines
 * the core's entry points a backend calls (ftc_transport_recv,
 * ftc_transport_send_done, ftc_transport_timer_fired,
 * ftc_transport_peer_failed, ftc_progress, ftc_context_is_failed) and
 * struct ftc_context, so a test links it instead of libftcoll, attaches
 * one ftc_context_t per rank to the backend, and checks what the backend
 * fed the core: which entry point, at which rank, when, with what.
 *
 * Every call is recorded in order in core_records (unless core_recording
 * is off, for long runs that only count), with the time the clock set by
 * core_double_clock() reads. A test adds its own behaviour through the
 * context's hooks, called inside the entry point after the record: reply
 * to a message, re-arm a timer, run the backend re-entrantly.
 *
 * Re-entrancy: transport.h forbids a backend to call an entry point from
 * inside another; core_reentries counts every time one did.
 */
#ifndef FTC_TEST_CORE_DOUBLE_H
#define FTC_TEST_CORE_DOUBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/transport.h"

typedef enum core_event {
    CORE_RECV,
    CORE_SEND_DONE,
    CORE_TIMER,
    CORE_PEER_FAILED,
} core_event_t;

typedef struct core_record {
    core_event_t kind;
    uint32_t rank;          /* of the context called */
    uint64_t t;             /* the clock during the call */
    uint32_t a;             /* recv: source; peer_failed: the peer */
    int status;             /* send_done: its status */
    void *cookie;           /* send_done: its cookie */
    size_t len;             /* recv: payload length */
    uint64_t hash;          /* recv: FNV-1a of the whole payload */
    unsigned char raw[32];  /* recv: the payload's first bytes */
} core_record_t;

struct ftc_context {
    uint32_t rank;
    void *ep;               /* the backend's endpoint, for the test */
    int recv_rc;            /* what recv returns, read after on_recv */
    int failed_peer;        /* ftc_context_is_failed's answer: this rank
                               (-1: none) */
    void *user;             /* the test's own state, for its hooks */

    /* Hooks, NULL for none; each runs inside its entry point. */
    void (*on_recv)(ftc_context_t *ctx, uint32_t src, const void *buf,
                    size_t len);
    void (*on_send_done)(ftc_context_t *ctx, void *cookie, int status);
    void (*on_timer)(ftc_context_t *ctx);
    void (*on_peer_failed)(ftc_context_t *ctx, uint32_t peer);

    /* Calls into this context, recorded or not. */
    uint64_t recvs, send_dones, timer_fires, peer_failures, progress_calls;
};

/* The log; set core_nrecords to 0 to forget it. */
extern core_record_t *core_records;
extern size_t core_nrecords;
extern bool core_recording;     /* true by default */
extern uint64_t core_reentries; /* an entry point called from inside one */

/* A context of rank `rank` on endpoint ep, with no hooks, recv_rc FTC_OK
 * and failed_peer -1. */
void core_double_init(ftc_context_t *ctx, uint32_t rank, void *ep);

/* The clock the records read (a simulator's virtual time, the monotonic
 * clock, ...); NULL: every record says 0. */
void core_double_clock(uint64_t (*now)(void *arg), void *arg);

/* Forget the records; recording on. (core_reentries counts on: a whole
 * program's runs must have none.) */
void core_double_reset(void);

/* The nth (from 0) record of kind at rank, or NULL. */
const core_record_t *core_double_find(core_event_t kind, uint32_t rank,
                                      size_t nth);

/* How many records of kind at rank. */
size_t core_double_count(core_event_t kind, uint32_t rank);

/* The FNV-1a hash recv records, to compare a payload without keeping it. */
uint64_t core_double_hash(const void *buf, size_t len);

#endif
