/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local peers' exits, through pidfds (backends/common/pid_watch.h).
 *
 * UCX reports a dead peer over shared memory only from its keepalive,
 * one UCX_KEEPALIVE_INTERVAL (100 ms here) after the process is gone:
 * that interval was most of the time from a SIGKILL to a shrunk group
 * (docs/ulfm.md). A peer on this host is a process we can watch: its
 * pidfd becomes readable when it exits, however it ends. ftc_ucx_exchange
 * passes every rank's identity along with its UCX address; a peer whose
 * process we can see gets a pidfd in an epoll set of its own, which sits
 * in the descriptor the embedder polls (a sleeping rank wakes on an
 * exit). A busy rank asks that set once a millisecond: a system call per
 * pass would cost shared memory its latency.
 *
 * A report from here takes the same path as UCX's error callback
 * (ftc_ucx_peer_lost): the worker is drained before the core hears of
 * the death, so the peer's last messages, already in our FIFO or socket,
 * come first.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ucx_internal.h"

enum {
    EXIT_CHECK_NS = 1000000,    /* a busy rank looks this often */
    CLOCK_EVERY_PASSES = 64,    /* passes between clock reads */
    EXIT_BATCH = 16
};

int ftc_ucx_exits_open(ftc_ucx_t *u)
{
    ftc_bk_identity_self(&u->self_id);
    u->xfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.fd = u->xfd;
    if (u->xfd < 0 || epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->xfd, &ev) != 0) {
        ftc_ucx_logf(u, "rank %u: epoll (exit watch): %s", u->cfg.rank,
                     strerror(errno));
        return -1;
    }
    return 0;
}

void ftc_ucx_exits_identity(const ftc_ucx_t *u, unsigned char *out)
{
    ftc_bk_identity_pack(&u->self_id, out);
}

void ftc_ucx_exits_watch(ftc_ucx_t *u, uint32_t r, const unsigned char *id)
{
    ftc_ucx_peer_t *p = &u->peers[r];
    ftc_bk_identity_t peer;
    if (u->xfd < 0 || p->pidfd >= 0 || ftc_bk_identity_unpack(id, &peer) != 0)
        return;
    int fd = ftc_bk_pidfd_open(&peer, &u->self_id);
    if (fd == FTC_BK_PID_GONE) {
        ftc_ucx_peer_lost(u, r, 0, "its process is gone");
        return;
    }
    if (fd < 0)
        return;     /* another host or namespace: UCX's reports only */
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u32 = r;
    if (epoll_ctl(u->xfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        return;
    }
    p->pidfd = fd;
    u->npidfds++;
}

static void unwatch(ftc_ucx_t *u, uint32_t r)
{
    ftc_ucx_peer_t *p = &u->peers[r];
    if (p->pidfd < 0)
        return;
    (void)epoll_ctl(u->xfd, EPOLL_CTL_DEL, p->pidfd, NULL);
    close(p->pidfd);
    p->pidfd = -1;
    u->npidfds--;
}

int ftc_ucx_exits_poll(ftc_ucx_t *u)
{
    if (u->npidfds == 0)
        return 0;
    if (!u->check_exits) {
        if (++u->passes_unclocked < CLOCK_EVERY_PASSES
            && !u->exits_clock_now)
            return 0;
        u->exits_clock_now = false;
        u->passes_unclocked = 0;
        uint64_t now = ftc_bk_now_ns();
        if (now < u->next_exit_check_ns)
            return 0;
        u->next_exit_check_ns = now + EXIT_CHECK_NS;
    }
    u->check_exits = false;
    int found = 0;
    struct epoll_event evs[EXIT_BATCH];
    int n;
    do {
        n = epoll_wait(u->xfd, evs, EXIT_BATCH, 0);
        for (int i = 0; i < n; i++) {
            uint32_t r = evs[i].data.u32;
            if (r >= u->cfg.nranks)
                continue;
            /* Readable once, for good: stop watching, then report. */
            unwatch(u, r);
            ftc_ucx_peer_lost(u, r,
                              (uint64_t)u->cfg.failure_grace_ms * 1000000u,
                              "its process exited");
            found++;
        }
    } while (n == EXIT_BATCH);
    return found;
}

void ftc_ucx_exits_close(ftc_ucx_t *u)
{
    if (u->peers != NULL)
        for (uint32_t r = 0; r < u->cfg.nranks; r++)
            if (u->peers[r].pidfd >= 0) {
                close(u->peers[r].pidfd);
                u->peers[r].pidfd = -1;
            }
    u->npidfds = 0;
    if (u->xfd >= 0)
        close(u->xfd);
    u->xfd = -1;
}
