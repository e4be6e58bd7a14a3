/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eager connection set-up (cfg.eager_connect, the default), run by
 * ftc_ofi_set_peers once the address vector is filled.
 *
 * Why (docs/libfabric.md, "Connections and rxm's buffers"). Connection-
 * oriented providers connect on the first send to a peer. With
 * tcp;ofi_rxm (libfabric 1.17) the peer's half of that (accepting the
 * connection request) runs only inside the peer's fi_cq_read, at most
 * once per FI_OFI_RXM_CM_PROGRESS_INTERVAL (10 ms) while the peer has no
 * connection of its own in progress, and the CQ's wait descriptor does
 * not wake a peer that sleeps on it when a request arrives. Measured
 * here: a first send waited 60-200 ms for a peer that slept in progress
 * waiting for its own messages, and n = 8 jobs saw healthy ranks excluded
 * by the core's keepalive (100 + 200 ms) in the first collective. The
 * sender's retries (every millisecond) do not help: they progress only
 * the sender's half.
 *
 * How. Every rank sends every peer a hello: a bare backend header whose
 * sender field carries FTC_OFI_HELLO_FLAG, which the receiver notes and
 * drops (it is not part of the pair's sequence). It goes out with
 * fi_send, not fi_inject, for its completion: a provider completes it
 * once the connection is up, which takes the peer's process to accept
 * it. Each rank then polls the CQ (never sleeping on its descriptor,
 * which misses connection requests) and retries the hellos the provider
 * refused with -FI_EAGAIN (rxm's answer while it connects; each retry
 * also runs rxm's connection progress) until, for every peer, its own
 * hello has completed and the peer's hello has arrived. Since every rank
 * does the same at the same time, both halves of every connection make
 * progress. The arrival matters as much as the completion: shm connects
 * each direction separately, and a rank that stopped progressing once
 * its own hellos completed would leave a peer's connection request to it
 * unaccepted; and a rank cannot finish before every peer has sent its
 * hellos, which bounds how far ahead of the slowest one it starts (the
 * first connection costs rxm a 17 MB buffer pool, zeroed: up to a second
 * on this machine's 2 shared vCPUs). A rank that finishes may still
 * start sending while a peer is finishing; the peer holds such messages
 * for its core (progress.c, on_recv).
 *
 * Only peers whose address blob says they connect eagerly too take part
 * (address.c): a lazy peer would never answer.
 *
 * A peer not connected both ways after connect_timeout_ms is reported
 * failed (FTC_OFI_DETECT_CONNECT), as the UCX backend reports a peer its
 * eager endpoint creation could not reach; a peer whose process exits
 * meanwhile or is gone already (exit monitor, address.c), whose hello completes in error, or to which
 * the provider refuses to send, is reported as at any other time. The
 * reports reach the core from the first progress call after
 * ftc_ofi_attach.
 */
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include <rdma/fi_errno.h>

#include "ofi_internal.h"

/* Poll with sched_yield for this long after the last event, then nap,
 * from NAP_MIN_NS doubling to NAP_MAX_NS: ranks share CPUs here, and
 * polling hard would starve the peers we wait for (each spends a good
 * part of the set-up zeroing rxm's buffer pool). */
#define SPIN_NS 200000u
#define NAP_MIN_NS 50000u
#define NAP_MAX_NS 1000000u
/* Ask epoll (the exit monitor's pidfds) this often. */
#define COLLECT_EVERY_NS 1000000u

static void nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* Connected to r both ways: our hello has completed and its has
 * arrived. */
static bool pair_done(const ftc_ofi_peer_t *p)
{
    return p->hello == FTC_OFI_HELLO_DONE && p->hello_in;
}

/* Post the hellos not yet taken and count the peers not done with. */
static uint32_t post_and_count(ftc_ofi_t *z, int *events)
{
    uint32_t left = 0;
    for (uint32_t r = 0; r < z->cfg.nranks; r++) {
        ftc_ofi_peer_t *p = &z->peers[r];
        if (p->hello == FTC_OFI_HELLO_NONE || pair_done(p))
            continue;
        if (p->state != FTC_OFI_PEER_OK) {
            /* Found dead meanwhile (exit, CQ error): reported as such. */
            p->hello = FTC_OFI_HELLO_NONE;
            continue;
        }
        if (p->hello == FTC_OFI_HELLO_UNSENT) {
            int rc = ftc_ofi_post_hello(z, r);
            if (rc == 0) {
                p->hello = FTC_OFI_HELLO_POSTED;
                (*events)++;
            } else if (rc != -FI_EAGAIN) {
                p->hello = FTC_OFI_HELLO_NONE;
                ftc_ofi_peer_lost(z, r, FTC_OFI_DETECT_SEND, 0,
                                  fi_strerror(-rc));
                continue;
            }
        }
        left++;
    }
    return left;
}

void ftc_ofi_connect_all(ftc_ofi_t *z)
{
    uint32_t want = 0;
    for (uint32_t r = 0; r < z->cfg.nranks; r++) {
        ftc_ofi_peer_t *p = &z->peers[r];
        p->hello = FTC_OFI_HELLO_NONE;
        if (r != z->cfg.rank && p->state == FTC_OFI_PEER_OK && p->eager) {
            p->hello = FTC_OFI_HELLO_UNSENT;
            want++;
        }
    }
    if (want == 0)
        return;
    uint64_t start = ftc_bk_now_ns();
    uint64_t deadline = start + (uint64_t)z->cfg.connect_timeout_ms * 1000000u;
    uint64_t last_event = start, next_collect = start;
    long nap_ns = NAP_MIN_NS;
    uint32_t left;
    for (;;) {
        int events = 0;
        uint64_t now = ftc_bk_now_ns();
        if (now >= next_collect) {
            events += ftc_ofi_collect(z, 0);
            next_collect = now + COLLECT_EVERY_NS;
        }
        events += ftc_ofi_read_cq(z);
        left = post_and_count(z, &events);
        now = ftc_bk_now_ns();
        if (left == 0 || now >= deadline)
            break;
        if (events > 0) {
            last_event = now;
            nap_ns = NAP_MIN_NS;
        } else if (now - last_event < SPIN_NS) {
            sched_yield();
        } else {
            nap(nap_ns);
            if (nap_ns < NAP_MAX_NS)
                nap_ns *= 2;
        }
    }
    uint64_t took = ftc_bk_now_ns() - start;
    z->stats.connect_ns = took;
    uint32_t silent = 0;
    for (uint32_t r = 0; r < z->cfg.nranks; r++) {
        ftc_ofi_peer_t *p = &z->peers[r];
        if (p->hello != FTC_OFI_HELLO_NONE && !pair_done(p)) {
            char why[160];
            snprintf(why, sizeof(why), "not connected after %d ms "
                                       "(FTCOLL_OFI_CONNECT_MS): our hello "
                                       "%s, its hello %s",
                     z->cfg.connect_timeout_ms,
                     p->hello == FTC_OFI_HELLO_DONE ? "completed"
                                                    : "did not complete",
                     p->hello_in ? "arrived" : "did not arrive");
            ftc_ofi_peer_lost(z, r, FTC_OFI_DETECT_CONNECT, 0, why);
            silent++;
        }
        /* A hello posted to a silent peer keeps its tx slot until it
         * completes (or the endpoint closes). */
        p->hello = FTC_OFI_HELLO_NONE;
    }
    if (silent > 0 || took > 1000000000u)
        ftc_ofi_logf(z, "rank %u: eager connect to %u peers took %.1f ms, "
                        "%u did not answer", z->cfg.rank, want, took / 1e6,
                     silent);
}
