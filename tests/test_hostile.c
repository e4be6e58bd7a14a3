/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile input on the loopback: a stranger that knows the wire format
 * and the job token (it travels in clear when auth is off), but not the
 * job key, injects messages with a sender of its choosing.
 *
 *   - one forged FTC_MSG_EXCLUDED excludes a healthy rank without auth
 *     (shown, so that the test proves the attack is real) and does
 *     nothing with auth;
 *   - forged contributions during an allreduce: without auth the result
 *     holds the forged value; with auth every result is exact;
 *   - 20,000 x 4 KiB messages for a group that does not exist grow a rank
 *     by at most FTC_ORPHAN_MAX_BYTES without auth, and by nothing with;
 *   - 20,000 x 4 KiB messages for future operations of a known group, in
 *     rank 1's name, grow a rank by at most the early-message budget
 *     (pending_max_bytes, 8 MiB here) without auth, which costs rank 1 its
 *     place in the group (the name is the stranger's to use without the
 *     key), and by nothing with.
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "core/op.h"
#include "wire/wire.h"
#include "algo/corrected/kinds.h"
#include "check.h"

#define N 4
#define TOKEN UINT64_C(0x70CE70CE)
#define PENDING_MAX ((uint64_t)8 << 20)

typedef struct job {
    ftc_lb_world_t *w;
    ftc_context_t *ctx[N];
    ftc_group_t *g[N];
    int64_t in[N], out[N];
    int status[N], delivered[N];
} job_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    int *slot = arg;
    slot[0] = c->status;
    slot[N]++;
}

