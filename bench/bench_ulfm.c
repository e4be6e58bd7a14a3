/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-bench --coll agree|shrink over real processes.
 *
 * agree: iteration g runs one agreement on the group. Every rank
 * contributes every bit set but its own world rank's (and bit 63 cleared
 * once it knows the group was invalidated), so the AND names the
 * contributors: a cleared bit r says "r contributed". Each rank checks its
 * result on its own (the properties of docs/ulfm.md, as far as one rank
 * can see them):
 *   - status FTC_OK (FTC_EEXCLUDED only at a rank that was meant to die);
 *   - validity: every member outside the agreed failed set contributed,
 *     this rank included; no bit of a non-member or of a rank that died
 *     before the iteration is cleared, nor any bit above the world's size
 *     but 63, and bit 63 only when a rank invalidated the group;
 *   - the failed set names only ranks that were planned to die.
 * Uniform agreement is across ranks: each prints its results (iteration,
 * status, value, failed set as world ranks) and a digest of them, which
 * the caller compares (tests/conformance/conformance_ulfm.py).
 * With --with-allreduce, an 8-byte corrected allreduce follows each
 * agreement on the same group, timed apart: the ratio in one run.
 *
 * shrink: the same agreement decides, as chapter 17's examples do, whether
 * to shrink: when the agreed failed set is not empty or bit 63 is cleared
 * (someone invalidated), every rank calls ftc_init_shrink (new id 100 + g),
 * checks that the new group holds exactly the members outside the failed
 * set in their old order, then runs an allreduce on it (usable at once:
 * its value must be the sum over the members its failed list leaves out),
 * and goes on with the new group. The results add the new groups
 * ("shrinks": iteration, id, epoch, members, when it was delivered, on
 * CLOCK_MONOTONIC) and the allreduces' values, for the caller to compare,
 * and which invalidated groups this rank saw invalidated by the end.
 *
 * Faults, besides ftcoll-bench's: --crash-sends R@G:K kills R right after
 * its K-th send in the agreement of iteration G (counted by wrapping the
 * transport's send; it dies as the call that made that send returns), or
 * as that agreement delivers if it sent fewer:
 * a crash inside the agreement tied to its progress, never to a clock.
 * R@G:K:shrink counts the sends of iteration G's shrink instead (in an
 * iteration that shrinks; else R dies as the iteration ends).
 */
#include "bench_ulfm.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_transport.h"

#define INVALID_BIT 63
#define MAX_OLD_GROUPS 64

/* --- Counting sends (--crash-sends) ------------------------------------ */

static int (*real_send)(void *tp, uint32_t dest, const void *buf, size_t len,
                        void *cookie);
static uint64_t sends_this_iter;
static uint64_t crash_after_sends;     /* 0: none armed */
static uint64_t crash_iter;
static uint32_t crash_rank;

static void print_death(const char *event, uint64_t iter)
{
    printf("{\"rank\":%u,\"event\":\"%s\",\"iter\":%" PRIu64
           ",\"t_ns\":%" PRIu64 "}\n", crash_rank, event, iter,
           bench_now_ns());
    fflush(stdout);
    fflush(stderr);
}

/*
 * The send that reaches the count only marks the crash as due: the rank
 * dies where the bench gets control back (ftc_init_* returned, or the
 * backend's progress returned), never inside the backend. A send runs
 * inside the backend's progress when the core answers a message, and a
 * process killed in the middle of a transport call over shared memory
 * can leave a peer's receive FIFO with a slot claimed and never filled
 * (UCX sm, libfabric shm: docs/backends.md section 7): that peer would
 * hear nobody any more, a failure of the transport, not of the victim.
 * Sends the same call makes after the K-th still leave.
 */
static bool crash_due;

static int counting_send(void *tp, uint32_t dest, const void *buf, size_t len,
                         void *cookie)
{
    int rc = real_send(tp, dest, buf, len, cookie);
    sends_this_iter++;
    if (crash_after_sends != 0 && sends_this_iter >= crash_after_sends)
        crash_due = true;
    return rc;
}

