/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ulfm agreement, in each of its failure-free rounds (rd2, rd4,
 * tree: ftc_group_set_ulfm_params), and the uniform allreduce beside the
 * corrected allreduce in the LogP simulator (backends/logp: L = 10,
 * o = 1, g = 1, so a receive costs o as a send does, which the loopback
 * does not charge), failure-free, one fresh world per measurement:
 *
 *   measure_ulfm_logp [P ...]      (default 16 64 256 1024 4096 16384)
 *
 * prints two Markdown tables (docs/ulfm.md): the last delivery's
 * virtual time, with the ratio to the allreduce's; and the messages, in
 * all and per member. A measurement, not a test: it exits 1 only if some
 * rank did not deliver FTC_OK.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ftcoll_logp.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/mitigation.h"

/* What runs: the agreement in each round, then the allreduces. */
enum what { AGREE_RD2, AGREE_RD4, AGREE_TREE, ALLREDUCE, UNIFORM, NWHAT };
static const char *const what_name[NWHAT] = {
    "agree rd2 (default)", "agree rd4", "agree tree", "allreduce",
    "uniform allreduce"};

static ftc_logp_world_t *world;
static uint64_t last_t;
static uint32_t good;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    (void)arg;
    if (c->status == FTC_OK)
        good++;
    uint64_t t = ftc_logp_now(world);
    if (t > last_t)
        last_t = t;
}

/* Runs one operation at every rank of a fresh world of n ranks: its
 * last delivery's time and its messages. false if a rank failed. */
static bool run(uint32_t n, enum what what, uint64_t *t, uint64_t *msgs)
{
    ftc_logp_config_t lc;
    ftc_logp_config_init(&lc);
    lc.n = n;
    lc.L = 10;
    lc.o = 1;
    lc.g = 1;
    if (ftc_logp_world_create(&lc, &world) != FTC_OK)
        return false;
    ftc_context_t **ctx = calloc(n, sizeof(*ctx));
    ftc_group_t **g = calloc(n, sizeof(*g));
    uint64_t *in = calloc(n, sizeof(*in)), *out = calloc(n, sizeof(*out));
    if (!ctx || !g || !in || !out)
        abort();
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_context_create(r, n, ftc_logp_ops(), ftc_logp_endpoint(world, r),
                               NULL, &ctx[r]) != FTC_OK)
            abort();
        ftc_logp_attach(world, r, ctx[r]);
        if (ftc_group_create(ctx[r], 7, 0, n, NULL, &g[r]) != FTC_OK)
            abort();
        ftc_ulfm_params_t up;
        ftc_ulfm_params_init(&up);
        up.agree_round = what == AGREE_RD4    ? FTC_AGREE_ROUND_RD4
                         : what == AGREE_TREE ? FTC_AGREE_ROUND_TREE
                                              : FTC_AGREE_ROUND_RD2;
        if (ftc_group_set_ulfm_params(g[r], &up) != FTC_OK)
            abort();
    }
    last_t = 0;
    good = 0;
    for (uint32_t r = 0; r < n; r++) {
        in[r] = ~(UINT64_C(1) << (r % 64));
        int rc;
        if (what < ALLREDUCE) {
            rc = ftc_init_agree(g[r], in[r], &out[r], on_deliver, NULL, NULL);
        } else {
            ftc_coll_args_t a;
            ftc_coll_args_init(&a);
            a.f = 1;
            a.dtype = FTC_UINT64;
            a.op = FTC_BAND;
            a.count = 1;
            a.sendbuf = &in[r];
            a.recvbuf = &out[r];
            a.deliver = on_deliver;
            a.uniform = what == UNIFORM;
            rc = ftc_init_allreduce(g[r], &a, NULL);
        }
        if (rc != FTC_OK)
            abort();
    }
    ftc_logp_run(world, UINT64_MAX);
    *t = last_t;
    *msgs = ftc_logp_messages_sent(world);
    bool ok = good == n;
    for (uint32_t r = 0; r < n; r++)
        ftc_context_destroy(ctx[r]);
    ftc_logp_world_destroy(world);
    free(ctx);
    free(g);
    free(in);
    free(out);
    return ok;
}

/* A table's title, then its header row: P and one column per run kind. */
static void table_header(const char *title)
{
    printf("%s:\n\n| P |", title);
    for (int w = 0; w < NWHAT; w++)
        printf(" %s |", what_name[w]);
    printf("\n|---|");
    for (int w = 0; w < NWHAT; w++)
        printf("---|");
    printf("\n");
}

int main(int argc, char **argv)
{
    static const uint32_t def[] = {16, 64, 256, 1024, 4096, 16384};
    uint32_t sizes[32], ns = 0;
    for (int i = 1; i < argc && ns < 32; i++) {
        char *end;
        unsigned long v = strtoul(argv[i], &end, 10);
        if (*end != '\0' || v < 1 || v > (1ul << 24)) {
            fprintf(stderr, "%s: P wants a whole number from 1 to 2^24\n",
                    argv[i]);
            return 2;
        }
        sizes[ns++] = (uint32_t)v;
    }
    if (ns == 0)
        for (ns = 0; ns < sizeof(def) / sizeof(def[0]); ns++)
            sizes[ns] = def[ns];
    int bad = 0;
    uint64_t (*t)[NWHAT] = calloc(ns, sizeof(*t));
    uint64_t (*m)[NWHAT] = calloc(ns, sizeof(*m));
    if (t == NULL || m == NULL)
        abort();
    for (uint32_t i = 0; i < ns; i++)
        for (int w = 0; w < NWHAT; w++)
            if (!run(sizes[i], (enum what)w, &t[i][w], &m[i][w]))
                bad = 1;
    table_header("Latency (time units; ratio to the allreduce)");
    for (uint32_t i = 0; i < ns; i++) {
        printf("| %u |", sizes[i]);
        for (int w = 0; w < NWHAT; w++) {
            if (w == ALLREDUCE)
                printf(" %" PRIu64 " |", t[i][w]);
            else
                printf(" %" PRIu64 " (%.2f) |", t[i][w],
                       (double)t[i][w] / (double)t[i][ALLREDUCE]);
        }
        printf("\n");
    }
    printf("\n");
    table_header("Messages (in all / per member)");
    for (uint32_t i = 0; i < ns; i++) {
        printf("| %u |", sizes[i]);
        for (int w = 0; w < NWHAT; w++)
            printf(" %" PRIu64 " / %.1f |", m[i][w],
                   (double)m[i][w] / (double)sizes[i]);
        printf("\n");
    }
    free(t);
    free(m);
    if (bad)
        fprintf(stderr, "some rank did not deliver FTC_OK\n");
    return bad;
}
