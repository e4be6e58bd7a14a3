/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process cut off from its group must not evict it (docs/decisions.md).
 *
 * One member goes deaf (ftc_lb_deafen_after_sends: it hears nothing from
 * its k-th send on, while everybody still hears it) during a stream of
 * corrected allreduces. It times out the peers it waits on and tells them
 * they are excluded; they answered its probes while running, so they know
 * it is the one that does not hear, and must not leave. Checked, for
 * f = 1 and 2, n = 4..9, every member as the deaf one and deafness from
 * every send index of the deaf member's failure-free stream (0 .. its
 * sends + 1):
 *
 *   - every other member delivers every operation exactly once, FTC_OK,
 *     with a result that holds each other member's input exactly once
 *     (the deaf member's input at most once), the same at all of them;
 *   - nobody but the deaf member ends FTC_EEXCLUDED (or with any error);
 *   - the deaf member delivers every operation exactly once, with
 *     FTC_EEXCLUDED or FTC_ETOO_MANY_FAILURES, or FTC_OK with the value
 *     the others agreed on: never a wrong FTC_OK;
 *   - the fault happened: a member deafened at or before its last
 *     failure-free send is deaf at the end.
 *
 * The keepalive is the only detector (the loopback reports crashes only,
 * and nobody crashes). Last line: "N passed, M failed" (runs).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"

#define NOPS 3
#define NMAX 9
/* The unit input (docs/decisions.md, "The unit input"): rank r gives 1 at
 * r, 1 at n and r + 1 at n + 1. */
#define COUNT (NMAX + 2)

typedef struct rank_run {
    int64_t in[COUNT];
    int64_t out[NOPS][COUNT];
    int status[NOPS];
    uint32_t delivered[NOPS];
} rank_run_t;

typedef struct run {
    uint32_t n, f;
    rank_run_t ranks[NMAX];
    uint64_t sends[NMAX];     /* each rank's sends over the stream */
    bool deaf_at_end;
    uint64_t dropped_deaf;
} run_t;

typedef struct slot {
    run_t *run;
    uint32_t rank, op;
} slot_t;

static uint64_t runs, failures;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    slot_t *s = arg;
    rank_run_t *rr = &s->run->ranks[s->rank];
    rr->delivered[s->op]++;
    rr->status[s->op] = c->status;
}

/* One stream; deaf < n deafens that rank after its k-th send (counted from
 * the start of the stream). FTC_OK or why the run could not be set up. */
static int run_stream(run_t *run, uint32_t n, uint32_t f, uint32_t deaf,
                      uint64_t k)
{
    memset(run, 0, sizeof(*run));
    run->n = n;
    run->f = f;
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = 1 + n * 131 + k;
    lc.jitter_ns = 300;
    ftc_lb_world_t *w;
    int rc = ftc_lb_world_create(&lc, &w);
    if (rc != FTC_OK)
        return rc;
    ftc_context_t *ctx[NMAX] = {0};
    ftc_group_t *grp[NMAX] = {0};
    slot_t slots[NMAX][NOPS];
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 0xC0FF;
    for (uint32_t r = 0; r < n && rc == FTC_OK; r++) {
        rc = ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(w, r),
                                &cfg, &ctx[r]);
        if (rc == FTC_OK) {
            ftc_lb_attach(w, r, ctx[r]);
            rc = ftc_group_create(ctx[r], 1, 0, n, NULL, &grp[r]);
        }
    }
    if (deaf < n)
        ftc_lb_deafen_after_sends(w, deaf, k);
    for (uint32_t r = 0; r < n && rc == FTC_OK; r++) {
        rank_run_t *rr = &run->ranks[r];
        rr->in[r] = 1;
        rr->in[n] = 1;
        rr->in[n + 1] = r + 1;
        for (uint32_t op = 0; op < NOPS && rc == FTC_OK; op++) {
            slots[r][op] = (slot_t){run, r, op};
            ftc_coll_args_t a;
            ftc_coll_args_init(&a);
            a.algo = FTC_ALGO_CORRECTED;
            a.f = f;
            a.root = op % n;
            a.dtype = FTC_INT64;
            a.op = FTC_SUM;
            a.count = n + 2;
            a.sendbuf = rr->in;
            a.recvbuf = rr->out[op];
            a.deliver = on_deliver;
            a.deliver_arg = &slots[r][op];
            rc = ftc_init_allreduce(grp[r], &a, NULL);
        }
    }
    if (rc == FTC_OK)
        ftc_lb_run(w, 50000000);
    for (uint32_t r = 0; r < n; r++)
        run->sends[r] = ftc_lb_rank_messages_sent(w, r);
    run->deaf_at_end = deaf < n && ftc_lb_is_deaf(w, deaf);
    ftc_lb_stats_t st;
    ftc_lb_stats(w, &st);
    run->dropped_deaf = st.dropped_deaf;
    for (uint32_t r = 0; r < n; r++)
        ftc_context_destroy(ctx[r]);
    ftc_lb_world_destroy(w);
    return rc;
}

