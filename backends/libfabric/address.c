/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addresses: the blob each rank contributes to the exchange, its checks,
 * and the address vector. Blob layout (FTC_OFI_BLOB_SIZE bytes, integers
 * little-endian):
 *
 *     0  "FOFI"           8  rank u32         24 start time u64
 *     4  version u16     12  pid u32          32 pid namespace u64
 *     6  addrlen u16     16  job token u64    40 addr_format u32
 *                                             44 flags u32 (bit 0: eager
 *                                                connect; was padding)
 *    48  boot id[48]     96  provider[64]    160 address[256]
 *   416  FNV-1a 64 of bytes 0..415
 *
 * Ranks are inserted into the FI_AV_TABLE address vector in rank order,
 * one at a time, and each peer keeps the fi_addr_t it was given: usually
 * its rank, but a provider may lose a peer's address (insert_peers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "ofi_internal.h"
#include "le_bytes.h"

#define BLOB_VERSION 1
#define OFF_VERSION 4
#define OFF_ADDRLEN 6
#define OFF_RANK 8
#define OFF_PID 12
#define OFF_TOKEN 16
#define OFF_START 24
#define OFF_PIDNS 32
#define OFF_FORMAT 40
#define OFF_FLAGS 44
#define FLAG_EAGER 1u
#define OFF_BOOT 48
#define OFF_PROV 96
#define OFF_ADDR 160
#define OFF_SUM 416

_Static_assert(OFF_ADDR + FTC_OFI_ADDR_MAX == OFF_SUM, "blob layout");
_Static_assert(OFF_SUM + 8 == FTC_OFI_BLOB_SIZE, "blob size");
_Static_assert(OFF_PROV + FTC_OFI_PROV_MAX == OFF_ADDR, "blob layout");

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void ftc_ofi_blob_build(ftc_ofi_t *z, const void *addr, size_t addrlen)
{
    unsigned char *b = z->blob;
    memset(b, 0, FTC_OFI_BLOB_SIZE);
    memcpy(b, "FOFI", 4);
    uint32_t pid;
    uint64_t start, pidns;
    char boot[48];
    ftc_ofi_self_identity(&pid, &start, &pidns, boot);
    ftc_bk_put_le(b + OFF_VERSION, BLOB_VERSION, 2);
    ftc_bk_put_le(b + OFF_ADDRLEN, addrlen, 2);
    ftc_bk_put_le(b + OFF_RANK, z->cfg.rank, 4);
    ftc_bk_put_le(b + OFF_PID, pid, 4);
    ftc_bk_put_le(b + OFF_TOKEN, z->cfg.job_token, 8);
    ftc_bk_put_le(b + OFF_START, start, 8);
    ftc_bk_put_le(b + OFF_PIDNS, pidns, 8);
    ftc_bk_put_le(b + OFF_FORMAT, z->info->addr_format, 4);
    ftc_bk_put_le(b + OFF_FLAGS, z->cfg.eager_connect ? FLAG_EAGER : 0, 4);
    memcpy(b + OFF_BOOT, boot, 47);
    snprintf((char *)b + OFF_PROV, FTC_OFI_PROV_MAX, "%s", z->provider);
    memcpy(b + OFF_ADDR, addr, addrlen);
    ftc_bk_put_le(b + OFF_SUM, fnv1a(b, OFF_SUM), 8);
}

const void *ftc_ofi_local_blob(const ftc_ofi_t *z)
{
    return z != NULL ? z->blob : NULL;
}

/* Is blob b a well-formed blob of rank r of our job on our provider? */
static int blob_check(ftc_ofi_t *z, uint32_t r, const unsigned char *b)
{
    if (memcmp(b, "FOFI", 4) != 0 || ftc_bk_get_le(b + OFF_VERSION, 2) != BLOB_VERSION
        || ftc_bk_get_le(b + OFF_SUM, 8) != fnv1a(b, OFF_SUM)) {
        ftc_ofi_logf(z, "rank %u: the address of rank %u is not a libfabric "
                        "backend address (another backend, or corrupted)",
                     z->cfg.rank, r);
        return -1;
    }
    char prov[FTC_OFI_PROV_MAX];
    memcpy(prov, b + OFF_PROV, sizeof(prov));
    prov[sizeof(prov) - 1] = '\0';
    if (ftc_bk_get_le(b + OFF_RANK, 4) != r) {
        ftc_ofi_logf(z, "rank %u: slot %u of the exchange holds rank %u's "
                        "address", z->cfg.rank, r,
                     (unsigned)ftc_bk_get_le(b + OFF_RANK, 4));
        return -1;
    }
    if (ftc_bk_get_le(b + OFF_TOKEN, 8) != z->cfg.job_token) {
        ftc_ofi_logf(z, "rank %u: rank %u belongs to another job (job token "
                        "%016llx, ours %016llx)", z->cfg.rank, r,
                     (unsigned long long)ftc_bk_get_le(b + OFF_TOKEN, 8),
                     (unsigned long long)z->cfg.job_token);
        return -1;
    }
    if (strcmp(prov, z->provider) != 0
        || ftc_bk_get_le(b + OFF_FORMAT, 4) != z->info->addr_format) {
        ftc_ofi_logf(z, "rank %u: rank %u uses libfabric provider '%s', this "
                        "rank uses '%s': every rank must use the same one "
                        "(set FTCOLL_OFI_PROVIDER or FI_PROVIDER for the "
                        "whole job)", z->cfg.rank, r, prov, z->provider);
        return -1;
    }
    size_t len = (size_t)ftc_bk_get_le(b + OFF_ADDRLEN, 2);
    if (len == 0 || len > FTC_OFI_ADDR_MAX) {
        ftc_ofi_logf(z, "rank %u: rank %u's address has a bad length (%zu)",
                     z->cfg.rank, r, len);
        return -1;
    }
    return 0;
}

