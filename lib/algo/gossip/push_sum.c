/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Push-sum (Kempe, Dobra & Gehrke; the paper's section II-A): each
 * process keeps its mass (s, w) and pushes half of it to a neighbour.
 * Mass moves, so a lost message or a failed process takes mass with it:
 * push-sum tolerates neither, and is here as the baseline the flows
 * improve on.
 */
#include <string.h>

#include "algo/gossip/gossip.h"

static size_t ps_payload_len(uint32_t m)
{
    return sizeof(double) * m;
}

static void ps_mass(const ftc_gossip_op_t *g, double *e)
{
    memcpy(e, g->phi, sizeof(double) * g->m);
}

static void ps_build(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push,
                     uint8_t *out)
{
    (void)l;
    double *half = g->scratch;
    for (uint32_t k = 0; k < g->m; k++) {
        half[k] = push ? g->phi[k] * 0.5 : 0.0;
        g->phi[k] -= half[k];
    }
    memcpy(out, half, sizeof(double) * g->m);
}

static bool ps_receive(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                       const uint8_t *payload)
{
    (void)l;
    double v;
    for (uint32_t k = 0; k < g->m; k++) {
        memcpy(&v, payload + sizeof(double) * k, sizeof(v));
        g->phi[k] += v;
    }
    return true;
}

static void ps_lose(ftc_gossip_op_t *g, ftc_gossip_link_t *l)
{
    /* Nothing to undo: what went to the failed process is gone. */
    (void)g, (void)l;
}

const ftc_gossip_rules_t ftc_gossip_push_sum_rules = {
    .name = "push-sum",
    .link_flows = 0,
    .tolerant = false,
    .payload_len = ps_payload_len,
    .mass = ps_mass,
    .build = ps_build,
    .receive = ps_receive,
    .lose = ps_lose,
    .outflow = NULL,
};
