/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who is told that the group excluded them (FTC_MSG_EXCLUDED).
 *
 * Suspicion is final: a process the group declared failed while it was
 * only slow or stopped must learn it, so that it ends its operations with
 * FTC_EEXCLUDED and goes silent, as the crash it is taken for. The
 * process whose own observation convicted it tells it: a probe series
 * that expired (core/monitor.c), a family's own timeout (ftco), a
 * refuted verdict (core/dispatch.c), a budget overrun (core/pending.c).
 *
 * That is not always enough. The judge may be a peer that never talked
 * to the excluded process: over ZeroMQ a connection is made on the first
 * send, and its handshake needs the other side, so the notice to a
 * stopped process waits behind a handshake it cannot answer and is lost
 * when the judge exits. The process resumes, finds every peer gone and
 * does not learn. Its neighbours in the operation, which did talk to it,
 * learnt the failure second-hand (the deciding root's failure list, a
 * later round, an agreement) and used to say nothing ("it is dead, or
 * someone told it already").
 *
 * So a process that learns a failure second-hand tells the failed peer
 * too, if it talks to it (has sent it a message: core/talked.c, so its
 * way there exists, over ZeroMQ a connection handshaken while the peer
 * ran). Not the others: over ZeroMQ every member would open a
 * connection to the failed process, n per failure, for a notice that
 * could not pass it either. Not on a transport's report (the
 * connection is gone, the notice would not pass it) nor on our own
 * send's failure (the transport cannot reach it); our own expired probe
 * sends its own notice.
 *
 * Once per excluded peer: every notice sent, by any of these paths, is
 * remembered here (a list: excluded peers are few), and a declaration
 * learnt second-hand after one adds none.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "core/notice.h"
#include "core/send.h"
#include "core/talked.h"

static bool told(const ftc_context_t *ctx, uint32_t peer)
{
    for (uint32_t i = 0; i < ctx->ntold; i++)
        if (ctx->told[i] == peer)
            return true;
    return false;
}

void ftc_notice_note_told(ftc_context_t *ctx, uint32_t peer)
{
    if (told(ctx, peer))
        return;
    if (ctx->ntold == ctx->captold) {
        uint32_t cap = ctx->captold ? ctx->captold * 2 : 8;
        uint32_t *a = realloc(ctx->told, sizeof(*a) * cap);
        if (a == NULL)
            return; /* degrade: peer may be told twice, which it ignores */
        ctx->told = a;
        ctx->captold = cap;
    }
    ctx->told[ctx->ntold++] = peer;
}

void ftc_notice_learnt(ftc_context_t *ctx, uint32_t peer)
{
    if (ctx->excluded || told(ctx, peer) || !ftc_talked_to(ctx, peer))
        return;
    /* aux 0: told again, which the receiver accepts as any notice (it
     * is no verdict of ours that it could refute: core/cutoff.c). Its
     * send notes it as told (core/send.c). */
    (void)ftc_ctx_send_control_ex(ctx, peer, FTC_MSG_EXCLUDED, NULL, 0, 0,
                                  FTC_EXCLUDED_TOLD_AGAIN);
}

void ftc_notice_free(ftc_context_t *ctx)
{
    free(ctx->told);
    ctx->told = NULL;
    ctx->ntold = ctx->captold = 0;
}
