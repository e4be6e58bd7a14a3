/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backends/common/pid_watch.c: a process's identity survives packing,
 * a live peer's pidfd is quiet until the peer exits and readable after,
 * a reaped peer is "gone", and anything that might name another process
 * (another start time, boot, pid namespace) is never watched as the peer.
 * No clock: the test waits for the child's exit itself (poll with no
 * timeout), and meson's timeout catches a pidfd that never fires.
 */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pid_watch.h"

static int readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static void test_pack(void)
{
    ftc_bk_identity_t me, back;
    ftc_bk_identity_self(&me);
    CHECK_EQ(me.pid, (uint32_t)getpid());
    CHECK(me.starttime != 0);
    CHECK(me.pidns != 0);
    CHECK(me.boot_id[0] != '\0');
    unsigned char buf[FTC_BK_IDENTITY_LEN];
    ftc_bk_identity_pack(&me, buf);
    CHECK_EQ(ftc_bk_identity_unpack(buf, &back), 0);
    CHECK_EQ(back.pid, me.pid);
    CHECK_EQ(back.starttime, me.starttime);
    CHECK_EQ(back.pidns, me.pidns);
    CHECK_STR_EQ(back.boot_id, me.boot_id);
    buf[0] ^= 0xff;     /* not an identity: refused */
    CHECK_EQ(ftc_bk_identity_unpack(buf, &back), -1);
}

static void test_not_the_peer(void)
{
    ftc_bk_identity_t me, other;
    ftc_bk_identity_self(&me);
    /* Our own pid with another start time: the pid is someone else's
     * now, so the process it named is gone. */
    other = me;
    other.starttime++;
    CHECK_EQ(ftc_bk_pidfd_open(&other, &me), FTC_BK_PID_GONE);
    /* Another boot or pid namespace: nothing we can see. */
    other = me;
    other.boot_id[0] = other.boot_id[0] == 'x' ? 'y' : 'x';
    CHECK_EQ(ftc_bk_pidfd_open(&other, &me), FTC_BK_PID_UNKNOWN);
    other = me;
    other.pidns++;
    CHECK_EQ(ftc_bk_pidfd_open(&other, &me), FTC_BK_PID_UNKNOWN);
    other = me;
    other.starttime = 0;    /* unknown start time: never guess */
    CHECK_EQ(ftc_bk_pidfd_open(&other, &me), FTC_BK_PID_UNKNOWN);
}

static void test_child_exit(void)
{
    int to_child[2], from_child[2];
    CHECK_EQ(pipe(to_child), 0);
    CHECK_EQ(pipe(from_child), 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(to_child[1]);
        close(from_child[0]);
        ftc_bk_identity_t id;
        unsigned char buf[FTC_BK_IDENTITY_LEN];
        ftc_bk_identity_self(&id);
        ftc_bk_identity_pack(&id, buf);
        if (write(from_child[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
            _exit(2);
        char c;
        (void)!read(to_child[0], &c, 1);     /* until the parent closes */
        _exit(0);
    }
    close(to_child[0]);
    close(from_child[1]);
    unsigned char buf[FTC_BK_IDENTITY_LEN];
    size_t got = 0;
    while (got < sizeof(buf)) {
        ssize_t n = read(from_child[0], buf + got, sizeof(buf) - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    CHECK_EQ(got, sizeof(buf));
    ftc_bk_identity_t me, peer;
    ftc_bk_identity_self(&me);
    CHECK_EQ(ftc_bk_identity_unpack(buf, &peer), 0);
    CHECK_EQ(peer.pid, (uint32_t)child);
    int fd = ftc_bk_pidfd_open(&peer, &me);
    CHECK_MSG(fd >= 0, "pidfd of a live child: %d", fd);
    if (fd >= 0) {
        CHECK(!readable(fd, 0));        /* alive: quiet */
        close(to_child[1]);             /* let it exit */
        CHECK(readable(fd, -1));        /* its exit, not its reaping */
        close(fd);
    } else {
        close(to_child[1]);
    }
    int status;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Reaped: no such process, so certainly gone. */
    CHECK_EQ(ftc_bk_pidfd_open(&peer, &me), FTC_BK_PID_GONE);
    close(from_child[0]);
}

int main(void)
{
    test_pack();
    test_not_the_peer();
    test_child_exit();
    return check_report();
}
