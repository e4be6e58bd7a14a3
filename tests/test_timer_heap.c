/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operations' timers (lib/core/timer.c) and the heap that keeps them
 * (lib/core/timer_heap.c), against a brute-force reference: an array of
 * deadlines searched whole at every step.
 *
 *   1. The heap alone, under random insert, remove (the earliest or any
 *      node), move (remove and insert with a new deadline) with many
 *      equal deadlines: after every step the earliest and the count
 *      match the reference, and the tree is a heap (every node at or
 *      after its parent, the links consistent, every node reached once).
 *   2. The timers through the core's calls (ftc_cop_timer_arm, _cancel,
 *      ftc_ctx_next_op_timer, ftc_ctx_fire_op_timers) on operations
 *      whose hooks re-arm their own timer (for a time past or to come),
 *      cancel or move another operation's, or finish another operation,
 *      under random arm/cancel/finish/fire: a turn fires exactly the
 *      timers armed and due when it began that no earlier hook of the
 *      turn cancelled, moved or finished, each once; a timer armed during
 *      the turn waits for a later turn; a finished operation's timer
 *      never fires; the earliest deadline matches the reference.
 *
 * Seeded (FTC_TEST_SEED, default 1): a failure repeats. Last line:
 * "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "core/timer_heap.h"
#include "check.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

/* ---- 1. the heap ------------------------------------------------------ */

#define HN 200

/* Checks the subtree under x (its parent's deadline is at least) and
 * counts its nodes; false at the first broken link or order. */
static bool subtree_ok(const ftc_timer_node_t *x, uint64_t at_least,
                       const ftc_timer_node_t *prev, uint32_t *count)
{
    for (; x != NULL; prev = x, x = x->next) {
        if (x->at < at_least || x->prev != prev)
            return false;
        if (++*count > HN)
            return false;   /* a cycle */
        if (!subtree_ok(x->child, x->at, x, count))
            return false;
    }
    return true;
}

static void test_heap(uint32_t steps)
{
    ftc_timer_node_t nodes[HN];
    bool in[HN];
    memset(nodes, 0, sizeof nodes);
    memset(in, 0, sizeof in);
    ftc_timer_heap_t h = {NULL, 0};
    uint32_t n = 0;
    uint32_t bad_min = 0, bad_count = 0, bad_shape = 0, pops = 0;
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t i = (uint32_t)below(HN);
        /* Few distinct deadlines: ties are the common case. */
        uint64_t at = 1 + below(s % 2 ? 16 : 1000000);
        switch (below(4)) {
        case 0: /* insert, or move */
        case 1:
            if (in[i])
                ftc_timer_heap_remove(&h, &nodes[i]);
            else
                n++;
            nodes[i].at = at;
            ftc_timer_heap_insert(&h, &nodes[i]);
            in[i] = true;
            break;
        case 2: /* remove any node */
            if (in[i]) {
                ftc_timer_heap_remove(&h, &nodes[i]);
                in[i] = false;
                n--;
            }
            break;
        default: { /* remove the earliest */
            ftc_timer_node_t *m = ftc_timer_heap_min(&h);
            if (m == NULL)
                break;
            uint64_t want = UINT64_MAX;
            for (uint32_t k = 0; k < HN; k++)
                if (in[k] && nodes[k].at < want)
                    want = nodes[k].at;
            if (m->at != want)
                bad_min++;
            ftc_timer_heap_remove(&h, m);
            in[m - nodes] = false;
            n--;
            pops++;
            break;
        }
        }
        uint64_t want = UINT64_MAX;
        for (uint32_t k = 0; k < HN; k++)
            if (in[k] && nodes[k].at < want)
                want = nodes[k].at;
        const ftc_timer_node_t *m = ftc_timer_heap_min(&h);
        if ((m == NULL ? UINT64_MAX : m->at) != want || (m != NULL && !in[m - nodes]))
            bad_min++;
        if (h.n != n)
            bad_count++;
        uint32_t seen = 0;
        if ((m != NULL && (m->prev != NULL || m->next != NULL))
            || !subtree_ok(m, 0, NULL, &seen) || seen != n)
            bad_shape++;
    }
    CHECK_EQ(bad_min, 0);
    CHECK_EQ(bad_count, 0);
    CHECK_EQ(bad_shape, 0);
    CHECK_MSG(pops > steps / 8, "the earliest removed only %u times", pops);
    /* Drained in order. */
    uint64_t last = 0;
    uint32_t out_of_order = 0;
    while (ftc_timer_heap_min(&h) != NULL) {
        ftc_timer_node_t *x = ftc_timer_heap_min(&h);
        if (x->at < last)
            out_of_order++;
        last = x->at;
        ftc_timer_heap_remove(&h, x);
        in[x - nodes] = false;
    }
    CHECK_EQ(out_of_order, 0);
    CHECK_EQ(h.n, 0);
}

