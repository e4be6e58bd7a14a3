/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/butterfly_part.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/monitor.h"

int ftc_butterfly_mutant = FTC_BUTTERFLY_MUTANT_NONE;

/* The core: P = 2^floor(log2 n), and e = n - P pairs folded first. */
static uint32_t core_size(uint32_t n)
{
    uint32_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

/* Core rank of group rank g, UINT32_MAX for an extra (odd, below 2e). */
static uint32_t vrank_of(uint32_t extras, uint32_t g)
{
    if (g < 2 * extras)
        return g % 2 == 0 ? g / 2 : UINT32_MAX;
    return g - extras;
}

/* Group rank of core rank v (order kept: lower core ranks are lower
 * group ranks, so "lower half" is the same in both numberings). */
static uint32_t grank_of(uint32_t extras, uint32_t v)
{
    return v < extras ? 2 * v : v + extras;
}

static uint32_t partner(const ftc_butterfly_part_t *bf, uint32_t k)
{
    return grank_of(bf->extras, bf->vrank ^ (1u << k));
}

static uint32_t world_of(const ftc_butterfly_part_t *bf, uint32_t grank)
{
    return ftc_group_world_of(bf->op->group, grank);
}

static uint8_t *slot(const ftc_butterfly_part_t *bf, uint32_t k)
{
    return bf->slots + (size_t)k * bf->op->nbytes;
}

/* The group rank of the peer that fills slot k. */
static uint32_t peer_of_slot(const ftc_butterfly_part_t *bf, uint32_t k)
{
    return k == bf->steps ? bf->twin : partner(bf, k);
}

/* The slot grank's message goes to, or UINT32_MAX when grank sends this
 * process nothing. */
static uint32_t slot_of(const ftc_butterfly_part_t *bf, uint32_t grank)
{
    if (grank >= bf->n || grank == bf->me)
        return UINT32_MAX;
    if (grank == bf->twin)
        return bf->steps;
    if (bf->vrank == UINT32_MAX)
        return UINT32_MAX;
    uint32_t v = vrank_of(bf->extras, grank);
    if (v == UINT32_MAX)
        return UINT32_MAX;
    uint32_t d = v ^ bf->vrank; /* one bit: a partner; d < P: v is core */
    if ((d & (d - 1)) != 0)
        return UINT32_MAX;
    return (uint32_t)__builtin_ctz(d);
}

/* The slot whose message carries non-peer grank's input to this process:
 * at a core member, the sub-round whose partner's partial first holds
 * grank's block (the highest bit in which the two core ranks differ; an
 * extra's input is in its twin's); at an extra, slot 0, the value. */
static uint32_t carrier_slot(const ftc_butterfly_part_t *bf, uint32_t grank)
{
    if (bf->vrank == UINT32_MAX)
        return 0;
    uint32_t v = vrank_of(bf->extras, grank);
    if (v == UINT32_MAX)
        v = vrank_of(bf->extras, grank - 1); /* an extra's input: its twin */
    uint32_t d = v ^ bf->vrank;
    return 31u - (uint32_t)__builtin_clz(d);
}

/* Slots and the partial at this process: the sub-rounds' and the
 * twin's, plus acc at a core member (an extra's value is its slot). */
static void shape(uint32_t n, uint32_t me, uint32_t *nslots, bool *own_acc)
{
    uint32_t p = core_size(n), extras = n - p, steps = 0;
    while ((1u << steps) < p)
        steps++;
    bool extra = vrank_of(extras, me) == UINT32_MAX;
    bool twin = me < 2 * extras;
    *nslots = extra ? 1 : steps + (twin ? 1 : 0);
    *own_acc = !extra;
}

size_t ftc_butterfly_part_space(size_t nbytes, const ftc_group_t *g)
{
    uint32_t nslots;
    bool own_acc;
    shape(g->n, g->me, &nslots, &own_acc);
    size_t bufs = (size_t)nslots + (own_acc ? 1 : 0);
    if (nbytes >= FTC_BUTTERFLY_PART_OWN_BYTES)
        return 0;
    return ftc_mem_round(bufs * (nbytes > 0 ? nbytes : 1));
}

static void send_to(ftc_butterfly_part_t *bf, uint32_t dest,
                    const uint8_t *value)
{
    ftc_wire_header_t hdr;
    ftc_iov_t iov = {value, bf->op->nbytes};
    ftc_cop_header(bf->op, &hdr, FTC_CORR_MSG_BUTTERFLY, 0);
    (void)ftc_cop_send(bf->op, dest, &hdr, &iov, 1, false);
}

/* The members that send this process nothing in the butterfly, watched
 * only while it runs: with the exchange's watches, the butterfly keeps
 * the exchange's answer to a member cut off from the group
 * (butterfly_part.h). Each is released when the value is here (kept, for
 * a steady stream's next operation: core/monitor.h) or when the part
 * ends without it. */
static void acquire_others(ftc_butterfly_part_t *bf)
{
    ftc_group_t *g = bf->op->group;
    if (bf->n > FTC_BUTTERFLY_WATCH_ALL_MAX)
        return;
    /* Every member but this process and the peers of its slots. */
    uint32_t others = ((1u << bf->n) - 1) & ~(1u << bf->me);
    for (uint32_t k = 0; k <= bf->steps; k++)
        if (bf->want & (1ull << k))
            others &= ~(1u << peer_of_slot(bf, k));
    ftc_monitor_acquire_members(g->ctx, g, others, bf->op);
    bf->others = others;
}

static void release_others(ftc_butterfly_part_t *bf, bool keep)
{
    uint32_t others = bf->others;
    if (others == 0)
        return;
    bf->others = 0;
    ftc_group_t *g = bf->op->group;
    ftc_monitor_release_members(g->ctx, g, others, keep);
}

/* FTC_BUTTERFLY_MUTANT_REASSOCIATE, at core rank 0 (lower in every
 * sub-round: slot k is the partial of the block above its own). */
static void mutant_reassociate(ftc_butterfly_part_t *bf)
{
    ftc_cop_t *op = bf->op;
    if (bf->vrank != 0 || bf->steps < 2 || op->nbytes == 0)
        return;
    uint8_t *right = ftc_cop_alloc(op, op->nbytes);
    uint8_t *tmp = ftc_cop_alloc(op, op->nbytes);
    if (right == NULL || tmp == NULL)
        return;
    ftc_copy_bytes(right, slot(bf, bf->steps - 1), op->nbytes);
    for (uint32_t j = bf->steps - 1; j-- > 0;) {
        ftc_copy_bytes(tmp, slot(bf, j), op->nbytes);
        ftc_cop_reduce(op, tmp, right);
        ftc_copy_bytes(right, tmp, op->nbytes);
    }
    ftc_copy_bytes(bf->acc, bf->input, op->nbytes);
    if (bf->twin != UINT32_MAX)
        ftc_cop_reduce(op, bf->acc, slot(bf, bf->steps));
    ftc_cop_reduce(op, bf->acc, right);
}

/* Go as far as the slots filled allow: fold the twin's input, then, for
 * each sub-round, send the partial (once) and fold the partner's. Why
 * the same bits everywhere: the two partners of sub-round k fold the
 * same two partials, the one of the lower block on the left. */
static void advance(ftc_butterfly_part_t *bf)
{
    ftc_cop_t *op = bf->op;
    if (bf->done || bf->missing || bf->vrank == UINT32_MAX)
        return;
    if (bf->twin != UINT32_MAX && !bf->folded) {
        if (!(bf->got & (1ull << bf->steps)))
            return;
        /* in[2i] op in[2i+1]: this process is the lower of the pair. */
        if (op->nbytes > 0)
            ftc_cop_reduce(op, bf->acc, slot(bf, bf->steps));
        bf->folded = true;
    }
    while (bf->step < bf->steps) {
        uint32_t k = bf->step;
        if (bf->sent <= k) {
            send_to(bf, partner(bf, k), bf->acc);
            bf->sent = k + 1;
        }
        if (!(bf->got & (1ull << k)))
            return;
        bool skip = ftc_butterfly_mutant == FTC_BUTTERFLY_MUTANT_SKIP_LAST
                    && k + 1 == bf->steps;
        if (op->nbytes > 0 && !skip) {
            if ((bf->vrank >> k & 1u) == 0) {
                ftc_cop_reduce(op, bf->acc, slot(bf, k));
            } else {
                /* The partner's is the lower block's: it goes left. */
                ftc_cop_reduce(op, slot(bf, k), bf->acc);
                ftc_copy_bytes(bf->acc, slot(bf, k), op->nbytes);
            }
        }
        bf->step = k + 1;
    }
    if (ftc_butterfly_mutant == FTC_BUTTERFLY_MUTANT_REASSOCIATE)
        mutant_reassociate(bf);
    /* The final value's bytes, not a fold of its own: the twin holds the
     * very bits every core member holds. */
    if (bf->twin != UINT32_MAX)
        send_to(bf, bf->twin, bf->acc);
    bf->done = true;
    release_others(bf, true);
}

int ftc_butterfly_part_start(ftc_butterfly_part_t *bf, ftc_cop_t *op,
                             const uint8_t *input)
{
    ftc_group_t *g = op->group;
    memset(bf, 0, sizeof(*bf));
    bf->op = op;
    bf->n = g->n;
    bf->me = g->me;
    bf->input = input;
    uint32_t p = core_size(g->n);
    bf->extras = g->n - p;
    while ((1u << bf->steps) < p)
        bf->steps++;
    bf->vrank = vrank_of(bf->extras, g->me);
    bf->twin = g->me >= 2 * bf->extras ? UINT32_MAX
               : g->me % 2 == 0       ? g->me + 1
                                      : g->me - 1;
    if (bf->vrank == UINT32_MAX)
        bf->steps = 0; /* an extra runs no sub-round: slot 0 is the value */
    uint32_t nslots;
    bool own_acc;
    shape(g->n, g->me, &nslots, &own_acc);
    size_t nb = op->nbytes;
    size_t bufs = (size_t)nslots + (own_acc ? 1 : 0);
    size_t len = bufs * (nb > 0 ? nb : 1);
    uint8_t *mem;
    if (nb >= FTC_BUTTERFLY_PART_OWN_BYTES) {
        bool fits = nb <= SIZE_MAX / bufs;
        bf->heap = fits ? ftc_bulk_get(g->ctx, len) : NULL;
        mem = bf->heap;
    } else {
        mem = ftc_cop_alloc(op, len);
    }
    if (mem == NULL)
        return FTC_ENOMEM;
    bf->acc = mem;
    bf->slots = own_acc ? mem + nb : mem;
    /* Every sub-round's partner, and the twin (an extra: slot 0). */
    bf->want = ((1ull << bf->steps) - 1)
               | (bf->twin != UINT32_MAX ? 1ull << bf->steps : 0);
    /* (Nothing known failed, the common case: no walk of the members.) */
    for (uint32_t r = 0; r < g->n && !bf->missing && g->ctx->nfailed != 0; r++)
        if (r != g->me && ftc_group_member_failed(g, r))
            bf->missing = true;
    if (bf->missing)
        return FTC_OK;
    /* Messages that came early are replayed after the start, so every
     * peer is awaited here. */
    for (uint32_t k = 0; k <= bf->steps; k++)
        if (bf->want & (1ull << k))
            ftc_monitor_acquire(g->ctx, world_of(bf, peer_of_slot(bf, k)), op);
    bf->watching = true;
    acquire_others(bf);
    if (bf->vrank == UINT32_MAX) {
        /* An extra: its input to its twin, then wait for the value. */
        send_to(bf, bf->twin, input);
        return FTC_OK;
    }
    if (nb > 0)
        ftc_copy_bytes(bf->acc, input, nb);
    advance(bf);
    return FTC_OK;
}

void ftc_butterfly_part_on_msg(ftc_butterfly_part_t *bf,
                               const ftc_wire_header_t *hdr,
                               const uint8_t *payload, uint32_t grank)
{
    ftc_context_t *ctx = bf->op->group->ctx;
    uint32_t k = slot_of(bf, grank);
    if (hdr->payload_len != bf->op->nbytes || k == UINT32_MAX) {
        ctx->counters.dropped_badmsg++;
        return;
    }
    /* A duplicate (the first copy is the partial), or after the end:
     * complete, the slots may be gone. */
    if ((bf->got & (1ull << k)) || bf->done || bf->missing)
        return;
    if (bf->op->nbytes > 0)
        ftc_copy_bytes(slot(bf, k), payload, bf->op->nbytes);
    bf->got |= 1ull << k;
    if (bf->watching) {
        /* Answered what we waited for: the watch is kept for a steady
         * stream's next operation (core/monitor.h). */
        ftc_monitor_release_keep(ctx, world_of(bf, grank));
        if ((bf->got & bf->want) == bf->want)
            bf->watching = false;
    }
    if (bf->vrank == UINT32_MAX) {
        bf->done = true; /* an extra: the value's bytes are in slot 0 */
        release_others(bf, true);
    } else {
        advance(bf);
    }
}

void ftc_butterfly_part_on_failed(ftc_butterfly_part_t *bf, uint32_t grank)
{
    if (bf->done || bf->missing)
        return;
    uint32_t k = slot_of(bf, grank);
    if (k == UINT32_MAX) {
        /* A member we do not hear from (watched: in others): its
         * input reaches us inside one slot's partial, and once that slot
         * is here its death takes nothing from us. Before, the slot may
         * come without it (it died before it sent): missing, as the
         * exchange is, so that this survivor moves on by its own report
         * instead of waiting for a peer's word. */
        if (grank >= 32 || !(bf->others >> grank & 1u))
            return;
        uint32_t via = carrier_slot(bf, grank);
        if (bf->got & (1ull << via))
            return;
    } else if (!(bf->want & (1ull << k)) || (bf->got & (1ull << k))) {
        return;
    }
    /* Its partial may have reached others: only the rounds that follow
     * can say whether the result holds it (allreduce.c). */
    bf->missing = true;
    ftc_butterfly_part_destroy(bf);
}

void ftc_butterfly_part_value(ftc_butterfly_part_t *bf, uint8_t *out)
{
    if (bf->op->nbytes > 0)
        ftc_copy_bytes(out, bf->vrank == UINT32_MAX ? slot(bf, 0) : bf->acc,
                       bf->op->nbytes);
    ftc_butterfly_part_free(bf);
}

void ftc_butterfly_part_free(ftc_butterfly_part_t *bf)
{
    if (bf->heap == NULL)
        return;
    ftc_bulk_put(bf->op->group->ctx, bf->heap);
    bf->heap = NULL;
    bf->acc = bf->slots = NULL;
}

void ftc_butterfly_part_destroy(ftc_butterfly_part_t *bf)
{
    release_others(bf, false);
    if (!bf->watching)
        return;
    bf->watching = false;
    for (uint32_t k = 0; k <= bf->steps; k++)
        if ((bf->want & (1ull << k)) && !(bf->got & (1ull << k)))
            ftc_monitor_release(bf->op->group->ctx,
                                world_of(bf, peer_of_slot(bf, k)));
}
