/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmgs_qr: distributed modified Gram-Schmidt QR over gossip allreduces,
 * the case study of the push-cancel-flow paper (its Figure 8). Process r
 * holds row r of a random n x m matrix V; every norm and every inner
 * product of the factorization is a gossip average (times n), so no
 * process coordinates the others. At the end each process holds its row
 * of Q and its own estimate of R; the program reports the factorization
 * error max_r ||V_r - Q_r R^(r)|| / ||V||, in the infinity norm, and the
 * loss of orthogonality ||I - Q^T Q||, for PCF and push-flow side by side.
 *
 *   dmgs_qr [--sizes N,N,...] [--cols M] [--algo pcf|push-flow|both]
 *           [--loss P] [--cut] [--seed S] [--target EPS] [--check EPS]
 *
 *   --sizes   processes (rows); powers of two: the hypercube (16,64,256)
 *   --cols    columns m (16)
 *   --loss P  every message lost with probability P
 *   --cut     the link 0-1 fails for good as column m/2 starts (not with
 *             --loss: see the keepalive below)
 *   --target  each allreduce's relative accuracy (1e-15)
 *   --check E exit 1 if PCF's factorization error exceeds E anywhere
 *
 * Everything below the "ftcoll" comments is what an embedder writes; the
 * ftc_lb_* calls stand in for a real transport (here every process lives
 * in this one program, so the driver runs one allreduce at a time for
 * all of them).
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/gossip.h"
#include "ftcoll_loopback.h"

#ifndef FTC_TOOL_VERSION
#define FTC_TOOL_VERSION "(version unknown)"
#endif

typedef struct proc {
    double *v, *w, *q, *r;   /* row of V, working row, row of Q, R (m x m) */
    double *in, *out;        /* one allreduce's buffers (m each) */
    int delivered, status;
} proc_t;

typedef struct run_cfg {
    uint32_t n, m;
    ftc_algo_t algo;
    double loss, target;
    int cut;
    uint64_t seed;
} run_cfg_t;

typedef struct result {
    double fact_err, orth_err;
    uint32_t failed_ops;
    uint64_t messages;
    uint64_t dropped_cut;    /* messages the cut link swallowed */
} result_t;

