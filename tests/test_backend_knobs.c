/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every network backend's knob table (ftcoll/knob.h) against what its
 * config_from_env really reads: each described variable, set to a value
 * no variable accepts, either changes the config or is refused with an
 * error naming it; nothing set changes nothing; the table is well formed
 * (NULL-terminated, FTCOLL_ names, a default and a meaning each, no name
 * twice). The reverse, a variable read but not described, is refused by
 * the common reader itself (backends/common/env.c), which the first case
 * here would then show.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll/knob.h"

#include "check.h"
#if FTC_TEST_HAVE_ZMQ
#include "ftcoll_zmq.h"
#endif
#if FTC_TEST_HAVE_UCX
#include "ftcoll_ucx.h"
#endif
#if FTC_TEST_HAVE_OFI
#include "ftcoll_ofi.h"
#endif

/* One backend's config functions, behind a common shape. */
typedef struct backend {
    const char *name;
    const ftc_knob_t *(*knobs)(void);
    size_t cfg_size;
    void (*init)(void *cfg);
    int (*from_env)(void *cfg, char *err, size_t errlen);
} backend_t;

/* No variable of any backend accepts this: not a number, not a choice.
 * String variables take it as it is, which changes the config. */
#define GARBAGE "-?garbage"

static void check_table(const backend_t *b)
{
    const ftc_knob_t *k = b->knobs();
    size_t n = 0;
    CHECK_MSG(k != NULL, "%s: a knob table", b->name);
    if (k == NULL)
        return;
    for (; k[n].name != NULL && n < 1000; n++) {
        CHECK_MSG(strncmp(k[n].name, "FTCOLL_", 7) == 0, "%s: %s starts with "
              "FTCOLL_", b->name, k[n].name);
        CHECK_MSG(k[n].default_value != NULL && k[n].default_value[0] != '\0',
              "%s: %s has a default", b->name, k[n].name);
        CHECK_MSG(k[n].meaning != NULL && strlen(k[n].meaning) > 10,
              "%s: %s has a meaning", b->name, k[n].name);
        for (size_t j = 0; j < n; j++)
            CHECK_MSG(strcmp(k[j].name, k[n].name) != 0, "%s: %s twice",
                  b->name, k[n].name);
    }
    CHECK_MSG(n > 0 && n < 1000, "%s: %zu knobs, NULL-terminated", b->name, n);
}

static void check_read(const backend_t *b)
{
    const ftc_knob_t *k = b->knobs();
    void *def = malloc(b->cfg_size), *cfg = malloc(b->cfg_size);
    char err[256];
    if (def == NULL || cfg == NULL) {
        CHECK_MSG(0, "out of memory");
        free(def);
        free(cfg);
        return;
    }
    /* Zeroed first, so that padding compares equal. */
    memset(def, 0, b->cfg_size);
    memset(cfg, 0, b->cfg_size);
    b->init(def);
    b->init(cfg);
    int rc = b->from_env(cfg, err, sizeof(err));
    CHECK_MSG(rc == FTC_OK && memcmp(def, cfg, b->cfg_size) == 0,
          "%s: nothing set changes nothing (rc %d)", b->name, rc);
    for (size_t i = 0; k[i].name != NULL; i++) {
        memset(cfg, 0, b->cfg_size);
        b->init(cfg);
        err[0] = '\0';
        setenv(k[i].name, GARBAGE, 1);
        rc = b->from_env(cfg, err, sizeof(err));
        unsetenv(k[i].name);
        int refused = rc == FTC_EINVAL && strstr(err, k[i].name) != NULL;
        int taken = rc == FTC_OK && memcmp(def, cfg, b->cfg_size) != 0;
        CHECK_MSG(refused || taken, "%s: %s is read (rc %d, err '%s')", b->name,
              k[i].name, rc, err);
    }
    free(def);
    free(cfg);
}

#define ADAPT(prefix)                                                        \
    static void prefix##_init(void *c) { ftc_##prefix##_config_init(c); }    \
    static int prefix##_from_env(void *c, char *e, size_t n)                 \
    {                                                                        \
        return ftc_##prefix##_config_from_env(c, e, n);                      \
    }
#if FTC_TEST_HAVE_ZMQ
ADAPT(zmq)
#endif
#if FTC_TEST_HAVE_UCX
ADAPT(ucx)
#endif
#if FTC_TEST_HAVE_OFI
ADAPT(ofi)
#endif

int main(void)
{
    static const backend_t backends[] = {
#if FTC_TEST_HAVE_ZMQ
        {"zmq", ftc_zmq_knobs, sizeof(ftc_zmq_config_t), zmq_init,
         zmq_from_env},
#endif
#if FTC_TEST_HAVE_UCX
        {"ucx", ftc_ucx_knobs, sizeof(ftc_ucx_config_t), ucx_init,
         ucx_from_env},
#endif
#if FTC_TEST_HAVE_OFI
        {"ofi", ftc_ofi_knobs, sizeof(ftc_ofi_config_t), ofi_init,
         ofi_from_env},
#endif
        {NULL, NULL, 0, NULL, NULL},
    };
    int nbackends = 0;
    for (const backend_t *b = backends; b->name != NULL; b++) {
        check_table(b);
        check_read(b);
        nbackends++;
    }
    printf("%d backends\n", nbackends);
    return check_report();
}
