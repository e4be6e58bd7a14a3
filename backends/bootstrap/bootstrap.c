/* SPDX-License-Identifier: BSD-3-Clause */
/* Method selection, the calls every method shares, and "single". */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bootstrap_internal.h"

#define DEFAULT_TIMEOUT_MS 30000

void ftc_bootstrap_seterr(ftc_bootstrap_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err, sizeof(b->err), fmt, ap);
    va_end(ap);
}

static void put_err(char *err, size_t errlen, const char *msg)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", msg);
}

int ftc_bootstrap_env_timeout_ms(char *err, size_t errlen)
{
    const char *s = getenv(FTC_ENV_BOOTSTRAP_TIMEOUT);
    if (s == NULL || *s == '\0')
        return DEFAULT_TIMEOUT_MS;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v > 0) || v > 86400) {
        put_err(err, errlen, FTC_ENV_BOOTSTRAP_TIMEOUT
                " must be a number of seconds in (0, 86400]");
        return -1;
    }
    return (int)(v * 1000 + 0.5);
}

/* A decimal u32 from the environment; -1 if unset or malformed. */
static int64_t env_u32(const char *name)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > UINT32_MAX || s[0] == '-')
        return -1;
    return (int64_t)v;
}

int ftc_bootstrap_random_key(ftc_bootstrap_t *b, uint8_t key[16])
{
    size_t got = 0;
    while (got < 16) {
        ssize_t n = getrandom(key + got, 16 - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ftc_bootstrap_seterr(b, "bootstrap: getrandom: %s",
                                 strerror(errno));
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* FTCOLL_JOB_KEY: 1 (key filled), 0 unset, -1 malformed. */
static int env_job_key(uint8_t key[16])
{
    const char *s = getenv(FTC_ENV_JOB_KEY);
    if (s == NULL || *s == '\0')
        return 0;
    if (strlen(s) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 1;
}

static int single_allgather(ftc_bootstrap_t *b, const void *mine, size_t len,
                            void *all)
{
    (void)b;
    if (len > 0)
        memcpy(all, mine, len);
    return FTC_OK;
}

static void plain_close(ftc_bootstrap_t *b)
{
    free(b->dir);
    free(b);
}

static int single_open(ftc_bootstrap_t **out)
{
    ftc_bootstrap_t *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return FTC_ENOMEM;
    b->method = "single";
    b->size = 1;
    b->single_host = 1;
    b->token = 0x51A61E00ull;
    b->timeout_ms = -1;
    b->allgather = single_allgather;
    b->close = plain_close;
    /* Nobody to share it with, but a program that always authenticates
     * runs alone unchanged. */
    if (ftc_bootstrap_random_key(b, b->key) != 0) {
        free(b);
        return FTC_ETRANSPORT;
    }
    b->has_key = 1;
    *out = b;
    return FTC_OK;
}

/* FTCOLL_SINGLE_HOST: 1 or 0, -1 unset; -2 malformed. */
static int env_single_host(void)
{
    const char *s = getenv(FTC_ENV_SINGLE_HOST);
    if (s == NULL || *s == '\0')
        return -1;
    if (strcmp(s, "1") == 0)
        return 1;
    if (strcmp(s, "0") == 0)
        return 0;
    return -2;
}

static int open_method(ftc_bootstrap_t **out, int timeout_ms, char *err,
                       size_t errlen);

int ftc_bootstrap_open(ftc_bootstrap_t **out, char *err, size_t errlen)
{
    if (out == NULL)
        return FTC_EINVAL;
    *out = NULL;
    int timeout_ms = ftc_bootstrap_env_timeout_ms(err, errlen);
    if (timeout_ms < 0)
        return FTC_EINVAL;
    int single = env_single_host();
    if (single == -2) {
        put_err(err, errlen, FTC_ENV_SINGLE_HOST " must be 1 (every rank on "
                             "this host) or 0 (the job spans hosts)");
        return FTC_EINVAL;
    }
    int rc = open_method(out, timeout_ms, err, errlen);
    if (rc == FTC_OK && single >= 0)
        (*out)->single_host = single;
    return rc;
}

static int open_method(ftc_bootstrap_t **out, int timeout_ms, char *err,
                       size_t errlen)
{
    if (getenv(FTC_ENV_RANK) != NULL) {
        int64_t rank = env_u32(FTC_ENV_RANK), size = env_u32(FTC_ENV_SIZE);
        const char *dir = getenv(FTC_ENV_RENDEZVOUS);
        const char *tok = getenv(FTC_ENV_JOB_TOKEN);
        if (rank < 0 || size <= 0 || rank >= size) {
            put_err(err, errlen, "FTCOLL_RANK and FTCOLL_SIZE must be "
                                 "integers with 0 <= FTCOLL_RANK < FTCOLL_SIZE");
            return FTC_EINVAL;
        }
        if (dir == NULL || *dir == '\0') {
            put_err(err, errlen, "FTCOLL_RANK is set but FTCOLL_RENDEZVOUS "
                                 "is not (start the program with ftcoll-run)");
            return FTC_EINVAL;
        }
        uint64_t token = 0;
        if (tok != NULL && *tok != '\0') {
            char *end;
            errno = 0;
            token = strtoull(tok, &end, 16);
            if (errno != 0 || *end != '\0') {
                put_err(err, errlen, "FTCOLL_JOB_TOKEN must be hexadecimal");
                return FTC_EINVAL;
            }
        }
        uint8_t key[16];
        int has_key = env_job_key(key);
        if (has_key < 0) {
            put_err(err, errlen, "FTCOLL_JOB_KEY must be 32 hexadecimal "
                                 "digits (the 16-byte job key)");
            return FTC_EINVAL;
        }
        int rc = ftc_bootstrap_file_open(dir, (uint32_t)rank, (uint32_t)size,
                                         token, timeout_ms, out, err, errlen);
        if (rc == FTC_OK && has_key) {
            memcpy((*out)->key, key, sizeof(key));
            (*out)->has_key = 1;
        }
        return rc;
    }
    if (getenv("PMIX_RANK") != NULL || getenv("PMIX_NAMESPACE") != NULL)
        return ftc_bootstrap_pmix_open(timeout_ms, out, err, errlen);
    return single_open(out);
}

uint32_t ftc_bootstrap_rank(const ftc_bootstrap_t *b)
{
    return b != NULL ? b->rank : 0;
}

uint32_t ftc_bootstrap_size(const ftc_bootstrap_t *b)
{
    return b != NULL ? b->size : 0;
}

uint64_t ftc_bootstrap_job_token(const ftc_bootstrap_t *b)
{
    return b != NULL ? b->token : 0;
}

int ftc_bootstrap_job_key(const ftc_bootstrap_t *b, uint8_t key[16])
{
    if (key == NULL)
        return 0;
    if (b == NULL || !b->has_key) {
        memset(key, 0, 16);
        return 0;
    }
    memcpy(key, b->key, 16);
    return 1;
}

const char *ftc_bootstrap_method(const ftc_bootstrap_t *b)
{
    return b != NULL ? b->method : "none";
}

int ftc_bootstrap_single_host(const ftc_bootstrap_t *b)
{
    return b != NULL ? b->single_host : -1;
}

int ftc_bootstrap_allgather(void *arg, const void *mine, size_t len, void *all)
{
    ftc_bootstrap_t *b = arg;
    if (b == NULL || (len > 0 && (mine == NULL || all == NULL)))
        return FTC_EINVAL;
    b->err[0] = '\0';
    int rc = b->allgather(b, mine, len, all);
    b->round++;
    return rc;
}

const char *ftc_bootstrap_error(const ftc_bootstrap_t *b)
{
    return b != NULL ? b->err : "no bootstrap";
}

void ftc_bootstrap_close(ftc_bootstrap_t *b)
{
    if (b == NULL)
        return;
    /* The key leaves no copy in freed memory. A volatile store is one
     * the compiler may not drop as dead (explicit_bzero is not C11). */
    volatile uint8_t *k = b->key;
    for (size_t i = 0; i < sizeof(b->key); i++)
        k[i] = 0;
    b->close(b);
}

#ifndef FTC_HAVE_PMIX
int ftc_bootstrap_pmix_open(int timeout_ms, ftc_bootstrap_t **out, char *err,
                            size_t errlen)
{
    (void)timeout_ms;
    if (out != NULL)
        *out = NULL;
    put_err(err, errlen, "started by a PMIx launcher (PMIX_RANK is set), but "
                         "this ftcoll was built without PMIx (-Dpmix=enabled "
                         "needs libpmix-dev); use ftcoll-run instead");
    return FTC_ENOTSUP;
}
#endif
