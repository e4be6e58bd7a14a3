/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libfabric backend's life cycle and its transport ops: choosing a
 * provider, opening the fabric objects, posting the receive buffers.
 * The contract is in ftcoll_ofi.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "ofi_internal.h"

#define OFI_API_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* Bounce buffer of each tx slot: longer copies are allocated per send. */
#define COPY_SMALL 1024u

bool ftc_ofi_rearm(ftc_ofi_t *z)
{
    /* A drain (exit_drain.c) is counted in passes: run them, no sleep. */
    if (z->ndraining > 0)
        return true;
    uint64_t want = ftc_bk_core_timer_next(&z->timer);
    uint64_t report = ftc_bk_grace_next(&z->lost);
    if (report < want)
        want = report;
    bool retry = z->queued.count > 0 || z->rx_unposted > 0;
    /* The usual idle return: the timerfd already holds the deadline and
     * it is not near. Said without a precise clock read (clock.h): an
     * embedder polling ftc_ofi_progress(z, 0) comes here on every call
     * that finds nothing. */
    if (!retry && want == z->tfd_deadline && !ftc_bk_due(want))
        return false;
    uint64_t now = ftc_bk_now_ns();
    /* Queued sends wait for the provider, whose progress need not wake
     * the CQ's descriptor (a connection being set up): retry soon. */
    if (retry) {
        uint64_t r = now + FTC_OFI_RETRY_NS;
        if (r < want)
            want = r;
    }
    /* Due already: the caller runs a pass instead of sleeping. The core
     * asks for "now" once per completed operation (to deliver it from
     * the timer); a timerfd_settime for that, and another to move it
     * back, cost about 1 us per operation on shm. */
    if (want <= now)
        return true;
    if (want == z->tfd_deadline)
        return false;
    /* An earlier wake-up still pending costs a spurious pass at worst;
     * leaving it saves a system call per pass while sends are queued. */
    if (z->tfd_deadline < want && z->tfd_deadline > now)
        return false;
    ftc_bk_timerfd_set(z->tfd, want);
    z->tfd_deadline = want;
    return false;
}

int ftc_ofi_mr_reg(ftc_ofi_t *z, void *buf, size_t len, uint64_t access,
                   struct fid_mr **mr)
{
    uint64_t key = 0;
    if (!(z->info->domain_attr->mr_mode & FI_MR_PROV_KEY))
        key = z->mr_key_next++;
    int rc = fi_mr_reg(z->domain, buf, len, access, 0, key, 0, mr, NULL);
    if (rc != 0)
        return rc;
    if (z->mr_endpoint) {
        rc = fi_mr_bind(*mr, &z->ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(*mr);
        if (rc != 0) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
        }
    }
    return rc;
}

/* --- The transport ops -------------------------------------------------- */

static int ot_send(void *tp, uint32_t dest, const void *buf, size_t len,
                   void *cookie)
{
    return ftc_ofi_send(tp, dest, buf, len, cookie);
}

static void ot_timer_arm(void *tp, uint64_t deadline_ns)
{
    ftc_ofi_t *z = tp;
    ftc_bk_core_timer_arm(&z->timer, deadline_ns);
    /* Inside progress, the timerfd is set once, before anyone may sleep
     * (ftc_ofi_progress); outside, the embedder may sleep next. */
    if (!z->in_progress)
        (void)ftc_ofi_rearm(z);
}

static void ot_timer_cancel(void *tp)
{
    ftc_ofi_t *z = tp;
    /* A stale timerfd wake-up is harmless. */
    ftc_bk_core_timer_cancel(&z->timer);
}

/* Reports do not depend on watching (a death is a death, and an RDM
 * endpoint has no connection to keep open for it): only count. */
static void ot_watch(void *tp, uint32_t peer)
{
    ftc_ofi_t *z = tp;
    if (peer < z->cfg.nranks)
        z->peers[peer].watched++;
}

static void ot_unwatch(void *tp, uint32_t peer)
{
    ftc_ofi_t *z = tp;
    if (peer < z->cfg.nranks && z->peers[peer].watched > 0)
        z->peers[peer].watched--;
}

static int ot_progress(void *tp)
{
    return ftc_ofi_progress(tp, 0);
}

/* The provider's messages cross a kernel socket (tcp, sockets, udp): a
 * system call on each side (transport.h, cost_hints). */
static uint32_t ot_cost_hints(void *tp)
{
    const ftc_ofi_t *z = tp;
    const char *p = z->info != NULL ? z->info->fabric_attr->prov_name : NULL;
    if (p == NULL)
        return 0;
    return strncmp(p, "tcp", 3) == 0 || strncmp(p, "sockets", 7) == 0
                   || strncmp(p, "udp", 3) == 0
               ? FTC_TRANSPORT_COSTLY_MESSAGES
               : 0;
}

