/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-foreign-ofi DIR N: the libfabric backend's stranger
 * (ftcoll_foreign.c is ZeroMQ's). A process of no job that opens an
 * FI_EP_RDM endpoint on the job's provider, inserts every rank's address
 * and sends each rank what a job must survive and count:
 *
 *   per rank, with a 16-byte backend header of no rank and a wrong token:
 *     1 message of random bytes                  -> dropped_version
 *     2 messages too short for a header (10, 0)  -> dropped_truncated
 *     1 well-formed message of another job       -> dropped_foreign
 *     1 message with a broken checksum           -> dropped_checksum
 *   per rank, with a header claiming rank 0, a sequence number far ahead
 *   of the pair's and a wrong token (it must not be held for its turn):
 *     1 random message                           -> dropped_version
 *   per rank, a message shorter than the backend header:
 *     1 of 5 bytes                     dropped by the backend, not the core
 *   per rank, with a header of no rank and a wrong token:
 *     STRANGER_FORGED messages forged with the job's token (stranger.h):
 *     a job with the key drops each             -> dropped_foreign
 *
 * The backend counts all in msgs_stranger and sequences none (on_recv in
 * backends/libfabric/progress.c); all but the 5-byte one reach the core as
 * FTC_RANK_UNKNOWN, whose decoder drops each and counts it as above.
 *
 * Addresses come from the rendezvous files of ftcoll-run --rendezvous DIR:
 * the backend's exchange (ftc_ofi_exchange) is the job's first allgather,
 * ag0.<rank>, one FTC_OFI_BLOB_SIZE-byte blob per rank that names the
 * provider and carries the fi_getname() address. We ask fi_getinfo for
 * that provider and address format, so the job's FI_PROVIDER need not be
 * known (one that excludes the job's provider makes fi_getinfo fail).
 *
 * Leaving: every send is waited for (its completion), and the CQ is
 * driven a little longer so that a connection-oriented provider (rxm)
 * finishes its exchanges with the ranks before the endpoint closes: the
 * ranks must see a stranger leave, not an error.
 *
 * Prints one JSON line with what it sent per rank. Exit 0; 1 if some rank
 * could not be reached (no address, a send failed); 2 usage.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "ofi_internal.h"
#include "ofi_rdm_endpoint.h"
#include "stranger.h"

/* The blob's layout (backends/libfabric/address.c, where it is drawn). */
#define BLOB_VERSION 1
#define OFF_VERSION 4
#define OFF_ADDRLEN 6
#define OFF_FORMAT 40
#define OFF_PROV 96
#define OFF_ADDR 160

enum {
    FILE_WAIT_MS = 20000,   /* for the job to publish its addresses */
    SEND_WAIT_MS = 10000,   /* for the ranks to take our messages */
    LINGER_MS = 200,        /* for rxm to finish with the ranks */
    NPLAIN = 7,             /* the garbage, before the forged ones */
    NSENDS = NPLAIN + STRANGER_FORGED,
    SHORT_LEN = 5,          /* shorter than any backend header */
    MSG_MAX = FTC_OFI_HDR + STRANGER_MSG_MAX
};

typedef struct blob_info {
    char provider[FTC_OFI_PROV_MAX];
    uint32_t addr_format;
    size_t addrlen;
    unsigned char addr[FTC_OFI_ADDR_MAX];
} blob_info_t;

/* One send: which rank, whether it ended, and how. The fi_context2 comes
 * first: libfabric owns it until the completion. */
typedef struct op {
    struct fi_context2 fctx;
    unsigned rank;
    bool posted, done, failed;
} op_t;

/* The messages, header included, in one buffer we can register. */
typedef struct wire {
    unsigned char bytes[NSENDS][MSG_MAX];
    size_t len[NSENDS];
} wire_t;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Rank r's blob: 0, or -1 (said on stderr). *token: the job's. */
static int read_blob(const char *dir, unsigned r, blob_info_t *out,
                     uint64_t *token)
{
    unsigned char *b;
    size_t len;
    if (stranger_read_rdv(dir, 0, r, FILE_WAIT_MS, &b, &len, token) != 0)
        return -1;
    int rc = -1;
    if (len != FTC_OFI_BLOB_SIZE || memcmp(b, "FOFI", 4) != 0
        || get_le(b + OFF_VERSION, 2) != BLOB_VERSION) {
        fprintf(stderr, "ftcoll-foreign-ofi: ag0.%u is not a libfabric "
                        "backend address of blob version %d (is the job on "
                        "libfabric?)\n", r, BLOB_VERSION);
        goto out;
    }
    memcpy(out->provider, b + OFF_PROV, sizeof(out->provider));
    out->provider[sizeof(out->provider) - 1] = '\0';
    out->addr_format = (uint32_t)get_le(b + OFF_FORMAT, 4);
    out->addrlen = (size_t)get_le(b + OFF_ADDRLEN, 2);
    if (out->addrlen == 0 || out->addrlen > FTC_OFI_ADDR_MAX) {
        fprintf(stderr, "ftcoll-foreign-ofi: ag0.%u: bad address length\n",
                r);
        goto out;
    }
    memcpy(out->addr, b + OFF_ADDR, out->addrlen);
    rc = 0;
out:
    free(b);
    return rc;
}

/* An RDM endpoint on provider prov with address format fmt, as the
 * backend opens its own. */
static int fab_open(ofi_rdm_t *f, const char *prov, uint32_t fmt, unsigned n,
                    wire_t *w)
{
    ofi_rdm_spec_t s = {
        .provider = prov,
        .addr_format = fmt,
        .av_count = n,
        .cq_size = (size_t)n * NSENDS + 16,
        .buf = w,
        .len = sizeof(*w),
        .access = FI_SEND,
    };
    char err[200];
    if (ofi_rdm_open(f, &s, err, sizeof(err)) == 0)
        return 0;
    fprintf(stderr, "ftcoll-foreign-ofi: %s (provider %s; FI_PROVIDER must "
                    "allow the job's provider)\n", err, prov);
    return -1;
}

/* Read the CQ: mark what completed. Also drives the provider's progress
 * (rxm connects while we read). If nothing completed, nap: a spinning
 * stranger would take the CPU from the ranks (2 vCPUs here), which then
 * look hung to each other. */
static void poll_cq(ofi_rdm_t *f)
{
    struct fi_cq_entry e[16];
    for (int pass = 0;; pass++) {
        ssize_t k = fi_cq_read(f->cq, e, 16);
        if (k == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof(err));
            if (fi_cq_readerr(f->cq, &err, 0) != 1)
                return;
            op_t *o = err.op_context;
            if (o != NULL) {
                o->done = o->failed = true;
                fprintf(stderr, "ftcoll-foreign-ofi: a send to rank %u "
                                "failed: %s\n", o->rank,
                        fi_strerror(err.err));
            }
            continue;
        }
        if (k <= 0) {
            if (pass == 0) {
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
            }
            return;
        }
        for (ssize_t i = 0; i < k; i++) {
            op_t *o = e[i].op_context;
            if (o != NULL)
                o->done = true;
        }
    }
}

/* The messages: header (sequence, sender, token) and payload. */
static void build(wire_t *w, const stranger_msgs_t *m, uint64_t wrong)
{
    struct {
        uint32_t seq, sender;
        const void *data;
        size_t len;
    } spec[NSENDS] = {
        {0, UINT32_MAX, m->random, sizeof(m->random)},
        {0, UINT32_MAX, m->random, 10},
        {0, UINT32_MAX, NULL, 0},
        {0, UINT32_MAX, m->other_job, sizeof(m->other_job)},
        {0, UINT32_MAX, m->broken, sizeof(m->broken)},
        /* Rank 0's, far ahead of the pair: the old header would hold it. */
        {1000, 0, m->random, sizeof(m->random)},
        {0, 0, NULL, 0},    /* the short one: built apart */
    };
    for (unsigned i = 0; i < STRANGER_FORGED; i++) {
        spec[NPLAIN + i].seq = 0;
        spec[NPLAIN + i].sender = UINT32_MAX;
        spec[NPLAIN + i].data = stranger_forged(m, i, &spec[NPLAIN + i].len);
    }
    memset(w, 0, sizeof(*w));
    for (int i = 0; i < NSENDS; i++) {
        if (i == NPLAIN - 1)
            continue;   /* the short one, below */
        unsigned char *b = w->bytes[i];
        put_le(b, spec[i].seq, 4);
        put_le(b + 4, spec[i].sender, 4);
        put_le(b + FTC_OFI_HDR_TOKEN, wrong, 8);
        if (spec[i].len > 0)
            memcpy(b + FTC_OFI_HDR, spec[i].data, spec[i].len);
        w->len[i] = FTC_OFI_HDR + spec[i].len;
    }
    memcpy(w->bytes[NPLAIN - 1], m->random, SHORT_LEN);
    w->len[NPLAIN - 1] = SHORT_LEN;
}

/* Post every send, retrying what the provider cannot take yet (rxm says
 * -FI_EAGAIN while it connects), then wait for every completion. */
static void send_all(ofi_rdm_t *f, wire_t *w, const fi_addr_t *fa, op_t *ops,
                     unsigned n)
{
    uint64_t end = now_ms() + SEND_WAIT_MS;
    for (;;) {
        bool pending = false;
        for (unsigned r = 0; r < n; r++) {
            for (int i = 0; i < NSENDS; i++) {
                op_t *o = &ops[r * NSENDS + i];
                if (o->posted || o->failed)
                    continue;
                ssize_t rc = fi_send(f->ep, w->bytes[i], w->len[i], f->desc,
                                     fa[r], &o->fctx);
                if (rc == 0) {
                    o->posted = true;
                } else if (rc != -FI_EAGAIN) {
                    fprintf(stderr, "ftcoll-foreign-ofi: fi_send to rank %u: "
                                    "%s\n", r, fi_strerror((int)-rc));
                    o->failed = o->done = true;
                } else {
                    break;  /* in order: the rest of this rank waits */
                }
            }
        }
        poll_cq(f);
        for (unsigned k = 0; k < n * NSENDS; k++)
            pending = pending || !ops[k].done;
        if (!pending)
            return;
        if (now_ms() >= end) {
            for (unsigned r = 0; r < n; r++) {
                int left = 0;
                for (int i = 0; i < NSENDS; i++) {
                    op_t *o = &ops[r * NSENDS + i];
                    left += !o->done && !o->failed;
                    if (!o->done)
                        o->failed = true;
                }
                if (left > 0)
                    fprintf(stderr, "ftcoll-foreign-ofi: %d send(s) to rank "
                                    "%u not completed after %d ms (is the "
                                    "job still running?)\n", left, r,
                            SEND_WAIT_MS);
            }
            return;
        }
    }
}

int main(int argc, char **argv)
{
    const char *dir;
    unsigned n;
    int usage_rc = stranger_args("ftcoll-foreign-ofi", argc, argv, &dir, &n);
    if (usage_rc >= 0)
        return usage_rc;
    blob_info_t *blobs = calloc(n, sizeof(*blobs));
    fi_addr_t *fa = calloc(n, sizeof(*fa));
    op_t *ops = calloc((size_t)n * NSENDS, sizeof(*ops));
    wire_t *w = calloc(1, sizeof(*w));
    ofi_rdm_t f;
    memset(&f, 0, sizeof(f));
    unsigned reached = 0;
    uint64_t token = 0;
    if (blobs == NULL || fa == NULL || ops == NULL || w == NULL) {
        fprintf(stderr, "ftcoll-foreign-ofi: out of memory\n");
        goto out;
    }
    for (unsigned r = 0; r < n; r++) {
        if (read_blob(dir, r, &blobs[r], &token) != 0)
            goto out;
        if (strcmp(blobs[r].provider, blobs[0].provider) != 0
            || blobs[r].addr_format != blobs[0].addr_format) {
            fprintf(stderr, "ftcoll-foreign-ofi: ranks 0 and %u use "
                            "different providers (%s, %s)\n", r,
                    blobs[0].provider, blobs[r].provider);
            goto out;
        }
    }
    stranger_msgs_t m;
    stranger_msgs_init(&m, token);
    build(w, &m, stranger_wrong_token(token));
    if (fab_open(&f, blobs[0].provider, blobs[0].addr_format, n, w) != 0)
        goto out;
    for (unsigned r = 0; r < n; r++) {
        fa[r] = FI_ADDR_NOTAVAIL;
        int rc = fi_av_insert(f.av, blobs[r].addr, 1, &fa[r], 0, NULL);
        if (rc != 1) {
            fprintf(stderr, "ftcoll-foreign-ofi: fi_av_insert of rank %u: "
                            "%s\n", r, rc < 0 ? fi_strerror(-rc) : "refused");
            for (int i = 0; i < NSENDS; i++)
                ops[r * NSENDS + i].failed = ops[r * NSENDS + i].done = true;
        }
        for (int i = 0; i < NSENDS; i++)
            ops[r * NSENDS + i].rank = r;
    }
    send_all(&f, w, fa, ops, n);
    uint64_t end = now_ms() + LINGER_MS;
    while (now_ms() < end)
        poll_cq(&f);
    for (unsigned r = 0; r < n; r++) {
        bool ok = true;
        for (int i = 0; i < NSENDS; i++)
            ok = ok && !ops[r * NSENDS + i].failed;
        reached += ok;
    }

out:
    ofi_rdm_close(&f);
    free(blobs);
    free(fa);
    free(ops);
    free(w);
    printf("{\"foreign\":true,\"backend\":\"libfabric\",\"ranks\":%u,"
           "\"per_rank\":{\"version\":2,\"truncated\":2,\"foreign\":1,"
           "\"checksum\":1,\"forged\":%d,\"stranger\":%d}}\n",
           reached, STRANGER_FORGED, NSENDS);
    return reached == n ? 0 : 1;
}
