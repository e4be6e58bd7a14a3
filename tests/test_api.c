/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public API's contract: bad arguments get clear error codes, never a
 * crash; bad messages are dropped and counted, never delivered; many
 * collectives run at once; a peer that disagrees on the arguments ends the
 * collective with FTC_EMISMATCH instead of a hang; the context's known-
 * failed set grows from the failure list; destroy cancels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll_loopback.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/ftco.h"
#include "wire/wire.h"
#include "algo/corrected/kinds.h"
#include "check.h"

#define N 8
#define OPS 10

typedef struct slot {
    int delivered;
    int status;
    int64_t value;
} slot_t;

typedef struct world {
    ftc_lb_world_t *w;
    ftc_context_t *ctx[N];
    ftc_group_t *g[N];
    slot_t slots[N][OPS];
    int64_t out[N][OPS];
    int64_t in[N][OPS];
} world_t;

typedef struct cb_arg {
    world_t *W;
    int rank, op;
} cb_arg_t;

static cb_arg_t args_store[N][OPS];

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    cb_arg_t *a = arg;
    slot_t *s = &a->W->slots[a->rank][a->op];
    s->delivered++;
    s->status = c->status;
    if (c->recvbuf != NULL)
        memcpy(&s->value, c->recvbuf, sizeof(int64_t));
}

