/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The plain tree collectives: the baseline that shows what tolerance
 * costs. Reduce goes up an interleaved binomial tree, bcast goes down the
 * chosen tree, allreduce is one then the other. They do not tolerate a
 * failure, but they do not hang on one either: a process that sees a
 * failed peer (or an ABORT from its parent) delivers FTC_EPEER_FAILED and
 * passes ABORT down its bcast subtree.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/plan.h"
#include "algo/tree/kinds.h"
#include "algo/tree/tree.h"
#include "core/copy.h"

typedef struct tree_op {
    ftc_cop_t base;
    uint32_t n, me;             /* me is logical */
    ftc_tree_t up_tree, down_tree;
    int64_t up_parent, down_parent;
    /* The group's plan (algo/plan.h): read only. */
    const uint32_t *up_children;
    uint32_t n_up;
    uint8_t *child_state;       /* 0 waiting, 1 got, 2 failed */
    uint32_t up_pending;
    const uint32_t *down_children;
    uint32_t n_down;
    uint8_t *acc;
    bool failure;               /* seen in my reduce subtree */
    bool up_done;
    bool watching_down_parent;
    bool shaped;                /* the fields above child_state are set */
} tree_op_t;

static uint32_t gr(const tree_op_t *t, uint32_t logical)
{
    return ftc_physical(logical, t->base.args.root, t->n);
}

static uint32_t world(const tree_op_t *t, uint32_t logical)
{
    return ftc_group_world_of(t->base.group, gr(t, logical));
}

static void send_kind(tree_op_t *t, uint32_t logical, uint8_t kind,
                      uint16_t flags, const void *data, size_t len)
{
    ftc_wire_header_t hdr;
    ftc_cop_header(&t->base, &hdr, kind, 0);
    hdr.flags |= flags;
    ftc_iov_t iov = {data, len};
    if (!ftc_group_member_failed(t->base.group, gr(t, logical)))
        (void)ftc_cop_send(&t->base, gr(t, logical), &hdr, &iov, 1, false);
}

static void stop_down_watch(tree_op_t *t)
{
    if (t->watching_down_parent) {
        t->watching_down_parent = false;
        /* Kept for the stream's next operation (core/monitor.h). */
        ftc_monitor_release_keep(t->base.group->ctx,
                                 world(t, (uint32_t)t->down_parent));
    }
}

/* The bcast phase ends here: deliver and pass it on. */
static void down_deliver(tree_op_t *t, const uint8_t *value, bool failed)
{
    ftc_cop_t *op = &t->base;
    stop_down_watch(t);
    for (uint32_t i = 0; i < t->n_down; i++) {
        if (failed)
            send_kind(t, t->down_children[i], FTC_TREE_MSG_ABORT, 0, NULL, 0);
        else
            send_kind(t, t->down_children[i], FTC_TREE_MSG_DOWN, 0, value,
                      op->nbytes);
    }
    if (!failed && op->nbytes > 0 && op->args.recvbuf != value)
        ftc_copy_bytes(op->args.recvbuf, value, op->nbytes);
    ftc_cop_complete(op, failed ? FTC_EPEER_FAILED : FTC_OK);
    ftc_cop_finish(op);
}

static void start_down(tree_op_t *t)
{
    if (t->down_parent < 0)
        return;
    uint32_t p = gr(t, (uint32_t)t->down_parent);
    if (ftc_group_member_failed(t->base.group, p)) {
        down_deliver(t, NULL, true);
        return;
    }
    t->watching_down_parent = true;
    ftc_monitor_acquire(t->base.group->ctx, ftc_group_world_of(t->base.group, p),
                        &t->base);
}

static void up_try_finish(tree_op_t *t)
{
    ftc_cop_t *op = &t->base;
    if (t->up_done || t->up_pending > 0)
        return;
    t->up_done = true;
    if (t->up_parent >= 0) {
        send_kind(t, (uint32_t)t->up_parent, FTC_TREE_MSG_UP,
                  t->failure ? FTC_TREE_WF_SUBTREE_FAILED : 0, t->acc, op->nbytes);
        if (op->coll == FTC_COLL_REDUCE) {
            ftc_cop_complete(op, t->failure ? FTC_EPEER_FAILED : FTC_OK);
            ftc_cop_finish(op);
        }
        return;
    }
    /* root */
    if (op->coll == FTC_COLL_REDUCE) {
        if (!t->failure && op->nbytes > 0)
            ftc_copy_bytes(op->args.recvbuf, t->acc, op->nbytes);
        ftc_cop_complete(op, t->failure ? FTC_EPEER_FAILED : FTC_OK);
        ftc_cop_finish(op);
    } else {
        down_deliver(t, t->acc, t->failure);
    }
}

