/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip operation all three algorithms share: the neighbour links,
 * one iteration per period of transport time (choose a partner, push),
 * the local convergence test, delivery, and the lingering end that lets
 * every process stop without global synchronisation.
 *
 * Ending. A process that delivered keeps iterating, but only towards the
 * neighbours that still need it: a neighbour needs nothing more once it
 * has said both that it delivered (DONE) and that it saw our DONE
 * (SAW_DONE). A message says whether its sender still waits so (WANT),
 * or, in push-flow, waits for the echo that lets it push again.
 * When it waits for no live neighbour, the process stops iterating and
 * lingers: it answers any message with WANT with a sync (its flows, no
 * mass moved), so a neighbour whose last message was lost still hears
 * DONE and SAW_DONE. The core retires the lingerer after later
 * collectives, or the context's end frees it. A delivered process gives
 * up waiting after max_iterations further iterations (a neighbour that
 * never answers and is never reported failed).
 *
 * After delivery a process gossips again only to spread mass a failure
 * displaced (maybe_wake), for a bounded time; the messages that merely
 * move its estimate never make it push on its own again. They used to,
 * whenever the estimate moved by more than the target, and push-flow's
 * estimates kept moving by that much where links hold several messages
 * each way (every crossing adopted a stale flow, before push_flow.c
 * resolved crossings at the link's lower rank): delivered processes
 * pushed to everyone and woke each other until they gave up at
 * 2 * max_iterations, a storm of 40 000 messages per process in the
 * simulator with 20 us links and up to a million in a libfabric job.
 * Besides its own push each period to a neighbour that has not
 * delivered, it answers that neighbour's pushes with pushes, so a last
 * process is not drained by its delivered neighbours (gossip_on_msg).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/gossip/gossip.h"
#include "algo/gossip/kinds.h"
#include "algo/gossip/neighbours.h"

/*
 * What an iteration must receive to count towards the local test: this
 * fraction of a process's share of the weight. A push moves half of the
 * sender's mass, estimate and weight alike, so pushing never changes the
 * sender's estimate. A process whose neighbours do not push back for a
 * while (descheduled on a loaded host, or at the end of a long round
 * trip) halves its mass every period, and with it the weight, while its
 * estimate stays what it was; messages that move nothing (a neighbour's
 * sync, or the flow it already adopted), or the crumbs two such drained
 * processes push to each other, kept its test counting. Over real
 * processes two such processes delivered their early estimate (20 %
 * off) or, drained to 2^-55 of their weight, rounding noise (0), and at a
 * 1e-15 target a partly drained one delivered its estimate to 1e-12 (the
 * estimate is a difference of flows divided by a weight that small).
 * Converged processes exchange about half a share per push, far above
 * this. Where links are ten or more periods long most of the mass is in
 * flight and a process often holds little; what it pushed and nobody has
 * applied yet is accounted for by the echoes (all_settled), and the
 * period should still exceed the round trip (docs/gossip.md, "Links
 * slower than the period").
 */
#define RECEIVED_MIN (1.0 / 64)

static ftc_gossip_observer_fn observer;
static void *observer_arg;

static ftc_gossip_tick_fn tick_observer;
static void *tick_observer_arg;

void ftc_gossip_set_tick_observer(ftc_gossip_tick_fn fn, void *arg)
{
    tick_observer = fn;
    tick_observer_arg = arg;
}

void ftc_gossip_set_observer(ftc_gossip_observer_fn fn, void *arg)
{
    observer = fn;
    observer_arg = arg;
}

bool ftc_gossip_estimate(uint32_t m, const double *e, double *est)
{
    double w = e[m - 1];
    if (!(w > 0.0))
        return false;
    for (uint32_t k = 0; k + 1 < m; k++)
        est[k] = e[k] / w;
    return true;
}

static uint32_t world(const ftc_gossip_op_t *g, uint32_t grank)
{
    return ftc_group_world_rank(g->base.group, grank);
}

static ftc_gossip_link_t *link_of(ftc_gossip_op_t *g, uint32_t grank)
{
    uint32_t lo = 0, hi = g->nlinks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->links[mid].peer < grank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->nlinks && g->links[lo].peer == grank ? &g->links[lo] : NULL;
}

/* A message's bytes: the algorithm's payload, then the echo trailer
 * (echo.h). */
static size_t msg_len(const ftc_gossip_rules_t *rules, uint32_t m)
{
    return rules->payload_len(m) + FTC_GOSSIP_ECHO_LEN;
}

/* Whether we still wait for l's neighbour: for its DONE, or for its word
 * that it saw ours. */
static bool waiting_on(const ftc_gossip_link_t *l)
{
    return l->alive && !(l->peer_done && l->peer_saw_done);
}

/* Iterations of estimates kept for deviation(): several times a long
 * link's round trip in periods (forty at 200 us links and a 10 us
 * period; an echo also waits for the neighbour to pick us, and a lost
 * message for the next one), fewer for long vectors so that the history
 * stays within 64 KiB. A push older than that is held to its drift, the
 * bound. With 64 iterations, links 10 to 20 periods long (ftcoll-sim
 * --latency-ns 100000 --jitter-ns 100000 --loss 0.05 -n 6, PCF) held
 * one run of 30 to its drift long enough to reach the cap. */
static uint32_t history_len_for(uint32_t count)
{
    if (count == 0)
        return 0;
    uint32_t len = 8192 / count;
    return len > 256 ? 256 : len > 0 ? len : 1;
}

static void history_record(ftc_gossip_op_t *g, bool have)
{
    uint32_t count = g->m - 1;
    if (g->history_len == 0)
        return;
    double *slot = g->history
                   + (size_t)(g->iterations % g->history_len) * count;
    if (have)
        memcpy(slot, g->est, sizeof(double) * count);
    else
        slot[0] = NAN;
}

/* The largest change from then to now over count elements, relative to
 * now's largest magnitude (absolute when now is all zeros): the measure
 * of the local test, of a push's distance and of a delivered process's
 * wake-up. A NaN (a corrupted flow) counts as no convergence. */
static double relative_change(const double *now, const double *then,
                              uint32_t count)
{
    double change = 0.0, size = 0.0;
    for (uint32_t k = 0; k < count; k++) {
        double d = fabs(now[k] - then[k]);
        double s = fabs(now[k]);
        change = d > change || d != d ? d : change;
        size = s > size ? s : size;
    }
    return size > 0.0 ? change / size : change;
}

/* How far (relative, largest element) the estimate of iteration
 * `iteration` is from the estimate now, if both are known; else the
 * drift. Exact where the drift, a sum of per-iteration changes, would
 * add up a process's noise: on links many periods long most of the
 * mass is in flight, a process holds little, and its estimate swings
 * back and forth by far more than the target (echo.h). */
static double deviation(const void *ctx, uint32_t iteration, float drift)
{
    const ftc_gossip_op_t *g = ctx;
    uint32_t count = g->m - 1;
    uint32_t age = (uint32_t)g->iterations - iteration;
    if (count == 0)
        return 0.0;
    if (!g->have_est || age >= g->history_len)
        return drift;
    const double *then = g->history
                         + (size_t)(iteration % g->history_len) * count;
    if (then[0] != then[0])
        return drift;
    return relative_change(g->est, then, count);
}

/*
 * How far the aggregate may move when the pushes our neighbours have not
 * echoed yet land, relative to target: SETTLED_SHIFT * target. One
 * target (the local test's own step) held PCF with links 10 to 20
 * periods long at the iteration cap in 1 run of 10, where mass is always
 * in flight and pushes made while the estimate still moved by 1e-12
 * keep landing; 4 passed 30 of 30, within the checker's 4 n * target.
 */
#define SETTLED_SHIFT 4.0

/*
 * What a process must have in flight to say UNSETTLED, relative to
 * target: sixteen times what stops its own delivery. The flag stops
 * every neighbour, and it is stale when it arrives (how the sender stood
 * when it last picked us, a degree's worth of periods ago): at the
 * threshold above, flags that flickered while every estimate still moved
 * by 1e-15 held back an operation of example-dmgs-qr (n = 64, target
 * 1e-15) until its 1500-iteration cap. The case the flag exists for
 * parked 3.6 shares of weight 1e-9 off, far above either.
 */
#define UNSETTLED_SHIFT (16 * SETTLED_SHIFT)

/* Whether the pushes our neighbours have not echoed yet can move the
 * aggregate by no more than SETTLED_SHIFT * target once they land: the
 * sum over them of the weight each moved times how far its ratio (our
 * estimate when we sent it) is from our estimate now (echo.h), against
 * the total weight. Such mass is in no estimate yet: it is on the wire,
 * or a PCF leader ignored it and will give it back with its round
 * change. A push made since the estimate stopped moving carries mass at
 * the estimate's ratio and counts for nothing, however long it travels:
 * on links ten periods long most of the mass is always in flight. A
 * push made without an estimate (no positive weight) moved no weight
 * worth counting and is not remembered. The case it closes: a PCF
 * follower whose leader had started a round the loss kept from it
 * pushed half its mass, time after time, onto a flow the leader
 * ignored, until 60 % of the weight of n = 8 was parked there, pushed
 * before the follower's estimate settled (docs/gossip.md, "the local
 * convergence test"). */
static bool settled_within(const ftc_gossip_op_t *g, double shift)
{
    double offset = 0.0;
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (g->links[i].alive)
            offset += ftc_gossip_echo_offset(&g->links[i].echo, deviation, g);
    return offset <= shift * g->target * g->weight_unit * g->base.group->n;
}

/* Whether l's uncancelled flows (s_f, w_f) are within bound of our
 * estimate's ratio: |s_f - est * w_f| <= bound in every element. */
static bool link_flow_settled(const ftc_gossip_op_t *g,
                              const ftc_gossip_link_t *l, double bound)
{
    uint32_t count = g->m - 1;
    const double *f = l->f, *p = l->f + g->m;
    double w = f[count] + p[count];
    for (uint32_t k = 0; k < count; k++)
        if (!(fabs(f[k] + p[k] - g->est[k] * w) <= bound))
            return false;
    return true;
}

static bool all_settled(const ftc_gossip_op_t *g)
{
    return settled_within(g, SETTLED_SHIFT);
}

/* shift * target relative to the estimate's largest element (absolute
 * when it is all zeros, as the local test), times the total weight (n
 * shares), shared among the live links. */
static double flow_bound(const ftc_gossip_op_t *g, double shift)
{
    double size = 0.0;
    for (uint32_t k = 0; k + 1 < g->m; k++)
        size = fabs(g->est[k]) > size ? fabs(g->est[k]) : size;
    return shift * g->target * (size > 0.0 ? size : 1.0) * g->weight_unit
           * g->base.group->n / g->nalive;
}

/*
 * PCF: whether excluding any live neighbour now would move the
 * aggregate by no more than shift * target. Exclusion sets the link's
 * two flows to zero, which gives back to this process what they hold
 * and was not cancelled yet, (s_f, w_f); the survivors' ratio X then
 * becomes (S + s_f) / (W + w_f), a change of (s_f - X w_f) / (W + w_f).
 * With X taken as our estimate and W as the total weight (n shares),
 * each link may move it by shift * target / degree: a failed process's
 * degree links together (on a regular graph) then move the value by
 * about shift * target, like the mass in flight above. Flows pushed
 * since the estimate settled are at its ratio and count for nothing;
 * what can be far off is a round that spans the convergence: on the
 * full graph a link is written about once in n - 1 periods, and in a
 * run of n = 32 with a late crash one link still held 3.67 shares at a
 * ratio 2.2e-3 off when its neighbour crashed after others had
 * delivered, and the survivors' value moved 1.4e-4 (docs/gossip.md,
 * "Late failures"). The process with such a link is seldom the one
 * about to deliver, so it also says UNSETTLED while a link is sixteen
 * times further off (send_flagged), and its neighbours wait: without the
 * flag, the local rule alone still let 4 of 40 runs on the full graph of
 * 16 deliver up to 9e-7 off. Push-flow's single flow is its whole
 * history, and EXCLUDE_ALL gives back the cancelled flows too: both fall
 * back by design, and the rule does not apply to them.
 */
static bool flows_settled_within(const ftc_gossip_op_t *g, double shift)
{
    if (g->rules->link_flows != 2
        || g->params.exclusion == FTC_GOSSIP_EXCLUDE_ALL || !g->have_est
        || g->nalive == 0)
        return true;
    double bound = flow_bound(g, shift);
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (g->links[i].alive && !link_flow_settled(g, &g->links[i], bound))
            return false;
    return true;
}

/* Whether a live neighbour's latest message said UNSETTLED: its own
 * unechoed pushes could still move the aggregate. Our echoes do not show
 * mass that a neighbour parked elsewhere: in the case above the follower
 * knew and waited, but three others that agreed with each other (and
 * with it) delivered a value 4e-10 off. A neighbour whose own pushes
 * have not landed has not agreed yet. */
static bool neighbour_unsettled(const ftc_gossip_op_t *g)
{
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (g->links[i].alive && g->links[i].peer_unsettled)
            return true;
    return false;
}

/* paced: the iteration's own message, which must leave before the next
 * one to the same neighbour is made (see can_push). */
static void send_flagged(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push,
                         unsigned extra_flags, bool paced)
{
    ftc_cop_t *op = &g->base;
    bool held = push && g->rules->may_push != NULL && !g->rules->may_push(g, l);
    if (held)
        push = false;
    g->rules->mass(g, g->scratch);
    double before = g->scratch[g->m - 1];
    g->rules->build(g, l, push, g->msg);
    g->rules->mass(g, g->scratch);
    l->wrote_at = g->iterations;
    ftc_gossip_echo_write(&l->echo,
                          g->have_est && before > 0.0
                              ? before - g->scratch[g->m - 1] : 0.0,
                          (uint32_t)g->iterations,
                          g->msg + g->rules->payload_len(g->m));
    ftc_wire_header_t hdr;
    ftc_cop_header(op, &hdr, FTC_GOSSIP_MSG_FLOW, 0);
    hdr.flags |= extra_flags;
    if (op->delivered)
        hdr.flags |= FTC_GOSSIP_WF_DONE;
    if (l->peer_done)
        hdr.flags |= FTC_GOSSIP_WF_SAW_DONE;
    if (!push)
        hdr.flags |= FTC_GOSSIP_WF_SYNC;
    /* A push held for the echo of our previous one (push-flow) asks for
     * that echo from a neighbour that has delivered: it may have
     * stopped, and a stopped process answers only a push or WANT. It
     * may also have taken our last push in while it was still
     * iterating and stopped without writing back; then the echo never
     * came, every later push to it became a sync that nobody answered,
     * and the mass it held stayed out of everyone else's estimate for
     * good (push-flow's exhaustive sweep, ring of 6 and 7 after a late
     * crash: 7 schedules delivered up to 3.3e-10 off). */
    if (waiting_on(l) || (held && l->peer_done))
        hdr.flags |= FTC_GOSSIP_WF_WANT;
    if (!op->delivered
        && (!settled_within(g, UNSETTLED_SHIFT)
            || !flows_settled_within(g, UNSETTLED_SHIFT)))
        hdr.flags |= FTC_GOSSIP_WF_UNSETTLED;
    ftc_iov_t iov = {g->msg, msg_len(g->rules, g->m)};
    if (paced) {
        bool left = true;
        (void)ftc_cop_send_timed(op, l->peer, &hdr, &iov, 1, &left);
        l->unsent = !left;
    } else {
        (void)ftc_cop_send(op, l->peer, &hdr, &iov, 1, false);
    }
}

static void send_to(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push)
{
    send_flagged(g, l, push, 0, true);
}

/*
 * Pacing: an iteration pushes only to a neighbour that has taken the
 * last push (the transport completed it). A link's newest message holds
 * everything its older ones did (the flows are totals), so a push queued
 * behind another adds latency and nothing else. Without this an
 * iteration every period_ns queued pushes as fast as the clock allowed
 * whatever the link carried: over UCX shared memory with the default
 * 64-element FIFO, on a loaded host, hundreds of sends waited in UCX per
 * peer, links became hundreds of periods long, and operations stopped
 * converging (docs/gossip.md, "Real processes"). A transport that
 * completes sends at once (the loopback, a FIFO with room) is never held.
 * Answers to a neighbour's message are not paced: there is one per
 * message received.
 */
static bool can_push(const ftc_gossip_link_t *l)
{
    return !l->unsent;
}


static void release_watches(ftc_gossip_op_t *g)
{
    ftc_context_t *ctx = g->base.group->ctx;
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (g->links[i].alive && g->links[i].watched) {
            g->links[i].watched = false;
            ftc_monitor_release(ctx, world(g, g->links[i].peer));
        }
    if (g->watching_root) {
        g->watching_root = false;
        ftc_monitor_release(ctx, world(g, g->base.args.root));
    }
}

/* No duties left: stop iterating, keep answering (see the top). */
static void stop(ftc_gossip_op_t *g)
{
    if (!g->ticking)
        return;
    g->ticking = false;
    ftc_cop_timer_cancel(&g->base);
    release_watches(g);
    ftc_cop_linger(&g->base);
}

static void maybe_stop(ftc_gossip_op_t *g)
{
    if (!g->base.delivered || !g->ticking || g->recovering)
        return;
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (waiting_on(&g->links[i]))
            return;
    stop(g);
}

static void write_result(ftc_gossip_op_t *g)
{
    ftc_cop_t *op = &g->base;
    uint32_t count = g->m - 1;
    if (op->args.recvbuf == NULL)
        return;
    if (op->args.dtype == FTC_DOUBLE) {
        memcpy(op->args.recvbuf, g->est, sizeof(double) * count);
    } else {
        float *out = op->args.recvbuf;
        for (uint32_t k = 0; k < count; k++)
            out[k] = (float)g->est[k];
    }
}

/* Whether this process knows that some process failed: it lost a
 * neighbour, its context was told of a failure, or a neighbour's push
 * said RECOVER (mass a failure displaced reached it: how a process that
 * no failure report reaches hears of one). */
static bool knows_of_failure(const ftc_gossip_op_t *g)
{
    return g->lost > 0 || g->displaced || g->base.group->ctx->nfailed > 0;
}

/*
 * PCF with EXCLUDE_FLOWS: whether no estimate exists, so the process
 * ends with FTC_EPEER_FAILED instead of running to max_iterations. What
 * was cancelled with a failed neighbour stays written off, and after an
 * early failure that can leave the survivors' weight W' (V's
 * denominator, docs/gossip.md "Node failure") zero or negative. Once
 * every survivor has excluded the failed ones, W' is what they hold
 * together, and gossip drives every process's weight to its share of
 * W', with W''s sign: a process whose weight stays non-positive after
 * it learned of a failure is looking at W' <= 0, and no value exists.
 * Right after an exclusion a process's weight can be negative for a
 * while although W' is positive (the others have not excluded yet, or
 * the give-back has not mixed): over 520 runs with two crashes
 * (ftcoll-sim --crashes 2: n = 16 full, windows 250 and 600, 200 seeds
 * each; n = 32 full and n = 64 full and hypercube, 40 each) the longest
 * such stretch before delivery where W' > 0 was 71 iterations, 4.4
 * local-test windows (n = 16), where processes of runs with W' < 0 stayed
 * weightless for thousands, to the cap. So WEIGHTLESS_WINDOWS windows
 * of the local test in a row, counted again from each failure this
 * process learns of. Before, nothing ended such a process before the
 * cap: 20000 iterations of work for a value that does not exist.
 * Push-flow, push-sum and EXCLUDE_ALL write nothing off: their
 * survivors' weight stays positive.
 */
#define WEIGHTLESS_WINDOWS 8

static bool no_estimate_exists(const ftc_gossip_op_t *g)
{
    return g->rules->link_flows == 2
           && g->params.exclusion != FTC_GOSSIP_EXCLUDE_ALL
           && g->weightless >= WEIGHTLESS_WINDOWS * g->stable_needed;
}

static void deliver(ftc_gossip_op_t *g, bool converged)
{
    ftc_cop_t *op = &g->base;
    if (op->delivered)
        return;
    if (g->params.report != NULL) {
        ftc_gossip_report_t *rep = g->params.report;
        rep->iterations = g->iterations;
        rep->error_estimate = g->have_est ? g->err : INFINITY;
        rep->converged = !converged ? FTC_GOSSIP_AT_CAP
                         : g->floor_used > 0.0 ? FTC_GOSSIP_AT_FLOOR
                                               : FTC_GOSSIP_AT_TARGET;
        /* At the floor: the largest change above the target that the
         * floor let count as quiet since the estimate last moved. */
        if (converged && g->floor_used > rep->error_estimate)
            rep->error_estimate = g->floor_used;
        rep->neighbours_lost = g->lost;
    }
    g->delivered_at = g->iterations;
    g->rules->mass(g, g->scratch);
    if (!ftc_gossip_estimate(g->m, g->scratch, g->est)) {
        /* No positive weight here: none ever arrived (FTC_ETIMEDOUT), or
         * a failure took it, here or elsewhere in the component (PCF's
         * exclusion of flows after an early failure: FTC_EPEER_FAILED,
         * no_estimate_exists). There is no estimate to give. */
        if (g->params.report != NULL)
            g->params.report->converged = 0;
        bool failure = knows_of_failure(g);
        ftc_cop_complete(op, failure ? FTC_EPEER_FAILED : FTC_ETIMEDOUT);
        return;
    }
    write_result(g);
    ftc_cop_complete(op, FTC_OK);
}

/* A push about to outlive the history of estimates gets, as its drift,
 * its exact distance from the estimate now, if that is smaller: from
 * then on the drift adds up the changes since now, still a bound on how
 * far the push's ratio is from the estimate. Without this the drift kept
 * every change since the push, and an infinite one for an iteration
 * without positive weight (PCF's exclusion of a crashed neighbour's
 * flows leaves some processes negative for an iteration now and then,
 * long after the crash). On the full graph of 128 with two crashes an
 * echo takes a degree's worth of iterations and more, beyond the 256
 * of history, so such pushes counted as infinitely far until echoed,
 * their senders said UNSETTLED, and with a hundred neighbours one of
 * them nearly always did: no process delivered before the cap
 * (docs/gossip.md, "Mass in flight"). */
static void anchor_aging_pushes(ftc_gossip_op_t *g)
{
    if (g->history_len == 0)
        return;
    for (uint32_t i = 0; i < g->nlinks; i++) {
        ftc_gossip_echo_t *e = &g->links[i].echo;
        for (uint32_t k = 0; k < e->nunechoed; k++) {
            ftc_gossip_unechoed_t *u = &e->unechoed[k];
            if ((uint32_t)g->iterations - u->iteration + 1 != g->history_len)
                continue;
            double d = deviation(g, u->iteration, u->drift);
            /* Rounded to float, never below d (the library links no
             * libm): a float is within 2^-24 of the double it rounds. */
            float up = (float)(d * (1.0 + 0x1p-22));
            if (d == d && up < u->drift)
                u->drift = up;
        }
    }
}

/* How far above its arithmetic's rounding floor (push_flow.c,
 * pf_rounding_floor) a change of the estimate must be to count as a move.
 * Push-flow on the full graph of 64 (docs/gossip.md, "Push-flow's
 * rounding floor"): once converged, the estimate moved by more than the
 * floor in 0.7 % of the iterations, twice the floor in 0.17 %, four
 * times in 0.04 %; the local test wants a window plus a push from each of
 * 63 neighbours (about 300 iterations) without a move, which a 1 %
 * chance per iteration nearly never allows. */
#define FLOOR_FACTOR 4.0

/* The change of the estimate above which an iteration counts as a move:
 * the target, or, where the algorithm's rounding keeps its estimate from
 * resolving that (push-flow whose flows have grown with the run's
 * history, on a graph of high degree), FLOOR_FACTOR times that floor.
 * Without this a push-flow process whose target lies below its floor
 * never passes the test and runs to max_iterations (the full graph of 64
 * at the default 1e-14: every run), to an estimate no better than the
 * floor. e: the mass est was computed from. */
static double quiet_threshold(const ftc_gossip_op_t *g, const double *e,
                              const double *est)
{
    if (g->rules->rounding_floor == NULL)
        return g->target;
    double floor = FLOOR_FACTOR * g->rules->rounding_floor(g, e, est);
    return floor > g->target ? floor : g->target;
}

/* The local convergence test, once per iteration: the estimate's largest
 * change since the previous iteration, relative to its largest element
 * (absolute when the estimate is all zeros). A change above the target
 * starts the count again; only iterations into which mass came count
 * towards it (see RECEIVED_MIN): a process that heard nothing learned
 * nothing, and its unchanged estimate says nothing about convergence. */
static void convergence_step(ftc_gossip_op_t *g)
{
    uint32_t count = g->m - 1;
    g->rules->mass(g, g->scratch);
    if (!ftc_gossip_estimate(g->m, g->scratch, g->est)) {
        /* No positive weight (yet, or for now: zeroing a failed
         * neighbour's flows can leave a process negative until its
         * neighbours refill it): nothing has converged. */
        g->received = false;
        g->stable_count = 0;
        g->floor_used = 0.0;
        g->have_est = false;
        /* Counted once the process had an estimate: a sum's process
         * that weight never reached yet has nothing to look at. */
        if (g->had_est && knows_of_failure(g))
            g->weightless++;
        /* The pushes' drift bridges the gap when an estimate returns
         * (below); only before the first estimate is it unbounded. */
        if (!g->had_est)
            for (uint32_t i = 0; i < g->nlinks; i++)
                ftc_gossip_echo_drift(&g->links[i].echo, INFINITY);
        history_record(g, false);
        return;
    }
    g->weightless = 0;
    double err = INFINITY;
    if (g->had_est) {
        err = relative_change(g->est, g->prev_est, count);
    }
    /* The change since the last estimate there was, across iterations
     * without one too: a push's distance from the estimate now is at
     * most its distance from that one plus this. Counting such an
     * iteration as an infinite change, as before, left every push then
     * unechoed infinitely far once it outlived the history: PCF's
     * exclusion of a crashed neighbour's flows leaves some process
     * without positive weight for an iteration now and then, and on the
     * full graph of 256 a few such pushes at any time kept every
     * process from delivering before the cap (docs/gossip.md, "Mass in
     * flight"). */
    for (uint32_t i = 0; i < g->nlinks; i++)
        ftc_gossip_echo_drift(&g->links[i].echo, err);
    if (g->have_est) {
        double quiet = quiet_threshold(g, g->scratch, g->est);
        if (!(err <= quiet)) {
            g->err = err;
            g->stable_count = 0;
            g->floor_used = 0.0;
            for (uint32_t i = 0; i < g->nlinks; i++)
                g->links[i].spoke = false;
        } else if (g->received) {
            g->err = err;
            g->stable_count++;
            /* Only a change the target alone would have counted as a
             * move makes the outcome the floor's: where every quiet
             * iteration stayed within the target, the target was met.
             * Kept: the largest such change, the accuracy the estimate
             * held (the floor itself, a bound from the flows' sizes, is
             * several times that on the full graph of 64). */
            if (err > g->target && err > g->floor_used)
                g->floor_used = err;
        }
    } else {
        g->err = INFINITY;
    }
    memcpy(g->prev_est, g->est, sizeof(double) * count);
    g->have_est = true;
    g->had_est = true;
    history_record(g, true);
    anchor_aging_pushes(g);
    g->received = false;
}

static bool eligible_link(const ftc_gossip_link_t *l, bool after_delivery)
{
    return (after_delivery ? waiting_on(l) : l->alive) && can_push(l);
}

/* Whether mass came from every live neighbour since the estimate last
 * moved by more than the target. A window of stable iterations says only
 * that the processes this one heard agree with it: processes that hear
 * only each other for longer than the window (their other neighbours'
 * messages delayed behind a descheduled sender, or lost) agree on the
 * average of the mass they hold and would deliver it. A push from a
 * neighbour carries half of that neighbour's mass, so hearing one without
 * the estimate moving by more than the target means the neighbour's
 * estimate agreed with ours when it pushed; a neighbour that is silent
 * for good is found failed by the monitor and leaves the neighbourhood,
 * and one that has delivered speaks by any message (gossip_on_msg). */
static bool all_spoke(const ftc_gossip_op_t *g)
{
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (g->links[i].alive && !g->links[i].spoke)
            return false;
    return true;
}

/* The local test passes: a window of quiet iterations that brought mass,
 * mass from every live neighbour, an echo from each of a message sent
 * since the last move, and no neighbour still waiting for its own. */
static bool test_passes(const ftc_gossip_op_t *g)
{
    return g->stable_count >= g->stable_needed && all_spoke(g)
           && all_settled(g) && !neighbour_unsettled(g)
           && flows_settled_within(g, SETTLED_SHIFT);
}

/* Whether a push to l would move mass now (push-flow paces its pushes
 * to the link's round trip, gossip.h may_push). */
static bool pushable(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l)
{
    return g->rules->may_push == NULL || g->rules->may_push(g, l);
}

/* Whether a message to l would be of use now: a push that moves mass;
 * a sync answering a message the neighbour sent since we last wrote to
 * it (its own push may wait for our echo, or it wrote before it saw our
 * latest push, which the loss may have taken: push-flow, push_flow.c);
 * or a sync to a link we have not written to for a degree's worth of
 * iterations, which repeats what a lost message said. Without the last,
 * a push-flow link whose push and answer were both lost went silent for
 * good on a full graph, where some other link is nearly always ready:
 * 523 of the 1152 deliveries of the slow sweep (test_gossip
 * --slow-sweep push-flow) came at the 20000-iteration cap. */
static bool ready_link(const ftc_gossip_op_t *g,
                       const ftc_gossip_link_t *l)
{
    return pushable(g, l) || l->echo.heard != l->echo.told
           || g->iterations - l->wrote_at >= g->nlinks;
}

/* Whether a neighbour has waited too long for our echo: it wrote to us
 * since we last wrote to it, and that was more than OVERDUE_DEGREES
 * degrees' worth of iterations ago, and at least OVERDUE_MIN (half the
 * estimate history: on graphs of small degree the echo nearly always
 * comes sooner, and the partner choice there stays as it was). Random partners leave some link
 * unpicked for a long time: on the full graph of 128 (125 live
 * neighbours, two crashed) one link in a few thousand went more than
 * 1000 iterations unwritten. Its neighbour kept counting the pushes we
 * had applied long before as still in flight (no echo came back), at
 * the distance its estimate had moved since (beyond the 256 iterations
 * of history, the sum of the changes, or infinite if its estimate had
 * been lost for an iteration), so it said UNSETTLED, and with a
 * hundred neighbours one of them nearly always did: no process
 * delivered before the 20000-iteration cap (docs/gossip.md, "Ending
 * without global synchronisation"). Writing first to such a link
 * bounds the echo's wait. */
#define OVERDUE_DEGREES 3
#define OVERDUE_MIN 128

static bool echo_overdue(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l)
{
    uint64_t gap = g->iterations - l->wrote_at;
    return l->echo.heard != l->echo.told && gap >= OVERDUE_MIN
           && gap >= OVERDUE_DEGREES * (uint64_t)g->nlinks;
}

/* A partner among the eligible links, preferring one a push would move
 * mass to: picking a link whose push must wait and sending it a sync
 * would waste the iteration while another neighbour could take mass
 * (push-flow on the hypercube with 1 us links took 360 iterations to
 * 1e-14 at n = 64 instead of 214). Only when no eligible link may take
 * a push does a sync go, and it still carries this process's echoes, so
 * two ends that both wait for an echo cannot stall each other. */
static ftc_gossip_link_t *choose(ftc_gossip_op_t *g, bool after_delivery)
{
    uint32_t eligible = 0, ready = 0, owed = 0;
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (eligible_link(&g->links[i], after_delivery)) {
            eligible++;
            ready += ready_link(g, &g->links[i]);
            owed += echo_overdue(g, &g->links[i]);
        }
    if (eligible == 0)
        return NULL;
    if (owed > 0 && g->params.partner != FTC_PARTNER_ROUND_ROBIN) {
        uint64_t pick = ftc_cop_random_below(&g->base, owed);
        for (uint32_t i = 0; i < g->nlinks; i++) {
            ftc_gossip_link_t *l = &g->links[i];
            if (eligible_link(l, after_delivery) && echo_overdue(g, l)
                && pick-- == 0)
                return l;
        }
    }
    bool need_ready = ready > 0;
    if (g->params.partner == FTC_PARTNER_ROUND_ROBIN) {
        for (uint32_t t = 0; t < g->nlinks; t++) {
            ftc_gossip_link_t *l = &g->links[g->rr];
            g->rr = (g->rr + 1) % g->nlinks;
            if (eligible_link(l, after_delivery)
                && (!need_ready || ready_link(g, l)))
                return l;
        }
        return NULL;
    }
    uint64_t pick = ftc_cop_random_below(&g->base, need_ready ? ready
                                                              : eligible);
    for (uint32_t i = 0; i < g->nlinks; i++) {
        ftc_gossip_link_t *l = &g->links[i];
        if (eligible_link(l, after_delivery)
            && (!need_ready || ready_link(g, l))) {
            if (pick == 0)
                return l;
            pick--;
        }
    }
    return NULL;
}

/* PCF: once the window has passed, a partner whose link still holds
 * flows that excluding it would move the aggregate by (a round begun
 * before the estimate settled, flows_settled_within): the rounds
 * advance only as the link is written, and each push there makes the
 * neighbour's end answer sooner (a delivered neighbour answers a push at
 * once, gossip_on_msg; one still iterating holds the same link and picks
 * it too). Random partners alone write such a link on the full graph
 * about once in n - 1 periods: with them alone the rule cost 200
 * iterations more on the full graph of 32 after two crashes (697 instead
 * of 483 on average over 12 seeds) and reached the iteration cap twice as
 * often in 200 runs of n = 16 at window 600 (10 against 5, and main 5:
 * early-crash runs, those traced with the survivors' weight negative).
 * NULL: no such link, or the window is not full yet. */
static ftc_gossip_link_t *choose_unsettled_flow(ftc_gossip_op_t *g)
{
    if (g->stable_count < g->stable_needed
        || flows_settled_within(g, SETTLED_SHIFT))
        return NULL;
    uint32_t held = 0;
    double bound = flow_bound(g, SETTLED_SHIFT);
    for (uint32_t i = 0; i < g->nlinks; i++) {
        const ftc_gossip_link_t *l = &g->links[i];
        held += eligible_link(l, false) && !link_flow_settled(g, l, bound);
    }
    if (held == 0)
        return NULL;
    uint64_t pick = ftc_cop_random_below(&g->base, held);
    for (uint32_t i = 0; i < g->nlinks; i++) {
        ftc_gossip_link_t *l = &g->links[i];
        if (eligible_link(l, false) && !link_flow_settled(g, l, bound)
            && pick-- == 0)
            return l;
    }
    return NULL;
}

/* How long a recovery may last: twice as long as the first convergence
 * took (the displaced mass has as far to spread, and the processes that
 * have not delivered yet rely on the recovering ones to reach it), at
 * least twice the local test's window. Once as long was too short on a
 * path: a ring of 6 cut open by a failure ended its recoveries while the
 * far end still converged, and delivered 1.4e-12 off. A test that does
 * not pass again (push-flow's, where links held several messages each
 * way, before crossings resolved) still ends the recovery by the bound. */
static uint64_t recovery_span(const ftc_gossip_op_t *g)
{
    uint64_t first = g->delivered_at > g->stable_needed ? g->delivered_at
                                                        : g->stable_needed;
    return 2 * first;
}

static void gossip_on_timer(ftc_cop_t *op)
{
    ftc_gossip_op_t *g = (ftc_gossip_op_t *)op;
    if (!g->ticking)
        return;
    g->iterations++;
    convergence_step(g);
    if (tick_observer != NULL)
        tick_observer(g, tick_observer_arg);
    if (!op->delivered) {
        if (test_passes(g))
            deliver(g, true);
        else if (no_estimate_exists(g))
            deliver(g, false);
        else if (g->iterations >= g->params.max_iterations || g->nalive == 0)
            deliver(g, g->nalive == 0 && g->have_est);
    }
    ftc_gossip_link_t *l;
    if (op->delivered) {
        /* A recovery spreads mass towards V; where the weight stayed
         * non-positive as long as no_estimate_exists asks, V has none
         * and there is nothing to spread (it cost a process about
         * 2 * delivered_at pushes, to everyone, after its delivery). */
        if (g->recovering
            && (test_passes(g) || no_estimate_exists(g)
                || g->iterations - g->woke_at >= recovery_span(g)))
            g->recovering = false;
        maybe_stop(g);
        if (!g->ticking)
            return;
        if (g->iterations >= 2 * g->params.max_iterations) {
            g->gave_up = true;
            stop(g); /* nobody answered: give up waiting */
            return;
        }
        /* Only the neighbours we wait for, to end; while recovering from
         * a failure: gossip, and say so (a RECOVER push may wake a
         * stopped neighbour). */
        l = choose(g, !g->recovering);
        if (l != NULL && g->recovering)
            send_flagged(g, l, true, FTC_GOSSIP_WF_RECOVER, true);
        else if (l != NULL)
            send_to(g, l, !l->peer_done);
    } else {
        /* A process that lost a neighbour holds mass the failure
         * displaced, and so does one that took in a RECOVER push; its
         * neighbours may have delivered meanwhile and must spread it
         * again (RECOVER), or it converges with them alone to a value
         * that is no aggregate. Passing the flag on matters where the
         * failure's neighbour is not next to every delivered process:
         * on a ring of 6 cut to the path 2-3-4-5 by crashes of 1 and 0,
         * 5 lost 0 and pushed RECOVER to 4, but 4 had lost nobody, so
         * its pushes did not wake the delivered 3, 3 never pushed to 2
         * (stopped, holding a quarter of the survivors' weight at the
         * old value), and 3, 4 and 5 agreed 1.2 % off the survivors'
         * aggregate (docs/gossip.md, "Faults"). */
        l = choose_unsettled_flow(g);
        if (l == NULL)
            l = choose(g, false);
        if (l != NULL)
            send_flagged(g, l, true,
                         g->lost > 0 || g->displaced ? FTC_GOSSIP_WF_RECOVER
                                                     : 0,
                         true);
    }
    ftc_cop_timer_arm(op, ftc_cop_now(op) + g->params.period_ns);
}

/* A delivered process whose estimate moved by more than the target
 * because of a failure (it lost a neighbour, or a neighbour recovering
 * from one pushed to it) gossips again until its local test passes or
 * recovery_span iterations, so that mass a failure displaced after some
 * processes delivered is not stuck at a process that stopped: the others
 * then still converge to the survivors' aggregate. A RECOVER push may
 * wake a process WAKES_BY_PUSH times in all, so that two processes whose
 * recoveries alternate cannot wake each other for ever; a failure it
 * learns of always may. */
#define WAKES_BY_PUSH 2

static void maybe_wake(ftc_gossip_op_t *g, bool by_failure)
{
    ftc_cop_t *op = &g->base;
    if (!op->delivered || g->gave_up || op->finished
        || (g->recovering && !by_failure)
        || (!by_failure && g->wakes_left == 0))
        return;
    g->rules->mass(g, g->scratch);
    if (ftc_gossip_estimate(g->m, g->scratch, g->est)) {
        double err = relative_change(g->est, g->prev_est, g->m - 1);
        if (err <= quiet_threshold(g, g->scratch, g->est))
            return;
    }
    if (!by_failure)
        g->wakes_left--;
    g->recovering = true;
    g->woke_at = g->iterations;
    g->stable_count = 0;
    g->floor_used = 0.0;
    if (g->ticking)
        return; /* still ending: its timer runs */
    g->ticking = true;
    ftc_context_t *ctx = op->group->ctx;
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (g->links[i].alive && !g->links[i].watched) {
            g->links[i].watched = true;
            ftc_monitor_acquire(ctx, world(g, g->links[i].peer), op);
        }
    ftc_cop_timer_arm(op, ftc_cop_now(op) + g->params.period_ns);
}

static void gossip_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                          const uint8_t *payload, uint32_t grank)
{
    ftc_gossip_op_t *g = (ftc_gossip_op_t *)op;
    ftc_gossip_link_t *l = link_of(g, grank);
    if (l == NULL || hdr->payload_len != msg_len(g->rules, g->m)) {
        op->group->ctx->counters.dropped_badmsg++;
        return;
    }
    if (!l->alive)
        return; /* excluded: its flows stay zero */
    if (hdr->flags & FTC_GOSSIP_WF_DONE)
        l->peer_done = true;
    if (hdr->flags & FTC_GOSSIP_WF_SAW_DONE)
        l->peer_saw_done = true;
    l->peer_unsettled = (hdr->flags & FTC_GOSSIP_WF_UNSETTLED) != 0;
    g->rules->mass(g, g->scratch);
    double before = g->scratch[g->m - 1];
    bool applied = g->rules->receive(g, l, payload);
    ftc_gossip_echo_read(&l->echo, payload + g->rules->payload_len(g->m),
                         applied);
    g->rules->mass(g, g->scratch);
    if (g->scratch[g->m - 1] - before >= g->weight_unit * RECEIVED_MIN) {
        g->received = true;
        l->spoke = true;
    }
    /* A neighbour that delivered has settled, and what it sends restates
     * its flows, which we just took in: it has spoken even when it has
     * little or no weight to give (PCF's exclusion of a failed
     * neighbour's flows can leave it none), or we would wait for it until
     * max_iterations. */
    if (hdr->flags & FTC_GOSSIP_WF_DONE)
        l->spoke = true;
    /* A delivered process answers a neighbour that still waits for it,
     * unless it waits for that neighbour itself: then its next iteration
     * tells the neighbour, and an answer now could cross that
     * iteration's push and undo it (a push-flow crossing costs the
     * higher rank its push, push_flow.c). A stopped process answers a push with a push:
     * a neighbour iterating again after a late failure then gets mass
     * back instead of pumping its own into processes that keep it, and
     * hears back, so it can settle. */
    bool want = (hdr->flags & FTC_GOSSIP_WF_WANT) != 0;
    bool push = (hdr->flags & FTC_GOSSIP_WF_SYNC) == 0;
    /* ... but never a stopped process's answer: two stopped processes
     * answering each other's pushes would bounce mass between them for
     * ever once the link holds more than one message (a round trip above
     * the period, as on any real network). */
    bool answer = (hdr->flags & FTC_GOSSIP_WF_ANSWER) != 0;
    /* A delivered process still ending its links also answers a push
     * from a neighbour that has not delivered (no DONE on it) with a push,
     * besides its own push to it each period. Otherwise a process whose
     * neighbours have all delivered gets their mass every period but
     * hands each of them mass only when it picks that one, so they
     * keep little: at push-flow's n = 1024 on the hypercube its weight
     * stayed at 0.23 to 0.36 of a process's share, their pushes often
     * carried too little weight to count (RECEIVED_MIN), and its
     * estimate kept moving by more than the target: 1161 iterations for
     * one seed, the 20000 cap for another. An answered push comes back
     * at once with half of what the neighbour then holds, its own push
     * included, so the late process hears every neighbour it pushes to
     * with weight (318 to 339 iterations for those seeds). Bounded: it answers only a process that has
     * not delivered, at most one answer per push received, never an
     * answer, and not while recovering (it pushes to everyone then): once
     * every neighbour delivered, no push causes another. Stopping the
     * process's own pushes to the late neighbour instead starved the
     * last processes of dmgs_qr's operations. */
    bool late = (hdr->flags & FTC_GOSSIP_WF_DONE) == 0;
    if (op->delivered && g->ticking && !g->recovering && push && late
        && !answer)
        send_flagged(g, l, true, FTC_GOSSIP_WF_ANSWER, false);
    else if (op->delivered && g->ticking && want && !waiting_on(l))
        send_flagged(g, l, false, FTC_GOSSIP_WF_ANSWER, false);
    else if (op->delivered && !g->ticking && !answer && (want || push))
        send_flagged(g, l, push, FTC_GOSSIP_WF_ANSWER, false);
    if (hdr->flags & FTC_GOSSIP_WF_RECOVER) {
        if (!op->delivered)
            g->displaced = true;
        maybe_wake(g, false);
    }
    maybe_stop(g);
}