/* ftcoll: the deliver callback ends one allreduce, exactly once. */
static void on_deliver(const ftc_completion_t *c, void *arg)
{
    proc_t *p = arg;
    p->delivered++;
    p->status = c->status;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One gossip allreduce at every process: p->out = the sum over all
 * processes of p->in (count values), each process its own estimate.
 * Returns how many processes did not deliver FTC_OK. */
static uint32_t sum_all(ftc_lb_world_t *w, ftc_group_t **grp, proc_t *P,
                        const run_cfg_t *rc, uint32_t count)
{
    /* ftcoll: the average of (x_i, 1); the sum is n times it (every
     * process knows n, and no root holds the weight). */
    ftc_gossip_params_t gp;
    ftc_gossip_params_init(&gp);
    gp.aggregate = FTC_GOSSIP_AVERAGE;
    gp.neighbours = FTC_NEIGHBOURS_HYPERCUBE;
    gp.target = rc->target;
    gp.max_iterations = 1500;
    for (uint32_t i = 0; i < rc->n; i++) {
        proc_t *p = &P[i];
        p->delivered = 0;
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.algo = rc->algo;
        a.dtype = FTC_DOUBLE;
        a.op = FTC_SUM;
        a.f = 0;
        a.count = count;
        a.sendbuf = p->in;
        a.recvbuf = p->out;
        a.deliver = on_deliver;
        a.deliver_arg = p;
        a.params = &gp;
        int rc2 = ftc_init_allreduce(grp[i], &a, NULL);
        if (rc2 != FTC_OK) {
            fprintf(stderr, "dmgs_qr: ftc_init_allreduce: %s\n",
                    ftc_strerror(rc2));
            exit(1);
        }
    }
    ftc_lb_run(w, UINT64_MAX); /* until the network is quiet */
    uint32_t bad = 0;
    for (uint32_t i = 0; i < rc->n; i++) {
        if (P[i].delivered != 1 || P[i].status != FTC_OK)
            fprintf(stderr, "dmgs_qr: n = %u, process %u: %s\n", rc->n, i,
                    P[i].delivered != 1 ? "no delivery"
                                        : ftc_strerror(P[i].status));
        bad += P[i].delivered != 1 || P[i].status != FTC_OK;
        for (uint32_t k = 0; k < count; k++)
            P[i].out[k] *= rc->n;
    }
    return bad;
}

static void run(const run_cfg_t *rc, result_t *res)
{
    uint32_t n = rc->n, m = rc->m;
    memset(res, 0, sizeof(*res));
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = n;
    lc.seed = rc->seed;
    lc.drop_prob = rc->loss;
    ftc_lb_world_t *w;
    if (ftc_lb_world_create(&lc, &w) != FTC_OK)
        exit(1);
    ftc_context_t **ctx = calloc(n, sizeof(*ctx));
    ftc_group_t **grp = calloc(n, sizeof(*grp));
    proc_t *P = calloc(n, sizeof(*P));
    if (ctx == NULL || grp == NULL || P == NULL)
        exit(1);
    /* ftcoll: one context and one group per process. A cut link is found
     * by the keepalive alone: with --cut, probe a silent neighbour after
     * two periods (20 us). Not with loss: the core's keepalive takes a lost
     * probe for a dead peer (the transport is meant to be reliable), so a
     * lossy network wants the default, long timeouts. */
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.seed = rc->seed;
    if (rc->cut) {
        cfg.suspect_timeout_ns = 20000;
        cfg.probe_timeout_ns = 20000;
    }
    uint64_t s = rc->seed * 1000003u + n;
    for (uint32_t i = 0; i < n; i++) {
        if (ftc_context_create(i, n, ftc_lb_ops(), ftc_lb_endpoint(w, i), &cfg,
                               &ctx[i]) != FTC_OK)
            exit(1);
        ftc_lb_attach(w, i, ctx[i]);
        if (ftc_group_create(ctx[i], 1, 0, n, NULL, &grp[i]) != FTC_OK)
            exit(1);
        proc_t *p = &P[i];
        p->v = calloc(m, sizeof(double));
        p->w = calloc(m, sizeof(double));
        p->q = calloc(m, sizeof(double));
        p->r = calloc((size_t)m * m, sizeof(double));
        p->in = calloc(m, sizeof(double));
        p->out = calloc(m, sizeof(double));
        if (!p->v || !p->w || !p->q || !p->r || !p->in || !p->out)
            exit(1);
        for (uint32_t j = 0; j < m; j++)
            p->v[j] = p->w[j] = (double)(mix(&s) >> 11) / 9007199254740992.0;
    }
    /* Modified Gram-Schmidt, column by column: r_kk = ||w_k||, q_k = w_k /
     * r_kk, r_kj = q_k . w_j and w_j -= r_kj q_k for j > k; each process
     * uses its own estimates of r. */
    for (uint32_t k = 0; k < m; k++) {
        if (rc->cut && k == m / 2)
            ftc_lb_cut_link(w, 0, 1);
        for (uint32_t i = 0; i < n; i++)
            P[i].in[0] = P[i].w[k] * P[i].w[k];
        res->failed_ops += sum_all(w, grp, P, rc, 1);
        for (uint32_t i = 0; i < n; i++) {
            proc_t *p = &P[i];
            double rkk = sqrt(p->out[0]);
            p->r[(size_t)k * m + k] = rkk;
            p->q[k] = p->w[k] / rkk;
        }
        if (k + 1 == m)
            break;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = k + 1; j < m; j++)
                P[i].in[j - k - 1] = P[i].q[k] * P[i].w[j];
        res->failed_ops += sum_all(w, grp, P, rc, m - k - 1);
        for (uint32_t i = 0; i < n; i++) {
            proc_t *p = &P[i];
            for (uint32_t j = k + 1; j < m; j++) {
                double rkj = p->out[j - k - 1];
                p->r[(size_t)k * m + j] = rkj;
                p->w[j] -= rkj * p->q[k];
            }
        }
    }
    res->messages = ftc_lb_messages_sent(w);
    ftc_lb_stats_t st;
    ftc_lb_stats(w, &st);
    res->dropped_cut = st.dropped_cut;
    /* ||V - QR||_inf / ||V||_inf, row r against its own R. */
    double vnorm = 0, dnorm = 0;
    for (uint32_t i = 0; i < n; i++) {
        double vs = 0, ds = 0;
        for (uint32_t j = 0; j < m; j++) {
            double qr = 0;
            for (uint32_t k = 0; k <= j; k++)
                qr += P[i].q[k] * P[i].r[(size_t)k * m + j];
            vs += fabs(P[i].v[j]);
            ds += fabs(P[i].v[j] - qr);
        }
        vnorm = vs > vnorm ? vs : vnorm;
        dnorm = ds > dnorm || ds != ds ? ds : dnorm;
    }
    res->fact_err = dnorm / vnorm;
    /* ||I - Q^T Q||_inf, computed here where every row is at hand. */
    double orth = 0;
    for (uint32_t a = 0; a < m; a++) {
        double row = 0;
        for (uint32_t b = 0; b < m; b++) {
            long double d = 0;
            for (uint32_t i = 0; i < n; i++)
                d += (long double)P[i].q[a] * P[i].q[b];
            row += fabs((double)((a == b ? 1.0L : 0.0L) - d));
        }
        orth = row > orth || row != row ? row : orth;
    }
    res->orth_err = orth;
    for (uint32_t i = 0; i < n; i++) {
        ftc_context_destroy(ctx[i]);
        free(P[i].v), free(P[i].w), free(P[i].q), free(P[i].r);
        free(P[i].in), free(P[i].out);
    }
    ftc_lb_world_destroy(w);
    free(ctx), free(grp), free(P);
}

