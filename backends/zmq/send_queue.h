/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A FIFO of message copies, for sends ZeroMQ could not take at once. It
 * counts its bytes so the backend can bound it: an unbounded queue would
 * turn a peer that stopped reading into unbounded memory instead of a
 * failure report.
 */
#ifndef FTC_ZMQ_SEND_QUEUE_H
#define FTC_ZMQ_SEND_QUEUE_H

#include <stddef.h>

typedef struct ftc_zmq_qmsg {
    struct ftc_zmq_qmsg *next;
    size_t len;
    unsigned char data[];
} ftc_zmq_qmsg_t;

typedef struct ftc_zmq_send_queue {
    ftc_zmq_qmsg_t *head, *tail;
    size_t bytes;
    size_t count;
} ftc_zmq_send_queue_t;

void ftc_zmq_sq_init(ftc_zmq_send_queue_t *q);

/* Append a copy of buf. 0, or -1 when out of memory. */
int ftc_zmq_sq_push(ftc_zmq_send_queue_t *q, const void *buf, size_t len);

/* The oldest message, or NULL. */
ftc_zmq_qmsg_t *ftc_zmq_sq_peek(const ftc_zmq_send_queue_t *q);

/* Remove the oldest message and hand it to the caller, who free()s it;
 * NULL if there is none. */
ftc_zmq_qmsg_t *ftc_zmq_sq_take(ftc_zmq_send_queue_t *q);

/* Remove and free the oldest message. */
void ftc_zmq_sq_pop(ftc_zmq_send_queue_t *q);

void ftc_zmq_sq_clear(ftc_zmq_send_queue_t *q);

#endif
