/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The send op. Every message gets the 16-byte backend header (sequence
 * number on the pair, sender, job token) in front. Four ways out, picked
 * by length (header included):
 *
 *   <= inject size            fi_inject: the provider copies, no completion
 *   zero-copy (zcopy_min > 0  fi_sendv of the header (in the tx slot) and
 *     and len >= zcopy_min)   the core's buffer; FTC_OK now,
 *                             ftc_transport_send_done from progress later
 *   <= COPY_SMALL             copied into the tx slot's bounce buffer
 *   longer                    copied into an allocation the slot owns
 *
 * All but zero-copy return FTC_SEND_INLINE: the backend owns the bytes.
 * A message the provider cannot take now (-FI_EAGAIN, or no free tx slot)
 * waits in its peer's queue, and every later message to that peer waits
 * behind it. Progress retries the queues. A copy that waits keeps its
 * bytes in the queue entry, which a tx slot then takes over, so a long
 * message is copied once.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fi_errno.h>

#include "ofi_internal.h"

enum { POSTED = 0, AGAIN = 1 };

/* Sequence number (u32 LE), then the constant sender and job token. */
static void put_hdr(const ftc_ofi_t *z, unsigned char *h, uint32_t seq)
{
    h[0] = (unsigned char)seq;
    h[1] = (unsigned char)(seq >> 8);
    h[2] = (unsigned char)(seq >> 16);
    h[3] = (unsigned char)(seq >> 24);
    memcpy(h + 4, z->hdr_tail, sizeof(z->hdr_tail));
}

/* --- Queues -------------------------------------------------------------- */

/* A copy of header + payload. */
static ftc_bk_qmsg_t *qmsg_wire(const ftc_ofi_t *z, uint32_t dest,
                                 uint32_t seq, const void *buf, size_t len)
{
    ftc_bk_qmsg_t *m = ftc_bk_qmsg_new(FTC_OFI_HDR + len);
    if (m == NULL)
        return NULL;
    m->dest = dest;
    m->seq = seq;
    m->len = FTC_OFI_HDR + len;
    put_hdr(z, m->data, seq);
    if (len > 0)
        memcpy(m->data + FTC_OFI_HDR, buf, len);
    return m;
}

void ftc_ofi_drop_queue(ftc_ofi_t *z, uint32_t r, int status)
{
    /* Detach first: send_done may run callbacks that send to r again. */
    ftc_bk_send_queue_t q = z->peers[r].q;
    memset(&z->peers[r].q, 0, sizeof(z->peers[r].q));
    ftc_bk_qmsg_t *m;
    while ((m = ftc_bk_sq_take(&q)) != NULL) {
        z->stats.msgs_dropped++;
        void *cookie = m->cookie;
        free(m);
        if (cookie != NULL && z->ctx != NULL)
            ftc_transport_send_done(z->ctx, cookie, status);
    }
}

static void mark_queued(ftc_ofi_t *z, uint32_t r)
{
    ftc_ofi_peer_t *p = &z->peers[r];
    ftc_bk_rank_set_add(&z->queued, r);
    if (p->q.count > z->stats.max_queue_depth)
        z->stats.max_queue_depth = p->q.count;
}

/* --- Tx slots ------------------------------------------------------------ */

static ftc_ofi_tx_t *tx_get(ftc_ofi_t *z)
{
    if (z->tx_free < 0)
        return NULL;
    ftc_ofi_tx_t *t = &z->tx[z->tx_free];
    z->tx_free = t->next_free;
    t->busy = true;
    t->hello = false;
    t->cookie = NULL;
    t->owned = NULL;
    t->mr = NULL;
    z->tx_busy++;
    return t;
}

static unsigned char *tx_bounce(ftc_ofi_t *z, const ftc_ofi_tx_t *t)
{
    return z->tx_mem + (size_t)(t - z->tx) * z->copy_small;
}

void ftc_ofi_tx_release(ftc_ofi_t *z, ftc_ofi_tx_t *t)
{
    if (t->mr != NULL)
        (void)fi_close(&t->mr->fid);
    free(t->owned);
    t->mr = NULL;
    t->owned = NULL;
    t->cookie = NULL;
    t->busy = false;
    t->next_free = z->tx_free;
    z->tx_free = (int32_t)(t - z->tx);
    z->tx_busy--;
}

