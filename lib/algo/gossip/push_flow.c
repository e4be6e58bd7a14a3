/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Push-flow (the paper's Figure 1): a process never sends its mass, only
 * the flow f_ij, the total it has pushed to j; j sets f_ji = -f_ij. The
 * mass e_i = v_i - sum_j f_ij is computed afresh from the flows at every
 * use, as Figure 1 line 9 does. A lost or corrupted message is repaired
 * by the next one on the link; a failed neighbour is excluded by setting
 * its flow to zero, which gives back to this process everything it ever
 * exchanged with it (the "fall-back" of the paper's Figure 4).
 *
 * Crossings. Figure 1 lets the latest message overwrite the link's flow,
 * which is right only when the receiver has not pushed on the link since
 * the sender last heard from it. When pushes cross (i pushes a while j
 * pushes b), i adopts j's flow and so takes a back, j adopts i's and
 * takes b back, and each also keeps what the other pushed: a + b of mass
 * is created, and the next pair of crossing messages swaps the link's
 * two views again, destroying it. On links ten periods long every
 * message crosses several, and a process's held weight swung between -1
 * and 12.6 shares of the 6 of the run (docs/gossip.md, "Crossings").
 * Here one end of each link, the lower rank, has the
 * last word, as PCF's leader does: it ignores a message from the other
 * end written before that end saw its latest push, and the other end
 * ignores a message that neither saw its own latest push nor brings a
 * push of the leader's it has not applied. A crossing then resolves to
 * the leader's view at both ends (the follower's crossing pushes are
 * taken back by the follower, and ignored by the leader): what is on the
 * wire is only ever what pushes not yet applied took away, and no
 * process's held weight leaves [0, n] shares (test_gossip_crossing.c).
 * Both ends also pace their pushes to the round trip: a push waits until
 * the neighbour has echoed the previous one (a sync goes instead, which
 * asks a delivered neighbour for the echo, since a stopped one answers
 * nothing else; and op.c's partner choice prefers links a message is of
 * use to), so that a leader's stream of pushes cannot keep every
 * follower push from counting: without it 30 of 30 runs of that test's
 * case reached the iteration cap.
 */
#include <math.h>
#include <string.h>

#include "algo/gossip/gossip.h"

/* The flows, then the sender's pushed_seq and its complement (a flipped
 * bit in it is seen and the message ignored). */
static size_t pf_payload_len(uint32_t m)
{
    return sizeof(double) * m + 2 * sizeof(uint32_t);
}

static void pf_mass(const ftc_gossip_op_t *g, double *e)
{
    memcpy(e, g->x, sizeof(double) * g->m);
    for (uint32_t i = 0; i < g->nlinks; i++) {
        const ftc_gossip_link_t *l = &g->links[i];
        if (!l->alive)
            continue;
        for (uint32_t k = 0; k < g->m; k++)
            e[k] -= l->f[k];
    }
}

static bool pf_leads(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l)
{
    return g->base.group->me < l->peer;
}

/* Our last push on l has been echoed (or there was none). */
static bool pf_may_push(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l)
{
    (void)g;
    return l->echo.echoed >= l->pushed_seq;
}

static void pf_build(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push,
                     uint8_t *out)
{
    if (push) {
        pf_mass(g, g->scratch);
        for (uint32_t k = 0; k < g->m; k++)
            l->f[k] += g->scratch[k] * 0.5;
        l->pushed_seq = l->echo.sent + 1; /* this message's (echo.h) */
    }
    memcpy(out, l->f, sizeof(double) * g->m);
    uint32_t s[2] = {l->pushed_seq, ~l->pushed_seq};
    memcpy(out + sizeof(double) * g->m, s, sizeof(s));
}

static bool pf_receive(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                       const uint8_t *payload)
{
    uint32_t s[2], seq, echo;
    memcpy(s, payload + sizeof(double) * g->m, sizeof(s));
    if (s[1] != ~s[0]
        || !ftc_gossip_echo_peek(payload + pf_payload_len(g->m), &seq, &echo))
        return false; /* a flipped bit: the next message restates it */
    if (seq <= l->echo.applied)
        return false; /* older than one applied already */
    bool saw_ours = echo >= l->pushed_seq;
    if (pf_leads(g, l) ? !saw_ours
                       : !saw_ours && s[0] <= l->peer_pushed_seq)
        return false; /* a crossing the leader's view resolves */
    if (s[0] > l->peer_pushed_seq)
        l->peer_pushed_seq = s[0];
    double v;
    for (uint32_t k = 0; k < g->m; k++) {
        memcpy(&v, payload + sizeof(double) * k, sizeof(v));
        l->f[k] = -v;
    }
    return true;
}

/*
 * The rounding floor. The mass e = v - sum_j f_ij is a sum of the degree
 * d's flows, and each flow is the net of every push on its link so far,
 * which grows with the run's history (a random walk of half-shares), not
 * with the result: each element of e is rounded to about
 * u * (|v| + sum_j |f_ij|), u = 2^-53, and since the flows change every
 * iteration that rounding changes too, so the estimate e_s / e_w moves
 * by about as much, relative to its size, from one iteration to the
 * next, after it has converged. This is the paper's section II-B (the
 * accuracy degrades with n); it bites with the degree: on the full graph
 * of 64 the floor is 2e-14 to 3.5e-14 while the run goes on, and the
 * estimate moved by more than the default 1e-14 target in about one
 * iteration of six, more than twice the floor in one of 600, four times
 * in one of 2500 (docs/gossip.md, "Push-flow's rounding floor").
 * Returned relative to the estimate's largest element (absolute when it
 * is all zeros, as the local test's change).
 */
static double pf_rounding_floor(const ftc_gossip_op_t *g, const double *e,
                                const double *est)
{
    double w = e[g->m - 1], vabs = 0.0, wabs = fabs(g->x[g->m - 1]),
           size = 0.0;
    for (uint32_t i = 0; i < g->nlinks; i++)
        if (g->links[i].alive)
            wabs += fabs(g->links[i].f[g->m - 1]);
    for (uint32_t k = 0; k + 1 < g->m; k++) {
        double a = fabs(g->x[k]);
        for (uint32_t i = 0; i < g->nlinks; i++)
            if (g->links[i].alive)
                a += fabs(g->links[i].f[k]);
        vabs = a > vabs ? a : vabs;
        size = fabs(est[k]) > size ? fabs(est[k]) : size;
    }
    if (!(w > 0.0))
        return 0.0; /* no estimate: nothing to resolve (never called so) */
    /* est = e_s / e_w: the error of e_s over e_w, plus est times the
     * relative error of e_w. */
    return 0x1p-53 * (vabs / (w * (size > 0.0 ? size : 1.0)) + wabs / w);
}

static void pf_lose(ftc_gossip_op_t *g, ftc_gossip_link_t *l)
{
    memset(l->f, 0, sizeof(double) * g->m);
}

static void pf_outflow(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l,
                       double *t)
{
    memcpy(t, l->f, sizeof(double) * g->m);
}

const ftc_gossip_rules_t ftc_gossip_push_flow_rules = {
    .name = "push-flow",
    .link_flows = 1,
    .tolerant = true,
    .payload_len = pf_payload_len,
    .mass = pf_mass,
    .may_push = pf_may_push,
    .build = pf_build,
    .receive = pf_receive,
    .lose = pf_lose,
    .outflow = pf_outflow,
    .rounding_floor = pf_rounding_floor,
};
