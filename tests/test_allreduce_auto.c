/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What FTC_ALLREDUCE_AUTO resolves to (docs/corrected.md §5.7), and that
 * the allreduce runs it:
 *
 *  - ftc_allreduce_algo_resolve, a transport with no cost hints: the
 *    exchange up to n = 8, the butterfly from n = 9 to 16, reduce +
 *    bcast from n = 17; a named variant is kept as it is;
 *  - ftc_group_allreduce_algo, over a transport whose cost_hints say
 *    FTC_TRANSPORT_COSTLY_MESSAGES (transport.h): the exchange up to
 *    n = 3, the butterfly up to 16; hint bits the core does not know
 *    change nothing;
 *  - on the loopback, with and without the hint, a stream of 6 allreduces
 *    per member, 2 in flight at a time: every one sends exactly the
 *    resolved variant's messages (the exchange n(n - 1), the butterfly
 *    the checker's P log2 P + 2(n - P), reduce + bcast neither) and
 *    delivers its sum at every member, once;
 *  - members whose transports answer differently (one says costly, at
 *    n = 5): every allreduce of every member ends FTC_EMISMATCH, none
 *    FTC_OK, none hangs (the variant is signed into every message).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "checker.h"
#include "ftcoll_loopback.h"
#include "check.h"

#define NMAX 17

static void test_resolve(void)
{
    const ftc_allreduce_algo_t A = FTC_ALLREDUCE_AUTO;
    for (uint32_t n = 1; n <= 8; n++)
        CHECK_EQ(ftc_allreduce_algo_resolve(A, n), FTC_ALLREDUCE_EXCHANGE);
    for (uint32_t n = 9; n <= 16; n++)
        CHECK_EQ(ftc_allreduce_algo_resolve(A, n), FTC_ALLREDUCE_BUTTERFLY);
    for (uint32_t n = 17; n <= 64; n++)
        CHECK_EQ(ftc_allreduce_algo_resolve(A, n),
                 FTC_ALLREDUCE_REDUCE_BCAST);
    CHECK_EQ(ftc_allreduce_algo_resolve(A, 65536),
             FTC_ALLREDUCE_REDUCE_BCAST);
    const ftc_allreduce_algo_t named[] = {FTC_ALLREDUCE_REDUCE_BCAST,
                                          FTC_ALLREDUCE_EXCHANGE,
                                          FTC_ALLREDUCE_BUTTERFLY};
    for (uint32_t n = 1; n <= 9; n++)
        for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
            CHECK_EQ(ftc_allreduce_algo_resolve(named[i], n), named[i]);
}

/* The loopback's operations, with a cost_hints answer of our choice. */
static uint32_t hint_answer;
static uint32_t answer_hints(void *tp)
{
    (void)tp;
    return hint_answer;
}

/* Each member runs a stream of OPS allreduces on the group, WINDOW of
 * them in flight at a time: the next starts from a delivery. */
#define OPS 6
#define WINDOW 2

typedef struct member member_t;
typedef struct slot {
    member_t *m;
    int64_t in, out;
    int status;
    uint32_t delivered;
} slot_t;
struct member {
    ftc_context_t *ctx;
    ftc_group_t *g;
    uint32_t rank, next;
    slot_t ops[OPS];
};

static void start_next(member_t *m);

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    slot_t *s = arg;
    s->status = c->status;
    s->delivered++;
    start_next(s->m);
}

/* Operation k: rank r gives (r + 1)(k + 1), so its sum is (k + 1)
 * n (n + 1) / 2. */
static void start_next(member_t *m)
{
    if (m->next == OPS)
        return;
    uint32_t k = m->next++;
    slot_t *s = &m->ops[k];
    s->m = m;
    s->in = ((int64_t)m->rank + 1) * (k + 1);
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = FTC_ALGO_CORRECTED;
    a.f = 1;
    a.dtype = FTC_INT64;
    a.op = FTC_SUM;
    a.count = 1;
    a.sendbuf = &s->in;
    a.recvbuf = &s->out;
    a.deliver = on_deliver;
    a.deliver_arg = s;
    a.timeout_ns = 50000000;
    CHECK_OK(ftc_init_allreduce(m->g, &a, NULL));
}

