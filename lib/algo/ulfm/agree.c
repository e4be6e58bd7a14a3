/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agreement's ballots: rotating coordinators, each running two waves
 * over a binomial tree rooted at itself (docs/ulfm.md has the proof
 * sketch). Every member starts in the early round (early.c), which
 * decides when nothing fails; a member that leaves it comes here, with
 * the early round's value if it accepted it (acc_rank 0, below every
 * ballot).
 *
 * Ballot b is coordinated by group rank b; a member is in the lowest
 * ballot whose coordinator it does not know to have failed, or in a
 * higher one a message told it about. Failures are final and excluded
 * members behave as crashed, so the core's failure knowledge is a perfect
 * detector in effect, and a member only leaves a ballot whose coordinator
 * really is gone.
 *
 * In ballot b, over the interleaved binomial tree rooted at b:
 *   1. GATHER up: each member sends the AND of its subtree's inputs, the
 *      members it knows failed and the highest-ballot proposal it has
 *      accepted. A member waits for each child's subtree; a child known
 *      failed is replaced by its own children (its subtree's members
 *      send past it), and a member whose parent failed sends to the
 *      nearest live ancestor. AND and union are idempotent, so a
 *      contribution counted twice does no harm.
 *   2. The coordinator proposes: the highest-ballot accepted proposal it
 *      gathered, or else the AND and the failed set it gathered. PROPOSE
 *      goes down to everyone who sent up; each member accepts it.
 *   3. ACK up: a member acks once its subtree has accepted.
 *   4. The coordinator decides once every live member accepted, and the
 *      decision goes down (DECIDE).
 * A member delivers only the decision. Uniform agreement: when anyone
 * delivers v, every member not failed at the coordinator had accepted v
 * in ballot b; any later coordinator gathers from every live member, each
 * of which accepted v in b (it could not accept b after joining a later
 * ballot: it ignores older ballots), so by induction it proposes v again.
 * That is why a member may not deliver on the proposal: a member that did
 * and crashed with the coordinator might hold a value nobody else has.
 *
 * Liveness helpers: a member that moves to a newer ballot tells the
 * members it serves (NEWER), an older-ballot message is answered with
 * NEWER, and any message to a member that decided is answered with the
 * decision, as is a keepalive probe (on_probe): a member that decided
 * lingers to serve the others.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/ulfm/agree.h"
#include "algo/ulfm/kinds.h"
#include "ftcoll/mitigation.h"


/* Mutants the checker must reject (tests/meson.build builds them): 2
 * forgets, on leaving the early round, the value it accepted there; 3
 * delivers a ballot's proposal as it accepts it, with no ack wave and no
 * decision (one round where uniformity needs two). 0 in the library. */
#ifndef FTC_AGREE_MUTANT
#define FTC_AGREE_MUTANT 0
#endif

#define NO_PARENT UINT32_MAX
#define DECIDED_BIT (1u << 31)
/* The progress word's: in the ballots (not in the early round, not
 * decided). A peer without the operation yet sends 0, so "no bit" must
 * not tell a member of the early round to leave it. */
#define BALLOTS_BIT (1u << 30)

static const ftc_tree_t agree_tree = {.kind = FTC_TREE_BINOMIAL, .k = 2};

/* Tree degree bound: a binomial tree of < 2^31 ranks. */
#define MAX_CHILDREN 32

static void evaluate(ftc_agree_t *a);

static uint32_t gsize(const ftc_agree_t *a)
{
    return a->base.group->n;
}

static bool is_failed(const ftc_agree_t *a, uint32_t r)
{
    return ftc_group_member_failed(a->base.group, r);
}

static uint32_t to_logical(const ftc_agree_t *a, uint32_t r)
{
    uint32_t n = gsize(a);
    return (r + n - a->ballot) % n;
}

static uint32_t to_grank(const ftc_agree_t *a, uint32_t l)
{
    return (l + a->ballot) % gsize(a);
}

/* The nearest ancestor not known failed, or NO_PARENT at the root. */
static uint32_t live_parent(const ftc_agree_t *a)
{
    uint32_t l = to_logical(a, a->base.group->me);
    for (;;) {
        int64_t p = ftc_tree_parent(&agree_tree, gsize(a), l);
        if (p < 0)
            return NO_PARENT;
        uint32_t r = to_grank(a, (uint32_t)p);
        if (!is_failed(a, r))
            return r;
        l = (uint32_t)p;
    }
}

