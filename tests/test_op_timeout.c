/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Operation timeouts (args.timeout_ns, lib/core/timeout.c), over the
 * loopback's virtual clock. Rank 0 starts many allreduces at once, each
 * with its own timeout, in an order unrelated to their deadlines; rank 1
 * is alive (it answers keepalives) but never starts them, so nothing but
 * the timeout can end them. Some are cancelled first.
 *
 *   - each timed operation ends once, with FTC_ETIMEDOUT, not before its
 *     deadline and no later than the next event after it (the core asks
 *     the transport to wake it at the earliest deadline);
 *   - a cancelled operation ends once, with FTC_ECANCELED, and never
 *     times out afterwards (its deadline left with it);
 *   - deadlines equal to each other all fire.
 *
 * Then a round where rank 1 joins every operation before its deadline:
 * all deliver FTC_OK, and none times out while lingering after it (no
 * message is sent once they delivered).
 *
 * Seeded (FTC_TEST_SEED, default 1). Last line: "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "check.h"

#define OPS 48
#define MS 1000000ull

typedef struct slot {
    uint32_t delivered;
    int status;
    uint64_t at;
} slot_t;

static ftc_lb_world_t *world;
static slot_t slots[2][OPS];
static int64_t in[2][OPS], out[2][OPS];

typedef struct cb { int rank, k; } cb_t;
static cb_t cbs[2][OPS];

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    cb_t *cb = arg;
    slot_t *s = &slots[cb->rank][cb->k];
    s->delivered++;
    s->status = c->status;
    s->at = ftc_lb_now(world);
}

static void run(bool joined)
{
    memset(slots, 0, sizeof slots);
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = 2;
    if (ftc_lb_world_create(&lc, &world) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    ftc_context_t *ctx[2];
    ftc_group_t *g[2];
    for (uint32_t r = 0; r < 2; r++) {
        if (ftc_context_create(r, 2, ftc_lb_ops(), ftc_lb_endpoint(world, r),
                               &cfg, &ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(world, r, ctx[r]);
        if (ftc_group_create(ctx[r], 1, 0, 2, NULL, &g[r]) != FTC_OK)
            abort();
    }
    /* Timeouts of 1-40 ms (the keepalive's first probe is at 100 ms),
     * a few of them equal; a quarter of the operations cancelled. */
    uint64_t timeout[OPS], seq[OPS];
    bool cancelled[OPS];
    for (int k = 0; k < OPS; k++) {
        timeout[k] = (1 + rnd() % 40) * MS + (rnd() % 2 ? 0 : rnd() % MS);
        cancelled[k] = !joined && rnd() % 4 == 0;
    }
    uint64_t start = ftc_lb_now(world);
    int nr = joined ? 2 : 1;
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < OPS; k++) {
            ftc_coll_args_t a;
            ftc_coll_args_init(&a);
            /* Joined: the corrected allreduce, which lingers after it
             * delivers (the tree's finishes). */
            a.algo = joined ? FTC_ALGO_CORRECTED : FTC_ALGO_TREE;
            a.dtype = FTC_INT64;
            a.count = 1;
            in[r][k] = k;
            a.sendbuf = &in[r][k];
            a.recvbuf = &out[r][k];
            a.deliver = on_deliver;
            cbs[r][k] = (cb_t){r, k};
            a.deliver_arg = &cbs[r][k];
            /* Joined: rank 1 is in time; a long timeout at rank 0 that
             * would fire while the operation lingers if its deadline
             * stayed. */
            a.timeout_ns = joined ? timeout[k] + 50 * MS : timeout[k];
            CHECK_OK(ftc_init_allreduce(g[r], &a, &seq[k]));
        }
    for (int k = 0; k < OPS; k++)
        if (cancelled[k])
            CHECK_OK(ftc_cancel(g[0], seq[k]));
    /* Joined, every operation delivers at once: nothing after that is
     * the operations' own (an expired deadline of a delivered one would
     * send FTC_MSG_ENDED). */
    ftc_lb_run_until(world, start + MS, 10000000);
    uint64_t sent_early = ftc_lb_messages_sent(world);
    /* Well past every deadline, short of the keepalive's probes. */
    ftc_lb_run_until(world, start + 90 * MS, 10000000);
    if (joined)
        CHECK_EQ(ftc_lb_messages_sent(world), sent_early);
    uint32_t bad = 0, timed_out = 0, cancels = 0;
    for (int k = 0; k < OPS; k++) {
        const slot_t *s = &slots[0][k];
        if (joined) {
            bad += s->delivered != 1 || s->status != FTC_OK
                   || slots[1][k].delivered != 1 || slots[1][k].status != FTC_OK;
            continue;
        }
        if (cancelled[k]) {
            cancels++;
            if (s->delivered != 1 || s->status != FTC_ECANCELED || s->at > start + timeout[k]) {
                bad++;
                fprintf(stderr, "op %d (cancelled): delivered %u, %s at %llu\n", k,
                        s->delivered, ftc_err_name(s->status),
                        (unsigned long long)(s->at - start));
            }
            continue;
        }
        timed_out++;
        /* The loopback wakes the core at the deadline it asked for. */
        if (s->delivered != 1 || s->status != FTC_ETIMEDOUT
            || s->at < start + timeout[k] || s->at > start + timeout[k] + MS / 10) {
            bad++;
            fprintf(stderr, "op %d: delivered %u, %s at %llu, deadline %llu\n", k,
                    s->delivered, ftc_err_name(s->status),
                    (unsigned long long)(s->at - start),
                    (unsigned long long)timeout[k]);
        }
    }
    CHECK_EQ(bad, 0);
    if (!joined)
        CHECK_MSG(timed_out > OPS / 2 && cancels > 0,
                  "%u timed out, %u cancelled", timed_out, cancels);
    /* Rank 1 stays quiet and alive: nobody was declared failed. */
    CHECK_EQ(ftc_context_is_failed(ctx[0], 1), 0);
    for (uint32_t r = 0; r < 2; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(world);
}

int main(void)
{
    const char *seed = getenv("FTC_TEST_SEED");
    rng_state = seed != NULL ? strtoull(seed, NULL, 0) : 1;
    for (int i = 0; i < 3; i++) {
        run(false);
        run(true);
    }
    return check_report();
}
