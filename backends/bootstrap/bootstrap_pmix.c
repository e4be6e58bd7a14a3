/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMIx: what a cluster launcher (mpirun, srun --mpi=pmix, prterun) gives
 * a process without MPI. Rank from PMIx_Init, size from PMIX_JOB_SIZE;
 * allgather number k puts the blob under "ftcoll.ag.<k>", commits, fences
 * with PMIX_COLLECT_DATA (bounded by PMIX_TIMEOUT) and gets every peer's.
 *
 * The job key: rank 0 draws it and puts it under "ftcoll.job_key"; after
 * a fence every rank gets it from rank 0. PMIx's store is the job's own
 * (the launcher serves it to the job's processes only), so the key
 * reaches the ranks without ever crossing ftcoll's transports.
 *
 * PMIx is not a failure detector here: with Open MPI's --enable-recovery
 * no event arrives when a rank dies (transport-facts.md). A rank that dies
 * before the fence makes the fence time out instead.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "bootstrap_internal.h"

typedef struct pmix_state {
    pmix_proc_t me;
} pmix_state_t;

/* FNV-1a of the namespace: the same at every rank of the job, and two jobs
 * are unlikely to share it. */
static uint64_t nspace_token(const char *ns)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)ns; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}


/* A fence that collects what every rank put, bounded by the bootstrap's
 * timeout (*timeout_s: the bound in seconds, for the caller's message). */
static pmix_status_t collect_fence(const ftc_bootstrap_t *b, int *timeout_s)
{
    pmix_info_t info[2];
    bool collect = true;
    *timeout_s = b->timeout_ms < 0 ? 0 : (b->timeout_ms + 999) / 1000;
    PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, timeout_s, PMIX_INT);
    pmix_status_t rc = PMIx_Fence(NULL, 0, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}
static int pmix_allgather(ftc_bootstrap_t *b, const void *mine, size_t len,
                          void *all)
{
    pmix_state_t *s = b->impl;
    char key[PMIX_MAX_KEYLEN + 1];
    snprintf(key, sizeof(key), "ftcoll.ag.%u", b->round);

    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)(uintptr_t)mine;   /* PMIx_Put copies */
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        ftc_bootstrap_seterr(b, "bootstrap: PMIx_Put/Commit: %s",
                             PMIx_Error_string(rc));
        return FTC_ETRANSPORT;
    }

    int timeout_s;
    rc = collect_fence(b, &timeout_s);
    if (rc != PMIX_SUCCESS) {
        ftc_bootstrap_seterr(b, "bootstrap: rank %u: PMIx_Fence: %s (a rank "
                                "did not arrive within %d s?)",
                             b->rank, PMIx_Error_string(rc), timeout_s);
        return FTC_ETRANSPORT;
    }

    for (uint32_t r = 0; r < b->size; r++) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, s->me.nspace, r);
        pmix_value_t *got = NULL;
        rc = PMIx_Get(&p, key, NULL, 0, &got);
        if (rc != PMIX_SUCCESS || got == NULL || got->type != PMIX_BYTE_OBJECT
            || got->data.bo.size != len) {
            ftc_bootstrap_seterr(b, "bootstrap: PMIx_Get(%s) of rank %u: %s",
                                 key, r,
                                 rc != PMIX_SUCCESS ? PMIx_Error_string(rc)
                                                    : "wrong type or size");
            if (got != NULL)
                PMIX_VALUE_RELEASE(got);
            return FTC_ETRANSPORT;
        }
        if (len > 0)
            memcpy((char *)all + (size_t)r * len, got->data.bo.bytes, len);
        PMIX_VALUE_RELEASE(got);
    }
    return FTC_OK;
}

#define JOB_KEY_NAME "ftcoll.job_key"

