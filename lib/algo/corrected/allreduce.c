/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected allreduce (Kuettler & Haertig 5): reduce to root r, bcast
 * from r; if r failed, every process moves to the next root, relabelling
 * ranks around it, until a live root answers.
 *
 * The paper needs f+1 root candidates that fail only before the operation:
 * a root that dies after its value reached some processes but not others
 * would otherwise let the first group deliver that value while the rest
 * compute another one with the next root. ftcoll closes that gap the way
 * Paxos does, at no cost without failures (docs/semantics.md):
 *
 *  - Delivering the round-r value is "accepting" it in round r.
 *  - A process that enters round r' ignores copies from rounds < r'.
 *  - Each contribution to a reduce carries the highest-round value its
 *    sender accepted. The reduce of round r' includes a contribution of
 *    every live process, so its root sees any value that a live process
 *    accepted, and must broadcast that value instead of a fresh result.
 *  - A process that delivered keeps answering later rounds of the
 *    operation (lazily: it joins when a message or probe of a later round
 *    reaches it), contributing its input and its accepted value.
 *  - A value accepted in round r - 1 is the only proposal round r can
 *    make (no later round has proposed, and a round has one value): a
 *    reduce part of round r that holds one sends it up at once, and the
 *    root proposes it, without waiting for the other contributions
 *    (reduce_part.c, accepted_decides).
 *
 * So every process that delivers, delivers the same value, whichever roots
 * fail and when. Rounds advance only when a root is confirmed failed, so
 * with at most f failures at most f+1 roots are tried (Theorem 7).
 *
 * The exchange variant (FTC_ALLREDUCE_EXCHANGE, docs/corrected.md §5) puts
 * a round 0 before those: every process sends its input to every other,
 * and one that gets all n accepts their reduction in rank order, in round
 * 0. Round 0 has one possible value (all n inputs, in one order), so
 * processes that accept in it agree. A process that learns a member
 * failed before its input arrived cannot complete round 0: it moves to
 * round 1, which is round 0 of the reduce + bcast above (root root0), and
 * the rules above make every later round keep a value accepted in round
 * 0 by any process still alive.
 *
 * The butterfly variant (FTC_ALLREDUCE_BUTTERFLY, docs/corrected.md §5.6)
 * is the same round 0 built as recursive doubling (butterfly_part.c): log2
 * n hops and n log2 n messages instead of n(n - 1). Its value too is one
 * fixed fold of all n inputs, so everything said here of the exchange's
 * round 0 holds for it, and the code below does not tell the two apart
 * (round0_part.h).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/bcast_part.h"
#include "algo/corrected/round0_part.h"
#include "algo/corrected/reduce_part.h"
#include "core/copy.h"
#include "core/monitor.h"

typedef struct allreduce_op {
    ftc_cop_t base;
    ftc_corrected_params_t params; /* what base.args.params points to */
    uint32_t variant;       /* params' (ftc_corrected_variant) */
    uint8_t *input;
    uint32_t root0;
    /* 1 with a round 0 (the exchange's or the butterfly's: it has no
     * root), else 0: round r's root is root0 + r - shift. */
    uint32_t shift;
    uint32_t round;
    uint32_t want_round;    /* > round: move there when it is safe */
    bool tell_root;         /* moved on by our own knowledge of a failed
                               root, or entered a round after the
                               exchange: nudge the new round's root */
    /* The message that pulled this process into a later round rests on
     * a keepalive timeout of its sender's (FTC_CORR_WF_TIMED_OUT), or
     * came as a probe's answer: check the roots it passed. */
    bool pull_check;
    uint32_t pulled_by;     /* its sender (group rank), or UINT32_MAX */
    bool rp_live, bp_live, r0_live;
    ftc_accepted_t mine;    /* what this process accepted (delivered) */
    /* The parts, last: read only while live, and each start clears its
     * own, so the operation's creation does not (ftc_cop_new_prefix). */
    ftc_round0_part_t r0;
    ftc_reduce_part_t rp;
    ftc_bcast_part_t bp;
} allreduce_op_t;

