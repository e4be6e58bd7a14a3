/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-foreign-ucx DIR N: the UCX backend's stranger (ftcoll_foreign.c
 * is ZeroMQ's). A process of no job that connects to every rank of a live
 * job and sends it UCP active messages with the backend's AM id, which a
 * job must survive and count:
 *
 *   per rank, with a 12-byte AM header of no rank and a wrong token:
 *     1 message of random bytes                  -> dropped_version
 *     2 messages too short for a header (10, 0)  -> dropped_truncated
 *     1 well-formed message of another job       -> dropped_foreign
 *     1 message with a broken checksum           -> dropped_checksum
 *   per rank, with a 12-byte AM header claiming rank 0, wrong token:
 *     1 random message                           -> dropped_version
 *   per rank, with a 4-byte AM header (the backend's is 12):
 *     1 random message                           -> dropped_version
 *   per rank, with a 12-byte AM header of no rank and a wrong token:
 *     STRANGER_FORGED messages forged with the job's token (stranger.h):
 *     a job with the key drops each             -> dropped_foreign
 *
 * The backend hands all of them to the core as FTC_RANK_UNKNOWN (header_rank in
 * backends/ucx/progress.c) and counts them in msgs_stranger; the core's
 * decoder drops each and counts it as above.
 *
 * Addresses come from the rendezvous files of ftcoll-run --rendezvous DIR:
 * the backend's exchange (ftc_ucx_exchange) is the job's first two
 * allgathers, ag0.<rank> (address lengths, u32 LE) and ag1.<rank> (the
 * addresses, padded to the longest). Our endpoints ask for
 * UCP_ERR_HANDLING_MODE_PEER as the backend's do, and UCX picks among the
 * transports the ranks' addresses offer. A stranger need not know the
 * job's UCX_* settings: without UCX_TLS it has them all, and
 * UCX_MM_ERROR_HANDLING defaults to y here (shared memory cannot serve a
 * PEER endpoint without it). Settings in the environment still win.
 *
 * Leaving: every send is waited for, then every endpoint closed with a
 * flush (not forced), so that the ranks see an orderly goodbye rather
 * than an error they might blame on a member.
 *
 * Prints one JSON line with what it sent per rank, alone on stdout: UCX
 * writes its own log (e.g. "no active messages transport to ...") to
 * stdout, so that goes to stderr here. Exit 0; 1 if some rank could not
 * be reached (no address, no endpoint, a send failed); 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "stranger.h"
#include "ucx_internal.h"

enum {
    FILE_WAIT_MS = 20000,   /* for the job to publish its addresses */
    SEND_WAIT_MS = 10000,   /* for the ranks to take our messages */
    CLOSE_WAIT_MS = 5000,   /* for the goodbyes */
    NPLAIN = 7,             /* the garbage, before the forged ones */
    NSENDS = NPLAIN + STRANGER_FORGED,
    SHORT_HDR_LEN = 4
};

typedef struct target {
    unsigned rank;
    ucp_ep_h ep;
    ucs_status_t ep_status;     /* from the error callback; UCS_OK if none */
    void *reqs[NSENDS];
    int failed;                 /* a send was refused or failed */
} target_t;

/* AM headers: UCX reads them until the send completes, so they live as
 * long as the program. */
static unsigned char g_hdr_none[FTC_UCX_HDR_LEN];
static unsigned char g_hdr_rank0[FTC_UCX_HDR_LEN];
static unsigned char g_hdr_short[SHORT_HDR_LEN];

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Progress the worker once; if it had nothing to do, nap: a spinning
 * stranger would take the CPU from the ranks (2 vCPUs here), which then
 * look hung to each other. */
static void progress_or_nap(ucp_worker_h worker)
{
    if (ucp_worker_progress(worker) == 0) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    target_t *t = arg;
    (void)ep;
    t->ep_status = status;
    fprintf(stderr, "ftcoll-foreign-ucx: endpoint to rank %u: %s\n", t->rank,
            ucs_status_string(status));
}

/*
 * Every rank's worker address, as ftc_ucx_exchange swapped them: lens[r]
 * bytes at addrs[r]. Returns the job token, via *token; 0 or -1.
 */
static int read_addresses(const char *dir, unsigned n, unsigned char **addrs,
                          size_t *lens, uint64_t *token)
{
    for (unsigned r = 0; r < n; r++) {
        unsigned char *d;
        size_t len;
        if (stranger_read_rdv(dir, 0, r, FILE_WAIT_MS, &d, &len, token) != 0)
            return -1;
        if (len != 4) {
            fprintf(stderr, "ftcoll-foreign-ucx: ag0.%u holds %zu bytes, not "
                            "a UCX address length (is the job on UCX?)\n",
                    r, len);
            free(d);
            return -1;
        }
        lens[r] = (size_t)d[0] | (size_t)d[1] << 8 | (size_t)d[2] << 16
                  | (size_t)d[3] << 24;
        free(d);
    }
    for (unsigned r = 0; r < n; r++) {
        size_t len;
        uint64_t tok;
        if (stranger_read_rdv(dir, 1, r, FILE_WAIT_MS, &addrs[r], &len, &tok)
            != 0)
            return -1;
        if (lens[r] == 0 || lens[r] > len || tok != *token) {
            fprintf(stderr, "ftcoll-foreign-ucx: ag1.%u does not hold the "
                            "%zu-byte address ag0.%u announced\n", r,
                    lens[r], r);
            return -1;
        }
    }
    return 0;
}

/* May UCX_TLS pick a shared-memory transport? Unset, "all", an exclusion
 * list ("^..."), or one naming sm, mm, posix, sysv or xpmem. */
static int tls_may_use_shm(void)
{
    static const char *const shm[] = {"sm", "mm", "posix", "sysv", "xpmem",
                                      "all"};
    const char *tls = getenv("UCX_TLS");
    if (tls == NULL || tls[0] == '\0' || tls[0] == '^')
        return 1;
    for (size_t i = 0; i < sizeof(shm) / sizeof(shm[0]); i++)
        if (strstr(tls, shm[i]) != NULL)
            return 1;
    return 0;
}

static int open_worker(ucp_context_h *ucp, ucp_worker_h *worker)
{
    /* Read by ucp_config_read, not when UCX was loaded: still in time.
     * Only where shared memory may be used: UCX warns of an unused
     * variable otherwise. */
    if (tls_may_use_shm())
        setenv("UCX_MM_ERROR_HANDLING", "y", 0);
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        fprintf(stderr, "ftcoll-foreign-ucx: UCX configuration: %s\n",
                ucs_status_string(st));
        return -1;
    }
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_AM;
    params.name = "ftcoll-foreign";
    st = ucp_init(&params, config, ucp);
    ucp_config_release(config);
    if (st != UCS_OK) {
        fprintf(stderr, "ftcoll-foreign-ucx: ucp_init: %s\n",
                ucs_status_string(st));
        return -1;
    }
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(*ucp, &wp, worker);
    if (st != UCS_OK) {
        fprintf(stderr, "ftcoll-foreign-ucx: ucp_worker_create: %s\n",
                ucs_status_string(st));
        ucp_cleanup(*ucp);
        return -1;
    }
    return 0;
}

