/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public collective entry points: argument defaults, names, the
 * checks every algorithm shares, then hand-off to the algorithm through
 * the registry.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/checked.h"
#include "api/call_memo.h"
#include "algo/registry.h"
#include "algo/ulfm/uniform.h"
#include "core/monitor.h"

/* The defaults as one constant struct copied whole: a program that
 * starts each call from fresh arguments (the usual pattern) pays a copy
 * of straight stores, where memset's variable-length fill (rep stos) and
 * the stores after it cost it ~30 instructions per call. Padding is
 * zero, as memset left it. */
static const ftc_coll_args_t args_default = {
    .size = sizeof(ftc_coll_args_t),
    .algo = FTC_ALGO_CORRECTED,
    .root = 0,
    .f = 1,
    .dtype = FTC_INT32,
    .op = FTC_SUM,
};

void ftc_coll_args_init(ftc_coll_args_t *a)
{
    if (a == NULL)
        return;
    memcpy(a, &args_default, sizeof(*a));
}

const char *ftc_coll_name(ftc_coll_t coll)
{
    switch (coll) {
    case FTC_COLL_REDUCE: return "reduce";
    case FTC_COLL_BCAST: return "bcast";
    case FTC_COLL_ALLREDUCE: return "allreduce";
    case FTC_COLL_FINALIZE: return "finalize";
    case FTC_COLL_AGREE: return "agree";
    case FTC_COLL_SHRINK: return "shrink";
    }
    return "?";
}

/* The checks of everything but the buffers and the callback: the
 * generic ones, then the family's (which also finds the family and
 * completes its parameters into call). */
static int check_call(const ftc_group_t *g, const ftc_coll_args_t *a,
                      ftc_coll_t coll, ftc_algo_call_t *call)
{
    if (a->checked > 1 || a->uniform > 1)
        return FTC_EINVAL;
    if (a->uniform && (coll != FTC_COLL_ALLREDUCE || a->checked))
        return FTC_EINVAL;
    if (a->uniform && a->algo != FTC_ALGO_CORRECTED)
        return FTC_ENOTSUP; /* (its digest is the corrected deciding root) */
    int rc = ftc_algo_prepare(g, a, coll, call);
    if (rc != FTC_OK)
        return rc;
    if (a->root >= g->n || a->f >= g->n)
        return FTC_EINVAL;
    size_t esize = ftc_dtype_size(a->dtype);
    if (esize == 0)
        return FTC_EINVAL;
    if (a->count > FTC_WIRE_MAX_PAYLOAD / 4 / esize)
        return FTC_EOVERFLOW; /* value plus an accepted copy must fit */
    if (coll != FTC_COLL_BCAST) {
        rc = ftc_op_check(a->op, a->dtype, a->user_fn);
        if (rc != FTC_OK)
            return rc;
    }
    return FTC_OK;
}

/* Every check: a call like the group's last one that passed skips
 * check_call (api/call_memo.h); the buffers and the callback are
 * checked every time. */
static int check_args(ftc_group_t *g, const ftc_coll_args_t *a,
                      ftc_coll_t coll, ftc_algo_call_t *call)
{
    if (g == NULL || a == NULL)
        return FTC_EINVAL;
    if (a->deliver == NULL)
        return FTC_EINVAL;
    if (!ftc_call_memo_hit(g, a, coll, call)) {
        int rc = check_call(g, a, coll, call);
        if (rc != FTC_OK)
            return rc;
        ftc_call_memo_keep(g, a, coll, call);
    }
    bool is_root = g->me == a->root;
    bool needs_input = coll != FTC_COLL_BCAST || is_root;
    bool needs_output = coll != FTC_COLL_REDUCE || is_root;
    if (a->count > 0 && needs_input && a->sendbuf == NULL)
        return FTC_EINVAL;
    if (a->count > 0 && needs_output && a->recvbuf == NULL)
        return FTC_EINVAL;
    return FTC_OK;
}

static int init_checked(ftc_group_t *g, const ftc_coll_args_t *args,
                        ftc_coll_t coll, uint64_t *seq);

/* Places a call takes in the group's sequence: checked mode and uniform
 * mode add their second operation (a refused call too: the members whose
 * call went through run both). */
static uint64_t places(const ftc_coll_args_t *args)
{
    if (args == NULL || args->size < FTC_COLL_ARGS_SIZE_MIN
        || args->size > sizeof(ftc_coll_args_t))
        return 1;
    /* (only the fields a caller's older, smaller struct has) */
    bool checked = args->size >= offsetof(ftc_coll_args_t, checked)
                                     + sizeof(args->checked)
                   && args->checked == 1;
    bool uniform = args->size >= offsetof(ftc_coll_args_t, uniform)
                                     + sizeof(args->uniform)
                   && args->uniform == 1;
    return 1 + (uint64_t)checked + (uint64_t)uniform;
}

/* The end of every call: a refused one still takes its places in the
 * group's sequence, since the peers started (or will start) this
 * operation: they learn that it ended (FTC_EPEER_INVALID) instead of
 * waiting on this process for ever (docs/semantics.md, "Usage errors
 * between peers"). */
static int init_end(ftc_group_t *g, int rc, ftc_cop_t *op, uint64_t my_seq,
                    uint64_t nplaces, uint64_t *seq)
{
    if (rc != FTC_OK) {
        while (g->next_seq < my_seq + nplaces)
            ftc_group_refused(g, rc);
        ftc_ctx_after_init(g->ctx);
        return rc;
    }
    ftc_cop_started(op);
    if (seq != NULL)
        *seq = my_seq;
    ftc_ctx_after_init(g->ctx);
    return FTC_OK;
}