/* Round 0 is the butterfly's, not the exchange's (with shift = 1). The
 * kept parameters, resolved, are the one record of the variant: a
 * template restarted for a like call keeps them, and nothing else may
 * say otherwise. */
static bool round0_butterfly(const allreduce_op_t *a)
{
    return a->params.allreduce == FTC_ALLREDUCE_BUTTERFLY;
}

/* The root of round r (r >= shift). */
static uint32_t root_of(const allreduce_op_t *a, uint32_t r)
{
    return (a->root0 + r - a->shift) % a->base.group->n;
}

/* Broadcast payload: i32 status, u32 nfailed, u32 failed_count, nfailed
 * u32 group ranks, then the value when status is FTC_OK. The list (list
 * scheme) and the count (list and count schemes) are exactly the inputs
 * the value misses; FTC_FAILED_UNKNOWN for the bit scheme. */
#define BLOB_HEAD 12u
static bool blob_parse(const ftc_cop_t *op, const uint8_t *blob, uint32_t len,
                       int32_t *status, uint32_t *nfailed,
                       uint32_t *failed_count)
{
    if (len < BLOB_HEAD)
        return false;
    int32_t st;
    uint32_t nf, fc;
    memcpy(&st, blob, 4);
    memcpy(&nf, blob + 4, 4);
    memcpy(&fc, blob + 8, 4);
    if (st != FTC_OK && st != FTC_ETOO_MANY_FAILURES)
        return false;
    if (nf > op->group->n)
        return false;
    if (fc != FTC_FAILED_UNKNOWN && fc > op->group->n)
        return false;
    uint64_t need = BLOB_HEAD + 4ull * nf + (st == FTC_OK ? op->nbytes : 0);
    if (need != len)
        return false;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t g;
        memcpy(&g, blob + BLOB_HEAD + 4 * i, 4);
        if (g >= op->group->n)
            return false;
    }
    *status = st;
    *nfailed = nf;
    *failed_count = fc;
    return true;
}

static bool ar_valid(ftc_bcast_part_t *bp, const uint8_t *blob, uint32_t len)
{
    int32_t st;
    uint32_t nf, fc;
    return blob_parse(bp->op, blob, len, &st, &nf, &fc);
}

/* Accept blob (a broadcast payload, checked) in the current round, and
 * deliver it if this process has not delivered yet. stable: blob is the
 * operation's memory, never written again (the broadcast part's value):
 * the accepted value refers to it instead of copying it, so that a
 * delivered allreduce, which lingers, holds its value once. */
static void accept(allreduce_op_t *a, uint8_t *blob, uint32_t len, bool stable)
{
    ftc_cop_t *op = &a->base;
    if (stable)
        ftc_accepted_refer(&a->mine, a->round, blob, len);
    else
        (void)ftc_accepted_merge(op, &a->mine, a->round, blob, len);
    if (op->delivered)
        return; /* a holder re-accepting the same value in a later round */
    int32_t st;
    uint32_t nf, fc;
    if (!blob_parse(op, blob, len, &st, &nf, &fc))
        return; /* checked by the caller already */
    const uint8_t *fails = blob + BLOB_HEAD;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t g;
        memcpy(&g, fails + 4 * i, 4);
        if (g == op->group->me) {
            /* The result excludes us: the others took us for failed
             * (suspicion is final) and our EXCLUDED notice is still on its
             * way. Deliver that, not a result we are no part of. */
            ftc_ctx_become_excluded(op->group->ctx);
            return;
        }
    }
    if (nf > 0) {
        /* (Copied out: the list sits unaligned in the blob.) Without
         * memory for it this process cannot say what the result holds,
         * and says so instead of delivering a partial list. */
        uint32_t *list = malloc(sizeof(uint32_t) * nf);
        if (list != NULL)
            memcpy(list, fails, sizeof(uint32_t) * nf);
        if (list == NULL || ftc_cop_set_failed(op, list, nf) != FTC_OK)
            st = FTC_ENOMEM;
        free(list);
    }
    op->comp.failed_count = fc;
    /* The deciding root's list is the same at every survivor: adopting it
     * keeps the known-failed sets of survivors in step. */
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t g;
        memcpy(&g, fails + 4 * i, 4);
        ftc_ctx_declare_failed(op->group->ctx, ftc_group_world_of(op->group, g));
    }
    if (st == FTC_OK && op->nbytes > 0)
        ftc_copy_bytes(op->args.recvbuf, fails + 4ull * nf, op->nbytes);
    /* Round 0 (exchange, butterfly) has no root: its value is everybody's. */
    op->comp.stats.retries = a->round > a->shift ? a->round - a->shift : 0;
    op->comp.stats.root = a->round >= a->shift ? root_of(a, a->round)
                                               : FTC_ROOT_NONE;
    ftc_cop_complete(op, st);
    /* Serve later rounds: a peer that has not delivered may need our
     * input and accepted value to finish (see the top of this file). */
    ftc_cop_linger(op);
}

