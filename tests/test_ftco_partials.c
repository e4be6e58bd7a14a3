/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftco's exactly-once partials (partials.h) against a model of their
 * rules, step by step, over seeded random sequences: a value whose set is
 * inside the cover is a duplicate (0); one that overlaps a held set
 * without containing it is refused (0, counted as a conflict); any other
 * is added, the held sets it contains dropped, and the cover grows by its
 * set (1); ftco_partials_cover_add grows the cover alone.
 *
 * Why: the partials take a fast case for one-span values disjoint from
 * every held set (every value of a fault-free operation), which neither
 * tests the cover nor writes it (it is brought up to date when read), and
 * fall back to the general path for anything else. The model knows no
 * fast case: after every step the return, the number of partials, the
 * conflicts, the cover (asked position by position, ftco_partials_has,
 * and whole, ftco_partials_cover) and the folded value must equal it.
 * Each position p contributes 4^p to a sum, so the fold counts every
 * position's contributions (up to three) exactly: a value counted twice
 * or lost shows.
 *
 * The sequences mix one-span values (adjacent, overlapping, nested),
 * unions of held sets (which replace them), values of several spans and
 * no-value cover additions, on an operation's lent room and on malloc.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "algo/ftco/partials.h"
#include "check.h"

enum { N = 30, MAXHELD = 64, SEQS = 3000, STEPS = 14, CAP = 3 };

typedef struct model {
    uint64_t held[MAXHELD]; /* bit p: position p, in held order */
    uint32_t count, conflicts;
    uint64_t cover;
} model_t;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    /* xorshift64*: the same sequences on every run. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint32_t below(uint32_t n)
{
    return (uint32_t)(rnd() % n);
}

static uint64_t span_bits(uint32_t lo, uint32_t hi)
{
    return (hi >= 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1);
}

/* The sum every position of bits contributes once. */
static uint64_t weight(uint64_t bits)
{
    uint64_t w = 0;
    for (uint32_t p = 0; p < N; p++)
        if (bits >> p & 1)
            w += 1ull << (2 * p);
    return w;
}

/* bits as a set of spans, on spans (room for N / 2 + 1). */
static ftco_rset_t to_rset(uint64_t bits, ftco_span_t *spans)
{
    ftco_rset_t s = {spans, 0, N / 2 + 1, false};
    for (uint32_t p = 0; p < N;) {
        if (!(bits >> p & 1)) {
            p++;
            continue;
        }
        uint32_t q = p;
        while (q < N && (bits >> q & 1))
            q++;
        spans[s.count++] = (ftco_span_t){p, q};
        p = q;
    }
    return s;
}

static uint64_t from_rset(const ftco_rset_t *s)
{
    uint64_t bits = 0;
    for (uint32_t i = 0; i < s->count; i++)
        bits |= span_bits(s->s[i].lo, s->s[i].hi);
    return bits;
}

static int model_merge(model_t *m, uint64_t set)
{
    if ((set & ~m->cover) == 0)
        return 0;
    for (uint32_t i = 0; i < m->count; i++)
        if ((m->held[i] & set) != 0 && (m->held[i] & ~set) != 0) {
            m->conflicts++;
            return 0;
        }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < m->count; i++)
        if ((m->held[i] & ~set) != 0)
            m->held[kept++] = m->held[i];
    m->held[kept++] = set;
    m->count = kept;
    m->cover |= set;
    return 1;
}

/* A value to offer: mostly one span, sometimes the union of held sets
 * (it replaces them), sometimes several spans. 0 asks for a cover
 * addition instead (*lo). */
static uint64_t next_set(const model_t *m, uint32_t *pos)
{
    uint32_t kind = below(10);
    if (kind < 6) {
        uint32_t lo = below(N), len = 1 + below(6);
        return span_bits(lo, lo + len < N ? lo + len : N);
    }
    if (kind < 8 && m->count > 0) {
        uint64_t u = 0;
        for (uint32_t k = 1 + below(3); k > 0; k--)
            u |= m->held[below(m->count)];
        if (below(2))
            u |= 1ull << below(N);
        return u;
    }
    if (kind < 9) {
        uint32_t a = below(N - 2), b = a + 2 + below(N - a - 2);
        return 1ull << a | span_bits(b, b + 1 + below(2) < N ? b + 1 + below(2) : N);
    }
    *pos = below(N);
    return 0;
}

static void compare(ftco_partials_t *p, const model_t *m, const ftc_cop_t *op,
                    uint32_t seq, uint32_t step)
{
    CHECK_MSG(p->count == m->count && p->conflicts == m->conflicts,
              "seq %u step %u: %u partials, %u conflicts (model %u, %u)", seq,
              step, p->count, p->conflicts, m->count, m->conflicts);
    for (uint32_t pos = 0; pos < N; pos++)
        CHECK_MSG(ftco_partials_has(p, pos) == (bool)(m->cover >> pos & 1),
                  "seq %u step %u: position %u counted", seq, step, pos);
    const ftco_rset_t *cover = ftco_partials_cover(p);
    CHECK_MSG(cover != NULL && from_rset(cover) == m->cover,
              "seq %u step %u: the cover", seq, step);
    uint64_t want = 0, got = 0;
    for (uint32_t i = 0; i < m->count; i++)
        want += weight(m->held[i]);
    ftco_partials_fold(p, op, &got);
    CHECK_MSG(m->count == 0 || got == want,
              "seq %u step %u: fold %llx, model %llx", seq, step,
              (unsigned long long)got, (unsigned long long)want);
}

static void run(bool on_room)
{
    ftc_cop_t op;
    memset(&op, 0, sizeof(op));
    op.args.count = 1;
    op.args.dtype = FTC_UINT64;
    op.args.op = FTC_SUM;
    op.nbytes = sizeof(uint64_t);
    size_t size = ftco_partials_room(sizeof(uint64_t), CAP);
    void *room = on_room ? malloc(size) : NULL;
    CHECK_MSG(!on_room || room != NULL, "room");
    if (on_room && room == NULL)
        return;
    for (uint32_t seq = 0; seq < SEQS; seq++) {
        ftco_partials_t p;
        model_t m = {.count = 0};
        CHECK_MSG(ftco_partials_init(&p, sizeof(uint64_t), CAP, room)
                      == FTC_OK,
                  "init");
        /* An operation's first value: its own position. */
        uint32_t me = below(N);
        uint64_t first = 1ull << me;
        ftco_span_t spans[N / 2 + 1];
        ftco_rset_t set = to_rset(first, spans);
        uint64_t v = weight(first);
        CHECK_MSG(ftco_partials_merge(&p, &set, &v) == model_merge(&m, first),
                  "seq %u: own value", seq);
        for (uint32_t step = 0; step < STEPS; step++) {
            uint32_t pos = 0;
            uint64_t bits = next_set(&m, &pos);
            if (bits == 0) {
                CHECK_MSG(ftco_partials_cover_add(&p, pos, pos + 1) == FTC_OK,
                          "seq %u step %u: cover_add", seq, step);
                m.cover |= 1ull << pos;
            } else {
                set = to_rset(bits, spans);
                v = weight(bits);
                int got = ftco_partials_merge(&p, &set, &v);
                int want = model_merge(&m, bits);
                CHECK_MSG(got == want, "seq %u step %u: merge %llx: %d, model %d",
                          seq, step, (unsigned long long)bits, got, want);
            }
            compare(&p, &m, &op, seq, step);
            if (m.count >= MAXHELD - 1)
                break;
        }
        ftco_partials_free(&p);
    }
    free(room);
}

int main(void)
{
    run(true);
    run(false);
    return check_report();
}