/* A call like the group's last one that passed (api/call_memo.h), of
 * this library's struct, neither checked nor uniform, on a small value,
 * on a group that takes calls, with its buffers and callback given: the
 * stream of like collectives an application makes. It is started here
 * with only what can differ from that call tested; anything else (NULL
 * here) goes the whole way, init_checked, which finds the same verdict
 * or the error. */
static inline const ftc_call_memo_t *
init_quick(ftc_group_t *g, const ftc_coll_args_t *args, ftc_coll_t coll,
           const void **params)
{
    if (g == NULL || args == NULL || args->size != sizeof(*args)
        || (args->checked | args->uniform) != 0 || args->deliver == NULL)
        return NULL;
    const ftc_call_memo_t *m = ftc_call_memo_find(g, args, coll, params);
    if (m == NULL || m->nbytes >= FTC_AWAY_MIN_BYTES || g->ctx->excluded
        || g->destroying || g->stopped != 0)
        return NULL;
    if (args->count > 0) {
        bool is_root = g->me == args->root;
        if ((coll != FTC_COLL_BCAST || is_root) && args->sendbuf == NULL)
            return NULL;
        if ((coll != FTC_COLL_REDUCE || is_root) && args->recvbuf == NULL)
            return NULL;
    }
    return m;
}

/* Starting a collective on a large value takes this process time in
 * proportion to its size (copies, the first sends): time it reads
 * nothing, which the failure monitor must not count as the peers'
 * silence (core/monitor.c). */
static __attribute__((noinline)) int
init_whole(ftc_group_t *g, const ftc_coll_args_t *args, ftc_coll_t coll,
           uint64_t *seq);

static inline int init_common(ftc_group_t *g, const ftc_coll_args_t *args,
                              ftc_coll_t coll, uint64_t *seq)
{
    const void *params;
    const ftc_call_memo_t *m = init_quick(g, args, coll, &params);
    if (m == NULL)
        return init_whole(g, args, coll, seq);
    ftc_cop_t *op = NULL;
    uint64_t my_seq = g->next_seq;
    int rc = m->entry->create[coll](g, args, params, coll, &op);
    return init_end(g, rc, op, my_seq, 1, seq);
}

/* The whole way (init_checked), timed as time away when the value is
 * large. Not inline: the quick path above, which every call of a
 * steady stream takes, then saves and restores only the registers it
 * uses itself. */
static int init_whole(ftc_group_t *g, const ftc_coll_args_t *args,
                      ftc_coll_t coll, uint64_t *seq)
{
    if (g == NULL || args == NULL
        || args->size < FTC_COLL_ARGS_SIZE_MIN
        || args->size > sizeof(ftc_coll_args_t)
        || (uint64_t)args->count * ftc_dtype_size(args->dtype)
               < FTC_AWAY_MIN_BYTES)
        return init_checked(g, args, coll, seq);
    uint64_t since = ftc_monitor_away_begin(g->ctx);
    int rc = init_checked(g, args, coll, seq);
    ftc_monitor_away_end(g->ctx, since);
    return rc;
}

static int init_checked(ftc_group_t *g, const ftc_coll_args_t *args,
                        ftc_coll_t coll, uint64_t *seq)
{
    if (g == NULL)
        return FTC_EINVAL;
    if (g->ctx->excluded)
        return FTC_EEXCLUDED;
    if (g->destroying)
        return FTC_ECANCELED; /* from a callback of its destroy */
    if (g->stopped != 0) {
        /* Stopped (ftc_group_stop): the call keeps its place in the
         * sequence, and nobody needs telling. */
        g->next_seq += places(args);
        return g->stopped;
    }
    /* A caller built against an older, smaller struct: the fields it
     * knows, defaults for the rest; a larger one is from a newer library
     * than this one. */
    ftc_coll_args_t full;
    if (args != NULL) {
        if (args->size < FTC_COLL_ARGS_SIZE_MIN || args->size > sizeof(full))
            args = NULL;
        else if (args->size < sizeof(full)) {
            ftc_coll_args_init(&full);
            memcpy(&full, args, args->size);
            full.size = sizeof(full);
            args = &full;
        }
    }
    /* A checked or uniform call takes two places; a refused one too, so
     * that the sequence stays aligned with the members whose call went
     * through. */
    bool checked = args != NULL && args->checked == 1;
    bool uniform = args != NULL && args->uniform == 1;
    ftc_algo_call_t call;
    int rc = check_args(g, args, coll, &call);
    ftc_cop_t *op = NULL;
    uint64_t my_seq = g->next_seq;
    if (rc == FTC_OK)
        rc = checked   ? ftc_checked_start(g, args, coll, ftc_algo_start, &op)
             : uniform ? ftc_uniform_start(g, args, coll, ftc_algo_start, &op)
                       : ftc_algo_create(&call, g, args, coll, &op);
    return init_end(g, rc, op, my_seq, places(args), seq);
}

int ftc_init_reduce(ftc_group_t *group, const ftc_coll_args_t *args,
                    uint64_t *seq)
{
    return init_common(group, args, FTC_COLL_REDUCE, seq);
}

int ftc_init_bcast(ftc_group_t *group, const ftc_coll_args_t *args,
                   uint64_t *seq)
{
    return init_common(group, args, FTC_COLL_BCAST, seq);
}

int ftc_init_allreduce(ftc_group_t *group, const ftc_coll_args_t *args,
                       uint64_t *seq)
{
    return init_common(group, args, FTC_COLL_ALLREDUCE, seq);
}
