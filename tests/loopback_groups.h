/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A loopback world of n ranks, each with a context and the whole world
 * as group 1, and what a test of a stream of calls on it needs besides:
 * the delivery callback that counts calls and keeps the status, and a
 * seeded xorshift draw. For the stream tests (test_stream_template.c,
 * test_stream_template_exchange.c, test_linger_retire.c), which each
 * built and tore down the same world. Included by one file of a test
 * program, after check.h.
 */
#ifndef FTCOLL_TESTS_LOOPBACK_GROUPS_H
#define FTCOLL_TESTS_LOOPBACK_GROUPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"

typedef struct outcome {
    int calls, status;
} outcome_t;

static inline void on_deliver(const ftc_completion_t *c, void *arg)
{
    outcome_t *o = arg;
    o->calls++;
    o->status = c->status;
}

/* Creates the world (seed 1) and, for every rank r < n, ctx[r] and the
 * group g[r] over every rank. false (with a failed check) if the world
 * cannot be made; a rank's context or group that cannot be made aborts,
 * since nothing after it could be checked. */
static inline bool loopback_groups_create(uint32_t n, ftc_lb_world_t **lb,
                                          ftc_context_t **ctx,
                                          ftc_group_t **g)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = 1;
    if (!CHECK_OK(ftc_lb_world_create(&lc, lb)))
        return false;
    for (uint32_t r = 0; r < n; r++) {
        if (!CHECK_OK(ftc_context_create(r, n, ftc_lb_ops(),
                                         ftc_lb_endpoint(*lb, r), NULL,
                                         &ctx[r])))
            abort();
        ftc_lb_attach(*lb, r, ctx[r]);
        if (!CHECK_OK(ftc_group_create(ctx[r], 1, 0, n, NULL, &g[r])))
            abort();
    }
    return true;
}

static inline void loopback_groups_destroy(uint32_t n, ftc_lb_world_t *lb,
                                           ftc_context_t **ctx,
                                           ftc_group_t **g)
{
    for (uint32_t r = 0; r < n; r++) {
        ftc_group_destroy(g[r]);
        ftc_context_destroy(ctx[r]);
    }
    ftc_lb_world_destroy(lb);
}

/* The arguments of one rank's int64 call, delivering into res: the
 * fields every stream test sets alike; the test sets root and op. */
static inline ftc_coll_args_t loopback_int64_args(ftc_algo_t algo,
                                                  uint32_t f,
                                                  const void *params,
                                                  uint32_t count,
                                                  const int64_t *in,
                                                  int64_t *out,
                                                  outcome_t *res)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = algo;
    a.f = f;
    a.params = params;
    a.dtype = FTC_INT64;
    a.count = count;
    a.sendbuf = in;
    a.recvbuf = out;
    a.deliver = on_deliver;
    a.deliver_arg = res;
    return a;
}

/* xorshift64: the same seed, the same calls. */
static uint64_t draw_state = 88172645463325252ull;
static inline uint32_t draw(uint32_t bound)
{
    draw_state ^= draw_state << 13;
    draw_state ^= draw_state >> 7;
    draw_state ^= draw_state << 17;
    return (uint32_t)(draw_state % bound);
}

#endif
