/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A FIFO of messages a backend holds for a peer: sends the transport
 * library could not take yet, and messages to the backend's own rank,
 * fed back from progress. It counts its bytes so the backend can bound
 * it: an unbounded queue would turn a peer that stopped reading into
 * unbounded memory instead of a failure report.
 */
#ifndef FTC_BK_SEND_QUEUE_H
#define FTC_BK_SEND_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/transport.h"

/* One message. data[] holds len bytes, unless the backend keeps a
 * reference to the core's buffer instead (ref; len is then its length).
 * dest, seq and cookie are the backend's to use. */
typedef struct ftc_bk_qmsg {
    struct ftc_bk_qmsg *next;
    uint32_t dest;
    uint32_t seq;
    size_t len;
    void *cookie;
    const void *ref;
    unsigned char data[];
} ftc_bk_qmsg_t;

typedef struct ftc_bk_send_queue {
    ftc_bk_qmsg_t *head, *tail;
    size_t bytes;               /* sum of len */
    size_t count;
} ftc_bk_send_queue_t;

void ftc_bk_sq_init(ftc_bk_send_queue_t *q);

/* A zeroed message with room for cap bytes of data, or NULL. */
ftc_bk_qmsg_t *ftc_bk_qmsg_new(size_t cap);

/* Append m (len set) at the tail, or put it back at the head. */
void ftc_bk_sq_append(ftc_bk_send_queue_t *q, ftc_bk_qmsg_t *m);
void ftc_bk_sq_prepend(ftc_bk_send_queue_t *q, ftc_bk_qmsg_t *m);

/* Append a copy of buf. 0, or -1 when out of memory. */
int ftc_bk_sq_push(ftc_bk_send_queue_t *q, const void *buf, size_t len);

/* The oldest message, or NULL. */
ftc_bk_qmsg_t *ftc_bk_sq_peek(const ftc_bk_send_queue_t *q);

/* Remove the oldest message and hand it to the caller, who free()s it;
 * NULL if there is none. */
ftc_bk_qmsg_t *ftc_bk_sq_take(ftc_bk_send_queue_t *q);

/* Remove and free the oldest message. */
void ftc_bk_sq_pop(ftc_bk_send_queue_t *q);

void ftc_bk_sq_clear(ftc_bk_send_queue_t *q);

/*
 * Messages a rank sent itself wait in a queue and are fed back from
 * progress, never from inside the send op (transport.h). Feed the ones
 * queued now to ctx as coming from rank (those that feeding queues wait
 * for the next call), freeing each, and count them in the backend's
 * statistics: messages received, bytes received, messages the core
 * refused. Returns how many were fed.
 */
int ftc_bk_sq_feed_self(ftc_bk_send_queue_t *q, ftc_context_t *ctx,
                        uint32_t rank, uint64_t *msgs, uint64_t *bytes,
                        uint64_t *rejected);

#endif
