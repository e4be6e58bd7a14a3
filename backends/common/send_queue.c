/* SPDX-License-Identifier: BSD-3-Clause */
#include "send_queue.h"

#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"

void ftc_bk_sq_init(ftc_bk_send_queue_t *q)
{
    memset(q, 0, sizeof(*q));
}

ftc_bk_qmsg_t *ftc_bk_qmsg_new(size_t cap)
{
    ftc_bk_qmsg_t *m = malloc(sizeof(*m) + cap);
    if (m != NULL)
        memset(m, 0, sizeof(*m));
    return m;
}

void ftc_bk_sq_append(ftc_bk_send_queue_t *q, ftc_bk_qmsg_t *m)
{
    m->next = NULL;
    if (q->tail != NULL)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->bytes += m->len;
    q->count++;
}

void ftc_bk_sq_prepend(ftc_bk_send_queue_t *q, ftc_bk_qmsg_t *m)
{
    m->next = q->head;
    q->head = m;
    if (q->tail == NULL)
        q->tail = m;
    q->bytes += m->len;
    q->count++;
}

int ftc_bk_sq_push(ftc_bk_send_queue_t *q, const void *buf, size_t len)
{
    ftc_bk_qmsg_t *m = ftc_bk_qmsg_new(len);
    if (m == NULL)
        return -1;
    m->len = len;
    if (len > 0)
        memcpy(m->data, buf, len);
    ftc_bk_sq_append(q, m);
    return 0;
}

ftc_bk_qmsg_t *ftc_bk_sq_peek(const ftc_bk_send_queue_t *q)
{
    return q->head;
}

ftc_bk_qmsg_t *ftc_bk_sq_take(ftc_bk_send_queue_t *q)
{
    ftc_bk_qmsg_t *m = q->head;
    if (m == NULL)
        return NULL;
    q->head = m->next;
    if (q->head == NULL)
        q->tail = NULL;
    q->bytes -= m->len;
    q->count--;
    m->next = NULL;
    return m;
}

void ftc_bk_sq_pop(ftc_bk_send_queue_t *q)
{
    free(ftc_bk_sq_take(q));
}

void ftc_bk_sq_clear(ftc_bk_send_queue_t *q)
{
    while (q->head != NULL)
        ftc_bk_sq_pop(q);
}

int ftc_bk_sq_feed_self(ftc_bk_send_queue_t *q, ftc_context_t *ctx,
                        uint32_t rank, uint64_t *msgs, uint64_t *bytes,
                        uint64_t *rejected)
{
    size_t n = q->count;
    *msgs += n;
    for (size_t i = 0; i < n; i++) {
        ftc_bk_qmsg_t *m = ftc_bk_sq_take(q);
        *bytes += m->len;
        if (ftc_transport_recv(ctx, rank, m->data, m->len) != FTC_OK)
            (*rejected)++;
        free(m);
    }
    return (int)n;
}