static void tree_on_msg(ftc_cop_t *op, const ftc_wire_header_t *hdr,
                        const uint8_t *payload, uint32_t grank)
{
    tree_op_t *t = (tree_op_t *)op;
    uint32_t q = ftc_logical(grank, op->args.root, t->n);
    ftc_context_t *ctx = op->group->ctx;
    if (hdr->kind == FTC_TREE_MSG_UP && op->coll != FTC_COLL_BCAST) {
        if (hdr->payload_len != op->nbytes)
            goto bad;
        for (uint32_t i = 0; i < t->n_up; i++) {
            if (t->up_children[i] != q)
                continue;
            if (t->child_state[i] != 0)
                return;
            t->child_state[i] = 1;
            t->up_pending--;
            ftc_monitor_release_keep(ctx, ftc_group_world_of(op->group, grank));
            if (hdr->flags & FTC_TREE_WF_SUBTREE_FAILED)
                t->failure = true;
            ftc_cop_reduce(op, t->acc, payload);
            up_try_finish(t);
            return;
        }
        goto bad;
    }
    if ((hdr->kind == FTC_TREE_MSG_DOWN || hdr->kind == FTC_TREE_MSG_ABORT)
        && op->coll != FTC_COLL_REDUCE) {
        if (t->down_parent < 0 || q != (uint32_t)t->down_parent)
            goto bad;
        if (hdr->kind == FTC_TREE_MSG_DOWN && hdr->payload_len != op->nbytes)
            goto bad;
        if (op->delivered)
            return;
        down_deliver(t, payload, hdr->kind == FTC_TREE_MSG_ABORT);
        return;
    }
bad:
    ctx->counters.dropped_badmsg++;
}

static void tree_on_failed(ftc_cop_t *op, uint32_t grank)
{
    tree_op_t *t = (tree_op_t *)op;
    uint32_t q = ftc_logical(grank, op->args.root, t->n);
    if (!t->up_done) {
        for (uint32_t i = 0; i < t->n_up; i++) {
            if (t->up_children[i] == q && t->child_state[i] == 0) {
                t->child_state[i] = 2;
                t->up_pending--;
                t->failure = true;
            }
        }
        up_try_finish(t);
    }
    if (!op->delivered && t->watching_down_parent
        && q == (uint32_t)t->down_parent) {
        t->watching_down_parent = false;
        down_deliver(t, NULL, true);
    }
}

/* Whether p lies in op's own memory: a plan node the group's plan had
 * no room for is carved there (algo/plan.c), in its block or in a chunk
 * freed with it, and a template must point at neither (the chunk is
 * gone, the block carved again). Any chunk at all refuses the template,
 * so only the block needs looking at. */
static bool in_op_memory(const ftc_cop_t *op, const void *p)
{
    const uint8_t *b = (const uint8_t *)op;
    return op->mem_chunks != NULL
           || (p != NULL && (const uint8_t *)p >= b
               && (const uint8_t *)p < b + op->mem_block);
}

static void tree_destroy(ftc_cop_t *op)
{
    tree_op_t *t = (tree_op_t *)op;
    if (!t->up_done)
        for (uint32_t i = 0; i < t->n_up; i++)
            if (t->child_state[i] == 0)
                ftc_monitor_release(op->group->ctx,
                                    world(t, t->up_children[i]));
    stop_down_watch(t);
    /* The shape (n, me, trees, parents, the plan's children) is the
     * group's, the signature's and the bcast tree's only: the stream's
     * next like operation starts from it (tree_op_create). */
    if (t->shaped && !in_op_memory(op, t->up_children)
        && !in_op_memory(op, t->down_children))
        ftc_cop_delete_template(op);
    else
        ftc_cop_delete(op);
}

static const ftc_cop_vtable_t tree_vt = {
    .msg_valid = ftc_tree_msg_valid,
    .on_msg = tree_on_msg,
    .on_peer_failed = tree_on_failed,
    .destroy = tree_destroy,
};

/* The fields of a tree operation that depend on the group, the
 * signature and the bcast tree only (kept by a template). false: out of
 * memory. */