/* ---- sending ------------------------------------------------------------ */

static void put_set(uint8_t **p, const ftc_idset_t *s)
{
    if (s->n > 0)
        memcpy(*p, s->v, sizeof(uint32_t) * s->n);
    *p += sizeof(uint32_t) * s->n;
}

void ftc_agree_send(ftc_agree_t *a, uint32_t dest, uint8_t kind, uint32_t word,
                    const void *payload, size_t len)
{
    ftc_wire_header_t hdr;
    ftc_cop_header(&a->base, &hdr, kind, word);
    ftc_iov_t iov = {payload, len};
    (void)ftc_cop_send(&a->base, dest, &hdr, &iov, len > 0 ? 1 : 0, false);
}

static void send_msg(ftc_agree_t *a, uint32_t dest, uint8_t kind,
                     const void *payload, size_t len)
{
    ftc_agree_send(a, dest, kind, a->ballot, payload, len);
}

/* The members this process knows failed, with those in s. */
static bool known_failed(ftc_agree_t *a, ftc_idset_t *s)
{
    ftc_group_t *g = a->base.group;
    uint32_t k = ftc_group_failed(g, NULL, 0);
    if (k == 0)
        return true;
    uint32_t *tmp = malloc(sizeof(uint32_t) * k);
    if (tmp == NULL)
        return false;
    k = ftc_group_failed(g, tmp, k);
    bool ok = true;
    for (uint32_t i = 0; i < k && ok; i++)
        ok = ftc_idset_add(s, tmp[i]);
    free(tmp);
    return ok;
}

/* GATHER: and(8) nfail(4) has_acc(4) acc_rank(4) nacc(4) acc_value(8)
 * then nfail and nacc group ranks. */
#define GATHER_HEAD 32

static void send_gather(ftc_agree_t *a, uint32_t dest)
{
    if (!known_failed(a, &a->fail_acc)) {
        a->oom = true;
        return;
    }
    size_t len = GATHER_HEAD
                 + sizeof(uint32_t) * ((size_t)a->fail_acc.n + a->acc_failed.n);
    uint8_t *buf = malloc(len), *p = buf;
    if (buf == NULL) {
        a->oom = true;
        return;
    }
    uint32_t has = a->has_acc, nacc = a->has_acc ? a->acc_failed.n : 0;
    memcpy(p, &a->and_acc, 8);
    memcpy(p + 8, &a->fail_acc.n, 4);
    memcpy(p + 12, &has, 4);
    memcpy(p + 16, &a->acc_rank, 4);
    memcpy(p + 20, &nacc, 4);
    memcpy(p + 24, &a->acc_value, 8);
    p += GATHER_HEAD;
    put_set(&p, &a->fail_acc);
    if (a->has_acc)
        put_set(&p, &a->acc_failed);
    send_msg(a, dest, MSG_GATHER, buf, (size_t)(p - buf));
    free(buf);
}

/* PROPOSE and DECIDE: value(8) nfail(4) pad(4), then nfail group ranks. */
#define VALUE_HEAD 16

static void send_value(ftc_agree_t *a, uint32_t dest, uint8_t kind,
                       uint64_t value, const ftc_idset_t *failed)
{
    size_t len = VALUE_HEAD + sizeof(uint32_t) * (size_t)failed->n;
    uint8_t *buf = malloc(len), *p = buf;
    if (buf == NULL) {
        a->oom = true;
        return;
    }
    uint32_t pad = 0;
    memcpy(p, &value, 8);
    memcpy(p + 8, &failed->n, 4);
    memcpy(p + 12, &pad, 4);
    p += VALUE_HEAD;
    put_set(&p, failed);
    send_msg(a, dest, kind, buf, len);
    free(buf);
}

static void send_propose(ftc_agree_t *a, uint32_t dest)
{
    send_value(a, dest, MSG_PROPOSE, a->acc_value, &a->acc_failed);
}

static void send_decide(ftc_agree_t *a, uint32_t dest)
{
    send_value(a, dest, MSG_DECIDE, a->value, &a->failed);
}

/* ---- waiting: the slots of a member's subtree --------------------------- */

/* Whether every child slot of logical rank l is done: the child sent
 * (it is in got), or it is known failed and its own slots are done. Live
 * children not heard from go to want (the peers to watch). */
