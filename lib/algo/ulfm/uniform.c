/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Uniform allreduce (ftc_coll_args_t.uniform): every member that delivers
 * FTC_OK, one that crashes right after included, delivers the same
 * value; the plain allreduce promises that only of the members that stay
 * alive (docs/semantics.md).
 *
 * Why the plain one is not uniform: a member may deliver the value of
 * root r and crash with every other holder of it, while the survivors
 * move to root r' and compute another value. What a member needs before
 * it delivers is to know that every member holds the same value, and
 * that knowledge must be uniform itself: that is an agreement.
 *
 * How: the corrected allreduce runs first; when it delivers here, this
 * member contributes to the ulfm agreement (started beside it, input to
 * come) a digest of what it holds: the group rank of the root whose
 * broadcast it took (FTC_ROOT_NONE for a value of the corrected exchange
 * allreduce's exchange round, which is one value too and no root's:
 * docs/corrected.md §5), as (root << 32) | ~root. The AND of such words is
 * again of that form (high half = complement of the low half) only if
 * all were equal; so the agreed word equals this member's own digest
 * exactly when every contribution named the same root, and one root
 * broadcasts one value. Every member that delivers compares the same
 * agreed word and, having contributed, the AND covers it: all deliver
 * FTC_OK with the same value, or all deliver FTC_EPROC_FAILED (a member
 * whose allreduce failed contributes 0, and delivers its own status).
 * A disagreement needs a member that took an older root's value and
 * failed, so it costs a failure, never a silent wrong answer; the caller
 * retries on the survivors (FTC_EPROC_FAILED: "an operation involving a
 * failed process could not complete").
 *
 * With no failure the agreement takes one exchange round, not two: once
 * the AND of every member's digest is of the digests' form, every digest
 * was the same, so whatever the agreement could still decide (an AND of
 * some of them) is that word (ftc_agree_hooks_t.unanimous). Only the
 * agreed word is used here, never its failed set.
 *
 * The pattern is checked mode's (algo/checked.c): two operations, two
 * places in the group's sequence, one deliver.
 */
#include <stdlib.h>
#include <string.h>

#include "algo/ulfm/agree.h"
#include "algo/ulfm/uniform.h"

typedef struct uniform_call {
    ftc_deliver_fn user_deliver;
    void *user_arg;
    bool main_done, agree_done;
    ftc_agree_t *agree;       /* valid until agree_done */
    ftc_completion_t comp;    /* the allreduce's, kept for later */
    uint32_t *failed;         /* its failed list (valid only during the
                                 callback, so copied) */
    int agree_status;
    uint64_t mine, agreed;
} uniform_call_t;

/* What this member contributes: its deciding root and the root's
 * complement, or 0 (agreeing with nobody) without a value. */
static uint64_t digest(const ftc_completion_t *c)
{
    if (c->status != FTC_OK)
        return 0;
    uint32_t r = c->stats.root;
    return ((uint64_t)r << 32) | (uint32_t)~r;
}

static void finish_if_both(uniform_call_t *uc)
{
    if (!uc->main_done || !uc->agree_done)
        return;
    ftc_completion_t c = uc->comp;
    c.failed = uc->failed;
    if (c.status == FTC_OK) {
        if (uc->agree_status != FTC_OK)
            c.status = uc->agree_status; /* could not make sure */
        else if (uc->agreed != uc->mine)
            c.status = FTC_EPROC_FAILED;
    }
    if (c.status != FTC_OK) {
        c.failed = NULL;
        c.nfailed = 0;
    }
    uc->user_deliver(&c, uc->user_arg);
    free(uc->failed);
    free(uc);
}

static void on_main(const ftc_completion_t *c, void *arg)
{
    uniform_call_t *uc = arg;
    uc->comp = *c;
    uc->comp.failed = NULL;
    if (c->nfailed > 0) {
        uc->failed = malloc(sizeof(uint32_t) * c->nfailed);
        if (uc->failed != NULL)
            memcpy(uc->failed, c->failed, sizeof(uint32_t) * c->nfailed);
        else if (uc->comp.status == FTC_OK)
            uc->comp.status = FTC_ENOMEM;
    }
    uc->mine = digest(&uc->comp);
    uc->main_done = true;
    if (!uc->agree_done)
        ftc_agree_contribute(uc->agree, uc->mine);
    finish_if_both(uc);
}

static void on_agree(const ftc_completion_t *c, void *arg)
{
    uniform_call_t *uc = arg;
    uc->agree_status = c->status;
    uc->agree_done = true;
    uc->agree = NULL;
    finish_if_both(uc);
}

/* The agreement decided: its word is all this operation needs. */
static void agree_decided(ftc_agree_t *a, uint64_t value,
                          const uint32_t *failed, uint32_t nfailed)
{
    (void)failed;
    (void)nfailed;
    memcpy(a->base.args.recvbuf, &value, sizeof(value));
    ftc_cop_complete(&a->base, FTC_OK);
}

/* An AND of digests that is itself of the digests' form (high half the
 * complement of the low half) was an AND of equal digests: a bit where
 * two differed is 0 in both halves. */
static bool all_equal(uint64_t and_of_all)
{
    return (uint32_t)(and_of_all >> 32) == (uint32_t)~(uint32_t)and_of_all;
}

static const ftc_agree_hooks_t uniform_agree_hooks = {
    .decided = agree_decided,
    .unanimous = all_equal,
};

/* The agreement's variant in its signature: a member that calls
 * ftc_init_agree where the others run a uniform allreduce's agreement
 * does not pair with it. */
#define UNIFORM_AGREE_VARIANT 1u

int ftc_uniform_start(ftc_group_t *g, const ftc_coll_args_t *args,
                      ftc_coll_t coll, ftc_uniform_start_fn start,
                      ftc_cop_t **out)
{
    uniform_call_t *uc = calloc(1, sizeof(*uc));
    if (uc == NULL)
        return FTC_ENOMEM;
    uc->user_deliver = args->deliver;
    uc->user_arg = args->deliver_arg;
    ftc_coll_args_t a = *args;
    a.deliver = on_main;
    a.deliver_arg = uc;
    ftc_cop_t *op = NULL;
    int rc = start(g, &a, coll, &op);
    if (rc != FTC_OK) {
        free(uc);
        return rc;
    }
    /* (With the caller's timeout: a member that never calls must not hang
     * the others in the agreement once their allreduce gave up.) */
    rc = ftc_agree_start_deferred(g, FTC_COLL_AGREE, UNIFORM_AGREE_VARIANT,
                                  args->timeout_ns, &uc->agreed, on_agree, uc,
                                  sizeof(ftc_agree_t), &uniform_agree_hooks,
                                  &uc->agree);
    if (rc != FTC_OK) {
        /* The allreduce runs; the agreement's place is refused, so the
         * peers' agreements end, and so does this call, with the reason. */
        ftc_group_refused(g, rc);
        uc->agree_status = rc;
        uc->agree_done = true;
        uc->agree = NULL;
    } else {
        ftc_cop_started(&uc->agree->base);
    }
    *out = op;
    return FTC_OK;
}
