/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Push-cancel-flow (the paper's Figure 5, section III-A). Each link has
 * two flows: the active one does what push-flow's single flow does; the
 * passive one, once both ends hold exactly opposite values, is cancelled:
 * added to phi_i (where it stays) and set to zero, after which the two
 * change roles (r counts the changes, c names the active flow). So the
 * flows carry only recent exchanges, whose size is that of the estimate,
 * instead of the whole history, and excluding a failed neighbour (its
 * flows set to zero) costs only what was exchanged since the last
 * cancellation: no fall-back.
 *
 * Two variants of phi_i. The efficient one (Figure 5) keeps phi_i as the
 * running sum of all flows and cancelled flows, updated by differences
 * (lines 11, 23, 32). The bit-flip tolerant one keeps only the cancelled
 * flows in phi_i and adds the live flows afresh for every estimate: a
 * corrupted flow then leaves no trace once the next message overwrites
 * it, where a running sum would keep the rounding error of adding and
 * removing, say, 1e300.
 *
 * Indices are 0-based here (c in {0, 1}, r from 0), so a link whose roles
 * are settled has c = r mod 2.
 *
 * Figure 5's line 11 reads phi_i -= (f_ji,c + f_ji,c) in the text we have;
 * the update that keeps phi_i = sum of flows is phi_i -= (f_ij,c + f_ji,c)
 * (the old f_ij,c out, the new -f_ji,c in), and so is line 23's. Line 19
 * zeroes the flow that was passive before line 18's swap: it is the one
 * the other end cancelled (it sent zero for it), and it becomes the
 * active flow, zero at both ends.
 */
#include <string.h>

#include "algo/gossip/gossip.h"

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

static void pcf_mass(const ftc_gossip_op_t *g, double *e)
{
    for (uint32_t k = 0; k < g->m; k++)
        e[k] = g->x[k] - g->phi[k];
    if (efficient(g))
        return;
    for (uint32_t i = 0; i < g->nlinks; i++) {
        const ftc_gossip_link_t *l = &g->links[i];
        if (!l->alive)
            continue;
        for (uint32_t k = 0; k < g->m; k++)
            e[k] -= l->f[k] + l->f[g->m + k];
    }
}

/* f_ij,which := v, keeping phi_i the sum of flows (efficient variant). */
static void set_flow(ftc_gossip_op_t *g, ftc_gossip_link_t *l, unsigned which,
                     const double *v)
{
    double *f = flow(g, l, which);
    for (uint32_t k = 0; k < g->m; k++) {
        if (efficient(g))
            g->phi[k] += v[k] - f[k];
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
            g->phi[k] += f[k];
        f[k] = 0.0;
    }
}

static void pcf_build(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push,
                      uint8_t *out)
{
    if (push) {
        /* Lines 31-32: half of the estimate's mass onto the active flow. */
        double *e = g->scratch;
        pcf_mass(g, e);
        double *f = flow(g, l, l->c);
        for (uint32_t k = 0; k < g->m; k++) {
            double d = e[k] * 0.5;
            f[k] += d;
            if (efficient(g))
                g->phi[k] += d;
        }
    }
    uint32_t cr[2] = {l->c, l->r};
    memcpy(out, l->f, sizeof(double) * 2 * g->m);
    memcpy(out + sizeof(double) * 2 * g->m, cr, sizeof(cr));
}

static void read_flow(const uint8_t *payload, uint32_t m, unsigned which,
                      double *out)
{
    memcpy(out, payload + sizeof(double) * (size_t)which * m,
           sizeof(double) * m);
}

static void pcf_receive(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                        const uint8_t *payload)
{
    uint32_t m = g->m, cr[2];
    memcpy(cr, payload + sizeof(double) * 2 * m, sizeof(cr));
    uint32_t cj = cr[0], rj = cr[1];
    if (cj > 1)
        return; /* corrupted control word: wait for the next message */
    double *neg = g->scratch;
    /* Lines 7-9: the other end changed roles first. Only a sender whose
     * roles are settled for its r (c = r mod 2: each change of roles
     * flips c and counts once in r) is followed: one that has cancelled
     * but not yet swapped has r one ahead of its c, and a message it sent
     * before swapping may arrive after we swapped; following it would
     * undo our swap and leave both ends ignoring each other for good. */
    if (l->c != cj && l->r == rj && cj == (rj & 1u))
        l->c = (uint8_t)cj;
    if (l->c != cj) {
        /* A sender that cancelled and has not swapped yet, while we did:
         * its active flow is our passive one. Its push on it is not lost:
         * sync that flow as line 24 would; the other (cancelled at both
         * ends) and our active flow are left alone. */
        if (l->r == rj) {
            read_flow(payload, m, cj, neg);
            for (uint32_t k = 0; k < m; k++)
                neg[k] = -neg[k];
            set_flow(g, l, cj, neg);
        }
        return;
    }
    unsigned a = l->c, p = 1u - a;
    /* Lines 11-12: the active flow, as push-flow. */
    read_flow(payload, m, a, neg);
    for (uint32_t k = 0; k < m; k++)
        neg[k] = -neg[k];
    set_flow(g, l, a, neg);
    /* Lines 13-27: the passive flow. */
    read_flow(payload, m, p, neg);
    bool opposite = true, zero = true;
    const double *fp = flow(g, l, p);
    for (uint32_t k = 0; k < m; k++) {
        opposite = opposite && neg[k] == -fp[k];
        zero = zero && neg[k] == 0.0;
    }
    if (opposite && l->r == rj) {
        /* Lines 14-15: conserved: cancel it, tell the other end by r. */
        cancel(g, l, p);
        l->r++;
    } else if (zero && l->r + 1 == rj) {
        /* Lines 18-20: the other end cancelled: so do we, and swap. */
        cancel(g, l, p);
        l->c = (uint8_t)p;
        l->r++;
    } else if (l->r <= rj) {
        /* Lines 23-24: not conserved: treat it as an active flow. */
        for (uint32_t k = 0; k < m; k++)
            neg[k] = -neg[k];
        set_flow(g, l, p, neg);
    }
}

static void pcf_lose(ftc_gossip_op_t *g, ftc_gossip_link_t *l)
{
    for (uint32_t k = 0; k < g->m; k++) {
        if (efficient(g))
            g->phi[k] -= l->f[k] + l->f[g->m + k];
        l->f[k] = l->f[g->m + k] = 0.0;
        if (g->params.exclusion == FTC_GOSSIP_EXCLUDE_ALL) {
            /* Undo the cancelled flows too: as if this process had never
             * exchanged with the failed one (push-flow's semantics). */
            g->phi[k] -= l->cancelled[k];
        } else {
            /* What was cancelled on this link stays in phi_i (the
             * paper's PCF: no fall-back): the mass account writes it
             * off. */
            g->written_off[k] += l->cancelled[k];
        }
        l->cancelled[k] = 0.0;
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
