/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An ftco operation's watches (lib/algo/ftco/ftco.c, rewatch_at and
 * settle_watches), counted by the transport's watch and unwatch calls on
 * the loopback, fault-free:
 *
 *   - a peer the operation stops and starts waiting on within one event
 *     keeps its watch: with per-message timeouts the root's wait for the
 *     DATA of the child that completes its collection ends in the event
 *     that sends that child the result, whose ACK it then waits for, and
 *     the root keeps the watch (it used to release and acquire it
 *     there). Per allreduce, a child
 *     watches its parent once (from its DATA to the result) and a parent
 *     its child once, for its DATA: the result is sent without an ACK to
 *     every process below the root (docs/ftco.md, "No ACK of the
 *     result"), so nobody is watched for one: 2(n - 1), 2 at n = 2. With
 *     per-message timeouts every result is ACKed, as the paper's, and the
 *     root keeps the watch of the child that completes its collection
 *     for the ACK of its result: 3(n - 1) - 1;
 *   - every watch is released by the time the operations are done
 *     (watch and unwatch balanced per process), in a stream of several
 *     operations on one group too, and the results are right.
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "ftcoll/topology.h"
#include "counted_watches.h"
#include "ftcoll_loopback.h"

enum { NMAX = 9, OPS = 4 };
_Static_assert((int)NMAX <= (int)COUNTED_NMAX, "counted_watches.h counts up to COUNTED_NMAX ranks");


typedef struct outcome {
    int calls, status;
} outcome_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    outcome_t *o = arg;
    o->calls++;
    o->status = c->status;
}

/* OPS fault-free allreduces of ftco on one group of n, the k-nomial
 * tree of radix 2, each run to its end before the next starts. */
static void run(uint32_t n, uint64_t ack_timeout_ns)
{
    char what[96];
    snprintf(what, sizeof(what), "n=%u, ack timeout %" PRIu64 " ns", n,
             ack_timeout_ns);
    check_set_context(what);
    nranks = n;
    memset(watches, 0, sizeof(watches));
    memset(unwatches, 0, sizeof(unwatches));
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = 1;
    if (!CHECK_OK(ftc_lb_world_create(&lc, &lb)))
        return;
    const ftc_transport_ops_t *counting = counted_ops();
    if (!CHECK(counting != NULL))
        return;
    ftc_context_t *ctx[NMAX];
    ftc_group_t *g[NMAX];
    for (uint32_t r = 0; r < n; r++) {
        if (!CHECK_OK(ftc_context_create(r, n, counting,
                                         ftc_lb_endpoint(lb, r), NULL,
                                         &ctx[r])))
            abort();
        ftc_lb_attach(lb, r, ctx[r]);
        if (!CHECK_OK(ftc_group_create(ctx[r], 1, 0, n, NULL, &g[r])))
            abort();
    }
    ftc_ftco_params_t fp;
    ftc_ftco_params_init(&fp);
    fp.tree = (ftc_tree_t){.kind = FTC_TREE_KNOMIAL, .k = 2};
    fp.ack_timeout_ns = ack_timeout_ns;
    uint32_t wrong = 0;
    for (uint32_t op = 0; op < OPS; op++) {
        int64_t in[NMAX], out[NMAX], want = 0;
        outcome_t res[NMAX];
        memset(res, 0, sizeof(res));
        for (uint32_t r = 0; r < n; r++) {
            in[r] = 1 + (int64_t)r * 10 + op;
            want += in[r];
            ftc_coll_args_t a;
            ftc_coll_args_init(&a);
            a.algo = FTC_ALGO_FTCO;
            a.params = &fp;
            a.dtype = FTC_INT64;
            a.op = FTC_SUM;
            a.count = 1;
            a.sendbuf = &in[r];
            a.recvbuf = &out[r];
            a.deliver = on_deliver;
            a.deliver_arg = &res[r];
            if (!CHECK_OK(ftc_init_allreduce(g[r], &a, NULL)))
                abort();
        }
        ftc_lb_run(lb, UINT64_MAX);
        for (uint32_t r = 0; r < n; r++)
            if (res[r].calls != 1 || res[r].status != FTC_OK || out[r] != want)
                wrong++;
    }
    CHECK_EQ(wrong, 0u);
    uint64_t all = 0;
    for (uint32_t r = 0; r < n; r++) {
        all += watches[r];
        CHECK_MSG(watches[r] == unwatches[r],
                  "rank %u: %" PRIu64 " watches, %" PRIu64 " unwatches", r,
                  watches[r], unwatches[r]);
    }
    /* (The file's comment counts them.) */
    uint32_t per_op = ack_timeout_ns == 0 ? 2 * (n - 1) : 3 * (n - 1) - 1;
    CHECK_MSG(all == (uint64_t)OPS * per_op,
              "%" PRIu64 " watches in %u allreduces, not %u", all, OPS,
              OPS * per_op);
    printf("%s: %" PRIu64 " watches in %u allreduces (root %" PRIu64 ")\n",
           what, all, OPS, watches[0]);
    for (uint32_t r = 0; r < n; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(lb);
    check_set_context(NULL);
}

int main(void)
{
    static const uint32_t ns[] = {2, 3, 9};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        run(ns[i], 0);
        run(ns[i], 20000);
    }
    return check_report();
}