/* --- Posting ------------------------------------------------------------- */

static void count_sent(ftc_ofi_t *z, size_t wire_len)
{
    z->stats.msgs_sent++;
    z->stats.bytes_sent += wire_len - FTC_OFI_HDR;
}

static int fi_rc(ftc_ofi_t *z, ssize_t rc)
{
    if (rc == -FI_EAGAIN) {
        z->stats.eagain++;
        return AGAIN;
    }
    return (int)rc;
}

/* wire: header and payload, len bytes in all. */
static int post_inject(ftc_ofi_t *z, uint32_t dest, const void *wire,
                       size_t len)
{
    ssize_t rc = fi_inject(z->ep, wire, len, z->peers[dest].fi_addr);
    if (rc != 0)
        return fi_rc(z, rc);
    z->stats.msgs_injected++;
    count_sent(z, len);
    return POSTED;
}

/* Header and payload (not contiguous) into the bounce buffer, or the
 * whole wire message when payload is NULL. */
static int post_bounce(ftc_ofi_t *z, uint32_t dest, const unsigned char *hdr,
                       const void *payload, size_t len)
{
    ftc_ofi_tx_t *t = tx_get(z);
    if (t == NULL)
        return AGAIN;
    unsigned char *b = tx_bounce(z, t);
    size_t wire = len;
    if (payload != NULL) {
        memcpy(b, hdr, FTC_OFI_HDR);
        memcpy(b + FTC_OFI_HDR, payload, len);
        wire = FTC_OFI_HDR + len;
    } else {
        memcpy(b, hdr, len);
    }
    t->dest = dest;
    t->len = wire;
    ssize_t rc = fi_send(z->ep, b, wire, z->tx_desc, z->peers[dest].fi_addr,
                         &t->fctx);
    if (rc != 0) {
        ftc_ofi_tx_release(z, t);
        return fi_rc(z, rc);
    }
    z->stats.msgs_copied++;
    count_sent(z, wire);
    return POSTED;
}

/* Send m's own bytes; on success the slot owns m. */
static int post_owned(ftc_ofi_t *z, ftc_bk_qmsg_t *m)
{
    ftc_ofi_tx_t *t = tx_get(z);
    if (t == NULL)
        return AGAIN;
    void *desc = NULL;
    if (z->mr_local) {
        int rc = ftc_ofi_mr_reg(z, m->data, m->len, FTC_OFI_SEND_ACCESS,
                                &t->mr);
        if (rc != 0) {
            ftc_ofi_logf(z, "rank %u: fi_mr_reg: %s", z->cfg.rank,
                         fi_strerror(-rc));
            ftc_ofi_tx_release(z, t);
            return rc == -FI_EAGAIN ? AGAIN : rc;
        }
        desc = fi_mr_desc(t->mr);
    }
    t->dest = m->dest;
    t->len = m->len;
    ssize_t rc = fi_send(z->ep, m->data, m->len, desc,
                         z->peers[m->dest].fi_addr, &t->fctx);
    if (rc != 0) {
        ftc_ofi_tx_release(z, t);
        return fi_rc(z, rc);
    }
    t->owned = m;
    z->stats.msgs_copied++;
    count_sent(z, m->len);
    return POSTED;
}

/* The header from the slot's (registered) bounce buffer, the payload
 * from the core's. */
static int post_zcopy(ftc_ofi_t *z, uint32_t dest, uint32_t seq,
                      const void *data, size_t len, void *cookie)
{
    ftc_ofi_tx_t *t = tx_get(z);
    if (t == NULL)
        return AGAIN;
    unsigned char *h = tx_bounce(z, t);
    put_hdr(z, h, seq);
    void *desc[2] = {z->tx_desc, NULL};
    if (z->mr_local) {
        /* The provider only reads; fi_mr_reg is not const-correct. */
        int rc = ftc_ofi_mr_reg(z, (void *)(uintptr_t)data, len,
                                FTC_OFI_SEND_ACCESS, &t->mr);
        if (rc != 0) {
            ftc_ofi_tx_release(z, t);
            return rc == -FI_EAGAIN ? AGAIN : rc;
        }
        desc[1] = fi_mr_desc(t->mr);
    }
    struct iovec iov[2] = {{h, FTC_OFI_HDR}, {(void *)(uintptr_t)data, len}};
    t->dest = dest;
    t->len = FTC_OFI_HDR + len;
    ssize_t rc = fi_sendv(z->ep, iov, desc, 2, z->peers[dest].fi_addr,
                          &t->fctx);
    if (rc != 0) {
        ftc_ofi_tx_release(z, t);
        return fi_rc(z, rc);
    }
    t->cookie = cookie;
    z->stats.msgs_zcopy++;
    count_sent(z, t->len);
    return POSTED;
}

