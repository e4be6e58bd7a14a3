/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a killed rank leaves in /dev/shm. libfabric 1.17's shm provider
 * names its region /dev/shm/<pid>:<n>:<m> and removes it when the
 * endpoint closes; a process killed before that leaves it behind (16 MiB
 * of shared memory each, for ever). ftcoll-run removes a rank's regions
 * once the rank has exited and before reaping it: until then the pid is
 * still the rank's (a zombie's pid is not reused), so nothing of another
 * process can match.
 */
#ifndef FTC_SHM_LEFTOVERS_H
#define FTC_SHM_LEFTOVERS_H

#include <sys/types.h>

/* Unlink /dev/shm/<pid>:* that this user may remove; returns how many. */
int ftc_shm_remove_leftovers(pid_t pid);

#endif