/* Whether a live neighbour still waits for this process (its DONE, or
 * its word that it saw the neighbour's). A stopped process serves
 * nobody: every live neighbour delivered and knows that it did. Such a
 * process does not wake for a failure by itself: the mass the exclusion
 * moved matters only to a process still computing, and one that still
 * gossips with it, having lost a neighbour or woken by the failure,
 * pushes to it with RECOVER, and that push wakes it (gossip_on_msg,
 * maybe_wake; bounded by wakes_left).
 * Waking every stopped operation on every failure made each survivor
 * gossip again in all the operations it still kept lingering (up to 64,
 * long delivered everywhere): over UCX shared memory with the default
 * 64-element FIFO the traffic filled the FIFOs, hundreds of sends waited
 * in UCX per peer, links became many periods long, and the operation in
 * progress stopped converging (docs/gossip.md, "Real processes"). */
static bool serving(const ftc_gossip_op_t *g)
{
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (waiting_on(&g->links[i]))
            return true;
    return false;
}

static void gossip_on_failed(ftc_cop_t *op, uint32_t grank)
{
    ftc_gossip_op_t *g = (ftc_gossip_op_t *)op;
    if (g->params.aggregate == FTC_GOSSIP_SUM && grank == op->args.root) {
        g->watching_root = false;
        if (!op->delivered) {
            /* A sum's weight lived at the root: no survivor can scale
             * the values without it. */
            ftc_cop_complete(op, FTC_EROOT_FAILED);
            stop(g);
            return;
        }
    }
    ftc_gossip_link_t *l = link_of(g, grank);
    if (l == NULL || !l->alive)
        return;
    l->alive = false;
    l->watched = false;
    g->weightless = 0; /* the weight mixes again from here */
    g->rules->lose(g, l);
    g->nalive--;
    if (!op->delivered)
        g->lost++;
    if (g->ticking || serving(g))
        maybe_wake(g, true);
    maybe_stop(g);
}