/* The eager connect's hello: a bare header whose sender field carries
 * FTC_OFI_HELLO_FLAG, sequence number 0 (not part of the pair's
 * sequence). fi_send, not fi_inject: its completion is what connect.c
 * waits for. */
int ftc_ofi_post_hello(ftc_ofi_t *z, uint32_t r)
{
    ftc_ofi_tx_t *t = tx_get(z);
    if (t == NULL)
        return -FI_EAGAIN;
    unsigned char *b = tx_bounce(z, t);
    put_hdr(z, b, 0);
    uint32_t sender = z->cfg.rank | FTC_OFI_HELLO_FLAG;
    for (int i = 0; i < 4; i++)
        b[4 + i] = (unsigned char)(sender >> (8 * i));
    t->dest = r;
    t->len = FTC_OFI_HDR;
    t->hello = true;
    ssize_t rc = fi_send(z->ep, b, FTC_OFI_HDR, z->tx_desc,
                         z->peers[r].fi_addr, &t->fctx);
    if (rc != 0) {
        ftc_ofi_tx_release(z, t);
        if (rc == -FI_EAGAIN)
            z->stats.eagain++;
        return (int)rc;
    }
    return 0;
}

/* One queued message: POSTED (m is consumed), AGAIN, or an error. */
static int post_queued(ftc_ofi_t *z, ftc_bk_qmsg_t *m)
{
    int rc;
    if (m->cookie != NULL) {
        rc = post_zcopy(z, m->dest, m->seq, m->ref, m->len, m->cookie);
        if (rc == POSTED)
            free(m);
        return rc;
    }
    if (m->len <= z->inject_size)
        rc = post_inject(z, m->dest, m->data, m->len);
    else if (m->len <= z->copy_small)
        rc = post_bounce(z, m->dest, m->data, NULL, m->len);
    else
        return post_owned(z, m);
    if (rc == POSTED)
        free(m);
    return rc;
}

int ftc_ofi_flush_peer(ftc_ofi_t *z, uint32_t r)
{
    ftc_ofi_peer_t *p = &z->peers[r];
    int sent = 0;
    while (p->q.head != NULL) {
        ftc_bk_qmsg_t *m = p->q.head;
        /* Take it off first: on success it is gone or owned by a slot. */
        (void)ftc_bk_sq_take(&p->q);
        int rc = post_queued(z, m);
        if (rc == POSTED) {
            sent++;
            continue;
        }
        /* Put it back at the head. */
        ftc_bk_sq_prepend(&p->q, m);
        if (rc != AGAIN) {
            /* The report (from progress) drops the queue. */
            ftc_ofi_peer_lost(z, r, FTC_OFI_DETECT_SEND, 0, fi_strerror(-rc));
        }
        break;
    }
    return sent;
}

/* --- The op -------------------------------------------------------------- */

/* First attempt, nothing queued ahead. */
static int post_now(ftc_ofi_t *z, uint32_t dest, uint32_t seq, const void *buf,
                    size_t len, void *cookie, bool zcopy,
                    ftc_bk_qmsg_t **own)
{
    size_t wire = FTC_OFI_HDR + len;
    if (wire <= z->inject_size) {
        /* The header straight into the inject buffer: no copy of it. */
        put_hdr(z, z->scratch, seq);
        if (len > 0)
            memcpy(z->scratch + FTC_OFI_HDR, buf, len);
        return post_inject(z, dest, z->scratch, wire);
    }
    unsigned char hdr[FTC_OFI_HDR];
    put_hdr(z, hdr, seq);
    if (zcopy)
        return post_zcopy(z, dest, seq, buf, len, cookie);
    if (wire <= z->copy_small)
        return post_bounce(z, dest, hdr, buf, len);
    *own = qmsg_wire(z, dest, seq, buf, len);
    if (*own == NULL)
        return -FI_ENOMEM;
    int rc = post_owned(z, *own);
    if (rc == POSTED)
        *own = NULL;
    return rc;
}

