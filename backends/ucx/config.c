/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Defaults of the UCX backend, their environment overrides, and what the
 * UCX_* environment lets the backend do.
 *
 * Every endpoint asks UCX for UCP_ERR_HANDLING_MODE_PEER, and UCX then
 * uses only transports that can report a dead peer. Shared memory (posix,
 * sysv, xpmem: "sm", "mm") can, through UCX's keepalive, only with
 * UCX_MM_ERROR_HANDLING=y; without it UCX_TLS=sm fails every endpoint
 * with "Destination is unreachable", and the default UCX_TLS silently
 * takes tcp for peers on the same host. We read the same variables UCX
 * reads to say so up front, in words a user can act on. (A setting made
 * in a UCX configuration file instead of the environment is not seen
 * here; the endpoint itself then decides, and its failure is explained
 * the same way.)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env.h"
#include "ucx_internal.h"

void ftc_ucx_config_init(ftc_ucx_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->size = sizeof(*cfg);
    cfg->eager_connect = 1;
    cfg->failure_grace_ms = 0;
    cfg->spin_us = -1;
    cfg->max_sleep_ms = 100;
    cfg->max_inflight_bytes = (size_t)64 << 20;
    cfg->close_timeout_ms = 200;
    cfg->handshake_timeout_ms = 30000;
    cfg->single_host = -1;
    cfg->net_devices = NULL;
    cfg->stop_cover_ms = 0;
    cfg->exit_watch = 1;
}

static const ftc_knob_t knobs[] = {
    {"FTCOLL_UCX_CONNECT", "eager",
     "eager: create every endpoint when the peers are set; lazy: on the "
     "first send to, or watch of, a peer (eager_connect)."},
    {"FTCOLL_UCX_GRACE_MS", "0",
     "Delay between UCX's report of a dead peer and the core's "
     "(failure_grace_ms)."},
    {"FTCOLL_UCX_SPIN_US", "unset (adaptive, up to 50)",
     "ftc_ucx_progress with a timeout busy-polls this long before it "
     "sleeps; unset: an adaptive spin of up to 50 us, or of up to 1000 us "
     "that yields the CPU on every idle pass when ranks outnumber CPUs "
     "(spin_us)."},
    {"FTCOLL_UCX_MAX_SLEEP_MS", "100",
     "Longest sleep inside progress, so that UCX's keepalive runs; 0: no "
     "limit (max_sleep_ms)."},
    {"FTCOLL_UCX_CLOSE_TIMEOUT_MS", "200",
     "How long ftc_ucx_destroy waits for endpoints to close "
     "(close_timeout_ms)."},
    {"FTCOLL_UCX_HANDSHAKE_MS", "30000",
     "How long set-up waits for a silent peer's handshake before it counts "
     "the peer failed; 0 skips the handshake (handshake_timeout_ms)."},
    {"FTCOLL_UCX_MAX_INFLIGHT", "67108864",
     "Bytes in flight to one peer beyond which it is taken as not reading "
     "(max_inflight_bytes)."},
    {"FTCOLL_UCX_NET_DEVICES", "unset (UCX_NET_DEVICES, else as "
     "FTCOLL_SINGLE_HOST says)",
     "UCX_NET_DEVICES for this backend's UCP context, e.g. eth0 or "
     "mlx5_0:1 (net_devices)."},
    {"FTCOLL_UCX_STOP_COVER_MS", "0",
     "Shared memory: size UCX's receive FIFO so that a process stopped "
     "this long still receives its exclusion notice; 0: UCX's size. "
     "Every process on the host that talks to the job must end with the "
     "same size (stop_cover_ms)."},
    {"FTCOLL_UCX_EXIT_WATCH", "1",
     "1: a peer on this host is reported failed as soon as its process "
     "exits (pidfd), not after UCX's keepalive; 0: UCX's reports only "
     "(exit_watch)."},
    FTC_BK_KNOB_SINGLE_HOST,
    FTC_BK_KNOB_LOCAL_SIZE,
    {NULL, NULL, NULL},
};

const ftc_knob_t *ftc_ucx_knobs(void)
{
    return knobs;
}