/* A paced push left (the transport completed it): the link may take
 * the next. */
static void gossip_on_sent(ftc_cop_t *op, uint32_t grank)
{
    ftc_gossip_link_t *l = link_of((ftc_gossip_op_t *)op, grank);
    if (l != NULL)
        l->unsent = false;
}

static void gossip_destroy(ftc_cop_t *op)
{
    ftc_gossip_op_t *g = (ftc_gossip_op_t *)op;
    if (observer != NULL && g->links != NULL && g->phi != NULL) {
        double *mass = g->scratch;
        g->rules->mass(g, mass);
        ftc_gossip_final_t fin = {
            .group = op->group,
            .rank = op->group->me,
            .m = g->m,
            .x = g->x,
            .mass = mass,
            .written_off = g->rules->link_flows == 2 ? g->written_off : NULL,
            .nlinks = g->nlinks,
            .links = g->links,
            .op = g,
        };
        observer(&fin, observer_arg);
    }
    if (g->links != NULL)
        release_watches(g);
    ftc_cop_delete(op);
}

static const ftc_cop_vtable_t gossip_vt = {
    .msg_valid = ftc_gossip_msg_valid,
    .on_msg = gossip_on_msg,
    .on_peer_failed = gossip_on_failed,
    .on_timer = gossip_on_timer,
    .on_sent = gossip_on_sent,
    .destroy = gossip_destroy,
};

