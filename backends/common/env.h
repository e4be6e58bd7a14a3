/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A backend's environment overrides, read from one table: each entry
 * names a variable, how to read it and which config field it sets. The
 * same variables are described for people in the backend's public knob
 * table (ftcoll/knob.h); ftc_bk_env_apply refuses a variable that table
 * does not describe, so the two cannot drift apart unseen.
 */
#ifndef FTC_BK_ENV_H
#define FTC_BK_ENV_H

#include <stddef.h>

#include "ftcoll/knob.h"

typedef enum ftc_bk_env_kind {
    FTC_BK_ENV_INT,     /* int field, decimal, in [min, max] (max 0: INT_MAX) */
    FTC_BK_ENV_U32,     /* uint32_t field (max 0: UINT32_MAX) */
    FTC_BK_ENV_SIZE,    /* size_t field (max 0: SIZE_MAX) */
    FTC_BK_ENV_CHOICE,  /* int field, one of the words of `choices` */
    FTC_BK_ENV_STRING   /* const char * field, pointing into the environment */
} ftc_bk_env_kind_t;

typedef struct ftc_bk_env {
    const char *name;
    ftc_bk_env_kind_t kind;
    size_t offset;              /* of the field in the config struct */
    unsigned long long min, max;
    /* CHOICE: "word=value word=value", e.g. "eager=1 lazy=0". */
    const char *choices;
    /* What the error says the value must be; NULL: "a non-negative
     * integer", or the choices' words. */
    const char *must_be;
} ftc_bk_env_t;

/* FTCOLL_SINGLE_HOST, read the same way by every network backend into an
 * int single_host field (1, 0; unset leaves the config's -1). */
#define FTC_BK_ENV_SINGLE_HOST(type)                                         \
    {"FTCOLL_SINGLE_HOST", FTC_BK_ENV_CHOICE, offsetof(type, single_host),   \
     0, 0, "1=1 0=0", NULL}
#define FTC_BK_KNOB_SINGLE_HOST                                              \
    {"FTCOLL_SINGLE_HOST", "unset",                                          \
     "1: every rank runs on this host; 0: ranks run on several hosts, and "  \
     "an address only this host reaches is refused; unset: unknown "         \
     "(ftcoll-run sets it)"}

/* FTCOLL_LOCAL_SIZE into a uint32_t local_ranks field, read by every
 * backend whose blocking wait spins (common/spin.h). */
#define FTC_BK_ENV_LOCAL_SIZE(type)                                          \
    {"FTCOLL_LOCAL_SIZE", FTC_BK_ENV_U32, offsetof(type, local_ranks), 1, 0,  \
     NULL, "a rank count > 0"}
#define FTC_BK_KNOB_LOCAL_SIZE                                               \
    {"FTCOLL_LOCAL_SIZE", "unset (the launcher's local size, else the job "  \
     "size on a single host)",                                               \
     "Ranks of the job on this host; more than this process's CPUs turns "   \
     "the wait's spin off and makes an idle progress(0) yield (ftcoll-run "  \
     "sets it; local_ranks)"}

/*
 * Set cfg's fields from the variables of env[0 .. n-1] that are set and
 * not empty. FTC_OK, or FTC_EINVAL with "NAME must be ..." in err (if
 * not NULL) for the first bad value, or for a variable knobs does not
 * describe. Fields of variables that are unset keep their values.
 */
int ftc_bk_env_apply(const ftc_bk_env_t *env, size_t n,
                     const ftc_knob_t *knobs, void *cfg, char *err,
                     size_t errlen);

#endif
