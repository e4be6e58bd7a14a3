/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agreement's early round: how it decides when nothing fails, in two
 * recursive-doubling exchanges instead of the ballots' four tree waves
 * (docs/ulfm.md, "The early round").
 *
 * Uniform consensus needs two rounds of everyone hearing from everyone
 * even with no failure: one to learn the value, one to learn that every
 * member learned it, so that a member that delivers and then crashes
 * leaves its value with every survivor. A tree does a round in two waves
 * (up, down); recursive doubling does it in one tree depth, log2 n
 * exchanges, at the price of log2 n messages per member instead of one.
 *
 *   round 1: each member ANDs its input with its partners', over log2 p
 *            exchanges (p the largest power of two <= n; member r + p
 *            folds into member r first and gets the result last). Every
 *            member that completes it holds the same value, the AND of
 *            all n inputs, and accepts it (acc_rank 0, below every
 *            ballot).
 *   round 2: the same exchanges carry "my block accepted". A member that
 *            completes it knows all n accepted, and delivers the value
 *            with an empty failed set.
 *
 * A member that starts knowing a failure, learns one, or hears a message
 * of the ballots, leaves the round for good (ftc_agree_leave_early, in
 * agree.c): it tells every partner and its children of the ballot tree,
 * so the others follow, and runs the ballots with what it accepted. Why
 * that is uniform: a member delivered early only if every member had
 * accepted the value before leaving the round, so every ballot's
 * coordinator, which gathers from every live member, finds it accepted
 * and proposes it (the highest accepted value; early acceptances are all
 * the same value). A member that left never accepts early, and never
 * confirms, so no one delivers early behind it.
 *
 * Steps of a round, at member r: 0, the fold-in from the extra member
 * r + p (when r < n - p); 1 .. L (L = log2 p), the exchange with
 * r XOR 2^(s - 1) (when r < p); L + 1, the result to the extra member
 * (from r - p, at an extra member). The header's word is the step.
 */
#include "algo/ulfm/agree.h"
#include "algo/ulfm/kinds.h"

/* Mutants the checker must reject (tests/meson.build builds them): 1
 * delivers at the end of round 1, with no round 2. 0 in the library. */
#ifndef FTC_AGREE_MUTANT
#define FTC_AGREE_MUTANT 0
#endif

/* The largest power of two <= n, and its log. */
static uint32_t core_size(uint32_t n, uint32_t *log)
{
    uint32_t p = 1, l = 0;
    while (p <= n / 2) {
        p *= 2;
        l++;
    }
    *log = l;
    return p;
}

/* The member this one exchanges with at step s, or UINT32_MAX if none. */
static uint32_t partner(const ftc_agree_t *a, uint32_t s)
{
    uint32_t n = a->base.group->n, me = a->base.group->me, l;
    uint32_t p = core_size(n, &l);
    if (me >= p)
        return s == 0 || s == l + 1 ? me - p : UINT32_MAX;
    if (s == 0 || s == l + 1)
        return me + p < n ? me + p : UINT32_MAX;
    if (s <= l)
        return me ^ (UINT32_C(1) << (s - 1));
    return UINT32_MAX;
}

bool ftc_agree_early_partners(const ftc_agree_t *a, ftc_idset_t *out)
{
    uint32_t l;
    (void)core_size(a->base.group->n, &l);
    for (uint32_t s = 0; s <= l + 1; s++) {
        uint32_t r = partner(a, s);
        if (r != UINT32_MAX && !ftc_idset_add(out, r))
            return false;
    }
    return true;
}

static void send_step(ftc_agree_t *a, uint32_t s)
{
    uint32_t to = partner(a, s);
    if (a->early_round == 1)
        ftc_agree_send(a, to, MSG_EARLY_AND, s, &a->early_and,
                       sizeof(a->early_and));
    else
        ftc_agree_send(a, to, MSG_EARLY_CONFIRM, s, NULL, 0);
}

/* Round 1 complete: accept its value (the AND of every input), start
 * round 2; or decide now when the operation says that value proves all
 * inputs equal (ftc_agree_hooks_t.unanimous: the uniform allreduce). */