static const ftc_transport_ops_t ot_ops = {
    .size = sizeof(ftc_transport_ops_t),
    .send = ot_send,
    .timer_arm = ot_timer_arm,
    .timer_cancel = ot_timer_cancel,
    .now = ftc_bk_now_op,
    .watch = ot_watch,
    .unwatch = ot_unwatch,
    .progress = ot_progress,
    .cost_hints = ot_cost_hints,
};

const ftc_transport_ops_t *ftc_ofi_ops(void)
{
    return &ot_ops;
}

/* --- Choosing a provider ------------------------------------------------- */

static struct fi_info *base_hints(const char *provider, const char *domain,
                                  bool want_source, bool want_order)
{
    struct fi_info *h = fi_allocinfo();
    if (h == NULL)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_MSG | FI_SEND | FI_RECV | (want_source ? FI_SOURCE : 0);
    /* Our operation contexts begin with a struct fi_context2. */
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->av_type = FI_AV_TABLE;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    /* What we can honour: local registration of the buffers we hand the
     * provider, bound to the endpoint if need be. The rest concern RMA,
     * which we do not use. */
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED
                              | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    /* transport.h: each pair's messages arrive in order. The backend's
     * sequence numbers restore it in any case; asking the provider first
     * makes out-of-order arrivals rare. */
    if (want_order) {
        h->tx_attr->msg_order = FI_ORDER_SAS;
        h->rx_attr->msg_order = FI_ORDER_SAS;
    }
    if (provider != NULL)
        h->fabric_attr->prov_name = strdup(provider);
    if (domain != NULL)
        h->domain_attr->name = strdup(domain);
    if ((provider != NULL && h->fabric_attr->prov_name == NULL)
        || (domain != NULL && h->domain_attr->name == NULL)) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

/*
 * rxm over tcp (libfabric 1.17) posts FI_OFI_RXM_MSG_RX_SIZE receive
 * buffers to its shared receive context, 4096 by default, each
 * FI_OFI_RXM_BUFFER_SIZE (16 KiB) from a pool that grows 1024 buffers
 * (17 MB) at a time and zeroes what it adds. 4096 fills the pool to the
 * last buffer, so the first message rxm must hold (one that arrives
 * before we have reposted a receive for it, or a segment of a long one)
 * grows it by 17 MB inside fi_cq_read: 150-900 ms here (page faults are
 * slow on this VM and 2 vCPUs are shared), long enough for the core's
 * keepalive to exclude a healthy rank. 256 leaves 768 buffers spare in
 * the first 1024 and saves 51 MB per process (docs/libfabric.md,
 * "Connections and rxm's buffers"). The variable is documented
 * (fi_rxm(7)); libfabric reads it when it initialises its providers, at
 * the first fi_getinfo of the process, so this runs before every
 * fi_getinfo of ours, and never overrides a value the user set. Only for
 * tcp (asked for, or nothing asked for: libfabric's first choice here);
 * verbs;ofi_rxm and others keep rxm's defaults.
 */
#define RXM_MSG_RX_SIZE "256"
/* FI_OFI_RXM_BUFFER_SIZE stays rxm's 16 KiB on purpose. Its pools are
 * most of what a SIGKILLed rank's kernel frees before the pidfds of its
 * local peers fire, and 4 KiB halves that exit's CPU time (3.5 -> 1.8 ms
 * traced), but messages above the buffer size then take rxm's
 * segmentation protocol, 3.5-4.7 times slower for 4-16 KiB payloads over
 * tcp, and the end-to-end gain was lost in scheduling noise under load
 * (docs/libfabric.md, "A killed rank's exit, and rxm's pools"). A job
 * that wants the faster exit sets the variable itself. ftcoll-run makes
 * the pools cheap to free instead: huge pages through glibc's malloc
 * (backends/bootstrap/rank_hugepages.h), which costs messages nothing. */

static bool g_rxm_env_set;   /* we set FI_OFI_RXM_MSG_RX_SIZE */

/*
 * rxm over net (libfabric 1.17) can crash in fi_close of the endpoint:
 * closing a connection, rxm closes its msg endpoint and only then reads
 * the msg CQ, and a receive completion still queued there reposts its
 * buffer on the endpoint just freed (a SIGSEGV in 3 % of n = 2 job ends
 * here with MALLOC_PERTURB_ set, as meson's tests run; upstream fixed the
 * order in 2026, "prov/rxm: fix the msg_ep use-after-free at connection
 * teardown"). With a shared receive context the buffer goes back to the
 * context, which is closed after the connections: no crash in 250 job
 * ends. rxm uses one by default only when its core is tcp, so for net we
 * ask for it (fi_rxm(7): FI_OFI_RXM_USE_SRX, read when the endpoint is
 * opened), unless the user chose. Other cores (verbs) keep rxm's
 * defaults: not testable here; docs/libfabric.md says what to set.
 */
static bool g_rxm_srx_set;   /* we set FI_OFI_RXM_USE_SRX */

static bool is_rxm_over_net(const char *provider)
{
    return provider != NULL && strcmp(provider, "net;ofi_rxm") == 0;
}

static void rxm_use_srx(const char *provider)
{
    if (!is_rxm_over_net(provider) || getenv("FI_OFI_RXM_USE_SRX") != NULL)
        return;
    g_rxm_srx_set = setenv("FI_OFI_RXM_USE_SRX", "1", 0) == 0;
}

static void tune_provider_env(const char *provider)
{
    static bool done;
    if (done)
        return;
    done = true;
    const char *want = provider != NULL && *provider != '\0'
                           ? provider
                           : getenv("FI_PROVIDER");
    rxm_use_srx(want);
    /* rxm over net with its shared receive context posts the same 4096
     * buffers as over tcp: the same 256. */
    if (want != NULL && *want != '\0' && strstr(want, "tcp") == NULL
        && !is_rxm_over_net(want))
        return;
    if (getenv("FI_OFI_RXM_MSG_RX_SIZE") != NULL)
        return;
    g_rxm_env_set =
        setenv("FI_OFI_RXM_MSG_RX_SIZE", RXM_MSG_RX_SIZE, 0) == 0;
}

static int getinfo(const char *node, const char *service, struct fi_info *h,
                   struct fi_info **out)
{
    uint64_t flags = node != NULL || service != NULL ? FI_SOURCE : 0;
    return fi_getinfo(OFI_API_VERSION, node, service, flags, h, out);
}

int ftc_ofi_available_providers(char *buf, size_t len)
{
    if (buf != NULL && len > 0)
        buf[0] = '\0';
    tune_provider_env(NULL);
    struct fi_info *h = base_hints(NULL, NULL, false, false);
    struct fi_info *list = NULL;
    if (h == NULL)
        return 0;
    int count = 0;
    size_t used = 0;
    if (fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, h, &list) == 0) {
        for (struct fi_info *i = list; i != NULL; i = i->next) {
            const char *name = i->fabric_attr->prov_name;
            bool seen = false;
            for (struct fi_info *j = list; j != i; j = j->next)
                if (strcmp(j->fabric_attr->prov_name, name) == 0)
                    seen = true;
            if (seen)
                continue;
            if (buf != NULL && len > 0) {
                int n = snprintf(buf + used, len - used, "%s%s",
                                 count > 0 ? ", " : "", name);
                if (n > 0 && (size_t)n < len - used)
                    used += (size_t)n;
            }
            count++;
        }
        fi_freeinfo(list);
    }
    fi_freeinfo(h);
    return count;
}

