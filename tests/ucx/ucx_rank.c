/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ucx_rank: one rank of a multi-process test of the UCX backend, started
 * by ftcoll-run (file rendezvous) or a PMIx launcher; run_ucx_tests.py
 * drives it.
 *
 *   ftcoll-run -n 4 -- ucx_rank --phases allreduce:corrected:1,bcast:tree:0
 *       --iters 50 [--kill 2@20] [--stop 1@20] [--bench] [--pingpong 10000]
 *
 * Phases run in order, --iters collectives each, numbered g = 0, 1, ...
 * across phases. At iteration g rank r contributes (r+1)*(g+1+i) to element
 * i (int64, sum), so each rank checks its own results: a reduce root's or
 * allreduce's value must be (g+1+i) * W, W the sum of (r+1) over the live
 * ranks plus any subset of the victims; a bcast delivers the root's input.
 * Statuses other than FTC_OK are accepted only when a victim explains them
 * (a tree with a victim, a victim root).
 *
 * --report-listen: once set up, every rank prints where it listens, as
 * `ss -ltnupH` shows its sockets:
 * {"rank":R,"event":"listen","n":K,"addrs":"127.0.0.1:40123,..."}.
 *
 * --die-after-exchange R: rank R SIGKILLs itself right after the address
 * exchange (its address is published, nobody has connected to it yet);
 * the others wait until its process is gone and only then set their peers,
 * so they connect to an address whose owner is dead (over tcp on one
 * host: a refused connect(), which UCX calls "Destination is
 * unreachable"). The survivors must run as if it had failed.
 *
 * Faults: --kill R@G makes rank R SIGKILL itself right after it started
 * iteration G (its first messages may be out: a failure during the
 * operation); --kill R@G:before before it starts. --stop R@G SIGSTOPs
 * instead (ftcoll-run resumes it once the others have exited); --victim R
 * names a rank something else may kill at any time, and --victim R@H one
 * that waits (progressing) before iteration H until it has been killed,
 * so that a kill from outside lands inside the stream on any machine;
 * --cue R@G makes rank R print {"rank":R,"event":"cue","iter":G} as it
 * starts iteration G, for ftcoll-run --kill R@R:TEXT to act on. The victim
 * prints {"rank":R,"event":"kill","iter":G,"t_ns":T} (CLOCK_MONOTONIC)
 * first; every rank prints {"rank":R,"event":"ready","pid":P,...} once
 * set up, so a driver can kill it from outside at a time of its choosing;
 * survivors print when they delivered each iteration from G on,
 * with the weight W of their result (which ranks it includes), and
 * whether UCX reported the victim (the error callback) or the core found
 * out by itself (its keepalive, or a failure list).
 *
 * Every live rank ends with one more allreduce, whose result nobody
 * reads: whoever delivers it knows that every other live rank is done
 * with its counted operations, so none leaves while another may still
 * need it (a pause, --linger, follows as a courtesy only).
 *
 * Output: one JSON line per rank at the end (see print_summary). Waiting:
 * --wait spin (ftc_ucx_progress(u, 0) in a loop, and sched_yield after
 * --yield-us U microseconds without traffic; 0: after every idle poll;
 * default 20, or 0 when there are more ranks than online CPUs) or block
 * (ftc_ucx_progress(u, 100): sleep on the worker's descriptor).
 * Environment: FTCOLL_SUSPECT_MS, FTCOLL_PROBE_MS (the core's keepalive),
 * FTCOLL_UCX_* (ftcoll_ucx.h), UCX_*, FTCOLL_TEST_OP_TIMEOUT (seconds an
 * operation may take before this program calls it a hang; default 20).
 * Exit status: 0 all good; 1 a wrong result; 2 usage; 3 a hang; 4 setup.
 */
#define _GNU_SOURCE /* sched_yield under -std=c11 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_bootstrap.h"
#include "ftcoll_ucx.h"
#include "../listen_sockets.h"

#define MAX_PHASES 16
#define MAX_FAULTS 8
#define MAX_MARKS 64
#define MAX_COUNT 4096

typedef struct phase {
    ftc_coll_t coll;
    ftc_algo_t algo;
    uint32_t f;
    char name[80];
} phase_t;

typedef struct fault {
    uint32_t rank;
    uint64_t iter;              /* --victim: its hold (UINT64_MAX: none) */
    int sig;                    /* 0: --victim, killed from outside */
    bool before;
} fault_t;

typedef struct opts {
    phase_t phases[MAX_PHASES];
    uint32_t nphases;
    uint64_t iters, warmup;
    uint64_t count;
    uint32_t root;
    fault_t faults[MAX_FAULTS];
    uint32_t nfaults;
    fault_t cues[MAX_FAULTS];   /* --cue: rank and iter */
    uint32_t ncues;
    bool bench;
    uint64_t pingpong;
    int linger_ms;
    bool spin;
    int yield_us;               /* spin: idle time before sched_yield;
                                   -1: by ranks per CPU */
    double op_timeout_s;
    int64_t die_after_exchange;     /* rank, or -1 */
    bool report_listen;
} opts_t;

typedef struct phase_result {
    uint64_t ok, errors, wrong, done;
    double *lat_us;             /* iters entries */
    uint64_t nlat;
} phase_result_t;

typedef struct rank_ctx {
    opts_t o;
    uint32_t rank, n;
    ftc_bootstrap_t *boot;
    ftc_ucx_t *u;
    ftc_context_t *ctx;
    ftc_group_t *group;

    /* The operation in flight. */
    bool done;
    int status;
    uint64_t t_deliver;

    phase_result_t res[MAX_PHASES];
    uint64_t digest;
    bool excluded;
    uint64_t mark_iter[MAX_MARKS], mark_t[MAX_MARKS];
    int mark_status[MAX_MARKS];
    int64_t mark_w[MAX_MARKS];      /* allreduce/reduce root: W; else -1 */
    int64_t last_w;
    uint32_t nmarks;
    char first_wrong[256];
    int yield_us;               /* the --yield-us in effect */
    double pingpong_us;         /* median one-way */
    double pingpong_mean_us;
} rank_ctx_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void log_line(void *arg, const char *msg)
{
    rank_ctx_t *R = arg;
    fprintf(stderr, "ucx[%u]: %s\n", R->rank, msg);
}

static void usage(void)
{
    fputs("usage: ucx_rank [--phases coll:algo:f,...] [--iters K] "
          "[--warmup W]\n"
          "                [--count C] [--root R] [--kill R@G[:before]]... "
          "[--stop R@G]...\n"
          "                [--victim R[@H]]... [--cue R@G]... [--bench] "
          "[--pingpong K]\n"
          "                [--linger MS] [--wait spin|block]\n"
          "                [--yield-us U] [--die-after-exchange R] "
          "[--report-listen]\n",
          stderr);
}

static int parse_phase(const char *s, phase_t *p)
{
    char coll[32], algo[32];
    unsigned f;
    if (sscanf(s, "%31[a-z]:%31[a-z]:%u", coll, algo, &f) != 3)
        return -1;
    if (strcmp(coll, "allreduce") == 0)
        p->coll = FTC_COLL_ALLREDUCE;
    else if (strcmp(coll, "reduce") == 0)
        p->coll = FTC_COLL_REDUCE;
    else if (strcmp(coll, "bcast") == 0)
        p->coll = FTC_COLL_BCAST;
    else
        return -1;
    if (ftc_algo_parse(algo, &p->algo) != FTC_OK)
        return -1;
    p->f = f;
    snprintf(p->name, sizeof(p->name), "%s:%s:%u", coll, algo, f);
    return 0;
}

static int parse_phases(const char *list, opts_t *o)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    o->nphases = 0;
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (o->nphases == MAX_PHASES || parse_phase(tok, &o->phases[o->nphases]))
            return -1;
        o->nphases++;
    }
    return o->nphases > 0 ? 0 : -1;
}

static int parse_fault(const char *s, int sig, opts_t *o)
{
    unsigned r;
    unsigned long long g;
    char when[16] = "";
    int k = sscanf(s, "%u@%llu:%15s", &r, &g, when);
    if (k < 2 || o->nfaults == MAX_FAULTS)
        return -1;
    fault_t *f = &o->faults[o->nfaults++];
    f->rank = r;
    f->iter = g;
    f->sig = sig;
    f->before = strcmp(when, "before") == 0;
    return 0;
}

static int parse_args(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof(*o));
    parse_phases("allreduce:corrected:1,reduce:corrected:1,bcast:corrected:1,"
                 "allreduce:tree:0,reduce:tree:0,bcast:tree:0", o);
    o->iters = 20;
    o->count = 1;
    o->linger_ms = 100;
    o->yield_us = -1;
    o->op_timeout_s = 20;
    o->die_after_exchange = -1;
    const char *t = getenv("FTCOLL_TEST_OP_TIMEOUT");
    if (t != NULL && atof(t) > 0)
        o->op_timeout_s = atof(t);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--bench") == 0) {
            o->bench = true;
            continue;
        }
        if (strcmp(a, "--report-listen") == 0) {
            o->report_listen = true;
            continue;
        }
        if (v == NULL)
            return -1;
        i++;
        if (strcmp(a, "--phases") == 0) {
            if (parse_phases(v, o) != 0)
                return -1;
        } else if (strcmp(a, "--iters") == 0) {
            o->iters = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--warmup") == 0) {
            o->warmup = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--count") == 0) {
            o->count = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--root") == 0) {
            o->root = (uint32_t)strtoul(v, NULL, 10);
        } else if (strcmp(a, "--kill") == 0) {
            if (parse_fault(v, SIGKILL, o) != 0)
                return -1;
        } else if (strcmp(a, "--stop") == 0) {
            if (parse_fault(v, SIGSTOP, o) != 0)
                return -1;
        } else if (strcmp(a, "--victim") == 0) {
            /* killed from outside (ftcoll-run --kill) at any time; with
             * @H, it holds before iteration H until that happened */
            unsigned r;
            unsigned long long h = UINT64_MAX;
            if (o->nfaults == MAX_FAULTS || sscanf(v, "%u@%llu", &r, &h) < 1)
                return -1;
            o->faults[o->nfaults++] = (fault_t){r, h, 0, false};
        } else if (strcmp(a, "--cue") == 0) {
            unsigned r;
            unsigned long long g;
            if (o->ncues == MAX_FAULTS || sscanf(v, "%u@%llu", &r, &g) != 2)
                return -1;
            o->cues[o->ncues++] = (fault_t){r, g, 0, false};
        } else if (strcmp(a, "--die-after-exchange") == 0) {
            /* a victim from the start: results may lack it */
            if (o->nfaults == MAX_FAULTS)
                return -1;
            o->die_after_exchange = atoi(v);
            o->faults[o->nfaults++] = (fault_t){(uint32_t)atoi(v), UINT64_MAX,
                                                0, false};
        } else if (strcmp(a, "--pingpong") == 0) {
            o->pingpong = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--yield-us") == 0) {
            o->yield_us = atoi(v);
        } else if (strcmp(a, "--linger") == 0) {
            o->linger_ms = atoi(v);
        } else if (strcmp(a, "--wait") == 0) {
            if (strcmp(v, "spin") == 0)
                o->spin = true;
            else if (strcmp(v, "block") == 0)
                o->spin = false;
            else
                return -1;
        } else {
            return -1;
        }
    }
    if (o->iters == 0 || o->count == 0 || o->count > MAX_COUNT)
        return -1;
    return 0;
}