static void accept_early(ftc_agree_t *a)
{
    a->has_acc = true;
    a->acc_rank = 0;
    a->acc_value = a->early_and;
    ftc_idset_clear(&a->acc_failed);
    a->early_round = 2;
    a->early_step = 0;
    /* Every input was equal: no decision can differ from this one, so
     * the second round has nothing to secure. */
    if (a->hooks->unanimous != NULL && a->hooks->unanimous(a->acc_value))
        ftc_agree_decide_early(a, a->acc_value);
}

void ftc_agree_early_start(ftc_agree_t *a)
{
    a->phase = FTC_AGREE_EARLY;
    a->early_round = 1;
    a->early_step = 0;
    a->early_and = a->input;
    /* A failure known now would have to be in the failed set: that is
     * the ballots' business. */
    if (ftc_group_failed(a->base.group, NULL, 0) > 0)
        ftc_agree_leave_early(a);
}

void ftc_agree_early_evaluate(ftc_agree_t *a)
{
    if (!a->ready)
        return; /* (what arrives is kept until the input comes) */
    uint32_t n = a->base.group->n, me = a->base.group->me, l;
    uint32_t p = core_size(n, &l);
    ftc_idset_t want = {0};
    while (a->phase == FTC_AGREE_EARLY) {
        uint64_t got = a->early_round == 1 ? a->early_got1 : a->early_got2;
        uint32_t s = a->early_step;
        if (me >= p) {
            /* An extra member: send to the core member, await the
             * round's result from it. */
            if (s == 0) {
                send_step(a, 0);
                a->early_step = l + 1;
                continue;
            }
            if (!(got & (UINT64_C(1) << s))) {
                if (!ftc_idset_add(&want, partner(a, s)))
                    a->oom = true;
                break;
            }
            if (a->early_round == 1) {
                accept_early(a); /* (early_and: the core member's AND) */
                if (FTC_AGREE_MUTANT == 1)
                    ftc_agree_decide_early(a, a->acc_value);
                continue;
            }
            ftc_agree_decide_early(a, a->acc_value);
            break;
        }
        if (s <= l) {
            uint32_t r = partner(a, s);
            if (r == UINT32_MAX) { /* (step 0 with no extra member) */
                a->early_step++;
                if (a->early_step <= l)
                    send_step(a, a->early_step);
                continue;
            }
            if (!(got & (UINT64_C(1) << s))) {
                if (!ftc_idset_add(&want, r))
                    a->oom = true;
                break;
            }
            a->early_step++;
            if (a->early_step <= l)
                send_step(a, a->early_step);
            continue;
        }
        /* The round is complete here: hand the extra member its end. */
        if (partner(a, l + 1) != UINT32_MAX)
            send_step(a, l + 1);
        if (a->early_round == 1) {
            accept_early(a);
            if (FTC_AGREE_MUTANT == 1)
                ftc_agree_decide_early(a, a->acc_value);
            continue;
        }
        ftc_agree_decide_early(a, a->acc_value);
        break;
    }
    if (a->phase == FTC_AGREE_EARLY)
        ftc_agree_watch(a, &want);
    ftc_idset_free(&want);
}

void ftc_agree_early_on_msg(ftc_agree_t *a, const ftc_wire_header_t *hdr,
                            const uint8_t *payload, uint32_t from)
{
    uint32_t s = hdr->word, l;
    (void)core_size(a->base.group->n, &l);
    bool is_and = hdr->kind == MSG_EARLY_AND;
    if (s > l + 1 || partner(a, s) != from
        || hdr->payload_len != (is_and ? sizeof(uint64_t) : 0)) {
        a->base.group->ctx->counters.dropped_badmsg++;
        return;
    }
    if (a->phase != FTC_AGREE_EARLY)
        return; /* it left the round: the partner was told so */
    uint64_t bit = UINT64_C(1) << s;
    if (is_and) {
        /* At once, even a step ahead: what this member sends then holds
         * more inputs than its block, which changes no final AND. */
        uint64_t v;
        memcpy(&v, payload, sizeof(v));
        a->early_and &= v;
        a->early_got1 |= bit;
    } else {
        a->early_got2 |= bit;
    }
    ftc_agree_early_evaluate(a);
}
