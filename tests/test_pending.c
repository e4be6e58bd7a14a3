/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Early messages under a budget (lib/core/pending.h), on the loopback:
 *
 *   - legal streams far ahead: three ranks start 200 allreduces (and a
 *     root 200 bcasts) before the fourth starts any; every message for
 *     them waits at the fourth, and every operation completes, exact, at
 *     every rank, nobody excluded;
 *   - a flood for future operations of a known group, in a peer's name,
 *     past the message budget and past the byte budget: what is kept from
 *     that peer never exceeds the budget, the peer is excluded (it learns
 *     so), and the rest of the group still completes an allreduce;
 *   - a large value sent ahead in segments, beyond the byte budget: its
 *     sender is excluded before the receiver allocates it, and every rank
 *     ends the bcast with a status (no wrong value, no hang); with the
 *     default budget the same bcast completes everywhere;
 *   - messages kept before their group existed join their sender's
 *     account when it is created, and a sender already past its byte
 *     budget that way is excluded by its next early message;
 *   - ftc_config_t: the defaults, 0 meaning the default, a caller built
 *     before the budget (FTC_CONFIG_SIZE_0_3), FTCOLL_PENDING_MAX_*.
 *
 * Last line: "N passed, M failed".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "core/context.h"
#include "core/pending.h"
#include "core/segment.h"
#include "wire/wire.h"
#include "algo/corrected/kinds.h"
#include "check.h"

#define N 4
#define OPS 200
#define TOKEN UINT64_C(0x9E4D1)

typedef struct slot {
    int status;
    int delivered;
} slot_t;

typedef struct job {
    ftc_lb_world_t *w;
    ftc_context_t *ctx[N];
    ftc_group_t *g[N];
    int64_t in[N][OPS], out[N][OPS];
    slot_t slot[N][OPS];
} job_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    slot_t *s = arg;
    s->status = c->status;
    s->delivered++;
}