int ftc_ofi_provider_available(const char *provider)
{
    tune_provider_env(provider);
    struct fi_info *h = base_hints(provider, NULL, false, false);
    struct fi_info *list = NULL;
    if (h == NULL)
        return 0;
    int ok = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, h, &list) == 0;
    fi_freeinfo(list);
    fi_freeinfo(h);
    return ok;
}

static void explain_unavailable(ftc_ofi_t *z, int rc)
{
    char avail[512];
    int n = ftc_ofi_available_providers(avail, sizeof(avail));
    const char *env = getenv("FI_PROVIDER");
    ftc_ofi_logf(z,
                 "rank %u: libfabric provider '%s' offers no RDM endpoint "
                 "with FI_MSG here (fi_getinfo: %s). Available: %s.%s%s%s "
                 "See `fi_info -l`; a provider missing from libfabric's "
                 "build or lacking its hardware cannot be used: install it "
                 "(Debian: apt-get install libfabric1 libfabric-bin; verbs "
                 "needs rdma-core and an RDMA device; psm3, cxi and efa come "
                 "with the vendor's libfabric) or pick another provider "
                 "(FTCOLL_OFI_PROVIDER or FI_PROVIDER).",
                 z->cfg.rank, z->provider[0] != '\0' ? z->provider : "(any)",
                 fi_strerror(-rc), n > 0 ? avail : "none",
                 env != NULL ? " FI_PROVIDER='" : "", env != NULL ? env : "",
                 env != NULL ? "' restricts the choice." : "");
}

/* The provider interface variables: the user chose an interface. */
static bool iface_chosen(void)
{
    static const char *const vars[] = {"FI_TCP_IFACE", "FI_NET_IFACE",
                                       "FI_UDP_IFACE", "FI_SOCKETS_IFACE",
                                       "FI_VERBS_IFACE", NULL};
    for (int i = 0; vars[i] != NULL; i++) {
        const char *s = getenv(vars[i]);
        if (s != NULL && *s != '\0')
            return true;
    }
    return false;
}

/* The endpoint's own address (fi_getname) is a loopback IP address. */
static bool addr_is_loopback(uint32_t fmt, const void *addr, size_t len)
{
    if ((fmt == FI_SOCKADDR || fmt == FI_SOCKADDR_IN)
        && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in sin;
        memcpy(&sin, addr, sizeof(sin));
        if (sin.sin_family == AF_INET)
            return (ntohl(sin.sin_addr.s_addr) >> 24) == 127;
    }
    if ((fmt == FI_SOCKADDR || fmt == FI_SOCKADDR_IN6)
        && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 sin6;
        memcpy(&sin6, addr, sizeof(sin6));
        if (sin6.sin6_family == AF_INET6)
            return memcmp(&sin6.sin6_addr, &in6addr_loopback,
                          sizeof(sin6.sin6_addr)) == 0;
    }
    return false;
}

