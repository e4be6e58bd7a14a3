/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include "algo/corrected/reduce_part.h"
#include "algo/plan.h"
#include "core/context.h"
#include "core/copy.h"

int ftc_accepted_merge(ftc_cop_t *op, ftc_accepted_t *a, uint32_t round,
                       const uint8_t *blob, uint32_t len)
{
    if (a->has && a->round >= round)
        return FTC_OK;
    /* A copy from an older round stays in the operation's memory: there
     * is one per round at most. */
    uint8_t *copy = a->has && a->cap >= len ? a->blob : ftc_cop_alloc(op, len);
    if (copy == NULL)
        return FTC_ENOMEM;
    if (len > 0)
        ftc_copy_bytes(copy, blob, len);
    if (copy != a->blob)
        a->cap = len;
    a->blob = copy;
    a->len = len;
    a->round = round;
    a->has = true;
    return FTC_OK;
}

void ftc_accepted_refer(ftc_accepted_t *a, uint32_t round, uint8_t *blob,
                        uint32_t len)
{
    if (a->has && a->round >= round)
        return;
    a->blob = blob;
    a->cap = 0;
    a->len = len;
    a->round = round;
    a->has = true;
}

static uint32_t grank_of(const ftc_reduce_part_t *rp, uint32_t logical)
{
    return ftc_physical(logical, rp->root, rp->n);
}

static uint32_t world_of(const ftc_reduce_part_t *rp, uint32_t logical)
{
    return ftc_group_world_of(rp->op->group, grank_of(rp, logical));
}

static void combine(ftc_reduce_part_t *rp, uint8_t *inout, const uint8_t *in)
{
    ftc_cop_reduce(rp->op, inout, in);
}

/* false when out of memory: the list would then not be exact. */
static bool add_fail(uint32_t **list, uint32_t *n, uint32_t *cap, uint32_t g)
{
    for (uint32_t i = 0; i < *n; i++)
        if ((*list)[i] == g)
            return true;
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 4;
        uint32_t *l = realloc(*list, sizeof(uint32_t) * c);
        if (l == NULL)
            return false;
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = g;
    return true;
}

/* Add to what this process's value is missing. A list it cannot keep
 * exact makes the value unusable, as a failed subtree does. */
static void add_missing(ftc_reduce_part_t *rp, uint32_t grank)
{
    if (!add_fail(&rp->fails, &rp->nfails, &rp->capfails, grank))
        rp->subtree_failed = true;
}

/* A peer whose input never reached us. The failure information is what
 * the value sent up MISSES (docs/semantics.md, "What a result holds"):
 * an up-correction peer's input (counted, and listed in the list scheme);
 * a tree child takes its whole subtree with it, which only the
 * subtree-failed bit can say, and a root never uses such a subtree. */
static void peer_lost(ftc_reduce_part_t *rp, uint32_t idx)
{
    if (idx >= rp->ngroup) {
        rp->subtree_failed = true;
        return;
    }
    rp->fail_count++;
    if (rp->scheme == FTC_FAULT_LIST)
        add_missing(rp, grank_of(rp, rp->peers[idx]));
}

/* Append the accepted block to an iov array; returns the new count. */
static int acc_iov(const ftc_accepted_t *acc, uint32_t hdr32[2], ftc_iov_t *iov,
                   int n)
{
    if (!acc->has)
        return n;
    hdr32[0] = acc->round;
    hdr32[1] = acc->len;
    iov[n].base = hdr32;
    iov[n].len = 2 * sizeof(uint32_t);
    iov[n + 1].base = acc->blob;
    iov[n + 1].len = acc->len;
    return n + 2;
}

static void send_upcorr(ftc_reduce_part_t *rp, const ftc_accepted_t *own_acc)
{
    ftc_wire_header_t hdr;
    for (uint32_t i = 0; i < rp->ngroup; i++) {
        if (rp->peer_state[i] == FTC_PEER_FAILED)
            continue;
        ftc_cop_header(rp->op, &hdr, FTC_CORR_MSG_UPCORR, rp->round);
        ftc_iov_t iov[3];
        uint32_t h32[2];
        iov[0].base = rp->input;
        iov[0].len = rp->op->nbytes;
        int cnt = 1;
        if (own_acc != NULL && own_acc->has) {
            hdr.flags |= FTC_CORR_WF_ACCEPTED;
            cnt = acc_iov(own_acc, h32, iov, cnt);
        }
        (void)ftc_cop_send(rp->op, grank_of(rp, rp->peers[i]), &hdr, iov, cnt,
                          false);
    }
}