static bool slots_done(ftc_agree_t *a, uint32_t l, const ftc_idset_t *got,
                       ftc_idset_t *want)
{
    uint32_t kids[MAX_CHILDREN];
    uint32_t nk = ftc_tree_children(&agree_tree, gsize(a), l, kids,
                                    MAX_CHILDREN);
    bool done = true;
    for (uint32_t i = 0; i < nk && i < MAX_CHILDREN; i++) {
        uint32_t r = to_grank(a, kids[i]);
        if (ftc_idset_has(got, r))
            continue;
        if (is_failed(a, r)) {
            if (!slots_done(a, kids[i], got, want))
                done = false;
            continue;
        }
        done = false;
        if (want != NULL && !ftc_idset_add(want, r))
            a->oom = true;
    }
    return done;
}

/* Hold monitor watches on exactly the peers in want. */
void ftc_agree_watch(ftc_agree_t *a, const ftc_idset_t *want)
{
    ftc_context_t *ctx = a->base.group->ctx;
    for (uint32_t i = 0; i < a->watching.n;) {
        uint32_t r = a->watching.v[i];
        if (!ftc_idset_has(want, r)) {
            ftc_monitor_release(ctx, ftc_group_world_rank(a->base.group, r));
            ftc_idset_remove(&a->watching, r);
        } else {
            i++;
        }
    }
    for (uint32_t i = 0; i < want->n; i++) {
        uint32_t r = want->v[i];
        if (ftc_idset_has(&a->watching, r))
            continue;
        if (!ftc_idset_add(&a->watching, r)) {
            a->oom = true;
            return;
        }
        ftc_monitor_acquire(ctx, ftc_group_world_rank(a->base.group, r),
                            &a->base);
    }
}

/* ---- state changes ------------------------------------------------------ */

static void decide(ftc_agree_t *a, uint64_t value, const uint32_t *failed,
                   uint32_t nfailed, uint32_t from)
{
    if (a->phase == FTC_AGREE_DECIDED)
        return;
    bool was_waiting = a->phase == FTC_AGREE_WAIT_PROPOSE
                       || a->phase == FTC_AGREE_WAIT_DECIDE;
    a->phase = FTC_AGREE_DECIDED;
    a->value = value;
    ftc_idset_clear(&a->failed);
    for (uint32_t i = 0; i < nfailed; i++)
        if (!ftc_idset_add(&a->failed, failed[i]))
            a->oom = true;
    /* Everyone who waits on us for it, and the parent we sent up to if it
     * is not who told us (it may wait on us still). */
    for (uint32_t i = 0; i < a->down.n; i++)
        if (a->down.v[i] != from)
            send_decide(a, a->down.v[i]);
    if (was_waiting && a->parent != NO_PARENT && a->parent != from)
        send_decide(a, a->parent);
    ftc_idset_t none = {0};
    ftc_agree_watch(a, &none);
    /* The agreed failures are certain: every later operation of the
     * context routes around them without waiting to detect them. */
    for (uint32_t i = 0; i < a->failed.n; i++)
        ftc_ctx_declare_failed(a->base.group->ctx,
                               ftc_group_world_rank(a->base.group,
                                                    a->failed.v[i]));
    a->hooks->decided(a, a->value, a->failed.v, a->failed.n);
    ftc_cop_linger(&a->base);
}

void ftc_agree_decide_early(ftc_agree_t *a, uint64_t value)
{
    decide(a, value, NULL, 0, NO_PARENT);
}

/* The gather of the current ballot starts afresh, keeping only what was
 * accepted; the children in its tree that we will wait on are told to
 * move (NEWER), as are tell's members. */
static void restart_gather(ftc_agree_t *a, ftc_idset_t *tell)
{
    a->phase = FTC_AGREE_GATHER;
    a->and_acc = a->input;
    ftc_idset_clear(&a->fail_acc);
    ftc_idset_clear(&a->got_gather);
    ftc_idset_clear(&a->got_ack);
    ftc_idset_clear(&a->down);
    a->parent = live_parent(a);
    /* Pull the new subtree along: the children we will wait on. Not in
     * tree waves' first ballot: no member runs an early round there, and
     * none is in a lower ballot than 0, so they need no telling (and the
     * round keeps to four messages per member). */
    if (a->radix == 1 && a->ballot == 0 && tell->n == 0)
        return;
    (void)slots_done(a, to_logical(a, a->base.group->me), &a->got_gather,
                     tell);
    for (uint32_t i = 0; i < tell->n; i++) {
        if (is_failed(a, tell->v[i]))
            continue;
        ftc_wire_header_t hdr;
        ftc_cop_header(&a->base, &hdr, MSG_NEWER, a->ballot);
        (void)ftc_cop_send(&a->base, tell->v[i], &hdr, NULL, 0, false);
    }
}