/* Where the bench has control back: die if the count was reached. */
static void crash_point(void)
{
    if (!crash_due)
        return;
    print_death("crash", crash_iter);
    raise(SIGKILL);
}

void bench_ulfm_wrap_send(ftc_transport_ops_t *ops, void **ops_arg)
{
    (void)ops_arg;      /* the other ops keep the backend's argument */
    real_send = ops->send;
    ops->send = counting_send;
}

bool bench_ulfm_parse_crash_sends(const char *s, bench_ulfm_fault_t *out)
{
    unsigned long long r, g, k;
    int used = 0;
    if (sscanf(s, "%llu@%llu:%llu%n", &r, &g, &k, &used) != 3 || k == 0
        || r > UINT32_MAX || s[0] == '-')
        return false;
    bool in_shrink = strcmp(s + used, ":shrink") == 0;
    if (s[used] != '\0' && !in_shrink)
        return false;
    memset(out, 0, sizeof(*out));
    out->in_shrink = in_shrink;
    out->rank = (uint32_t)r;
    out->iter = g;
    out->mid = true;
    out->sends = k;
    return true;
}

/* --- State -------------------------------------------------------------- */

typedef struct op {
    bool done;
    int status;
    uint64_t t_deliver;
    uint32_t nfailed;
    uint32_t *failed;           /* n entries */
    int64_t value;              /* the allreduce's */
} op_t;

static ftc_group_t *old_groups[MAX_OLD_GROUPS];
static uint32_t nold;

typedef struct run {
    const bench_ulfm_host_t *h;
    bench_ulfm_tally_t *tally;
    ftc_group_t *group;
    uint32_t members[64];       /* world ranks of the group's members */
    uint32_t size;
    op_t op;
    char *out;                  /* this rank's "ulfm" JSON, built as it goes */
    json_t results, shrinks, allreduces;
    char *res_buf, *shr_buf, *all_buf;
    char first_wrong[256];
    uint64_t *agree_ns, *allreduce_ns, *shrink_ns;
    uint64_t niters;
} run_t;

static void on_deliver(const ftc_completion_t *c, void *arg)
{
    op_t *op = arg;
    op->done = true;
    op->status = c->status;
    op->t_deliver = bench_now_ns();
    op->nfailed = c->nfailed;
    if (c->nfailed > 0)
        memcpy(op->failed, c->failed, sizeof(uint32_t) * c->nfailed);
}

