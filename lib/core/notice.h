/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exclusion notice (core/notice.c): which excluded peers this process
 * tells, and that it tells each once.
 */
#ifndef FTC_CORE_NOTICE_H
#define FTC_CORE_NOTICE_H

#include <stdint.h>

#include "core/context.h"

#pragma GCC visibility push(hidden)

/* A notice (FTC_MSG_EXCLUDED, whatever its aux) went to peer: whoever
 * sent it, it is not sent again on peer's declaration. */
void ftc_notice_note_told(ftc_context_t *ctx, uint32_t peer);

/* This process has just declared peer failed on another member's word
 * (a failure list, a later round, an agreement), not on its own
 * observation: tell peer it was excluded if this process talks to it
 * (core/talked.c) and has not told it yet. */
void ftc_notice_learnt(ftc_context_t *ctx, uint32_t peer);

/* Context teardown. */
void ftc_notice_free(ftc_context_t *ctx);

#pragma GCC visibility pop

#endif