void ftc_agree_leave_early(ftc_agree_t *a)
{
    if (a->phase != FTC_AGREE_EARLY)
        return;
    uint32_t n = gsize(a), b = a->ballot;
    while (b < n && is_failed(a, b))
        b++;
    if (b < n)
        a->ballot = b;
    if (FTC_AGREE_MUTANT == 2)
        a->has_acc = false;
    /* Its partners may wait on it there: they follow it out. */
    ftc_idset_t tell = {0};
    if (!ftc_agree_early_partners(a, &tell))
        a->oom = true;
    restart_gather(a, &tell);
    ftc_idset_free(&tell);
}

/* Enter ballot b (> the current one): a fresh gather, keeping only what
 * was accepted. The members this process served in the old ballot, and
 * its children in the new tree, are told to move too. */
static void enter_ballot(ftc_agree_t *a, uint32_t b)
{
    uint32_t n = gsize(a);
    ftc_agree_leave_early(a);
    while (b < n && is_failed(a, b))
        b++;
    if (b >= n || b <= a->ballot)
        return; /* (b >= n: every coordinator failed, this one included) */
    a->ballot = b;
    for (uint32_t i = 0; i < a->down.n; i++) {
        uint32_t r = a->down.v[i];
        ftc_wire_header_t hdr;
        ftc_cop_header(&a->base, &hdr, MSG_NEWER, b);
        (void)ftc_cop_send(&a->base, r, &hdr, NULL, 0, false);
    }
    ftc_idset_t want = {0};
    restart_gather(a, &want);
    ftc_idset_free(&want);
}

static void accept_proposal(ftc_agree_t *a, uint64_t value,
                            const uint32_t *failed, uint32_t nfailed)
{
    a->has_acc = true;
    a->acc_rank = a->ballot + 1;
    a->acc_value = value;
    ftc_idset_clear(&a->acc_failed);
    for (uint32_t i = 0; i < nfailed; i++)
        if (!ftc_idset_add(&a->acc_failed, failed[i]))
            a->oom = true;
    a->phase = FTC_AGREE_ACKS;
    for (uint32_t i = 0; i < a->down.n; i++)
        send_propose(a, a->down.v[i]);
    if (FTC_AGREE_MUTANT == 3)
        decide(a, a->acc_value, a->acc_failed.v, a->acc_failed.n, NO_PARENT);
}

/* The coordinator's choice: the highest-ballot proposal accepted by
 * anyone it gathered from, else what it gathered. */
static void coordinator_propose(ftc_agree_t *a)
{
    if (a->has_acc) {
        ftc_idset_t f = {0};
        if (!ftc_idset_copy(&f, &a->acc_failed))
            a->oom = true;
        accept_proposal(a, a->acc_value, f.v, f.n);
        ftc_idset_free(&f);
        return;
    }
    if (!known_failed(a, &a->fail_acc))
        a->oom = true;
    ftc_idset_t f = {0};
    if (!ftc_idset_copy(&f, &a->fail_acc))
        a->oom = true;
    accept_proposal(a, a->and_acc, f.v, f.n);
    ftc_idset_free(&f);
}