/* accept() for the blob round 0 built (try_round0_value):
 * status FTC_OK, no failures, this process not yet delivered (checked
 * there), so nothing to parse back, no list to adopt and no root. The
 * steady stream's every operation ends here, and parsing its own blob
 * back was a third of accept()'s work. */
static void accept_round0(allreduce_op_t *a, uint8_t *blob, uint32_t len,
                             uint32_t failed_count)
{
    ftc_cop_t *op = &a->base;
    ftc_accepted_refer(&a->mine, a->round, blob, len);
    op->comp.failed_count = failed_count;
    if (op->nbytes > 0)
        ftc_copy_bytes(op->args.recvbuf, blob + BLOB_HEAD, op->nbytes);
    op->comp.stats.retries = 0;
    op->comp.stats.root = FTC_ROOT_NONE;
    ftc_cop_complete(op, FTC_OK);
    ftc_cop_linger(op);
}

static void ar_on_value(ftc_bcast_part_t *bp)
{
    accept(bp->owner, bp->blob, bp->len, true);
}

/* Round 0: once its part completed (every input here, or the
 * butterfly's every sub-round), accept its value (the same bits at every
 * process that gets here), no input missing. */
static void try_round0_value(allreduce_op_t *a)
{
    ftc_cop_t *op = &a->base;
    if (!a->r0_live || op->delivered || !ftc_round0_complete(&a->r0))
        return;
    /* Every input may have come before this process started (replayed
     * from its creation): a peer that told us the operation ended
     * (cancelled, refused) then speaks first (ftc_cop_started). */
    if (ftc_cop_told_ended(op) != FTC_OK)
        return;
    /* Built in the operation's memory (its room was reserved at
     * creation), where the accepted value then refers to it: one copy
     * fewer than building it on the stack for accept() to copy. */
    uint32_t len = BLOB_HEAD + (uint32_t)op->nbytes;
    uint8_t *blob = ftc_cop_alloc(op, len);
    if (blob == NULL) {
        ftc_cop_complete(op, FTC_ENOMEM);
        ftc_cop_finish(op);
        return;
    }
    int32_t st = FTC_OK;
    uint32_t none = 0;
    /* The bit scheme reports no count, even when it could: the report
     * must not depend on which round decided. */
    uint32_t fc = a->params.fault_info == FTC_FAULT_BIT ? FTC_FAILED_UNKNOWN
                                                        : 0;
    memcpy(blob, &st, 4);
    memcpy(blob + 4, &none, 4);
    memcpy(blob + 8, &fc, 4);
    ftc_round0_value(&a->r0, blob + BLOB_HEAD);
    a->base.comp.stats.root_subtree = 0;
    accept_round0(a, blob, len, fc);
}

static void ar_on_root_failed(ftc_bcast_part_t *bp)
{
    allreduce_op_t *a = bp->owner;
    if (!a->base.delivered && a->want_round <= a->round) {
        a->want_round = a->round + 1;
        a->tell_root = true;
    }
}

static void ar_on_idle(ftc_bcast_part_t *bp)
{
    (void)bp; /* a delivered allreduce lingers until retired */
}

static const ftc_bcast_hooks_t ar_bcast_hooks = {
    .valid = ar_valid,
    .on_value = ar_on_value,
    .on_root_failed = ar_on_root_failed,
    .on_idle = ar_on_idle,
};