/* --- Raw UCX active-message ping-pong, for comparison ---------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}


static volatile uint64_t pp_got;

static ucs_status_t pp_recv(void *arg, const void *header, size_t hlen,
                            void *data, size_t len,
                            const ucp_am_recv_param_t *param)
{
    (void)arg; (void)header; (void)hlen; (void)data; (void)len; (void)param;
    pp_got++;
    return UCS_OK;
}

static void pp_err(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    (void)arg; (void)ep; (void)st;
}

static void pp_wait(ucp_worker_h w, ucs_status_ptr_t sp)
{
    if (sp == NULL || UCS_PTR_IS_ERR(sp))
        return;
    while (ucp_request_check_status(sp) == UCS_INPROGRESS)
        ucp_worker_progress(w);
    ucp_request_free(sp);
}

/* Ranks 0 and 1 bounce 8 bytes, the others wait at the rendezvous. Same
 * UCX_* settings and the same error-handling mode as the backend. */
static int pingpong(rank_ctx_t *R)
{
    ucp_config_t *config;
    ucp_context_h ucp;
    ucp_worker_h w;
    ucp_params_t pp;
    memset(&pp, 0, sizeof(pp));
    pp.field_mask = UCP_PARAM_FIELD_FEATURES;
    pp.features = UCP_FEATURE_AM;
    if (ucp_config_read(NULL, NULL, &config) != UCS_OK)
        return -1;
    /* The backend's devices on one host (ftc_ucx_config_t.single_host):
     * loopback only, unless UCX_NET_DEVICES says otherwise. */
    const char *dev = getenv("UCX_NET_DEVICES");
    if ((dev == NULL || *dev == '\0')
        && ftc_bootstrap_single_host(R->boot) == 1
        && ucp_config_modify(config, "NET_DEVICES", "lo") != UCS_OK) {
        ucp_config_release(config);
        return -1;
    }
    ucs_status_t st = ucp_init(&pp, config, &ucp);
    ucp_config_release(config);
    if (st != UCS_OK)
        return -1;
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (ucp_worker_create(ucp, &wp, &w) != UCS_OK)
        return -1;
    ucp_address_t *addr;
    size_t alen;
    ucp_worker_get_address(w, &addr, &alen);
    /* Addresses padded to 4 KiB; the same length everywhere. */
    enum { PAD = 4096 };
    unsigned char *mine = calloc(1, PAD), *all = calloc(R->n, PAD);
    if (alen > PAD - 8 || mine == NULL || all == NULL)
        return -1;
    memcpy(mine, &alen, sizeof(alen));
    memcpy(mine + 8, addr, alen);
    if (ftc_bootstrap_allgather(R->boot, mine, PAD, all) != 0)
        return -1;
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB
                    | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = 7;
    hp.cb = pp_recv;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    ucp_worker_set_am_recv_handler(w, &hp);
    if (R->rank < 2 && R->n >= 2) {
        uint32_t peer = 1 - R->rank;
        ucp_ep_params_t ep;
        memset(&ep, 0, sizeof(ep));
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                        | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                        | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.address = (const ucp_address_t *)(all + (size_t)peer * PAD + 8);
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = pp_err;
        ucp_ep_h e;
        if (ucp_ep_create(w, &ep, &e) != UCS_OK)
            return -1;
        ucp_request_param_t rp;
        memset(&rp, 0, sizeof(rp));
        rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        rp.flags = UCP_AM_SEND_FLAG_EAGER;
        uint64_t msg = 0;
        uint64_t warm = R->o.pingpong / 10 + 10, total = R->o.pingpong + warm;
        double *rtt = calloc(R->o.pingpong, sizeof(double));
        if (rtt == NULL)
            return -1;
        uint64_t t0 = 0, tstart = 0;
        for (uint64_t i = 0; i < total; i++) {
            uint64_t t = now_ns();
            if (i == warm)
                tstart = t;
            if (i > warm && R->rank == 0)
                rtt[i - warm - 1] = (double)(t - t0);
            t0 = t;
            if (R->rank == 0) {
                pp_wait(w, ucp_am_send_nbx(e, 7, NULL, 0, &msg, 8, &rp));
                while (pp_got <= i)
                    ucp_worker_progress(w);
            } else {
                while (pp_got <= i)
                    ucp_worker_progress(w);
                pp_wait(w, ucp_am_send_nbx(e, 7, NULL, 0, &msg, 8, &rp));
            }
        }
        uint64_t tend = now_ns();
        if (R->rank == 0)
            rtt[R->o.pingpong - 1] = (double)(tend - t0);
        R->pingpong_mean_us = (double)(tend - tstart) / (double)R->o.pingpong
                              / 2e3;
        qsort(rtt, R->o.pingpong, sizeof(double), cmp_double);
        R->pingpong_us = rtt[R->o.pingpong / 2] / 2e3;
        free(rtt);
        /* Let the last reply leave before closing. */
        uint64_t end = now_ns() + 20000000u;
        while (now_ns() < end)
            ucp_worker_progress(w);
        ucp_request_param_t cp;
        memset(&cp, 0, sizeof(cp));
        cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        cp.flags = UCP_EP_CLOSE_FLAG_FORCE;
        pp_wait(w, ucp_ep_close_nbx(e, &cp));
    }
    /* Barrier: nobody starts the collectives while 0 and 1 measure. */
    if (ftc_bootstrap_allgather(R->boot, mine, 8, all) != 0)
        return -1;
    ucp_worker_release_address(w, addr);
    ucp_worker_destroy(w);
    ucp_cleanup(ucp);
    free(mine);
    free(all);
    return 0;
}

