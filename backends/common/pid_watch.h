/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who a process is, in a form its peers on the same host can watch: a
 * pidfd becomes readable when the process exits, however it ends, within
 * microseconds, where a transport's own detection may take a keepalive
 * interval (UCX shared memory: 100 ms and more).
 *
 * The identity is (boot id, pid namespace, pid, start time). A peer with
 * our boot id and pid namespace is one we can see; its pidfd is kept
 * only if the process it names started at the advertised time, so a
 * recycled pid is never mistaken for the peer. When in doubt nothing is
 * watched: a wrong report would exclude a live process for good.
 * (The libfabric backend calls these too, from its procmon.c.)
 */
#ifndef FTC_BK_PID_WATCH_H
#define FTC_BK_PID_WATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ftc_bk_identity {
    uint32_t pid;
    uint64_t starttime;         /* /proc/<pid>/stat field 22; 0 unknown */
    uint64_t pidns;             /* inode of /proc/self/ns/pid; 0 unknown */
    char boot_id[48];           /* /proc/sys/kernel/random/boot_id */
} ftc_bk_identity_t;

/* The packed size: a magic word, then the fields, little endian. */
#define FTC_BK_IDENTITY_LEN 76

/* This process's identity. */
void ftc_bk_identity_self(ftc_bk_identity_t *out);
/* Pack into FTC_BK_IDENTITY_LEN bytes at out. */
void ftc_bk_identity_pack(const ftc_bk_identity_t *id, unsigned char *out);
/* Unpack FTC_BK_IDENTITY_LEN bytes; 0, or -1 if they are not one. */
int ftc_bk_identity_unpack(const unsigned char *in, ftc_bk_identity_t *out);

#define FTC_BK_PID_UNKNOWN (-1)     /* cannot watch it: not ours to see */
#define FTC_BK_PID_GONE (-2)        /* certainly gone already */

/* A pidfd (close-on-exec) for peer if it runs on this host in our pid
 * namespace (self says which) and is the process that started at its
 * start time; FTC_BK_PID_GONE if that process is certainly gone;
 * FTC_BK_PID_UNKNOWN otherwise (another host, another namespace, an
 * old kernel). */
int ftc_bk_pidfd_open(const ftc_bk_identity_t *peer,
                      const ftc_bk_identity_t *self);

#endif