int ftc_ucx_config_from_env(ftc_ucx_config_t *cfg, char *err, size_t errlen)
{
#define F(field) offsetof(ftc_ucx_config_t, field)
    static const ftc_bk_env_t env[] = {
        {"FTCOLL_UCX_GRACE_MS", FTC_BK_ENV_INT, F(failure_grace_ms), 0, 0,
         NULL, NULL},
        {"FTCOLL_UCX_SPIN_US", FTC_BK_ENV_INT, F(spin_us), 0, 0, NULL, NULL},
        {"FTCOLL_UCX_MAX_SLEEP_MS", FTC_BK_ENV_INT, F(max_sleep_ms), 0, 0,
         NULL, NULL},
        {"FTCOLL_UCX_CLOSE_TIMEOUT_MS", FTC_BK_ENV_INT, F(close_timeout_ms),
         0, 0, NULL, NULL},
        {"FTCOLL_UCX_HANDSHAKE_MS", FTC_BK_ENV_INT, F(handshake_timeout_ms),
         0, 0, NULL, NULL},
        {"FTCOLL_UCX_MAX_INFLIGHT", FTC_BK_ENV_SIZE, F(max_inflight_bytes),
         1, 0, NULL, "a byte count > 0"},
        FTC_BK_ENV_SINGLE_HOST(ftc_ucx_config_t),
        FTC_BK_ENV_LOCAL_SIZE(ftc_ucx_config_t),
        {"FTCOLL_UCX_NET_DEVICES", FTC_BK_ENV_STRING, F(net_devices), 0, 0,
         NULL, NULL},
        {"FTCOLL_UCX_CONNECT", FTC_BK_ENV_CHOICE, F(eager_connect), 0, 0,
         "eager=1 lazy=0", NULL},
        {"FTCOLL_UCX_STOP_COVER_MS", FTC_BK_ENV_INT, F(stop_cover_ms), 0, 0,
         NULL, NULL},
        {"FTCOLL_UCX_EXIT_WATCH", FTC_BK_ENV_CHOICE, F(exit_watch), 0, 0,
         "1=1 0=0", NULL},
    };
#undef F
    return ftc_bk_env_apply(env, sizeof(env) / sizeof(env[0]), knobs, cfg,
                            err, errlen);
}

/* --- What UCX_TLS allows ------------------------------------------------ */

typedef struct tls_class {
    const char *tls;            /* UCX_TLS as set, or "all" */
    bool all;                   /* unset, "all", or an exclusion list */
    bool shm;                   /* a shared-memory transport with AMs */
    bool net;                   /* anything that reaches another host */
    bool net_not_tcp;           /* ... other than tcp */
    bool mm_eh;                 /* shared memory error handling is on */
    bool ka_set;                /* UCX_KEEPALIVE_INTERVAL is set */
} tls_class_t;

static bool env_yes(const char *name)
{
    const char *s = getenv(name);
    if (s == NULL)
        return false;
    return strcasecmp(s, "y") == 0 || strcasecmp(s, "yes") == 0
           || strcasecmp(s, "on") == 0 || strcasecmp(s, "1") == 0
           || strcasecmp(s, "true") == 0;
}

static bool token_is(const char *t, size_t n, const char *const *names)
{
    for (size_t i = 0; names[i] != NULL; i++)
        if (strlen(names[i]) == n && strncmp(t, names[i], n) == 0)
            return true;
    return false;
}

