/* SPDX-License-Identifier: BSD-3-Clause */
/* Defaults of the libfabric backend, their environment overrides and the
 * table that describes them (ftc_ofi_knobs). */
#include <string.h>

#include "env.h"
#include "ofi_internal.h"

void ftc_ofi_config_init(ftc_ofi_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->size = sizeof(*cfg);
    cfg->max_msg_size = 65536;
    cfg->rx_depth = 64;
    cfg->tx_depth = 256;
    cfg->inject_size = 256;
    cfg->zcopy_min = 0;
    cfg->max_queued_bytes = (size_t)64 << 20;
    cfg->use_fi_source = 0;
    cfg->use_wait_fd = 1;
    cfg->pid_monitor = 1;
    cfg->report_grace_ms = 0;
    cfg->force_mr_local = 0;
    cfg->eager_connect = 1;
    cfg->connect_timeout_ms = 10000;
    cfg->single_host = -1;
}

static const ftc_knob_t knobs[] = {
    {"FTCOLL_OFI_PROVIDER", "unset (libfabric's first choice)",
     "The libfabric provider, e.g. tcp;ofi_rxm, shm, verbs;ofi_rxm, cxi, "
     "efa, psm3 (provider); FI_PROVIDER still applies inside libfabric."},
    {"FTCOLL_OFI_NODE", "unset (the provider's default interface)",
     "The local address to bind, passed to fi_getinfo with FI_SOURCE "
     "(node)."},
    {"FTCOLL_OFI_SERVICE", "unset (an ephemeral port)",
     "The local port to bind (service)."},
    {"FTCOLL_OFI_DOMAIN", "unset (any)",
     "fi_getinfo's domain name, e.g. mlx5_0 or lo (domain)."},
    {"FTCOLL_OFI_MAX_MSG", "65536",
     "Longest message in bytes, and the size of each receive buffer "
     "(max_msg_size)."},
    {"FTCOLL_OFI_RX_DEPTH", "64",
     "Receive buffers pre-posted, capped at the provider's rx size "
     "(rx_depth)."},
    {"FTCOLL_OFI_TX_DEPTH", "256",
     "Sends in flight at once, capped at the provider's tx size; more "
     "wait in the per-peer queue (tx_depth)."},
    {"FTCOLL_OFI_INJECT", "256",
     "Inject size to ask for when the provider's is smaller; 0: the "
     "provider's (inject_size)."},
    {"FTCOLL_OFI_ZCOPY_MIN", "0",
     "Messages of at least this many bytes are sent from the core's "
     "buffer instead of a copy; 0: always copy (zcopy_min)."},
    {"FTCOLL_OFI_FI_SOURCE", "0",
     "1: ask for FI_SOURCE and drop a message whose header names another "
     "sender than the provider does (use_fi_source)."},
    {"FTCOLL_OFI_WAIT_FD", "1",
     "1: ask for a CQ with a wait descriptor to sleep on (use_wait_fd)."},
    {"FTCOLL_OFI_PID_MONITOR", "1",
     "1: watch local peers' processes and report their exits "
     "(pid_monitor)."},
    {"FTCOLL_OFI_GRACE_MS", "0",
     "Least delay between a local peer's exit and its report; its last "
     "messages are read first whatever this is (report_grace_ms)."},
    {"FTCOLL_OFI_MR_LOCAL", "0",
     "Test aid: 1 registers buffers as if the provider wanted FI_MR_LOCAL "
     "(force_mr_local)."},
    {"FTCOLL_OFI_CONNECT", "eager",
     "eager: connect to every peer before ftc_ofi_set_peers returns; lazy: "
     "on the first send (eager_connect)."},
    {"FTCOLL_OFI_CONNECT_MS", "10000",
     "How long the eager connect waits for a peer before reporting it "
     "failed (connect_timeout_ms)."},
    FTC_BK_KNOB_SINGLE_HOST,
    FTC_BK_KNOB_LOCAL_SIZE,
    {NULL, NULL, NULL},
};

const ftc_knob_t *ftc_ofi_knobs(void)
{
    return knobs;
}

int ftc_ofi_config_from_env(ftc_ofi_config_t *cfg, char *err, size_t errlen)
{
#define F(field) offsetof(ftc_ofi_config_t, field)
#define BOOL(name, field)                                                    \
    {name, FTC_BK_ENV_CHOICE, F(field), 0, 0, "0=0 1=1", NULL}
#define STR(name, field) {name, FTC_BK_ENV_STRING, F(field), 0, 0, NULL, NULL}
    static const ftc_bk_env_t env[] = {
        {"FTCOLL_OFI_MAX_MSG", FTC_BK_ENV_SIZE, F(max_msg_size), 0, 0, NULL,
         NULL},
        {"FTCOLL_OFI_RX_DEPTH", FTC_BK_ENV_U32, F(rx_depth), 0, 0, NULL,
         NULL},
        {"FTCOLL_OFI_TX_DEPTH", FTC_BK_ENV_U32, F(tx_depth), 0, 0, NULL,
         NULL},
        {"FTCOLL_OFI_INJECT", FTC_BK_ENV_SIZE, F(inject_size), 0, 0, NULL,
         NULL},
        {"FTCOLL_OFI_ZCOPY_MIN", FTC_BK_ENV_SIZE, F(zcopy_min), 0, 0, NULL,
         NULL},
        BOOL("FTCOLL_OFI_FI_SOURCE", use_fi_source),
        BOOL("FTCOLL_OFI_WAIT_FD", use_wait_fd),
        BOOL("FTCOLL_OFI_PID_MONITOR", pid_monitor),
        {"FTCOLL_OFI_GRACE_MS", FTC_BK_ENV_INT, F(report_grace_ms), 0, 0,
         NULL, NULL},
        BOOL("FTCOLL_OFI_MR_LOCAL", force_mr_local),
        {"FTCOLL_OFI_CONNECT_MS", FTC_BK_ENV_INT, F(connect_timeout_ms), 0,
         0, NULL, NULL},
        {"FTCOLL_OFI_CONNECT", FTC_BK_ENV_CHOICE, F(eager_connect), 0, 0,
         "eager=1 lazy=0", NULL},
        FTC_BK_ENV_SINGLE_HOST(ftc_ofi_config_t),
        FTC_BK_ENV_LOCAL_SIZE(ftc_ofi_config_t),
        STR("FTCOLL_OFI_PROVIDER", provider),
        STR("FTCOLL_OFI_NODE", node),
        STR("FTCOLL_OFI_SERVICE", service),
        STR("FTCOLL_OFI_DOMAIN", domain),
    };
#undef STR
#undef BOOL
#undef F
    return ftc_bk_env_apply(env, sizeof(env) / sizeof(env[0]), knobs, cfg,
                            err, errlen);
}
