/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local peers' exits. libfabric's RDM endpoints do not report a dead
 * peer, but a peer on this host is a process we can watch: a pidfd
 * becomes readable when the process exits, however it ends. The blob
 * carries (boot id, pid namespace, pid, start time); a peer with our boot
 * id and pid namespace is one we can see, and the pidfd is kept only if
 * the process it names started at the advertised time, so a recycled pid
 * is never mistaken for the peer. When in doubt we watch
 * nothing: a wrong report would exclude a live process for good.
 */
#define _GNU_SOURCE /* syscall(): pidfd_open has no libc wrapper here */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ofi_internal.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Field 22 of /proc/<pid>/stat: the start time in clock ticks since
 * boot. 0 if it cannot be read. */
static uint64_t proc_starttime(const char *path)
{
    char buf[1024];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and parentheses: count
     * from the last ')'. */
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return 0;
    p++;
    for (int field = 3; field < 22; field++) {
        while (*p == ' ')
            p++;
        while (*p != ' ' && *p != '\0')
            p++;
        if (*p == '\0')
            return 0;
    }
    return strtoull(p, NULL, 10);
}

void ftc_ofi_self_identity(uint32_t *pid, uint64_t *starttime,
                           uint64_t *pidns, char boot_id[48])
{
    *pid = (uint32_t)getpid();
    *starttime = proc_starttime("/proc/self/stat");
    struct stat st;
    *pidns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
    memset(boot_id, 0, 48);
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, boot_id, 47);
    close(fd);
    if (n <= 0) {
        memset(boot_id, 0, 48);
        return;
    }
    for (ssize_t i = 0; i < n; i++)
        if (boot_id[i] == '\n')
            boot_id[i] = '\0';
}

int ftc_ofi_pidfd_open(uint32_t pid, uint64_t starttime)
{
    if (pid == 0 || starttime == 0)
        return FTC_OFI_PID_UNKNOWN;
    long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (fd < 0) {
        /* The caller checked that the pid is in our namespace on our
         * boot: no such process means it is gone (it exited after it
         * published its address, and was reaped). ENOSYS (an old
         * kernel) and the rest tell nothing. */
        return errno == ESRCH ? FTC_OFI_PID_GONE : FTC_OFI_PID_UNKNOWN;
    }
    /* Compare after opening: the pidfd pins the process, so the check
     * cannot race with the pid being reused. Another start time: the pid
     * belongs to someone else now, so the peer is gone too. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/%u/stat", pid);
    uint64_t t = proc_starttime(path);
    if (t != starttime) {
        close((int)fd);
        return t == 0 ? FTC_OFI_PID_UNKNOWN : FTC_OFI_PID_GONE;
    }
    (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return (int)fd;
}