static void world_init(world_t *W, uint64_t detect)
{
    memset(W, 0, sizeof(*W));
    ftc_lb_config_t lc;
    ftc_lb_config_init(&lc);
    lc.n = N;
    lc.detect_delay_ns = detect;
    if (ftc_lb_world_create(&lc, &W->w) != FTC_OK)
        abort();
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 42;
    cfg.suspect_timeout_ns = 1000000;
    cfg.probe_timeout_ns = 1000000;
    for (int r = 0; r < N; r++) {
        if (ftc_context_create((uint32_t)r, N, ftc_lb_ops(),
                               ftc_lb_endpoint(W->w, (uint32_t)r), &cfg,
                               &W->ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(W->w, (uint32_t)r, W->ctx[r]);
        if (ftc_group_create(W->ctx[r], 7, 3, N, NULL, &W->g[r]) != FTC_OK)
            abort();
    }
}

static void world_fini(world_t *W)
{
    for (int r = 0; r < N; r++)
        ftc_context_destroy(W->ctx[r]);
    ftc_lb_world_destroy(W->w);
}

static ftc_coll_args_t make_args(world_t *W, int rank, int op, int root)
{
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.dtype = FTC_INT64;
    a.count = 1;
    a.root = (uint32_t)root;
    W->in[rank][op] = rank * 100 + op;
    a.sendbuf = &W->in[rank][op];
    a.recvbuf = &W->out[rank][op];
    a.deliver = on_deliver;
    args_store[rank][op] = (cb_arg_t){W, rank, op};
    a.deliver_arg = &args_store[rank][op];
    return a;
}

static void test_errors(void)
{
    CHECK_MSG(strcmp(ftc_strerror(FTC_EINVAL), "invalid argument") == 0,
              "strerror(EINVAL)");
    for (int e = 0; e > -FTC_ERROR_COUNT; e--)
        CHECK_MSG(ftc_strerror(e) != NULL && ftc_err_name(e)[0] == 'F',
                  "code %d has a name", e);
    CHECK_MSG(strcmp(ftc_strerror(12345), "unknown ftcoll error") == 0,
              "unknown code");
}

static void test_bad_arguments(void)
{
    world_t W;
    world_init(&W, 50000);
    ftc_context_t *c = NULL;
    ftc_transport_ops_t ops = *ftc_lb_ops();
    CHECK_MSG(ftc_context_create(0, 0, &ops, NULL, NULL, &c) == FTC_EINVAL,
              "size 0");
    CHECK_MSG(ftc_context_create(4, 4, &ops, NULL, NULL, &c) == FTC_EINVAL,
              "rank >= size");
    CHECK_MSG(ftc_context_create(0, 4, NULL, NULL, NULL, &c) == FTC_EINVAL,
              "no ops");
    ops.send = NULL;
    CHECK_MSG(ftc_context_create(0, 4, &ops, NULL, NULL, &c) == FTC_EINVAL,
              "ops without send");
    CHECK_MSG(ftc_context_create(0, 4, ftc_lb_ops(), NULL, NULL, NULL) ==
                  FTC_EINVAL,
              "NULL out");

    ftc_group_t *g = NULL;
    uint32_t dup[3] = {0, 1, 1}, outside[2] = {0, 99}, notme[2] = {1, 2};
    CHECK_MSG(ftc_group_create(W.ctx[0], 9, 0, 3, dup, &g) == FTC_EINVAL,
              "duplicate member");
    CHECK_MSG(ftc_group_create(W.ctx[0], 9, 0, 2, outside, &g) == FTC_EINVAL,
              "member outside the world");
    CHECK_MSG(ftc_group_create(W.ctx[0], 9, 0, 2, notme, &g) == FTC_EINVAL,
              "caller not a member");
    CHECK_MSG(ftc_group_create(W.ctx[0], 7, 3, N, NULL, &g) == FTC_EINVAL,
              "same (id, epoch) twice");
    CHECK_MSG(ftc_group_create(W.ctx[0], 9, 0, 0, NULL, &g) == FTC_EINVAL,
              "empty group");

    ftc_coll_args_t a = make_args(&W, 0, 0, 0);
    a.f = N;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL, "f >= n");
    a = make_args(&W, 0, 0, 0);
    a.root = N;
    CHECK_MSG(ftc_init_reduce(W.g[0], &a, NULL) == FTC_EINVAL, "root >= n");
    a = make_args(&W, 0, 0, 0);
    a.count = UINT64_MAX / 2;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EOVERFLOW,
              "count overflow");
    a = make_args(&W, 0, 0, 0);
    a.sendbuf = NULL;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
              "NULL sendbuf");
    a = make_args(&W, 0, 0, 0);
    a.recvbuf = NULL;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
              "NULL recvbuf");
    a = make_args(&W, 0, 0, 0);
    a.dtype = FTC_DOUBLE;
    a.op = FTC_BXOR;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EMISMATCH,
              "bxor on double");
    a = make_args(&W, 0, 0, 0);
    a.op = FTC_USER;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL,
              "user op without function");
    a = make_args(&W, 0, 0, 0);
    a.deliver = NULL;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL, "no deliver");
    a = make_args(&W, 0, 0, 0);
    a.dtype = (ftc_dtype_t)77;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL, "bad dtype");
    a = make_args(&W, 0, 0, 0);
    a.algo = (ftc_algo_t)9;
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_EINVAL, "bad algo");
    ftc_corrected_params_t cp;
    a = make_args(&W, 0, 0, 0);
    ftc_corrected_params_init(&cp);
    cp.correction = FTC_CORRECTION_OPPORTUNISTIC;
    cp.distance = 0;
    a.params = &cp;
    CHECK_MSG(ftc_init_bcast(W.g[0], &a, NULL) == FTC_EINVAL, "distance 0");
    a = make_args(&W, 0, 0, 0);
    ftc_corrected_params_init(&cp);
    cp.bcast_tree.kind = FTC_TREE_KARY;
    cp.bcast_tree.k = 0;
    a.params = &cp;
    CHECK_MSG(ftc_init_bcast(W.g[0], &a, NULL) == FTC_EINVAL, "0-ary tree");
    CHECK_MSG(ftc_init_bcast(NULL, &a, NULL) == FTC_EINVAL, "NULL group");
    CHECK_MSG(ftc_init_bcast(W.g[0], NULL, NULL) == FTC_EINVAL, "NULL args");
    /* nothing was started: no deliveries */
    ftc_lb_run(W.w, 1000000);
    CHECK_MSG(W.slots[0][0].delivered == 0, "a refused init delivered");
    world_fini(&W);
}

/* Many allreduces in flight at once, with alternating roots. */
static void test_concurrent(void)
{
    world_t W;
    world_init(&W, 50000);
    for (int op = 0; op < OPS; op++) {
        for (int r = 0; r < N; r++) {
            ftc_coll_args_t a = make_args(&W, r, op, op % N);
            uint64_t seq = 99;
            int rc = ftc_init_allreduce(W.g[r], &a, &seq);
            CHECK_MSG(rc == FTC_OK && seq == (uint64_t)op, "init op %d at %d",
                      op, r);
        }
    }
    CHECK_MSG(W.slots[0][0].delivered == 0, "deliver ran inside init");
    ftc_lb_run(W.w, 10000000);
    for (int op = 0; op < OPS; op++) {
        int64_t want = 0;
        for (int r = 0; r < N; r++)
            want += r * 100 + op;
        for (int r = 0; r < N; r++)
            CHECK_MSG(
                W.slots[r][op].delivered == 1 &&
                    W.slots[r][op].status == FTC_OK &&
                    W.slots[r][op].value == want,
                "op %d rank %d: delivered %d status %d value %lld want %lld",
                op, r, W.slots[r][op].delivered, W.slots[r][op].status,
                (long long)W.slots[r][op].value, (long long)want);
    }
    world_fini(&W);
}

