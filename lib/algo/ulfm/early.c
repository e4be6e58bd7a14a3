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
 *
 * The same with radix k > 2 (FTC_AGREE_ROUND_RD4: k = 4): p is the
 * largest power of k <= n, step s exchanges with the k - 1 members whose
 * base-k digit s - 1 differs, and up to k - 1 extra members r + p,
 * r + 2p, ... fold into r. The argument above holds as it is: a member
 * completes step s of round 2 only once every member of its block of k^s
 * (and their extras) accepted. With FTC_AGREE_ROUND_TREE (radix 1 here)
 * there is no early round: every member leaves it as it starts, and the
 * ballots decide in four tree waves.
 */
#include "algo/ulfm/agree.h"
#include "algo/ulfm/kinds.h"

/* Mutants the checker must reject (tests/meson.build builds them): 1
 * delivers at the end of round 1, with no round 2. 0 in the library. */
#ifndef FTC_AGREE_MUTANT
#define FTC_AGREE_MUTANT 0
#endif

/* Radix of the exchanges (a->radix, the group's choice): 2 is recursive
 * doubling; k > 2 exchanges with k - 1 partners at each step (the members
 * that differ in one base-k digit), so a round takes log_k p steps
 * instead of log2 p, at the price of (k - 1) log_k p messages per member
 * instead of log2 p; 1 is no early round at all. */

/* The round's shape at this member: radix k, the core's size p (the
 * largest power of k <= n) and log_k p = l. The members from p on are
 * extras: member r folds into r mod p at step 0 and gets the result
 * from it at step l + 1. */
typedef struct early_shape {
    uint32_t n, me, k, p, l;
} early_shape_t;

static void shape_for(early_shape_t *sh, uint32_t k)
{
    sh->k = k;
    sh->p = 1;
    sh->l = 0;
    while (sh->p <= sh->n / k) {
        sh->p *= k;
        sh->l++;
    }
}

static early_shape_t shape(const ftc_agree_t *a)
{
    early_shape_t sh = {.n = a->base.group->n, .me = a->base.group->me};
    /* No radix above n (one step with every other member is the most a
     * round can take in), and every step's partners must have a bit in
     * early_got1/2: (l + 2) (k - 1) <= 64. */
    uint32_t k = a->radix < sh.n ? a->radix : sh.n;
    if (k < 2)
        k = 2;
    for (shape_for(&sh, k); k > 2 && (sh.l + 2) * (k - 1) > 64;
         shape_for(&sh, k))
        k--;
    return sh;
}

/* The j-th partner (j < k - 1) of this member at step s, or UINT32_MAX
 * if none. For k = 2, j = 0: r XOR 2^(s - 1), and r +- p at the ends. */
static uint32_t partner(const early_shape_t *sh, uint32_t s, uint32_t j)
{
    if (sh->me >= sh->p)
        return (s == 0 || s == sh->l + 1) && j == 0 ? sh->me % sh->p
                                                     : UINT32_MAX;
    if (s == 0 || s == sh->l + 1) {
        uint64_t r = sh->me + (uint64_t)(j + 1) * sh->p;
        return r < sh->n ? (uint32_t)r : UINT32_MAX;
    }
    if (s > sh->l)
        return UINT32_MAX;
    uint32_t w = 1;
    for (uint32_t i = 1; i < s; i++)
        w *= sh->k;
    uint32_t digit = sh->me / w % sh->k;
    uint32_t d = j < digit ? j : j + 1; /* the other digits, in order */
    return sh->me - digit * w + d * w;
}

/* Bit of (step s, partner j) in early_got1/2. */
static uint64_t got_bit(const early_shape_t *sh, uint32_t s, uint32_t j)
{
    return UINT64_C(1) << (s * (sh->k - 1) + j);
}

/* Whether every partner of step s was heard from in got; if not, the
 * missing ones go to want. */
static bool step_complete(const ftc_agree_t *a, const early_shape_t *sh,
                          uint32_t s, uint64_t got, ftc_idset_t *want)
{
    bool done = true;
    for (uint32_t j = 0; j + 1 < sh->k; j++) {
        uint32_t r = partner(sh, s, j);
        if (r == UINT32_MAX || (got & got_bit(sh, s, j)))
            continue;
        done = false;
        if (!ftc_idset_add(want, r))
            ((ftc_agree_t *)a)->oom = true;
    }
    return done;
}

bool ftc_agree_early_partners(const ftc_agree_t *a, ftc_idset_t *out)
{
    if (a->radix == 1)
        return true;
    early_shape_t sh = shape(a);
    for (uint32_t s = 0; s <= sh.l + 1; s++)
        for (uint32_t j = 0; j + 1 < sh.k; j++) {
            uint32_t r = partner(&sh, s, j);
            if (r != UINT32_MAX && !ftc_idset_add(out, r))
                return false;
        }
    return true;
}

static void send_step(ftc_agree_t *a, const early_shape_t *sh, uint32_t s)
{
    for (uint32_t j = 0; j + 1 < sh->k; j++) {
        uint32_t to = partner(sh, s, j);
        if (to == UINT32_MAX)
            continue;
        if (a->early_round == 1)
            ftc_agree_send(a, to, MSG_EARLY_AND, s, &a->early_and,
                           sizeof(a->early_and));
        else
            ftc_agree_send(a, to, MSG_EARLY_CONFIRM, s, NULL, 0);
    }
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
    if (ftc_group_failed(a->base.group, NULL, 0) > 0
        || a->radix == 1)
        ftc_agree_leave_early(a);
}

void ftc_agree_early_evaluate(ftc_agree_t *a)
{
    if (!a->ready)
        return; /* (what arrives is kept until the input comes) */
    early_shape_t sh = shape(a);
    uint32_t l = sh.l;
    ftc_idset_t want = {0};
    while (a->phase == FTC_AGREE_EARLY) {
        uint64_t got = a->early_round == 1 ? a->early_got1 : a->early_got2;
        uint32_t s = a->early_step;
        if (sh.me >= sh.p) {
            /* An extra member: send to the core member, await the
             * round's result from it. */
            if (s == 0) {
                send_step(a, &sh, 0);
                a->early_step = l + 1;
                continue;
            }
            if (!step_complete(a, &sh, s, got, &want))
                break;
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
            /* Step s is done once each of its partners was heard from
             * (none: step 0 with no extra member); then step s + 1's
             * messages go out. */
            if (!step_complete(a, &sh, s, got, &want))
                break;
            a->early_step++;
            if (a->early_step <= l)
                send_step(a, &sh, a->early_step);
            continue;
        }
        /* The round is complete here: hand the extra members its end. */
        send_step(a, &sh, l + 1);
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
    early_shape_t sh = shape(a);
    uint32_t s = hdr->word, j = 0;
    bool is_and = hdr->kind == MSG_EARLY_AND;
    while (s <= sh.l + 1 && j + 1 < sh.k && partner(&sh, s, j) != from)
        j++;
    if (s > sh.l + 1 || j + 1 >= sh.k
        || hdr->payload_len != (is_and ? sizeof(uint64_t) : 0)) {
        a->base.group->ctx->counters.dropped_badmsg++;
        return;
    }
    if (a->phase != FTC_AGREE_EARLY)
        return; /* it left the round: the partner was told so */
    uint64_t bit = got_bit(&sh, s, j);
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
