/* SPDX-License-Identifier: BSD-3-Clause */
#include "env.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"

static int refuse(char *err, size_t errlen, const char *name,
                  const char *what)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s must be %s", name, what);
    return FTC_EINVAL;
}

static int described(const ftc_knob_t *knobs, const char *name)
{
    for (size_t i = 0; knobs[i].name != NULL; i++)
        if (strcmp(knobs[i].name, name) == 0)
            return 1;
    return 0;
}

static unsigned long long kind_max(ftc_bk_env_kind_t kind)
{
    switch (kind) {
    case FTC_BK_ENV_INT:
        return INT_MAX;
    case FTC_BK_ENV_U32:
        return UINT32_MAX;
    default:
        return SIZE_MAX;
    }
}

/* A decimal number in [min, max]: 0, or -1. No sign, no trailing junk. */
static int read_number(const char *s, unsigned long long min,
                       unsigned long long max, unsigned long long *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* The value of word s in "word=value word=value": 0, or -1 if no word
 * matches. */
static int read_choice(const char *s, const char *choices, int *out)
{
    size_t len = strlen(s);
    for (const char *p = choices; *p != '\0';) {
        size_t w = strcspn(p, "=");
        if (w == len && strncmp(p, s, len) == 0) {
            *out = atoi(p + w + 1);
            return 0;
        }
        p += strcspn(p, " ");
        p += strspn(p, " ");
    }
    return -1;
}

/* "eager or lazy" from "eager=1 lazy=0". */
static void choice_words(const char *choices, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = choices; *p != '\0';) {
        size_t w = strcspn(p, "=");
        const char *sep = used == 0 ? "" : " or ";
        int k = snprintf(out + used, len - used, "%s%.*s", sep, (int)w, p);
        if (k < 0 || (size_t)k >= len - used)
            return;
        used += (size_t)k;
        p += strcspn(p, " ");
        p += strspn(p, " ");
    }
}

static void store(void *cfg, const ftc_bk_env_t *e, unsigned long long v)
{
    char *field = (char *)cfg + e->offset;
    if (e->kind == FTC_BK_ENV_SIZE) {
        size_t s = (size_t)v;
        memcpy(field, &s, sizeof(s));
    } else if (e->kind == FTC_BK_ENV_U32) {
        uint32_t u = (uint32_t)v;
        memcpy(field, &u, sizeof(u));
    } else {
        int i = (int)v;
        memcpy(field, &i, sizeof(i));
    }
}

int ftc_bk_env_apply(const ftc_bk_env_t *env, size_t n,
                     const ftc_knob_t *knobs, void *cfg, char *err,
                     size_t errlen)
{
    if (cfg == NULL)
        return FTC_EINVAL;
    for (size_t i = 0; i < n; i++) {
        const ftc_bk_env_t *e = &env[i];
        if (!described(knobs, e->name))
            return refuse(err, errlen, e->name,
                          "described in the backend's knob table");
        const char *s = getenv(e->name);
        if (s == NULL || *s == '\0')
            continue;
        if (e->kind == FTC_BK_ENV_STRING) {
            memcpy((char *)cfg + e->offset, &s, sizeof(s));
        } else if (e->kind == FTC_BK_ENV_CHOICE) {
            int v;
            if (read_choice(s, e->choices, &v) != 0) {
                char words[128];
                choice_words(e->choices, words, sizeof(words));
                return refuse(err, errlen, e->name,
                              e->must_be != NULL ? e->must_be : words);
            }
            store(cfg, e, (unsigned long long)v);
        } else {
            unsigned long long v;
            unsigned long long max = e->max != 0 ? e->max : kind_max(e->kind);
            if (read_number(s, e->min, max, &v) != 0)
                return refuse(err, errlen, e->name,
                              e->must_be != NULL ? e->must_be
                                                 : "a non-negative integer");
            store(cfg, e, v);
        }
    }
    return FTC_OK;
}
