/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX backend's receive fast path (progress.c): while a pass runs the
 * worker, the AM callback hands a message to the core at once instead of
 * queueing it, unless messages are already queued (ftc_ucx_arm runs the
 * worker too, and queues what it finds). The core here is a recorder:
 * this program defines the four entry points the backend calls
 * (ftc_transport_recv, _send_done, _timer_fired, _peer_failed) and links
 * the backend without libftcoll, so it sees exactly what the backend
 * feeds, in the order it feeds it. The fast path runs only while every
 * peer is reached over shared memory; over tcp every message takes the
 * queue, and the same checks hold for it. Checked, over both:
 *   - order: messages queued by ftc_ucx_arm reach the core before those
 *     that arrive after them (breaking the fast path's "nothing queued"
 *     test feeds the later ones first, and this fails);
 *   - a core that sends from inside ftc_transport_recv (so from inside
 *     UCX's callback): a ping-pong of ROUNDS messages, every one in order;
 *   - a peer that goes away (tcp: in one process a shared-memory peer
 *     cannot die): every message it sent before reaches the core before
 *     its failure report, and the report comes once.
 * The last line says 'N passed, M failed'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_ucx.h"
#include "check.h"

enum {
    BATCH = 4,          /* messages per side of the order check */
    ROUNDS = 2000,      /* ping-pong messages */
    LAST_WORDS = 16,    /* messages sent by the peer that goes away */
    MAX_RECORD = 4096,
    WARM_UP = 0x7fffffff /* the wire-up message's number: never echoed */
};

/* --- The recording core --------------------------------------------------- */

typedef struct recorder {
    uint32_t rank;
    ftc_ucx_t *u;
    uint32_t src[MAX_RECORD];
    uint32_t seq[MAX_RECORD];
    size_t nrecv;
    uint32_t failed[MAX_RECORD];
    size_t nfailed_at[4];       /* nrecv when peer r was reported */
    size_t nfailed;
    int echo_until;             /* answer seq + 1 while seq < this */
} recorder_t;

static uint32_t get_seq(const void *buf, size_t len)
{
    uint32_t s = 0;
    if (len >= sizeof(s))
        memcpy(&s, buf, sizeof(s));
    return s;
}

static int send_seq(recorder_t *r, uint32_t dest, uint32_t seq)
{
    /* A message of core size: the backend's fast path is for these. A
     * send UCX does not finish at once (FTC_OK, not FTC_SEND_INLINE:
     * over tcp before the wire-up) keeps its buffer: a ring of them, far
     * more than are ever in flight here. */
    static unsigned char ring[MAX_RECORD][72];
    static size_t next;
    unsigned char *msg = ring[next++ % MAX_RECORD];
    memset(msg, 0xa5, sizeof(ring[0]));
    memcpy(msg, &seq, sizeof(seq));
    return ftc_ucx_ops()->send(r->u, dest, msg, sizeof(ring[0]), NULL);
}

int ftc_transport_recv(ftc_context_t *ctx, uint32_t src, const void *buf,
                       size_t len)
{
    recorder_t *r = (recorder_t *)ctx;
    uint32_t seq = get_seq(buf, len);
    if (r->nrecv < MAX_RECORD) {
        r->src[r->nrecv] = src;
        r->seq[r->nrecv] = seq;
    }
    r->nrecv++;
    if ((int)seq < r->echo_until)
        (void)send_seq(r, src, seq + 1);
    return FTC_OK;
}

void ftc_transport_send_done(ftc_context_t *ctx, void *cookie, int status)
{
    (void)ctx;
    (void)cookie;
    (void)status;
}

void ftc_transport_timer_fired(ftc_context_t *ctx)
{
    (void)ctx;
}

void ftc_transport_peer_failed(ftc_context_t *ctx, uint32_t peer)
{
    recorder_t *r = (recorder_t *)ctx;
    if (r->nfailed < MAX_RECORD)
        r->failed[r->nfailed] = peer;
    if (peer < 4)
        r->nfailed_at[peer] = r->nrecv;
    r->nfailed++;
}

/* --- Two backends wired to each other ------------------------------------- */

static recorder_t rec[2];

static bool run_until(uint32_t who, size_t want);

static int pair_open(void)
{
    memset(rec, 0, sizeof(rec));
    const void *addrs[2];
    size_t lens[2];
    for (uint32_t r = 0; r < 2; r++) {
        ftc_ucx_config_t uc;
        ftc_ucx_config_init(&uc);
        uc.rank = r;
        uc.nranks = 2;
        uc.job_token = 0x77;
        uc.single_host = 1;
        uc.failure_grace_ms = 0;
        int rc = ftc_ucx_create(&uc, &rec[r].u);
        if (rc != FTC_OK)
            return rc;
        rec[r].rank = r;
        addrs[r] = ftc_ucx_address(rec[r].u, &lens[r]);
    }
    for (uint32_t r = 0; r < 2; r++) {
        int rc = ftc_ucx_set_peers(rec[r].u, addrs, lens);
        if (rc != FTC_OK)
            return rc;
        ftc_ucx_attach(rec[r].u, (ftc_context_t *)&rec[r]);
    }
    /* UCX's wire-up first, one message each way (the job's handshake,
     * ftc_ucx_handshake, needs each rank in its own process): over tcp a
     * message sent before it is done may overtake earlier ones, which is
     * why jobs do the handshake, and not what this program tests. */
    for (uint32_t r = 0; r < 2; r++)
        if (send_seq(&rec[r], 1 - r, WARM_UP) < 0)
            return FTC_ETRANSPORT;
    if (!run_until(0, 1) || !run_until(1, 1))
        return FTC_ETIMEDOUT;
    for (uint32_t r = 0; r < 2; r++)
        rec[r].nrecv = 0;
    return FTC_OK;
}

static void pair_close(void)
{
    for (uint32_t r = 0; r < 2; r++)
        if (rec[r].u != NULL) {
            (void)ftc_ucx_flush(rec[r].u, 200);
            ftc_ucx_destroy(rec[r].u);
            rec[r].u = NULL;
        }
}

/* Progress both (the live ones) until rank `who` has recorded `want`
 * messages; bounded by passes, with a time limit only against a hang. */
static bool run_until(uint32_t who, size_t want)
{
    time_t give_up = time(NULL) + 20;
    for (unsigned long i = 0; rec[who].nrecv < want; i++) {
        for (uint32_t r = 0; r < 2; r++)
            if (rec[r].u != NULL)
                (void)ftc_ucx_progress(rec[r].u, 0);
        if (i % 4096 == 0 && time(NULL) > give_up)
            return false;
    }
    return true;
}

static bool in_order(const recorder_t *r, size_t from, size_t n,
                     uint32_t first, const char *what)
{
    bool ok = true;
    for (size_t i = 0; i < n && from + i < MAX_RECORD; i++) {
        ok &= CHECK_MSG(r->src[from + i] == 1 - r->rank
                            && r->seq[from + i] == first + i,
                        "%s: message %zu is seq %u from %u, want seq %zu",
                        what, from + i, r->seq[from + i], r->src[from + i],
                        first + i);
        if (!ok)
            break;
    }
    return ok;
}

/* --- The checks ------------------------------------------------------------ */

/* Queued messages (ftc_ucx_arm ran the worker) come before later ones. */
static void test_queued_first(const char *label)
{
    int rc = pair_open();
    if (!CHECK_MSG(rc == FTC_OK, "%s: set-up: %d", label, rc)) {
        pair_close();
        return;
    }
    for (uint32_t s = 0; s < BATCH; s++)
        CHECK(send_seq(&rec[0], 1, s) >= 0);
    /* Rank 1 lets ftc_ucx_arm run its worker: what arrives is queued,
     * and arm answers 1 (progress first). Bounded: each try runs the
     * worker, and the first batch is in rank 1's FIFO or socket. */
    int armed = 0;
    for (int i = 0; i < 100000 && armed != 1; i++) {
        (void)ftc_ucx_progress(rec[0].u, 0);
        armed = ftc_ucx_arm(rec[1].u);
    }
    CHECK_MSG(armed == 1, "%s: arm found the first batch (%d)", label, armed);
    CHECK_MSG(rec[1].nrecv == 0, "%s: arm fed the core %zu messages", label,
              rec[1].nrecv);
    for (uint32_t s = BATCH; s < 2 * BATCH; s++)
        CHECK(send_seq(&rec[0], 1, s) >= 0);
    CHECK_MSG(run_until(1, 2 * BATCH), "%s: %zu of %d arrived", label,
              rec[1].nrecv, 2 * BATCH);
    in_order(&rec[1], 0, 2 * BATCH, 0, label);
    pair_close();
}

/* The core answers from inside ftc_transport_recv. */
static void test_ping_pong(const char *label)
{
    int rc = pair_open();
    if (!CHECK_MSG(rc == FTC_OK, "%s: set-up: %d", label, rc)) {
        pair_close();
        return;
    }
    rec[0].echo_until = rec[1].echo_until = ROUNDS;
    CHECK(send_seq(&rec[0], 1, 0) >= 0);
    /* Rank 1 gets the even numbers 0..ROUNDS, rank 0 the odd ones. */
    size_t want1 = ROUNDS / 2 + 1, want0 = ROUNDS / 2;
    CHECK_MSG(run_until(1, want1) && run_until(0, want0),
              "%s: ping-pong: %zu + %zu of %d", label, rec[0].nrecv,
              rec[1].nrecv, ROUNDS + 1);
    for (uint32_t r = 0; r < 2; r++)
        for (size_t i = 0; i < rec[r].nrecv && i < MAX_RECORD; i++)
            if (!CHECK_MSG(rec[r].seq[i] == 2 * i + (r == 0),
                           "%s: ping-pong: rank %u's message %zu is %u",
                           label, r, i, rec[r].seq[i]))
                break;
    CHECK_MSG(rec[0].nrecv == want0 && rec[1].nrecv == want1,
              "%s: ping-pong: no message twice (%zu, %zu)", label,
              rec[0].nrecv, rec[1].nrecv);
    pair_close();
}

/* A peer's last messages come before its failure report. */
static void test_last_words(const char *label)
{
    int rc = pair_open();
    if (!CHECK_MSG(rc == FTC_OK, "%s: set-up: %d", label, rc)) {
        pair_close();
        return;
    }
    for (uint32_t s = 0; s < LAST_WORDS; s++)
        CHECK(send_seq(&rec[0], 1, s) >= 0);
    (void)ftc_ucx_flush(rec[0].u, 1000);
    ftc_ucx_destroy(rec[0].u);
    rec[0].u = NULL;
    time_t give_up = time(NULL) + 30;
    for (unsigned long i = 0; rec[1].nfailed == 0; i++) {
        (void)ftc_ucx_progress(rec[1].u, 0);
        if (i % 4096 == 0 && time(NULL) > give_up)
            break;
    }
    CHECK_MSG(rec[1].nfailed == 1 && rec[1].failed[0] == 0,
              "%s: rank 0 reported once (%zu reports)", label,
              rec[1].nfailed);
    CHECK_MSG(rec[1].nrecv == LAST_WORDS && rec[1].nfailed_at[0] == LAST_WORDS,
              "%s: all %d messages before the report (%zu, report after %zu)",
              label, LAST_WORDS, rec[1].nrecv, rec[1].nfailed_at[0]);
    in_order(&rec[1], 0, LAST_WORDS, 0, label);
    pair_close();
}

int main(void)
{
    static const struct {
        const char *label, *tls;
    } lanes[] = {{"tcp", "tcp"}, {"sm", "sm"}};
    for (size_t i = 0; i < sizeof(lanes) / sizeof(lanes[0]); i++) {
        setenv("UCX_TLS", lanes[i].tls, 1);
        setenv("UCX_MM_ERROR_HANDLING", "y", 1);
        setenv("UCX_KEEPALIVE_INTERVAL", "100ms", 1);
        test_queued_first(lanes[i].label);
        test_ping_pong(lanes[i].label);
        /* In one process a shared-memory peer never dies: UCX's sm
         * keepalive watches the peer's pid, which is ours. */
        if (strcmp(lanes[i].tls, "tcp") == 0)
            test_last_words(lanes[i].label);
    }
    return check_report();
}
