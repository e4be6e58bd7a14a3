/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The set-up handshake: every endpoint wired up before the first
 * collective.
 *
 * An endpoint created with UCP_ERR_HANDLING_MODE_PEER over shared memory
 * sends at once, but UCP still has to learn the peer's endpoint id: a
 * wire-up REQUEST to the peer, answered by a REPLY. UCP starts that
 * exchange lazily, on the first send that cannot go out at once (the
 * peer's FIFO is full), i.e. at an arbitrary point of the run, typically
 * when a peer has just died and the others keep writing to it. The REPLY
 * to such a late REQUEST then waits on the dead peer's full FIFO, and
 * UCX 1.13 aborts when it fails that endpoint with a REQUEST or REPLY
 * still queued on it (ucp_request.c:684, ucp_request_send_state_ff from
 * uct_mm_ep_pending_purge, "got REP message"; the assertion was removed
 * upstream in UCX pull request 8175, after 1.13). A survivor aborted
 * because a peer died: the one thing this library must never do. Seen
 * by tracing every wire-up message of a job (UCX_MM_FIFO_SIZE=8 makes it
 * frequent): a REQUEST went out just before the peer was killed, the
 * REPLY to it after.
 *
 * So ftc_ucx_exchange (eager endpoints) ends with a handshake: each rank
 * sends every peer a HELLO active message (its own AM id, the 12-byte
 * header of ftcoll messages) flagged UCP_AM_SEND_FLAG_REPLY, which makes
 * UCP resolve the peer's endpoint id first, i.e. run the REQUEST/REPLY
 * exchange now and hold the HELLO until it is done; then it progresses
 * the worker until, for every peer not already lost,
 *   - its own HELLO has completed: this endpoint's exchange is done; and
 *   - the peer's HELLO has arrived: the peer's endpoint is done too, so
 *     any REPLY this rank owed it has been delivered (the peer's HELLO
 *     waited for it).
 * After that no endpoint of the job sends a REQUEST or REPLY again (the
 * wire-up messages UCX sends later, keepalive EP_CHECKs and EP_REMOVED,
 * are the kinds the assertion allows).
 *
 * A peer that dies meanwhile is reported by UCX (its error callback marks
 * it lost) and no longer waited for. A peer that neither answers nor
 * dies within the timeout (hung, or stopped) is declared lost, like any
 * peer that does not answer; suspicion is final, and if it was only slow
 * the core tells it it was excluded. The wait sleeps on the worker's
 * descriptor (the ranks of a job may share cores) and never longer than
 * max_sleep_ms, so UCX's keepalive keeps running.
 *
 * ftcoll messages that reach this rank during the handshake (a faster
 * peer may already have started a collective) are queued as usual and
 * fed to the core by the first ftc_ucx_progress.
 */
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "ucx_internal.h"

ucs_status_t ftc_ucx_hello_recv_cb(void *arg, const void *header,
                                   size_t header_length, void *data,
                                   size_t length,
                                   const ucp_am_recv_param_t *param)
{
    (void)data; (void)length; (void)param;
    ftc_ucx_t *u = arg;
    uint32_t r = ftc_ucx_header_rank(u, header, header_length);
    if (r == FTC_RANK_UNKNOWN) {
        u->stats.msgs_stranger++;
        return UCS_OK;
    }
    u->peers[r].hello_seen = true;
    return UCS_OK;
}

static void hello_sent_cb(void *request, ucs_status_t status, void *user_data)
{
    ftc_ucx_peer_t *p = user_data;
    /* An error means the endpoint failed: its error callback reports the
     * peer lost, which ends the wait for it as well. */
    p->hello_sent = status == UCS_OK;
    p->hello_pending = false;
    ucp_request_free(request);
}

static void send_hello(ftc_ucx_t *u, ftc_ucx_peer_t *p)
{
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof(prm));
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
                       | UCP_OP_ATTR_FIELD_FLAGS;
    /* REPLY: the receiver may answer on this endpoint, so UCP resolves
     * the peer's endpoint id first, i.e. runs the wire-up REQUEST/REPLY
     * exchange now and holds the HELLO until it is done. A plain eager
     * message over shared memory goes out at once, and the exchange
     * would start later, on the first send that finds the peer's FIFO
     * full: exactly when a peer has just died. */
    prm.flags = UCP_AM_SEND_FLAG_EAGER | UCP_AM_SEND_FLAG_REPLY;
    prm.cb.send = hello_sent_cb;
    prm.user_data = p;
    ucs_status_ptr_t sp = ucp_am_send_nbx(p->ep, FTC_UCX_HELLO_AM_ID, u->hdr,
                                          FTC_UCX_HDR_LEN, NULL, 0, &prm);
    if (sp == NULL) {
        p->hello_sent = true;
    } else if (UCS_PTR_IS_ERR(sp)) {
        ftc_ucx_peer_lost(u, p->rank, 0,
                          ucs_status_string(UCS_PTR_STATUS(sp)));
    } else {
        p->hello_pending = true;
    }
}

