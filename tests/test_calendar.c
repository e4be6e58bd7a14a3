/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulators' calendar (backends/sim/calendar.c) against a
 * brute-force reference: an array of (time, class, push order) searched
 * whole at every step.
 *
 * Random pushes (due now, within the ring, at its edge, far beyond it; in
 * the past, which means now), pops of everything due now, advances to the
 * next time (or to a limit before it) and jumps of now to a time before
 * the next event, over rings of 256 to 262,144 buckets, so that now wraps
 * round the ring many times and the bitmap's summary is searched from
 * every position: after every step the next time and emptiness match the
 * reference, and every pop is the reference's earliest event (at one
 * time, class 0 before class 1, then the order of pushes).
 *
 * Seeded (FTC_TEST_SEED, default 1): a failure repeats. Last line:
 * "N passed, M failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "calendar.h"
#include "splitmix.h"

typedef struct {
    uint64_t time, seq;
    uint16_t cls;
} ref_event_t;

typedef struct {
    ref_event_t *v;
    size_t len, cap;
} ref_t;

static unsigned failed_checks;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            if (failed_checks++ < 10) {                                     \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);        \
                fprintf(stderr, __VA_ARGS__);                               \
                fputc('\n', stderr);                                        \
            }                                                               \
        }                                                                   \
    } while (0)

static void ref_push(ref_t *r, ref_event_t e)
{
    if (r->len == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->v = realloc(r->v, r->cap * sizeof(*r->v));
        if (r->v == NULL)
            abort();
    }
    r->v[r->len++] = e;
}

static int ref_before(const ref_event_t *a, const ref_event_t *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    if (a->cls != b->cls)
        return a->cls < b->cls;
    return a->seq < b->seq;
}

/* Index of the earliest event, or SIZE_MAX. */
static size_t ref_min(const ref_t *r)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < r->len; i++)
        if (best == SIZE_MAX || ref_before(&r->v[i], &r->v[best]))
            best = i;
    return best;
}

static uint64_t ref_next_time(const ref_t *r)
{
    size_t i = ref_min(r);
    return i == SIZE_MAX ? UINT64_MAX : r->v[i].time;
}

/* A time to push at: now or before (clamped to now), within the ring,
 * at its edge or far beyond it. */
static uint64_t pick_time(uint64_t *rng, uint64_t now, uint32_t nb)
{
    uint64_t x = splitmix64(rng);
    switch (x % 8) {
    case 0:
        return now;
    case 1:
        return now >= 5 ? now - (x >> 8) % 5 : 0;
    case 2:
        return now + (x >> 8) % 64;
    case 3:
    case 4:
        return now + (x >> 8) % nb;
    case 5:
        return now + nb - 2 + (x >> 8) % 4;
    case 6:
        return now + nb + (x >> 8) % (4 * (uint64_t)nb);
    default:
        return now + (x >> 8) % (40 * (uint64_t)nb);
    }
}

/* Pops everything due now and checks it against the reference. */
static void pop_due(ftc_calendar_t *c, ref_t *r)
{
    uint32_t idx;
    while ((idx = ftc_cal_pop_now(c)) != FTC_CAL_NONE) {
        const ftc_cal_event_t *ev = ftc_cal_at(c, idx);
        size_t m = ref_min(r);
        CHECK(m != SIZE_MAX, "popped an event the reference does not hold");
        if (m == SIZE_MAX) {
            ftc_cal_release(c, idx);
            return;
        }
        CHECK(ev->time == c->now && r->v[m].time == c->now
                  && ev->u.gen == r->v[m].seq && ev->cls == r->v[m].cls,
              "now %" PRIu64 ": popped (%" PRIu64 ", cls %u, #%" PRIu64
              "), expected (%" PRIu64 ", cls %u, #%" PRIu64 ")",
              c->now, ev->time, (unsigned)ev->cls, ev->u.gen, r->v[m].time,
              (unsigned)r->v[m].cls, r->v[m].seq);
        r->v[m] = r->v[--r->len];
        ftc_cal_release(c, idx);
    }
    CHECK(ref_next_time(r) > c->now,
          "now %" PRIu64 ": the reference still has an event due", c->now);
}