/* Garbage, corrupted, foreign-job, truncated and spoofed messages during a
 * collective: dropped, counted, and the collective is unharmed. */
static void test_bad_messages(void)
{
    world_t W;
    world_init(&W, 50000);
    uint8_t junk[100];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 7 + 3);
    ftc_lb_inject(W.w, 0, 1, junk, sizeof(junk), 0);
    ftc_lb_inject(W.w, 0, 1, junk, 10, 0);

    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = FTC_CORR_MSG_UPCORR;
    h.algo = FTC_ALGO_CORRECTED;
    h.coll = FTC_COLL_ALLREDUCE;
    h.group_id = 7;
    h.epoch = 3;
    h.sender = 2;
    h.payload_len = 8;
    h.job_token = 43; /* another job */
    uint8_t msg[FTC_WIRE_HEADER_SIZE + 8];
    memset(msg, 0, sizeof(msg));
    ftc_wire_encode(&h, msg);
    ftc_lb_inject(W.w, 0, 2, msg, sizeof(msg), 0);
    h.job_token = 42;
    ftc_wire_encode(&h, msg);
    msg[FTC_WIRE_HEADER_SIZE + 3] ^= 0x10; /* corrupt the payload */
    ftc_lb_inject(W.w, 0, 2, msg, sizeof(msg), 0);
    ftc_wire_encode(&h, msg);
    ftc_lb_inject(W.w, 0, 5, msg, sizeof(msg), 0); /* claims 5, says 2 */
    h.epoch = 2; /* the group's previous incarnation: stale */
    ftc_wire_encode(&h, msg);
    ftc_lb_inject(W.w, 0, 2, msg, sizeof(msg), 0);

    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a = make_args(&W, r, 0, 0);
        CHECK_MSG(ftc_init_allreduce(W.g[r], &a, NULL) == FTC_OK, "init");
    }
    ftc_lb_run(W.w, 10000000);
    int64_t want = 0;
    for (int r = 0; r < N; r++)
        want += r * 100;
    for (int r = 0; r < N; r++)
        CHECK_MSG(W.slots[r][0].delivered == 1 && W.slots[r][0].value == want,
                  "rank %d got %lld want %lld", r,
                  (long long)W.slots[r][0].value, (long long)want);
    ftc_counters_t c;
    ftc_context_counters(W.ctx[0], &c);
    CHECK_MSG(c.dropped_foreign == 1, "foreign counted: %llu",
              (unsigned long long)c.dropped_foreign);
    CHECK_MSG(c.dropped_checksum == 1, "corrupt counted: %llu",
              (unsigned long long)c.dropped_checksum);
    CHECK_MSG(c.dropped_badmsg == 1, "spoofed sender counted: %llu",
              (unsigned long long)c.dropped_badmsg);
    CHECK_MSG(c.dropped_stale == 1, "old epoch counted: %llu",
              (unsigned long long)c.dropped_stale);
    CHECK_MSG(c.dropped_version + c.dropped_truncated == 2,
              "garbage counted: version %llu truncated %llu",
              (unsigned long long)c.dropped_version,
              (unsigned long long)c.dropped_truncated);
    /* direct calls return the reason */
    CHECK_MSG(ftc_transport_recv(W.ctx[0], 1, junk, 3) == FTC_ETRUNCATED,
              "short message");
    CHECK_MSG(ftc_transport_recv(NULL, 1, junk, 3) == FTC_EINVAL, "NULL ctx");
    world_fini(&W);
}

/* One rank passes another count: everyone ends with FTC_EMISMATCH or gets
 * its result; nobody hangs. */
static void test_mismatch(void)
{
    world_t W;
    world_init(&W, 50000);
    int64_t big_in[2] = {1, 2}, big_out[2];
    for (int r = 0; r < N; r++) {
        ftc_coll_args_t a = make_args(&W, r, 0, 0);
        if (r == 3) {
            a.count = 2;
            a.sendbuf = big_in;
            a.recvbuf = big_out;
        }
        CHECK_MSG(ftc_init_allreduce(W.g[r], &a, NULL) == FTC_OK, "init");
    }
    ftc_lb_run(W.w, 10000000);
    int mism = 0;
    for (int r = 0; r < N; r++) {
        CHECK_MSG(W.slots[r][0].delivered == 1, "rank %d delivered %d times", r,
                  W.slots[r][0].delivered);
        mism += W.slots[r][0].status == FTC_EMISMATCH;
    }
    CHECK_MSG(mism > 0, "nobody noticed the mismatch");
    world_fini(&W);
}

