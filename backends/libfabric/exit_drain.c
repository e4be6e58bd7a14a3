/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A local peer's exit is reported once its last messages have been read.
 *
 * The core must see what a peer sent before it died before it hears of
 * the death (transport.h asks each pair's messages in order; a message
 * read after the report comes from a peer the core holds failed and is
 * dropped, and an exclusion notice among them is lost: decisions.md,
 * "A lost ZeroMQ peer is reported after its last messages"). The exit
 * monitor's pidfd becomes readable in the kernel's exit_notify, the last
 * step of the exit, after the process's files were closed. By then
 * everything it wrote is on our side:
 *   - shm: its messages of up to the inject size (4096 bytes), which the
 *     backend sends with fi_inject, are copies into our region made
 *     before fi_inject returned (longer ones are read from the sender's
 *     memory by CMA and die with it, however long we wait);
 *   - tcp;ofi_rxm on this host: its socket's close hands the kernel's
 *     send queue to loopback, in order, ended by a FIN, or by an RST when
 *     it left data unread (Linux keeps our receive queue readable after
 *     an RST, and libfabric's tcp reads it before the error). rxm over
 *     tcp sends messages above its 16 KiB buffer by rendezvous, which
 *     needs the sender alive: those die with it, as over shm.
 * What remains is reading, and a pass reads a bounded amount: at most
 * CQ_PER_PASS entries, and it stops at the first short fi_cq_read, which
 * over rxm is whatever one provider progress call produced. A report on
 * the pass that sees the exit gave the core 10-12 of a dead peer's last
 * 600 messages over tcp;ofi_rxm (tests/libfabric/ofi_last_words.c, the
 * drain switched off; the others came after its death). So the report
 * waits until the CQ has been read to empty DRAIN_QUIET_PASSES passes in
 * a row without a message from that peer. Every fi_cq_read runs the
 * provider's progress over every connection, so while the peer's bytes
 * remain, each such read yields at least one of its messages and the
 * count starts over. It is tied to progress, not time: it used to be a
 * fixed report_grace_ms of 2 ms, which a survivor without a CPU could
 * outlast and an idle machine wasted (most of 2 ms of the failure's
 * cost). report_grace_ms (default 0) still adds a minimum
 * delay after the exit, for whoever wants one.
 *
 * A pass that hits CQ_PER_PASS has not emptied the CQ and counts for
 * nothing, so other peers' traffic cannot make the quiet count run
 * ahead of the peer's messages still in the CQ. While a drain lasts,
 * progress never sleeps (ftc_ofi_rearm says something is due) nor naps.
 */
#include "ofi_internal.h"

/* Passes in a row that must read the CQ to empty without a message from
 * the dead peer. One suffices where each read ends a message of every
 * readable connection; a few more cover a read that only advanced a
 * connection's state (a header without a receive buffer yet, rxm's
 * connection progress). A pass is one fi_cq_read with its provider
 * progress, microseconds: 8 cost tens of microseconds, once per exit. */
#define DRAIN_QUIET_PASSES 8u

void ftc_ofi_exit_seen(ftc_ofi_t *z, uint32_t r)
{
    ftc_ofi_peer_t *p = &z->peers[r];
    if (p->state != FTC_OFI_PEER_OK)
        return;
    ftc_ofi_peer_lost(z, r, FTC_OFI_DETECT_EXIT, UINT64_MAX,
                      "its process exited");
    p->draining = true;
    p->drain_heard = false;
    p->drain_quiet = 0;
    z->ndraining++;
}

void ftc_ofi_drain_step(ftc_ofi_t *z)
{
    uint64_t grace = (uint64_t)z->cfg.report_grace_ms * 1000000u;
    for (uint32_t i = 0; i < z->lost.count; i++) {
        uint32_t r = z->lost.ranks[i];
        ftc_ofi_peer_t *p = &z->peers[r];
        if (!p->draining)
            continue;
        if (p->drain_heard)
            p->drain_quiet = 0;
        else if (z->cq_emptied)
            p->drain_quiet++;
        p->drain_heard = false;
        if (p->drain_quiet < DRAIN_QUIET_PASSES)
            continue;
        /* Over: due now, or when the minimum delay ends (grace.h). */
        p->draining = false;
        z->ndraining--;
        z->lost.due_ns[r] = p->lost_ns + grace;
        (void)ftc_ofi_rearm(z);
    }
}
