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
#include "pid_watch.h"

/* The identity and the pidfd checks are the backends' common ones
 * (backends/common/pid_watch.c); the blob keeps its own layout. */
void ftc_ofi_self_identity(uint32_t *pid, uint64_t *starttime,
                           uint64_t *pidns, char boot_id[48])
{
    ftc_bk_identity_t self;
    ftc_bk_identity_self(&self);
    *pid = self.pid;
    *starttime = self.starttime;
    *pidns = self.pidns;
    memcpy(boot_id, self.boot_id, 48);
}

int ftc_ofi_pidfd_open(uint32_t pid, uint64_t starttime)
{
    /* The caller checked that the peer shares our boot and pid
     * namespace: the peer is us with its own pid and start time. */
    ftc_bk_identity_t self, peer;
    ftc_bk_identity_self(&self);
    peer = self;
    peer.pid = pid;
    peer.starttime = starttime;
    return ftc_bk_pidfd_open(&peer, &self);
}