static int connect_rank(ucp_worker_h worker, target_t *t, const void *addr)
{
    ucp_ep_params_t ep;
    memset(&ep, 0, sizeof(ep));
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                    | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                    | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = addr;
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = ep_err_cb;
    ep.err_handler.arg = t;
    ucs_status_t st = ucp_ep_create(worker, &ep, &t->ep);
    if (st == UCS_OK)
        return 0;
    t->ep = NULL;
    /* UCX says "unreachable" both for a rank that is gone (tcp: connection
     * refused) and for a transport mismatch: say what we used. */
    const char *tls = getenv("UCX_TLS");
    const char *mm = getenv("UCX_MM_ERROR_HANDLING");
    fprintf(stderr, "ftcoll-foreign-ucx: cannot reach rank %u: %s (is the "
                    "job still running? UCX_TLS=%s, "
                    "UCX_MM_ERROR_HANDLING=%s)\n",
            t->rank, ucs_status_string(st), tls != NULL ? tls : "(all)",
            mm != NULL ? mm : "");
    return -1;
}

/* Post this rank's NSENDS messages; what is not done at once is left in
 * t->reqs. */
static void send_all(target_t *t, const stranger_msgs_t *m)
{
    struct {
        const void *hdr;
        size_t hdrlen;
        const void *data;
        size_t len;
    } sends[NSENDS] = {
        {g_hdr_none, FTC_UCX_HDR_LEN, m->random, sizeof(m->random)},
        {g_hdr_none, FTC_UCX_HDR_LEN, m->random, 10},
        {g_hdr_none, FTC_UCX_HDR_LEN, NULL, 0},
        {g_hdr_none, FTC_UCX_HDR_LEN, m->other_job, sizeof(m->other_job)},
        {g_hdr_none, FTC_UCX_HDR_LEN, m->broken, sizeof(m->broken)},
        {g_hdr_rank0, FTC_UCX_HDR_LEN, m->random, sizeof(m->random)},
        {g_hdr_short, SHORT_HDR_LEN, m->random, sizeof(m->random)},
    };
    for (unsigned i = 0; i < STRANGER_FORGED; i++) {
        sends[NPLAIN + i].hdr = g_hdr_none;
        sends[NPLAIN + i].hdrlen = FTC_UCX_HDR_LEN;
        sends[NPLAIN + i].data = stranger_forged(m, i, &sends[NPLAIN + i].len);
    }
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof(prm));
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    /* Eager, as the backend sends: it drops rendezvous messages before
     * they reach its stranger count. */
    prm.flags = UCP_AM_SEND_FLAG_EAGER;
    for (int i = 0; i < NSENDS; i++) {
        ucs_status_ptr_t sp = ucp_am_send_nbx(t->ep, FTC_UCX_AM_ID,
                                              sends[i].hdr, sends[i].hdrlen,
                                              sends[i].data, sends[i].len,
                                              &prm);
        if (UCS_PTR_IS_ERR(sp)) {
            fprintf(stderr, "ftcoll-foreign-ucx: send %d to rank %u: %s\n",
                    i, t->rank, ucs_status_string(UCS_PTR_STATUS(sp)));
            t->failed = 1;
        } else {
            t->reqs[i] = sp;    /* NULL: done already */
        }
    }
}

