/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/bcast_part.h"
#include "algo/plan.h"
#include "core/copy.h"

enum { LEFT = 0, RIGHT = 1 };

static uint32_t grank_of(const ftc_bcast_part_t *bp, uint32_t logical)
{
    return ftc_physical(logical, bp->root, bp->n);
}

static void send_copy(ftc_bcast_part_t *bp, uint32_t logical,
                      uint8_t kind, uint16_t dir_flag, bool notify)
{
    ftc_wire_header_t hdr;
    ftc_cop_header(bp->op, &hdr, kind, bp->round);
    hdr.flags |= dir_flag;
    ftc_iov_t iov = {bp->blob, bp->len};
    (void)ftc_cop_send(bp->op, grank_of(bp, logical), &hdr, &iov, 1, notify);
    if (kind == FTC_CORR_MSG_CORRECT)
        bp->corrections_sent++;
}

static bool is_child(const ftc_bcast_part_t *bp, uint32_t logical)
{
    for (uint32_t i = 0; i < bp->nchildren; i++)
        if (bp->children[i] == logical)
            return true;
    return false;
}

static bool known_failed(const ftc_bcast_part_t *bp, uint32_t logical)
{
    return ftc_group_member_failed(bp->op->group, grank_of(bp, logical));
}

/* Distance up to which direction dir may stop: the t-th closest corrector
 * heard from on that side, or "never" (the whole ring). */
static uint32_t threshold(const ftc_bcast_part_t *bp, int dir)
{
    return bp->nheard[dir] >= bp->t ? bp->heard[dir][bp->t - 1] : UINT32_MAX;
}

static void go_idle(ftc_bcast_part_t *bp)
{
    if (bp->idle)
        return;
    bp->idle = true;
    if (bp->hooks->on_idle != NULL)
        bp->hooks->on_idle(bp);
}

/* Next opportunistic target to the right (chain, no wrap), or -1. */
static int64_t next_opportunistic(ftc_bcast_part_t *bp)
{
    while (bp->next_off <= bp->d) {
        uint64_t t = (uint64_t)bp->me + bp->next_off++;
        if (t >= bp->n)
            break;
        /* A tree child gets the value from us anyway. */
        if (is_child(bp, (uint32_t)t) || known_failed(bp, (uint32_t)t))
            continue;
        return (int64_t)t;
    }
    return -1;
}

/* Next checked target, or -1 when both directions are closed. */
static int64_t next_checked(ftc_bcast_part_t *bp, uint16_t *flag)
{
    for (;;) {
        bool open_l = bp->sent[LEFT] < threshold(bp, LEFT);
        bool open_r = bp->sent[RIGHT] < threshold(bp, RIGHT);
        if ((!open_l && !open_r)
            || (uint64_t)bp->sent[LEFT] + bp->sent[RIGHT] >= bp->n - 1)
            return -1;
        int dir;
        if (open_l && open_r)
            dir = bp->sent[LEFT] <= bp->sent[RIGHT] ? LEFT : RIGHT;
        else
            dir = open_l ? LEFT : RIGHT;
        uint32_t dist = ++bp->sent[dir];
        uint32_t t = dir == LEFT
                         ? (uint32_t)(((uint64_t)bp->me + bp->n - dist) % bp->n)
                         : (uint32_t)(((uint64_t)bp->me + dist) % bp->n);
        if (known_failed(bp, t))
            continue; /* covered: nobody there to reach */
        *flag = dir == LEFT ? FTC_CORR_WF_LEFT : FTC_CORR_WF_RIGHT;
        return t;
    }
}

/* Whether the correction has no target left after the one just taken,
 * whatever arrives meanwhile: the checked sweep has covered the ring, the
 * opportunistic one its distance (or the ring's end). */
static bool sweep_covered(const ftc_bcast_part_t *bp)
{
    if (bp->corr == FTC_CORRECTION_OPPORTUNISTIC)
        return bp->next_off > bp->d || (uint64_t)bp->me + bp->next_off >= bp->n;
    return (uint64_t)bp->sent[LEFT] + bp->sent[RIGHT] >= bp->n - 1;
}