static int choose(ftc_ofi_t *z)
{
    const char *prov = z->provider[0] != '\0' ? z->provider : NULL;
    const char *dom = z->domain_name[0] != '\0' ? z->domain_name : NULL;
    const char *node = z->node[0] != '\0' ? z->node : NULL;
    const char *service = z->service[0] != '\0' ? z->service : NULL;
    /* Every rank on this host: bind loopback, not the first interface
     * the provider finds (tcp picks eth0 here), unless told otherwise. */
    bool auto_node = node == NULL && z->cfg.single_host == 1
                     && !iface_chosen();
    if (auto_node)
        node = "127.0.0.1";

    tune_provider_env(prov);
    struct fi_info *h = NULL, *info = NULL;
    int rc = -FI_ENODATA;
    /* With FI_SOURCE if asked and the provider has it, else without.
     * ofi_rxd (1.17) grants FI_SOURCE but reports every message as coming
     * from fi_addr 0: never ask it. */
    bool want_source = z->cfg.use_fi_source
                       && (prov == NULL || strstr(prov, "ofi_rxd") == NULL);
    /* Then without send-after-send ordering, which we restore anyway. A
     * loopback node of our own choosing that no provider takes (verbs
     * binds an RDMA device's address): once more without it. */
    for (;;) {
        for (int pass = want_source ? 0 : 1; pass < 3; pass++) {
            h = base_hints(prov, dom, pass == 0, pass < 2);
            if (h == NULL)
                return FTC_ENOMEM;
            rc = getinfo(node, service, h, &info);
            if (rc == 0)
                break;
            fi_freeinfo(h);
            h = NULL;
            if (rc != -FI_ENODATA)
                break;
        }
        if (rc != -FI_ENODATA || !auto_node)
            break;
        auto_node = false;
        node = NULL;
    }
    if (rc != 0) {
        if (rc == -FI_ENODATA) {
            explain_unavailable(z, rc);
            return FTC_ENOTSUP;
        }
        ftc_ofi_logf(z, "rank %u: fi_getinfo(%s): %s", z->cfg.rank,
                     prov != NULL ? prov : "any", fi_strerror(-rc));
        return FTC_ETRANSPORT;
    }
    /* node and service are IP addresses: a provider with its own address
     * format (shm's are names) must not get them (shm 1.17 crashes in
     * fi_send with a sockaddr for a source). Ask that one again without. */
    if (node != NULL || service != NULL) {
        uint32_t fmt = info->addr_format;
        if (fmt != FI_SOCKADDR && fmt != FI_SOCKADDR_IN
            && fmt != FI_SOCKADDR_IN6 && fmt != FI_SOCKADDR_IB) {
            char *name = strdup(info->fabric_attr->prov_name);
            struct fi_info *plain = NULL;
            if (name == NULL)
                rc = -FI_ENOMEM;
            else {
                free(h->fabric_attr->prov_name);
                h->fabric_attr->prov_name = name;
                rc = getinfo(NULL, NULL, h, &plain);
            }
            if (rc != 0) {
                ftc_ofi_logf(z, "rank %u: fi_getinfo(%s) without a node: %s",
                             z->cfg.rank, info->fabric_attr->prov_name,
                             fi_strerror(-rc));
                fi_freeinfo(info);
                fi_freeinfo(h);
                return FTC_ETRANSPORT;
            }
            fi_freeinfo(info);
            info = plain;
            node = service = NULL;
        }
    }
    /* A bigger inject size, if the provider's is too small for a header
     * and a small value, and it agrees to give one (same provider). */
    if (z->cfg.inject_size > info->tx_attr->inject_size) {
        h->tx_attr->inject_size = z->cfg.inject_size;
        char *name = strdup(info->fabric_attr->prov_name);
        if (name != NULL) {
            free(h->fabric_attr->prov_name);
            h->fabric_attr->prov_name = name;
            h->caps = info->caps & (FI_MSG | FI_SEND | FI_RECV | FI_SOURCE);
            struct fi_info *bigger = NULL;
            if (getinfo(node, service, h, &bigger) == 0
                && bigger->tx_attr->inject_size >= z->cfg.inject_size
                && strcmp(bigger->fabric_attr->prov_name,
                          info->fabric_attr->prov_name) == 0) {
                fi_freeinfo(info);
                info = bigger;
            } else {
                fi_freeinfo(bigger);
            }
        }
    }
    fi_freeinfo(h);
    if (strstr(info->fabric_attr->prov_name, "ofi_rxd") != NULL)
        info->caps &= ~(uint64_t)FI_SOURCE;
    /* Keep only the first. */
    if (info->next != NULL) {
        fi_freeinfo(info->next);
        info->next = NULL;
    }
    z->info = info;
    snprintf(z->provider, sizeof(z->provider), "%s",
             info->fabric_attr->prov_name);
    /* libfabric's own choice may be rxm over net too: before the
     * endpoint is opened is in time. */
    rxm_use_srx(z->provider);
    if (strcmp(z->provider, "sockets") == 0)
        ftc_ofi_logf(z, "rank %u: warning: the 'sockets' provider hangs on "
                        "some systems (docs/libfabric.md); prefer "
                        "tcp;ofi_rxm", z->cfg.rank);
    return FTC_OK;
}

