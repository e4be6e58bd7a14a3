/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Huge pages for rxm's pools, so that a killed rank's exit is short.
 *
 * A rank's local peers hear of its SIGKILL (pidfd, SIGCHLD) only at the
 * end of its exit, after the kernel has freed its memory. Over
 * tcp;ofi_rxm that memory is mostly rxm's receive and transmit pools,
 * ~38 MB that libfabric 1.17 takes from malloc (posix_memalign, 17 MB
 * at a time: glibc maps each as its own chunk) and writes when it
 * creates them. In 4 KiB pages freeing them took ~3.3 ms of the exit's
 * CPU; in 2 MiB pages ~20 times fewer pages go (docs/libfabric.md, "A
 * killed rank's exit, and rxm's pools").
 *
 * glibc 2.35's tunable glibc.malloc.hugetlb=1 makes malloc
 * madvise(MADV_HUGEPAGE) the chunks of 2 MiB and more it maps, which is
 * what transparent huge pages in their "madvise" mode (Debian's default)
 * wait for. rxm itself has no such option in 1.17 (its pools are created
 * with OFI_BUFPOOL_NO_TRACK only; OFI_BUFPOOL_HUGEPAGES is libfabric's
 * internal flag, not an environment variable), and glibc reads tunables
 * only at exec, so it is the launcher that sets it, in the rank's
 * environment, for the ranks that run rxm over tcp.
 */
#ifndef FTC_RANK_HUGEPAGES_H
#define FTC_RANK_HUGEPAGES_H

#include <stddef.h>

#define FTC_RUN_HUGETLB_TUNABLE "glibc.malloc.hugetlb"

/*
 * The GLIBC_TUNABLES value a rank should start with. backend is the
 * ranks' FTCOLL_BACKEND (NULL or "" when none is named), provider the
 * libfabric provider asked for (FTCOLL_OFI_PROVIDER, else FI_PROVIDER;
 * NULL or "" when none: libfabric picks tcp;ofi_rxm first on a host
 * without a fabric), current the GLIBC_TUNABLES the ranks would inherit
 * (NULL when unset).
 *
 * Returns 1 with the value in out: current with glibc.malloc.hugetlb=1
 * added, for the libfabric backend over tcp or no provider named, and
 * for no backend named with a provider that names tcp (a program that
 * runs libfabric without FTCOLL_BACKEND). 0 when nothing is to change:
 * another backend, no backend and no provider named (ftcoll-bench's
 * default is zmq), a provider without tcp (the backend tunes rxm only
 * there, as it does FI_OFI_RXM_MSG_RX_SIZE), or a current value that
 * names glibc.malloc.hugetlb already (the user's choice, whatever it
 * is). -1 when out (len bytes) is too short.
 */
int ftc_run_hugepage_tunables(const char *backend, const char *provider,
                              const char *current, char *out, size_t len);

#endif