/* Peers still to hear from or to finish our HELLO to (lost ones are not
 * waited for). */
static uint32_t count_waiting(const ftc_ucx_t *u)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < u->cfg.nranks; r++) {
        const ftc_ucx_peer_t *p = &u->peers[r];
        if (r != u->cfg.rank && p->state == FTC_UCX_PEER_UP
            && (!p->hello_sent || !p->hello_seen))
            n++;
    }
    return n;
}

static void wait_a_little(ftc_ucx_t *u, uint64_t end)
{
    uint64_t now = ftc_bk_now_ns();
    if (now >= end)
        return;
    /* UCX's keepalive, which finds a peer that died during set-up, runs
     * only inside ucp_worker_progress: wake at least every max_sleep_ms
     * (100 ms if that is 0, "no limit"). */
    uint64_t cap = u->cfg.max_sleep_ms > 0 ? (uint64_t)u->cfg.max_sleep_ms
                                           : 100;
    uint64_t ms = (end - now + 999999) / 1000000;
    if (ms > cap)
        ms = cap;
    if (u->efd >= 0 && u->epfd >= 0) {
        if (ucp_worker_arm(u->worker) != UCS_OK)
            return;         /* busy: progress again */
        struct epoll_event evs[4];
        (void)epoll_wait(u->epfd, evs, 4, (int)ms);
        return;
    }
    struct timespec ts = {0, 100000};   /* no wake-up support: poll */
    nanosleep(&ts, NULL);
}

int ftc_ucx_handshake(ftc_ucx_t *u, int timeout_ms)
{
    if (u == NULL || !u->peers_set || u->worker == NULL || timeout_ms < 0)
        return FTC_EINVAL;
    for (uint32_t r = 0; r < u->cfg.nranks; r++) {
        ftc_ucx_peer_t *p = &u->peers[r];
        if (r != u->cfg.rank && p->state == FTC_UCX_PEER_UP && p->ep != NULL
            && !p->hello_sent && !p->hello_pending)
            send_hello(u, p);
    }
    uint64_t end = ftc_bk_now_ns() + (uint64_t)timeout_ms * 1000000u;
    while (count_waiting(u) > 0 && ftc_bk_now_ns() < end) {
        u->stats.worker_progress++;
        if (ucp_worker_progress(u->worker) == 0)
            wait_a_little(u, end);
    }
    for (uint32_t r = 0; r < u->cfg.nranks; r++) {
        ftc_ucx_peer_t *p = &u->peers[r];
        if (r == u->cfg.rank || p->state != FTC_UCX_PEER_UP)
            continue;
        if (!p->hello_sent || !p->hello_seen) {
            ftc_ucx_logf(u, "rank %u: rank %u did not complete the set-up "
                            "handshake within %d ms (%s): reported failed",
                         u->cfg.rank, r, timeout_ms,
                         !p->hello_sent ? "its endpoint never wired up"
                                        : "no word from it");
            ftc_ucx_peer_lost(u, r, 0, "no set-up handshake");
        }
    }
    return FTC_OK;
}
