/* SPDX-License-Identifier: BSD-3-Clause */
/* Defaults of the ZeroMQ backend and their environment overrides. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "zmq_internal.h"

void ftc_zmq_config_init(ftc_zmq_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->size = sizeof(*cfg);
    cfg->bind_endpoint = "tcp://127.0.0.1:*";
    /* Longer than the core's keepalive bound (3.1 s with the default
     * back-off), so the adaptive keepalive, not a fixed 2 s heartbeat,
     * decides about a peer that is slow because the machine is busy: a
     * ZeroMQ I/O thread starved of CPU for two seconds at load 40 had
     * its live peers reported dead. The heartbeat stays as the backstop
     * for half-open connections while no operation waits. */
    cfg->heartbeat_ivl_ms = 1000;
    cfg->heartbeat_timeout_ms = 10000;
    cfg->reconnect_ivl_ms = 10;
    cfg->connect_timeout_ms = 1000;
    cfg->connect_retries = 3;
    cfg->disconnect_grace_ms = 2;
    cfg->max_queued_bytes = (size_t)64 << 20;
    cfg->sndhwm = 10000;
    cfg->rcvhwm = 100000;
    cfg->linger_ms = 500;
    cfg->single_host = -1;
    cfg->max_payload = (size_t)32 << 20;
    cfg->eager_connect = 0;
}

static const ftc_knob_t knobs[] = {
    {"FTCOLL_ZMQ_BIND", "tcp://127.0.0.1:*",
     "Where the ROUTER listens (bind_endpoint): tcp://<interface or "
     "address>:<port or *>, or ipc://<path>."},
    {"FTCOLL_ZMQ_HOST", "unset (the host name)",
     "The host name peers connect to when FTCOLL_ZMQ_BIND binds a "
     "wildcard address (advertise_host)."},
    {"FTCOLL_ZMQ_HEARTBEAT_MS", "1000",
     "ZMTP heartbeat interval in ms (heartbeat_ivl_ms); 0: no heartbeats."},
    {"FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS", "10000 (4 x the interval if only "
     "that is set)",
     "A connection silent this long is lost (heartbeat_timeout_ms)."},
    {"FTCOLL_ZMQ_CONNECT_RETRIES", "3",
     "Failed connection attempts, before the first success, after which a "
     "peer is reported unreachable (connect_retries)."},
    {"FTCOLL_ZMQ_CONNECT", "lazy",
     "eager: connect to every peer when the peers are set and wait for "
     "the handshakes (a stopped process receives an exclusion notice "
     "from any peer); lazy: on the first send to, or watch of, a peer "
     "(a stopped process receives it from the peers that had sent to "
     "it) (eager_connect)."},
    {"FTCOLL_ZMQ_GRACE_MS", "2",
     "Delay between a lost connection and its report to the core, for a "
     "peer that never connected to this rank (disconnect_grace_ms); a "
     "peer that did is reported once its connection has ended and been "
     "read."},
    {"FTCOLL_ZMQ_LINGER_MS", "500",
     "How long ftc_zmq_destroy waits for queued messages to live peers "
     "(linger_ms)."},
    FTC_BK_KNOB_SINGLE_HOST,
    {"FTCOLL_ZMQ_MAX_PAYLOAD", "33554432",
     "The largest collective buffer in bytes, the same on every rank "
     "(max_payload); it bounds the largest message a rank accepts. 0: no "
     "limit."},
    {NULL, NULL, NULL},
};

const ftc_knob_t *ftc_zmq_knobs(void)
{
    return knobs;
}

int ftc_zmq_config_from_env(ftc_zmq_config_t *cfg, char *err, size_t errlen)
{
#define F(field) offsetof(ftc_zmq_config_t, field)
    static const ftc_bk_env_t env[] = {
        {"FTCOLL_ZMQ_HEARTBEAT_MS", FTC_BK_ENV_INT, F(heartbeat_ivl_ms), 0, 0,
         NULL, NULL},
        {"FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS", FTC_BK_ENV_INT,
         F(heartbeat_timeout_ms), 0, 0, NULL, NULL},
        {"FTCOLL_ZMQ_CONNECT_RETRIES", FTC_BK_ENV_INT, F(connect_retries), 0,
         0, NULL, NULL},
        {"FTCOLL_ZMQ_CONNECT", FTC_BK_ENV_CHOICE, F(eager_connect), 0, 0,
         "eager=1 lazy=0", NULL},
        {"FTCOLL_ZMQ_GRACE_MS", FTC_BK_ENV_INT, F(disconnect_grace_ms), 0, 0,
         NULL, NULL},
        {"FTCOLL_ZMQ_LINGER_MS", FTC_BK_ENV_INT, F(linger_ms), 0, 0, NULL,
         NULL},
        FTC_BK_ENV_SINGLE_HOST(ftc_zmq_config_t),
        {"FTCOLL_ZMQ_MAX_PAYLOAD", FTC_BK_ENV_SIZE, F(max_payload), 0,
         SIZE_MAX / 4, NULL, "a byte count (0: no limit)"},
        {"FTCOLL_ZMQ_BIND", FTC_BK_ENV_STRING, F(bind_endpoint), 0, 0, NULL,
         NULL},
        {"FTCOLL_ZMQ_HOST", FTC_BK_ENV_STRING, F(advertise_host), 0, 0, NULL,
         NULL},
    };
#undef F
    if (cfg == NULL)
        return FTC_EINVAL;
    int rc = ftc_bk_env_apply(env, sizeof(env) / sizeof(env[0]), knobs, cfg,
                              err, errlen);
    if (rc != FTC_OK)
        return rc;
    /* A heartbeat interval without a timeout would never fire. */
    if (getenv("FTCOLL_ZMQ_HEARTBEAT_MS") != NULL
        && getenv("FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS") == NULL)
        cfg->heartbeat_timeout_ms = cfg->heartbeat_ivl_ms > INT_MAX / 4
                                        ? INT_MAX
                                        : 4 * cfg->heartbeat_ivl_ms;
    return FTC_OK;
}