static void send_up(ftc_reduce_part_t *rp, bool force_failed)
{
    ftc_wire_header_t hdr;
    ftc_cop_header(rp->op, &hdr, FTC_CORR_MSG_TREE_UP, rp->round);
    if (rp->subtree_failed || force_failed)
        hdr.flags |= FTC_CORR_WF_SUBTREE_FAILED;
    if (rp->cv_has)
        combine(rp, rp->v, rp->cv);
    rp->cv_has = false;
    ftc_iov_t iov[4];
    uint32_t h32[2];
    iov[0].base = rp->v;
    iov[0].len = rp->op->nbytes;
    int cnt = 1;
    if (rp->scheme == FTC_FAULT_LIST) {
        hdr.aux = rp->nfails;
        iov[cnt].base = rp->fails;
        iov[cnt].len = sizeof(uint32_t) * rp->nfails;
        cnt++;
    } else if (rp->scheme == FTC_FAULT_COUNT) {
        hdr.aux = rp->fail_count;
    }
    if (rp->acc.has) {
        hdr.flags |= FTC_CORR_WF_ACCEPTED;
        cnt = acc_iov(&rp->acc, h32, iov, cnt);
    }
    uint32_t parent = grank_of(rp, (uint32_t)rp->parent);
    if (!ftc_group_member_failed(rp->op->group, parent))
        (void)ftc_cop_send(rp->op, parent, &hdr, iov, cnt, false);
}

static void release_waits(ftc_reduce_part_t *rp);

/* Once done or abandoned nothing reads v, cv, cand or result (later
 * messages are bookkeeping, and sends copied what they carry). */
static void release_values(ftc_reduce_part_t *rp)
{
    if (rp->values != NULL)
        ftc_bulk_put(rp->op->group->ctx, rp->values);
    rp->values = NULL;
    rp->v = rp->cv = rp->cand = rp->result = NULL;
}

static void finish(ftc_reduce_part_t *rp, int status)
{
    if (rp->done)
        return;
    rp->done = true;
    /* The root decides on the first good subtree: stop waiting for the
     * others (their messages are bookkeeping from now on). */
    release_waits(rp);
    rp->done_cb(rp, status);
    /* (The callback may have destroyed rp: then values is NULL.) */
    if (rp->values != NULL)
        release_values(rp);
}

static void root_try_decide(ftc_reduce_part_t *rp)
{
    if (rp->done || rp->group_pending > 0)
        return;
    size_t nb = rp->op->nbytes;
    bool group_is_all = rp->root_in_group && rp->ngroup + 1 == rp->n;
    if (rp->nchildren == 0 || group_is_all) {
        /* Everyone exchanged with me directly (or I am alone). */
        ftc_copy_bytes(rp->result, rp->v, nb);
        rp->cand_child = 0;
        finish(rp, FTC_OK);
        return;
    }
    if (rp->cand_has) {
        ftc_copy_bytes(rp->result, rp->cand, nb);
        /* What the result misses: the subtree's list, and the root's own
         * up-correction losses only when its value is added. */
        if (!(rp->root_in_group && rp->cand_child <= rp->root_group_children)) {
            combine(rp, rp->result, rp->v);
        } else {
            rp->nfails = 0;
            rp->fail_count = 0;
        }
        for (uint32_t i = 0; i < rp->ncand_fails; i++)
            if (!add_fail(&rp->fails, &rp->nfails, &rp->capfails,
                          rp->cand_fails[i])) {
                finish(rp, FTC_ENOMEM);
                return;
            }
        rp->fail_count += rp->scheme == FTC_FAULT_LIST ? rp->ncand_fails
                                                       : rp->cand_count;
        finish(rp, FTC_OK);
        return;
    }
    if (rp->child_pending == 0)
        finish(rp, FTC_ETOO_MANY_FAILURES);
}

/* A value accepted in the round just before this one (ours, or a
 * contribution's) is the only proposal this round can make: nobody can
 * have accepted one from a later round before this round proposes, and
 * a round has one value. So the rest of the reduce cannot change the
 * proposal, and waiting for it would only wait on peers: on a member
 * that failed before this process learnt of it (its exchange input
 * reached us, another member's timeout sent the group here), for a
 * whole detector budget from this round's start, on top of the one that
 * sent the group here. */