static int usage(FILE *out, int status)
{
    fputs("usage: dmgs_qr [--sizes N,N,...] [--cols M] [--algo "
          "pcf|push-flow|both]\n"
          "               [--loss P] [--cut] [--seed S] [--target EPS] "
          "[--check EPS]\n"
          "       dmgs_qr -h|--help | -V|--version\n"
          "N: powers of two >= 2 (16,64,256); M >= 2 (16)\n",
          out);
    return status;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sizes", required_argument, NULL, 'n'},
        {"cols", required_argument, NULL, 'm'},
        {"algo", required_argument, NULL, 'a'},
        {"loss", required_argument, NULL, 'l'},
        {"cut", no_argument, NULL, 'c'},
        {"seed", required_argument, NULL, 's'},
        {"target", required_argument, NULL, 't'},
        {"check", required_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *sizes = "16,64,256", *algo = "both";
    run_cfg_t rc = {.m = 16, .target = 1e-15, .seed = 1};
    double check = 0;
    int c;
    char *end;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
        switch (c) {
        case 'h': return usage(stdout, 0);
        case 'V': printf("dmgs_qr %s\n", FTC_TOOL_VERSION); return 0;
        case 'n': sizes = optarg; break;
        case 'a': algo = optarg; break;
        case 'c': rc.cut = 1; break;
        case 'm':
            rc.m = (uint32_t)strtoul(optarg, &end, 10);
            if (*end != '\0' || rc.m < 2 || rc.m > 1024) {
                fprintf(stderr, "dmgs_qr: --cols: expected 2..1024\n");
                return 2;
            }
            break;
        case 'l':
            rc.loss = strtod(optarg, &end);
            if (*end != '\0' || !(rc.loss >= 0 && rc.loss < 1)) {
                fprintf(stderr, "dmgs_qr: --loss: expected a probability < 1\n");
                return 2;
            }
            break;
        case 's':
            rc.seed = strtoull(optarg, &end, 10);
            if (*end != '\0') {
                fprintf(stderr, "dmgs_qr: --seed: expected an integer\n");
                return 2;
            }
            break;
        case 't':
        case 'k': {
            double e = strtod(optarg, &end);
            if (*end != '\0' || !(e > 0)) {
                fprintf(stderr, "dmgs_qr: --%s: expected a number > 0\n",
                        c == 't' ? "target" : "check");
                return 2;
            }
            *(c == 't' ? &rc.target : &check) = e;
            break;
        }
        default:
            fprintf(stderr, "dmgs_qr: unknown option or missing value: '%s'\n",
                    argv[optind - 1]);
            return usage(stderr, 2);
        }
    }
    if (optind < argc)
        return usage(stderr, 2);
    if (rc.cut && rc.loss > 0) {
        fprintf(stderr, "dmgs_qr: --cut and --loss: one fault at a time (the "
                        "short keepalive that finds a cut takes a lost probe "
                        "for a dead peer)\n");
        return 2;
    }
    ftc_algo_t algos[2];
    unsigned nalgo = 0;
    if (strcmp(algo, "pcf") == 0 || strcmp(algo, "both") == 0)
        algos[nalgo++] = FTC_ALGO_PCF;
    if (strcmp(algo, "push-flow") == 0 || strcmp(algo, "both") == 0)
        algos[nalgo++] = FTC_ALGO_PUSH_FLOW;
    if (nalgo == 0) {
        fprintf(stderr, "dmgs_qr: --algo: expected pcf, push-flow or both\n");
        return 2;
    }
    printf("# dmGS QR of a random n x %u matrix, hypercube, target %g%s%s\n",
           rc.m, rc.target, rc.loss > 0 ? ", loss" : "",
           rc.cut ? ", link 0-1 cut at column m/2" : "");
    printf("%-8s %-10s %14s %14s %10s %12s\n", "n", "algo", "||V-QR||/||V||",
           "||I-Q'Q||", "failed_ops", "msgs/proc");
    int status = 0;
    char *list = strdup(sizes), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        unsigned long n = strtoul(tok, &end, 10);
        if (*end != '\0' || n < 2 || n > (1u << 20) || (n & (n - 1)) != 0) {
            fprintf(stderr, "dmgs_qr: --sizes: %s is no power of two >= 2\n", tok);
            free(list);
            return 2;
        }
        rc.n = (uint32_t)n;
        for (unsigned a = 0; a < nalgo; a++) {
            rc.algo = algos[a];
            result_t res;
            run(&rc, &res);
            printf("%-8u %-10s %14.3g %14.3g %10u %12.1f\n", rc.n,
                   ftc_algo_name(rc.algo), res.fact_err, res.orth_err,
                   res.failed_ops, (double)res.messages / rc.n);
            if (res.failed_ops > 0)
                status = 1;
            if (rc.cut && res.dropped_cut == 0) {
                fprintf(stderr, "dmgs_qr: the cut link carried nothing at "
                                "n = %u: no failure was tested\n", rc.n);
                status = 1;
            }
            if (check > 0 && rc.algo == FTC_ALGO_PCF
                && !(res.fact_err <= check)) {
                fprintf(stderr, "dmgs_qr: PCF's factorization error %.3g at "
                                "n = %u is above --check %.3g\n",
                        res.fact_err, rc.n, check);
                status = 1;
            }
        }
    }
    free(list);
    return status;
}