static void classify(tls_class_t *c)
{
    static const char *const shm_am[] = {"sm", "shm", "mm", "posix", "sysv",
                                         "xpmem", NULL};
    static const char *const local[] = {"self", "cma", "knem", NULL};
    memset(c, 0, sizeof(*c));
    const char *tls = getenv("UCX_TLS");
    c->tls = tls != NULL && *tls != '\0' ? tls : "all";
    c->all = tls == NULL || *tls == '\0' || tls[0] == '^';
    c->mm_eh = env_yes("UCX_MM_ERROR_HANDLING")
               || env_yes("UCX_POSIX_ERROR_HANDLING")
               || env_yes("UCX_SYSV_ERROR_HANDLING")
               || env_yes("UCX_XPMEM_ERROR_HANDLING");
    const char *ka = getenv("UCX_KEEPALIVE_INTERVAL");
    c->ka_set = ka != NULL && *ka != '\0';
    if (c->all) {
        c->shm = c->net = true;
        return;
    }
    for (const char *p = tls; *p != '\0';) {
        size_t n = strcspn(p, ",");
        /* "tcp\" (no aliases) and "tcp:aux" are still tcp */
        size_t k = strcspn(p, ",\\:");
        if (k < n)
            n = k;
        if (n == 3 && strncmp(p, "all", 3) == 0) {
            c->all = c->shm = c->net = true;
        } else if (token_is(p, n, shm_am)) {
            c->shm = true;
        } else if (!token_is(p, n, local) && n > 0) {
            c->net = true;
            if (n != 3 || strncmp(p, "tcp", 3) != 0)
                c->net_not_tcp = true;
        }
        p += strcspn(p, ",");
        if (*p == ',')
            p++;
    }
}

bool ftc_ucx_costly_messages(void)
{
    tls_class_t c;
    classify(&c);
    /* Only tcp reaches the peers: UCX_TLS names no other network
     * transport, and no shared memory UCX may use (without error
     * handling it reaches this host's peers over tcp too). */
    return !c.all && c.net && !c.net_not_tcp && !(c.shm && c.mm_eh);
}

int ftc_ucx_check_env(const ftc_ucx_t *u)
{
    tls_class_t c;
    classify(&c);
    if (u->cfg.nranks <= 1)
        return 0;
    if (c.shm && !c.net && !c.mm_eh) {
        ftc_ucx_logf(u,
            "rank %u: UCX_TLS=%s cannot report a dead peer: shared memory "
            "does so only with UCX_MM_ERROR_HANDLING=y (and a short "
            "UCX_KEEPALIVE_INTERVAL, e.g. 100ms; the default is 20 s). Set "
            "them, or add tcp to UCX_TLS",
            u->cfg.rank, c.tls);
        return -1;
    }
    if (c.shm && c.net && !c.mm_eh)
        ftc_ucx_logf(u,
            "rank %u: note: UCX_TLS=%s: shared memory cannot report a dead "
            "peer without UCX_MM_ERROR_HANDLING=y, so UCX reaches peers on "
            "this host over the network transport (tcp: ~6 us instead of "
            "~0.2 us). Set UCX_MM_ERROR_HANDLING=y and "
            "UCX_KEEPALIVE_INTERVAL=100ms to use shared memory",
            u->cfg.rank, c.tls);
    if (c.shm && c.mm_eh && !c.ka_set)
        ftc_ucx_logf(u,
            "rank %u: note: over shared memory UCX reports a dead peer only "
            "after UCX_KEEPALIVE_INTERVAL (default 20 s); the core's own "
            "keepalive will usually be first. UCX_KEEPALIVE_INTERVAL=100ms "
            "makes UCX's report arrive in ~0.1 s",
            u->cfg.rank);
    return 0;
}

/* --- Which network devices --------------------------------------------- */

/* Every name of the comma-separated list is the loopback interface. */
static bool loopback_only(const char *list)
{
    bool any = false;
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n > 0) {
            if (!(n == 2 && strncmp(p, "lo", 2) == 0))
                return false;
            any = true;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return any;
}

static void append(char *out, size_t len, const char *name)
{
    size_t k = strlen(out);
    if (k + 1 + strlen(name) + 1 > len)
        return;     /* full: the rest are left out */
    snprintf(out + k, len - k, "%s%s", k > 0 ? "," : "", name);
}

/* "lo" and every InfiniBand/RoCE port of this host ("mlx5_0:1"), so that
 * a single-host job keeps its HCA loopback when UCX_TLS asks for it. */