static const ftc_gossip_rules_t *rules_of(ftc_algo_t algo)
{
    if (algo == FTC_ALGO_PUSH_SUM)
        return &ftc_gossip_push_sum_rules;
    if (algo == FTC_ALGO_PUSH_FLOW)
        return &ftc_gossip_push_flow_rules;
    return &ftc_gossip_pcf_rules;
}

/* What the members must agree on beyond the generic arguments: the
 * aggregate and the graph (FNV-1a over the shape and, for an overlay,
 * its rows). */
static uint32_t variant_of(const ftc_gossip_params_t *p, uint32_t n)
{
    uint32_t h = 2166136261u;
#define MIX(v) (h = (h ^ (uint32_t)(v)) * 16777619u)
    MIX(p->aggregate);
    MIX(p->neighbours);
    if (p->neighbours == FTC_NEIGHBOURS_TORUS3D) {
        MIX(p->torus[0]);
        MIX(p->torus[1]);
        MIX(p->torus[2]);
    }
    if (p->neighbours == FTC_NEIGHBOURS_OVERLAY) {
        for (uint32_t r = 0; r <= n; r++)
            MIX(p->overlay_index[r]);
        for (uint32_t i = 0; i < p->overlay_index[n]; i++)
            MIX(p->overlay_adj[i]);
    }
#undef MIX
    return h;
}