/* One correction send at a time: the next waits for the previous one's
 * completion, so corrections that arrive meanwhile can close a side.
 * The last one has no next to wait for: it goes without a continuation,
 * and the part is idle at once. That saves a timer turn per operation
 * (arm at once, fire, settle, re-arm), and at n = 2 every correction is
 * the last. */
static void correct_step(ftc_bcast_part_t *bp)
{
    if (!bp->correcting || bp->in_flight || bp->idle || bp->stopped)
        return;
    int64_t t;
    uint16_t flag = FTC_CORR_WF_RIGHT;
    if (bp->corr == FTC_CORRECTION_OPPORTUNISTIC)
        t = next_opportunistic(bp);
    else
        t = next_checked(bp, &flag);
    if (t < 0) {
        go_idle(bp);
        return;
    }
    if (sweep_covered(bp)) {
        send_copy(bp, (uint32_t)t, FTC_CORR_MSG_CORRECT, flag, false);
        /* (As a continuation would: not for an operation that ended.) */
        if (!bp->op->finished)
            go_idle(bp);
        return;
    }
    bp->in_flight = true;
    send_copy(bp, (uint32_t)t, FTC_CORR_MSG_CORRECT, flag, true);
}

static void got_value(ftc_bcast_part_t *bp)
{
    if (bp->watching_root) {
        bp->watching_root = false;
        ftc_monitor_release(bp->op->group->ctx,
                            ftc_group_world_of(bp->op->group, bp->root));
    }
    for (uint32_t i = 0; i < bp->nchildren; i++)
        if (!known_failed(bp, bp->children[i]))
            send_copy(bp, bp->children[i], FTC_CORR_MSG_BCAST, 0, false);
    bp->correcting = bp->n > 1;
    bp->hooks->on_value(bp);
    if (bp->stopped)
        return;
    if (!bp->correcting)
        go_idle(bp);
    else
        correct_step(bp);
}

int ftc_bcast_part_start(ftc_bcast_part_t *bp, ftc_cop_t *op,
                         const ftc_bcast_hooks_t *hooks, void *owner,
                         uint32_t round, uint32_t root, const uint8_t *blob,
                         uint32_t len)
{
    memset(bp, 0, sizeof(*bp));
    ftc_group_t *g = op->group;
    bp->op = op;
    bp->hooks = hooks;
    bp->owner = owner;
    bp->round = round;
    bp->root = root;
    bp->n = g->n;
    bp->me = ftc_logical(g->me, root, g->n);
    const ftc_corrected_params_t *cp = ftc_corrected_params(op);
    bp->tree = cp->bcast_tree;
    bp->corr = cp->correction;
    bp->d = cp->distance;
    bp->t = op->args.f + 1;
    bp->next_off = 1;
    const ftc_tree_node_t *node = ftc_plan_tree_node(op, &bp->tree, bp->me,
                                                     FTC_PLAN_NO_UPCORR);
    if (node != NULL) {
        bp->children = node->peers;
        bp->nchildren = node->nchildren;
    }
    bp->heard[LEFT] = ftc_cop_alloc(op, sizeof(uint32_t) * bp->t);
    bp->heard[RIGHT] = ftc_cop_alloc(op, sizeof(uint32_t) * bp->t);
    if (node == NULL || bp->heard[LEFT] == NULL
        || bp->heard[RIGHT] == NULL) {
        memset(bp, 0, sizeof(*bp));
        return FTC_ENOMEM;
    }
    if (bp->me == 0) {
        bp->blob = ftc_cop_alloc(op, len);
        if (bp->blob == NULL) {
            memset(bp, 0, sizeof(*bp));
            return FTC_ENOMEM;
        }
        if (len > 0)
            ftc_copy_bytes(bp->blob, blob, len);
        bp->len = len;
        bp->has = true;
        got_value(bp);
        return FTC_OK;
    }
    /* Only a dead root can keep the value from us for ever: watch it. */
    if (known_failed(bp, 0)) {
        bp->root_failed = true;
        bp->hooks->on_root_failed(bp);
    } else {
        bp->watching_root = true;
        ftc_monitor_acquire(g->ctx, ftc_group_world_of(g, root), op);
    }
    return FTC_OK;
}

