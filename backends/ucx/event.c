/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The queue of what UCX callbacks saw and could not give the core at
 * once: send completions, and messages that arrived while no pass of
 * ours ran the worker (ftc_ucx_arm, the handshake) or behind a queued
 * one (progress.c says when the AM callback feeds the core itself).
 * progress.c feeds them once the worker has returned. Events are
 * recycled through a small free list: a steady stream of messages costs
 * no allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "ucx_internal.h"

enum { FREE_LIST_MAX = 1024 };

ftc_ucx_ev_t *ftc_ucx_ev_alloc(ftc_ucx_t *u)
{
    ftc_ucx_ev_t *ev = u->free_evs;
    if (ev != NULL) {
        u->free_evs = ev->next;
        u->nfree--;
    } else {
        ev = malloc(sizeof(*ev));
        if (ev == NULL)
            return NULL;
    }
    ev->next = ev->prev = NULL;
    ev->kind = 0;
    ev->peer = FTC_RANK_UNKNOWN;
    ev->status = FTC_OK;
    ev->cookie = NULL;
    ev->len = 0;
    ev->data = NULL;
    ev->heap = NULL;
    ev->desc = NULL;
    return ev;
}

int ftc_ucx_ev_reserve(ftc_ucx_t *u)
{
    if (u->free_evs != NULL)
        return 0;
    ftc_ucx_ev_t *ev = malloc(sizeof(*ev));
    if (ev == NULL)
        return -1;
    ev->next = NULL;
    u->free_evs = ev;
    u->nfree++;
    return 0;
}

void ftc_ucx_ev_free(ftc_ucx_t *u, ftc_ucx_ev_t *ev)
{
    if (ev == NULL)
        return;
    if (u->nfree >= FREE_LIST_MAX) {
        free(ev);
        return;
    }
    ev->next = u->free_evs;
    u->free_evs = ev;
    u->nfree++;
}

void ftc_ucx_evq_push(ftc_ucx_evq_t *q, ftc_ucx_ev_t *ev)
{
    ev->next = NULL;
    if (q->tail != NULL)
        q->tail->next = ev;
    else
        q->head = ev;
    q->tail = ev;
    q->count++;
}

ftc_ucx_ev_t *ftc_ucx_evq_pop(ftc_ucx_evq_t *q)
{
    ftc_ucx_ev_t *ev = q->head;
    if (ev == NULL)
        return NULL;
    q->head = ev->next;
    if (q->head == NULL)
        q->tail = NULL;
    q->count--;
    ev->next = NULL;
    return ev;
}

int ftc_ucx_ev_copy(ftc_ucx_ev_t *ev, const void *data, size_t len)
{
    ev->len = len;
    if (len <= sizeof(ev->inl)) {
        if (len > 0)
            memcpy(ev->inl, data, len);
        ev->data = ev->inl;
        return 0;
    }
    ev->heap = malloc(len);
    if (ev->heap == NULL)
        return -1;
    memcpy(ev->heap, data, len);
    ev->data = ev->heap;
    return 0;
}

void ftc_ucx_ev_release(ftc_ucx_t *u, ftc_ucx_ev_t *ev)
{
    if (ev->desc != NULL && u->worker != NULL)
        ucp_am_data_release(u->worker, ev->desc);
    free(ev->heap);
    ev->desc = NULL;
    ev->heap = NULL;
    ev->data = NULL;
}

void ftc_ucx_evq_clear(ftc_ucx_t *u, ftc_ucx_evq_t *q, bool release)
{
    ftc_ucx_ev_t *ev;
    while ((ev = ftc_ucx_evq_pop(q)) != NULL) {
        if (!release)
            ev->desc = NULL;    /* the worker that owned it is gone */
        ftc_ucx_ev_release(u, ev);
        free(ev);
    }
}
