/* SPDX-License-Identifier: BSD-3-Clause */
/* Peers' process identities and pidfds (pid_watch.h). */
#define _GNU_SOURCE /* syscall(): pidfd_open has no libc wrapper here */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pid_watch.h"
#include "le_bytes.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static const unsigned char magic[4] = {'F', 'P', 'I', '1'};

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

void ftc_bk_identity_self(ftc_bk_identity_t *out)
{
    memset(out, 0, sizeof(*out));
    out->pid = (uint32_t)getpid();
    out->starttime = proc_starttime("/proc/self/stat");
    struct stat st;
    out->pidns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino
                                                     : 0;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out->boot_id, sizeof(out->boot_id) - 1);
    close(fd);
    if (n <= 0) {
        memset(out->boot_id, 0, sizeof(out->boot_id));
        return;
    }
    for (ssize_t i = 0; i < n; i++)
        if (out->boot_id[i] == '\n')
            out->boot_id[i] = '\0';
}

/* Layout: magic 4, pid 4, start time 8, pid namespace 8, boot id 48
 * (NUL padded: boot ids are 36 characters), 4 spare. */
void ftc_bk_identity_pack(const ftc_bk_identity_t *id, unsigned char *out)
{
    memset(out, 0, FTC_BK_IDENTITY_LEN);
    memcpy(out, magic, 4);
    ftc_bk_put_le(out + 4, id->pid, 4);
    ftc_bk_put_le(out + 8, id->starttime, 8);
    ftc_bk_put_le(out + 16, id->pidns, 8);
    memcpy(out + 24, id->boot_id, sizeof(id->boot_id));
}

int ftc_bk_identity_unpack(const unsigned char *in, ftc_bk_identity_t *out)
{
    memset(out, 0, sizeof(*out));
    if (memcmp(in, magic, 4) != 0)
        return -1;
    out->pid = (uint32_t)ftc_bk_get_le(in + 4, 4);
    out->starttime = ftc_bk_get_le(in + 8, 8);
    out->pidns = ftc_bk_get_le(in + 16, 8);
    memcpy(out->boot_id, in + 24, sizeof(out->boot_id) - 1);
    return 0;
}

int ftc_bk_pidfd_open(const ftc_bk_identity_t *peer,
                      const ftc_bk_identity_t *self)
{
    if (peer->pid == 0 || peer->starttime == 0 || self->boot_id[0] == '\0'
        || self->pidns == 0 || peer->pidns != self->pidns
        || strncmp(peer->boot_id, self->boot_id, sizeof(self->boot_id))
               != 0)
        return FTC_BK_PID_UNKNOWN;
    long fd = syscall(SYS_pidfd_open, (pid_t)peer->pid, 0);
    if (fd < 0) {
        /* Our boot, our namespace: no such process means it is gone (it
         * exited after it published its identity, and was reaped).
         * ENOSYS (an old kernel) and the rest tell nothing. */
        return errno == ESRCH ? FTC_BK_PID_GONE : FTC_BK_PID_UNKNOWN;
    }
    /* Compare after opening: the pidfd pins the process, so the check
     * cannot race with the pid being reused. Another start time: the pid
     * belongs to someone else now, so the peer is gone too. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/%u/stat", peer->pid);
    uint64_t t = proc_starttime(path);
    if (t != peer->starttime) {
        close((int)fd);
        return t == 0 ? FTC_BK_PID_UNKNOWN : FTC_BK_PID_GONE;
    }
    (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return (int)fd;
}