static void note_heard(ftc_bcast_part_t *bp, int dir, uint32_t dist)
{
    uint32_t *h = bp->heard[dir];
    uint32_t n = bp->nheard[dir];
    for (uint32_t i = 0; i < n; i++)
        if (h[i] == dist)
            return;
    if (n == bp->t && dist >= h[n - 1])
        return;
    uint32_t j = n < bp->t ? n : n - 1;
    while (j > 0 && h[j - 1] > dist) {
        h[j] = h[j - 1];
        j--;
    }
    h[j] = dist;
    if (n < bp->t)
        bp->nheard[dir]++;
}

void ftc_bcast_part_on_msg(ftc_bcast_part_t *bp, const ftc_wire_header_t *hdr,
                           const uint8_t *payload, uint32_t grank)
{
    if (bp->stopped)
        return;
    if (!bp->hooks->valid(bp, payload, hdr->payload_len)) {
        bp->op->group->ctx->counters.dropped_badmsg++;
        return;
    }
    uint32_t q = ftc_logical(grank, bp->root, bp->n);
    if (hdr->kind == FTC_CORR_MSG_CORRECT) {
        if (hdr->flags & FTC_CORR_WF_RIGHT)
            note_heard(bp, LEFT, (uint32_t)(((uint64_t)bp->me + bp->n - q) % bp->n));
        else if (hdr->flags & FTC_CORR_WF_LEFT)
            note_heard(bp, RIGHT, (uint32_t)(((uint64_t)q + bp->n - bp->me) % bp->n));
    }
    if (bp->has) {
        /* Later copies are bookkeeping; B1 says they all carry the same
         * bytes, which is cheap to assert and catches corruption. */
        if (hdr->payload_len != bp->len
            || (bp->len > 0 && memcmp(payload, bp->blob, bp->len) != 0))
            bp->op->group->ctx->counters.dropped_badmsg++;
        correct_step(bp); /* a side may have closed: nothing else to do */
        return;
    }
    bp->blob = ftc_cop_alloc(bp->op, hdr->payload_len);
    if (bp->blob == NULL)
        return;
    if (hdr->payload_len > 0)
        ftc_copy_bytes(bp->blob, payload, hdr->payload_len);
    bp->len = hdr->payload_len;
    bp->has = true;
    got_value(bp);
}

void ftc_bcast_part_on_failed(ftc_bcast_part_t *bp, uint32_t grank)
{
    if (bp->stopped || bp->has || bp->root_failed || grank != bp->root)
        return;
    bp->watching_root = false; /* the monitor dropped it */
    bp->root_failed = true;
    bp->hooks->on_root_failed(bp);
}

void ftc_bcast_part_on_send_done(ftc_bcast_part_t *bp)
{
    bp->in_flight = false;
    correct_step(bp);
}

void ftc_bcast_part_on_probe(ftc_bcast_part_t *bp, uint32_t grank)
{
    /* No direction flag: a pulled copy must not close anybody's sweep. */
    if (bp->has && !bp->stopped)
        send_copy(bp, ftc_logical(grank, bp->root, bp->n), FTC_CORR_MSG_CORRECT, 0,
                  false);
}

void ftc_bcast_part_stop(ftc_bcast_part_t *bp)
{
    bp->stopped = true;
    if (bp->watching_root) {
        bp->watching_root = false;
        ftc_monitor_release(bp->op->group->ctx,
                            ftc_group_world_of(bp->op->group, bp->root));
    }
}

void ftc_bcast_part_destroy(ftc_bcast_part_t *bp)
{
    /* Buffers are the operation's memory and go with it. */
    if (bp->op != NULL)
        ftc_bcast_part_stop(bp);
    memset(bp, 0, sizeof(*bp));
}

size_t ftc_bcast_part_space(const ftc_coll_args_t *args,
                            const ftc_corrected_params_t *params,
                            const ftc_group_t *g,
                            size_t len)
{
    size_t t = (size_t)args->f + 1;
    (void)params;
    (void)g;
    /* (the children are the group's plan) */
    return 2 * ftc_mem_round(sizeof(uint32_t) * t)
           + ftc_mem_round(len > 0 ? len : 1);
}