static bool tree_shape(tree_op_t *t, ftc_group_t *g,
                       const ftc_coll_args_t *args,
                       const ftc_tree_params_t *params, ftc_coll_t coll)
{
    t->n = g->n;
    t->me = ftc_logical(g->me, args->root, g->n);
    t->up_tree = (ftc_tree_t){.kind = FTC_TREE_BINOMIAL};
    t->down_tree = params->bcast_tree;
    bool has_up = coll != FTC_COLL_BCAST;
    bool has_down = coll != FTC_COLL_REDUCE;
    /* An allreduce down the tree it came up (the default: a binomial
     * tree, whose shape takes no parameter) reads one node for both. */
    const ftc_tree_node_t *up_node = NULL, *down_node = NULL;
    if (has_up)
        up_node = ftc_plan_tree_node(&t->base, &t->up_tree, t->me,
                                     FTC_PLAN_NO_UPCORR);
    if (has_down)
        down_node = has_up && t->down_tree.kind == FTC_TREE_BINOMIAL
                        ? up_node
                        : ftc_plan_tree_node(&t->base, &t->down_tree, t->me,
                                             FTC_PLAN_NO_UPCORR);
    t->up_parent = t->down_parent = -1;
    if (up_node != NULL) {
        t->up_parent = up_node->parent;
        t->up_children = up_node->peers;
        t->n_up = up_node->nchildren;
    }
    if (down_node != NULL) {
        t->down_parent = down_node->parent;
        t->down_children = down_node->peers;
        t->n_down = down_node->nchildren;
    }
    return !((has_up && up_node == NULL) || (has_down && down_node == NULL));
}

int ftc_tree_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                       const void *tree_params, ftc_coll_t coll,
                       ftc_cop_t **out)
{
    const ftc_tree_params_t *params = tree_params;
    /* The members must agree on the bcast tree too. */
    uint32_t variant = coll == FTC_COLL_REDUCE
                           ? 0
                           : (uint32_t)params->bcast_tree.kind << 16
                                 ^ params->bcast_tree.k << 20;
    bool has_up = coll != FTC_COLL_BCAST;
    bool has_down = coll != FTC_COLL_REDUCE;
    tree_op_t *t = (tree_op_t *)ftc_cop_template(g, &tree_vt, args, coll,
                                                 variant);
    if (t != NULL && memcmp(&t->down_tree, &params->bcast_tree,
                            sizeof(t->down_tree)) == 0) {
        /* A steady stream: the last operation's block, shape and all;
         * only one run's state is set again. */
        ftc_cop_restart(g, &t->base, args, sizeof(*t));
        t->failure = false;
        t->up_done = false;
        t->watching_down_parent = false;
    } else {
        size_t nbytes = ftc_cop_value_bytes(g, args);
        ftc_tree_t up = {.kind = FTC_TREE_BINOMIAL};
        size_t nup = ftc_tree_children_guess(&up, g->n);
        size_t space = ftc_mem_round(nup) + ftc_mem_round(nbytes > 0 ? nbytes : 1);
        t = ftc_cop_new(g, sizeof(*t), space);
        if (t == NULL)
            return FTC_ENOMEM;
        ftc_cop_setup(g, args, coll, &t->base, &tree_vt, variant);
        if (!tree_shape(t, g, args, params, coll)) {
            t->up_done = true;  /* no watch taken yet: none to release */
            tree_destroy(&t->base);
            return FTC_ENOMEM;
        }
        t->shaped = true;
    }
    t->child_state = ftc_cop_zalloc(&t->base, t->n_up);
    t->acc = ftc_cop_alloc(&t->base, t->base.nbytes);
    if (t->child_state == NULL || t->acc == NULL) {
        t->up_done = true;      /* no watch taken yet: none to release */
        tree_destroy(&t->base);
        return FTC_ENOMEM;
    }
    if (t->base.nbytes > 0 && (has_up || t->me == 0))
        ftc_copy_bytes(t->acc, args->sendbuf, t->base.nbytes);
    t->up_pending = t->n_up;
    ftc_cop_register(&t->base);
    if (!has_up) {
        t->up_done = true;
        if (t->me == 0)
            down_deliver(t, t->acc, false);
        else
            start_down(t);
    } else {
        for (uint32_t i = 0; i < t->n_up; i++) {
            uint32_t c = t->up_children[i];
            if (ftc_group_member_failed(g, gr(t, c))) {
                t->child_state[i] = 2;
                t->up_pending--;
                t->failure = true;
            } else {
                ftc_monitor_acquire(g->ctx, world(t, c), &t->base);
            }
        }
        if (has_down)
            start_down(t);
        up_try_finish(t);
    }
    if (!t->base.finished)
        ftc_cop_replay_pending(&t->base);
    *out = &t->base;
    return FTC_OK;
}