static bool accepted_decides(const ftc_reduce_part_t *rp)
{
    return rp->acc.has && rp->acc.round + 1 == rp->round;
}

static void try_progress(ftc_reduce_part_t *rp)
{
    if (rp->done || rp->abandoned)
        return;
    if (accepted_decides(rp)) {
        /* The value part may miss inputs: say so, the accepted block is
         * what the root uses. */
        if (rp->parent >= 0)
            send_up(rp, rp->group_pending > 0 || rp->child_pending > 0);
        finish(rp, FTC_OK);
        return;
    }
    if (rp->parent < 0) {
        root_try_decide(rp);
        return;
    }
    if (rp->group_pending == 0 && rp->child_pending == 0) {
        send_up(rp, false);
        finish(rp, FTC_OK);
    }
}

static void peer_resolved(ftc_reduce_part_t *rp, uint32_t idx, uint8_t state,
                          bool release)
{
    rp->peer_state[idx] = state;
    if (idx < rp->ngroup)
        rp->group_pending--;
    else
        rp->child_pending--;
    if (release)
        ftc_monitor_release(rp->op->group->ctx, world_of(rp, rp->peers[idx]));
}

int ftc_reduce_part_start(ftc_reduce_part_t *rp, ftc_cop_t *op,
                          ftc_reduce_done_fn done_cb, uint32_t round,
                          uint32_t root, const uint8_t *input,
                          const ftc_accepted_t *own_acc)
{
    memset(rp, 0, sizeof(*rp));
    ftc_group_t *g = op->group;
    rp->op = op;
    rp->done_cb = done_cb;
    rp->round = round;
    rp->root = root;
    rp->n = g->n;
    rp->me = ftc_logical(g->me, root, g->n);
    rp->f = op->args.f;
    rp->scheme = ftc_corrected_params(op)->fault_info;
    rp->tree.kind = FTC_TREE_IF;
    rp->tree.k = rp->f;
    rp->input = input;
    /* Parent, up-correction group and children: the group's plan. */
    const ftc_tree_node_t *node = ftc_plan_tree_node(op, &rp->tree, rp->me,
                                                     rp->f);
    if (node == NULL) {
        memset(rp, 0, sizeof(*rp));
        return FTC_ENOMEM;
    }
    rp->parent = node->parent;
    rp->peers = node->peers;
    rp->ngroup = node->ngroup;
    rp->nchildren = node->nchildren;

    size_t nb = op->nbytes;
    if (nb >= FTC_REDUCE_PART_OWN_BYTES) {
        size_t nvals = rp->parent < 0 ? 4 : 2;
        if (nb > SIZE_MAX / nvals) {
            memset(rp, 0, sizeof(*rp));
            return FTC_ENOMEM;
        }
        rp->values = ftc_bulk_get(g->ctx, nvals * nb);
        if (rp->values != NULL) {
            rp->v = rp->values;
            rp->cv = rp->values + nb;
            if (rp->parent < 0) {
                rp->cand = rp->values + 2 * nb;
                rp->result = rp->values + 3 * nb;
            }
        }
    } else {
        rp->v = ftc_cop_alloc(op, nb);
        rp->cv = ftc_cop_alloc(op, nb);
        if (rp->parent < 0) {
            rp->cand = ftc_cop_alloc(op, nb);
            rp->result = ftc_cop_alloc(op, nb);
        }
    }
    rp->peer_state = ftc_cop_zalloc(op, rp->ngroup + rp->nchildren);
    if (rp->v == NULL || rp->cv == NULL || rp->peer_state == NULL
        || (rp->parent < 0 && (rp->cand == NULL || rp->result == NULL))) {
        release_values(rp);
        memset(rp, 0, sizeof(*rp));
        return FTC_ENOMEM;
    }
    rp->group_pending = rp->ngroup;
    rp->child_pending = rp->nchildren;
    if (op->nbytes > 0)
        ftc_copy_bytes(rp->v, input, op->nbytes);
    if (own_acc != NULL && own_acc->has
        && ftc_accepted_merge(op, &rp->acc, own_acc->round, own_acc->blob,
                              own_acc->len) != FTC_OK) {
        ftc_reduce_part_destroy(rp);
        return FTC_ENOMEM;
    }
    if (rp->parent < 0) {
        rp->root_in_group = rp->ngroup > 0;
        rp->root_group_children = rp->root_in_group ? rp->ngroup : 0;
    }

    /* Known-failed peers are not waited for: their failure is final, and
     * skipping them is what the shared failure list buys later ops. */
    for (uint32_t i = 0; i < rp->ngroup + rp->nchildren; i++) {
        if (ftc_group_member_failed(g, grank_of(rp, rp->peers[i]))) {
            peer_resolved(rp, i, FTC_PEER_FAILED, false);
            peer_lost(rp, i);
        }
    }
    send_upcorr(rp, own_acc);
    for (uint32_t i = 0; i < rp->ngroup + rp->nchildren; i++)
        if (rp->peer_state[i] == FTC_PEER_WAITING)
            ftc_monitor_acquire(g->ctx, world_of(rp, rp->peers[i]), op);
    try_progress(rp);
    return FTC_OK;
}