int ftc_gossip_op_create(ftc_group_t *grp, const ftc_coll_args_t *args,
                         const void *params, ftc_coll_t coll,
                         ftc_cop_t **out)
{
    const ftc_gossip_params_t *p = params;
    const ftc_gossip_rules_t *rules = rules_of(args->algo);
    uint32_t n = grp->n, me = grp->me;
    uint32_t m = (uint32_t)args->count + 1;
    uint32_t deg = ftc_gossip_degree(p, n, me);
    size_t vec = ftc_mem_round(sizeof(double) * m);
    uint32_t hlen = history_len_for(m - 1);
    size_t space = 6 * vec + ftc_mem_round(msg_len(rules, m))
                   + ftc_mem_round(sizeof(double) * hlen * (m - 1))
                   + ftc_mem_round(sizeof(ftc_gossip_link_t) * (deg ? deg : 1))
                   + ftc_mem_round(sizeof(uint32_t) * (deg ? deg : 1))
                   + (size_t)deg * (rules->link_flows + 2 * (rules->link_flows == 2))
                         * vec;
    ftc_gossip_op_t *g = ftc_cop_new(grp, sizeof(*g), space);
    if (g == NULL)
        return FTC_ENOMEM;
    ftc_cop_setup(grp, args, coll, &g->base, &gossip_vt, variant_of(p, n));
    g->rules = rules;
    g->params = *p;
    g->params.overlay_index = NULL;
    g->params.overlay_adj = NULL;
    g->m = m;
    g->x = ftc_cop_alloc(&g->base, sizeof(double) * m);
    g->phi = ftc_cop_zalloc(&g->base, sizeof(double) * m);
    g->phi_low = ftc_cop_zalloc(&g->base, sizeof(double) * m);
    g->written_off = ftc_cop_zalloc(&g->base, sizeof(double) * m);
    g->est = ftc_cop_zalloc(&g->base, sizeof(double) * m);
    g->prev_est = ftc_cop_zalloc(&g->base, sizeof(double) * m);
    g->scratch = ftc_cop_zalloc(&g->base, sizeof(double) * m);
    g->msg = ftc_cop_alloc(&g->base, msg_len(rules, m));
    g->history_len = hlen;
    g->history = ftc_cop_alloc(&g->base, sizeof(double) * hlen * (m - 1));
    uint32_t *row = ftc_cop_alloc(&g->base, sizeof(uint32_t) * (deg ? deg : 1));
    ftc_gossip_link_t *links =
        ftc_cop_zalloc(&g->base, sizeof(ftc_gossip_link_t) * (deg ? deg : 1));
    if (g->x == NULL || g->phi == NULL || g->phi_low == NULL
        || g->written_off == NULL
        || g->est == NULL || g->prev_est == NULL || g->scratch == NULL
        || g->msg == NULL || (g->history == NULL && m > 1) || row == NULL
        || links == NULL) {
        gossip_destroy(&g->base);
        return FTC_ENOMEM;
    }
    g->nlinks = ftc_gossip_neighbours(p, n, me, row);
    for (uint32_t i = 0; i < g->nlinks; i++) {
        ftc_gossip_link_t *l = &links[i];
        l->peer = row[i];
        l->alive = true;
        if (rules->link_flows > 0) {
            l->f = ftc_cop_zalloc(&g->base, sizeof(double) * m * rules->link_flows);
            if (l->f == NULL) {
                gossip_destroy(&g->base);
                return FTC_ENOMEM;
            }
        }
        if (rules->link_flows == 2) {
            l->cancelled = ftc_cop_zalloc(&g->base, sizeof(double) * m);
            l->heard = ftc_cop_zalloc(&g->base, sizeof(double) * m);
            l->leads = me < l->peer;
            if (l->cancelled == NULL || l->heard == NULL) {
                gossip_destroy(&g->base);
                return FTC_ENOMEM;
            }
        }
    }
    g->links = links;
    /* The input, in double whatever the dtype (a float input loses
     * nothing), then the weight. */
    for (uint32_t k = 0; k + 1 < m; k++)
        g->x[k] = args->dtype == FTC_DOUBLE
                      ? ((const double *)args->sendbuf)[k]
                      : (double)((const float *)args->sendbuf)[k];
    g->x[m - 1] = p->aggregate == FTC_GOSSIP_AVERAGE || me == args->root ? 1.0
                                                                         : 0.0;
    if (rules->link_flows == 0)
        memcpy(g->phi, g->x, sizeof(double) * m);
    g->weight_unit = p->aggregate == FTC_GOSSIP_AVERAGE ? 1.0 : 1.0 / n;
    g->target = p->target > 0.0 ? p->target
                : args->dtype == FTC_DOUBLE ? 1e-14
                                            : 1e-6;
    uint32_t log2n = 0;
    while (log2n < 32 && (1ull << log2n) < n)
        log2n++;
    g->stable_needed = p->stable > 0 ? p->stable : 8 + 2 * log2n;
    g->ticking = true;
    g->wakes_left = WAKES_BY_PUSH;
    ftc_cop_register(&g->base);
    ftc_context_t *ctx = grp->ctx;
    g->nalive = 0;
    for (uint32_t i = 0; i < g->nlinks; i++) {
        ftc_gossip_link_t *l = &g->links[i];
        if (ftc_group_member_failed(grp, l->peer)) {
            l->alive = false;
            continue;
        }
        g->nalive++;
        l->watched = true;
        ftc_monitor_acquire(ctx, world(g, l->peer), &g->base);
    }
    if (p->aggregate == FTC_GOSSIP_SUM && me != args->root
        && link_of(g, args->root) == NULL) {
        g->watching_root = true;
        ftc_monitor_acquire(ctx, world(g, args->root), &g->base);
    }
    if (p->aggregate == FTC_GOSSIP_SUM && me != args->root
        && ftc_group_member_failed(grp, args->root)) {
        ftc_cop_complete(&g->base, FTC_EROOT_FAILED);
        stop(g);
    } else {
        /* The first iteration at a random phase within the first period
         * (never at once: deliver never runs inside ftc_init_*). Processes
         * started together would otherwise iterate in lock-step, and every
         * exchange would cross another on the wire. */
        uint64_t phase = 1 + ftc_cop_random_below(&g->base, p->period_ns);
        ftc_cop_timer_arm(&g->base, ftc_cop_now(&g->base) + phase);
        ftc_cop_replay_pending(&g->base);
    }
    *out = &g->base;
    return FTC_OK;
}
