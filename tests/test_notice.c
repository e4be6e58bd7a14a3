/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process the group excluded while it was stopped learns it, when it
 * resumes, from a peer that talks to it, also when that peer learnt the
 * failure second-hand (lib/core/notice.c).
 *
 * The stop, on the loopback, between operation K - 1 and K of a stream
 * of corrected allreduces: member S starts no operation any more,
 * whatever it sends from then on arrives an hour late
 * (ftc_lb_set_delay), and its links to every member but one, P, are cut
 * (ftc_lb_cut_link). The cut links are the peers whose notice cannot
 * reach a stopped process (over ZeroMQ: a connection whose handshake
 * needs it); P is its one established peer: a message of P's reached S
 * before the stop. P's keepalive waits an hour, so P never judges S
 * itself; the others' keepalive times S out (their notices are lost on
 * the cut links) and the operation's failure list names S, which P
 * adopts: P learns the failure second-hand. Then every member but S
 * exits (crashes) and S resumes: it starts operation K.
 *
 * For n = 4..7, f = 1, every S and every P that talked to S, and the
 * roots 0 and n - 1, checked:
 *   - the fault happened: the cut links dropped messages;
 *   - every member but S delivers operation K once, FTC_OK, the sum of
 *     every input but S's, and holds S failed; P sent no probe (it
 *     learnt second-hand);
 *   - S ends operation K with FTC_EEXCLUDED (its call returns it, or it
 *     delivers it), and the message that excluded it came from P.
 * A run where the others cannot finish without P judging S itself (P
 * waits on S where the operation needs it: an hour) proves nothing
 * about the second-hand path; such runs are counted, not failed, and at
 * least half the runs must be of the other kind.
 *
 * "test_notice N S P ROOT" repeats one run. Last line: "N passed, M
 * failed" (runs).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_loopback.h"

#define NMIN 4
#define NMAX 7
#define K 2                               /* operations before the stop */
#define NOPS (K + 1)
#define MS 1000000ull
#define HOUR (3600ull * 1000 * MS)
/* Far past the others' keepalive (100 + 200 ms), far short of P's. */
#define HORIZON (60ull * 1000 * MS)

typedef struct slot {
    uint32_t delivered;
    int status;
    int64_t out;
} slot_t;

typedef struct run {
    uint32_t n, s, p, root;
    ftc_lb_world_t *w;
    ftc_context_t *ctx[NMAX];
    ftc_group_t *grp[NMAX];
    int64_t in[NMAX];
    slot_t slots[NMAX][NOPS];
    bool talked[NMAX][NMAX];    /* [src][dest]: a message arrived */
    uint32_t excluded_by;       /* source of the message that excluded S */
} run_t;

static uint64_t runs, failures, blocked;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    slot_t *s = arg;
    s->delivered++;
    s->status = c->status;
}

static int start(run_t *run, uint32_t r, uint32_t op)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = FTC_ALGO_CORRECTED;
    a.f = 1;
    a.root = run->root;
    a.dtype = FTC_INT64;
    a.op = FTC_SUM;
    a.count = 1;
    a.sendbuf = &run->in[r];
    a.recvbuf = &run->slots[r][op].out;
    a.deliver = on_deliver;
    a.deliver_arg = &run->slots[r][op];
    int rc = ftc_init_allreduce(run->grp[r], &a, NULL);
    if (rc != FTC_OK) {     /* ends the operation there, as a delivery */
        run->slots[r][op].delivered++;
        run->slots[r][op].status = rc;
    }
    return rc;
}

/* Handle events due by t (UINT64_MAX: until none is left) one at a
 * time: who talked to whom, and which message excluded S. */
static void step_until(run_t *run, uint64_t t)
{
    for (uint64_t i = 0; i < 50000000
                         && (t == UINT64_MAX ? ftc_lb_step(run->w) == 1
                                             : ftc_lb_run_until(run->w, t, 1)
                                                   == 1);
         i++) {
        uint32_t src, dest;
        if (!ftc_lb_last_arrival(run->w, &src, &dest) || src >= run->n
            || dest >= run->n)
            continue;
        run->talked[src][dest] = true;
        if (dest == run->s && run->excluded_by == UINT32_MAX
            && ftc_context_is_excluded(run->ctx[dest]))
            run->excluded_by = src;
    }
}