static void die(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ftcoll-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stdout);
    exit(code);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void wrong(run_t *u, const char *fmt, ...)
{
    u->tally->wrong++;
    if (u->first_wrong[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->first_wrong, sizeof(u->first_wrong), fmt, ap);
    va_end(ap);
    fprintf(stderr, "ftcoll-bench: rank %u: WRONG: %s\n", u->h->rank,
            u->first_wrong);
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    return h;
}

static void learn_members(run_t *u)
{
    u->size = ftc_group_size(u->group);
    for (uint32_t i = 0; i < u->size; i++)
        u->members[i] = ftc_group_world_rank(u->group, i);
}

static bool is_member(const run_t *u, uint32_t r)
{
    for (uint32_t i = 0; i < u->size; i++)
        if (u->members[i] == r)
            return true;
    return false;
}

static bool is_victim(const run_t *u, uint32_t r)
{
    const bench_ulfm_host_t *h = u->h;
    for (uint32_t k = 0; k < h->nvictims; k++)
        if (h->victims[k] == r)
            return true;
    for (uint32_t k = 0; k < h->nfaults; k++)
        if (h->faults[k].rank == r)
            return true;
    return false;
}

/* r was planned to die before it could contribute to iteration g. */
static bool dead_before(const run_t *u, uint32_t r, uint64_t g)
{
    const bench_ulfm_host_t *h = u->h;
    for (uint32_t k = 0; k < h->nfaults; k++) {
        const bench_ulfm_fault_t *f = &h->faults[k];
        if (f->rank == r && (g > f->iter || (g == f->iter && !f->mid)))
            return true;
    }
    return false;
}

/* Progress until op delivers; a hang past the bound ends the process. */
static void wait_op(run_t *u, const char *what, uint64_t g)
{
    const bench_ulfm_host_t *h = u->h;
    uint64_t limit = bench_now_ns() + (uint64_t)(h->op_timeout_s * 1e9);
    int timeout_ms = h->spin ? 0 : 100;
    for (uint32_t spins = 1; !u->op.done; spins++) {
        int rc = h->progress(h->t, timeout_ms);
        if (rc < 0)
            die(4, "rank %u: progress: %s", h->rank, ftc_strerror(rc));
        crash_point();
        if (!u->op.done && (timeout_ms != 0 || spins % 64 == 0)
            && bench_now_ns() > limit)
            die(3, "rank %u: HANG: %s iteration %" PRIu64 " not delivered "
                   "after %.0f s", h->rank, what, g, h->op_timeout_s);
    }
}

/* --crash R@G:US for this rank and iteration: progress, then die. */
static void crash_after_us(run_t *u, uint64_t g)
{
    const bench_ulfm_host_t *h = u->h;
    for (uint32_t k = 0; k < h->nfaults; k++) {
        const bench_ulfm_fault_t *f = &h->faults[k];
        if (f->rank != h->rank || f->iter != g || !f->mid || f->sends != 0)
            continue;
        uint64_t end = bench_now_ns() + f->mid_us * 1000u;
        while (bench_now_ns() < end && !u->op.done)
            h->progress(h->t, 0);
        print_death("crash", g);
        raise(SIGKILL);
    }
}

/* Arm a --crash-sends of iteration g for the operation about to start
 * (the agreement, or with in_shrink the shrink). */
static void arm_crash_sends(run_t *u, uint64_t g, bool in_shrink)
{
    const bench_ulfm_host_t *h = u->h;
    sends_this_iter = 0;
    crash_after_sends = 0;
    crash_due = false;
    for (uint32_t k = 0; k < h->nfaults; k++) {
        const bench_ulfm_fault_t *f = &h->faults[k];
        if (f->rank == h->rank && f->iter == g && f->sends != 0
            && f->in_shrink == in_shrink) {
            crash_after_sends = f->sends;
            crash_iter = g;
        }
    }
}

/* The armed operation delivered before its K-th send: die now, inside
 * the iteration, so that the planned crash always happens. */
static void crash_if_armed(void)
{
    if (crash_after_sends == 0)
        return;
    print_death("crash", crash_iter);
    raise(SIGKILL);
}

/* A --crash-sends ...:shrink of an iteration that did not shrink. */
static void crash_if_planned_shrink(run_t *u, uint64_t g)
{
    arm_crash_sends(u, g, true);
    crash_if_armed();
}

/* --- One agreement ------------------------------------------------------- */

static void check_agree(run_t *u, uint64_t g, uint64_t v)
{
    const bench_ulfm_host_t *h = u->h;
    bool in_failed[64] = {false};
    for (uint32_t k = 0; k < u->op.nfailed; k++) {
        uint32_t gr = u->op.failed[k];
        if (gr >= u->size) {
            wrong(u, "iteration %" PRIu64 ": failed set names group rank %u "
                     "of %u", g, gr, u->size);
            return;
        }
        uint32_t w = u->members[gr];
        in_failed[w] = true;
        if (!is_victim(u, w))
            wrong(u, "iteration %" PRIu64 ": rank %u, no victim, is in the "
                     "agreed failed set", g, w);
    }
    for (uint32_t b = 0; b < 64; b++) {
        bool contributed = ((v >> b) & 1) == 0;
        if (b == INVALID_BIT) {
            if (contributed && !(h->invalidate_rank >= 0
                                 && g >= h->invalidate_iter))
                wrong(u, "iteration %" PRIu64 ": bit 63 cleared, and no "
                         "rank invalidated the group", g);
            continue;
        }
        if (b >= h->n || !is_member(u, b)) {
            if (contributed)
                wrong(u, "iteration %" PRIu64 ": bit %u cleared: no member "
                         "contributes it", g, b);
            continue;
        }
        if (contributed && dead_before(u, b, g))
            wrong(u, "iteration %" PRIu64 ": rank %u contributed, yet it "
                     "died before the iteration", g, b);
        if (!contributed && !in_failed[b])
            wrong(u, "iteration %" PRIu64 ": rank %u is not in the failed "
                     "set, yet did not contribute (validity)", g, b);
        if (!contributed && b == h->rank)
            wrong(u, "iteration %" PRIu64 ": this rank's contribution is "
                     "missing", g);
    }
}

/* Records [g, status, value, [failed world ranks]] and folds it into the
 * digest that the caller compares across ranks. */
static void record_agree(run_t *u, uint64_t g, uint64_t v)
{
    bench_ulfm_tally_t *t = u->tally;
    t->digest = fnv(fnv(fnv(t->digest, g), (uint64_t)(int64_t)u->op.status),
                    v);
    json_array_begin(&u->results);
    json_uint(&u->results, g);
    json_string(&u->results, ftc_err_name(u->op.status));
    char hex[19];
    snprintf(hex, sizeof(hex), "%016" PRIx64, v);
    json_string(&u->results, hex);
    json_array_begin(&u->results);
    for (uint32_t k = 0; k < u->op.nfailed && u->op.status == FTC_OK; k++) {
        uint32_t w = u->members[u->op.failed[k]];
        json_uint(&u->results, w);
        t->digest = fnv(t->digest, w);
    }
    json_array_end(&u->results);
    json_array_end(&u->results);
}

/* --- The allreduce on a group (after a shrink, or --with-allreduce) ----- */

static uint64_t run_allreduce(run_t *u, uint64_t g, bool after_shrink)
{
    const bench_ulfm_host_t *h = u->h;
    int64_t in = (int64_t)h->rank + 1, out = 0;
    ftc_coll_args_t a;
    ftc_coll_args_init(&a);
    a.algo = FTC_ALGO_CORRECTED;
    a.f = h->f < u->size ? h->f : u->size - 1;
    a.dtype = FTC_INT64;
    a.op = FTC_SUM;
    a.count = 1;
    a.sendbuf = &in;
    a.recvbuf = &out;
    a.deliver = on_deliver;
    a.deliver_arg = &u->op;
    u->op.done = false;
    uint64_t t0 = bench_now_ns();
    int rc = ftc_init_allreduce(u->group, &a, NULL);
    if (rc == FTC_EEXCLUDED) {
        u->tally->excluded = true;
        return 0;
    }
    if (rc != FTC_OK) {
        u->op.status = rc;
    } else {
        wait_op(u, "allreduce", g);
    }
    uint64_t dt = u->op.t_deliver - t0;
    bench_ulfm_tally_t *t = u->tally;
    t->completed++;
    int st = u->op.status;
    if (st == FTC_OK) {
        t->ok++;
        bool listed[64] = {false};
        for (uint32_t k = 0; k < u->op.nfailed; k++)
            if (u->op.failed[k] < u->size)
                listed[u->members[u->op.failed[k]]] = true;
        int64_t want = 0;
        for (uint32_t i = 0; i < u->size; i++)
            if (!listed[u->members[i]])
                want += (int64_t)u->members[i] + 1;
        if (out != want)
            wrong(u, "iteration %" PRIu64 ": allreduce on the group is %"
                     PRId64 ", its failed list leaves %" PRId64, g, out,
                  want);
    } else if (st == FTC_EEXCLUDED) {
        t->excluded = true;
        if (!is_victim(u, h->rank))
            wrong(u, "iteration %" PRIu64 ": excluded", g);
    } else if ((st == FTC_ETOO_MANY_FAILURES || st == FTC_EROOT_FAILED)
               && (h->nvictims > 0 || h->nfaults > 0)) {
        t->errors++;
    } else if (st == FTC_EINVALIDATED && !after_shrink
               && h->invalidate_rank >= 0) {
        t->errors++;
    } else {
        wrong(u, "iteration %" PRIu64 ": allreduce %s", g, ftc_err_name(st));
    }
    json_array_begin(&u->allreduces);
    json_uint(&u->allreduces, g);
    json_string(&u->allreduces, ftc_err_name(st));
    json_int(&u->allreduces, st == FTC_OK ? out : 0);
    json_array_end(&u->allreduces);
    t->digest = fnv(fnv(t->digest, (uint64_t)(int64_t)st),
                    st == FTC_OK ? (uint64_t)out : 0);
    return dt;
}

/* --- Shrink ------------------------------------------------------------- */

static bool run_shrink(run_t *u, uint64_t g)
{
    const bench_ulfm_host_t *h = u->h;
    bench_ulfm_tally_t *t = u->tally;
    bool gone[64] = {false};
    for (uint32_t k = 0; k < u->op.nfailed; k++)
        gone[u->members[u->op.failed[k]]] = true;
    uint32_t old_epoch = ftc_group_epoch(u->group);
    ftc_group_t *ng = NULL;
    uint32_t new_id = (uint32_t)(100 + g);
    u->op.done = false;
    arm_crash_sends(u, g, true);
    uint64_t t0 = bench_now_ns();
    int rc = ftc_init_shrink(u->group, new_id, &ng, on_deliver, &u->op, NULL);
    crash_point();
    if (rc == FTC_EEXCLUDED) {
        t->excluded = true;
        return false;
    }
    if (rc != FTC_OK)
        die(4, "rank %u: ftc_init_shrink at iteration %" PRIu64 ": %s",
            h->rank, g, ftc_strerror(rc));
    wait_op(u, "shrink", g);
    crash_if_armed();
    t->completed++;
    if (u->op.status == FTC_EEXCLUDED) {
        t->excluded = true;
        if (!is_victim(u, h->rank))
            wrong(u, "iteration %" PRIu64 ": shrink: excluded", g);
        return false;
    }
    if (u->op.status != FTC_OK || ng == NULL) {
        wrong(u, "iteration %" PRIu64 ": shrink %s", g,
              ftc_err_name(u->op.status));
        return false;
    }
    t->ok++;
    /* The shrink's own failed set holds at least what the agreement
     * agreed (it runs after it): the new group lacks exactly its set. */
    for (uint32_t k = 0; k < u->op.nfailed; k++)
        gone[u->members[u->op.failed[k]]] = true;
    uint32_t want[64], nwant = 0;
    for (uint32_t i = 0; i < u->size; i++)
        if (!gone[u->members[i]])
            want[nwant++] = u->members[i];
    if (nold == MAX_OLD_GROUPS)
        die(4, "rank %u: more than %u shrinks", h->rank, MAX_OLD_GROUPS);
    old_groups[nold++] = u->group;
    u->group = ng;
    learn_members(u);
    if (ftc_group_id(ng) != new_id || ftc_group_epoch(ng) != old_epoch + 1)
        wrong(u, "iteration %" PRIu64 ": new group (%u, %u), expected (%u, "
                 "%u)", g, ftc_group_id(ng), ftc_group_epoch(ng), new_id,
              old_epoch + 1);
    if (u->size != nwant || memcmp(u->members, want, nwant * 4) != 0)
        wrong(u, "iteration %" PRIu64 ": the new group's members are not "
                 "the old ones outside the failed set, in order", g);
    t->digest = fnv(fnv(t->digest, ftc_group_id(ng)), ftc_group_epoch(ng));
    json_array_begin(&u->shrinks);
    json_uint(&u->shrinks, g);
    json_uint(&u->shrinks, ftc_group_id(ng));
    json_uint(&u->shrinks, ftc_group_epoch(ng));
    json_array_begin(&u->shrinks);
    for (uint32_t i = 0; i < u->size; i++) {
        json_uint(&u->shrinks, u->members[i]);
        t->digest = fnv(t->digest, u->members[i]);
    }
    json_array_end(&u->shrinks);
    json_uint(&u->shrinks, u->op.t_deliver);
    json_uint(&u->shrinks, u->op.t_deliver - t0);
    json_array_end(&u->shrinks);
    return true;
}

/* --- The stream ---------------------------------------------------------- */

static void print_line(run_t *u)
{
    const bench_ulfm_host_t *h = u->h;
    /* The three lists as built, the groups, three series of numbers. */
    size_t cap = 4096 + strlen(u->res_buf) + strlen(u->shr_buf)
                 + strlen(u->all_buf) + (size_t)(nold + 1) * 40
                 + 3 * 24 * (size_t)u->niters;
    char *buf = malloc(cap);
    if (buf == NULL)
        die(4, "out of memory");
    json_t j;
    json_to_buffer(&j, buf, cap);
    json_object_begin(&j);
    json_key(&j, "rank");
    json_uint(&j, h->rank);
    json_key(&j, "ulfm");
    json_object_begin(&j);
    json_key(&j, "agree_round");
    json_string(&j, ftc_agree_round_name(h->agree_round));
    json_key(&j, "results");
    json_members(&j, u->res_buf);
    json_key(&j, "shrinks");
    json_members(&j, u->shr_buf);
    json_key(&j, "allreduces");
    json_members(&j, u->all_buf);
    /* The groups this rank saw invalidated: [id, epoch, invalidated]. */
    json_key(&j, "groups");
    json_array_begin(&j);
    for (uint32_t i = 0; i <= nold; i++) {
        ftc_group_t *gr = i < nold ? old_groups[i] : u->group;
        json_array_begin(&j);
        json_uint(&j, ftc_group_id(gr));
        json_uint(&j, ftc_group_epoch(gr));
        json_bool(&j, ftc_group_is_invalidated(gr) != 0);
        json_array_end(&j);
    }
    json_array_end(&j);
    const struct {
        const char *name;
        const uint64_t *v;
    } series[] = {{"agree_ns", u->agree_ns},
                  {"allreduce_ns", u->allreduce_ns},
                  {"shrink_ns", u->shrink_ns}};
    for (size_t s = 0; s < 3; s++) {
        json_key(&j, series[s].name);
        json_array_begin(&j);
        for (uint64_t g = 0; g < u->niters; g++)
            json_uint(&j, series[s].v[g]);
        json_array_end(&j);
    }
    json_object_end(&j);
    json_object_end(&j);
    if (json_truncated(&j))
        die(4, "rank %u: the ulfm line does not fit %zu bytes", h->rank, cap);
    puts(buf);
    fflush(stdout);
    free(buf);
}

static void open_list(json_t *j, char **buf, size_t cap)
{
    *buf = malloc(cap);
    if (*buf == NULL)
        die(4, "out of memory");
    json_to_buffer(j, *buf, cap);
    json_array_begin(j);
}

void bench_ulfm_run(const bench_ulfm_host_t *h, bool shrink,
                    bench_ulfm_tally_t *tally)
{
    if (h->n > INVALID_BIT)
        die(2, "--coll agree|shrink: at most %d ranks (one bit each), "
               "not %u", INVALID_BIT, h->n);
    run_t u;
    memset(&u, 0, sizeof(u));
    u.h = h;
    u.tally = tally;
    u.group = h->group;
    u.op.failed = calloc(h->n, sizeof(uint32_t));
    u.niters = h->warmup + h->iters;
    u.agree_ns = calloc(u.niters + 1, sizeof(uint64_t));
    u.allreduce_ns = calloc(u.niters + 1, sizeof(uint64_t));
    u.shrink_ns = calloc(u.niters + 1, sizeof(uint64_t));
    tally->lat_ns = calloc(u.niters + 1, sizeof(uint64_t));
    if (u.op.failed == NULL || u.agree_ns == NULL || u.allreduce_ns == NULL
        || u.shrink_ns == NULL || tally->lat_ns == NULL)
        die(4, "out of memory");
    /* Per iteration at most one entry in each list, with a set of at
     * most n ranks of at most 3 characters each. */
    size_t cap = 1024 + (size_t)u.niters * (96 + 4 * (size_t)h->n);
    open_list(&u.results, &u.res_buf, cap);
    open_list(&u.shrinks, &u.shr_buf, cap);
    open_list(&u.allreduces, &u.all_buf, cap);
    crash_rank = h->rank;
    learn_members(&u);
    /* Every rank gets the same --agree-round; the groups shrink makes
     * inherit it. */
    ftc_ulfm_params_t params;
    ftc_ulfm_params_init(&params);
    params.agree_round = h->agree_round;
    if (ftc_group_set_ulfm_params(u.group, &params) != FTC_OK)
        die(4, "rank %u: ftc_group_set_ulfm_params refused --agree-round %s",
            h->rank, ftc_agree_round_name(h->agree_round));

    for (uint64_t g = 0; g < u.niters && !tally->excluded; g++) {
        if (!h->before_iteration(h->arg, g)) {
            tally->excluded = true;
            break;
        }
        h->die_before(h->arg, g);
        arm_crash_sends(&u, g, false);
        if (h->invalidate_rank == (int64_t)h->rank && g == h->invalidate_iter
            && ftc_group_invalidate(u.group) != FTC_OK)
            die(4, "rank %u: ftc_group_invalidate failed", h->rank);
        uint64_t value = ~((uint64_t)1 << h->rank);
        if (ftc_group_is_invalidated(u.group))
            value &= ~((uint64_t)1 << INVALID_BIT);
        uint64_t result = 0;
        u.op.done = false;
        uint64_t t0 = bench_now_ns();
        int rc = ftc_init_agree(u.group, value, &result, on_deliver, &u.op,
                                NULL);
        crash_point();
        if (rc == FTC_EEXCLUDED) {
            tally->excluded = true;
            break;
        }
        if (rc != FTC_OK)
            die(4, "rank %u: ftc_init_agree at iteration %" PRIu64 ": %s",
                h->rank, g, ftc_strerror(rc));
        crash_after_us(&u, g);
        wait_op(&u, "agree", g);
        crash_if_armed();
        u.agree_ns[g] = u.op.t_deliver - t0;
        if (g >= h->warmup) {
            tally->lat_ns[tally->lat_count++] = u.agree_ns[g];
            tally->lat_ns_sum += u.agree_ns[g];
        }
        tally->completed++;
        if (u.op.status == FTC_EEXCLUDED) {
            tally->excluded = true;
            if (!is_victim(&u, h->rank))
                wrong(&u, "iteration %" PRIu64 ": agree: excluded", g);
            break;
        }
        if (u.op.status != FTC_OK) {
            /* (FTC_EMISMATCH: a rank ran another failure-free round,
             * e.g. another --agree-round.) */
            wrong(&u, "iteration %" PRIu64 ": agree %s%s", g,
                  ftc_err_name(u.op.status),
                  u.op.status == FTC_EMISMATCH
                      ? " (every rank must pass the same --agree-round)"
                      : "");
            record_agree(&u, g, 0);
            continue;
        }
        tally->ok++;
        check_agree(&u, g, result);
        record_agree(&u, g, result);
        bool decide = u.op.nfailed > 0
                      || ((result >> INVALID_BIT) & 1) == 0;
        if (shrink && decide) {
            uint64_t t1 = bench_now_ns();
            if (!run_shrink(&u, g))
                break;
            u.shrink_ns[g] = u.op.t_deliver - t1;
            u.allreduce_ns[g] = run_allreduce(&u, g, true);
        } else if (h->with_allreduce) {
            u.allreduce_ns[g] = run_allreduce(&u, g, false);
        }
        crash_if_planned_shrink(&u, g);
    }
    crash_after_sends = 0;
    json_array_end(&u.results);
    json_array_end(&u.shrinks);
    json_array_end(&u.allreduces);
    if (json_truncated(&u.results) || json_truncated(&u.shrinks)
        || json_truncated(&u.allreduces))
        die(4, "rank %u: the results do not fit", h->rank);
    if (ftc_context_is_excluded(h->ctx))
        tally->excluded = true;
    print_line(&u);
    tally->group = u.group;
    free(u.res_buf);
    free(u.shr_buf);
    free(u.all_buf);
    free(u.agree_ns);
    free(u.allreduce_ns);
    free(u.shrink_ns);
    free(u.op.failed);
}

void bench_ulfm_cleanup(void)
{
    while (nold > 0)
        ftc_group_destroy(old_groups[--nold]);
}