/* Watch rank r's process if it runs where we can see it. */
static void watch_process(ftc_ofi_t *z, uint32_t r, const unsigned char *b)
{
    const unsigned char *me = z->blob;
    if (!z->cfg.pid_monitor || r == z->cfg.rank || me[OFF_BOOT] == '\0'
        || memcmp(me + OFF_BOOT, b + OFF_BOOT, 48) != 0
        || ftc_bk_get_le(me + OFF_PIDNS, 8) != ftc_bk_get_le(b + OFF_PIDNS, 8)
        || ftc_bk_get_le(me + OFF_PIDNS, 8) == 0)
        return;
    int fd = ftc_ofi_pidfd_open((uint32_t)ftc_bk_get_le(b + OFF_PID, 4),
                                ftc_bk_get_le(b + OFF_START, 8));
    if (fd == FTC_OFI_PID_GONE) {
        /* It died after it published its address (and was reaped): a
         * failure like any other, reported now rather than after the
         * eager connect's connect_timeout_ms of waiting for its hello.
         * No grace (report_grace_ms is for reading a dying peer's last
         * messages): before our set-up it can have sent us nothing but a
         * hello, and a rank whose peers have waited for it can finish a
         * whole run of collectives within the grace (seen: 20
         * allreduces in 1.5 ms, the report never made). */
        ftc_ofi_peer_lost(z, r, FTC_OFI_DETECT_EXIT, 0,
                          "its process exited before set-up");
        return;
    }
    if (fd < 0)
        return;
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u64 = (uint64_t)FTC_OFI_TAG_PIDFD << 32 | r;
    if (epoll_ctl(z->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        return;
    }
    z->peers[r].pidfd = fd;
}

/* Does address vector entry fa hold the address of blob b? 1 yes, 0 no,
 * -1 the provider cannot say. */
static int entry_holds(ftc_ofi_t *z, fi_addr_t fa, const unsigned char *b)
{
    unsigned char got[FTC_OFI_ADDR_MAX];
    size_t len = sizeof(got);
    size_t want = (size_t)ftc_bk_get_le(b + OFF_ADDRLEN, 2);
    if (fi_av_lookup(z->av, fa, got, &len) != 0 || len > sizeof(got))
        return -1;
    return len == want && memcmp(got, b + OFF_ADDR, want) == 0;
}

/* The rank before r that was given fa, or UINT32_MAX. */
static uint32_t fi_addr_owner(const ftc_ofi_t *z, const uint32_t *owner,
                              uint32_t r, fi_addr_t fa)
{
    if (fa < z->cfg.nranks)
        return owner[fa];
    for (uint32_t q = 0; q < r; q++)
        if (z->peers[q].fi_addr == fa)
            return q;
    return UINT32_MAX;
}

/*
 * Insert every rank's address, in rank order, one at a time. A peer whose
 * address the provider cannot take is a failed peer, not a set-up error:
 * it was alive at the exchange and is unreachable now (dead, or its
 * address no longer means anything), which is a failure like any other
 * (docs/libfabric.md, "A peer gone at set-up"). Only our own address
 * failing, or a state we cannot read, refuses the set-up.
 *
 * Two ways a provider shows it. It may refuse the insertion (a count
 * other than 1; FI_SYNC_ERR gives the reason where the provider fills it
 * in). Or, as libfabric 1.17's shm does, it may accept the address of a
 * peer whose region is gone (shm_open: ENOENT, turned into success) but
 * leave its slot in the provider's peer map free: the next peer's
 * address takes that slot, and since the address vector's entries are
 * keyed by slot, fi_av_insert hands the next peer the lost peer's
 * fi_addr_t ("addr already in AV"). The entry now leads to the later
 * peer, so the earlier one is unreachable and every later rank's fi_addr_t
 * is one below its rank. fi_av_lookup says which of the two the shared
 * entry holds; the other is reported failed and never sent to.
 */
static int insert_peers(ftc_ofi_t *z, const unsigned char *all)
{
    uint32_t n = z->cfg.nranks, me = z->cfg.rank;
    uint32_t *owner = malloc((size_t)n * sizeof(*owner));
    if (owner == NULL)
        return FTC_ENOMEM;
    for (uint32_t r = 0; r < n; r++)
        owner[r] = UINT32_MAX;
    int ret = FTC_OK;
    for (uint32_t r = 0; r < n && ret == FTC_OK; r++) {
        const unsigned char *b = all + (size_t)r * FTC_OFI_BLOB_SIZE;
        fi_addr_t fa = FI_ADDR_NOTAVAIL;
        int status = 0;
        int rc = fi_av_insert(z->av, b + OFF_ADDR, 1, &fa, FI_SYNC_ERR,
                              &status);
        if (rc != 1 || fa == FI_ADDR_NOTAVAIL) {
            int err = rc < 0 ? -rc : status;
            char why[128];
            snprintf(why, sizeof(why), "libfabric refused its address "
                                       "(fi_av_insert: %s)",
                     err != 0 ? fi_strerror(err) : "nothing inserted");
            if (r == me) {
                ftc_ofi_logf(z, "rank %u: %s: our own", me, why);
                ret = FTC_ETRANSPORT;
            } else {
                ftc_ofi_peer_lost(z, r, FTC_OFI_DETECT_ADDRESS, 0, why);
            }
            continue;
        }
        uint32_t q = fi_addr_owner(z, owner, r, fa);
        if (q != UINT32_MAX) {
            int holds_r = entry_holds(z, fa, b);
            int holds_q = entry_holds(z, fa,
                                      all + (size_t)q * FTC_OFI_BLOB_SIZE);
            uint32_t lost = holds_r == 1 && holds_q == 0   ? q
                            : holds_r == 0 && holds_q == 1 ? r
                                                           : UINT32_MAX;
            if (lost == UINT32_MAX || lost == me) {
                ftc_ofi_logf(z, "rank %u: fi_av_insert gave rank %u the "
                                "fi_addr of rank %u (%llu), and %s",
                             me, r, q, (unsigned long long)fa,
                             lost == me ? "lost our own address"
                                        : "fi_av_lookup cannot tell whose "
                                          "it is now");
                ret = FTC_ETRANSPORT;
                continue;
            }
            char why[128];
            snprintf(why, sizeof(why), "its address vector entry leads to "
                                       "rank %u: libfabric lost its address",
                     lost == q ? r : q);
            if (lost == q)
                z->peers[q].fi_addr = FI_ADDR_NOTAVAIL;
            else
                fa = FI_ADDR_NOTAVAIL;
            ftc_ofi_peer_lost(z, lost, FTC_OFI_DETECT_ADDRESS, 0, why);
        }
        z->peers[r].fi_addr = fa;
        if (fa < n)
            owner[fa] = r;
        if (fa != FI_ADDR_NOTAVAIL)
            watch_process(z, r, b);
        /* A peer connects eagerly only if it says so (a blob from before
         * the flag says 0): hellos go only between eager ranks, so a job
         * that mixes FTCOLL_OFI_CONNECT settings connects the rest
         * lazily instead of waiting for hellos that never come. */
        z->peers[r].eager = (ftc_bk_get_le(b + OFF_FLAGS, 4) & FLAG_EAGER) != 0;
    }
    free(owner);
    return ret;
}

int ftc_ofi_set_peers(ftc_ofi_t *z, const void *blobs)
{
    if (z == NULL || blobs == NULL || z->peers_set)
        return FTC_EINVAL;
    const unsigned char *all = blobs;
    for (uint32_t r = 0; r < z->cfg.nranks; r++)
        if (blob_check(z, r, all + (size_t)r * FTC_OFI_BLOB_SIZE) != 0)
            return FTC_EINVAL;
    int rc = insert_peers(z, all);
    if (rc != FTC_OK)
        return rc;
    z->peers_set = true;
    if (z->cfg.eager_connect)
        ftc_ofi_connect_all(z);
    return FTC_OK;
}

int ftc_ofi_exchange(ftc_ofi_t *z,
                     int (*allgather)(void *arg, const void *mine,
                                      size_t len, void *all),
                     void *arg)
{
    if (z == NULL || allgather == NULL)
        return FTC_EINVAL;
    unsigned char *all = calloc(z->cfg.nranks, FTC_OFI_BLOB_SIZE);
    if (all == NULL)
        return FTC_ENOMEM;
    int rc = FTC_ETRANSPORT;
    if (allgather(arg, z->blob, FTC_OFI_BLOB_SIZE, all) != 0)
        ftc_ofi_logf(z, "rank %u: address exchange failed", z->cfg.rank);
    else
        rc = ftc_ofi_set_peers(z, all);
    free(all);
    return rc;
}