/* Rank 0's key to every rank: one fence, at open. */
static int pmix_share_key(ftc_bootstrap_t *b, pmix_state_t *s)
{
    pmix_status_t rc = PMIX_SUCCESS;
    if (b->rank == 0) {
        if (ftc_bootstrap_random_key(b, b->key) != 0)
            return FTC_ETRANSPORT;
        pmix_value_t v;
        memset(&v, 0, sizeof(v));
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = (char *)b->key;
        v.data.bo.size = sizeof(b->key);
        rc = PMIx_Put(PMIX_GLOBAL, JOB_KEY_NAME, &v);
    }
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        ftc_bootstrap_seterr(b, "bootstrap: PMIx_Put/Commit of the job key: "
                                "%s", PMIx_Error_string(rc));
        return FTC_ETRANSPORT;
    }
    int timeout_s;
    rc = collect_fence(b, &timeout_s);
    if (rc != PMIX_SUCCESS) {
        ftc_bootstrap_seterr(b, "bootstrap: rank %u: PMIx_Fence for the job "
                                "key: %s", b->rank, PMIx_Error_string(rc));
        return FTC_ETRANSPORT;
    }
    if (b->rank != 0) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, s->me.nspace, 0);
        pmix_value_t *got = NULL;
        rc = PMIx_Get(&p, JOB_KEY_NAME, NULL, 0, &got);
        bool good = rc == PMIX_SUCCESS && got != NULL
                    && got->type == PMIX_BYTE_OBJECT
                    && got->data.bo.size == sizeof(b->key);
        if (good)
            memcpy(b->key, got->data.bo.bytes, sizeof(b->key));
        if (got != NULL)
            PMIX_VALUE_RELEASE(got);
        if (!good) {
            ftc_bootstrap_seterr(b, "bootstrap: PMIx_Get(" JOB_KEY_NAME
                                    ") of rank 0: %s",
                                 rc != PMIX_SUCCESS ? PMIx_Error_string(rc)
                                                    : "wrong type or size");
            return FTC_ETRANSPORT;
        }
    }
    b->has_key = 1;
    return FTC_OK;
}

static void pmix_close(ftc_bootstrap_t *b)
{
    (void)PMIx_Finalize(NULL, 0);
    free(b->impl);
    free(b);
}

int ftc_bootstrap_pmix_open(int timeout_ms, ftc_bootstrap_t **out, char *err,
                            size_t errlen)
{
    if (out == NULL)
        return FTC_EINVAL;
    *out = NULL;
    ftc_bootstrap_t *b = calloc(1, sizeof(*b));
    pmix_state_t *s = calloc(1, sizeof(*s));
    if (b == NULL || s == NULL) {
        free(b);
        free(s);
        return FTC_ENOMEM;
    }
    pmix_status_t rc = PMIx_Init(&s->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "bootstrap: PMIx_Init: %s (not started by a "
                                  "PMIx launcher?)", PMIx_Error_string(rc));
        free(b);
        free(s);
        return FTC_ETRANSPORT;
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, s->me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_UINT32
        || val->data.uint32 == 0 || s->me.rank >= val->data.uint32) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "bootstrap: PMIx_Get(PMIX_JOB_SIZE): %s",
                     rc != PMIX_SUCCESS ? PMIx_Error_string(rc) : "bad value");
        if (val != NULL)
            PMIX_VALUE_RELEASE(val);
        (void)PMIx_Finalize(NULL, 0);
        free(b);
        free(s);
        return FTC_ETRANSPORT;
    }
    b->size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    /* Every rank on this node: the transports may listen on loopback. */
    b->single_host = -1;
    val = NULL;
    if (PMIx_Get(&wild, PMIX_LOCAL_SIZE, NULL, 0, &val) == PMIX_SUCCESS
        && val != NULL && val->type == PMIX_UINT32)
        b->single_host = val->data.uint32 == b->size;
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    b->method = "pmix";
    b->rank = s->me.rank;
    b->token = nspace_token(s->me.nspace);
    b->timeout_ms = timeout_ms;
    b->allgather = pmix_allgather;
    b->close = pmix_close;
    b->impl = s;
    if (pmix_share_key(b, s) != FTC_OK) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "%s", b->err);
        pmix_close(b);
        return FTC_ETRANSPORT;
    }
    *out = b;
    return FTC_OK;
}