/* --- A rank that dies right after the address exchange --------------------- */

/* Gone: no such process, or a zombie (dead, not yet reaped). */
static bool pid_gone(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return true;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp == NULL || rp[1] == '\0' || rp[2] == 'Z' || rp[2] == 'X';
}

/* The exchange of ftc_ucx_exchange, by hand (ftc_ucx_address,
 * ftc_ucx_set_peers), with every rank's pid: the victim dies as soon as
 * its address is out, the others set their peers only once it is gone.
 * Waiting is bounded by progress (the victim's death), with a generous
 * limit only against a test that would otherwise hang. */
static int exchange_with_death(rank_ctx_t *R, uint32_t victim)
{
    enum { PAD = 4096 };
    size_t alen = 0;
    const void *addr = ftc_ucx_address(R->u, &alen);
    unsigned char *mine = calloc(1, PAD), *all = calloc(R->n, PAD);
    if (mine == NULL || all == NULL || alen > PAD - 16) {
        free(mine);
        free(all);
        return FTC_ENOMEM;
    }
    uint64_t pid = (uint64_t)getpid(), len = alen;
    memcpy(mine, &pid, 8);
    memcpy(mine + 8, &len, 8);
    memcpy(mine + 16, addr, alen);
    int rc = ftc_bootstrap_allgather(R->boot, mine, PAD, all);
    if (rc == 0 && R->rank == victim) {
        printf("{\"rank\":%u,\"event\":\"died-after-exchange\","
               "\"t_ns\":%" PRIu64 "}\n", R->rank, now_ns());
        fflush(stdout);
        raise(SIGKILL);
    }
    const void *addrs[256];
    size_t lens[256];
    if (rc == 0 && R->n > 256)
        rc = FTC_EINVAL;
    for (uint32_t r = 0; rc == 0 && r < R->n; r++) {
        memcpy(&len, all + (size_t)r * PAD + 8, 8);
        addrs[r] = all + (size_t)r * PAD + 16;
        lens[r] = (size_t)len;
    }
    if (rc == 0) {
        memcpy(&pid, all + (size_t)victim * PAD, 8);
        uint64_t limit = now_ns() + 30000000000u;
        while (!pid_gone((long)pid) && now_ns() < limit) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        if (!pid_gone((long)pid)) {
            fprintf(stderr, "ucx_rank %u: rank %u (pid %" PRIu64 ") did not "
                            "die\n", R->rank, victim, pid);
            rc = FTC_ETRANSPORT;
        }
    }
    if (rc == 0)
        rc = ftc_ucx_set_peers(R->u, addrs, lens);
    /* As ftc_ucx_exchange does: wire-up done before the first collective
     * (the dead victim is not waited for: UCX reports it lost). */
    if (rc == 0)
        rc = ftc_ucx_handshake(R->u, 30000);
    free(mine);
    free(all);
    return rc;
}