/* Move as far as what has arrived allows, then watch whom we wait on. */
static void evaluate(ftc_agree_t *a)
{
    /* Nothing leaves this member before its input: what arrives is
     * kept (the early round's steps, the gather's AND) until then. */
    if (!a->ready)
        return;
    if (a->phase == FTC_AGREE_EARLY) {
        ftc_agree_early_evaluate(a);
        if (a->oom && !a->base.delivered)
            ftc_cop_complete(&a->base, FTC_ENOMEM);
        return;
    }
    ftc_group_t *g = a->base.group;
    uint32_t me_l = to_logical(a, g->me);
    bool root = g->me == a->ballot;
    ftc_idset_t want = {0};
    for (;;) {
        ftc_idset_clear(&want);
        if (a->phase == FTC_AGREE_GATHER) {
            if (!slots_done(a, me_l, &a->got_gather, &want))
                break;
            if (root) {
                coordinator_propose(a);
                continue;
            }
            a->parent = live_parent(a);
            send_gather(a, a->parent);
            a->phase = FTC_AGREE_WAIT_PROPOSE;
            continue;
        }
        if (a->phase == FTC_AGREE_ACKS) {
            if (!slots_done(a, me_l, &a->got_ack, &want))
                break;
            if (root) {
                decide(a, a->acc_value, a->acc_failed.v, a->acc_failed.n,
                       NO_PARENT);
                break;
            }
            a->parent = live_parent(a);
            send_msg(a, a->parent, MSG_ACK, NULL, 0);
            a->phase = FTC_AGREE_WAIT_DECIDE;
            continue;
        }
        if ((a->phase == FTC_AGREE_WAIT_PROPOSE
             || a->phase == FTC_AGREE_WAIT_DECIDE)
            && a->parent != NO_PARENT && !ftc_idset_add(&want, a->parent))
            a->oom = true;
        break;
    }
    if (a->phase != FTC_AGREE_DECIDED)
        ftc_agree_watch(a, &want);
    ftc_idset_free(&want);
    /* Out of memory on the way: a message or a set entry was lost, so
     * this member may not finish; say so rather than hang. (It stays to
     * answer the others.) */
    if (a->oom && !a->base.delivered)
        ftc_cop_complete(&a->base, FTC_ENOMEM);
}

/* ---- events ------------------------------------------------------------- */

/* Parse a PROPOSE / DECIDE payload; NULL list when malformed. */
static bool parse_value(ftc_agree_t *a, const uint8_t *p, uint32_t len,
                        uint64_t *value, const uint8_t **list, uint32_t *n)
{
    if (len < VALUE_HEAD)
        return false;
    memcpy(value, p, 8);
    memcpy(n, p + 8, 4);
    if (*n > gsize(a) || len != VALUE_HEAD + sizeof(uint32_t) * (size_t)*n)
        return false;
    *list = p + VALUE_HEAD;
    for (uint32_t i = 0; i < *n; i++) {
        uint32_t r;
        memcpy(&r, *list + 4 * (size_t)i, 4);
        if (r >= gsize(a))
            return false;
    }
    return true;
}

/* Copy n unaligned group ranks to an array (NULL when n == 0 or OOM). */
static uint32_t *ranks_of(ftc_agree_t *a, const uint8_t *list, uint32_t n)
{
    if (n == 0)
        return NULL;
    uint32_t *v = malloc(sizeof(uint32_t) * n);
    if (v == NULL)
        a->oom = true;
    else
        memcpy(v, list, sizeof(uint32_t) * n);
    return v;
}

static void on_gather(ftc_agree_t *a, const uint8_t *p, uint32_t len,
                      uint32_t from)
{
    if (len < GATHER_HEAD)
        goto bad;
    uint64_t and_v, acc_value;
    uint32_t nfail, has, acc_rank, nacc;
    memcpy(&and_v, p, 8);
    memcpy(&nfail, p + 8, 4);
    memcpy(&has, p + 12, 4);
    memcpy(&acc_rank, p + 16, 4);
    memcpy(&nacc, p + 20, 4);
    memcpy(&acc_value, p + 24, 8);
    if (nfail > gsize(a) || nacc > gsize(a) || has > 1
        || (has && acc_rank > gsize(a))
        || len != GATHER_HEAD + sizeof(uint32_t) * ((size_t)nfail + nacc))
        goto bad;
    for (uint32_t i = 0; i < nfail + nacc; i++) {
        uint32_t r;
        memcpy(&r, p + GATHER_HEAD + 4 * (size_t)i, 4);
        if (r >= gsize(a))
            goto bad;
    }
    if (!ftc_idset_add(&a->down, from))
        a->oom = true;
    if (a->phase == FTC_AGREE_ACKS || a->phase == FTC_AGREE_WAIT_DECIDE) {
        /* It joined late (its parent failed): the proposal is out. */
        send_propose(a, from);
        return;
    }
    if (a->phase != FTC_AGREE_GATHER)
        return; /* already counted through the member that failed */
    a->and_acc &= and_v;
    for (uint32_t i = 0; i < nfail; i++) {
        uint32_t r;
        memcpy(&r, p + GATHER_HEAD + 4 * (size_t)i, 4);
        if (!ftc_idset_add(&a->fail_acc, r))
            a->oom = true;
    }
    if (has && (!a->has_acc || acc_rank > a->acc_rank)) {
        a->has_acc = true;
        a->acc_rank = acc_rank;
        a->acc_value = acc_value;
        ftc_idset_clear(&a->acc_failed);
        for (uint32_t i = 0; i < nacc; i++) {
            uint32_t r;
            memcpy(&r, p + GATHER_HEAD + 4 * ((size_t)nfail + i), 4);
            if (!ftc_idset_add(&a->acc_failed, r))
                a->oom = true;
        }
    }
    if (!ftc_idset_add(&a->got_gather, from))
        a->oom = true;
    return;
bad:
    a->base.group->ctx->counters.dropped_badmsg++;
}