/* Progress until every send is done or the time is up; a send that did
 * not complete well marks its rank failed. */
static void wait_sends(ucp_worker_h worker, target_t *ts, unsigned n)
{
    uint64_t end = now_ms() + SEND_WAIT_MS;
    for (;;) {
        int pending = 0;
        for (unsigned r = 0; r < n; r++) {
            for (int i = 0; i < NSENDS; i++) {
                if (ts[r].reqs[i] == NULL)
                    continue;
                ucs_status_t st = ucp_request_check_status(ts[r].reqs[i]);
                if (st == UCS_INPROGRESS) {
                    pending++;
                    continue;
                }
                if (st != UCS_OK) {
                    fprintf(stderr, "ftcoll-foreign-ucx: send %d to rank %u: "
                                    "%s\n", i, r, ucs_status_string(st));
                    ts[r].failed = 1;
                }
                ucp_request_free(ts[r].reqs[i]);
                ts[r].reqs[i] = NULL;
            }
        }
        if (pending == 0)
            return;
        if (now_ms() >= end) {
            fprintf(stderr, "ftcoll-foreign-ucx: %d send(s) still in flight "
                            "after %d ms\n", pending, SEND_WAIT_MS);
            for (unsigned r = 0; r < n; r++) {
                for (int i = 0; i < NSENDS; i++) {
                    if (ts[r].reqs[i] != NULL) {
                        ts[r].failed = 1;
                        /* Freed by UCX once the forced close ends it. */
                        ucp_request_free(ts[r].reqs[i]);
                        ts[r].reqs[i] = NULL;
                    }
                }
            }
            return;
        }
        progress_or_nap(worker);
    }
}

/* Close every endpoint: a flush and a goodbye, unless UCX already said
 * the endpoint failed (then forced: there is nobody to flush to). */
