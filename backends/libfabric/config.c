/* SPDX-License-Identifier: BSD-3-Clause */
/* Defaults of the libfabric backend and their environment overrides. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    cfg->report_grace_ms = 2;
    cfg->force_mr_local = 0;
    cfg->eager_connect = 1;
    cfg->connect_timeout_ms = 10000;
    cfg->single_host = -1;
}

/* An unsigned number from the environment; 1 if set, 0 if unset, -1 bad. */
static int env_num(const char *name, unsigned long long max,
                   unsigned long long *out)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || s[0] == '-' || v > max)
        return -1;
    *out = v;
    return 1;
}

static const char *env_str(const char *name)
{
    const char *s = getenv(name);
    return s != NULL && *s != '\0' ? s : NULL;
}

enum { T_SIZE, T_U32, T_INT, T_BOOL };

int ftc_ofi_config_from_env(ftc_ofi_config_t *cfg, char *err, size_t errlen)
{
#define F(field) offsetof(ftc_ofi_config_t, field)
    static const struct {
        const char *name;
        int type;
        size_t off;
    } nums[] = {
        {"FTCOLL_OFI_MAX_MSG", T_SIZE, F(max_msg_size)},
        {"FTCOLL_OFI_RX_DEPTH", T_U32, F(rx_depth)},
        {"FTCOLL_OFI_TX_DEPTH", T_U32, F(tx_depth)},
        {"FTCOLL_OFI_INJECT", T_SIZE, F(inject_size)},
        {"FTCOLL_OFI_ZCOPY_MIN", T_SIZE, F(zcopy_min)},
        {"FTCOLL_OFI_FI_SOURCE", T_BOOL, F(use_fi_source)},
        {"FTCOLL_OFI_WAIT_FD", T_BOOL, F(use_wait_fd)},
        {"FTCOLL_OFI_PID_MONITOR", T_BOOL, F(pid_monitor)},
        {"FTCOLL_OFI_GRACE_MS", T_INT, F(report_grace_ms)},
        {"FTCOLL_OFI_MR_LOCAL", T_BOOL, F(force_mr_local)},
        {"FTCOLL_OFI_CONNECT_MS", T_INT, F(connect_timeout_ms)},
    };
#undef F
    if (cfg == NULL)
        return FTC_EINVAL;
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        unsigned long long max = nums[i].type == T_SIZE  ? SIZE_MAX
                                 : nums[i].type == T_U32 ? UINT32_MAX
                                 : nums[i].type == T_INT ? INT_MAX
                                                         : 1;
        unsigned long long v;
        int rc = env_num(nums[i].name, max, &v);
        if (rc < 0) {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "%s must be %s", nums[i].name,
                         nums[i].type == T_BOOL ? "0 or 1"
                                                : "a non-negative integer");
            return FTC_EINVAL;
        }
        if (rc == 0)
            continue;
        char *field = (char *)cfg + nums[i].off;
        if (nums[i].type == T_SIZE) {
            size_t s = (size_t)v;
            memcpy(field, &s, sizeof(s));
        } else if (nums[i].type == T_U32) {
            uint32_t u = (uint32_t)v;
            memcpy(field, &u, sizeof(u));
        } else {
            int n = (int)v;
            memcpy(field, &n, sizeof(n));
        }
    }
    const char *s;
    if ((s = env_str("FTCOLL_OFI_CONNECT")) != NULL) {
        if (strcmp(s, "eager") == 0) {
            cfg->eager_connect = 1;
        } else if (strcmp(s, "lazy") == 0) {
            cfg->eager_connect = 0;
        } else {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "FTCOLL_OFI_CONNECT must be eager or "
                                      "lazy");
            return FTC_EINVAL;
        }
    }
    if ((s = env_str("FTCOLL_SINGLE_HOST")) != NULL) {
        if (strcmp(s, "1") == 0 || strcmp(s, "0") == 0) {
            cfg->single_host = s[0] - '0';
        } else {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "FTCOLL_SINGLE_HOST must be 1 or 0");
            return FTC_EINVAL;
        }
    }
    if ((s = env_str("FTCOLL_OFI_PROVIDER")) != NULL)
        cfg->provider = s;
    if ((s = env_str("FTCOLL_OFI_NODE")) != NULL)
        cfg->node = s;
    if ((s = env_str("FTCOLL_OFI_SERVICE")) != NULL)
        cfg->service = s;
    if ((s = env_str("FTCOLL_OFI_DOMAIN")) != NULL)
        cfg->domain = s;
    return FTC_OK;
}
