/* SPDX-License-Identifier: BSD-3-Clause */
/* Defaults of the ZeroMQ backend and their environment overrides. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zmq_internal.h"

void ftc_zmq_config_init(ftc_zmq_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->size = sizeof(*cfg);
    cfg->bind_endpoint = "tcp://127.0.0.1:*";
    cfg->heartbeat_ivl_ms = 500;
    cfg->heartbeat_timeout_ms = 2000;
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
}

/* A non-negative int from the environment; 1 if set, 0 if unset, -1 bad. */
static int env_int(const char *name, int *out)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 1;
}

int ftc_zmq_config_from_env(ftc_zmq_config_t *cfg, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        size_t off;
    } ints[] = {
        {"FTCOLL_ZMQ_HEARTBEAT_MS", offsetof(ftc_zmq_config_t, heartbeat_ivl_ms)},
        {"FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS",
         offsetof(ftc_zmq_config_t, heartbeat_timeout_ms)},
        {"FTCOLL_ZMQ_CONNECT_RETRIES", offsetof(ftc_zmq_config_t, connect_retries)},
        {"FTCOLL_ZMQ_GRACE_MS", offsetof(ftc_zmq_config_t, disconnect_grace_ms)},
        {"FTCOLL_ZMQ_LINGER_MS", offsetof(ftc_zmq_config_t, linger_ms)},
    };
    if (cfg == NULL)
        return FTC_EINVAL;
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        int v;
        int rc = env_int(ints[i].name, &v);
        if (rc < 0) {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "%s must be a non-negative integer",
                         ints[i].name);
            return FTC_EINVAL;
        }
        if (rc > 0)
            memcpy((char *)cfg + ints[i].off, &v, sizeof(v));
    }
    /* A heartbeat interval without a timeout would never fire. */
    if (getenv("FTCOLL_ZMQ_HEARTBEAT_MS") != NULL
        && getenv("FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS") == NULL)
        cfg->heartbeat_timeout_ms = 4 * cfg->heartbeat_ivl_ms;
    const char *s = getenv("FTCOLL_SINGLE_HOST");
    if (s != NULL && *s != '\0') {
        if (strcmp(s, "1") != 0 && strcmp(s, "0") != 0) {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "FTCOLL_SINGLE_HOST must be 1 or 0");
            return FTC_EINVAL;
        }
        cfg->single_host = s[0] - '0';
    }
    s = getenv("FTCOLL_ZMQ_MAX_PAYLOAD");
    if (s != NULL && *s != '\0') {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || s[0] == '-' || v > SIZE_MAX / 4) {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "FTCOLL_ZMQ_MAX_PAYLOAD must be a byte "
                                      "count (0: no limit)");
            return FTC_EINVAL;
        }
        cfg->max_payload = (size_t)v;
    }
    s = getenv("FTCOLL_ZMQ_BIND");
    if (s != NULL && *s != '\0')
        cfg->bind_endpoint = s;
    s = getenv("FTCOLL_ZMQ_HOST");
    if (s != NULL && *s != '\0')
        cfg->advertise_host = s;
    return FTC_OK;
}
