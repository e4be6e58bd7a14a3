/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Push-flow (the paper's Figure 1): a process never sends its mass, only
 * the flow f_ij, the total it has pushed to j; j sets f_ji = -f_ij. The
 * mass e_i = v_i - sum_j f_ij is computed afresh from the flows at every
 * use, as Figure 1 line 9 does. A lost or corrupted message is repaired
 * by the next one on the link; a failed neighbour is excluded by setting
 * its flow to zero, which gives back to this process everything it ever
 * exchanged with it (the "fall-back" of the paper's Figure 4).
 */
#include <string.h>

#include "algo/gossip/gossip.h"

static size_t pf_payload_len(uint32_t m)
{
    return sizeof(double) * m;
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

static void pf_build(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push,
                     uint8_t *out)
{
    if (push) {
        pf_mass(g, g->scratch);
        for (uint32_t k = 0; k < g->m; k++)
            l->f[k] += g->scratch[k] * 0.5;
    }
    memcpy(out, l->f, sizeof(double) * g->m);
}

static bool pf_receive(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                       const uint8_t *payload)
{
    double v;
    for (uint32_t k = 0; k < g->m; k++) {
        memcpy(&v, payload + sizeof(double) * k, sizeof(v));
        l->f[k] = -v;
    }
    return true;
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
    .build = pf_build,
    .receive = pf_receive,
    .lose = pf_lose,
    .outflow = pf_outflow,
};