static void loopback_devices(char *out, size_t len)
{
    snprintf(out, len, "lo");
    DIR *d = opendir("/sys/class/infiniband");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof(path), "/sys/class/infiniband/%.255s/ports",
                 e->d_name);
        DIR *pd = opendir(path);
        if (pd == NULL)
            continue;
        struct dirent *pe;
        while ((pe = readdir(pd)) != NULL) {
            if (pe->d_name[0] == '.')
                continue;
            char name[600];
            if (strlen(e->d_name) + strlen(pe->d_name) + 2 <= sizeof(name)) {
                snprintf(name, sizeof(name), "%.255s:%.255s", e->d_name,
                         pe->d_name);
                append(out, len, name);
            }
        }
        closedir(pd);
    }
    closedir(d);
}

int ftc_ucx_choose_devices(ftc_ucx_t *u)
{
    tls_class_t c;
    classify(&c);
    const char *env = getenv("UCX_NET_DEVICES");
    const char *chosen = u->cfg.net_devices != NULL && *u->cfg.net_devices
                             ? u->cfg.net_devices
                             : env != NULL && *env != '\0' ? env : NULL;
    u->net_devices[0] = '\0';
    u->set_net_devices = false;
    if (chosen != NULL) {
        if (u->cfg.single_host == 0 && c.net && loopback_only(chosen)) {
            ftc_ucx_logf(u,
                "rank %u: the job spans hosts (single_host = 0, "
                "FTCOLL_SINGLE_HOST) but UCX_NET_DEVICES=%s is the loopback "
                "interface only: ranks on other hosts could not connect. "
                "Name the interface they reach, e.g. UCX_NET_DEVICES=eth0 "
                "(or mlx5_0:1 on InfiniBand)",
                u->cfg.rank, chosen);
            return -1;
        }
        if (strlen(chosen) >= sizeof(u->net_devices)) {
            ftc_ucx_logf(u, "rank %u: the network device list is longer "
                            "than %zu characters", u->cfg.rank,
                         sizeof(u->net_devices) - 1);
            return -1;
        }
        snprintf(u->net_devices, sizeof(u->net_devices), "%s", chosen);
        u->set_net_devices = chosen == u->cfg.net_devices;
        return 0;
    }
    if (u->cfg.single_host == 1) {
        loopback_devices(u->net_devices, sizeof(u->net_devices));
        u->set_net_devices = true;
    } else if (u->cfg.single_host == 0 && c.net && u->cfg.nranks > 1) {
        ftc_ucx_logf(u,
            "rank %u: note: the job spans hosts and no UCX_NET_DEVICES is "
            "set: UCX listens on every network device of this host. "
            "UCX_NET_DEVICES=<interface> (or FTCOLL_UCX_NET_DEVICES) "
            "chooses the one the other hosts reach",
            u->cfg.rank);
    }
    return 0;
}

void ftc_ucx_explain_unreachable(const ftc_ucx_t *u, char *out, size_t len)
{
    tls_class_t c;
    classify(&c);
    if (c.shm && !c.mm_eh && !c.net)
        snprintf(out, len,
                 "UCX_TLS=%s: shared memory reports a dead peer only with "
                 "UCX_MM_ERROR_HANDLING=y; set it (and "
                 "UCX_KEEPALIVE_INTERVAL=100ms) or use tcp",
                 c.tls);
    else if (c.shm && !c.net)
        snprintf(out, len,
                 "UCX_TLS=%s has only shared-memory transports, which reach "
                 "processes on this host only; add tcp (or rc_x,ud_x / dc_x "
                 "on InfiniBand) for other hosts",
                 c.tls);
    else
        snprintf(out, len,
                 "UCX has no transport in UCX_TLS=%s (devices: "
                 "UCX_NET_DEVICES=%s) that reaches this peer and reports "
                 "failures (UCP_ERR_HANDLING_MODE_PEER); `ucx_info -d` "
                 "lists this host's transports",
                 c.tls,
                 u->net_devices[0] != '\0' ? u->net_devices : "all");
}