/* --- Opening the objects ------------------------------------------------- */

#define CHECK(call, what)                                                      \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != 0) {                                                        \
            ftc_ofi_logf(z, "rank %u: %s (%s): %s", z->cfg.rank, what,         \
                         z->provider, fi_strerror(-rc_));                      \
            return FTC_ETRANSPORT;                                             \
        }                                                                      \
    } while (0)

static int open_cq(ftc_ofi_t *z, size_t size)
{
    struct fi_cq_attr ca;
    memset(&ca, 0, sizeof(ca));
    ca.format = FI_CQ_FORMAT_MSG;
    ca.size = size;
    ca.wait_obj = FI_WAIT_NONE;
    z->cq_fd = -1;
    if (z->cfg.use_wait_fd) {
        ca.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(z->domain, &ca, &z->cq, NULL) == 0) {
            int fd = -1;
            if (fi_control(&z->cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0) {
                z->cq_fd = fd;
                return FTC_OK;
            }
            fi_close(&z->cq->fid);
            z->cq = NULL;
        }
        /* shm, udp;ofi_rxd: no wait descriptor; poll instead. */
        ca.wait_obj = FI_WAIT_NONE;
    }
    CHECK(fi_cq_open(z->domain, &ca, &z->cq, NULL), "fi_cq_open");
    return FTC_OK;
}

int ftc_ofi_post_recv(ftc_ofi_t *z, ftc_ofi_rx_t *r)
{
    ssize_t rc = fi_recv(z->ep, r->buf, z->rx_size, z->rx_desc,
                         FI_ADDR_UNSPEC, &r->fctx);
    if (rc == 0) {
        r->posted = true;
        return 0;
    }
    return (int)rc;
}

int ftc_ofi_repost(ftc_ofi_t *z)
{
    if (z->rx_unposted == 0)
        return 0;
    for (uint32_t i = 0; i < z->nrx; i++) {
        if (z->rx[i].posted)
            continue;
        int rc = ftc_ofi_post_recv(z, &z->rx[i]);
        if (rc == -FI_EAGAIN)
            return 0;
        if (rc != 0) {
            ftc_ofi_logf(z, "rank %u: fi_recv: %s", z->cfg.rank,
                         fi_strerror(-rc));
            return rc;
        }
        z->rx_unposted--;
    }
    return 0;
}

/*
 * libfabric 1.17's shm provider names its region /dev/shm/<pid>:<n>:<m>
 * and leaves it behind when its process is killed; a later process that
 * gets the same pid then fails fi_enable with EBUSY. No live process but
 * this one has our pid, so a region named after it is a dead process's:
 * remove it. (A /dev/shm shared across pid namespaces would break this
 * reasoning; ftcoll does not run ranks that way.)
 */
static void remove_stale_shm(ftc_ofi_t *z)
{
    if (strcmp(z->provider, "shm") != 0)
        return;
    char prefix[32];
    int len = snprintf(prefix, sizeof(prefix), "%ld:", (long)getpid());
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (strncmp(e->d_name, prefix, (size_t)len) != 0)
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            ftc_ofi_logf(z, "rank %u: removed /dev/shm/%s, left by a dead "
                            "process with our pid", z->cfg.rank, e->d_name);
    }
    closedir(d);
}