static void ar_reduce_done(ftc_reduce_part_t *rp, int status)
{
    allreduce_op_t *a = (allreduce_op_t *)rp->op;
    if (rp->parent >= 0)
        return; /* now wait for the broadcast */
    ftc_cop_t *op = &a->base;
    a->base.comp.stats.root_subtree = rp->cand_child;
    if (status == FTC_ENOMEM)
        return; /* no exact list: the others move on to the next root */
    uint8_t *blob;
    uint32_t len;
    bool own_blob = false;
    /* The proposal is copied by the broadcast part: build a small one on
     * the stack. */
    _Alignas(max_align_t) uint8_t small[256];
    if (rp->acc.has) {
        /* Somebody accepted a value in an earlier round: it may have been
         * delivered, so it is the only safe proposal. */
        blob = rp->acc.blob;
        len = rp->acc.len;
    } else {
        uint32_t nf = rp->scheme == FTC_FAULT_LIST ? rp->nfails : 0;
        uint32_t fc = rp->scheme == FTC_FAULT_BIT ? FTC_FAILED_UNKNOWN
                      : rp->scheme == FTC_FAULT_LIST ? rp->nfails
                                                     : rp->fail_count;
        uint64_t blen = BLOB_HEAD + 4ull * nf
                        + (status == FTC_OK ? op->nbytes : 0);
        blob = blen <= sizeof(small) ? small : malloc(blen);
        if (blob == NULL)
            return; /* the others will time out on this root */
        own_blob = blob != small;
        len = (uint32_t)blen;
        int32_t st = status;
        memcpy(blob, &st, 4);
        memcpy(blob + 4, &nf, 4);
        memcpy(blob + 8, &fc, 4);
        if (nf > 0)
            memcpy(blob + BLOB_HEAD, rp->fails, 4ull * nf);
        if (status == FTC_OK && op->nbytes > 0)
            ftc_copy_bytes(blob + BLOB_HEAD + 4ull * nf, rp->result, op->nbytes);
    }
    if (ftc_bcast_part_start(&a->bp, op, &ar_bcast_hooks, a, a->round,
                             rp->root, blob, len) == FTC_OK)
        a->bp_live = true;
    if (own_blob)
        free(blob);
}

static void end_round(allreduce_op_t *a)
{
    if (a->r0_live) {
        ftc_round0_end(&a->r0);
        a->r0_live = false;
    }
    if (a->rp_live) {
        ftc_reduce_part_abandon(&a->rp);
        ftc_reduce_part_destroy(&a->rp);
        a->rp_live = false;
    }
    if (a->bp_live) {
        ftc_bcast_part_destroy(&a->bp);
        a->bp_live = false;
    }
}

/* A later round needs everybody, also those that delivered and linger
 * in an older one: they move when a message of the round reaches them.
 * Up-correction peers get ours anyway, and a parent our tree value; a
 * tree child would hear nothing, so tell it (FTC_CORR_MSG_NUDGE), and it
 * tells its own. The whole tree then joins within its depth in hops,
 * instead of each lingerer waiting for a probe (suspect_timeout_ns). No
 * cost without a root failure: round 0 sends none. */
static void nudge_children(allreduce_op_t *a)
{
    ftc_reduce_part_t *rp = &a->rp;
    ftc_wire_header_t hdr;
    for (uint32_t i = rp->ngroup; i < rp->ngroup + rp->nchildren; i++) {
        uint32_t g = ftc_physical(rp->peers[i], rp->root, rp->n);
        if (ftc_group_member_failed(a->base.group, g))
            continue;
        ftc_cop_header(&a->base, &hdr, FTC_CORR_MSG_NUDGE, a->round);
        (void)ftc_cop_send(&a->base, g, &hdr, NULL, 0, false);
    }
}