/* n members; member r's transport answers hints[r] (UINT32_MAX: no
 * cost_hints at all). Each runs the stream above (auto, f = 1). */
static void run(uint32_t n, const uint32_t *hints, member_t *ms,
                uint64_t *messages)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    ftc_lb_world_t *w;
    CHECK_OK(ftc_lb_world_create(&lc, &w));
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.suspect_timeout_ns = 1000000;
    cfg.probe_timeout_ns = 2000000;
    ftc_transport_ops_t ops[NMAX];
    for (uint32_t r = 0; r < n; r++) {
        ops[r] = *ftc_lb_ops();
        /* Each context asks once, at its creation: the answer is set
         * just before. */
        ops[r].cost_hints = hints[r] == UINT32_MAX ? NULL : answer_hints;
        hint_answer = hints[r];
        memset(&ms[r], 0, sizeof(ms[r]));
        ms[r].rank = r;
        CHECK_OK(ftc_context_create(r, n, &ops[r], ftc_lb_endpoint(w, r),
                                    &cfg, &ms[r].ctx));
        ftc_lb_attach(w, r, ms[r].ctx);
        CHECK_OK(ftc_group_create(ms[r].ctx, 3, 1, n, NULL, &ms[r].g));
    }
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t k = 0; k < WINDOW; k++)
            start_next(&ms[r]);
    ftc_lb_run(w, 10000000);
    *messages = ftc_lb_messages_sent(w);
    for (uint32_t r = 0; r < n; r++) {
        ftc_group_destroy(ms[r].g);
        ftc_context_destroy(ms[r].ctx);
    }
    ftc_lb_world_destroy(w);
}

static void test_runs(void)
{
    static const uint32_t ns[] = {2, 3, 4, 5, 8, 9, 16, 17};
    static const uint32_t answers[] = {UINT32_MAX, 0,
                                       FTC_TRANSPORT_COSTLY_MESSAGES,
                                       ~FTC_TRANSPORT_COSTLY_MESSAGES};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        for (size_t h = 0; h < sizeof(answers) / sizeof(answers[0]); h++) {
            uint32_t n = ns[i], hints[NMAX];
            for (uint32_t r = 0; r < n; r++)
                hints[r] = answers[h];
            bool costly = answers[h] == FTC_TRANSPORT_COSTLY_MESSAGES;
            ftc_allreduce_algo_t want =
                n <= (costly ? 3u : 8u) ? FTC_ALLREDUCE_EXCHANGE
                : n <= 16               ? FTC_ALLREDUCE_BUTTERFLY
                                        : FTC_ALLREDUCE_REDUCE_BCAST;
            static member_t ms[NMAX];
            uint64_t messages;
            run(n, hints, ms, &messages);
            for (uint32_t r = 0; r < n; r++) {
                CHECK_MSG(ms[r].next == OPS, "n=%u hints %#x: member %u "
                          "started %u of %d allreduces", n, answers[h], r,
                          ms[r].next, OPS);
                for (uint32_t k = 0; k < ms[r].next; k++) {
                    const slot_t *s = &ms[r].ops[k];
                    int64_t sum = (int64_t)(k + 1) * n * (n + 1) / 2;
                    CHECK_MSG(s->delivered == 1 && s->status == FTC_OK
                                  && s->out == sum,
                              "n=%u hints %#x: member %u, allreduce %u: "
                              "delivered %u times, %s, %lld (want %lld)", n,
                              answers[h], r, k, s->delivered,
                              ftc_strerror(s->status), (long long)s->out,
                              (long long)sum);
                }
            }
            /* Every allreduce of the stream ran the variant: its count
             * OPS times, no message more (no probe either). */
            uint64_t ex = (uint64_t)OPS * n * (n - 1);
            uint64_t bf = (uint64_t)OPS * ftc_expected_butterfly_messages(n);
            if (want == FTC_ALLREDUCE_EXCHANGE)
                CHECK_MSG(messages == ex, "n=%u hints %#x: %llu messages, "
                          "the exchange's %llu", n, answers[h],
                          (unsigned long long)messages,
                          (unsigned long long)ex);
            else if (want == FTC_ALLREDUCE_BUTTERFLY)
                CHECK_MSG(messages == bf, "n=%u hints %#x: %llu messages, "
                          "the butterfly's %llu", n, answers[h],
                          (unsigned long long)messages,
                          (unsigned long long)bf);
            else
                CHECK_MSG(messages != ex && messages != bf,
                          "n=%u hints %#x: %llu messages, not reduce + "
                          "bcast's", n, answers[h],
                          (unsigned long long)messages);
        }
    }
}