void ftc_ucx_explain_init(const ftc_ucx_t *u, ucs_status_t st, char *out,
                          size_t len)
{
    tls_class_t c;
    classify(&c);
    /* The devices in effect: ours (net_devices, single_host) or UCX's. */
    const char *dev = u->net_devices[0] != '\0' ? u->net_devices
                                                : getenv("UCX_NET_DEVICES");
    if (st == UCS_ERR_NO_DEVICE || st == UCS_ERR_NO_ELEM
        || st == UCS_ERR_UNSUPPORTED)
        snprintf(out, len,
                 "UCX found none of UCX_TLS=%s%s%s on this host (%s). "
                 "`ucx_info -d` lists what it has. InfiniBand transports "
                 "(rc, ud, dc, rc_x, ud_x, dc_x) need an HCA with rdma-core "
                 "(apt-get install libibverbs1 ibverbs-providers) and a port "
                 "that is up; elsewhere use UCX_TLS=tcp, or UCX_TLS=sm with "
                 "UCX_MM_ERROR_HANDLING=y",
                 c.tls, dev != NULL ? " with UCX_NET_DEVICES=" : "",
                 dev != NULL ? dev : "", ucs_status_string(st));
    else
        snprintf(out, len, "%s (UCX_TLS=%s)", ucs_status_string(st), c.tls);
}

/* --- The shared-memory FIFO --------------------------------------------- */

/* A UCX time ("100ms", "0.1s", "100000us", "20000000.00us") in
 * nanoseconds; 0 when it is not one ("inf", "auto", garbage). */
static uint64_t ucx_time_ns(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0))
        return 0;
    double scale = 1e9;     /* UCX's unit-less time is seconds */
    if (strcasecmp(end, "ms") == 0)
        scale = 1e6;
    else if (strcasecmp(end, "us") == 0)
        scale = 1e3;
    else if (strcasecmp(end, "ns") == 0)
        scale = 1;
    else if (strcasecmp(end, "m") == 0)
        scale = 60e9;
    else if (*end != '\0' && strcasecmp(end, "s") != 0)
        return 0;
    double ns = v * scale;
    return ns >= 1 && ns < 1e18 ? (uint64_t)ns : 0;
}

uint32_t ftc_ucx_fifo_size(const ftc_ucx_t *u)
{
    enum {
        UCX_FIFO_DEFAULT = 64,      /* UCX_{SYSV,POSIX}_FIFO_SIZE */
        UCX_KA_EPS_DEFAULT = 128,   /* UCX_KEEPALIVE_NUM_EPS */
        FIFO_MAX = 1u << 16         /* 8 MiB of 128-byte elements */
    };
    tls_class_t c;
    classify(&c);
    if (u->cfg.stop_cover_ms <= 0 || u->cfg.nranks <= 1 || !c.shm
        || !c.mm_eh || getenv("UCX_SYSV_FIFO_SIZE") != NULL
        || getenv("UCX_POSIX_FIFO_SIZE") != NULL
        || getenv("UCX_MM_FIFO_SIZE") != NULL)
        return 0;
    const char *ka = getenv("UCX_KEEPALIVE_INTERVAL");
    /* Unset: UCX's 20 s. Unreadable: assume a short one (a FIFO too
     * large costs memory; one too small, the notice). */
    uint64_t ka_ns = ka == NULL || *ka == '\0' ? 20000000000ull
                     : ucx_time_ns(ka) != 0 ? ucx_time_ns(ka) : 100000000ull;
    /* UCX checks at most UCX_KEEPALIVE_NUM_EPS endpoints a round, and
     * each of them costs the stopped process one FIFO element. */
    uint64_t senders = u->cfg.nranks - 1;
    const char *kn = getenv("UCX_KEEPALIVE_NUM_EPS");
    uint64_t per_round = kn != NULL && strtoull(kn, NULL, 10) > 0
                             ? strtoull(kn, NULL, 10) : UCX_KA_EPS_DEFAULT;
    if (senders > per_round)
        senders = per_round;
    uint64_t rounds = ((uint64_t)u->cfg.stop_cover_ms * 1000000u + ka_ns - 1)
                      / ka_ns;
    /* UCX's own size stays free for the messages themselves. */
    uint64_t want = senders * rounds + UCX_FIFO_DEFAULT;
    if (want > FIFO_MAX)
        want = FIFO_MAX;
    uint32_t size = UCX_FIFO_DEFAULT;
    while (size < want)
        size *= 2;              /* UCX wants a power of two */
    return size > UCX_FIFO_DEFAULT ? size : 0;
}