/* Being in round r means the roots of rounds 0 .. r-1 were declared
 * failed by some process: a round moves on only past a root that some
 * process declared failed, through the monitor or its transport, and
 * that declaration is final for the whole group (docs/semantics.md).
 * Adopting it saves a process pulled into round r by a message from
 * waiting for a dead root of an earlier round (its up-correction peer or
 * tree child in round r) until its OWN transport reports the death: with
 * per-process keepalives (UCX shared memory) the round's delivery would
 * wait for the last survivor's report instead of the first.
 *
 * But a word that rests only on its sender's keepalive timing the root
 * out (FTC_CORR_WF_TIMED_OUT) may come from a process cut off from the
 * group: it hears nobody and timed out healthy roots, and adopting its
 * word made this process exclude them (tests/test_cutoff.c). Such a word
 * is checked instead: one probe after a suspect timeout, the root failed
 * if it goes unanswered (core/monitor.c, ftc_monitor_verify). A live
 * root answers and stays; a dead one costs S + P more here, not a whole
 * series. A transport's report is adopted at once, as before. */
static void verify_passed_roots(allreduce_op_t *a, uint32_t r)
{
    ftc_group_t *g = a->base.group;
    for (uint32_t past = a->shift; past < r && past < g->n + a->shift;
         past++) {
        uint32_t root = root_of(a, past);
        /* A passed root that sent the message that pulled us is alive. */
        if (root == g->me || root == a->pulled_by)
            continue;
        uint32_t w = ftc_group_world_of(g, root);
        if (a->pull_check)
            ftc_monitor_verify(g->ctx, w, &a->base);
        else
            ftc_ctx_declare_failed(g->ctx, w);
    }
}

/* Whether this process's word that the roots before round r failed rests
 * on a keepalive timeout alone (its own, or one it is still checking):
 * then every message of the round says so. */
static bool passed_roots_timed_out(const allreduce_op_t *a, uint32_t r)
{
    ftc_group_t *g = a->base.group;
    for (uint32_t past = a->shift; past < r && past < g->n + a->shift;
         past++) {
        uint32_t root = root_of(a, past);
        /* Passed ourselves: somebody's word that we failed, surely not a
         * transport's. */
        if (root == g->me)
            return true;
        uint32_t w = ftc_group_world_of(g, root);
        if (ftc_ctx_timed_out(g->ctx, w) || !ftc_context_is_failed(g->ctx, w))
            return true;
    }
    return false;
}

static void enter_round(allreduce_op_t *a, uint32_t r)
{
    ftc_cop_t *op = &a->base;
    uint32_t n = op->group->n;
    end_round(a);
    verify_passed_roots(a, r);
    a->round = r;
    a->base.wire_flags = passed_roots_timed_out(a, r)
                             ? (uint16_t)FTC_CORR_WF_TIMED_OUT : 0;
    if (r >= n + a->shift) {
        /* Every member was tried as root: more than n-1 failed roots. */
        if (!op->delivered)
            ftc_cop_complete(op, FTC_ETOO_MANY_FAILURES);
        ftc_cop_finish(op);
        return;
    }
    if (r < a->shift) {
        if (ftc_round0_start(&a->r0, round0_butterfly(a), op,
                             a->input) != FTC_OK) {
            if (!op->delivered)
                ftc_cop_complete(op, FTC_ENOMEM);
            ftc_cop_finish(op);
            return;
        }
        a->r0_live = true;
        if (ftc_round0_missing(&a->r0)) {
            /* A member already known failed: round 0 cannot end
             * here; the reduce + bcast rounds can (nudging their root, as
             * after learning of any failure first-hand). */
            a->want_round = a->shift;
            a->tell_root = true;
        }
        try_round0_value(a);
        return;
    }
    uint32_t root = root_of(a, r);
    if (ftc_reduce_part_start(&a->rp, op, ar_reduce_done, r, root, a->input,
                              a->mine.has ? &a->mine : NULL) != FTC_OK) {
        if (!op->delivered)
            ftc_cop_complete(op, FTC_ENOMEM);
        ftc_cop_finish(op);
        return;
    }
    a->rp_live = true;
    if (r > 0)
        nudge_children(a);
    /* After the exchange, a process may be pulled into a round by a
     * member that then crashed, while the round's root, which delivered
     * in round 0, hears from nobody: with more than f failures no tree
     * path may reach it, and the pulled ones would keep probing a root
     * that answers from round 0. Everybody entering such a round tells
     * its root (one header; only after a failure). */
    if (a->shift > 0)
        a->tell_root = true;
    if (root != op->group->me && !a->bp_live) {
        if (ftc_bcast_part_start(&a->bp, op, &ar_bcast_hooks, a, r, root, NULL,
                                 0) == FTC_OK)
            a->bp_live = true;
    }
}

