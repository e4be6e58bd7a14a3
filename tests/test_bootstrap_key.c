/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bootstrap's job key (ftc_bootstrap_job_key, docs/security.md):
 *
 *   - file method: FTCOLL_JOB_KEY of 32 hex digits (either case) is the
 *     key, byte i from digits 2i and 2i+1; unset, there is none (0, key
 *     zeroed); anything else is refused by ftc_bootstrap_open with
 *     FTC_EINVAL and a message that names the variable;
 *   - single method (no launcher): a key drawn here, different per open;
 *   - no bootstrap: none.
 *
 * The file method is opened on a fresh directory with FTCOLL_RANK=0,
 * FTCOLL_SIZE=1: nothing waits. Last line: "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftcoll/error.h"
#include "ftcoll_bootstrap.h"
#include "check.h"

/* Open the file method with FTCOLL_JOB_KEY = value (NULL: unset). */
static int open_with(const char *value, ftc_bootstrap_t **b, char *err,
                     size_t errlen)
{
    if (value != NULL)
        setenv(FTC_ENV_JOB_KEY, value, 1);
    else
        unsetenv(FTC_ENV_JOB_KEY);
    err[0] = '\0';
    return ftc_bootstrap_open(b, err, errlen);
}

static void good_key(void)
{
    static const char *hex = "00112233445566778899AaBbCcDdEeFf";
    static const uint8_t want[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                     0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
                                     0xcc, 0xdd, 0xee, 0xff};
    ftc_bootstrap_t *b = NULL;
    char err[256];
    int rc = open_with(hex, &b, err, sizeof(err));
    CHECK_MSG(rc == FTC_OK, "open with a good key: %s (%s)", ftc_err_name(rc),
              err);
    if (rc != FTC_OK)
        return;
    CHECK_MSG(strcmp(ftc_bootstrap_method(b), "file") == 0, "method %s",
              ftc_bootstrap_method(b));
    uint8_t key[16];
    CHECK_MSG(ftc_bootstrap_job_key(b, key) == 1, "the key is there");
    CHECK_MSG(memcmp(key, want, 16) == 0, "the key's bytes, in order");
    ftc_bootstrap_close(b);
}

static void no_key(void)
{
    ftc_bootstrap_t *b = NULL;
    char err[256];
    int rc = open_with(NULL, &b, err, sizeof(err));
    CHECK_MSG(rc == FTC_OK, "open without a key: %s (%s)", ftc_err_name(rc),
              err);
    if (rc != FTC_OK)
        return;
    uint8_t key[16];
    memset(key, 0xff, sizeof(key));
    static const uint8_t zero[16];
    CHECK_MSG(ftc_bootstrap_job_key(b, key) == 0,
              "no key without the variable");
    CHECK_MSG(memcmp(key, zero, 16) == 0, "no key: zeroed");
    ftc_bootstrap_close(b);
}

static void bad_keys(void)
{
    static const char *bad[] = {
        "0011223344556677889900aabbccddee0",    /* 33 digits */
        "0011223344556677889900aabbccdde",      /* 31 */
        "0011223344556677889900aabbccddeg",     /* not hex */
        "0x11223344556677889900aabbccddee",     /* a prefix */
        " 011223344556677889900aabbccddee",     /* a blank */
        "00112233-4455-6677-8899-00aabbccdd",   /* a UUID's dashes */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ftc_bootstrap_t *b = (ftc_bootstrap_t *)1;
        char err[256];
        int rc = open_with(bad[i], &b, err, sizeof(err));
        CHECK_MSG(rc == FTC_EINVAL, "'%s': %s, expected FTC_EINVAL", bad[i],
                  ftc_err_name(rc));
        CHECK_MSG(b == NULL, "'%s': no bootstrap on error", bad[i]);
        CHECK_MSG(strstr(err, FTC_ENV_JOB_KEY) != NULL,
                  "'%s': the message names the variable: '%s'", bad[i], err);
        if (rc == FTC_OK)
            ftc_bootstrap_close(b);
    }
}

static void single(void)
{
    unsetenv(FTC_ENV_RANK);
    unsetenv(FTC_ENV_JOB_KEY);
    ftc_bootstrap_t *b1 = NULL, *b2 = NULL;
    char err[256] = "";
    int rc1 = ftc_bootstrap_open(&b1, err, sizeof(err));
    int rc2 = ftc_bootstrap_open(&b2, err, sizeof(err));
    CHECK_MSG(rc1 == FTC_OK && rc2 == FTC_OK, "single: %s", err);
    if (rc1 == FTC_OK && rc2 == FTC_OK) {
        CHECK_MSG(strcmp(ftc_bootstrap_method(b1), "single") == 0, "method %s",
                  ftc_bootstrap_method(b1));
        uint8_t k1[16], k2[16];
        CHECK_MSG(ftc_bootstrap_job_key(b1, k1) == 1 &&
                      ftc_bootstrap_job_key(b2, k2) == 1,
                  "single: a key of its own");
        CHECK_MSG(memcmp(k1, k2, 16) != 0, "single: drawn afresh each time");
    }
    ftc_bootstrap_close(b1);
    ftc_bootstrap_close(b2);
    uint8_t k[16];
    CHECK_MSG(ftc_bootstrap_job_key(NULL, k) == 0, "no bootstrap: no key");
}

int main(void)
{
    char dir[] = "/tmp/ftcoll-test-key-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    unsetenv("PMIX_RANK");
    unsetenv("PMIX_NAMESPACE");
    setenv(FTC_ENV_RANK, "0", 1);
    setenv(FTC_ENV_SIZE, "1", 1);
    setenv(FTC_ENV_RENDEZVOUS, dir, 1);
    good_key();
    no_key();
    bad_keys();
    single();
    /* The file method's close leaves ready.0. */
    char path[sizeof(dir) + 16];
    snprintf(path, sizeof(path), "%s/ready.0", dir);
    unlink(path);
    rmdir(dir);
    return check_report();
}