static void close_all(ucp_worker_h worker, target_t *ts, unsigned n)
{
    void **reqs = calloc(n, sizeof(*reqs));
    for (unsigned r = 0; r < n; r++) {
        if (ts[r].ep == NULL)
            continue;
        ucp_request_param_t prm;
        memset(&prm, 0, sizeof(prm));
        prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        prm.flags = ts[r].ep_status != UCS_OK || ts[r].failed
                        ? UCP_EP_CLOSE_FLAG_FORCE
                        : 0;
        ucs_status_ptr_t sp = ucp_ep_close_nbx(ts[r].ep, &prm);
        ts[r].ep = NULL;
        if (UCS_PTR_IS_PTR(sp)) {
            if (reqs != NULL)
                reqs[r] = sp;
            else
                ucp_request_free(sp);
        }
    }
    uint64_t end = now_ms() + CLOSE_WAIT_MS;
    for (;;) {
        int pending = 0;
        for (unsigned r = 0; reqs != NULL && r < n; r++) {
            if (reqs[r] == NULL)
                continue;
            if (ucp_request_check_status(reqs[r]) == UCS_INPROGRESS) {
                pending++;
                continue;
            }
            ucp_request_free(reqs[r]);
            reqs[r] = NULL;
        }
        if (pending == 0)
            break;
        if (now_ms() >= end) {
            fprintf(stderr, "ftcoll-foreign-ucx: %d endpoint(s) did not "
                            "close within %d ms\n", pending, CLOSE_WAIT_MS);
            for (unsigned r = 0; r < n; r++)
                if (reqs[r] != NULL)
                    ucp_request_free(reqs[r]);
            break;
        }
        progress_or_nap(worker);
    }
    free(reqs);
}

int main(int argc, char **argv)
{
    const char *dir;
    unsigned n;
    int usage_rc = stranger_args("ftcoll-foreign-ucx", argc, argv, &dir, &n);
    if (usage_rc >= 0)
        return usage_rc;
    /* UCX chose its log stream (stdout) when it was loaded: point that
     * descriptor at stderr, and keep the real stdout for our line. */
    fflush(stdout);
    int out_fd = dup(STDOUT_FILENO);
    if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        perror("ftcoll-foreign-ucx: dup");
        return 1;
    }
    unsigned char **addrs = calloc(n, sizeof(*addrs));
    size_t *lens = calloc(n, sizeof(*lens));
    target_t *ts = calloc(n, sizeof(*ts));
    if (addrs == NULL || lens == NULL || ts == NULL) {
        fprintf(stderr, "ftcoll-foreign-ucx: out of memory\n");
        return 1;
    }
    unsigned reached = 0;
    uint64_t token = 0;
    ucp_context_h ucp = NULL;
    ucp_worker_h worker = NULL;
    if (read_addresses(dir, n, addrs, lens, &token) != 0
        || open_worker(&ucp, &worker) != 0)
        goto out;

    stranger_msgs_t m;
    stranger_msgs_init(&m, token);
    uint64_t wrong = stranger_wrong_token(token);
    put_le(g_hdr_none, UINT32_MAX, 4);
    put_le(g_hdr_none + 4, wrong, 8);
    put_le(g_hdr_rank0, 0, 4);
    put_le(g_hdr_rank0 + 4, wrong, 8);
    put_le(g_hdr_short, 0, SHORT_HDR_LEN);

    for (unsigned r = 0; r < n; r++) {
        ts[r].rank = r;
        ts[r].ep_status = UCS_OK;
        if (connect_rank(worker, &ts[r], addrs[r]) != 0) {
            ts[r].failed = 1;
            continue;
        }
        send_all(&ts[r], &m);
    }
    wait_sends(worker, ts, n);
    close_all(worker, ts, n);
    for (unsigned r = 0; r < n; r++)
        if (!ts[r].failed && ts[r].ep_status == UCS_OK)
            reached++;
    ucp_worker_destroy(worker);
    ucp_cleanup(ucp);

out:
    for (unsigned r = 0; r < n; r++)
        free(addrs[r]);
    free(addrs);
    free(lens);
    free(ts);
    fflush(stdout);
    dprintf(out_fd, "{\"foreign\":true,\"backend\":\"ucx\",\"ranks\":%u,"
                    "\"per_rank\":{\"version\":3,\"truncated\":2,"
                    "\"foreign\":1,\"checksum\":1,\"forged\":%d,"
                    "\"stranger\":%d}}\n",
            reached, STRANGER_FORGED, NSENDS);
    close(out_fd);
    return reached == n ? 0 : 1;
}