/* This process moved to a new round because it learnt first-hand that
 * the old root failed (no message of the round had reached it yet).
 * Others may learn it much later (each transport reports in its own
 * time), and the round's root, until it joins, holds up the whole round:
 * nudged, it joins at once and its tree follows within its depth in hops
 * (nudge_children). Without this, the round spreads from this process
 * only as its subtree's values climb the tree, one level after another. At
 * most one header per process and failed root, none without failures. */
static void nudge_root(allreduce_op_t *a)
{
    ftc_cop_t *op = &a->base;
    a->tell_root = false;
    if (op->finished || a->round == 0 || a->round >= op->group->n + a->shift)
        return;
    uint32_t root = root_of(a, a->round);
    if (root == op->group->me || ftc_group_member_failed(op->group, root))
        return;
    ftc_wire_header_t hdr;
    ftc_cop_header(op, &hdr, FTC_CORR_MSG_NUDGE, a->round);
    (void)ftc_cop_send(op, root, &hdr, NULL, 0, false);
}

/* Move forward to the round asked for, as often as it takes (a root
 * already known failed asks for the next one at once). The monitor is
 * held across (core/monitor.h): a peer this process watched in the round
 * it leaves and waits on in the next is watched on, its silence and probe
 * series with it, not from scratch. */
static void settle_rounds(allreduce_op_t *a)
{
    if (!a->base.finished && a->want_round > a->round) {
        ftc_context_t *ctx = a->base.group->ctx;
        ftc_monitor_hold(ctx);
        while (!a->base.finished && a->want_round > a->round)
            enter_round(a, a->want_round);
        ftc_monitor_hold_end(ctx);
    }
    /* (The check holds for every round one message moves us through.) */
    a->pull_check = false;
    a->pulled_by = UINT32_MAX;
    if (a->tell_root)
        nudge_root(a);
}

static void ar_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                      const uint8_t *payload, uint32_t grank)
{
    allreduce_op_t *a = (allreduce_op_t *)op;
    if (hdr->word < a->round) {
        op->group->ctx->counters.late++;
        return; /* promised not to accept older rounds */
    }
    if (hdr->word >= op->group->n + a->shift) {
        op->group->ctx->counters.dropped_badmsg++;
        return;
    }
    if (hdr->word > a->round) {
        a->want_round = hdr->word;
        a->pull_check = (hdr->flags & FTC_CORR_WF_TIMED_OUT) != 0;
        a->pulled_by = grank;
        settle_rounds(a);
        if (op->finished)
            return;
        /* Entering that round can move further at once (its root is
         * already known failed): the message belongs to a round this
         * process has now left, and its value must not feed the new one
         * (it would, as a contribution of the new round's tree). */
        if (hdr->word != a->round) {
            op->group->ctx->counters.late++;
            return;
        }
    }
    bool round0_kind = hdr->kind == FTC_CORR_MSG_EXCHANGE
                       || hdr->kind == FTC_CORR_MSG_BUTTERFLY;
    if (round0_kind != (a->round < a->shift)
        || (round0_kind
            && hdr->kind != ftc_round0_kind(round0_butterfly(a)))) {
        /* Round 0 has its variant's messages only, and they exist in it
         * only (the other variant's never: they sign differently). */
        op->group->ctx->counters.dropped_badmsg++;
        return;
    }
    switch (hdr->kind) {
    case FTC_CORR_MSG_EXCHANGE:
    case FTC_CORR_MSG_BUTTERFLY:
        if (a->r0_live) {
            ftc_round0_on_msg(&a->r0, hdr, payload, grank);
            try_round0_value(a);
        }
        break;
    case FTC_CORR_MSG_UPCORR:
    case FTC_CORR_MSG_TREE_UP:
        if (a->rp_live)
            ftc_reduce_part_on_msg(&a->rp, hdr, payload, grank);
        break;
    case FTC_CORR_MSG_BCAST:
    case FTC_CORR_MSG_CORRECT:
        if (a->bp_live)
            ftc_bcast_part_on_msg(&a->bp, hdr, payload, grank);
        else
            op->group->ctx->counters.late++;
        break;
    case FTC_CORR_MSG_NUDGE:
        if (hdr->payload_len != 0)
            op->group->ctx->counters.dropped_badmsg++;
        break; /* its round is what counts: joined above */
    default:
        op->group->ctx->counters.dropped_badmsg++;
        break;
    }
    settle_rounds(a);
}