/* The list scheme feeds the known-failed set; the next collective does not
 * wait for the failed rank again. Destroy cancels what is in flight. */
static void test_known_failed_and_cancel(void)
{
    world_t W;
    world_init(&W, UINT64_MAX); /* only keepalive timeouts detect */
    ftc_lb_crash(W.w, 5);
    for (int r = 0; r < N; r++) {
        if (r == 5)
            continue;
        ftc_coll_args_t a = make_args(&W, r, 0, 0);
        CHECK_MSG(ftc_init_allreduce(W.g[r], &a, NULL) == FTC_OK, "init");
    }
    ftc_lb_run(W.w, 10000000);
    uint64_t t1 = ftc_lb_now(W.w);
    for (int r = 0; r < N; r++) {
        if (r == 5)
            continue;
        CHECK_MSG(W.slots[r][0].status == FTC_OK, "first op at %d", r);
        CHECK_MSG(ftc_context_is_failed(W.ctx[r], 5) == 1,
                  "rank %d does not know 5 failed", r);
        uint32_t gf[N];
        CHECK_MSG(ftc_group_failed(W.g[r], gf, N) == 1 && gf[0] == 5,
                  "group view at %d", r);
    }
    CHECK_MSG(t1 >= 1000000, "the first op must have waited for a timeout");
    for (int r = 0; r < N; r++) {
        if (r == 5)
            continue;
        ftc_coll_args_t a = make_args(&W, r, 1, 0);
        CHECK_MSG(ftc_init_allreduce(W.g[r], &a, NULL) == FTC_OK, "init 2");
    }
    ftc_lb_run(W.w, 10000000);
    uint64_t t2 = ftc_lb_now(W.w) - t1;
    CHECK_MSG(t2 < 200000,
              "the second op waited %llu ns: known failure ignored",
              (unsigned long long)t2);
    for (int r = 0; r < N; r++)
        if (r != 5)
            CHECK_MSG(W.slots[r][1].status == FTC_OK, "second op at %d", r);
    /* A collective nobody else joins, then destroy: FTC_ECANCELED. */
    ftc_coll_args_t a = make_args(&W, 0, 2, 0);
    CHECK_MSG(ftc_init_allreduce(W.g[0], &a, NULL) == FTC_OK, "init 3");
    ftc_lb_run(W.w, 1000);
    ftc_context_destroy(W.ctx[0]);
    W.ctx[0] = NULL;
    CHECK_MSG(W.slots[0][2].delivered == 1 &&
                  W.slots[0][2].status == FTC_ECANCELED,
              "destroy did not cancel: delivered %d status %d",
              W.slots[0][2].delivered, W.slots[0][2].status);
    ftc_lb_attach(W.w, 0, NULL);
    world_fini(&W);
}

/* f < n for every family, those that ignore f included: f is part of
 * the signature the members compare (core/op.h), and a group of one
 * takes f = 0 (docs/api.md). */
static void test_f_below_n_everywhere(void)
{
    world_t W;
    world_init(&W, 1000);
    uint32_t me[1] = {0};
    ftc_group_t *one = NULL;
    CHECK(ftc_group_create(W.ctx[0], 11, 0, 1, me, &one) == FTC_OK);
    ftc_algo_t algos[3] = {FTC_ALGO_CORRECTED, FTC_ALGO_TREE, FTC_ALGO_FTCO};
    for (int i = 0; i < 3; i++) {
        ftc_coll_args_t a = make_args(&W, 0, i, 0);
        a.algo = algos[i];
        CHECK(a.f == 1);
        CHECK_MSG(ftc_init_allreduce(one, &a, NULL) == FTC_EINVAL,
                  "f = 1 on a group of one");
        a.f = 0;
        CHECK_MSG(ftc_init_allreduce(one, &a, NULL) == FTC_OK,
                  "f = 0 on a group of one");
        ftc_lb_run(W.w, 1000000);
        CHECK(W.slots[0][i].delivered == 1);
        CHECK(W.slots[0][i].status == FTC_OK);
        CHECK(W.out[0][i] == W.in[0][i]);
    }
    ftc_group_destroy(one);
    world_fini(&W);
}

int main(void)
{
    test_errors();
    test_bad_arguments();
    test_concurrent();
    test_bad_messages();
    test_mismatch();
    test_known_failed_and_cancel();
    test_f_below_n_everywhere();
    return check_report();
}
