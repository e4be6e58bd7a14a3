/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checked mode (ftc_coll_args_t.checked): catch a member that called the
 * operation with other arguments before anybody delivers.
 *
 * Why it is needed: by default a mismatch is seen when a message (or a
 * probe) of the other kind arrives, but some members may deliver before
 * that: a member that believes itself the bcast root delivers its own
 * value at once, a reduce leaf delivers once its value went up. Only a
 * step in which every member's arguments meet catches every case, and it
 * costs messages, so it is asked for per call.
 *
 * How: the operation and a corrected allreduce (MAX over 2 words: the
 * operation's signature and its complement) start together, in that
 * order, at every member; the caller's deliver runs once both have
 * delivered. If all signatures are equal, the allreduce returns this
 * member's own pair; otherwise at least one word differs, at every member
 * alike, and the call ends with FTC_EMISMATCH everywhere. The allreduce
 * tolerates the same f, so failures do not break the check.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/checked.h"
#include "algo/registry.h"

typedef struct checked_call {
    ftc_deliver_fn user_deliver;
    void *user_arg;
    bool main_done, check_done;
    ftc_completion_t comp;      /* the operation's, kept for later */
    uint32_t *failed;           /* its failed list (valid only during the
                                   callback, so copied) */
    int check_status;
    uint64_t in[2], out[2];
} checked_call_t;

static void finish_if_both(checked_call_t *cc)
{
    if (!cc->main_done || !cc->check_done)
        return;
    ftc_completion_t c = cc->comp;
    c.failed = cc->failed;
    if (c.status == FTC_OK) {
        if (cc->check_status != FTC_OK)
            c.status = cc->check_status; /* could not verify */
        else if (cc->out[0] != cc->in[0] || cc->out[1] != cc->in[1])
            c.status = FTC_EMISMATCH;
    }
    if (c.status != FTC_OK) {
        c.failed = NULL;
        c.nfailed = 0;
    }
    cc->user_deliver(&c, cc->user_arg);
    free(cc->failed);
    free(cc);
}

static void on_main(const ftc_completion_t *c, void *arg)
{
    checked_call_t *cc = arg;
    cc->comp = *c;
    cc->comp.failed = NULL;
    if (c->nfailed > 0) {
        cc->failed = malloc(sizeof(uint32_t) * c->nfailed);
        if (cc->failed != NULL)
            memcpy(cc->failed, c->failed, sizeof(uint32_t) * c->nfailed);
        else if (cc->comp.status == FTC_OK)
            cc->comp.status = FTC_ENOMEM;
    }
    cc->main_done = true;
    finish_if_both(cc);
}

static void on_check(const ftc_completion_t *c, void *arg)
{
    checked_call_t *cc = arg;
    cc->check_status = c->status;
    cc->check_done = true;
    finish_if_both(cc);
}

int ftc_checked_start(ftc_group_t *g, const ftc_coll_args_t *args,
                      ftc_coll_t coll, ftc_start_fn start, ftc_cop_t **out)
{
    checked_call_t *cc = calloc(1, sizeof(*cc));
    if (cc == NULL)
        return FTC_ENOMEM;
    cc->user_deliver = args->deliver;
    cc->user_arg = args->deliver_arg;
    ftc_coll_args_t a = *args;
    a.deliver = on_main;
    a.deliver_arg = cc;
    ftc_cop_t *op = NULL;
    int rc = start(g, &a, coll, &op);
    if (rc != FTC_OK) {
        free(cc);
        return rc;
    }
    cc->in[0] = op->signature;
    cc->in[1] = ~(uint64_t)op->signature;
    ftc_coll_args_t ca;
    ftc_coll_args_init(&ca);
    ca.algo = FTC_ALGO_CORRECTED;
    ca.f = args->f;
    ca.dtype = FTC_UINT64;
    ca.op = FTC_MAX;
    ca.count = 2;
    ca.sendbuf = cc->in;
    ca.recvbuf = cc->out;
    ca.deliver = on_check;
    ca.deliver_arg = cc;
    ca.timeout_ns = args->timeout_ns;
    ftc_cop_t *check = NULL;
    rc = ftc_algo_start(g, &ca, FTC_COLL_ALLREDUCE, &check);
    if (rc != FTC_OK) {
        /* The operation runs; the check's place is refused, so the peers'
         * checks end and so does this call, with the reason. */
        ftc_group_refused(g, rc);
        cc->check_status = rc;
        cc->check_done = true;
    } else {
        ftc_cop_started(check);
    }
    *out = op;
    return FTC_OK;
}