/* --- Collectives ---------------------------------------------------------- */

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    rank_ctx_t *R = arg;
    R->done = true;
    R->status = c->status;
    R->t_deliver = now_ns();
}

static bool is_victim(const opts_t *o, uint32_t r)
{
    for (uint32_t i = 0; i < o->nfaults; i++)
        if (o->faults[i].rank == r)
            return true;
    return false;
}

/* The first iteration at which fault i may have happened: a victim from
 * outside may die at any time. */
static uint64_t fault_from(const fault_t *f)
{
    return f->sig == 0 ? 0 : f->iter;
}

static bool victim_by(const opts_t *o, uint32_t r, uint64_t g)
{
    for (uint32_t i = 0; i < o->nfaults; i++)
        if (o->faults[i].rank == r && fault_from(&o->faults[i]) <= g)
            return true;
    return false;
}

static bool any_victim_by(const opts_t *o, uint64_t g)
{
    for (uint32_t i = 0; i < o->nfaults; i++)
        if (fault_from(&o->faults[i]) <= g)
            return true;
    return false;
}

/* W is valid if it is the live ranks' sum plus a subset of the victims'. */
static bool weight_ok(const rank_ctx_t *R, int64_t w)
{
    int64_t base = 0;
    int64_t vic[MAX_FAULTS];
    uint32_t nv = 0;
    for (uint32_t r = 0; r < R->n; r++) {
        if (is_victim(&R->o, r) && r != R->rank)
            vic[nv++] = r + 1;
        else
            base += r + 1;
    }
    for (uint32_t m = 0; m < (1u << nv); m++) {
        int64_t s = base;
        for (uint32_t k = 0; k < nv; k++)
            if (m & (1u << k))
                s += vic[k];
        if (s == w)
            return true;
    }
    return false;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void note_wrong(rank_ctx_t *R, const char *fmt, ...)
{
    if (R->first_wrong[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R->first_wrong, sizeof(R->first_wrong), fmt, ap);
    va_end(ap);
}

static void check(rank_ctx_t *R, const phase_t *p, uint64_t g,
                  const int64_t *out, phase_result_t *pr)
{
    const opts_t *o = &R->o;
    uint32_t root = o->root;
    bool victims = any_victim_by(o, g);
    if (R->status != FTC_OK) {
        pr->errors++;
        bool excused = victims
                       && (p->algo == FTC_ALGO_TREE
                           || (R->status == FTC_EROOT_FAILED
                               && victim_by(o, root, g))
                           || R->status == FTC_EEXCLUDED);
        if (!excused) {
            pr->wrong++;
            note_wrong(R, "%s iteration %" PRIu64 ": status %s", p->name, g,
                       ftc_err_name(R->status));
        }
        R->digest = R->digest * 1000003u ^ (uint64_t)(g * 31 + 7);
        return;
    }
    pr->ok++;
    bool gets = p->coll != FTC_COLL_REDUCE || R->rank == root;
    if (!gets)
        return;
    if (p->coll == FTC_COLL_BCAST) {
        for (uint64_t i = 0; i < o->count; i++) {
            int64_t want = (int64_t)(root + 1) * (int64_t)(g + 1 + i);
            if (out[i] != want) {
                pr->wrong++;
                note_wrong(R, "%s iteration %" PRIu64 ": out[%" PRIu64
                              "] = %" PRId64 ", want %" PRId64,
                           p->name, g, i, out[i], want);
                return;
            }
        }
        return;
    }
    int64_t w = out[0] / (int64_t)(g + 1);
    R->last_w = w;
    bool ok = weight_ok(R, w);
    for (uint64_t i = 0; ok && i < o->count; i++)
        ok = out[i] == w * (int64_t)(g + 1 + i);
    if (!ok) {
        pr->wrong++;
        note_wrong(R, "%s iteration %" PRIu64 ": out[0] = %" PRId64
                      " is no valid set of ranks",
                   p->name, g, out[0]);
    }
    if (p->coll == FTC_COLL_ALLREDUCE)
        R->digest = R->digest * 1000003u ^ (uint64_t)(w * 131 + (int64_t)g);
}

static void do_fault(rank_ctx_t *R, const fault_t *f, uint64_t g)
{
    printf("{\"rank\":%u,\"event\":\"%s\",\"iter\":%" PRIu64
           ",\"t_ns\":%" PRIu64 "}\n",
           R->rank, f->sig == SIGKILL ? "kill" : "stop", g, now_ns());
    fflush(stdout);
    raise(f->sig);
}

static int wait_op(rank_ctx_t *R)
{
    uint64_t t = now_ns();
    uint64_t end = t + (uint64_t)(R->o.op_timeout_s * 1e9);
    uint64_t idle_since = t;
    uint64_t yield_ns = (uint64_t)R->yield_us * 1000u;
    while (!R->done) {
        int n = ftc_ucx_progress(R->u, R->o.spin ? 0 : 100);
        if (n < 0)
            return -1;
        t = now_ns();
        if (n > 0) {
            idle_since = t;
        } else if (R->o.spin && t - idle_since >= yield_ns) {
            /* A yield is a system call and, on a busy machine, a lost
             * time slice: a message that arrives meanwhile waits for it.
             * Yield only after a while without traffic, for ranks that
             * share a core (n > cores). */
            sched_yield();
            idle_since = now_ns();
        }
        if (!R->done && t > end)
            return -1;
    }
    return 0;
}

/* Iteration g is about to start: print this rank's cues, then hold if it
 * is a victim from outside that should be dead by now. Returns 0, or 3 if
 * nothing killed it. */
static int before_iteration(rank_ctx_t *R, uint64_t g)
{
    const opts_t *o = &R->o;
    for (uint32_t k = 0; k < o->ncues; k++)
        if (o->cues[k].rank == R->rank && o->cues[k].iter == g)
            printf("{\"rank\":%u,\"event\":\"cue\",\"iter\":%" PRIu64 "}\n",
                   R->rank, g);
    for (uint32_t k = 0; k < o->nfaults; k++) {
        const fault_t *f = &o->faults[k];
        if (f->sig != 0 || f->rank != R->rank || f->iter != g)
            continue;
        printf("{\"rank\":%u,\"event\":\"hold\",\"iter\":%" PRIu64 "}\n",
               R->rank, g);
        fflush(stdout);
        /* Asleep, not progressing: a process killed while it writes to a
         * peer over shared memory leaves that peer's FIFO with a slot
         * never filled, and the peer hears nobody again (docs/backends.md
         * section 7). Here the kill finds this rank sending nothing. */
        uint64_t end = now_ns() + (uint64_t)(o->op_timeout_s * 1e9);
        while (now_ns() <= end) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        fprintf(stderr, "rank %u: held before iteration %" PRIu64
                        " for %.0f s: nothing killed it\n",
                R->rank, g, o->op_timeout_s);
        return 3;
    }
    return 0;
}

/* One allreduce nobody reads (see the top of the file). */
static void farewell(rank_ctx_t *R)
{
    if (R->excluded || ftc_context_is_excluded(R->ctx) || R->n < 2)
        return;
    uint32_t f = R->o.nfaults > 0 ? R->o.nfaults : 1;
    if (f > R->n - 1)
        f = R->n - 1;
    int64_t one = 1, all = 0;
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.f = f;
    a.dtype = FTC_INT64;
    a.op = FTC_SUM;
    a.count = 1;
    a.sendbuf = &one;
    a.recvbuf = &all;
    a.deliver = on_deliver;
    a.deliver_arg = R;
    R->done = false;
    if (ftc_init_allreduce(R->group, &a, NULL) == FTC_OK && wait_op(R) != 0)
        fprintf(stderr, "rank %u: the farewell allreduce hangs\n", R->rank);
}

static int run_phases(rank_ctx_t *R)
{
    const opts_t *o = &R->o;
    static int64_t in[MAX_COUNT], out[MAX_COUNT];
    uint64_t g = 0;
    for (uint32_t pi = 0; pi < o->nphases; pi++) {
        const phase_t *p = &o->phases[pi];
        phase_result_t *pr = &R->res[pi];
        pr->lat_us = calloc(o->iters, sizeof(double));
        for (uint64_t it = 0; it < o->iters; it++, g++) {
            int held = before_iteration(R, g);
            if (held != 0)
                return held;
            const fault_t *mine = NULL;
            for (uint32_t k = 0; k < o->nfaults; k++)
                    if (o->faults[k].rank == R->rank && o->faults[k].iter == g
                    && o->faults[k].sig != 0)
                    mine = &o->faults[k];
            if (mine != NULL && mine->before)
                do_fault(R, mine, g);
            for (uint64_t i = 0; i < o->count; i++)
                in[i] = (int64_t)(R->rank + 1) * (int64_t)(g + 1 + i);
            memset(out, 0, o->count * sizeof(int64_t));
            ftc_coll_args_t a;
            ftc_coll_args_init(&a);
            a.algo = p->algo;
            a.f = p->f;
            a.root = o->root;
            a.dtype = FTC_INT64;
            a.op = FTC_SUM;
            a.count = o->count;
            a.sendbuf = in;
            a.recvbuf = out;
            a.deliver = on_deliver;
            a.deliver_arg = R;
            R->done = false;
            uint64_t t0 = now_ns();
            int rc = p->coll == FTC_COLL_REDUCE ? ftc_init_reduce(R->group, &a, NULL)
                     : p->coll == FTC_COLL_BCAST ? ftc_init_bcast(R->group, &a, NULL)
                                                 : ftc_init_allreduce(R->group, &a,
                                                                      NULL);
            if (rc != FTC_OK) {
                fprintf(stderr, "rank %u: init %s: %s\n", R->rank, p->name,
                        ftc_strerror(rc));
                return 4;
            }
            if (mine != NULL && !mine->before)
                do_fault(R, mine, g);
            if (wait_op(R) != 0) {
                fprintf(stderr, "rank %u: %s iteration %" PRIu64 " hangs "
                                "(no delivery in %.0f s)\n",
                        R->rank, p->name, g, o->op_timeout_s);
                return 3;
            }
            pr->done++;
            if (!o->bench || it >= o->warmup)
                pr->lat_us[pr->nlat++] = (double)(R->t_deliver - t0) / 1e3;
            R->last_w = -1;
            check(R, p, g, out, pr);
            if (any_victim_by(o, g) && R->nmarks < MAX_MARKS) {
                R->mark_iter[R->nmarks] = g;
                R->mark_status[R->nmarks] = R->status;
                R->mark_w[R->nmarks] = R->last_w;
                R->mark_t[R->nmarks++] = R->t_deliver;
            }
            if (ftc_context_is_excluded(R->ctx)) {
                R->excluded = true;
                return 0;   /* the others went on without us: stop */
            }
        }
    }
    return 0;
}

/* --- Output ---------------------------------------------------------------- */

static void print_summary(rank_ctx_t *R)
{
    const opts_t *o = &R->o;
    ftc_ucx_peer_info_t pi;
    char tl[48] = "";
    for (uint32_t r = 0; r < R->n && tl[0] == '\0'; r++)
        if (r != R->rank && ftc_ucx_peer_info(R->u, r, &pi) == FTC_OK)
            snprintf(tl, sizeof(tl), "%s", pi.transport);
    ftc_counters_t cn;
    ftc_context_counters(R->ctx, &cn);
    ftc_ucx_stats_t st;
    ftc_ucx_stats(R->u, &st);
    printf("{\"rank\":%u,\"n\":%u,\"transport\":\"%s\",\"excluded\":%s,"
           "\"digest\":\"%016" PRIx64 "\",\"pingpong_us\":%.3f,"
           "\"pingpong_mean_us\":%.3f,",
           R->rank, R->n, tl, R->excluded ? "true" : "false", R->digest,
           R->pingpong_us, R->pingpong_mean_us);
    printf("\"phases\":[");
    uint64_t wrong = 0;
    for (uint32_t p = 0; p < o->nphases; p++) {
        phase_result_t *pr = &R->res[p];
        wrong += pr->wrong;
        double mean = 0, p50 = 0, p99 = 0, mn = 0;
        if (pr->nlat > 0) {
            for (uint64_t i = 0; i < pr->nlat; i++)
                mean += pr->lat_us[i];
            mean /= (double)pr->nlat;
            qsort(pr->lat_us, pr->nlat, sizeof(double), cmp_double);
            mn = pr->lat_us[0];
            p50 = pr->lat_us[pr->nlat / 2];
            p99 = pr->lat_us[(pr->nlat * 99) / 100 < pr->nlat
                                 ? (pr->nlat * 99) / 100 : pr->nlat - 1];
        }
        printf("%s{\"name\":\"%s\",\"done\":%" PRIu64 ",\"ok\":%" PRIu64
               ",\"errors\":%" PRIu64 ",\"wrong\":%" PRIu64
               ",\"mean_us\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f,"
               "\"min_us\":%.3f}",
               p ? "," : "", o->phases[p].name, pr->done, pr->ok, pr->errors,
               pr->wrong, mean, p50, p99, mn);
    }
    printf("],\"wrong\":%" PRIu64 ",\"first_wrong\":\"%s\",", wrong,
           R->first_wrong);
    printf("\"failed\":[");
    uint32_t failed[64];
    uint32_t nf = ftc_context_failed(R->ctx, failed, 64);
    for (uint32_t i = 0; i < nf && i < 64; i++)
        printf("%s%u", i ? "," : "", failed[i]);
    printf("],\"victims\":[");
    for (uint32_t k = 0; k < o->nfaults; k++) {
        uint32_t v = o->faults[k].rank;
        ftc_ucx_peer_info(R->u, v, &pi);
        printf("%s{\"rank\":%u,\"known\":%s,\"ucx_reported\":%s,"
               "\"error\":\"%s\",\"detected_ns\":%" PRIu64
               ",\"reported_ns\":%" PRIu64 "}",
               k ? "," : "", v,
               ftc_context_is_failed(R->ctx, v) ? "true" : "false",
               pi.reported ? "true" : "false", pi.error, pi.detected_ns,
               pi.reported_ns);
    }
    printf("],\"marks\":[");
    for (uint32_t i = 0; i < R->nmarks; i++)
        printf("%s[%" PRIu64 ",%" PRIu64 ",%d,%" PRId64 "]", i ? "," : "",
               R->mark_iter[i], R->mark_t[i], R->mark_status[i], R->mark_w[i]);
    printf("],\"probes\":%" PRIu64 ",\"failures_detected\":%" PRIu64
           ",\"ucx\":{\"sent\":%" PRIu64 ",\"received\":%" PRIu64
           ",\"inline\":%" PRIu64 ",\"deferred\":%" PRIu64
           ",\"send_errors\":%" PRIu64 ",\"ep_errors\":%" PRIu64
           ",\"peers_failed\":%" PRIu64 ",\"rejected\":%" PRIu64
           ",\"sleeps\":%" PRIu64 "}}\n",
           cn.probes_sent, cn.failures_detected, st.msgs_sent,
           st.msgs_received, st.sends_inline, st.sends_deferred,
           st.send_errors, st.ep_errors, st.peers_failed, st.msgs_rejected,
           st.sleeps);
    fflush(stdout);
}

/* --- Main ------------------------------------------------------------------ */

static uint64_t env_ms(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    return s != NULL && *s != '\0' ? strtoull(s, NULL, 10) : dflt;
}

int main(int argc, char **argv)
{
    static rank_ctx_t R;
    if (parse_args(argc, argv, &R.o) != 0) {
        usage();
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char err[512];
    if (ftc_bootstrap_open(&R.boot, err, sizeof(err)) != FTC_OK) {
        fprintf(stderr, "ucx_rank: %s\n", err);
        return 4;
    }
    R.rank = ftc_bootstrap_rank(R.boot);
    R.n = ftc_bootstrap_size(R.boot);
    if (R.o.root >= R.n) {
        fprintf(stderr, "ucx_rank: --root %u >= %u ranks\n", R.o.root, R.n);
        return 2;
    }
    uint64_t token = ftc_bootstrap_job_token(R.boot);
    /* More ranks than CPUs: a rank with nothing to do must give its CPU
     * to one that has, at once. Otherwise spinning is cheaper than the
     * system call. */
    R.yield_us = R.o.yield_us;
    if (R.yield_us < 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        R.yield_us = cpus > 0 && R.n > (uint32_t)cpus ? 0 : 20;
    }

    if (R.o.pingpong > 0 && R.n >= 2 && pingpong(&R) != 0) {
        fprintf(stderr, "ucx_rank %u: ping-pong setup failed\n", R.rank);
        return 4;
    }

    ftc_ucx_config_t uc;
    ftc_ucx_config_init(&uc);
    uc.rank = R.rank;
    uc.nranks = R.n;
    uc.job_token = token;
    uc.single_host = ftc_bootstrap_single_host(R.boot);
    uc.log = log_line;
    uc.log_arg = &R;
    if (ftc_ucx_config_from_env(&uc, err, sizeof(err)) != FTC_OK) {
        fprintf(stderr, "ucx_rank: %s\n", err);
        return 2;
    }
    int rc = ftc_ucx_create(&uc, &R.u);
    if (rc != FTC_OK) {
        fprintf(stderr, "ucx_rank %u: ftc_ucx_create: %s\n", R.rank,
                ftc_strerror(rc));
        return 4;
    }
    if (R.o.die_after_exchange >= 0 && (uint64_t)R.o.die_after_exchange < R.n)
        rc = exchange_with_death(&R, (uint32_t)R.o.die_after_exchange);
    else
        rc = ftc_ucx_exchange(R.u, ftc_bootstrap_allgather, R.boot);
    if (rc != FTC_OK) {
        fprintf(stderr, "ucx_rank %u: ftc_ucx_exchange: %s (%s)\n", R.rank,
                ftc_strerror(rc), ftc_bootstrap_error(R.boot));
        return 4;
    }
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = token;
    cfg.suspect_timeout_ns = env_ms("FTCOLL_SUSPECT_MS", 100) * 1000000u;
    cfg.probe_timeout_ns = env_ms("FTCOLL_PROBE_MS", 200) * 1000000u;
    if (ftc_context_create(R.rank, R.n, ftc_ucx_ops(), R.u, &cfg, &R.ctx)
            != FTC_OK
        || ftc_group_create(R.ctx, 1, 0, R.n, NULL, &R.group) != FTC_OK) {
        fprintf(stderr, "ucx_rank %u: context setup failed\n", R.rank);
        return 4;
    }
    ftc_ucx_attach(R.u, R.ctx);
    if (R.o.report_listen) {
        char addrs[1024];
        int k = ftc_test_listen_addrs((long)getpid(), addrs, sizeof(addrs));
        printf("{\"rank\":%u,\"event\":\"listen\",\"n\":%d,"
               "\"addrs\":\"%s\",\"net_devices\":\"%s\"}\n", R.rank, k,
               addrs, ftc_ucx_net_devices(R.u));
    }
    printf("{\"rank\":%u,\"event\":\"ready\",\"pid\":%ld,\"t_ns\":%" PRIu64
           "}\n", R.rank, (long)getpid(), now_ns());
    fflush(stdout);

    int status = run_phases(&R);
    if (status == 0)
        farewell(&R);

    /* Linger: answer peers that are behind (probes) for a moment: the
     * farewell above is what makes leaving safe, this is a courtesy. */
    uint64_t end = now_ns() + (uint64_t)R.o.linger_ms * 1000000u;
    while (now_ns() < end)
        ftc_ucx_progress(R.u, 1);
    (void)ftc_ucx_flush(R.u, 500);
    print_summary(&R);
    if (status == 0) {
        for (uint32_t p = 0; p < R.o.nphases; p++)
            if (R.res[p].wrong > 0)
                status = 1;
    }
    ftc_context_destroy(R.ctx);
    ftc_ucx_destroy(R.u);
    ftc_bootstrap_close(R.boot);
    for (uint32_t p = 0; p < R.o.nphases; p++)
        free(R.res[p].lat_us);
    return status;
}