/* ---- 2. the operations' timers ---------------------------------------- */

#define ON 40

static ftc_cop_t ops[ON];
static ftc_context_t ctx;
static ftc_group_t group;
/* The reference: each operation's deadline (0: none), finished or not. */
static uint64_t ref_at[ON];
static bool ref_finished[ON];
/* The turn under way: the timers due when it began, and what fired. */
static uint64_t turn_now;
static bool due[ON];
/* Taken out as due when it began, and not since fired, cancelled or
 * armed again: what the turn still holds. */
static bool listed[ON];
static uint32_t fired_count[ON];
static uint32_t bad_fire;        /* fired while not due, cancelled, finished */
static uint32_t hooks_acted;     /* hooks that touched another operation */

static uint32_t index_of(const ftc_cop_t *op)
{
    return (uint32_t)(op - ops);
}

static void ref_arm(uint32_t i, uint64_t at)
{
    if (ref_finished[i])
        return;
    ref_at[i] = at == 0 ? 1 : at;
}

static uint32_t bad_next_in_turn;

static void on_timer(ftc_cop_t *op)
{
    uint32_t i = index_of(op);
    if (!due[i] || ref_finished[i] || fired_count[i] > 0)
        bad_fire++;
    uint64_t fired_at = ref_at[i];
    fired_count[i]++;
    due[i] = false;
    listed[i] = false;
    ref_at[i] = 0;
    /* Asked in a turn (a hook's arm re-arms the transport's timer): the
     * timers the turn still holds count too. It goes through them in
     * deadline order, so a finished one earlier than this one was
     * cancelled already, a later one not yet; one of the same deadline
     * either. */
    uint64_t lo = UINT64_MAX, hi = UINT64_MAX;
    for (uint32_t k = 0; k < ON; k++) {
        uint64_t at = ref_at[k];
        if (at == 0 || (listed[k] && ref_finished[k] && at < fired_at))
            continue;
        if (at < lo)
            lo = at;
        if (!(listed[k] && ref_finished[k] && at == fired_at) && at < hi)
            hi = at;
    }
    uint64_t next = ftc_ctx_next_op_timer(&ctx);
    if (next != lo && next != hi)
        bad_next_in_turn++;
    /* What hooks do: arm their own timer again, for a time past (which
     * must wait for a later turn) or to come; cancel, move or finish
     * another operation (which may be due in this turn). */
    uint32_t j = (uint32_t)below(ON);
    switch (below(6)) {
    case 0: {
        uint64_t at = below(2) ? turn_now - below(turn_now) : turn_now + 1 + below(100);
        ftc_cop_timer_arm(op, at);
        ref_arm(i, at);
        break;
    }
    case 1:
        ftc_cop_timer_cancel(&ops[j]);
        ref_at[j] = 0;
        due[j] = false;
        listed[j] = false;
        hooks_acted++;
        break;
    case 2: {
        uint64_t at = 1 + below(2 * turn_now + 2);
        ftc_cop_timer_arm(&ops[j], at);
        ref_arm(j, at);
        /* Armed during the turn: not this turn's, whatever its time. */
        due[j] = false;
        if (!ref_finished[j])
            listed[j] = false;
        hooks_acted++;
        break;
    }
    case 3:
        /* Finished but still armed (ftc_cop_finish cancels; a family may
         * finish first): its timer must not fire. */
        ops[j].finished = true;
        ref_finished[j] = true;
        due[j] = false;
        hooks_acted++;
        break;
    default:
        break;
    }
}

static const ftc_cop_vtable_t vt = {.on_timer = on_timer};