static void ar_on_failed(ftc_cop_t *op, uint32_t grank)
{
    allreduce_op_t *a = (allreduce_op_t *)op;
    /* Round 0 may end here, before settle_rounds moves on: its watches
     * are held from now (settle_rounds). */
    ftc_context_t *ctx = op->group->ctx;
    ftc_monitor_hold(ctx);
    if (a->r0_live && !op->delivered) {
        ftc_round0_on_failed(&a->r0, grank);
        if (ftc_round0_missing(&a->r0) && a->want_round < a->shift) {
            /* Its input may have reached others and not us: the next
             * rounds settle what the value holds. */
            a->want_round = a->shift;
            a->tell_root = true;
        }
    }
    if (a->rp_live)
        ftc_reduce_part_on_failed(&a->rp, grank);
    if (a->bp_live)
        ftc_bcast_part_on_failed(&a->bp, grank);
    settle_rounds(a);
    ftc_monitor_hold_end(ctx);
}

static void ar_on_send_done(ftc_cop_t *op)
{
    allreduce_op_t *a = (allreduce_op_t *)op;
    if (a->bp_live)
        ftc_bcast_part_on_send_done(&a->bp);
    settle_rounds(a);
}

static void ar_on_peer_round(ftc_cop_t *op, uint32_t grank, uint32_t round)
{
    allreduce_op_t *a = (allreduce_op_t *)op;
    if (round > a->round && round < op->group->n + a->shift
        && round > a->want_round) {
        a->want_round = round;
        a->pull_check = true; /* a probe's answer says nothing of why */
        a->pulled_by = grank;
    }
    settle_rounds(a);
}

static void ar_on_probe(ftc_cop_t *op, uint32_t grank)
{
    allreduce_op_t *a = (allreduce_op_t *)op;
    if (a->bp_live)
        ftc_bcast_part_on_probe(&a->bp, grank);
}

static uint32_t ar_current_round(const ftc_cop_t *op)
{
    return ((const allreduce_op_t *)op)->round;
}

static void ar_destroy(ftc_cop_t *op)
{
    allreduce_op_t *a = (allreduce_op_t *)op;
    if (a->r0_live)
        ftc_round0_end(&a->r0);
    /* The block is freed (or kept for the next operation, which clears
     * it): release what the parts hold, without clearing them. */
    if (a->rp_live)
        ftc_reduce_part_release(&a->rp);
    if (a->bp_live)
        ftc_bcast_part_stop(&a->bp);
    /* A steady stream's template (docs/latency.md, "A steady stream's
     * path"). Why this block is safe to keep as one: destroy runs only
     * when the operation is reaped (finished, its callback returned,
     * nothing pinning it, and retired from the group's lingerers: a
     * lingerer is never reaped) or when its group goes, so no late peer
     * can reach it any more; a template is never a block still
     * lingering. Its shape is what the signature and the parameters fix
     * (params, root0, shift, the space's layout: input first, then the
     * first round's parts, carved in the same order each run); every
     * other field is one run's and ftc_allreduce_op_create sets it
     * again. Which round it ended in does not matter: the parts' state
     * is cleared by their start, the chunks a later round took go now
     * (ftc_cop_free_storage), and the block was sized for round 0. The
     * stream's next like call is the one after this block's retirement,
     * 64 deliveries after its own: ftc_cop_template takes it only if the
     * group's signature memo has not changed since it was set up. */
    ftc_cop_delete_template(op);
}

