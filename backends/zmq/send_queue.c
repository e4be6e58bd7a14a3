/* SPDX-License-Identifier: BSD-3-Clause */
#include "send_queue.h"

#include <stdlib.h>
#include <string.h>

void ftc_zmq_sq_init(ftc_zmq_send_queue_t *q)
{
    memset(q, 0, sizeof(*q));
}

int ftc_zmq_sq_push(ftc_zmq_send_queue_t *q, const void *buf, size_t len)
{
    ftc_zmq_qmsg_t *m = malloc(sizeof(*m) + len);
    if (m == NULL)
        return -1;
    m->next = NULL;
    m->len = len;
    if (len > 0)
        memcpy(m->data, buf, len);
    if (q->tail != NULL)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->bytes += len;
    q->count++;
    return 0;
}

ftc_zmq_qmsg_t *ftc_zmq_sq_peek(const ftc_zmq_send_queue_t *q)
{
    return q->head;
}

ftc_zmq_qmsg_t *ftc_zmq_sq_take(ftc_zmq_send_queue_t *q)
{
    ftc_zmq_qmsg_t *m = q->head;
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

void ftc_zmq_sq_pop(ftc_zmq_send_queue_t *q)
{
    free(ftc_zmq_sq_take(q));
}

void ftc_zmq_sq_clear(ftc_zmq_send_queue_t *q)
{
    while (q->head != NULL)
        ftc_zmq_sq_pop(q);
}