static int set_up(run_t *run)
{
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = run->n;
    lc.seed = 1 + run->n;
    lc.jitter_ns = 300;
    lc.detect_delay_ns = UINT64_MAX;  /* a stop is no crash: no report */
    int rc = ftc_lb_world_create(&lc, &run->w);
    for (uint32_t r = 0; r < run->n && rc == FTC_OK; r++) {
        ftc_config_t cfg;
        ftc_config_init(&cfg);
        cfg.job_token = 0x5709;
        cfg.suspect_timeout_ns = r == run->p ? HOUR : 100 * MS;
        cfg.probe_timeout_ns = r == run->p ? HOUR : 200 * MS;
        cfg.probe_backoff = 0;
        rc = ftc_context_create(r, run->n, ftc_lb_ops(),
                                ftc_lb_endpoint(run->w, r), &cfg,
                                &run->ctx[r]);
        if (rc == FTC_OK) {
            ftc_lb_attach(run->w, r, run->ctx[r]);
            rc = ftc_group_create(run->ctx[r], 1, 0, run->n, NULL,
                                  &run->grp[r]);
        }
        run->in[r] = (int64_t)1 << r;
    }
    return rc;
}

static void tear_down(run_t *run)
{
    for (uint32_t r = 0; r < run->n; r++)
        ftc_context_destroy(run->ctx[r]);
    ftc_lb_world_destroy(run->w);
}

/* 0: passed; 1: failed (why says why); 2: P had to judge S itself. */
static int one(run_t *run, char *why, size_t len)
{
    uint32_t n = run->n, s = run->s, p = run->p;
    int rc = set_up(run);
    for (uint32_t op = 0; op < K && rc == FTC_OK; op++)
        for (uint32_t r = 0; r < n && rc == FTC_OK; r++)
            rc = start(run, r, op);
    if (rc != FTC_OK)
        return snprintf(why, len, "set-up: %s", ftc_strerror(rc)), 1;
    step_until(run, UINT64_MAX);
    for (uint32_t op = 0; op < K; op++)
        for (uint32_t r = 0; r < n; r++)
            if (run->slots[r][op].delivered != 1
                || run->slots[r][op].status != FTC_OK)
                return snprintf(why, len, "before the stop: op %u at rank "
                                "%u: %u deliveries, %s", op, r,
                                run->slots[r][op].delivered,
                                ftc_err_name(run->slots[r][op].status)), 1;
    if (!run->talked[p][s])
        return snprintf(why, len, "rank %u never sent to rank %u", p, s), 1;

    /* S stops; only P's messages reach it. */
    uint64_t t_stop = ftc_lb_now(run->w);
    ftc_lb_set_delay(run->w, s, HOUR);
    for (uint32_t r = 0; r < n; r++)
        if (r != s && r != p)
            ftc_lb_cut_link(run->w, s, r);
    for (uint32_t r = 0; r < n; r++)
        if (r != s)
            (void)start(run, r, K);
    step_until(run, t_stop + HORIZON);
    ftc_lb_stats_t st;
    ftc_lb_stats(run->w, &st);
    if (st.dropped_cut == 0)
        return snprintf(why, len, "the cut links dropped nothing"), 1;
    int64_t want = 0;
    for (uint32_t r = 0; r < n; r++)
        want += r != s ? run->in[r] : 0;
    for (uint32_t r = 0; r < n; r++) {
        if (r == s)
            continue;
        const slot_t *sl = &run->slots[r][K];
        if (sl->delivered == 0)
            return 2;   /* waits on P, which waits on S for an hour */
        if (sl->delivered != 1 || sl->status != FTC_OK || sl->out != want)
            return snprintf(why, len, "op %u at rank %u: %u deliveries, %s, "
                            "%" PRId64 " (want %" PRId64 ")", K, r,
                            sl->delivered, ftc_err_name(sl->status), sl->out,
                            want), 1;
        if (!ftc_context_is_failed(run->ctx[r], s))
            return snprintf(why, len, "rank %u does not hold rank %u failed",
                            r, s), 1;
    }
    ftc_counters_t c;
    ftc_context_counters(run->ctx[p], &c);
    if (c.probes_sent != 0)
        return snprintf(why, len, "rank %u probed: it did not learn rank %u's "
                        "failure second-hand", p, s), 1;

    /* The others exit; S resumes and starts operation K. */
    for (uint32_t r = 0; r < n; r++)
        if (r != s)
            ftc_lb_crash(run->w, r);
    (void)start(run, s, K);
    step_until(run, UINT64_MAX);
    const slot_t *sl = &run->slots[s][K];
    if (sl->delivered != 1)
        return snprintf(why, len, "the resumed rank %u: %u deliveries", s,
                        sl->delivered), 1;
    if (sl->status != FTC_EEXCLUDED)
        return snprintf(why, len, "the resumed rank %u ended %s, not "
                        "FTC_EEXCLUDED", s, ftc_err_name(sl->status)), 1;
    if (run->excluded_by != p)
        return snprintf(why, len, "the resumed rank %u was excluded by rank "
                        "%u's message, not rank %u's", s, run->excluded_by,
                        p), 1;
    return 0;
}