static const ftc_cop_vtable_t allreduce_vt = {
    .msg_valid = ftc_corrected_msg_valid,
    .on_msg = ar_on_msg,
    .on_peer_failed = ar_on_failed,
    .on_send_done = ar_on_send_done,
    .on_peer_progress = ar_on_peer_round,
    .on_probe = ar_on_probe,
    .progress_word = ar_current_round,
    .destroy = ar_destroy,
};

/* A template's run state back to what a new operation's is (its shape,
 * params, root0 and shift, stays; the parts are cleared by their
 * start). */
static void reset_run(allreduce_op_t *a)
{
    a->round = 0;
    a->want_round = 0;
    a->tell_root = false;
    a->pull_check = false;
    a->pulled_by = UINT32_MAX;
    a->rp_live = a->bp_live = a->r0_live = false;
    a->mine = (ftc_accepted_t){0};
}

/* The operation, shaped and its run state clear: copy the input into
 * its memory (the first thing carved, so that a template's layout is
 * the same every run) and start round 0. */
static int start(allreduce_op_t *a, const ftc_coll_args_t *args,
                 ftc_cop_t **out)
{
    a->input = ftc_cop_alloc(&a->base, a->base.nbytes);
    if (a->input == NULL) {
        ftc_cop_delete(&a->base);
        return FTC_ENOMEM;
    }
    if (a->base.nbytes > 0)
        ftc_copy_bytes(a->input, args->sendbuf, a->base.nbytes);
    ftc_cop_register(&a->base);
    enter_round(a, 0);
    settle_rounds(a);
    ftc_cop_replay_pending(&a->base);
    *out = &a->base;
    return FTC_OK;
}

int ftc_allreduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                            const ftc_corrected_params_t *given, ftc_cop_t **out)
{
    /* Every member resolves auto alike (the same n, the same transport)
     * and signs what it resolved to. */
    ftc_allreduce_algo_t algo = ftc_group_allreduce_algo(g, given->allreduce);
    allreduce_op_t *a = (allreduce_op_t *)ftc_cop_template_of(
        g, &allreduce_vt, FTC_COLL_ALLREDUCE);
    /* The template's variant is the one these parameters give when they
     * are alike (the variant is a function of them): not computed
     * again. */
    if (a != NULL && ftc_corrected_params_alike(&a->params, given, algo)
        && ftc_cop_template_fits(g, args, FTC_COLL_ALLREDUCE, a->variant)) {
        /* A steady stream: the block of the operation that retired last
         * (ar_destroy says why that is safe), its shape kept. */
        ftc_cop_restart(g, &a->base, args, sizeof(*a));
        a->base.args.params = &a->params;
        reset_run(a);
        return start(a, args, out);
    }
    ftc_corrected_params_t resolved = *given;
    resolved.allreduce = algo;
    const ftc_corrected_params_t *params = &resolved;
    bool butterfly = algo == FTC_ALLREDUCE_BUTTERFLY;
    bool round0 = algo == FTC_ALLREDUCE_EXCHANGE || butterfly;
    /* Room for a failure-free run: input, the first round's parts (the
     * exchange or the butterfly, or reduce and broadcast). The value
     * accepted is the broadcast part's or the one round 0 builds (accept(): not
     * copied). */
    size_t nbytes = ftc_cop_value_bytes(g, args);
    size_t blob = BLOB_HEAD + nbytes; /* status, no failures, the value */
    size_t space = ftc_mem_round(nbytes > 0 ? nbytes : 1);
    if (round0)
        space += ftc_round0_space(butterfly, nbytes, g) + ftc_mem_round(blob);
    else
        space += ftc_reduce_part_space(args, nbytes, g, args->root)
                 + ftc_bcast_part_space(args, params, g, blob);
    a = ftc_cop_new_prefix(g, sizeof(*a), offsetof(allreduce_op_t, r0),
                           space);
    if (a == NULL)
        return FTC_ENOMEM;
    ftc_corrected_op_setup(g, args, params, FTC_COLL_ALLREDUCE, &a->base, &allreduce_vt, &a->params);
    a->variant = ftc_corrected_variant(params, FTC_COLL_ALLREDUCE);
    a->root0 = args->root;
    a->shift = round0 ? 1 : 0;
    a->pulled_by = UINT32_MAX;
    return start(a, args, out);
}