static int64_t peer_index(const ftc_reduce_part_t *rp, uint32_t logical,
                          bool child)
{
    uint32_t lo = child ? rp->ngroup : 0;
    uint32_t hi = child ? rp->ngroup + rp->nchildren : rp->ngroup;
    for (uint32_t i = lo; i < hi; i++)
        if (rp->peers[i] == logical)
            return i;
    return -1;
}

/* Split a payload: value, optional failed list, optional accepted block. */
static bool parse(const ftc_reduce_part_t *rp, const ftc_wire_header_t *hdr,
                  const uint8_t *p, const uint8_t **fails, uint32_t *nfails,
                  ftc_accepted_t *acc_view)
{
    uint64_t need = rp->op->nbytes;
    *nfails = 0;
    if (hdr->kind == FTC_CORR_MSG_TREE_UP && rp->scheme == FTC_FAULT_LIST) {
        *nfails = hdr->aux;
        if (*nfails > rp->n)
            return false;
        *fails = p + need;
        need += (uint64_t)*nfails * sizeof(uint32_t);
    }
    memset(acc_view, 0, sizeof(*acc_view));
    if (hdr->flags & FTC_CORR_WF_ACCEPTED) {
        if (hdr->payload_len < need + 8)
            return false;
        uint32_t h32[2];
        memcpy(h32, p + need, sizeof(h32));
        acc_view->has = true;
        acc_view->round = h32[0];
        acc_view->len = h32[1];
        acc_view->blob = (uint8_t *)(uintptr_t)(p + need + 8);
        if (acc_view->round >= hdr->word)
            return false; /* accepted in a round not yet over: impossible */
        need += 8 + (uint64_t)acc_view->len;
    }
    if (need != hdr->payload_len)
        return false;
    for (uint32_t i = 0; i < *nfails; i++) {
        uint32_t g;
        memcpy(&g, *fails + 4 * i, 4);
        if (g >= rp->n)
            return false;
    }
    return true;
}