static void one_run(uint32_t n, uint32_t s, uint32_t p, uint32_t root,
                    bool verbose)
{
    static run_t run;
    char why[256] = "";
    memset(&run, 0, sizeof(run));
    run.n = n;
    run.s = s;
    run.p = p;
    run.root = root;
    run.excluded_by = UINT32_MAX;
    int v = one(&run, why, sizeof(why));
    tear_down(&run);
    runs++;
    if (v == 2) {
        blocked++;
        if (verbose)
            printf("n=%u S=%u P=%u root=%u: the others waited on rank %u "
                   "(not counted)\n", n, s, p, root, p);
    } else if (v == 1) {
        failures++;
        if (failures <= 20 || verbose)
            fprintf(stderr, "FAIL n=%u S=%u P=%u root=%u: %s\n", n, s, p,
                    root, why);
    } else if (verbose) {
        printf("n=%u S=%u P=%u root=%u: ok\n", n, s, p, root);
    }
}

/* Who talks to whom in a fault-free stream: the runs' (S, P) pairs. */
static void who_talks(uint32_t n, uint32_t root, bool talked[NMAX][NMAX])
{
    static run_t run;
    memset(&run, 0, sizeof(run));
    run.n = n;
    run.s = n;                  /* nobody stops */
    run.p = n;                  /* nobody's keepalive is long */
    run.root = root;
    run.excluded_by = UINT32_MAX;
    if (set_up(&run) == FTC_OK) {
        for (uint32_t op = 0; op < K; op++)
            for (uint32_t r = 0; r < n; r++)
                (void)start(&run, r, op);
        step_until(&run, UINT64_MAX);
    }
    memcpy(talked, run.talked, sizeof(run.talked));
    tear_down(&run);
}

int main(int argc, char **argv)
{
    uint64_t passed = 0;
    if (argc == 5) {
        unsigned long a[4];
        for (int i = 0; i < 4; i++)
            a[i] = strtoul(argv[i + 1], NULL, 10);
        if (a[0] < 2 || a[0] > NMAX || a[1] >= a[0] || a[2] >= a[0]
            || a[1] == a[2] || a[3] >= a[0]) {
            fprintf(stderr, "test_notice: N in 2..%d, S, P (S != P) and "
                    "ROOT below N\n", NMAX);
            return 2;
        }
        one_run((uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2],
                (uint32_t)a[3], true);
        passed = runs - failures - blocked;
    } else if (argc != 1) {
        fprintf(stderr, "usage: test_notice [N S P ROOT]   (one run; none: "
                "all)\n");
        return 2;
    } else {
        for (uint32_t n = NMIN; n <= NMAX; n++)
            for (uint32_t ri = 0; ri < 2; ri++) {
                uint32_t root = ri == 0 ? 0 : n - 1;
                bool talked[NMAX][NMAX];
                who_talks(n, root, talked);
                for (uint32_t s = 0; s < n; s++)
                    for (uint32_t p = 0; p < n; p++)
                        if (p != s && talked[p][s])
                            one_run(n, s, p, root, false);
            }
        passed = runs - failures - blocked;
        if (runs == 0 || blocked * 2 > runs) {
            /* (A failure of the whole, on top of the runs'.) */
            fprintf(stderr, "FAIL: %" PRIu64 " of %" PRIu64 " runs could not "
                    "finish without P: the second-hand path went untested\n",
                    blocked, runs);
            failures++;
        }
    }
    printf("second-hand runs: %" PRIu64 ", not applicable (P needed): %"
           PRIu64 "\n", runs - blocked, blocked);
    printf("%" PRIu64 " passed, %" PRIu64 " failed\n", passed, failures);
    return failures != 0;
}