static void agree_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                         const uint8_t *payload, uint32_t from)
{
    ftc_agree_t *a = (ftc_agree_t *)op;
    ftc_context_t *ctx = op->group->ctx;
    uint32_t b = hdr->word;
    if (hdr->kind == MSG_EARLY_AND || hdr->kind == MSG_EARLY_CONFIRM) {
        if (a->phase == FTC_AGREE_DECIDED)
            send_decide(a, from); /* (it missed the end: give it) */
        else
            ftc_agree_early_on_msg(a, hdr, payload, from);
        if (a->oom && !a->base.delivered)
            ftc_cop_complete(&a->base, FTC_ENOMEM);
        return;
    }
    if (b >= gsize(a) || hdr->kind < MSG_GATHER || hdr->kind > MSG_NEWER) {
        ctx->counters.dropped_badmsg++;
        return;
    }
    if (hdr->kind == MSG_DECIDE) {
        uint64_t v;
        const uint8_t *list;
        uint32_t nf;
        if (!parse_value(a, payload, hdr->payload_len, &v, &list, &nf)) {
            ctx->counters.dropped_badmsg++;
            return;
        }
        if (a->phase != FTC_AGREE_DECIDED) {
            uint32_t *f = ranks_of(a, list, nf);
            if (nf == 0 || f != NULL)
                decide(a, v, f, nf, from);
            free(f);
        }
        return;
    }
    if (a->phase == FTC_AGREE_DECIDED) {
        /* Whatever it asks, the answer is the decision (a NEWER too: a
         * member that decided early is pulled into ballots by it). */
        send_decide(a, from);
        return;
    }
    /* The ballots have started somewhere: the early round is over. */
    bool left = a->phase == FTC_AGREE_EARLY;
    ftc_agree_leave_early(a);
    if (b < a->ballot) {
        /* From an older ballot: its coordinator is gone. */
        if (hdr->kind != MSG_NEWER) {
            ftc_wire_header_t h;
            ftc_cop_header(op, &h, MSG_NEWER, a->ballot);
            (void)ftc_cop_send(op, from, &h, NULL, 0, false);
        }
        if (left)
            evaluate(a);
        return;
    }
    if (b > a->ballot)
        enter_ballot(a, b);
    if (b != a->ballot) {
        if (left)
            evaluate(a);
        return;
    }
    switch (hdr->kind) {
    case MSG_GATHER:
        on_gather(a, payload, hdr->payload_len, from);
        break;
    case MSG_PROPOSE: {
        uint64_t v;
        const uint8_t *list;
        uint32_t nf;
        if (!parse_value(a, payload, hdr->payload_len, &v, &list, &nf)) {
            ctx->counters.dropped_badmsg++;
            return;
        }
        if (a->phase == FTC_AGREE_GATHER || a->phase == FTC_AGREE_WAIT_PROPOSE) {
            uint32_t *f = ranks_of(a, list, nf);
            if (nf == 0 || f != NULL)
                accept_proposal(a, v, f, nf);
            free(f);
        }
        break;
    }
    case MSG_ACK:
        if (hdr->payload_len != 0) {
            ctx->counters.dropped_badmsg++;
            return;
        }
        if (!ftc_idset_add(&a->got_ack, from) || !ftc_idset_add(&a->down, from))
            a->oom = true;
        break;
    case MSG_NEWER:
        break; /* entering the ballot was all */
    }
    evaluate(a);
}