void ftc_reduce_part_on_msg(ftc_reduce_part_t *rp, const ftc_wire_header_t *hdr,
                            const uint8_t *payload, uint32_t grank)
{
    if (rp->done && rp->parent >= 0)
        return;
    ftc_context_t *ctx = rp->op->group->ctx;
    uint32_t logical = ftc_logical(grank, rp->root, rp->n);
    bool is_up = hdr->kind == FTC_CORR_MSG_TREE_UP;
    int64_t idx = peer_index(rp, logical, is_up);
    const uint8_t *fails = NULL;
    uint32_t nfails = 0;
    ftc_accepted_t accv;
    if (idx < 0 || !parse(rp, hdr, payload, &fails, &nfails, &accv)) {
        ctx->counters.dropped_badmsg++;
        return;
    }
    if (rp->peer_state[idx] != FTC_PEER_WAITING || rp->done || rp->abandoned)
        return; /* duplicate, or after the decision: bookkeeping only */
    if (accv.has)
        (void)ftc_accepted_merge(rp->op, &rp->acc, accv.round, accv.blob,
                                 accv.len);

    if (!is_up) {
        combine(rp, rp->v, payload);
    } else if (rp->parent >= 0) {
        if (hdr->flags & FTC_CORR_WF_SUBTREE_FAILED)
            rp->subtree_failed = true;
        if (rp->cv_has) {
            combine(rp, rp->cv, payload);
        } else {
            if (rp->op->nbytes > 0)
                ftc_copy_bytes(rp->cv, payload, rp->op->nbytes);
            rp->cv_has = true;
        }
        for (uint32_t i = 0; i < nfails; i++) {
            uint32_t g;
            memcpy(&g, fails + 4 * i, 4);
            add_missing(rp, g);
        }
        if (rp->scheme == FTC_FAULT_COUNT)
            rp->fail_count += hdr->aux;
    } else if (!(hdr->flags & FTC_CORR_WF_SUBTREE_FAILED) && !rp->cand_has) {
        /* Theorem 2: a subtree that reports no failure holds every value
         * (but possibly the root's group's) exactly once. */
        uint32_t *cf = nfails > 0 ? ftc_cop_alloc(rp->op, sizeof(uint32_t)
                                                          * nfails)
                                  : NULL;
        if (nfails == 0 || cf != NULL) {
            /* (Out of memory, the next good subtree will do: a list that
             * is not exact is no result.) */
            rp->cand_has = true;
            rp->cand_child = logical;
            if (rp->op->nbytes > 0)
                ftc_copy_bytes(rp->cand, payload, rp->op->nbytes);
            if (nfails > 0)
                memcpy(cf, fails, sizeof(uint32_t) * nfails);
            rp->cand_fails = cf;
            rp->ncand_fails = nfails;
            rp->cand_count = rp->scheme == FTC_FAULT_COUNT ? hdr->aux : 0;
        }
    }
    peer_resolved(rp, (uint32_t)idx, FTC_PEER_GOT, true);
    try_progress(rp);
}

void ftc_reduce_part_on_failed(ftc_reduce_part_t *rp, uint32_t grank)
{
    if (rp->done || rp->abandoned)
        return;
    uint32_t logical = ftc_logical(grank, rp->root, rp->n);
    for (uint32_t i = 0; i < rp->ngroup + rp->nchildren; i++) {
        if (rp->peers[i] != logical || rp->peer_state[i] != FTC_PEER_WAITING)
            continue;
        /* The monitor already dropped its watch on a failed peer. */
        peer_resolved(rp, i, FTC_PEER_FAILED, false);
        peer_lost(rp, i);
    }
    try_progress(rp);
}

static void release_waits(ftc_reduce_part_t *rp)
{
    if (rp->peers == NULL || rp->op == NULL)
        return;
    for (uint32_t i = 0; i < rp->ngroup + rp->nchildren; i++) {
        if (rp->peer_state[i] == FTC_PEER_WAITING) {
            rp->peer_state[i] = FTC_PEER_GONE;
            ftc_monitor_release(rp->op->group->ctx,
                                world_of(rp, rp->peers[i]));
        }
    }
}

void ftc_reduce_part_abandon(ftc_reduce_part_t *rp)
{
    if (rp->abandoned)
        return;
    if (!rp->done && rp->parent >= 0)
        send_up(rp, true);
    rp->abandoned = true;
    release_waits(rp);
    release_values(rp);
}

void ftc_reduce_part_release(ftc_reduce_part_t *rp)
{
    /* Other buffers are the operation's memory and go with it; the
     * failure list grows by realloc (mostly there is none: no call). */
    release_waits(rp);
    release_values(rp);
    if (rp->fails != NULL) {
        free(rp->fails);
        rp->fails = NULL;
    }
}

void ftc_reduce_part_destroy(ftc_reduce_part_t *rp)
{
    ftc_reduce_part_release(rp);
    memset(rp, 0, sizeof(*rp));
}

size_t ftc_reduce_part_space(const ftc_coll_args_t *args, size_t nbytes,
                             const ftc_group_t *g, uint32_t root)
{
    ftc_tree_t tree = {.kind = FTC_TREE_IF, .k = args->f};
    size_t peers = (size_t)args->f + 2 + ftc_tree_children_bound(&tree, g->n);
    /* Large working values are not the operation's memory. */
    size_t nb = nbytes >= FTC_REDUCE_PART_OWN_BYTES
                    ? 0 : ftc_mem_round(nbytes > 0 ? nbytes : 1);
    /* (the peers themselves are the group's plan: only their states) */
    size_t s = 2 * nb + ftc_mem_round(peers);
    if (g->me == root)
        s += 2 * nb;    /* the root's candidate and result */
    return s;
}