/* ftc_group_allreduce_algo says what the group runs: the hint path of
 * the resolution, without a run. */
static void test_group_resolve(void)
{
    for (uint32_t n = 2; n <= NMAX; n++) {
        ftc_lb_config_t lc;
        ftc_lb_config_init(&lc);
        lc.n = n;
        ftc_lb_world_t *w;
        CHECK_OK(ftc_lb_world_create(&lc, &w));
        ftc_transport_ops_t ops = *ftc_lb_ops();
        ops.cost_hints = answer_hints;
        hint_answer = FTC_TRANSPORT_COSTLY_MESSAGES;
        ftc_context_t *ctx;
        ftc_group_t *g;
        CHECK_OK(ftc_context_create(0, n, &ops, ftc_lb_endpoint(w, 0), NULL,
                                    &ctx));
        CHECK_OK(ftc_group_create(ctx, 3, 1, n, NULL, &g));
        ftc_allreduce_algo_t want = n <= 3    ? FTC_ALLREDUCE_EXCHANGE
                                    : n <= 16 ? FTC_ALLREDUCE_BUTTERFLY
                                              : FTC_ALLREDUCE_REDUCE_BCAST;
        CHECK_EQ(ftc_group_allreduce_algo(g, FTC_ALLREDUCE_AUTO), want);
        CHECK_EQ(ftc_group_allreduce_algo(g, FTC_ALLREDUCE_REDUCE_BCAST),
                 FTC_ALLREDUCE_REDUCE_BCAST);
        CHECK_EQ(ftc_group_allreduce_algo(NULL, FTC_ALLREDUCE_AUTO),
                 FTC_ALLREDUCE_AUTO);
        ftc_group_destroy(g);
        ftc_context_destroy(ctx);
        ftc_lb_world_destroy(w);
    }
}

/* One member's transport says costly, the others' do not: at n = 5 it
 * resolves the butterfly, they the exchange. */
static void test_hints_differ(void)
{
    uint32_t n = 5, hints[NMAX];
    for (uint32_t culprit = 0; culprit < n; culprit++) {
        for (uint32_t r = 0; r < n; r++)
            hints[r] = r == culprit ? FTC_TRANSPORT_COSTLY_MESSAGES : 0;
        static member_t ms[NMAX];
        uint64_t messages;
        run(n, hints, ms, &messages);
        /* Every allreduce of every member's stream: the mismatch does
         * not go away with the first one. */
        for (uint32_t r = 0; r < n; r++) {
            CHECK_MSG(ms[r].next == OPS, "culprit %u: member %u started %u "
                      "of %d allreduces", culprit, r, ms[r].next, OPS);
            for (uint32_t k = 0; k < ms[r].next; k++) {
                const slot_t *s = &ms[r].ops[k];
                CHECK_MSG(s->delivered == 1 && s->status == FTC_EMISMATCH,
                          "culprit %u: member %u, allreduce %u: delivered "
                          "%u times, %s (want FTC_EMISMATCH)", culprit, r, k,
                          s->delivered, ftc_strerror(s->status));
            }
        }
    }
}

int main(void)
{
    test_resolve();
    test_group_resolve();
    test_runs();
    test_hints_differ();
    return check_report();
}