static void job_init(job_t *J, bool auth)
{
    memset(J, 0, sizeof(*J));
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    if (ftc_lb_world_create(&lc, &J->w) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = TOKEN;
    cfg.suspect_timeout_ns = 1000000;
    cfg.probe_timeout_ns = 2000000;
    cfg.auth = auth;
    cfg.pending_max_bytes = PENDING_MAX;
    for (int i = 0; i < 16; i++)
        cfg.auth_key[i] = (uint8_t)(0xA5 ^ i * 29);
    for (int r = 0; r < N; r++) {
        if (ftc_context_create((uint32_t)r, N, ftc_lb_ops(),
                               ftc_lb_endpoint(J->w, (uint32_t)r), &cfg,
                               &J->ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(J->w, (uint32_t)r, J->ctx[r]);
        if (ftc_group_create(J->ctx[r], 1, 0, N, NULL, &J->g[r]) != FTC_OK)
            abort();
    }
}

static void job_fini(job_t *J)
{
    for (int r = 0; r < N; r++)
        ftc_context_destroy(J->ctx[r]);
    ftc_lb_world_destroy(J->w);
}

static void start_allreduce(job_t *J)
{
    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.dtype = FTC_INT64;
        a.count = 1;
        J->in[r] = r + 1;
        a.sendbuf = &J->in[r];
        a.recvbuf = &J->out[r];
        a.deliver = on_deliver;
        a.deliver_arg = &J->status[r];
        J->delivered[r] = 0;
        CHECK_MSG(ftc_init_allreduce(J->g[r], &a, NULL) == FTC_OK, "init");
    }
}

/* A message as a stranger makes it: right format and token, no key. */
static size_t forge(uint8_t *buf, uint8_t kind, uint8_t coll, uint32_t sender,
                    uint32_t group, uint64_t seq, uint32_t signature,
                    const void *payload, uint32_t plen)
{
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = kind;
    h.coll = coll;
    h.algo = coll != 0 ? FTC_ALGO_CORRECTED : 0;
    h.group_id = group;
    h.sender = sender;
    h.seq = seq;
    h.signature = signature;
    h.payload_len = plen;
    h.job_token = TOKEN;
    if (plen > 0)
        memcpy(buf + FTC_WIRE_HEADER_SIZE, payload, plen);
    ftc_wire_encode(&h, buf);
    return FTC_WIRE_HEADER_SIZE + plen;
}

static void test_forged_exclusion(bool auth)
{
    job_t J;
    job_init(&J, auth);
    uint8_t m[FTC_WIRE_HEADER_SIZE];
    size_t len = forge(m, FTC_MSG_EXCLUDED, 0, 1, 0, 0, 0, NULL, 0);
    ftc_lb_inject(J.w, 0, FTC_RANK_UNKNOWN, m, len, 0);
    ftc_lb_run(J.w, 100000);
    if (!auth) {
        CHECK_MSG(ftc_context_is_excluded(J.ctx[0]),
                  "without auth a forged EXCLUDED excludes rank 0 (the attack "
                  "the key defeats)");
    } else {
        CHECK_MSG(!ftc_context_is_excluded(J.ctx[0]),
                  "with auth a forged EXCLUDED excluded rank 0");
        start_allreduce(&J);
        ftc_lb_run(J.w, 1000000);
        for (int r = 0; r < N; r++)
            CHECK_MSG(J.status[r] == FTC_OK && J.out[r] == N * (N + 1) / 2,
                      "rank %d after the forgery: %s, %" PRId64, r,
                      ftc_err_name(J.status[r]), J.out[r]);
        ftc_counters_t c;
        ftc_context_counters(J.ctx[0], &c);
        CHECK_MSG(c.dropped_foreign == 1,
                  "the forgery was counted as foreign "
                  "(%" PRIu64 ")",
                  c.dropped_foreign);
    }
    job_fini(&J);
}

static void test_forged_contribution(bool auth)
{
    job_t J;
    job_init(&J, auth);
    start_allreduce(&J);
    /* Rank 1's up-correction value (or, for the exchange allreduce that
     * small groups get by default, its input) as a stranger would send
     * it to every member, before the real one, claiming to be rank 1. */
    uint32_t sig = 0;
    for (ftc_cop_t *op = J.g[0]->ops; op != NULL; op = op->next)
        sig = op->signature;
    int64_t bogus = 1000000;
    uint8_t m[FTC_WIRE_HEADER_SIZE + 8];
    for (uint32_t dest = 0; dest < N; dest++) {
        if (dest == 1)
            continue;
        static const uint8_t kinds[] = {FTC_CORR_MSG_UPCORR,
                                        FTC_CORR_MSG_TREE_UP,
                                        FTC_CORR_MSG_EXCHANGE};
        for (size_t k = 0; k < sizeof(kinds); k++) {
            size_t len = forge(m, kinds[k], FTC_COLL_ALLREDUCE, 1, 1, 0, sig,
                               &bogus, 8);
            ftc_lb_inject(J.w, dest, FTC_RANK_UNKNOWN, m, len, 0);
        }
    }
    ftc_lb_run(J.w, 1000000);
    bool any_bogus = false;
    for (int r = 0; r < N; r++)
        any_bogus |= J.status[r] == FTC_OK && J.out[r] != N * (N + 1) / 2;
    if (!auth) {
        CHECK_MSG(any_bogus, "without auth the forged value reaches a result "
                             "(the attack the key defeats)");
    } else {
        for (int r = 0; r < N; r++)
            CHECK_MSG(J.status[r] == FTC_OK && J.out[r] == N * (N + 1) / 2,
                      "with auth, rank %d: %s, %" PRId64, r,
                      ftc_err_name(J.status[r]), J.out[r]);
    }
    job_fini(&J);
}

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void test_orphan_flood(bool auth)
{
    job_t J;
    job_init(&J, auth);
    enum { COUNT = 20000, SIZE = 4096 };
    static uint8_t m[FTC_WIRE_HEADER_SIZE + SIZE];
    uint8_t payload[SIZE];
    memset(payload, 0x5A, sizeof(payload));
    size_t before = heap_in_use();
    for (int i = 0; i < COUNT; i++) {
        size_t len = forge(m, FTC_CORR_MSG_UPCORR, FTC_COLL_ALLREDUCE, 1,
                           999 + (uint32_t)i % 7, (uint64_t)i, 1, payload,
                           SIZE);
        ftc_lb_inject(J.w, 0, FTC_RANK_UNKNOWN, m, len, 0);
        if (i % 1000 == 999)
            ftc_lb_run(J.w, 100000); /* the loopback holds them till then */
    }
    ftc_lb_run(J.w, 1000000);
    size_t after = heap_in_use();
    size_t grown = after > before ? after - before : 0;
    size_t bound = auth ? (size_t)1 << 20 : FTC_ORPHAN_MAX_BYTES + (1 << 20);
    CHECK_MSG(grown <= bound, "%s: %zu MB of flood kept %zu bytes (bound %zu)",
              auth ? "auth" : "no auth", (size_t)COUNT * SIZE >> 20, grown,
              bound);
    /* And the group still works. */
    start_allreduce(&J);
    ftc_lb_run(J.w, 1000000);
    for (int r = 0; r < N; r++)
        CHECK_MSG(J.status[r] == FTC_OK && J.out[r] == N * (N + 1) / 2,
                  "rank %d after the flood: %s", r, ftc_err_name(J.status[r]));
    job_fini(&J);
}

static void test_early_flood(bool auth)
{
    job_t J;
    job_init(&J, auth);
    enum { COUNT = 20000, SIZE = 4096 };
    static uint8_t m[FTC_WIRE_HEADER_SIZE + SIZE];
    uint8_t payload[SIZE];
    memset(payload, 0x5A, sizeof(payload));
    size_t before = heap_in_use();
    for (int i = 0; i < COUNT; i++) {
        /* Group 1 exists; its operations 1 and on have not started. */
        size_t len = forge(m, FTC_CORR_MSG_UPCORR, FTC_COLL_ALLREDUCE, 1, 1,
                           1 + (uint64_t)i, 1, payload, SIZE);
        ftc_lb_inject(J.w, 0, FTC_RANK_UNKNOWN, m, len, 0);
        if (i % 1000 == 999)
            ftc_lb_run(J.w, 100000); /* the loopback holds them till then */
    }
    ftc_lb_run(J.w, 1000000);
    size_t after = heap_in_use();
    size_t grown = after > before ? after - before : 0;
    size_t bound = auth ? (size_t)1 << 20 : PENDING_MAX + (1 << 20);
    CHECK_MSG(grown <= bound, "%s: %zu MB of early flood kept %zu bytes "
              "(bound %zu)", auth ? "auth" : "no auth",
              (size_t)COUNT * SIZE >> 20, grown, bound);
    CHECK_MSG(ftc_context_is_failed(J.ctx[0], 1) == !auth,
              "%s: the flood in rank 1's name %s", auth ? "auth" : "no auth",
              auth ? "excluded it" : "did not exclude it");
    /* Operation 0 still completes: with the key, at every rank, exactly;
     * without, at the others (rank 1 was excluded before it started). */
    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.dtype = FTC_INT64;
        a.count = 1;
        J.in[r] = r + 1;
        a.sendbuf = &J.in[r];
        a.recvbuf = &J.out[r];
        a.deliver = on_deliver;
        a.deliver_arg = &J.status[r];
        int rc = ftc_init_allreduce(J.g[r], &a, NULL);
        if (rc != FTC_OK)
            J.status[r] = rc;
    }
    ftc_lb_run(J.w, 1000000);
    for (int r = 0; r < N; r++) {
        if (!auth && r == 1) {
            CHECK_MSG(J.status[r] == FTC_EEXCLUDED, "no auth: rank 1: %s",
                      ftc_err_name(J.status[r]));
            continue;
        }
        int64_t want = auth ? N * (N + 1) / 2 : N * (N + 1) / 2 - 2;
        CHECK_MSG(J.status[r] == FTC_OK && J.out[r] == want,
                  "%s: rank %d after the flood: %s, %" PRId64,
                  auth ? "auth" : "no auth", r, ftc_err_name(J.status[r]),
                  J.out[r]);
    }
    job_fini(&J);
}

/* The receive path decodes unkeyed messages with the header's inline
 * checks (wire/header_codec.h), not through ftc_wire_decode: it must
 * refuse every malformed message with the very code ftc_wire_decode
 * names. Every bit of the header flipped in turn, the checksum stamped
 * again over the damage (else every flip is only FTC_ECHECKSUM), so the
 * field checks behind it speak; and senders at and beyond the world,
 * which the transport did not name (FTC_RANK_UNKNOWN). */
static void test_receive_refuses_as_decode(void)
{
    job_t J;
    job_init(&J, false);
    uint8_t good[FTC_WIRE_HEADER_SIZE], m[FTC_WIRE_HEADER_SIZE];
    forge(good, FTC_MSG_PROBE_ACK, 0, 1, 1, 1000, 0, NULL, 0);
    unsigned tried = 0, refused = 0, differ = 0;
    for (unsigned bit = 0; bit < 8 * FTC_WIRE_HEADER_SIZE; bit++) {
        if (bit / 8 >= 56 && bit / 8 < 60)
            continue; /* the checksum itself: test_wire's flips */
        memcpy(m, good, sizeof(m));
        m[bit / 8] ^= (uint8_t)(1u << bit % 8);
        uint32_t crc = ftc_crc32c_message(m, sizeof(m));
        for (int i = 0; i < 4; i++)
            m[56 + i] = (uint8_t)(crc >> 8 * i);
        ftc_wire_header_t h;
        int want = ftc_wire_decode(m, sizeof(m), TOKEN, N, &h);
        if (want == FTC_OK)
            continue;
        int got = ftc_transport_recv(J.ctx[0], FTC_RANK_UNKNOWN, m,
                                     sizeof(m));
        tried++;
        refused += got != FTC_OK;
        if (got != want) {
            if (differ++ < 5)
                printf("  detail: bit %u: receive %s, decode %s\n", bit,
                   ftc_err_name(got), ftc_err_name(want));
        }
    }
    static const uint32_t senders[] = {N, N + 1, UINT32_MAX};
    for (size_t i = 0; i < sizeof(senders) / sizeof(senders[0]); i++) {
        forge(m, FTC_MSG_PROBE_ACK, 0, senders[i], 1, 1000, 0, NULL, 0);
        int got = ftc_transport_recv(J.ctx[0], FTC_RANK_UNKNOWN, m,
                                     sizeof(m));
        tried++;
        refused += got != FTC_OK;
        if (got != FTC_EBADMSG) {
            if (differ++ < 5)
                printf("  detail: sender %" PRIu32 ": receive %s\n", senders[i],
                   ftc_err_name(got));
        }
    }
    CHECK_MSG(tried > 100 && refused == tried && differ == 0,
              "the receive refuses every malformed header with "
              "ftc_wire_decode's code (%u messages)", tried);
    job_fini(&J);
}

int main(void)
{
    test_receive_refuses_as_decode();
    for (int auth = 0; auth <= 1; auth++) {
        test_forged_exclusion(auth);
        test_forged_contribution(auth);
        test_orphan_flood(auth);
        test_early_flood(auth);
    }
    return check_report();
}