static void run(uint64_t window, uint64_t seed, unsigned steps)
{
    ftc_calendar_t c;
    if (ftc_cal_init(&c, window) != 0) {
        CHECK(0, "ftc_cal_init(%" PRIu64 ") failed", window);
        return;
    }
    ref_t r = {0};
    uint64_t rng = seed, seq = 0;
    for (unsigned s = 0; s < steps; s++) {
        uint64_t x = splitmix64(&rng);
        if (x % 16 < 9) {
            /* A burst of pushes, some of class 1 (the LogP backend's). */
            unsigned k = 1 + (unsigned)((x >> 8) % 6);
            for (unsigned i = 0; i < k; i++) {
                uint32_t idx = ftc_cal_alloc(&c);
                CHECK(idx != FTC_CAL_NONE, "ftc_cal_alloc failed");
                if (idx == FTC_CAL_NONE)
                    break;
                ftc_cal_event_t *ev = ftc_cal_at(&c, idx);
                uint64_t t = pick_time(&rng, c.now, c.nb);
                ev->time = t;
                ev->cls = (uint16_t)(splitmix64(&rng) % 3 == 0);
                ev->u.gen = seq;
                ftc_cal_push(&c, idx);
                ref_push(&r, (ref_event_t){t < c.now ? c.now : t, seq,
                                           ev->cls});
                seq++;
            }
        } else {
            pop_due(&c, &r);
            uint64_t next = ref_next_time(&r);
            if (x % 16 < 14) {
                /* To the next time, or to a limit short of it. */
                uint64_t limit = next == UINT64_MAX || x % 5 != 0
                                     ? UINT64_MAX
                                     : next - 1;
                int moved = ftc_cal_advance(&c, limit);
                CHECK(moved == (next != UINT64_MAX && next <= limit),
                      "advance to %" PRIu64 " (next %" PRIu64 "): %d", limit,
                      next, moved);
                if (moved)
                    CHECK(c.now == next, "advanced to %" PRIu64
                          ", the next time is %" PRIu64, c.now, next);
            } else if (next != UINT64_MAX && next > c.now + 1) {
                /* A jump of now to some time before the next event. */
                uint64_t t = c.now + 1 + (x >> 8) % (next - c.now - 1);
                ftc_cal_set_now(&c, t);
                CHECK(c.now == t, "set_now(%" PRIu64 ") left %" PRIu64, t,
                      c.now);
            }
        }
        CHECK(ftc_cal_next_time(&c) == ref_next_time(&r),
              "step %u: next time %" PRIu64 ", the reference's %" PRIu64, s,
              ftc_cal_next_time(&c), ref_next_time(&r));
        CHECK(ftc_cal_empty(&c) == (r.len == 0),
              "step %u: empty %d with %zu events", s, ftc_cal_empty(&c),
              r.len);
        if (failed_checks > 0)
            break;
    }
    /* Drain: every event comes out, in order. */
    while (failed_checks == 0 && !ftc_cal_empty(&c)) {
        pop_due(&c, &r);
        if (!ftc_cal_advance(&c, UINT64_MAX))
            break;
    }
    pop_due(&c, &r);
    CHECK(ftc_cal_empty(&c) && r.len == 0,
          "after the drain: empty %d, %zu events in the reference",
          ftc_cal_empty(&c), r.len);
    free(r.v);
    ftc_cal_fini(&c);
}

int main(void)
{
    const char *env = getenv("FTC_TEST_SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 0) : 1;
    /* Rings of 256 (4 bitmap words), 2,048 (32: a small loopback world's
     * by default), 4,096 (64), 16,384 (256: a summary of 4 words) and
     * 262,144 buckets (4,096 words, 64 summary words). */
    const uint64_t windows[] = {0, 1101, 4000, 12000, 200000};
    unsigned passed = 0, failed = 0;
    for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
        for (uint64_t k = 0; k < 4; k++) {
            run(windows[w], seed * 1000 + w * 10 + k, 4000);
            if (failed_checks == 0) {
                passed++;
            } else {
                failed++;
                fprintf(stderr, "  window %" PRIu64 ", seed %" PRIu64 "\n",
                        windows[w], seed * 1000 + w * 10 + k);
                failed_checks = 0;
            }
        }
    }
    printf("%u passed, %u failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
