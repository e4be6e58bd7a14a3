/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FTCO collectives (Margolin & Barak, Algorithms 1-4; docs/ftco.md):
 * one process's role in a bcast, reduce or allreduce along one tree.
 *
 * Up (reduce, allreduce): a process waits for DATA from every process of
 * its Down set (its children at first), sends the aggregate to its Up (its
 * parent at first), then ACKs the children. Down (bcast, allreduce): a
 * process that has the value delivers it, sends it to its Down set and
 * ACKs its Up. Every DATA is ACKed but an allreduce's result to a
 * process that is not a root, without per-message timeouts: nobody
 * would act on that ACK (down_needs_no_ack); the sender watches the
 * receiver until the ACK (or, going up in an allreduce, the result)
 * arrives. In an allreduce the ACK of an UP rides on the result when the
 * two would go together (ack_waits_for_result; docs/ftco.md, "ACKs
 * carried by the result").
 *
 * Re-routing (Algorithm 4): when a process of Down fails, its children
 * join Down (several levels when they failed too), and are pulled with a
 * KEEPALIVE, since the failed one may have ACKed them already. When Up
 * fails, Up becomes its parent (again several levels), and the process
 * sends its DATA there again (up) or asks for the value (down). Whoever
 * has the value answers whoever asks, so a process the tree lost under a
 * failed chain is served from above.
 *
 * The root is not assumed immune (section 4's note): when it fails, its
 * first live child, in tree order, replaces it (when all its children
 * failed, the first live rank). The replacement gathers
 * from the root's other children (and, under failed ones, their
 * children): each answers with the result if it has one, else with its
 * DATA (allreduce) or "no value" (bcast), and from then on takes the
 * value from the replacement only. So all live processes end with the
 * same outcome (docs/ftco.md argues it).
 *
 * Multi-root trees, allreduce (exchange.h): the m roots send their own
 * trees' values to each other (EXCH) and each root that holds all m
 * folds them in root order and delivers, with no round trip through rank
 * 0, then sends the result to the other roots as well (xchg_share: the
 * wait that makes a stopped root accept its exclusion). A root leaves
 * this fast path for good when a root whose value it
 * lacks fails (it then sends its value to its Up as a plain child does,
 * and rank 0 gathers from every root), when it answers a gather, when it
 * becomes the acting root, when another root's UP reaches it, and when it
 * takes a result; a root that left never delivers from the exchange, and
 * whoever gathers adopts a result any root already holds. A gather
 * names the roots its sender counts failed, and whoever answers it holds
 * them failed too (gather_roots.h), so that if the gatherer fails no
 * succession leads to a root whose result it left out.
 * So an exchange's result and a gathered one never both reach live
 * processes (docs/ftco.md, "The roots' exchange", argues it).
 *
 * Failure detection: the core's failure monitor on each process waited on
 * (transport reports, else on-demand keepalive probes), shared by all
 * operations; with ack_timeout_ns, also the paper's per-message timeouts
 * (f_timeout, f_ETA: a late DATA, ACK or value earns a KEEPALIVE, an
 * unanswered KEEPALIVE excludes the peer, which refutes the verdict if it
 * answered in time: exclude). Contributions are counted exactly once
 * whatever the operator (partials.h).
 *
 * Ranks here are logical (the root is 0); state is kept only for the
 * processes the operation deals with (peers.h), so besides its
 * contributor sets (n bits each) an operation takes O(degree) memory.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "core/context.h"
#include "core/copy.h"
#include "core/cutoff.h"
#include "algo/ftco/exchange.h"
#include "algo/ftco/gather_roots.h"
#include "algo/ftco/ftco.h"
#include "algo/ftco/kinds.h"
#include "algo/ftco/node.h"
#include "algo/ftco/partials.h"
#include "algo/ftco/peers.h"
#include "algo/ftco/preorder.h"
#include "algo/ftco/rset.h"

/* Spans lent to each of an operation's own sets (up_set, result_set,
 * rx): a fault-free set is one span; each failure under it adds one. */
enum { FTCO_SET_SPANS = 4 };

enum {
    F_FAILED = 0x01, /* declared failed */
    F_WATCH = 0x02,  /* we hold a monitor watch on it */
    F_DOWN = 0x04,   /* in our Down set */
    F_WAIT = 0x08,   /* we wait for its DATA (or its gather answer) */
    F_DACK = 0x10,   /* we sent it the value and wait for the ACK */
    F_TOACK = 0x20,  /* we owe it the ACK of its DATA (ack_children) */
    F_SERVE = 0x40,  /* it asked for the value: send it when we have it */
    F_PULLED = 0x80  /* it pulled our DATA before we had it */
};

typedef struct ftco_op {
    ftc_cop_t base;
    uint32_t n, me;
    ftc_tree_t tree;
    bool has_up, has_down;
    ftco_peers_t peers;     /* flags and deadlines of the ranks we touch */
    bool any_failed;        /* some entry has F_FAILED (is_failed) */
    uint32_t rechecks;      /* entries whose watch is to be settled
                               (rewatch_at, settle_watches) */
    uint32_t *dl, ndl, capdl; /* the Down set, in order of joining */

    /* Up: */
    ftco_partials_t parts;
    /* A leaf's partials not made yet (parts_ready): its collection is
     * its own input, which up_set and up_val hold from its creation. */
    bool parts_lazy;
    uint32_t parts_cap;     /* (for parts_ready) */
    void *parts_room;
    bool collecting;        /* Down set not complete yet */
    uint32_t waiting;       /* members of Down with F_WAIT */
    bool up_done;           /* our DATA is computed (up_set, up_val) */
    bool up_sent, up_acked;
    ftco_rset_t up_set;     /* pre-order positions (rset.h) */
    uint8_t *up_val;
    int64_t up;             /* Up (logical), -1: we are the (acting) root */
    bool acting_root;
    bool committed;         /* answered a replacement root's gather */

    /* The roots' exchange (multi-root allreduce, at the m roots): */
    uint32_t m;             /* the tree's roots */
    bool xchg;              /* still on the exchange's fast path */
    ftco_exchange_t ex;     /* the roots' values received (and ours) */

    /* Down: */
    bool have_result;
    bool root_lost;         /* bcast: no live process had the value */
    uint8_t *result;
    ftco_rset_t result_set;
    ftco_rset_t rx;         /* scratch: the set of the DATA being read */
    uint32_t me_pos;        /* our pre-order position */
    uint32_t dack_pending;
    uint32_t ntoack;        /* entries with F_TOACK (ack_children) */
    bool done;

    /* Per-message timeouts (ack_timeout_ns > 0): per peer (peers.h), a
     * deadline and what it is for. */
    uint64_t ack_timeout;
    bool last_left;         /* the last send_msg has left already */
    uint64_t value_eta;     /* when the value from Up is due (its f_ETA,
                               from our start) */
} ftco_op_t;

enum {
    T_NONE = 0,
    T_ETA = 1,   /* it owes us DATA or an ACK: KEEPALIVE it then */
    T_DATA = 2,  /* we sent it DATA: no ACK by then, KEEPALIVE it */
    T_AWAIT = 3, /* we sent it a KEEPALIVE: no answer by then, it failed */
    /* With T_DATA or T_AWAIT: our message has not left yet (it waits in
     * the transport behind others); the timeout starts when it does
     * (ftco_on_sent), as the paper's LastSent[x] is when x was sent to. */
    T_PENDING = 0x80
};

static uint32_t gr(const ftco_op_t *o, uint32_t logical)
{
    return ftc_physical(logical, o->base.args.root, o->n);
}

static uint32_t world(const ftco_op_t *o, uint32_t logical)
{
    /* (Inline for the identity group: every watch asks.) */
    return ftc_group_world_of(o->base.group, gr(o, logical));
}

/* ---- per-peer state (peers.h) ----------------------------------------- */

static uint8_t fl(const ftco_op_t *o, uint32_t x)
{
    int64_t e = ftco_peers_find(&o->peers, x);
    return e < 0 ? 0 : o->peers.at[e].flag;
}

/* (Out of memory: the bits are lost, peers.nomem is set, and the
 * operation ends with FTC_ENOMEM when its event is handled: end_turn.) */
static void fl_set(ftco_op_t *o, uint32_t x, uint8_t bits)
{
    int64_t e = ftco_peers_get(&o->peers, x);
    if (e >= 0)
        o->peers.at[e].flag |= bits;
}

static void fl_clr(ftco_op_t *o, uint32_t x, uint8_t bits)
{
    int64_t e = ftco_peers_find(&o->peers, x);
    if (e >= 0)
        o->peers.at[e].flag &= (uint8_t)~bits;
}

/* Whether x is failed. No look-up while the operation knows of no
 * failure, the common case: every send asks. */
static bool is_failed(const ftco_op_t *o, uint32_t x)
{
    return o->any_failed && (fl(o, x) & F_FAILED);
}

static void settle_watches(ftco_op_t *o);

/* The end of an event's handling: the watches it no longer needs go
 * (rewatch_at), and an operation out of memory ends (its bits were lost,
 * peers.nomem is set). */
static void end_turn(ftco_op_t *o)
{
    settle_watches(o);
    if (o->peers.nomem && !o->base.delivered)
        ftc_cop_complete(&o->base, FTC_ENOMEM);
}

/* x's children, in tree order, into memory of our own: the caller frees
 * *list when it is not local (64 entries). 0 with *list NULL when out of
 * memory. */
static uint32_t children_of(const ftco_op_t *o, uint32_t x, uint32_t *local,
                            uint32_t **list)
{
    uint32_t cnt = ftc_tree_children(&o->tree, o->n, x, local, 64);
    *list = local;
    if (cnt <= 64)
        return cnt;
    *list = malloc(sizeof(uint32_t) * cnt);
    if (*list == NULL)
        return 0;
    return ftc_tree_children(&o->tree, o->n, x, *list, cnt);
}

/* The pre-order position (preorder.h) of entry e's rank (not ours),
 * kept in the entry; UINT32_MAX when out of memory (peers.nomem then
 * ends the operation). */
static uint32_t pos_at(ftco_op_t *o, int64_t e)
{
    if (o->peers.at[e].pos1 == 0) {
        uint32_t p = ftco_preorder_pos(&o->tree, o->n, o->peers.at[e].rank);
        if (p == UINT32_MAX) {
            o->peers.nomem = true;
            return p;
        }
        o->peers.at[e].pos1 = p + 1;
    }
    return o->peers.at[e].pos1 - 1;
}

/* x's pre-order position, the same way. */
static uint32_t pos_of(ftco_op_t *o, uint32_t x)
{
    if (x == o->me)
        return o->me_pos;
    int64_t e = ftco_peers_get(&o->peers, x);
    return e < 0 ? UINT32_MAX : pos_at(o, e);
}

/* ---- sending ---------------------------------------------------------- */

static void send_msg(ftco_op_t *o, uint32_t to, uint8_t kind, uint16_t flags,
                     const void *a, size_t alen, const void *b, size_t blen)
{
    if (is_failed(o, to))
        return;
    ftc_wire_header_t hdr;
    ftc_cop_header(&o->base, &hdr, kind, 0);
    hdr.flags |= flags;
    ftc_iov_t iov[2] = {{a, alen}, {b, blen}};
    o->last_left = true;
    if (o->ack_timeout > 0)
        (void)ftc_cop_send_timed(&o->base, gr(o, to), &hdr, iov, 2,
                                 &o->last_left);
    else
        (void)ftc_cop_send(&o->base, gr(o, to), &hdr, iov, 2, false);
}

static void t_sent(ftco_op_t *o, uint32_t x);
static void t_sent_at(ftco_op_t *o, int64_t e);

/* A DATA: the contributor set's wire form (rset.h), then the value. */
static void send_with_set(ftco_op_t *o, uint32_t to, uint8_t kind,
                          uint16_t flags, const ftco_rset_t *set,
                          const void *val)
{
    uint8_t local[256];
    size_t len = ftco_rset_wire_size(set);
    uint8_t *buf = len <= sizeof(local) ? local : malloc(len);
    if (buf == NULL) {
        o->peers.nomem = true;
        return;
    }
    ftco_rset_write(set, buf);
    send_msg(o, to, kind, flags, buf, len, val, o->base.nbytes);
    if (buf != local)
        free(buf);
}

static void send_up_data(ftco_op_t *o, uint32_t to)
{
    send_with_set(o, to, FTCO_MSG_UP, 0, &o->up_set, o->up_val);
    t_sent(o, to);
}

static void send_ack(ftco_op_t *o, uint32_t to, uint16_t flags)
{
    send_msg(o, to, FTCO_MSG_ACK, flags, NULL, 0, NULL, 0);
}

/* Whether the ACK of a child's UP waits for the result, which then
 * carries it (send_down; docs/ftco.md, "ACKs carried by the result"):
 * in an allreduce the child watches us until the result arrives whatever
 * the ACK says (needs_watch), so without per-message timeouts the ACK
 * tells it nothing it acts on. With them, a missing ACK would make the
 * child probe us after f_timeout, so it goes as the paper sends it,
 * unless the result leaves in the same turn. */
static bool ack_waits_for_result(const ftco_op_t *o)
{
    return o->base.coll == FTC_COLL_ALLREDUCE && o->ack_timeout == 0;
}

/* ---- watching ---------------------------------------------------------- */

static bool xchg_waits(const ftco_op_t *o, uint32_t x);
static void xchg_stop(ftco_op_t *o);

/* Whether we still wait on x for anything: its DATA, its ACK, (x our Up)
 * the ACK of our DATA or the value, or (x a root) its exchanged value.
 * flag is x's entry's (0 without one). */
static bool needs_watch(const ftco_op_t *o, uint32_t x, uint8_t flag)
{
    if (flag & F_FAILED)
        return false;
    if ((flag & (F_WAIT | F_DACK)) || xchg_waits(o, x))
        return true;
    if (o->up < 0 || x != (uint32_t)o->up || o->done)
        return false;
    if (o->base.coll == FTC_COLL_BCAST)
        return !o->have_result;
    if (o->base.coll == FTC_COLL_REDUCE)
        return o->up_sent && !o->up_acked;
    return o->up_sent && !o->have_result;
}

/* What we wait on x for changed: its watch is settled at the end of the
 * event (settle_watches), acquired if we now need it, released if we no
 * longer do. Not at once: within one event the same peer often stops and
 * starts being waited on (the root takes a child's DATA, then sends it
 * the result and waits for its ACK), and released and acquired the
 * monitor's watch for nothing: a clock read and the transport's unwatch
 * and watch calls (tests/test_ftco_watch.c counts them); and the same
 * entry is marked several times per event (its DATA in, the result out,
 * the operation done), where deciding once is enough: deciding at every
 * mark, a call of ~40 instructions, was about 200 per operation and
 * rank. Nothing reads a watch before the event ends: the monitor only
 * keeps it, and an operation's events all end in end_turn. x is entry
 * e's rank, or e is -1 (no entry yet). */
static void mark_watch(ftco_op_t *o, int64_t e)
{
    if (!o->peers.at[e].recheck) {
        o->peers.at[e].recheck = 1;
        o->rechecks++;
    }
}

static void rewatch_at(ftco_op_t *o, int64_t e, uint32_t x)
{
    if (e < 0) {
        /* No entry, so no watch: one is made only when it is needed. */
        if (!needs_watch(o, x, 0))
            return;
        e = ftco_peers_get(&o->peers, x);
        if (e < 0)
            return; /* (out of memory: the operation ends, end_turn) */
    }
    mark_watch(o, e);
}

static void rewatch(ftco_op_t *o, uint32_t x)
{
    rewatch_at(o, ftco_peers_find(&o->peers, x), x);
}

/* The watches this event marked are settled now (rewatch_at says why
 * not at once). */
static void settle_watches(ftco_op_t *o)
{
    if (o->rechecks == 0)
        return;
    uint32_t left = o->rechecks;
    o->rechecks = 0;
    for (uint32_t e = 0; e < o->peers.count && left > 0; e++) {
        ftco_peer_t *pe = &o->peers.at[e];
        if (!pe->recheck)
            continue;
        pe->recheck = 0;
        left--;
        bool need = needs_watch(o, pe->rank, pe->flag);
        if (need && !(pe->flag & F_WATCH)) {
            pe->flag |= F_WATCH;
            ftc_monitor_acquire(o->base.group->ctx, world(o, pe->rank),
                                &o->base);
        } else if (!need && (pe->flag & F_WATCH)) {
            pe->flag &= (uint8_t)~F_WATCH;
            ftc_monitor_release(o->base.group->ctx, world(o, pe->rank));
        }
    }
}

static void set_up(ftco_op_t *o, int64_t up)
{
    int64_t old = o->up;
    o->up = up;
    if (old >= 0)
        rewatch(o, (uint32_t)old);
    if (up >= 0)
        rewatch(o, (uint32_t)up);
}

/* ---- per-message timeouts (Appendix A) --------------------------------- */

static uint32_t depth_of(const ftco_op_t *o, uint32_t x)
{
    uint32_t d = 0;
    while (x != 0) {
        x = (uint32_t)ftc_tree_parent(&o->tree, o->n, x);
        d++;
    }
    return d;
}

/* Tree distance: the path from me to x, through their lowest common
 * ancestor. */
static uint32_t distance_to(const ftco_op_t *o, uint32_t x)
{
    uint32_t a = o->me, b = x, da = depth_of(o, a), db = depth_of(o, b), d = 0;
    for (; da > db; da--, d++)
        a = (uint32_t)ftc_tree_parent(&o->tree, o->n, a);
    for (; db > da; db--, d++)
        b = (uint32_t)ftc_tree_parent(&o->tree, o->n, b);
    for (; a != b; d += 2) {
        a = (uint32_t)ftc_tree_parent(&o->tree, o->n, a);
        b = (uint32_t)ftc_tree_parent(&o->tree, o->n, b);
    }
    return d > 0 ? d : 1;
}

/* The roots besides x's tree parent that x answers: in a multi-root
 * allreduce a root other than 0 exchanges with the m - 1 other roots,
 * one of which (0) is its parent in the tree functions, the rest
 * counted nowhere else. 0 for everyone else. */
static uint32_t other_roots(const ftco_op_t *o, uint32_t x)
{
    return o->base.coll == FTC_COLL_ALLREDUCE && o->m >= 3 && x > 0
                   && x < o->m
               ? o->m - 2
               : 0;
}

/* f_timeout(me, x) for x of entry e: a busier and a farther receiver
 * answers later (Appendix A: proportional to x's degree and to the
 * distance). x's degree is its parent, its children and, at a root of a
 * multi-root allreduce, the other roots: a root answers the KEEPALIVEs
 * of all of them, and counting its children only made a late root's
 * answer to the last of several roots arrive past the timeout
 * (docs/ftco.md, "Late processes"). Kept in the entry (our parent's and
 * children's come from the group's node at creation: node.h), as the
 * tree walks it takes cost more than the rest of arming a timeout. */
static uint64_t f_timeout(ftco_op_t *o, int64_t e)
{
    ftco_peer_t *pe = &o->peers.at[e];
    if (pe->tunits != 0)
        return o->ack_timeout * pe->tunits;
    uint32_t kids = ftc_tree_children(&o->tree, o->n, pe->rank, NULL, 0);
    uint64_t units = (1 + (uint64_t)kids + other_roots(o, pe->rank))
                     * distance_to(o, pe->rank);
    if (units <= UINT32_MAX)
        pe->tunits = (uint32_t)units;
    return o->ack_timeout * units;
}

/* f_ETA(x) for x of entry e in units of the timeout base: 2 + the bit
 * length of its subtree's size, so 3 exactly when x is a leaf. Kept in
 * the entry (our children's come from the group's node: node.h). */
static uint8_t eta_units(ftco_op_t *o, int64_t e)
{
    ftco_peer_t *pe = &o->peers.at[e];
    if (pe->eta == 0)
        pe->eta = (uint8_t)(2 + ftc_bit_length32(
                                    ftc_tree_subtree_size(&o->tree, o->n,
                                                          pe->rank)));
    return pe->eta;
}

/* f_ETA(x) for x of entry e: when x's DATA is due, a hop per level of
 * its subtree. Kept in the entry, as f_timeout. */
static uint64_t f_eta(ftco_op_t *o, int64_t e)
{
    return o->ack_timeout * eta_units(o, e);
}

/* When x of entry e is due, and for what. */
static void t_arm(ftco_op_t *o, int64_t e, uint64_t at, uint8_t state)
{
    if (o->ack_timeout == 0 || (o->peers.at[e].flag & F_FAILED))
        return;
    o->peers.at[e].deadline = at;
    o->peers.at[e].tstate = state;
    /* (A done operation's timer would find nothing to do: ftco_on_timer
     * returns at once. Not armed, it costs the core's heap of timers
     * nothing while it lingers: check_done.) */
    if ((state & T_PENDING) || o->done)
        return;
    if (o->base.timer.at == 0 || at < o->base.timer.at)
        ftc_cop_timer_arm(&o->base, at);
}

/* x's entry for a timeout, or -1 (no timeouts, or out of memory). */
static int64_t t_entry(ftco_op_t *o, uint32_t x)
{
    return o->ack_timeout > 0 ? ftco_peers_get(&o->peers, x) : -1;
}

/* We sent x a DATA: its ACK may wait for x's own progress (a process
 * ACKs its children after its DATA went up), so a late ACK only makes us
 * ask x whether it is alive. */
static void t_sent_at(ftco_op_t *o, int64_t e)
{
    if (o->ack_timeout > 0)
        t_arm(o, e, ftc_cop_now(&o->base) + f_timeout(o, e),
              o->last_left ? T_DATA : T_DATA | T_PENDING);
}

static void t_sent(ftco_op_t *o, uint32_t x)
{
    int64_t e = t_entry(o, x);
    if (e >= 0)
        t_sent_at(o, e);
}

/* We sent x a KEEPALIVE, which x answers at once: in time, or it failed. */
static void t_asked(ftco_op_t *o, uint32_t x)
{
    int64_t e = t_entry(o, x);
    if (e >= 0)
        t_arm(o, e, ftc_cop_now(&o->base) + f_timeout(o, e),
              o->last_left ? T_AWAIT : T_AWAIT | T_PENDING);
}

/* Our DATA or KEEPALIVE to grank has left: its timeout starts now. */
static void ftco_on_sent(ftc_cop_t *op, uint32_t grank)
{
    ftco_op_t *o = (ftco_op_t *)op;
    if (o->ack_timeout == 0 || o->done)
        return;
    uint32_t x = ftc_logical(grank, op->args.root, o->n);
    int64_t e = ftco_peers_find(&o->peers, x);
    if (e >= 0 && (o->peers.at[e].tstate & T_PENDING))
        t_arm(o, e, ftc_cop_now(op) + f_timeout(o, e),
              (uint8_t)(o->peers.at[e].tstate & ~T_PENDING));
}

/* Our KEEPALIVE to x went unanswered for wait_ns. Suspicion is final,
 * as the monitor's: the peer, if only slow, learns it was excluded
 * (core/monitor.c does the same). The notice says how long we waited, so
 * that a live x that answered our KEEPALIVE in time refutes it as it
 * refutes an expired probe: it is our own messages that were late
 * (core/cutoff.c; docs/ftco.md, "A slow or stopped process", rule 8). */
static void exclude(ftco_op_t *o, uint32_t x, uint64_t wait_ns)
{
    ftc_context_t *ctx = o->base.group->ctx;
    uint64_t us = (wait_ns + 999) / 1000;
    (void)ftc_ctx_send_control_ex(ctx, world(o, x), FTC_MSG_EXCLUDED, NULL,
                                  us > UINT32_MAX ? UINT32_MAX : (uint32_t)us,
                                  0, FTC_EXCLUDED_ASK_EXPIRED);
    ftc_ctx_declare_observed_failed(ctx, world(o, x));
}

/* ---- the Down set ------------------------------------------------------ */

static void send_down(ftco_op_t *o, uint32_t x);
static void add_down(ftco_op_t *o, uint32_t x, bool pull);

/* The partials made, if a leaf put them off (parts_lazy): its own
 * input their first value, as any operation's at its creation. A leaf
 * that no failure makes gather sends its input up and never needs them:
 * their set-up, the merge, the cover and the fold were ~250 instructions
 * per leaf and operation. false when out of memory (peers.nomem set). */
static bool parts_ready(ftco_op_t *o)
{
    if (!o->parts_lazy)
        return true;
    o->parts_lazy = false;
    ftco_span_t me_span = {o->me_pos, o->me_pos + 1};
    ftco_rset_t mine;
    ftco_rset_lend(&mine, &me_span, 1);
    mine.count = 1;
    if (ftco_partials_init(&o->parts, o->base.nbytes, o->parts_cap,
                           o->parts_room) != FTC_OK
        || ftco_partials_merge(&o->parts, &mine, o->up_val) < 0) {
        o->peers.nomem = true;
        return false;
    }
    return true;
}

/* Is the part of the collection of entry e's rank in: its DATA (up),
 * or its gather answer. */
static bool covered(ftco_op_t *o, int64_t e)
{
    return parts_ready(o) && ftco_partials_has(&o->parts, pos_at(o, e));
}

/* Whether position p is in set: one span inline (a fault-free DATA's). */
static bool in_set(const ftco_rset_t *set, uint32_t p)
{
    if (set->count == 1)
        return set->s[0].lo <= p && p < set->s[0].hi;
    return ftco_rset_has(set, p);
}

/* We no longer wait for the DATA of entry e's rank. */
static void resolve_at(ftco_op_t *o, int64_t e)
{
    if (e < 0 || !(o->peers.at[e].flag & F_WAIT))
        return;
    o->peers.at[e].flag &= (uint8_t)~F_WAIT;
    o->waiting--;
    rewatch_at(o, e, o->peers.at[e].rank);
}

static void resolve(ftco_op_t *o, uint32_t x)
{
    resolve_at(o, ftco_peers_find(&o->peers, x));
}

/* x failed: its children take its place in Down (Algorithm 4, line 11). */
static void expand(ftco_op_t *o, uint32_t x)
{
    uint32_t local[64], *list;
    uint32_t cnt = children_of(o, x, local, &list);
    if (list == NULL) {
        /* Out of memory with x's children unknown: we cannot finish
         * without them, and must not hang. */
        if (!o->base.delivered)
            ftc_cop_complete(&o->base, FTC_ENOMEM);
        return;
    }
    for (uint32_t i = 0; i < cnt; i++)
        add_down(o, list[i], true);
    if (list != local)
        free(list);
}

/* A replacement root's gather KEEPALIVE to x. In a multi-root allreduce
 * it names the roots we count failed (gather_roots.h): x, answering,
 * holds them failed too, so that if we fail its succession does not lead
 * it to one of them, which may hold the exchange's result while we
 * delivered one without it (docs/ftco.md, "The roots' exchange", rule 7).
 * Nothing is added without failures (no gather), nor on single trees.
 * Cold, as the other sends of rule 7: only failures lead here. */
__attribute__((cold))
static void send_gather(ftco_op_t *o, uint32_t x)
{
    uint32_t k = 0, *roots = NULL;
    if (o->m >= 2 && o->base.coll == FTC_COLL_ALLREDUCE && o->any_failed) {
        for (uint32_t r = 0; r < o->m; r++)
            k += r != o->me && is_failed(o, r);
        if (k > 0 && (roots = malloc(sizeof(uint32_t) * k)) == NULL) {
            o->peers.nomem = true;
            return;
        }
        k = 0;
        for (uint32_t r = 0; r < o->m && roots != NULL; r++)
            if (r != o->me && is_failed(o, r))
                roots[k++] = r;
    }
    send_msg(o, x, FTCO_MSG_KEEPALIVE, FTCO_WF_GATHER, roots,
             sizeof(uint32_t) * k, NULL, 0);
    free(roots);
}

/* The KEEPALIVE that pulls x into our Down set: a gather when we
 * replace the root. Cold, as send_gather: only failures pull. */
__attribute__((cold))
static void send_pull(ftco_op_t *o, uint32_t x)
{
    if (o->acting_root)
        send_gather(o, x);
    else
        send_msg(o, x, FTCO_MSG_KEEPALIVE, 0, NULL, 0, NULL, 0);
}

static void add_down(ftco_op_t *o, uint32_t x, bool pull)
{
    if (x == o->me)
        return;
    /* (The entry is made now: x joins Down, or it is out of memory.
     * Nothing below inserts another before the last use of e.) */
    int64_t e = ftco_peers_get(&o->peers, x);
    if (e < 0 || (o->peers.at[e].flag & F_DOWN))
        return;
    if (o->ndl == o->capdl) {
        /* From the operation's memory, as the first list was (the old
         * one goes with the operation: doubling, at most twice the
         * last list's size in all). */
        uint32_t cap = o->capdl * 2;
        uint32_t *dl = cap > o->capdl
                           ? ftc_cop_alloc(&o->base, sizeof(uint32_t) * cap)
                           : NULL;
        if (dl == NULL) {
            o->peers.nomem = true;
            return;
        }
        memcpy(dl, o->dl, sizeof(uint32_t) * o->ndl);
        o->dl = dl;
        o->capdl = cap;
    }
    o->peers.at[e].flag |= F_DOWN;
    o->dl[o->ndl++] = x;
    if (o->peers.at[e].flag & F_FAILED) {
        expand(o, x);
        return;
    }
    if (o->collecting && !covered(o, e)) {
        o->peers.at[e].flag |= F_WAIT;
        o->waiting++;
        rewatch_at(o, e, x);
        if (pull) {
            send_pull(o, x);
            t_asked(o, x);
        } else if (o->ack_timeout > 0) {
            t_arm(o, e, ftc_cop_now(&o->base) + f_eta(o, e), T_ETA);
        }
    }
    if (o->have_result && o->has_down)
        send_down(o, x);
}

/* ---- completion -------------------------------------------------------- */

/* The collection is over (we have the value): wait on nobody for DATA. */
static void stop_waiting(ftco_op_t *o)
{
    o->collecting = false;
    for (uint32_t i = 0; i < o->ndl && o->waiting > 0; i++)
        resolve(o, o->dl[i]);
}

static void check_done(ftco_op_t *o)
{
    if (o->done || !o->base.delivered || o->dack_pending > 0)
        return;
    if (o->base.coll == FTC_COLL_REDUCE && o->up >= 0 && !o->up_acked)
        return;
    o->done = true;
    /* Nothing is due to a done operation (ftco_on_timer returns at
     * once): its timer goes, so that the 64 operations lingering after
     * it (core/op.h) keep no timer armed in the core's heap. */
    ftc_cop_timer_cancel(&o->base);
    stop_waiting(o);
    /* Being done changes what we wait on Up for only (needs_watch): the
     * others' waits are their flags, which stop_waiting settled. */
    if (o->up >= 0)
        rewatch(o, (uint32_t)o->up);
    /* Stay to answer: a process re-routed to us, or pulled by a process
     * above a failed one, still needs our DATA or our value. */
    ftc_cop_linger(&o->base);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The ranks whose contribution a result with this set misses, in
 * logical order (every process lists them alike): O(missing), not O(n). */
static void set_missing(ftco_op_t *o, const ftco_rset_t *set)
{
    /* Fault-free, the common case: one span of every position, nobody
     * to list (no count, no carving, no sort, no copy, and no call to
     * empty a list the operation never had). */
    uint64_t k = set->count == 1 && set->s[0].lo == 0 && set->s[0].hi == o->n
                     ? 0
                     : ftco_rset_missing(set, o->n, NULL, 0);
    if (k == 0) {
        if (o->base.comp_failed != NULL || o->base.comp.nfailed > 0)
            (void)ftc_cop_set_failed(&o->base, NULL, 0);
        o->base.comp.failed_count = 0;
        return;
    }
    uint32_t *miss = ftc_cop_alloc(&o->base, sizeof(uint32_t) * (k > 0 ? k : 1));
    if (miss == NULL)
        return;
    (void)ftco_rset_missing(set, o->n, miss, k);
    for (uint64_t i = 0; i < k; i++) {
        miss[i] = ftco_preorder_rank(&o->tree, o->n, miss[i]);
        if (miss[i] == UINT32_MAX) {
            o->peers.nomem = true;
            return;
        }
    }
    qsort(miss, (size_t)k, sizeof(uint32_t), cmp_u32);
    for (uint64_t i = 0; i < k; i++)
        miss[i] = gr(o, miss[i]);
    (void)ftc_cop_set_failed(&o->base, miss, (uint32_t)k);
    o->base.comp.failed_count = (uint32_t)k;
}

/* Whether the allreduce's result to entry e's rank goes without an ACK
 * (FTCO_WF_NO_ACK; docs/ftco.md, "No ACK of the result"): x is not one
 * of the tree's roots. The ACK of a DOWN tells its sender that x holds
 * the value, which the sender uses only when x fails: x's children then
 * join its Down set (expand) and are sent the value. A leaf has none.
 * An inner node's children need no push from above: in an allreduce
 * each of them watches its Up until the value arrives (needs_watch) and,
 * when Up fails, re-routes its DATA to Up's parent (Algorithm 4), which
 * answers with the value it holds (on_up), lingering if it is done; so
 * the expansion only did sooner what the children do anyway, and no
 * DATA, value or answer waits on the ACK. A stopped receiver is found by
 * the next allreduce, whose collection waits for its DATA. A bcast keeps
 * the ACK (nobody waits for a bcast process's DATA: it is what finds a
 * stopped one, and a bcast child asks for the value, it has no DATA to
 * re-route), and so do the roots of a multi-root tree (xchg_share needs
 * the wait). So do per-message timeouts: there a late ACK is also the
 * sender's own evidence that it is the one cut off (a root whose
 * messages are late times out its children and so holds most of the
 * group failed by its own timeouts, which makes it accept its exclusion:
 * core/dispatch.c); without the leaves' ACKs a slow root of the
 * multi-root 3-nomial tree at n = 5 kept a result the others did not
 * share (the checker's ftco-exchange-stopped-each-exhaustive-f2). */
static bool down_needs_no_ack(ftco_op_t *o, int64_t e)
{
    return o->base.coll == FTC_COLL_ALLREDUCE && o->ack_timeout == 0
           && o->peers.at[e].rank >= o->m;
}

/* The value to the rank of entry e. Inserts no entry. */
static void send_down_at(ftco_op_t *o, int64_t e)
{
    ftco_peer_t *pe = &o->peers.at[e];
    uint32_t x = pe->rank;
    if (x == o->me || (pe->flag & (F_DACK | F_FAILED)))
        return;
    /* An ACK we owe x for its DATA rides on the value (FTCO_WF_ACK_UP):
     * one message instead of two. */
    uint16_t acks = 0;
    if (pe->flag & F_TOACK) {
        acks = FTCO_WF_ACK_UP;
        o->ntoack--;
    }
    pe->flag &= (uint8_t)~(F_SERVE | F_TOACK);
    bool no_ack = down_needs_no_ack(o, e);
    if (no_ack) {
        /* (Nothing we wait on x for changed: no rewatch.) */
        acks |= FTCO_WF_NO_ACK;
    } else {
        pe->flag |= F_DACK;
        o->dack_pending++;
        rewatch_at(o, e, x);
    }
    if (o->root_lost)
        send_msg(o, x, FTCO_MSG_DOWN, FTCO_WF_ROOT_LOST | acks, NULL, 0,
                 NULL, 0);
    else if (o->base.coll == FTC_COLL_ALLREDUCE)
        send_with_set(o, x, FTCO_MSG_DOWN, acks, &o->result_set, o->result);
    else
        send_msg(o, x, FTCO_MSG_DOWN, acks, o->result, o->base.nbytes, NULL,
                 0);
    if (!no_ack)
        t_sent_at(o, e);
}

static void send_down(ftco_op_t *o, uint32_t x)
{
    if (x == o->me)
        return;
    int64_t e = ftco_peers_get(&o->peers, x);
    if (e >= 0)
        send_down_at(o, e);
}

static void xchg_share(ftco_op_t *o);
static void ack_children(ftco_op_t *o);

/* What we deliver names these processes failed: the ranks an allreduce's
 * result lists, or a bcast's root when there is no value. They are
 * failed here too from now on (learnt, not observed: core/dispatch.c),
 * as the corrected family adopts its result's list. Suspicion is final
 * and the group's word on them is out: one of them that is only stopped
 * must not stay live beside it, and it need not learn it from whoever
 * judged it, who may have crashed since (a stopped root whose children
 * timed it out, replaced it and crashed; its late value then reached the
 * others, which had delivered FTC_EROOT_FAILED from the replacement). A
 * late message of it now earns the core's "heard you" notice, which
 * excludes it. */
static void adopt_failed(ftco_op_t *o)
{
    ftc_context_t *ctx = o->base.group->ctx;
    if (o->root_lost) {
        if (o->me != 0)
            ftc_ctx_declare_failed(ctx, world(o, 0));
        return;
    }
    if (o->base.coll != FTC_COLL_ALLREDUCE)
        return;
    for (uint32_t i = 0; i < o->base.comp.nfailed; i++) {
        uint32_t w = ftc_group_world_rank(o->base.group, o->base.comp.failed[i]);
        if (w != ctx->rank)
            ftc_ctx_declare_failed(ctx, w);
    }
}

/* We have the value (or know there is none): deliver, pass it on. */
static void accept_result(ftco_op_t *o, const ftco_rset_t *set,
                          const void *val, bool root_lost)
{
    ftc_cop_t *op = &o->base;
    o->have_result = true;
    o->root_lost = root_lost;
    stop_waiting(o);
    /* (Delivered already only after an out-of-memory end: the caller's
     * buffer is no longer ours to write.) */
    if (!root_lost) {
        if (op->nbytes > 0 && o->result != val)
            ftc_copy_bytes(o->result, val, op->nbytes);
        if (set != NULL && ftco_rset_copy(&o->result_set, set) != FTC_OK) {
            o->peers.nomem = true;
            return;
        }
        if (op->nbytes > 0 && op->args.recvbuf != NULL && !op->delivered)
            ftc_copy_bytes(op->args.recvbuf, o->result, op->nbytes);
        if (op->coll == FTC_COLL_ALLREDUCE && !op->delivered)
            set_missing(o, &o->result_set);
    }
    if (o->up >= 0)
        rewatch(o, (uint32_t)o->up);
    for (uint32_t e = 0; e < o->peers.count; e++)
        if (o->peers.at[e].flag & (F_DOWN | F_SERVE))
            send_down_at(o, e);
    /* ACKs held for the result and not carried by it (a DATA from a
     * process outside our Down set) go on their own. */
    if (ack_waits_for_result(o))
        ack_children(o);
    /* A root on the exchange sends the result to the other roots too,
     * after its own tree (xchg_share says why), and is done with the
     * exchange (its own result, or one sent to it: the same value, the
     * exchange's result being unique). */
    xchg_share(o);
    xchg_stop(o);
    if (!op->delivered)
        adopt_failed(o);
    ftc_cop_complete(op, root_lost ? FTC_EROOT_FAILED : FTC_OK);
    check_done(o);
}

/* The children whose DATA we took: their value is on its way. A child
 * that was sent the allreduce's result already needs no ACK: the result
 * says more (it happens where ACKs wait for the result: the roots'
 * exchange, try_up). */
static void ack_children(ftco_op_t *o)
{
    if (ack_waits_for_result(o) && !o->have_result)
        return; /* the result carries them (send_down) */
    /* (No walk of the table when nobody is owed one: it runs two or
     * three times per operation, and in an allreduce the result carried
     * the ACKs already, send_down_at.) */
    if (o->ntoack == 0)
        return;
    o->ntoack = 0; /* the walk clears every F_TOACK */
    bool sent_result = o->have_result && !o->root_lost
                       && o->base.coll == FTC_COLL_ALLREDUCE;
    for (uint32_t e = 0; e < o->peers.count; e++) {
        uint8_t f = o->peers.at[e].flag;
        if (!(f & F_TOACK))
            continue;
        o->peers.at[e].flag &= (uint8_t)~F_TOACK;
        if (!(sent_result && (f & (F_DOWN | F_DACK))))
            send_ack(o, o->peers.at[e].rank, FTCO_WF_ACK_UP);
    }
}

/* The reduce's root delivers a result that lists these ranks as failed.
 * Whoever judged one of them (a process below, whose DATA left it out)
 * told it, unless the judge failed before its verdict arrived, or the
 * verdict was refuted (core/cutoff.c: a process whose messages are slow
 * takes its judge for one that hears nobody). A listed process that is
 * alive must not stay so: it is told here, once, that it was excluded
 * (a dead one ignores it), and is failed from now on at the root, which
 * answers any late message of it so (core/dispatch.c). The ranks the
 * root judged itself were told already. */
static void exclude_missing(ftco_op_t *o)
{
    ftc_context_t *ctx = o->base.group->ctx;
    for (uint32_t i = 0; i < o->base.comp.nfailed; i++) {
        uint32_t g = o->base.comp.failed[i];
        uint32_t w = ftc_group_world_rank(o->base.group, g);
        if (ftc_ctx_is_failed(ctx, w))
            continue;
        (void)ftc_ctx_send_control(ctx, w, FTC_MSG_EXCLUDED, NULL, 0);
        ftc_ctx_declare_failed(ctx, w);
    }
}

static void xchg_publish(ftco_op_t *o);
static void xchg_try(ftco_op_t *o);
static void xchg_fall_back(ftco_op_t *o);

/* The Down set is complete: compute our DATA and send it up, or, at the
 * (acting) root, it is the result. */
static void try_up(ftco_op_t *o)
{
    ftc_cop_t *op = &o->base;
    if (!o->collecting || o->waiting > 0 || o->have_result)
        return;
    o->collecting = false;
    if (op->coll == FTC_COLL_BCAST) {
        /* A replacement root heard "no value" from every live process
         * below the failed root. */
        accept_result(o, NULL, NULL, true);
        return;
    }
    o->up_done = true;
    /* (A leaf without partials, parts_lazy: up_set and up_val hold its
     * input already, which is what its partials would give.) */
    if (!o->parts_lazy) {
        const ftco_rset_t *cover = ftco_partials_cover(&o->parts);
        if (cover == NULL || ftco_rset_copy(&o->up_set, cover) != FTC_OK) {
            o->peers.nomem = true;
            return;
        }
        ftco_partials_fold(&o->parts, op, o->up_val);
    }
    if (o->xchg) {
        /* A root on the exchange's path: our tree's value goes to the
         * other roots, and the result is ours to compute. The children's
         * ACKs wait until the result went down to them (or the exchange
         * ended): sent now, they would hold our DOWNs back in the send
         * queue (a 9-nomial root has ~30 children), and the children
         * wait on us for the value anyway. */
        xchg_publish(o);
        if (o->committed && o->up >= 0) {
            /* (Only under the checker's no-commit mutant: a root that
             * answered a gather is still on the exchange. Its answer
             * goes to the gatherer all the same.) */
            o->up_acked = false;
            send_up_data(o, (uint32_t)o->up);
        }
        xchg_try(o);
        check_done(o);
        return;
    }
    if (o->up < 0) {
        if (op->coll == FTC_COLL_REDUCE && !op->delivered) {
            if (op->nbytes > 0 && op->args.recvbuf != NULL)
                ftc_copy_bytes(op->args.recvbuf, o->up_val, op->nbytes);
            set_missing(o, &o->up_set);
            o->have_result = true;
            exclude_missing(o);
            ftc_cop_complete(op, FTC_OK);
        } else if (op->coll == FTC_COLL_REDUCE) {
            o->have_result = true;
        } else {
            accept_result(o, &o->up_set, o->up_val, false);
        }
    } else {
        o->up_sent = true;
        o->up_acked = false;
        send_up_data(o, (uint32_t)o->up);
        rewatch(o, (uint32_t)o->up);
        for (uint32_t e = 0; e < o->peers.count; e++) {
            uint32_t x = o->peers.at[e].rank;
            if ((o->peers.at[e].flag & F_PULLED) && x != (uint32_t)o->up) {
                o->peers.at[e].flag &= (uint8_t)~F_PULLED;
                send_up_data(o, x);
            }
        }
    }
    /* Children are ACKed after our DATA went up (Algorithm 3): an ACK
     * tells a child its value is on its way. */
    ack_children(o);
    check_done(o);
}

/* ---- the roots' exchange (multi-root allreduce) ------------------------ */

/* Whether we still wait for root x's value in the exchange. */
static bool xchg_waits(const ftco_op_t *o, uint32_t x)
{
    return o->xchg && x < o->m && x != o->me && !ftco_exchange_has(&o->ex, x);
}

/* Leave the exchange for good: what it held is forgotten (whoever
 * gathers asks the roots again), and nobody is watched for it. */
static void xchg_stop(ftco_op_t *o)
{
    if (!o->xchg)
        return;
    o->xchg = false;
    ftco_exchange_clear(&o->ex);
    for (uint32_t r = 0; r < o->m; r++)
        if (r != o->me)
            rewatch(o, r);
    /* Our value went out: the ACKs held back (try_up) are due. */
    if (o->up_done)
        ack_children(o);
}

/* Our tree's value is computed: it goes to every other root, starting
 * with the next one, so that no root is everyone's first receiver.
 * Never inlined: inlined into try_up with send_with_set inside it, its
 * 256-byte buffer joined try_up's frame on every tree, the single ones
 * included (the compiler's growth budget grows with this file: 4
 * instructions per message more at n = 2, bench/callgrind_core.sh). It
 * runs once per operation at a root of a multi-root tree. */
__attribute__((noinline))
static void xchg_publish(ftco_op_t *o)
{
    if (ftco_exchange_put(&o->ex, o->me, &o->up_set, o->up_val) < 0) {
        o->peers.nomem = true;
        return;
    }
    for (uint32_t i = 1; i < o->m; i++)
        send_with_set(o, (o->me + i) % o->m, FTCO_MSG_EXCH, 0, &o->up_set,
                      o->up_val);
    if (o->up >= 0) {
        /* Rank 0 has our value as the exchange's: nothing to ACK, and if
         * the exchange fails we send it up again (xchg_fall_back). */
        o->up_sent = true;
        o->up_acked = true;
        rewatch(o, (uint32_t)o->up);
    }
}

/* All m values are in: the result, computed alike at every root that has
 * them (exchange.h), delivered and sent down our own tree. */
static void xchg_try(ftco_op_t *o)
{
    if (!o->xchg || !o->up_done || o->have_result
        || !ftco_exchange_full(&o->ex))
        return;
    ftco_rset_t set = {0};
    int rc = ftco_exchange_fold(&o->ex, &o->base, o->result, &set);
    if (rc == FTC_ENOMEM) {
        o->peers.nomem = true;
        return;
    }
    if (rc != FTC_OK) {
        /* Overlapping sets cannot come from the roots' disjoint trees;
         * should they, the single combiner's partials sort them out. */
        ftco_rset_free(&set);
        xchg_fall_back(o);
        return;
    }
    /* (accept_result sends the value down, then leaves the exchange,
     * which sends the ACKs held back.) */
    accept_result(o, &set, o->result, false);
    ftco_rset_free(&set);
}

/* We deliver the exchange's result: every other root joins our Down set,
 * so it is sent the result and ACKs it, and a failed one's children are
 * sent it in its place (expand), several levels down: a root that
 * delivered waits on the other roots and their trees as rank 0 does on
 * its children and theirs in the single tree. Without that wait a
 * root cut off from the others (stopped: its messages late) owes nobody
 * anything once the values are in, times out only its own children, and
 * so, told it was excluded by a child that timed it out, finds too few
 * processes failed to accept the verdict (core/dispatch.c): it stays
 * live with the exchange's result while the child delivers the gathered
 * one. With the wait it times out the world, as the single tree's root
 * does (the roots alone were not enough: 9 of 19 at n = 20, 8 roots,
 * rank 0 stopped). A root still on the exchange takes the result from
 * another root (the exchange's result is unique); one that left it does
 * not (on_down). The DOWNs go after our own tree's: they are for the
 * wait, and would hold our children's value back in the send queue. */
static void xchg_share(ftco_op_t *o)
{
    if (!o->xchg || o->root_lost)
        return;
    for (uint32_t r = 0; r < o->m; r++)
        add_down(o, r, false);
}

/* A root whose value we lack failed, or the exchange cannot finish for
 * another reason: back to the single tree. A root that is not the
 * combiner sends its value to its Up as a plain child would (the value
 * comes back from there); the combiner (rank 0: whoever replaced it left
 * the exchange already) gathers from every root, so that a result some
 * root computed from the exchange is found and adopted. */
static void xchg_fall_back(ftco_op_t *o)
{
    if (!o->xchg)
        return;
    if (o->up >= 0) {
        xchg_stop(o);
        if (o->up_sent && !o->have_result) {
            o->up_acked = false;
            send_up_data(o, (uint32_t)o->up);
            rewatch(o, (uint32_t)o->up);
        }
        /* (Not computed yet: try_up sends it up when it is.) */
        return;
    }
    if (ftco_exchange_mutant == FTCO_MUTANT_KEEP_VALUES) {
        /* The checker's mutant: trust the values held and ask nobody
         * who sent one (docs/ftco.md says what goes wrong). */
        for (uint32_t r = 1; r < o->m && parts_ready(o); r++)
            if (ftco_exchange_has(&o->ex, r)
                && ftco_partials_merge(&o->parts, &o->ex.sets[r],
                                       o->ex.vals + (size_t)r * o->ex.nbytes)
                       < 0)
                o->peers.nomem = true;
    }
    xchg_stop(o);
    if (o->have_result)
        return;
    /* Our KEEPALIVEs are gathers from now on: a root that answers one
     * takes the value from us only, and one that has a result sends it. */
    o->acting_root = true;
    o->committed = false;
    o->collecting = true;
    o->up_done = false;
    for (uint32_t r = 1; r < o->m; r++)
        add_down(o, r, true);
    try_up(o);
}

/* Root s's value. */
static void on_exch(ftco_op_t *o, uint32_t s, const ftco_rset_t *set,
                    const uint8_t *val)
{
    /* Left the exchange: whoever gathers asks s again. */
    if (!o->xchg || s >= o->m || s == o->me)
        return;
    int rc = ftco_exchange_put(&o->ex, s, set, val);
    if (rc < 0) {
        o->peers.nomem = true;
        return;
    }
    rewatch(o, s);
    xchg_try(o);
}

/* A root that failed before its value reached us ends the fast path. */
static void xchg_on_failed(ftco_op_t *o, uint32_t x)
{
    if (o->xchg && x < o->m && !ftco_exchange_has(&o->ex, x))
        xchg_fall_back(o);
}

/* ---- root replacement and re-routing up -------------------------------- */

static void become_acting_root(ftco_op_t *o)
{
    /* The replacement gathers: the exchange is over for it, and what it
     * held is asked again (xchg_fall_back says why). */
    xchg_stop(o);
    o->acting_root = true;
    /* We may have answered an earlier replacement's gather; now we are
     * the one whose gather is answered, with the value if anyone has it. */
    o->committed = false;
    set_up(o, -1);
    if (o->have_result)
        return;
    /* Gather again, from the failed root's children down. Our own DATA
     * stays in the partials; what comes now joins it. */
    o->collecting = true;
    o->up_done = false;
    o->up_sent = false;
    add_down(o, 0, true);
    try_up(o);
}

/* Up failed: route around it (Algorithm 4, line 9), several levels if
 * need be; the root's place goes to its first live child. */
static void reroute_up(ftco_op_t *o)
{
    ftc_cop_t *op = &o->base;
    uint32_t x = (uint32_t)o->up;
    int64_t next = -1;
    while (next < 0) {
        if (x == 0) {
            if (op->coll == FTC_COLL_REDUCE) {
                /* Nobody is left to receive a reduce's result: ours is
                 * done. */
                set_up(o, -1);
                o->up_acked = true;
                o->collecting = false;
                ack_children(o);
                if (!op->delivered)
                    ftc_cop_complete(op, FTC_OK);
                check_done(o);
                return;
            }
            uint32_t local[64], *list;
            uint32_t cnt = children_of(o, 0, local, &list);
            bool me_next = false;
            for (uint32_t i = 0; i < cnt && next < 0 && !me_next; i++) {
                uint32_t c = list[i];
                if (c == o->me)
                    me_next = true;
                else if (!(fl(o, c) & F_FAILED))
                    next = c;
            }
            if (list != local)
                free(list);
            if (list == NULL) {
                o->peers.nomem = true;
                return;
            }
            if (me_next) {
                become_acting_root(o);
                return;
            }
            /* Every child of the root failed: the succession goes on in
             * rank order (any order all agree on would do: the one that
             * takes over gathers from every live process below the failed
             * ones, wherever it sits). */
            for (uint32_t r = 1; r < o->n && next < 0; r++) {
                if (r == o->me) {
                    become_acting_root(o);
                    return;
                }
                if (!(fl(o, r) & F_FAILED))
                    next = r;
            }
        } else {
            uint32_t p = (uint32_t)ftc_tree_parent(&o->tree, o->n, x);
            if (fl(o, p) & F_FAILED)
                x = p;
            else
                next = p;
        }
    }
    set_up(o, next);
    if (op->coll == FTC_COLL_BCAST) {
        if (!o->have_result) {
            send_msg(o, (uint32_t)next, FTCO_MSG_KEEPALIVE, 0, NULL, 0, NULL, 0);
            t_asked(o, (uint32_t)next);
        }
    } else if (o->xchg) {
        /* Still on the exchange: our value went to every root, and the
         * one that gathers asks for it; sent up now, it would count as
         * an answer from a root that may still deliver the exchange's
         * result. */
    } else if (o->have_result && op->coll == FTC_COLL_ALLREDUCE) {
        /* We hold the result (and still serve our children): it goes up
         * instead of our DATA. Our DATA would let a process that gathers
         * count us in without asking, and compute a result of its own
         * while we deliver this one; the result is adopted instead. */
        send_down(o, (uint32_t)next);
    } else if (o->up_sent && !(op->coll == FTC_COLL_REDUCE && o->up_acked)) {
        o->up_acked = false;
        send_up_data(o, (uint32_t)next);
    }
    rewatch(o, (uint32_t)next);
}

/* ---- events ------------------------------------------------------------ */

static void on_up(ftco_op_t *o, uint32_t s, const ftco_rset_t *set,
                  const uint8_t *val)
{
    ftc_cop_t *op = &o->base;
    if (o->have_result && op->coll == FTC_COLL_ALLREDUCE) {
        send_down(o, s);
        return;
    }
    if (o->xchg && s < o->m)
        /* A root sends an UP only once it left the exchange: its value
         * will not come as an EXCH any more (and it takes the result
         * from its Up), so the exchange cannot finish: join it on the
         * single tree, where this UP is an answer like any other. */
        xchg_fall_back(o);
    if (o->xchg && s % o->m != o->me % o->m) {
        /* On the exchange, a root's value is its own tree's only (root j
         * owns the ranks j mod m). This one was re-routed past a failed
         * root: it gets the result from us, and if we leave the exchange
         * whoever gathers pulls it again. */
        send_ack(o, s, FTCO_WF_ACK_UP);
        fl_set(o, s, F_SERVE);
        return;
    }
    if (o->collecting) {
        int merged = parts_ready(o) ? ftco_partials_merge(&o->parts, set, val)
                                    : FTC_ENOMEM;
        if (merged < 0)
            o->peers.nomem = true;
        /* Whom this value covers we no longer wait for. Only positions
         * of set are newly covered, and a process we wait for was not
         * covered before (add_down, and every coverage since resolved
         * whom it covered): so the entries waited for whose position is
         * in set, found in the table (the Down set's members waited for
         * are its F_WAIT entries) without a look-up each. */
        for (uint32_t e = 0; merged > 0 && o->waiting > 0
                             && e < o->peers.count; e++)
            if ((o->peers.at[e].flag & F_WAIT)
                && in_set(set, pos_at(o, (int64_t)e)))
                resolve_at(o, (int64_t)e);
        /* The ACK is owed from now on. At the (acting) root, the DATA
         * that completes the collection is answered by the result in
         * this same turn, which carries the ACK (send_down); any other
         * goes now, unless ACKs wait for the result. Elsewhere
         * ack_children sends them once our DATA went up. */
        bool at_root = o->up < 0 && !o->xchg;
        int64_t es = ftco_peers_get(&o->peers, s);
        if (es >= 0 && !(o->peers.at[es].flag & F_TOACK)) {
            o->peers.at[es].flag |= F_TOACK;
            o->ntoack++;
        }
        /* An allreduce's UP from outside our Down set was re-routed to
         * us (its sender's Up failed): we are its Up now, and it waits
         * for the value from us. Its failed parent may hold the result
         * already, from us, unacknowledged (down_needs_no_ack), so we
         * would never learn of that failure nor expand it: serve the
         * sender ourselves, as we serve an UP that comes after our
         * collection. */
        if (op->coll == FTC_COLL_ALLREDUCE && es >= 0
            && !(o->peers.at[es].flag & F_DOWN))
            o->peers.at[es].flag |= F_SERVE;
        try_up(o);
        if (at_root && !ack_waits_for_result(o) && (fl(o, s) & F_TOACK)) {
            fl_clr(o, s, F_TOACK);
            o->ntoack--;
            send_ack(o, s, FTCO_WF_ACK_UP);
        }
        return;
    }
    /* Our DATA went up already: this one is inside it, or the process
     * above will pull it. Either way the sender may stop waiting on us
     * for its ACK, and gets the value from us. */
    send_ack(o, s, FTCO_WF_ACK_UP);
    if (op->coll == FTC_COLL_ALLREDUCE)
        fl_set(o, s, F_SERVE);
}

/* A DOWN from root s, not our Up, at a root that left the exchange and
 * does not gather: s shares the exchange's result (xchg_share), which a
 * root that left must not take (it sent its DATA up, and the combiner
 * may compute a result without that of a root that failed); the value
 * comes from its Up. (A gatherer takes it: whatever it adopts is what
 * everyone gets from it.) */
static bool xchg_left_root(const ftco_op_t *o, uint32_t s)
{
    return o->m >= 2 && o->me < o->m && s < o->m && !o->xchg
           && !o->acting_root && (int64_t)s != o->up
           && o->base.coll == FTC_COLL_ALLREDUCE;
}

static void on_down(ftco_op_t *o, uint32_t s, const ftc_wire_header_t *hdr,
                    const ftco_rset_t *set, const uint8_t *val)
{
    /* The value goes on to the children first, then the ACK to the
     * sender (the paper's order: the ACK overlaps the next hop instead of
     * delaying it). ACK what arrived even when we do not take it: the
     * sender waits for it, unless it said it does not (FTCO_WF_NO_ACK:
     * down_needs_no_ack). */
    /* The value from Up: nothing more owed. (It carries the ACK of our
     * DATA, FTCO_WF_ACK_UP, when that was still owed: the value says
     * more, so a DOWN from Up counts as one either way.) */
    if ((int64_t)s == o->up)
        o->up_acked = true;
    if (o->have_result || (o->committed && (int64_t)s != o->up)
        || xchg_left_root(o, s))
        ;
    else if (hdr->flags & FTCO_WF_ROOT_LOST)
        accept_result(o, NULL, NULL, true);
    else if (o->base.coll == FTC_COLL_ALLREDUCE)
        accept_result(o, set, val, false);
    else
        accept_result(o, NULL, val, false);
    if (!(hdr->flags & FTCO_WF_NO_ACK))
        send_ack(o, s, FTCO_WF_ACK_DOWN);
}

static void on_ack(ftco_op_t *o, uint32_t s, uint16_t flags)
{
    if ((flags & FTCO_WF_ACK_UP) && o->up >= 0 && s == (uint32_t)o->up
        && o->up_sent && !o->up_acked) {
        o->up_acked = true;
        rewatch(o, s);
        if (o->base.coll == FTC_COLL_REDUCE && !o->base.delivered)
            ftc_cop_complete(&o->base, FTC_OK);
    }
    if (flags & FTCO_WF_ACK_DOWN) {
        int64_t e = ftco_peers_find(&o->peers, s);
        if (e >= 0 && (o->peers.at[e].flag & F_DACK)) {
            o->peers.at[e].flag &= (uint8_t)~F_DACK;
            o->dack_pending--;
            rewatch_at(o, e, s);
        }
    }
    if ((flags & FTCO_WF_NOVALUE) && o->collecting
        && (fl(o, s) & F_WAIT)) {
        uint32_t p = pos_of(o, s);
        if (p == UINT32_MAX || !parts_ready(o)
            || ftco_partials_cover_add(&o->parts, p, p + 1) != FTC_OK)
            o->peers.nomem = true;
        resolve(o, s);
        try_up(o);
    }
    check_done(o);
}

static void on_keepalive(ftco_op_t *o, uint32_t s, uint16_t flags)
{
    ftc_cop_t *op = &o->base;
    if (flags & FTCO_WF_PING) {
        /* (One that came before our start was answered then and not
         * kept: family.c, answered_early_only.) */
        send_ack(o, s, 0);
        return;
    }
    if (o->have_result && !(op->coll == FTC_COLL_REDUCE)) {
        send_down(o, s);
        return;
    }
    if (flags & FTCO_WF_GATHER) {
        /* A replacement root: from now on the value comes from it, not
         * from the roots' exchange either. */
        o->committed = true;
        if (ftco_exchange_mutant != FTCO_MUTANT_NO_COMMIT)
            xchg_stop(o);
        if (o->up != (int64_t)s)
            set_up(o, s);
        if (op->coll == FTC_COLL_BCAST) {
            send_ack(o, s, FTCO_WF_NOVALUE);
        } else if (o->up_sent) {
            o->up_acked = false;
            send_up_data(o, s);
        } else {
            /* Still collecting: our DATA goes to s when it is ready (s
             * is our Up now); until then say we are alive, or s's
             * per-message timeout would exclude us. */
            send_ack(o, s, 0);
        }
        rewatch(o, s);
        return;
    }
    if (op->coll == FTC_COLL_BCAST) {
        fl_set(o, s, F_SERVE);
        send_ack(o, s, 0);
    } else if (o->up_done) {
        /* Pulled from above a failed process: send our DATA again. */
        send_up_data(o, s);
    } else {
        /* Not ready: say we are alive (Algorithm 4's ACK of a KEEPALIVE),
         * and send our DATA there too when it is. */
        fl_set(o, s, F_PULLED);
        send_ack(o, s, 0);
    }
}

/* Rule 7 (docs/ftco.md, "The roots' exchange"): we answered gatherer
 * s, so we take the value from s only; s counts these roots failed, and
 * delivers (or may already have delivered) a result without their
 * values. Should s fail, our succession must not lead us to one of them:
 * a root that s counted failed may be alive, only stopped, and hold the
 * exchange's result, sent (late) to a failed root's children in its
 * place, or to whoever re-routes to it. So they are failed here too from
 * now on (learnt, as adopt_failed does with what a result lists: the
 * group's word on them is out), and a late message of one earns the
 * core's "heard you", which makes it leave. A process that holds the
 * value already answered s with it (s adopts it) and learns nothing. */
__attribute__((cold))
static void learn_gather_roots(ftco_op_t *o, uint32_t s,
                               const uint8_t *payload, size_t len)
{
    if (!o->committed || o->up != (int64_t)s || o->have_result
        || o->base.coll != FTC_COLL_ALLREDUCE
        || ftco_exchange_mutant == FTCO_MUTANT_NO_GATHER_ROOTS)
        return;
    ftc_context_t *ctx = o->base.group->ctx;
    uint32_t k = (uint32_t)(len / sizeof(uint32_t));
    for (uint32_t i = 0; i < k; i++) {
        uint32_t r = ftco_gather_roots_at(payload, i);
        if (r != o->me && !is_failed(o, r))
            ftc_ctx_declare_failed(ctx, world(o, r));
    }
}

static bool owes(const ftco_op_t *o, uint32_t x, uint8_t flag);
static bool awaits_value(const ftco_op_t *o, uint32_t x);
static void ftco_dispatch(ftco_op_t *o, const ftc_wire_header_t *hdr,
                          const uint8_t *payload, uint32_t s);

static void ftco_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                        const uint8_t *payload, uint32_t grank)
{
    ftco_op_t *o = (ftco_op_t *)op;
    uint32_t s = ftc_logical(grank, op->args.root, o->n);
    if (o->ack_timeout == 0) {
        ftco_dispatch(o, hdr, payload, s);
        end_turn(o);
        return;
    }
    int64_t e = ftco_peers_find(&o->peers, s);
    /* The paper's next KEEPALIVE to a peer that answered ours is due
     * f_timeout after ours left (Algorithm 4: now - LastSent[x] >
     * f_timeout), which is the deadline the answer beat. */
    uint64_t now = ftc_cop_now(op), next = 0;
    if (e >= 0 && o->peers.at[e].tstate >= T_DATA) {
        if (o->peers.at[e].tstate == T_AWAIT
            && o->peers.at[e].deadline > now)
            next = o->peers.at[e].deadline;
        o->peers.at[e].tstate = T_NONE; /* it answered */
    }
    ftco_dispatch(o, hdr, payload, s);
    e = ftco_peers_find(&o->peers, s);
    uint8_t flag = e < 0 ? 0 : o->peers.at[e].flag;
    if ((e < 0 || o->peers.at[e].tstate == T_NONE) && !o->done
        && owes(o, s, flag) && !(flag & F_FAILED)) {
        if (e < 0)
            e = ftco_peers_get(&o->peers, s);
        if (e >= 0) {
            if (next == 0)
                next = now + f_timeout(o, e);
            /* (Not before the value is due: Algorithm 4, line 22.) */
            if (awaits_value(o, s) && next < o->value_eta)
                next = o->value_eta;
            t_arm(o, e, next, T_ETA);
        }
    }
    end_turn(o);
}

static void ftco_dispatch(ftco_op_t *o, const ftc_wire_header_t *hdr,
                          const uint8_t *payload, uint32_t s)
{
    ftc_cop_t *op = &o->base;
    size_t len = hdr->payload_len, nb = op->nbytes;
    bool with_set = hdr->kind == FTCO_MSG_UP || hdr->kind == FTCO_MSG_EXCH
                    || (hdr->kind == FTCO_MSG_DOWN
                        && op->coll == FTC_COLL_ALLREDUCE
                        && !(hdr->flags & FTCO_WF_ROOT_LOST));
    if (with_set) {
        /* The set is what the value does not take (rset.h). */
        int rc = len < nb ? FTC_EINVAL
                          : ftco_rset_read(&o->rx, payload, len - nb, o->n);
        if (rc == FTC_ENOMEM)
            o->peers.nomem = true;
        if (rc != FTC_OK)
            goto bad;
    }
    switch (hdr->kind) {
    case FTCO_MSG_UP:
        if (!o->has_up)
            break;
        on_up(o, s, &o->rx, payload + (len - nb));
        return;
    case FTCO_MSG_DOWN:
        if (!o->has_down)
            break;
        if (with_set)
            on_down(o, s, hdr, &o->rx, payload + (len - nb));
        else if (len == ((hdr->flags & FTCO_WF_ROOT_LOST) ? 0 : nb))
            on_down(o, s, hdr, NULL, payload);
        else
            break;
        return;
    case FTCO_MSG_ACK:
        on_ack(o, s, hdr->flags);
        return;
    case FTCO_MSG_KEEPALIVE:
        if ((hdr->flags & FTCO_WF_GATHER)
            && ftco_gather_roots_count(payload, len, o->m) < 0)
            break;
        /* Answered now, whatever it asks (on_keepalive): a verdict of
         * s's timeout that arrives well after this was s's lateness,
         * not ours (exclude). */
        ftc_cutoff_note_asked(op->group->ctx, world(o, s), ftc_cop_now(op));
        on_keepalive(o, s, hdr->flags);
        if (hdr->flags & FTCO_WF_GATHER)
            learn_gather_roots(o, s, payload, len);
        return;
    case FTCO_MSG_EXCH:
        if (op->coll != FTC_COLL_ALLREDUCE)
            break;
        on_exch(o, s, &o->rx, payload + (len - nb));
        return;
    default:
        break;
    }
bad:
    op->group->ctx->counters.dropped_badmsg++;
}

/* Whether x is our Up and we still wait for the value from it (bcast,
 * allreduce): with per-message timeouts Up is KEEPALIVEd until the value
 * arrives, as the paper's Algorithm 4 KEEPALIVEs every neighbour that
 * has not sent its DATA (x not in Arrived) once its f_ETA passed, Up
 * included (its DATA is the value; value_eta). A process whose own
 * messages are late times out its live Up this way, but its verdict is
 * refuted by an Up that answered in time (exclude), and it, not Up,
 * gives in (docs/ftco.md, "A slow or stopped process", rule 8). */
static bool awaits_value(const ftco_op_t *o, uint32_t x)
{
    return o->ack_timeout > 0 && o->up >= 0 && x == (uint32_t)o->up
           && o->base.coll != FTC_COLL_REDUCE && !o->base.delivered
           && !o->done;
}

/* Whether x, whose entry's flag is flag (0 without one), still owes us
 * an answer. */
static bool owes(const ftco_op_t *o, uint32_t x, uint8_t flag)
{
    if ((flag & (F_WAIT | F_DACK)) || xchg_waits(o, x) || awaits_value(o, x))
        return true;
    return o->up >= 0 && x == (uint32_t)o->up && o->up_sent && !o->up_acked;
}

static void ftco_on_timer(ftc_cop_t *op)
{
    ftco_op_t *o = (ftco_op_t *)op;
    if (o->ack_timeout == 0 || o->done)
        return;
    uint64_t now = ftc_cop_now(op);
    for (uint32_t e = 0; e < o->peers.count; e++) {
        ftco_peer_t *pe = &o->peers.at[e];
        uint32_t x = pe->rank;
        if (pe->tstate == T_NONE || (pe->tstate & T_PENDING)
            || pe->deadline > now)
            continue;
        uint8_t st = pe->tstate;
        pe->tstate = T_NONE;
        if ((pe->flag & F_FAILED) || !owes(o, x, pe->flag))
            continue;
        if (st == T_AWAIT
            && now - pe->deadline <= f_timeout(o, e) / 2) {
            exclude(o, x, f_timeout(o, e));
        } else {
            /* (A deadline long past means we were stalled ourselves, a
             * SIGSTOP or a descheduling: the silence was not observed, so
             * ask again rather than blame x, as the monitor does.) */
            /* Its DATA or its ACK is late: is it alive (Algorithm 4,
             * line 25)? */
            send_msg(o, x, FTCO_MSG_KEEPALIVE, FTCO_WF_PING, NULL, 0, NULL, 0);
            /* (send_msg inserts nobody: x has its entry.) */
            pe = &o->peers.at[e];
            pe->deadline = now + f_timeout(o, e);
            pe->tstate = o->last_left ? T_AWAIT : T_AWAIT | T_PENDING;
        }
    }
    uint64_t next = 0;
    for (uint32_t e = 0; e < o->peers.count; e++) {
        const ftco_peer_t *pe = &o->peers.at[e];
        if (pe->tstate != T_NONE && !(pe->tstate & T_PENDING)
            && (next == 0 || pe->deadline < next))
            next = pe->deadline;
    }
    if (next != 0)
        ftc_cop_timer_arm(op, next);
    end_turn(o);
}

/* Rule 7, kept while we gather: root x failed after our gather went out,
 * so what we deliver will count it failed, and those who answered (or
 * will answer) the gather must hold it failed before any of them can
 * receive our result (learn_gather_roots). The gather goes again, naming
 * it, before anything of this turn can complete the collection; an
 * answer sent again is a duplicate, which the partials drop. */
__attribute__((cold))
static void regather_on_root_failed(ftco_op_t *o, uint32_t x)
{
    if (!o->acting_root || !o->collecting || x >= o->m || o->m < 2
        || o->base.coll != FTC_COLL_ALLREDUCE)
        return;
    for (uint32_t i = 0; i < o->ndl; i++) {
        uint32_t d = o->dl[i];
        if (d != x && !is_failed(o, d))
            send_gather(o, d);
    }
}

/* Whether x, now failed, was sent our allreduce result without an ACK
 * (down_needs_no_ack) while it is in our Down set: we are done and did
 * not wait on it, so its children, which would have been pushed the
 * result had we waited for the ACK, are pushed it now. They need no push
 * to deliver (they re-route up themselves), but a sender that is stopped
 * (its messages late) needs the way to them: its late result earns it
 * the survivors' "heard you", which makes it accept its exclusion, as
 * the wait for the ACK made it before (docs/ftco.md, "No ACK of the
 * result"; the checker's ftco-stopped-each-keepalive-f2-allreduce, a
 * stopped root whose inner child replaced it and crashed). Cold: only
 * failures lead here. */
__attribute__((cold))
static bool unacknowledged_failed(ftco_op_t *o, uint32_t x)
{
    return (fl(o, x) & F_DOWN) && o->have_result && !o->root_lost
           && o->base.coll == FTC_COLL_ALLREDUCE && o->ack_timeout == 0
           && x >= o->m;
}

static void ftco_on_failed(ftc_cop_t *op, uint32_t grank)
{
    ftco_op_t *o = (ftco_op_t *)op;
    uint32_t x = ftc_logical(grank, op->args.root, o->n);
    if (fl(o, x) & F_FAILED)
        return;
    fl_set(o, x, F_FAILED);
    o->any_failed = true;
    if (o->done) {
        /* Lingering: nothing is owed any more; whoever still needs us
         * asks, and is answered (on_up, on_keepalive). But x's children
         * are sent the result we sent x without an ACK, should we learn
         * of x's failure now (unacknowledged_failed). */
        if (unacknowledged_failed(o, x))
            expand(o, x);
        rewatch(o, x);
        end_turn(o);
        return;
    }
    op->comp.stats.failures_detected++;
    if (fl(o, x) & F_WAIT) {
        fl_clr(o, x, F_WAIT);
        o->waiting--;
    }
    if (fl(o, x) & F_DACK) {
        fl_clr(o, x, F_DACK);
        o->dack_pending--;
    }
    if (fl(o, x) & F_TOACK)
        o->ntoack--;
    fl_clr(o, x, F_SERVE | F_PULLED | F_TOACK);
    rewatch(o, x);
    regather_on_root_failed(o, x);
    if (fl(o, x) & F_DOWN)
        expand(o, x);
    xchg_on_failed(o, x);
    if (o->up >= 0 && x == (uint32_t)o->up && !o->done)
        reroute_up(o);
    try_up(o);
    check_done(o);
    end_turn(o);
}

static void ftco_destroy(ftc_cop_t *op)
{
    ftco_op_t *o = (ftco_op_t *)op;
    for (uint32_t e = 0; e < o->peers.count; e++)
        if (o->peers.at[e].flag & F_WATCH)
            ftc_monitor_release(op->group->ctx, world(o, o->peers.at[e].rank));
    ftco_peers_free(&o->peers);
    ftco_partials_free(&o->parts);
    if (o->ex.m > 0) /* (only a multi-root allreduce's roots have one) */
        ftco_exchange_free(&o->ex);
    ftco_rset_free(&o->up_set);
    ftco_rset_free(&o->result_set);
    ftco_rset_free(&o->rx);
    ftc_cop_delete(op);
}

static const ftc_cop_vtable_t ftco_vt = {
    .msg_valid = ftco_msg_valid,
    .on_msg = ftco_on_msg,
    .on_peer_failed = ftco_on_failed,
    .on_timer = ftco_on_timer,
    .on_sent = ftco_on_sent,
    .destroy = ftco_destroy,
};

int ftc_ftco_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                       const void *params, ftc_coll_t coll, ftc_cop_t **out)
{
    const ftc_ftco_params_t *p = params;
    uint32_t n = g->n;
    size_t nbytes = (size_t)args->count * ftc_dtype_size(args->dtype);
    size_t vb = nbytes > 0 ? nbytes : 1;
    /* Where we sit in the tree: the group's node (node.h), computed by
     * the first operation on this tree and root. */
    const ftco_node_t *nd = ftco_node_get(g, &p->tree,
                                          ftc_logical(g->me, args->root, n));
    if (nd == NULL)
        return FTC_ENOMEM;
    uint32_t cap = nd->guess + 2;
    /* A parent and the children, and room for a few re-routings. */
    uint32_t capdl = cap + 4, peers_expect = nd->peers_expect;
    /* Everything a fault-free operation uses, in the one block the group
     * keeps for the next operation (core/op.h): its value buffers, Down
     * list, peer table, partials and sets. Malloc and free of these were
     * ~1,600 instructions of ~8,000 per operation and rank (docs/ftco.md,
     * "Set-up and teardown"); only growth under failures allocates. */
    size_t room_dl = ftc_mem_round(sizeof(uint32_t) * capdl);
    size_t room_peers = nd->peers_room;
    size_t room_parts = ftc_mem_round(ftco_partials_room(nbytes, cap));
    size_t room_sets = ftc_mem_round(sizeof(ftco_span_t) * 3 * FTCO_SET_SPANS);
    size_t space = 2 * ftc_mem_round(vb) + room_dl + room_peers + room_parts
                   + room_sets;
    ftco_op_t *o = ftc_cop_new(g, sizeof(*o), space);
    if (o == NULL)
        return FTC_ENOMEM;
    uint32_t variant = (uint32_t)p->tree.kind << 24 ^ p->tree.k;
    ftc_cop_setup(g, args, coll, &o->base, &ftco_vt, variant);
    o->n = n;
    o->me = nd->me;
    o->tree = p->tree;
    o->m = nd->roots;
    o->ack_timeout = p->ack_timeout_ns;
    o->has_up = coll != FTC_COLL_BCAST;
    o->has_down = coll != FTC_COLL_REDUCE;
    o->capdl = capdl;
    o->dl = ftc_cop_alloc(&o->base, room_dl);
    void *peers_room = ftc_cop_alloc(&o->base, room_peers);
    void *parts_room = ftc_cop_alloc(&o->base, room_parts);
    ftco_span_t *spans = ftc_cop_alloc(&o->base, room_sets);
    o->up_val = ftc_cop_alloc(&o->base, vb);
    o->result = ftc_cop_alloc(&o->base, vb);
    o->me_pos = nd->pos;
    /* With no failure known, our children's and parent's entries are
     * the node's prepared table (node.h), copied. */
    /* A leaf's partials wait until a failure needs them (parts_ready). */
    bool leaf_up = o->has_up && nd->nkids == 0;
    bool prepared = g->ctx->nfailed == 0 && nd->peers.slots > 0
                    && peers_room != NULL;
    if (prepared)
        ftco_peers_init_from(&o->peers, &nd->peers, peers_room);
    if (o->dl == NULL || peers_room == NULL || parts_room == NULL
        || spans == NULL || o->up_val == NULL || o->result == NULL
        || (!prepared
            && ftco_peers_init(&o->peers, peers_expect, peers_room) != FTC_OK)
        || (!leaf_up
            && ftco_partials_init(&o->parts, nbytes, cap, parts_room)
                   != FTC_OK)) {
        ftco_destroy(&o->base);
        return FTC_ENOMEM;
    }
    ftco_rset_lend(&o->up_set, spans, FTCO_SET_SPANS);
    ftco_rset_lend(&o->result_set, spans + FTCO_SET_SPANS, FTCO_SET_SPANS);
    ftco_rset_lend(&o->rx, spans + 2 * FTCO_SET_SPANS, FTCO_SET_SPANS);
    /* The failures known already: from the context's list, O(failures),
     * not a question per rank. */
    for (uint32_t i = 0; !prepared && i < g->ctx->nfailed; i++) {
        int64_t fg = ftc_group_rank_of(g, g->ctx->failed[i]);
        if (fg >= 0) {
            fl_set(o, ftc_logical((uint32_t)fg, args->root, n), F_FAILED);
            o->any_failed = true;
        }
    }
    /* Our children's and parent's entries, with what the node knows of
     * them: their positions, f_ETA and f_timeout (no tree walk for them
     * later). */
    for (uint32_t i = 0; !prepared && i < nd->nkids; i++) {
        const ftco_kid_t *c = &nd->kids[i];
        int64_t e = ftco_peers_get(&o->peers, c->rank);
        if (e < 0)
            break; /* (out of memory: end_turn ends the operation) */
        o->peers.at[e].pos1 = c->pos + 1;
        o->peers.at[e].eta = (uint8_t)(2 + ftc_bit_length32(c->size));
        /* f_timeout(me, child): its degree x distance 1 (f_timeout). */
        o->peers.at[e].tunits = c->nkids < UINT32_MAX - o->m
                                    ? c->nkids + 1 + other_roots(o, c->rank)
                                    : 0;
    }
    o->up = nd->parent;
    if (o->up >= 0 && !prepared) {
        int64_t e = ftco_peers_get(&o->peers, (uint32_t)o->up);
        if (e >= 0 && nd->parent_nkids < UINT32_MAX - o->m)
            o->peers.at[e].tunits = nd->parent_nkids + 1
                                    + other_roots(o, (uint32_t)o->up);
    }
    if (prepared && coll == FTC_COLL_ALLREDUCE && o->m >= 3)
        /* The prepared f_timeouts leave out a root's other roots. */
        for (uint32_t e = 0; e < o->peers.count; e++)
            if (o->peers.at[e].tunits != 0)
                o->peers.at[e].tunits += other_roots(o, o->peers.at[e].rank);
    /* A multi-root allreduce starts on the roots' exchange (exchange.h). */
    o->xchg = coll == FTC_COLL_ALLREDUCE && o->m >= 2 && o->me < o->m;
    if (o->xchg && ftco_exchange_init(&o->ex, o->m, nbytes) != FTC_OK) {
        ftco_destroy(&o->base);
        return FTC_ENOMEM;
    }
    ftc_cop_register(&o->base);

    if (leaf_up) {
        /* A leaf: its collection is its input (parts_ready). */
        o->parts_lazy = true;
        o->parts_cap = cap;
        o->parts_room = parts_room;
        ftc_copy_bytes(o->up_val, args->sendbuf, nbytes);
        o->up_set.s[0] = (ftco_span_t){o->me_pos, o->me_pos + 1};
        o->up_set.count = 1;
        o->collecting = true;
    } else if (o->has_up) {
        /* Our own input is the first partial. */
        ftco_span_t me_span = {o->me_pos, o->me_pos + 1};
        ftco_rset_t mine;
        ftco_rset_lend(&mine, &me_span, 1);
        mine.count = 1;
        int rc = ftco_partials_merge(&o->parts, &mine, args->sendbuf);
        if (rc < 0) {
            ftco_destroy(&o->base);
            return FTC_ENOMEM;
        }
        o->collecting = true;
    }
    if (!o->has_up && o->me == 0) {
        /* The bcast root has the value: as if it had arrived. */
        if (nbytes > 0)
            ftc_copy_bytes(o->result, args->sendbuf, nbytes);
    }
    for (uint32_t i = 0; i < nd->nkids; i++)
        if (!(o->xchg && nd->kids[i].rank < o->m)) /* the roots: the
                                                      exchange's */
            add_down(o, nd->kids[i].rank, false);
    for (uint32_t r = 0; o->xchg && r < o->m; r++) {
        if (r == o->me)
            continue;
        rewatch(o, r);
        int64_t e = t_entry(o, r);
        if (e >= 0)
            t_arm(o, e, ftc_cop_now(&o->base) + f_eta(o, e), T_ETA);
    }

    /* The value from Up is due its f_ETA after our start: in an
     * allreduce one tree's, up and down (the paper's second f_ETA of an
     * allreduce, "the final result"), in a bcast a hop per level above
     * us, as a child's DATA is due a hop per level below it (eta_units),
     * 2 more for slack. Past it, Up is KEEPALIVEd until the value comes
     * (awaits_value). (The walk to the root: only with the timeouts on,
     * and depth hops.) */
    if (o->ack_timeout > 0 && o->up >= 0 && coll != FTC_COLL_REDUCE) {
        uint64_t units = coll == FTC_COLL_BCAST
                             ? 2 + (uint64_t)depth_of(o, o->me)
                             : 2 + (uint64_t)ftc_bit_length32(n);
        o->value_eta = ftc_cop_now(&o->base) + o->ack_timeout * units;
        int64_t e = t_entry(o, (uint32_t)o->up);
        if (e >= 0 && o->peers.at[e].tstate == T_NONE)
            t_arm(o, e, o->value_eta, T_ETA);
    }
    if (!o->has_up && o->me == 0)
        accept_result(o, NULL, o->result, false);
    else if (o->has_up)
        try_up(o);
    if (o->up >= 0) {
        rewatch(o, (uint32_t)o->up);
        if (is_failed(o, (uint32_t)o->up))
            reroute_up(o);
    }
    /* A root known failed already will send us nothing. */
    for (uint32_t r = 0; o->xchg && r < o->m; r++)
        if (r != o->me && (fl(o, r) & F_FAILED))
            xchg_on_failed(o, r);
    end_turn(o);
    if (!o->base.finished)
        ftc_cop_replay_pending(&o->base);
    *out = &o->base;
    return FTC_OK;
}