static void agree_on_peer_failed(ftc_cop_t *op, uint32_t r)
{
    ftc_agree_t *a = (ftc_agree_t *)op;
    ftc_idset_remove(&a->watching, r);
    /* The early round decides only with every member: over. */
    ftc_agree_leave_early(a);
    if (a->phase == FTC_AGREE_DECIDED) {
        /* The coordinator failed after deciding: members may gather for
         * a new ballot around us. Tell our place in the new tree. */
        if (r != a->ballot)
            return;
        uint32_t n = gsize(a), b = a->ballot;
        while (b < n && is_failed(a, b))
            b++;
        if (b >= n)
            return;
        a->ballot = b;
        ftc_idset_t want = {0};
        (void)slots_done(a, to_logical(a, op->group->me), &want, &want);
        uint32_t parent = live_parent(a);
        if (parent != NO_PARENT)
            send_decide(a, parent);
        for (uint32_t i = 0; i < want.n; i++)
            send_decide(a, want.v[i]);
        ftc_idset_free(&want);
        return;
    }
    if (r == a->ballot) {
        enter_ballot(a, a->ballot + 1);
    } else if ((a->phase == FTC_AGREE_WAIT_PROPOSE
                || a->phase == FTC_AGREE_WAIT_DECIDE)
               && r == a->parent) {
        /* Resend what the failed parent may not have passed on. */
        a->parent = live_parent(a);
        if (a->phase == FTC_AGREE_WAIT_PROPOSE)
            send_gather(a, a->parent);
        else
            send_msg(a, a->parent, MSG_ACK, NULL, 0);
    }
    evaluate(a);
}

static void agree_on_probe(ftc_cop_t *op, uint32_t from)
{
    ftc_agree_t *a = (ftc_agree_t *)op;
    if (a->phase == FTC_AGREE_DECIDED)
        send_decide(a, from);
    else if ((a->phase == FTC_AGREE_ACKS || a->phase == FTC_AGREE_WAIT_DECIDE)
             && ftc_idset_has(&a->down, from))
        send_propose(a, from);
}

static uint32_t agree_progress_word(const ftc_cop_t *op)
{
    const ftc_agree_t *a = (const ftc_agree_t *)op;
    bool ballots = a->phase != FTC_AGREE_EARLY && a->phase != FTC_AGREE_DECIDED;
    return a->ballot | (a->phase == FTC_AGREE_DECIDED ? DECIDED_BIT : 0)
           | (ballots ? BALLOTS_BIT : 0);
}

static void agree_on_peer_progress(ftc_cop_t *op, uint32_t from, uint32_t word)
{
    ftc_agree_t *a = (ftc_agree_t *)op;
    uint32_t b = word & ~(DECIDED_BIT | BALLOTS_BIT);
    if (a->phase == FTC_AGREE_DECIDED || b >= gsize(a))
        return;
    bool peer_ballots = (word & BALLOTS_BIT) != 0;
    if (a->phase == FTC_AGREE_EARLY) {
        if (!peer_ballots)
            return; /* (early too, decided, or not started yet) */
        /* It runs the ballots: follow it. */
        ftc_agree_leave_early(a);
        evaluate(a);
        if (a->phase == FTC_AGREE_DECIDED)
            return;
    } else if (!peer_ballots && !(word & DECIDED_BIT)) {
        /* It waits in the early round that this member left, or has not
         * started (the NEWER waits for it there). */
        ftc_wire_header_t h;
        ftc_cop_header(op, &h, MSG_NEWER, a->ballot);
        (void)ftc_cop_send(op, from, &h, NULL, 0, false);
        return;
    }
    if (b > a->ballot) {
        enter_ballot(a, b);
        evaluate(a);
    } else if (b < a->ballot && !(word & DECIDED_BIT)) {
        ftc_wire_header_t h;
        ftc_cop_header(op, &h, MSG_NEWER, a->ballot);
        (void)ftc_cop_send(op, from, &h, NULL, 0, false);
    }
}

/* What the agreement holds; then the operation itself. (An operation
 * that embeds the agreement keeps nothing else that needs freeing.) */
static void agree_destroy(ftc_cop_t *op)
{
    ftc_agree_t *a = (ftc_agree_t *)op;
    ftc_idset_t none = {0};
    if (a->phase != FTC_AGREE_DECIDED)
        ftc_agree_watch(a, &none);
    ftc_idset_free(&a->fail_acc);
    ftc_idset_free(&a->acc_failed);
    ftc_idset_free(&a->got_gather);
    ftc_idset_free(&a->got_ack);
    ftc_idset_free(&a->down);
    ftc_idset_free(&a->watching);
    ftc_idset_free(&a->failed);
    ftc_cop_delete(op);
}

