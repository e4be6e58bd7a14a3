/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process cut off from its group must not evict it (core/cutoff.c):
 * remember when this process answered each peer's probe, to tell an
 * exclusion from a peer that does not hear us from one we earned.
 */
#ifndef FTC_CORE_CUTOFF_H
#define FTC_CORE_CUTOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"
#include "wire/wire.h"

#pragma GCC visibility push(hidden)

/* This process answered peer's probe at time now (it was running). */
void ftc_cutoff_note_answer(ftc_context_t *ctx, uint32_t peer, uint64_t now);

/* This process answered a family's question of peer at time now (ftco's
 * KEEPALIVE), which peer may judge us by (FTC_EXCLUDED_ASK_EXPIRED). */
void ftc_cutoff_note_asked(ftc_context_t *ctx, uint32_t peer, uint64_t now);

/* An exclusion notice from peer, which its own probe timeout issued,
 * arrives at time now: true if it proves that peer does not hear us (we
 * answered its probe at least half a probe timeout earlier), so that this
 * process must declare peer failed instead of leaving. */
bool ftc_cutoff_refutes(const ftc_context_t *ctx, uint32_t peer, uint64_t now);

/* The same for any exclusion notice hdr: an expired probe's (above), or
 * a family's question's (FTC_EXCLUDED_ASK_EXPIRED: we answered the
 * sender's question at least half its wait, the header's word in
 * microseconds, before the notice arrives). false for every other
 * notice, which is accepted. */
bool ftc_cutoff_refutes_notice(const ftc_context_t *ctx,
                               const ftc_wire_header_t *hdr);

/* We refuted peer's verdict (ftc_cutoff_refutes) and declared it failed. */
void ftc_cutoff_note_refuted(ftc_context_t *ctx, uint32_t peer);

/* Whether a "heard you" notice from peer (FTC_EXCLUDED_HEARD_YOU: it
 * received a message of ours after excluding us) undoes our refutation:
 * true if we refuted peer's verdict, so this process must leave after all
 * (its messages were slow, not the peer deaf). */
bool ftc_cutoff_overturned(const ftc_context_t *ctx, uint32_t peer);

/* Whether a probe of ours was answered promptly (within its first wait,
 * core/monitor.c) after the last failure this process declared: a peer
 * it does not hold failed hears it and is heard, so it is not the side
 * cut off, however many of the group it observed failed. */
bool ftc_cutoff_answered_since(const ftc_context_t *ctx);

#pragma GCC visibility pop

#endif