static uint64_t ref_earliest(void)
{
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < ON; i++)
        if (ref_at[i] != 0 && ref_at[i] < d)
            d = ref_at[i];
    return d;
}

static void test_op_timers(uint32_t steps)
{
    memset(&ctx, 0, sizeof ctx);
    memset(&group, 0, sizeof group);
    group.ctx = &ctx;
    /* Inside a settle, arming does not re-arm the transport's timer (no
     * transport here): the core's own path when hooks run. */
    ctx.settling = true;
    for (uint32_t i = 0; i < ON; i++) {
        memset(&ops[i], 0, sizeof ops[i]);
        ops[i].vt = &vt;
        ops[i].group = &group;
    }
    memset(ref_at, 0, sizeof ref_at);
    memset(ref_finished, 0, sizeof ref_finished);
    uint64_t now = 1000;
    uint32_t bad_next = 0, bad_count = 0, bad_missed = 0, bad_state = 0;
    uint32_t turns = 0, fired = 0, rearmed_past = 0;
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t i = (uint32_t)below(ON);
        switch (below(8)) {
        case 0:
        case 1:
        case 2: { /* arm or move, often at the same time as others */
            uint64_t at = now + below(3) * 10 + below(s % 3 == 0 ? 200 : 3);
            if (below(8) == 0)
                at = now - below(now);       /* already past */
            ftc_cop_timer_arm(&ops[i], at);
            ref_arm(i, at);
            break;
        }
        case 3: /* cancel */
            ftc_cop_timer_cancel(&ops[i]);
            ref_at[i] = 0;
            break;
        case 4: /* an operation ends, its block is reused */
            if (below(4) == 0) {
                ftc_cop_timer_cancel(&ops[i]);
                ref_at[i] = 0;
                ops[i].finished = false;
                ref_finished[i] = false;
            }
            break;
        default: { /* a timer turn */
            now += below(60);
            turn_now = now;
            for (uint32_t k = 0; k < ON; k++) {
                listed[k] = ref_at[k] != 0 && ref_at[k] <= now;
                due[k] = listed[k] && !ref_finished[k];
                fired_count[k] = 0;
            }
            ftc_ctx_fire_op_timers(&ctx, now);
            turns++;
            for (uint32_t k = 0; k < ON; k++) {
                /* Taken out as due, finished by a hook before its turn
                 * came: cancelled unfired. */
                if (listed[k] && ref_finished[k])
                    ref_at[k] = 0;
                fired += fired_count[k];
                if (due[k])
                    bad_missed++;       /* due, untouched, not fired */
            }
            break;
        }
        }
        if (ftc_ctx_next_op_timer(&ctx) != ref_earliest())
            bad_next++;
        uint32_t armed = 0;
        for (uint32_t k = 0; k < ON; k++) {
            if (ref_at[k] != 0)
                armed++;
            if (ops[k].timer.at != ref_at[k]) {
                bad_state++;
            }
            if (ref_at[k] != 0 && ref_at[k] < now)
                rearmed_past++;
        }
        if (ctx.timer_ops != armed || ctx.timers.n != armed || ctx.timers_due != NULL)
            bad_count++;
    }
    CHECK_EQ(bad_fire, 0);
    CHECK_EQ(bad_missed, 0);
    CHECK_EQ(bad_next, 0);
    CHECK_EQ(bad_next_in_turn, 0);
    CHECK_EQ(bad_state, 0);
    CHECK_EQ(bad_count, 0);
    /* The sequences did what they are for. */
    CHECK_MSG(turns > steps / 4 && fired > steps / 8,
              "%u turns fired %u timers", turns, fired);
    CHECK_MSG(hooks_acted > 100, "hooks touched others %u times", hooks_acted);
    CHECK_MSG(rearmed_past > 100, "deadlines already past seen %u times",
              rearmed_past);
    for (uint32_t k = 0; k < ON; k++)
        ftc_cop_timer_cancel(&ops[k]);
    CHECK_EQ(ctx.timer_ops, 0);
    CHECK(ftc_timer_heap_min(&ctx.timers) == NULL);
}

int main(void)
{
    const char *seed = getenv("FTC_TEST_SEED");
    rng_state = seed != NULL ? strtoull(seed, NULL, 0) : 1;
    test_heap(200000);
    test_op_timers(200000);
    return check_report();
}