static bool agree_msg_valid(const ftc_wire_header_t *hdr)
{
    return ftc_ulfm_msg_valid(hdr);
}

static const ftc_cop_vtable_t agree_vt = {
    .msg_valid = agree_msg_valid,
    .on_msg = agree_on_msg,
    .on_peer_failed = agree_on_peer_failed,
    .on_peer_progress = agree_on_peer_progress,
    .on_probe = agree_on_probe,
    .progress_word = agree_progress_word,
    .destroy = agree_destroy,
    .survives_stop = true, /* agreement is how members get past it */
};

static int agree_start(ftc_group_t *g, ftc_coll_t coll, uint32_t variant,
                       uint64_t timeout_ns, bool ready, uint64_t value,
                       void *recvbuf,
                       ftc_deliver_fn deliver, void *deliver_arg,
                       size_t op_size, const ftc_agree_hooks_t *hooks,
                       void (*prepare)(ftc_agree_t *a, void *arg),
                       void *prepare_arg, ftc_agree_t **out)
{
    ftc_coll_args_t args;
    ftc_coll_args_init(&args);
    args.algo = FTC_ALGO_ULFM;
    args.f = 0;
    args.dtype = FTC_UINT64;
    args.op = FTC_BAND;
    args.count = 1;
    args.recvbuf = recvbuf;
    args.deliver = deliver;
    args.deliver_arg = deliver_arg;
    args.timeout_ns = timeout_ns;
    ftc_agree_t *a = ftc_cop_new(g, op_size, 0);
    if (a == NULL)
        return FTC_ENOMEM;
    if (prepare != NULL)
        prepare(a, prepare_arg);
    /* The failure-free round goes into the signature (the default adds
     * nothing): a member that runs another one sees FTC_EMISMATCH from
     * the first message it gets from this one, and tells every member. */
    ftc_agree_round_t round = ftc_ulfm_group_round(g);
    ftc_cop_setup(g, &args, coll, &a->base, &agree_vt,
                  variant | (uint32_t)round << 8);
    a->radix = round == FTC_AGREE_ROUND_TREE  ? 1
               : round == FTC_AGREE_ROUND_RD4 ? 4
                                              : 2;
    a->hooks = hooks;
    a->ready = ready;
    /* (Not ready: all ones, AND's identity, until the input comes.) */
    a->input = ready ? value : UINT64_MAX;
    a->and_acc = a->input;
    a->ballot = 0;
    while (a->ballot < g->n && is_failed(a, a->ballot))
        a->ballot++;
    if (a->ballot >= g->n)
        a->ballot = g->me; /* (cannot happen: this process is alive) */
    a->parent = live_parent(a);
    ftc_cop_register(&a->base);
    ftc_agree_early_start(a);
    evaluate(a);
    ftc_cop_replay_pending(&a->base);
    *out = a;
    return FTC_OK;
}

int ftc_agree_start(ftc_group_t *g, ftc_coll_t coll, uint64_t value,
                    void *recvbuf, ftc_deliver_fn deliver, void *deliver_arg,
                    size_t op_size, const ftc_agree_hooks_t *hooks,
                    void (*prepare)(ftc_agree_t *a, void *arg),
                    void *prepare_arg, ftc_agree_t **out)
{
    return agree_start(g, coll, 0, 0, true, value, recvbuf, deliver,
                       deliver_arg, op_size, hooks, prepare, prepare_arg, out);
}

int ftc_agree_start_deferred(ftc_group_t *g, ftc_coll_t coll, uint32_t variant,
                             uint64_t timeout_ns, void *recvbuf,
                             ftc_deliver_fn deliver, void *deliver_arg,
                             size_t op_size, const ftc_agree_hooks_t *hooks,
                             ftc_agree_t **out)
{
    return agree_start(g, coll, variant, timeout_ns, false, UINT64_MAX,
                       recvbuf, deliver, deliver_arg, op_size, hooks, NULL,
                       NULL, out);
}

void ftc_agree_contribute(ftc_agree_t *a, uint64_t value)
{
    if (a->ready)
        return;
    a->ready = true;
    a->input = value;
    a->and_acc &= value;
    a->early_and &= value; /* (what arrived before is in it already) */
    evaluate(a);
}