static int open_all(ftc_ofi_t *z)
{
    struct fi_info *info = z->info;
    CHECK(fi_fabric(info->fabric_attr, &z->fabric, NULL), "fi_fabric");
    CHECK(fi_domain(z->fabric, info, &z->domain, NULL), "fi_domain");

    struct fi_av_attr aa;
    memset(&aa, 0, sizeof(aa));
    aa.type = FI_AV_TABLE;
    aa.count = z->cfg.nranks;
    CHECK(fi_av_open(z->domain, &aa, &z->av, NULL), "fi_av_open");

    z->nrx = z->cfg.rx_depth;
    if (info->rx_attr->size > 0 && z->nrx > info->rx_attr->size)
        z->nrx = (uint32_t)info->rx_attr->size;
    z->ntx = z->cfg.tx_depth;
    if (info->tx_attr->size > 0 && z->ntx > info->tx_attr->size)
        z->ntx = (uint32_t)info->tx_attr->size;
    int rc = open_cq(z, (size_t)z->nrx + z->ntx + 64);
    if (rc != FTC_OK)
        return rc;

    CHECK(fi_endpoint(z->domain, info, &z->ep, NULL), "fi_endpoint");
    CHECK(fi_ep_bind(z->ep, &z->av->fid, 0), "fi_ep_bind(av)");
    CHECK(fi_ep_bind(z->ep, &z->cq->fid, FI_TRANSMIT | FI_RECV),
          "fi_ep_bind(cq)");
    remove_stale_shm(z);
    CHECK(fi_enable(z->ep), "fi_enable");

    z->has_source = (info->caps & FI_SOURCE) != 0;
    z->mr_local = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0
                  || z->cfg.force_mr_local;
    z->mr_endpoint = (info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
    /* Sizes on the wire: the backend header comes first. */
    z->rx_size = z->cfg.max_msg_size + FTC_OFI_HDR;
    z->inject_size = info->tx_attr->inject_size;
    if (z->inject_size > z->rx_size)
        z->inject_size = z->rx_size;
    z->copy_small = COPY_SMALL;
    z->iov_limit = info->tx_attr->iov_limit;
    if (z->cfg.zcopy_min > 0 && z->iov_limit < 2)
        ftc_ofi_logf(z, "rank %u: %s sends one buffer at a time: zero-copy "
                        "off", z->cfg.rank, z->provider);
    z->scratch = malloc(z->inject_size + FTC_OFI_HDR);
    if (z->scratch == NULL)
        return FTC_ENOMEM;

    /* Receive buffers. */
    z->rx = calloc(z->nrx, sizeof(*z->rx));
    z->rx_mem = malloc((size_t)z->nrx * z->rx_size);
    z->tx = calloc(z->ntx, sizeof(*z->tx));
    z->tx_mem = malloc((size_t)z->ntx * z->copy_small);
    if (z->rx == NULL || z->rx_mem == NULL || z->tx == NULL
        || z->tx_mem == NULL)
        return FTC_ENOMEM;
    if (z->mr_local) {
        CHECK(ftc_ofi_mr_reg(z, z->rx_mem, (size_t)z->nrx * z->rx_size,
                             FTC_OFI_RECV_ACCESS, &z->rx_mr),
              "fi_mr_reg(receive buffers)");
        CHECK(ftc_ofi_mr_reg(z, z->tx_mem, (size_t)z->ntx * z->copy_small,
                             FTC_OFI_SEND_ACCESS, &z->tx_mr),
              "fi_mr_reg(send buffers)");
        z->rx_desc = fi_mr_desc(z->rx_mr);
        z->tx_desc = fi_mr_desc(z->tx_mr);
    }
    for (uint32_t i = 0; i < z->ntx; i++) {
        z->tx[i].next_free = i + 1 < z->ntx ? (int32_t)(i + 1) : -1;
    }
    z->tx_free = z->ntx > 0 ? 0 : -1;
    for (uint32_t i = 0; i < z->nrx; i++) {
        z->rx[i].buf = z->rx_mem + (size_t)i * z->rx_size;
        z->rx_unposted++;
    }
    if (ftc_ofi_repost(z) != 0 || z->rx_unposted == z->nrx) {
        ftc_ofi_logf(z, "rank %u: cannot post receive buffers (%s)",
                     z->cfg.rank, z->provider);
        return FTC_ETRANSPORT;
    }

    unsigned char addr[FTC_OFI_ADDR_MAX];
    size_t addrlen = sizeof(addr);
    rc = fi_getname(&z->ep->fid, addr, &addrlen);
    if (rc == -FI_ETOOSMALL) {
        ftc_ofi_logf(z, "rank %u: %s address of %zu bytes exceeds "
                        "FTC_OFI_ADDR_MAX (%d)", z->cfg.rank, z->provider,
                     addrlen, FTC_OFI_ADDR_MAX);
        return FTC_ENOTSUP;
    }
    CHECK(rc, "fi_getname");
    if (z->cfg.single_host == 0
        && addr_is_loopback(info->addr_format, addr, addrlen)) {
        ftc_ofi_logf(z, "rank %u: the job spans hosts (single_host = 0, "
                        "FTCOLL_SINGLE_HOST) but %s is bound to a loopback "
                        "address: ranks on other hosts could not connect. "
                        "Bind the interface they reach: FTCOLL_OFI_NODE="
                        "<its address>, or FI_TCP_IFACE (FI_NET_IFACE, ...)"
                        "=<interface>",
                     z->cfg.rank, z->provider);
        return FTC_EINVAL;
    }
    ftc_ofi_blob_build(z, addr, addrlen);

    snprintf(z->describe, sizeof(z->describe),
             "provider=%s fabric=%s domain=%s inject=%zu fi_source=%s "
             "wait_fd=%s mr_local=%s%s rx=%ux%zu tx=%u zcopy_min=%zu "
             "pid_monitor=%s connect=%s%s%s",
             z->provider, info->fabric_attr->name, info->domain_attr->name,
             z->inject_size, z->has_source ? "yes" : "no",
             z->cq_fd >= 0 ? "yes" : "no", z->mr_local ? "yes" : "no",
             z->mr_endpoint ? "(endpoint)" : "", z->nrx, z->cfg.max_msg_size,
             z->ntx, z->cfg.zcopy_min, z->cfg.pid_monitor ? "yes" : "no",
             z->cfg.eager_connect ? "eager" : "lazy",
             g_rxm_env_set && strstr(z->provider, "ofi_rxm") != NULL
                 ? " FI_OFI_RXM_MSG_RX_SIZE=" RXM_MSG_RX_SIZE
                 : "",
             g_rxm_srx_set && is_rxm_over_net(z->provider)
                 ? " FI_OFI_RXM_USE_SRX=1"
                 : "");
    return FTC_OK;
}

static int open_fds(ftc_ofi_t *z)
{
    z->epfd = epoll_create1(EPOLL_CLOEXEC);
    z->tfd = ftc_bk_timerfd_open();
    if (z->epfd < 0 || z->tfd < 0) {
        ftc_ofi_logf(z, "epoll/timerfd: %s", strerror(errno));
        return FTC_ETRANSPORT;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u64 = (uint64_t)FTC_OFI_TAG_TIMER << 32;
    if (epoll_ctl(z->epfd, EPOLL_CTL_ADD, z->tfd, &ev) != 0)
        return FTC_ETRANSPORT;
    return FTC_OK;
}

static int add_cq_fd(ftc_ofi_t *z)
{
    z->cq_sleep_ok = z->cq_fd >= 0;
    if (z->cq_fd < 0)
        return FTC_OK;
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u64 = (uint64_t)FTC_OFI_TAG_CQ << 32;
    if (epoll_ctl(z->epfd, EPOLL_CTL_ADD, z->cq_fd, &ev) != 0) {
        ftc_ofi_logf(z, "rank %u: epoll_ctl(CQ fd): %s", z->cfg.rank,
                     strerror(errno));
        return FTC_ETRANSPORT;
    }
    return FTC_OK;
}

static int copy_str(char *dst, size_t cap, const char *src)
{
    if (src == NULL) {
        dst[0] = '\0';
        return 0;
    }
    size_t n = strlen(src);
    if (n >= cap)
        return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

static int config_ok(const ftc_ofi_config_t *c)
{
    return c->size >= sizeof(ftc_ofi_config_t) && c->nranks > 0
           && c->nranks <= INT32_MAX && c->rank < c->nranks
           && c->max_msg_size >= 128 && c->max_msg_size <= ((size_t)1 << 30)
           && c->rx_depth > 0 && c->tx_depth > 0
           && c->tx_depth <= INT32_MAX && c->max_queued_bytes > 0
           && c->report_grace_ms >= 0 && c->connect_timeout_ms >= 0
           && c->single_host >= -1 && c->single_host <= 1;
}

int ftc_ofi_create(const ftc_ofi_config_t *cfg, ftc_ofi_t **out)
{
    if (out == NULL)
        return FTC_EINVAL;
    *out = NULL;
    if (cfg == NULL || !config_ok(cfg))
        return FTC_EINVAL;

    ftc_ofi_t *z = calloc(1, sizeof(*z));
    if (z == NULL)
        return FTC_ENOMEM;
    z->cfg = *cfg;
    for (int i = 0; i < 4; i++)
        z->hdr_tail[i] = (unsigned char)(cfg->rank >> (8 * i));
    for (int i = 0; i < 8; i++)
        z->hdr_tail[FTC_OFI_HDR_TOKEN - 4 + i] =
            (unsigned char)(cfg->job_token >> (8 * i));
    z->epfd = z->tfd = z->cq_fd = -1;
    z->tfd_deadline = UINT64_MAX;
    ftc_bk_spin_init(&z->spin, -1,
                     cfg->local_ranks > 0
                         ? cfg->local_ranks
                         : ftc_bk_local_ranks(cfg->nranks, cfg->single_host));
    z->mr_key_next = 1;
    if (copy_str(z->provider, sizeof(z->provider), cfg->provider) != 0
        || copy_str(z->node, sizeof(z->node), cfg->node) != 0
        || copy_str(z->service, sizeof(z->service), cfg->service) != 0
        || copy_str(z->domain_name, sizeof(z->domain_name), cfg->domain) != 0) {
        free(z);
        return FTC_EINVAL;
    }
    /* The copies own the strings now; the caller's may go away. */
    z->cfg.provider = z->cfg.node = z->cfg.service = z->cfg.domain = NULL;

    int rc = FTC_ENOMEM;
    z->peers = calloc(cfg->nranks, sizeof(*z->peers));
    int lost_rc = ftc_bk_grace_init(&z->lost, cfg->nranks);
    int queued_rc = ftc_bk_rank_set_init(&z->queued, cfg->nranks);
    if (z->peers == NULL || lost_rc != 0 || queued_rc != 0)
        goto err;
    for (uint32_t r = 0; r < cfg->nranks; r++) {
        z->peers[r].pidfd = -1;
        z->peers[r].fi_addr = FI_ADDR_NOTAVAIL;
    }

    rc = open_fds(z);
    if (rc == FTC_OK)
        rc = choose(z);
    if (rc == FTC_OK)
        rc = open_all(z);
    if (rc == FTC_OK)
        rc = add_cq_fd(z);
    if (rc != FTC_OK)
        goto err;
    ftc_ofi_logf(z, "rank %u: %s", cfg->rank, z->describe);
    *out = z;
    return FTC_OK;

err:
    ftc_ofi_destroy(z);
    return rc;
}

static void close_fid(struct fid *f)
{
    if (f != NULL)
        (void)fi_close(f);
}

void ftc_ofi_destroy(ftc_ofi_t *z)
{
    if (z == NULL)
        return;
    /* The endpoint first: it owns posted buffers and in-flight sends. */
    close_fid(z->ep != NULL ? &z->ep->fid : NULL);
    if (z->tx != NULL) {
        for (uint32_t i = 0; i < z->ntx; i++) {
            close_fid(z->tx[i].mr != NULL ? &z->tx[i].mr->fid : NULL);
            free(z->tx[i].owned);
        }
    }
    close_fid(z->rx_mr != NULL ? &z->rx_mr->fid : NULL);
    close_fid(z->tx_mr != NULL ? &z->tx_mr->fid : NULL);
    close_fid(z->cq != NULL ? &z->cq->fid : NULL);
    close_fid(z->av != NULL ? &z->av->fid : NULL);
    close_fid(z->domain != NULL ? &z->domain->fid : NULL);
    close_fid(z->fabric != NULL ? &z->fabric->fid : NULL);
    if (z->info != NULL)
        fi_freeinfo(z->info);
    if (z->peers != NULL) {
        for (uint32_t r = 0; r < z->cfg.nranks; r++) {
            ftc_bk_sq_clear(&z->peers[r].q);
            ftc_ofi_held_clear(&z->peers[r]);
            if (z->peers[r].pidfd >= 0)
                close(z->peers[r].pidfd);
        }
    }
    ftc_bk_sq_clear(&z->self_q);
    if (z->tfd >= 0)
        close(z->tfd);
    if (z->epfd >= 0)
        close(z->epfd);
    free(z->rx);
    free(z->rx_mem);
    free(z->tx);
    free(z->tx_mem);
    free(z->scratch);
    free(z->peers);
    ftc_bk_grace_fini(&z->lost);
    ftc_bk_rank_set_fini(&z->queued);
    free(z);
}

void ftc_ofi_attach(ftc_ofi_t *z, ftc_context_t *ctx)
{
    if (z != NULL)
        z->ctx = ctx;
}

int ftc_ofi_fd(const ftc_ofi_t *z)
{
    return z != NULL ? z->epfd : -1;
}

int ftc_ofi_can_block(const ftc_ofi_t *z)
{
    return z != NULL && z->cq_sleep_ok;
}

const char *ftc_ofi_provider(const ftc_ofi_t *z)
{
    return z != NULL ? z->provider : NULL;
}

const char *ftc_ofi_describe(const ftc_ofi_t *z)
{
    return z != NULL ? z->describe : NULL;
}

size_t ftc_ofi_max_msg_size(const ftc_ofi_t *z)
{
    return z != NULL ? z->cfg.max_msg_size : 0;
}

void ftc_ofi_stats(const ftc_ofi_t *z, ftc_ofi_stats_t *out)
{
    if (out == NULL)
        return;
    if (z == NULL)
        memset(out, 0, sizeof(*out));
    else
        *out = z->stats;
}

ftc_ofi_detect_t ftc_ofi_peer_reported(const ftc_ofi_t *z, uint32_t peer,
                                       uint64_t *when_ns)
{
    if (when_ns != NULL)
        *when_ns = 0;
    if (z == NULL || peer >= z->cfg.nranks
        || z->peers[peer].state != FTC_OFI_PEER_FAILED)
        return FTC_OFI_DETECT_NONE;
    if (when_ns != NULL)
        *when_ns = z->peers[peer].reported_ns;
    return (ftc_ofi_detect_t)z->peers[peer].detect;
}

const char *ftc_ofi_detect_name(ftc_ofi_detect_t d)
{
    switch (d) {
    case FTC_OFI_DETECT_NONE: return "none";
    case FTC_OFI_DETECT_CQ_ERROR: return "cq-error";
    case FTC_OFI_DETECT_EXIT: return "process-exit";
    case FTC_OFI_DETECT_SEND: return "send-refused";
    case FTC_OFI_DETECT_CONNECT: return "connect";
    case FTC_OFI_DETECT_ADDRESS: return "address";
    }
    return "?";
}