int ftc_ofi_send(ftc_ofi_t *z, uint32_t dest, const void *buf, size_t len,
                 void *cookie)
{
    if (dest >= z->cfg.nranks || (buf == NULL && len > 0))
        return FTC_EINVAL;
    if (len > z->cfg.max_msg_size) {
        z->stats.msgs_oversize++;
        ftc_ofi_logf(z, "rank %u: refusing a %zu-byte message to rank %u: "
                        "longer than max_msg_size %zu (FTCOLL_OFI_MAX_MSG); "
                        "the core will treat rank %u as failed",
                     z->cfg.rank, len, dest, z->cfg.max_msg_size, dest);
        return FTC_EOVERFLOW;
    }
    if (dest == z->cfg.rank) {
        /* Fed back from progress: never into the core from an op. */
        if (ftc_bk_sq_push(&z->self_q, buf, len) != 0)
            return FTC_ENOMEM;
        return FTC_SEND_INLINE;
    }
    ftc_ofi_peer_t *p = &z->peers[dest];
    if (p->fi_addr == FI_ADDR_NOTAVAIL) {
        /* Its address was lost at set-up and it is reported failed
         * (address.c): nothing can reach it. */
        z->stats.msgs_dropped++;
        return FTC_SEND_INLINE;
    }
    if (p->state == FTC_OFI_PEER_FAILED && p->q.count > 0) {
        /* Reported dead and stuck: best effort only (transport.h:
         * completion never means delivery). */
        z->stats.msgs_dropped++;
        return FTC_SEND_INLINE;
    }
    bool zcopy = z->cfg.zcopy_min > 0 && len >= z->cfg.zcopy_min
                 && cookie != NULL && z->iov_limit >= 2;
    /* The sequence number is taken once the message is posted or queued:
     * a refused one leaves no gap. */
    uint32_t seq = p->tx_seq;
    ftc_bk_qmsg_t *own = NULL;
    if (p->q.count == 0) {
        int rc = post_now(z, dest, seq, buf, len, cookie, zcopy, &own);
        if (rc == POSTED) {
            p->tx_seq++;
            bool zc = zcopy && FTC_OFI_HDR + len > z->inject_size;
            return zc ? FTC_OK : FTC_SEND_INLINE;
        }
        if (rc != AGAIN) {
            free(own);
            ftc_ofi_logf(z, "rank %u: send to rank %u: %s", z->cfg.rank, dest,
                         fi_strerror(-rc));
            /* The core declares dest failed when we refuse: note how. */
            if (p->state == FTC_OFI_PEER_OK) {
                p->state = FTC_OFI_PEER_FAILED;
                p->detect = FTC_OFI_DETECT_SEND;
                p->reported_ns = ftc_bk_now_ns();
            }
            return rc == -FI_ENOMEM ? FTC_ENOMEM : FTC_ETRANSPORT;
        }
    }
    /* Wait in line. */
    if (p->q.bytes + FTC_OFI_HDR + len > z->cfg.max_queued_bytes) {
        free(own);
        ftc_ofi_logf(z, "rank %u: rank %u takes nothing: %zu bytes queued",
                     z->cfg.rank, dest, p->q.bytes);
        return FTC_ETRANSPORT;
    }
    if (own == NULL) {
        if (zcopy) {
            own = calloc(1, sizeof(*own));
            if (own != NULL) {
                own->dest = dest;
                own->seq = seq;
                own->len = len;
                own->ref = buf;
                own->cookie = cookie;
            }
        } else {
            own = qmsg_wire(z, dest, seq, buf, len);
        }
        if (own == NULL)
            return FTC_ENOMEM;
    }
    p->tx_seq++;
    ftc_bk_sq_append(&p->q, own);
    z->stats.msgs_queued++;
    mark_queued(z, dest);
    return zcopy ? FTC_OK : FTC_SEND_INLINE;
}