static void job_init(job_t *J, const ftc_config_t *cfg)
{
    memset(J, 0, sizeof(*J));
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    if (ftc_lb_world_create(&lc, &J->w) != FTC_OK)
        abort();
    for (int r = 0; r < N; r++) {
        if (ftc_context_create((uint32_t)r, N, ftc_lb_ops(),
                               ftc_lb_endpoint(J->w, (uint32_t)r), cfg,
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

static void base_config(ftc_config_t *cfg)
{
    ftc_config_init(cfg);
    cfg->job_token = TOKEN;
    cfg->suspect_timeout_ns = 1000000;
    cfg->probe_timeout_ns = 2000000;
}

/* Operation k at rank r: an allreduce of r + 1 + k, or a bcast of
 * 1000 + k from root. */
static int start_rc(job_t *J, int r, int k, bool bcast, uint32_t root)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.dtype = FTC_INT64;
    a.op = FTC_SUM;
    a.count = 1;
    a.root = root;
    J->in[r][k] = bcast ? 1000 + k : r + 1 + k;
    a.sendbuf = &J->in[r][k];
    a.recvbuf = &J->out[r][k];
    a.deliver = on_deliver;
    a.deliver_arg = &J->slot[r][k];
    return bcast ? ftc_init_bcast(J->g[r], &a, NULL)
                 : ftc_init_allreduce(J->g[r], &a, NULL);
}

static void start(job_t *J, int r, int k, bool bcast, uint32_t root)
{
    int rc = start_rc(J, r, k, bcast, root);
    CHECK_MSG(rc == FTC_OK, "rank %d op %d: init %s", r, k, ftc_err_name(rc));
}

/* Everything the other ranks sent for operations rank 0 has not started
 * yet waits there: count it. */
static uint32_t held_at_0(const job_t *J, uint64_t *bytes)
{
    uint32_t msgs = 0;
    uint64_t b = 0;
    for (uint32_t src = 1; src < N; src++) {
        uint32_t m;
        uint64_t x;
        ftc_pending_held(J->g[0], src, &m, &x);
        msgs += m;
        b += x;
    }
    if (bytes != NULL)
        *bytes = b;
    return msgs;
}

static void test_legal_far_ahead(bool bcast)
{
    ftc_config_t cfg;
    base_config(&cfg);
    job_t *J = calloc(1, sizeof(*J));
    job_init(J, &cfg);
    for (int r = 1; r < N; r++)
        for (int k = 0; k < OPS; k++)
            start(J, r, k, bcast, 1);
    ftc_lb_run(J->w, 200000);
    uint64_t bytes;
    uint32_t msgs = held_at_0(J, &bytes);
    CHECK_MSG(msgs >= OPS, "%s: the others ran ahead: %u messages (%" PRIu64
              " bytes) wait at rank 0 for its %d operations",
              bcast ? "bcast" : "allreduce", msgs, bytes, OPS);
    for (int k = 0; k < OPS; k++)
        start(J, 0, k, bcast, 1);
    ftc_lb_run(J->w, 2000000);
    int bad = 0;
    for (int r = 0; r < N; r++)
        for (int k = 0; k < OPS; k++) {
            int64_t want = bcast ? 1000 + k : 10 + 4 * k;
            slot_t *s = &J->slot[r][k];
            if (s->delivered != 1 || s->status != FTC_OK
                || J->out[r][k] != want)
                bad++;
        }
    CHECK_MSG(bad == 0, "%s: %d of %d results not exactly once, FTC_OK, "
              "exact", bcast ? "bcast" : "allreduce", bad, N * OPS);
    for (int r = 0; r < N; r++)
        CHECK_MSG(ftc_context_failed(J->ctx[r], NULL, 0) == 0
                      && !ftc_context_is_excluded(J->ctx[r]),
                  "rank %d: nobody failed or excluded", r);
    CHECK_MSG(held_at_0(J, NULL) == 0, "nothing left waiting at rank 0");
    job_fini(J);
    free(J);
}

/* A message for operation seq of group 1 in rank 1's name, as a peer far
 * ahead (or a stranger with the token) sends it. */
static size_t forge_in(uint8_t *buf, uint32_t group, uint64_t seq,
                       const void *payload, uint32_t plen)
{
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = FTC_CORR_MSG_UPCORR;
    h.coll = FTC_COLL_ALLREDUCE;
    h.algo = FTC_ALGO_CORRECTED;
    h.group_id = group;
    h.sender = 1;
    h.seq = seq;
    h.signature = 1;
    h.payload_len = plen;
    h.job_token = TOKEN;
    if (plen > 0)
        memcpy(buf + FTC_WIRE_HEADER_SIZE, payload, plen);
    ftc_wire_encode(&h, buf);
    return FTC_WIRE_HEADER_SIZE + plen;
}

static size_t forge(uint8_t *buf, uint64_t seq, const void *payload,
                    uint32_t plen)
{
    return forge_in(buf, 1, seq, payload, plen);
}

/* by_bytes: the byte budget binds (4 KiB messages); else the count
 * (empty ones). */
static void test_flood(bool by_bytes)
{
    enum { COUNT = 5000, SIZE = 4096 };
    const uint32_t max_msgs = 64;
    const uint64_t max_bytes = 256 * 1024;
    ftc_config_t cfg;
    base_config(&cfg);
    cfg.pending_max_msgs = by_bytes ? 1000000 : max_msgs;
    cfg.pending_max_bytes = by_bytes ? max_bytes : (uint64_t)1 << 30;
    job_t *J = calloc(1, sizeof(*J));
    job_init(J, &cfg);
    static uint8_t m[FTC_WIRE_HEADER_SIZE + SIZE];
    static uint8_t payload[SIZE];
    uint32_t plen = by_bytes ? SIZE : 0;
    uint32_t peak_msgs = 0;
    uint64_t peak_bytes = 0;
    for (int i = 0; i < COUNT; i++) {
        /* Operations 5 and on: far ahead of rank 0, which started none. */
        size_t len = forge(m, 5 + (uint64_t)i, payload, plen);
        ftc_lb_inject(J->w, 0, FTC_RANK_UNKNOWN, m, len, 0);
        ftc_lb_step(J->w);
        uint32_t msgs;
        uint64_t bytes;
        ftc_pending_held(J->g[0], 1, &msgs, &bytes);
        if (msgs > peak_msgs)
            peak_msgs = msgs;
        if (bytes > peak_bytes)
            peak_bytes = bytes;
    }
    ftc_lb_run(J->w, 100000);
    const char *what = by_bytes ? "bytes" : "count";
    if (by_bytes)
        CHECK_MSG(peak_bytes <= max_bytes && peak_bytes > max_bytes / 2,
                  "%s: at most %" PRIu64 " bytes kept from rank 1 (peak %"
                  PRIu64 ")", what, max_bytes, peak_bytes);
    else
        CHECK_MSG(peak_msgs <= max_msgs && peak_msgs == max_msgs,
                  "%s: at most %u messages kept from rank 1 (peak %u)", what,
                  max_msgs, peak_msgs);
    uint32_t left;
    ftc_pending_held(J->g[0], 1, &left, NULL);
    CHECK_MSG(left == 0, "%s: rank 1's early messages freed (%u left)", what,
              left);
    CHECK_MSG(ftc_context_is_failed(J->ctx[0], 1),
              "%s: rank 0 excluded the peer past its budget", what);
    CHECK_MSG(ftc_context_is_excluded(J->ctx[1]),
              "%s: and rank 1 learned it (FTC_MSG_EXCLUDED)", what);
    ftc_counters_t c;
    ftc_context_counters(J->ctx[0], &c);
    CHECK_MSG(c.dropped_stale >= 1, "%s: the flood past the budget was "
              "dropped and counted (%" PRIu64 ")", what, c.dropped_stale);

    /* The group goes on without it: operation 0 completes at the others,
     * consistently, rank 1 ends with FTC_EEXCLUDED. */
    int rc1 = FTC_OK;
    for (int r = 0; r < N; r++) {
        if (r == 1)
            rc1 = start_rc(J, r, 0, false, 0);
        else
            start(J, r, 0, false, 0);
    }
    ftc_lb_run(J->w, 1000000);
    for (int r = 0; r < N; r++) {
        slot_t *s = &J->slot[r][0];
        if (r == 1)
            CHECK_MSG(rc1 == FTC_EEXCLUDED && s->delivered == 0,
                      "%s: rank 1's call is refused with FTC_EEXCLUDED (%s)",
                      what, ftc_err_name(rc1));
        else
            CHECK_MSG(s->delivered == 1 && s->status == FTC_OK
                          && J->out[r][0] == 1 + 3 + 4,
                      "%s: rank %d: %s, %" PRId64 " (want FTC_OK, 8)", what,
                      r, ftc_err_name(s->status), J->out[r][0]);
    }
    job_fini(J);
    free(J);
}

/* Rank 1 roots a bcast of 256 KiB in 4 KiB segments before the others
 * start it. */
static void test_large_ahead(uint64_t max_bytes)
{
    enum { COUNT = 32768 };
    ftc_config_t cfg;
    base_config(&cfg);
    cfg.segment_size = 4096;
    cfg.pending_max_bytes = max_bytes;
    job_t *J = calloc(1, sizeof(*J));
    job_init(J, &cfg);
    static int64_t value[COUNT], got[N][COUNT];
    slot_t slot[N];
    memset(slot, 0, sizeof(slot));
    for (int i = 0; i < COUNT; i++)
        value[i] = 7 * i + 1;
    memset(got, 0, sizeof(got));
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.dtype = FTC_INT64;
    a.count = COUNT;
    a.root = 1;
    a.sendbuf = value;
    a.deliver = on_deliver;
    a.recvbuf = got[1];
    a.deliver_arg = &slot[1];
    CHECK_OK(ftc_init_bcast(J->g[1], &a, NULL));
    ftc_lb_run(J->w, 20000);
    size_t held = 0;
    for (int r = 0; r < N; r++)
        if (r != 1 && ftc_segment_held_bytes(J->ctx[r]) > held)
            held = ftc_segment_held_bytes(J->ctx[r]);
    for (int r = 0; r < N; r++) {
        if (r == 1)
            continue;
        a.recvbuf = got[r];
        a.deliver_arg = &slot[r];
        CHECK_OK(ftc_init_bcast(J->g[r], &a, NULL));
    }
    ftc_lb_run(J->w, 2000000);
    bool small = max_bytes != 0 && max_bytes < sizeof(value);
    int ok = 0;
    for (int r = 0; r < N; r++) {
        CHECK_MSG(slot[r].delivered == 1, "budget %" PRIu64 ": rank %d "
                  "delivered once (%d)", max_bytes, r, slot[r].delivered);
        if (slot[r].status == FTC_OK) {
            ok++;
            CHECK_MSG(memcmp(got[r], value, sizeof(value)) == 0,
                      "budget %" PRIu64 ": rank %d's FTC_OK value is the "
                      "root's", max_bytes, r);
        }
    }
    if (small) {
        CHECK_MSG(held <= max_bytes, "budget %" PRIu64 ": %zu bytes held in "
                  "reassembly", max_bytes, held);
        CHECK_MSG(ftc_context_is_excluded(J->ctx[1]),
                  "budget %" PRIu64 ": the root, too far ahead, excluded",
                  max_bytes);
        /* The root may have delivered its own value before the verdict
         * reached it: that result is right. */
        CHECK_MSG(slot[1].status == FTC_EEXCLUDED || slot[1].status == FTC_OK,
                  "budget %" PRIu64 ": the root ends with FTC_EEXCLUDED or "
                  "its own value (%s)", max_bytes,
                  ftc_err_name(slot[1].status));
        for (int r = 0; r < N; r++)
            if (r != 1)
                CHECK_MSG(slot[r].status == FTC_EROOT_FAILED,
                          "budget %" PRIu64 ": rank %d: %s (want "
                          "FTC_EROOT_FAILED)", max_bytes, r,
                          ftc_err_name(slot[r].status));
    } else {
        CHECK_MSG(ok == N, "default budget: %d of %d FTC_OK", ok, N);
    }
    job_fini(J);
    free(J);
}

/* Messages kept for a group before it existed (the orphans, under their
 * own bound) join their sender's budget when it is created, unchecked:
 * past the budget already, the sender's next early message excludes it. */
static void test_adopted_orphans(void)
{
    enum { COUNT = 40, SIZE = 1024 };
    ftc_config_t cfg;
    base_config(&cfg);
    /* The bytes, not the count: the orphans' 40 KiB put rank 1 past the
     * 16 KiB at once, which must not wrap what is left to a huge room. */
    cfg.pending_max_bytes = 16 * 1024;
    job_t *J = calloc(1, sizeof(*J));
    job_init(J, &cfg);
    static uint8_t m[FTC_WIRE_HEADER_SIZE + SIZE];
    static uint8_t payload[SIZE];
    for (int i = 0; i < COUNT; i++) {
        size_t len = forge_in(m, 2, (uint64_t)i, payload, SIZE);
        ftc_lb_inject(J->w, 0, FTC_RANK_UNKNOWN, m, len, 0);
    }
    ftc_lb_run(J->w, 10000);
    ftc_group_t *g2;
    CHECK_OK(ftc_group_create(J->ctx[0], 2, 0, N, NULL, &g2));
    uint32_t msgs;
    ftc_pending_held(g2, 1, &msgs, NULL);
    CHECK_MSG(msgs == COUNT, "the %d orphans joined rank 1's account (%u)",
              COUNT, msgs);
    CHECK_MSG(!ftc_context_is_failed(J->ctx[0], 1),
              "adopting them excludes nobody");
    size_t len = forge_in(m, 2, COUNT, payload, SIZE);
    ftc_lb_inject(J->w, 0, FTC_RANK_UNKNOWN, m, len, 0);
    ftc_lb_run(J->w, 10000);
    ftc_pending_held(g2, 1, &msgs, NULL);
    CHECK_MSG(ftc_context_is_failed(J->ctx[0], 1) && msgs == 0,
              "the next early message, past the budget, excludes rank 1 "
              "and frees its %d (%u left)", COUNT, msgs);
    ftc_group_destroy(g2);
    job_fini(J);
    free(J);
}

static void test_config(void)
{
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    CHECK_EQ(cfg.pending_max_msgs, FTC_PENDING_MAX_MSGS_DEFAULT);
    CHECK_EQ(cfg.pending_max_bytes, FTC_PENDING_MAX_BYTES_DEFAULT);
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = 1;
    ftc_lb_world_t *w;
    CHECK_OK(ftc_lb_world_create(&lc, &w));
    ftc_context_t *ctx;
    /* 0: the defaults. */
    cfg.pending_max_msgs = 0;
    cfg.pending_max_bytes = 0;
    CHECK_OK(ftc_context_create(0, 1, ftc_lb_ops(), ftc_lb_endpoint(w, 0),
                                &cfg, &ctx));
    CHECK_EQ(ctx->cfg.pending_max_msgs, FTC_PENDING_MAX_MSGS_DEFAULT);
    CHECK_EQ(ctx->cfg.pending_max_bytes, FTC_PENDING_MAX_BYTES_DEFAULT);
    ftc_context_destroy(ctx);
    /* A caller built before the budget: garbage past its size is not
     * read. */
    memset(&cfg, 0xEE, sizeof(cfg));
    ftc_config_init(&cfg);
    cfg.pending_max_msgs = 0xEEEEEEEEu;
    cfg.size = FTC_CONFIG_SIZE_0_3;
    CHECK_OK(ftc_context_create(0, 1, ftc_lb_ops(), ftc_lb_endpoint(w, 0),
                                &cfg, &ctx));
    CHECK_EQ(ctx->cfg.pending_max_msgs, FTC_PENDING_MAX_MSGS_DEFAULT);
    ftc_context_destroy(ctx);
    ftc_lb_world_destroy(w);

    ftc_config_init(&cfg);
    setenv("FTCOLL_PENDING_MAX_MSGS", "100", 1);
    setenv("FTCOLL_PENDING_MAX_BYTES", "0x100000", 1);
    CHECK_OK(ftc_config_from_env(&cfg, NULL));
    CHECK_EQ(cfg.pending_max_msgs, 100u);
    CHECK_EQ(cfg.pending_max_bytes, (uint64_t)1 << 20);
    setenv("FTCOLL_PENDING_MAX_MSGS", "0", 1);
    const char *bad = NULL;
    CHECK_RC(ftc_config_from_env(&cfg, &bad), FTC_EINVAL);
    CHECK_MSG(bad != NULL && strcmp(bad, "FTCOLL_PENDING_MAX_MSGS") == 0,
              "a 0 budget is refused and named");
    setenv("FTCOLL_PENDING_MAX_MSGS", "1", 1);
    setenv("FTCOLL_PENDING_MAX_BYTES", "-1", 1);
    CHECK_RC(ftc_config_from_env(&cfg, &bad), FTC_EINVAL);
    CHECK_MSG(bad != NULL && strcmp(bad, "FTCOLL_PENDING_MAX_BYTES") == 0,
              "a negative budget is refused and named");
    unsetenv("FTCOLL_PENDING_MAX_MSGS");
    unsetenv("FTCOLL_PENDING_MAX_BYTES");
}

int main(void)
{
    test_config();
    test_legal_far_ahead(false);
    test_legal_far_ahead(true);
    test_flood(false);
    test_flood(true);
    test_large_ahead(64 * 1024);
    test_large_ahead(0);
    test_adopted_orphans();
    return check_report();
}