/* Whether v is the unit input summed over every member but `maybe`, plus
 * `maybe` at most once. */
static bool value_ok(const int64_t *v, uint32_t n, uint32_t maybe)
{
    int64_t members = 0, weight = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (v[r] != 1 && !(r == maybe && v[r] == 0))
            return false;
        members += v[r];
        weight += v[r] * (int64_t)(r + 1);
    }
    return v[n] == members && v[n + 1] == weight;
}

/* Checks run (deaf member `deaf`); 0 or a message in why. */
static int check_run(const run_t *run, uint32_t deaf, bool must_be_deaf,
                     char *why, size_t len)
{
    uint32_t n = run->n;
    if (must_be_deaf && !run->deaf_at_end)
        return snprintf(why, len, "rank %u never went deaf", deaf), 1;
    for (uint32_t op = 0; op < NOPS; op++) {
        const int64_t *agreed = NULL;
        for (uint32_t r = 0; r < n; r++) {
            const rank_run_t *rr = &run->ranks[r];
            if (rr->delivered[op] != 1)
                return snprintf(why, len, "op %u: rank %u delivered %u times",
                                op, r, rr->delivered[op]), 1;
            if (r == deaf)
                continue;
            if (rr->status[op] != FTC_OK)
                return snprintf(why, len, "op %u: rank %u (hears) ended %s",
                                op, r, ftc_err_name(rr->status[op])), 1;
            if (!value_ok(rr->out[op], n, deaf))
                return snprintf(why, len, "op %u: rank %u: wrong value",
                                op, r), 1;
            if (agreed == NULL)
                agreed = rr->out[op];
            else if (memcmp(agreed, rr->out[op], sizeof(int64_t) * (n + 2)))
                return snprintf(why, len, "op %u: rank %u disagrees", op, r),
                       1;
        }
        if (deaf >= n)
            continue;
        const rank_run_t *dr = &run->ranks[deaf];
        int st = dr->status[op];
        if (st == FTC_OK) {
            if (agreed == NULL
                || memcmp(agreed, dr->out[op], sizeof(int64_t) * (n + 2)))
                return snprintf(why, len, "op %u: deaf rank %u: FTC_OK with "
                                "a value the group did not agree on", op,
                                deaf), 1;
        } else if (st != FTC_EEXCLUDED && st != FTC_ETOO_MANY_FAILURES) {
            return snprintf(why, len, "op %u: deaf rank %u ended %s", op,
                            deaf, ftc_err_name(st)), 1;
        }
    }
    return 0;
}

static void one(uint32_t n, uint32_t f, uint32_t deaf, uint64_t k,
                bool must_be_deaf)
{
    static run_t run;
    char why[256];
    runs++;
    int rc = run_stream(&run, n, f, deaf, k);
    if (rc != FTC_OK) {
        failures++;
        fprintf(stderr, "FAIL n=%u f=%u deaf=%u k=%" PRIu64 ": set-up: %s\n",
                n, f, deaf, k, ftc_strerror(rc));
        return;
    }
    if (check_run(&run, deaf, must_be_deaf, why, sizeof(why)) != 0) {
        failures++;
        if (failures <= 20)
            fprintf(stderr, "FAIL n=%u f=%u deaf=%u k=%" PRIu64 ": %s\n", n,
                    f, deaf, k, why);
    }
}

int main(void)
{
    static run_t clean;
    uint64_t deafened = 0;
    for (uint32_t f = 1; f <= 2; f++) {
        for (uint32_t n = 4; n <= NMAX; n++) {
            if (run_stream(&clean, n, f, UINT32_MAX, 0) != FTC_OK) {
                fprintf(stderr, "FAIL n=%u f=%u: failure-free set-up\n", n, f);
                failures++;
                continue;
            }
            char why[256];
            runs++;
            if (check_run(&clean, UINT32_MAX, false, why, sizeof(why))) {
                failures++;
                fprintf(stderr, "FAIL n=%u f=%u failure-free: %s\n", n, f,
                        why);
            }
            for (uint32_t d = 0; d < n; d++)
                for (uint64_t k = 0; k <= clean.sends[d] + 1; k++) {
                    bool must = k <= clean.sends[d];
                    deafened += must;
                    one(n, f, d, k, must);
                }
        }
    }
    printf("%" PRIu64 " runs with a member deafened within the stream\n",
           deafened);
    printf("%" PRIu64 " passed, %" PRIu64 " failed\n", runs - failures,
           failures);
    return failures != 0;
}
