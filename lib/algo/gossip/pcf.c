/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Push-cancel-flow (the paper's Figure 5, section III-A). Each link has
 * two flows: the active one does what push-flow's single flow does; the
 * passive one, once both ends hold exactly opposite values, is cancelled:
 * added to phi_i (where it stays) and set to zero, after which the two
 * change roles. So the flows carry only recent exchanges, whose size is
 * that of the estimate, instead of the whole history, and excluding a
 * failed neighbour (its flows set to zero) costs only what was exchanged
 * since the last cancellation: no fall-back.
 *
 * Two variants of phi_i. The efficient one (Figure 5) keeps phi_i as the
 * running sum of all flows and cancelled flows, updated by differences
 * (lines 11, 23, 32). The bit-flip tolerant one keeps only the cancelled
 * flows in phi_i and adds the live flows afresh for every estimate: a
 * corrupted flow then leaves no trace once the next message overwrites
 * it, where a running sum would keep the rounding error of adding and
 * removing, say, 1e300. Both variants sum exactly (running_sum.h): the
 * efficient one keeps phi_i in two doubles, the tolerant one adds its
 * terms so for each estimate, because a sum's root holds its 1/n of the
 * weight as 1 minus terms near 1, which one double rounds at 2^-53 of 1.
 *
 * Rounds with a leader, instead of Figure 5's symmetric handshake. The
 * mass is right only if both ends of a link cancel exactly opposite
 * values; cancelling is itself mass-neutral at each end, so a mismatch
 * is a permanent error of the difference. Figure 5 lets either end start
 * a cancellation on a passive flow that both ends keep overwriting with
 * the other's (line 24): once a link holds several messages each way
 * (a round trip longer than the period, as on any loaded real network),
 * the value one end checked is no longer the one the other end holds
 * when it cancels, and the result was wrong by up to 1e-2. Here, per
 * link, the lower rank leads. Round r has flow r mod 2 active (both ends
 * push onto it and adopt the other's, as push-flow) and the other
 * passive. The leader never changes its passive flow during a round; the
 * follower adopts the negation of the leader's. When a message of the
 * same round shows the leader that the follower holds exactly its
 * negation, the leader cancels and starts round r + 1 as it next sends
 * to the follower (not at once: the follower's pushes until then still
 * count on the active flow, where ending the round at once ignored them
 * and took six times the iterations on the full graph); the follower,
 * seeing r + 1, cancels what it holds (that negation: it changes its
 * passive flow only by adopting the leader's, which was fixed all round)
 * and follows. So the follower's round is the leader's or one behind,
 * whatever the delays, provided a link delivers in order; a message of
 * any other round is corrupted or stale and ignored: what it carried is
 * restated by the next one. Its flows' pushes are not lost: the end that
 * ignored them adopts or is adopted on that flow later, which gives the
 * mass back to the sender. The round travels with its complement, so a
 * flipped bit there is seen.
 *
 * The follower adopts a passive value that differs from the one it holds
 * only when two successive messages of the round state it (or the round
 * just began): a flipped bit in one message cannot change the value it
 * is about to cancel after the leader checked it.
 */
#include <string.h>

#include "algo/gossip/gossip.h"
#include "algo/gossip/running_sum.h"

static size_t pcf_payload_len(uint32_t m)
{
    return sizeof(double) * 2 * m + 2 * sizeof(uint32_t);
}

static bool efficient(const ftc_gossip_op_t *g)
{
    return g->params.bitflip_tolerant == 0;
}

static double *flow(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l,
                    unsigned which)
{
    return l->f + (size_t)which * g->m;
}

/* phi_i[k] += a, carried exactly (running_sum.h: the root of a sum holds
 * its 1/n of the weight as 1 - phi, which a plain double rounds at 2^-53
 * of 1). */
static void phi_add(ftc_gossip_op_t *g, uint32_t k, double a)
{
    ftc_gossip_running_add(&g->phi[k], &g->phi_low[k], a);
}

/* e = x_i - phi_i, and in the tolerant variant minus every live flow,
 * summed exactly and rounded once: the result is far smaller than the
 * terms at a sum's root. */
static void pcf_mass(const ftc_gossip_op_t *g, double *e)
{
    for (uint32_t k = 0; k < g->m; k++) {
        double hi = g->x[k], lo = 0.0;
        ftc_gossip_running_add(&hi, &lo, -g->phi[k]);
        ftc_gossip_running_add(&hi, &lo, -g->phi_low[k]);
        if (!efficient(g))
            for (uint32_t i = 0; i < g->nlinks; i++) {
                const ftc_gossip_link_t *l = &g->links[i];
                if (!l->alive)
                    continue;
                ftc_gossip_running_add(&hi, &lo, -l->f[k]);
                ftc_gossip_running_add(&hi, &lo, -l->f[g->m + k]);
            }
        e[k] = hi + lo;
    }
}

/* f_ij,which := v, keeping phi_i the sum of flows (efficient variant). */
static void set_flow(ftc_gossip_op_t *g, ftc_gossip_link_t *l, unsigned which,
                     const double *v)
{
    double *f = flow(g, l, which);
    for (uint32_t k = 0; k < g->m; k++) {
        if (efficient(g)) {
            phi_add(g, k, v[k]);
            phi_add(g, k, -f[k]);
        }
        f[k] = v[k];
    }
}

/* Cancel f_ij,which: it stays in phi_i, the flow becomes zero. */
static void cancel(ftc_gossip_op_t *g, ftc_gossip_link_t *l, unsigned which)
{
    double *f = flow(g, l, which);
    for (uint32_t k = 0; k < g->m; k++) {
        l->cancelled[k] += f[k];
        if (!efficient(g))
            phi_add(g, k, f[k]);
        f[k] = 0.0;
    }
}

/* Both ends of the link cancel the passive flow and start the next
 * round. */
static void next_round(ftc_gossip_op_t *g, ftc_gossip_link_t *l)
{
    cancel(g, l, 1u - (l->r & 1u));
    l->r++;
    l->heard_set = false;
}

static void pcf_build(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push,
                      uint8_t *out)
{
    if (l->leads && l->cancel_due) {
        l->cancel_due = false;
        next_round(g, l);
    }
    if (push) {
        /* Lines 31-32: half of the estimate's mass onto the active flow. */
        double *e = g->scratch;
        pcf_mass(g, e);
        double *f = flow(g, l, l->r & 1u);
        for (uint32_t k = 0; k < g->m; k++) {
            /* phi_i takes exactly half the mass, not the flow's change
             * as f + d rounded it: a push must not move the sender's
             * estimate, and where a flow is many times the mass (links
             * ten periods long under loss) its rounding, taken into
             * phi_i, can move it by more than the target. Measured:
             * 5 of 10 runs of ftcoll-sim --algo pcf -n 6 --latency-ns
             * 100000 --jitter-ns 100000 --loss 0.05 reached the
             * iteration cap, against 0 of 30 this way. The rounding
             * reaches the neighbour with the flow instead, in what it
             * takes in. */
            double d = e[k] * 0.5;
            f[k] += d;
            if (efficient(g))
                phi_add(g, k, d);
        }
    }
    uint32_t rr[2] = {l->r, ~l->r};
    memcpy(out, l->f, sizeof(double) * 2 * g->m);
    memcpy(out + sizeof(double) * 2 * g->m, rr, sizeof(rr));
}

static void read_flow(const uint8_t *payload, uint32_t m, unsigned which,
                      double *out)
{
    memcpy(out, payload + sizeof(double) * (size_t)which * m,
           sizeof(double) * m);
}

/* Push-flow's rule for a flow: f_ij,which := -f_ji,which. */
static void adopt(ftc_gossip_op_t *g, ftc_gossip_link_t *l, unsigned which,
                  const uint8_t *payload)
{
    double *neg = g->scratch;
    read_flow(payload, g->m, which, neg);
    for (uint32_t k = 0; k < g->m; k++)
        neg[k] = -neg[k];
    set_flow(g, l, which, neg);
}

static bool same(const double *a, const double *b, uint32_t m)
{
    return memcmp(a, b, sizeof(double) * m) == 0;
}

static bool lead_receive(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                         const uint8_t *payload, uint32_t rj)
{
    if (rj != l->r)
        return false; /* the follower has not seen our round yet: stale */
    unsigned a = l->r & 1u, p = 1u - a;
    adopt(g, l, a, payload);
    double *theirs = g->scratch;
    read_flow(payload, g->m, p, theirs);
    const double *mine = flow(g, l, p);
    bool opposite = true;
    for (uint32_t k = 0; k < g->m; k++)
        opposite = opposite && theirs[k] == -mine[k];
    /* The round ends at our next message to the follower, not now: its
     * pushes that arrive before then still count on the active flow. */
    if (opposite)
        l->cancel_due = true;
    return true;
}

static bool follow_receive(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                           const uint8_t *payload, uint32_t rj)
{
    if (rj == l->r + 1)
        next_round(g, l); /* the leader cancelled: we cancel the same */
    else if (rj != l->r)
        return false; /* corrupted: the leader is never behind or two
                         ahead */
    unsigned a = l->r & 1u, p = 1u - a;
    adopt(g, l, a, payload);
    double *stated = g->scratch;
    read_flow(payload, g->m, p, stated);
    bool repeated = l->heard_set && same(stated, l->heard, g->m);
    memcpy(l->heard, stated, sizeof(double) * g->m);
    if (l->heard_set && !repeated)
        return false; /* one message's word against the last one's: wait */
    l->heard_set = true;
    for (uint32_t k = 0; k < g->m; k++)
        stated[k] = -stated[k];
    set_flow(g, l, p, stated);
    return true;
}

/* Applied only when the round is right: a leader's stale-round message
 * from its follower is ignored, and so must not be echoed as taken in,
 * or the follower would think its pushes landed while the leader's round
 * change is still on its way and will give them back (docs/gossip.md,
 * "the local convergence test"). */
static bool pcf_receive(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                        const uint8_t *payload)
{
    uint32_t rr[2];
    memcpy(rr, payload + sizeof(double) * 2 * g->m, sizeof(rr));
    if (rr[1] != ~rr[0])
        return false; /* a flipped bit in the round: wait for the next */
    if (l->leads)
        return lead_receive(g, l, payload, rr[0]);
    return follow_receive(g, l, payload, rr[0]);
}

static void pcf_lose(ftc_gossip_op_t *g, ftc_gossip_link_t *l)
{
    for (uint32_t k = 0; k < g->m; k++) {
        if (efficient(g)) {
            phi_add(g, k, -l->f[k]);
            phi_add(g, k, -l->f[g->m + k]);
        }
        l->f[k] = l->f[g->m + k] = 0.0;
        if (g->params.exclusion == FTC_GOSSIP_EXCLUDE_ALL) {
            /* Undo the cancelled flows too: as if this process had never
             * exchanged with the failed one (push-flow's semantics). */
            phi_add(g, k, -l->cancelled[k]);
        } else {
            /* What was cancelled on this link stays in phi_i (the
             * paper's PCF: no fall-back): the mass account writes it
             * off. */
            g->written_off[k] += l->cancelled[k];
        }
        /* l->cancelled stays as the record of what was cancelled with the
         * failed neighbour: the link is dead, no flow counts on it any
         * more, and the checker computes the promised value from these
         * records (bench/gossip_checker.c). */
    }
}

static void pcf_outflow(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l,
                        double *t)
{
    for (uint32_t k = 0; k < g->m; k++)
        t[k] = l->f[k] + l->f[g->m + k] + l->cancelled[k];
}

const ftc_gossip_rules_t ftc_gossip_pcf_rules = {
    .name = "pcf",
    .link_flows = 2,
    .tolerant = true,
    .payload_len = pcf_payload_len,
    .mass = pcf_mass,
    .build = pcf_build,
    .receive = pcf_receive,
    .lose = pcf_lose,
    .outflow = pcf_outflow,
};
