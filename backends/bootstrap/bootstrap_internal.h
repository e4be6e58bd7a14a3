/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the bootstrap methods share:
 *   bootstrap.c       selection from the environment, the common calls,
 *                     the single-process method
 *   bootstrap_file.c  ftcoll-run's file rendezvous
 *   bootstrap_pmix.c  PMIx (built with the 'pmix' option)
 */
#ifndef FTC_BOOTSTRAP_INTERNAL_H
#define FTC_BOOTSTRAP_INTERNAL_H

#include <stdint.h>

#include "ftcoll/error.h"
#include "ftcoll_bootstrap.h"

struct ftc_bootstrap {
    const char *method;
    uint32_t rank, size;
    uint64_t token;
    uint8_t key[16];            /* the job key, if has_key */
    int has_key;
    int timeout_ms;             /* < 0: no limit */
    uint32_t round;             /* allgathers done: names the next one */
    int single_host;            /* 1, 0, -1: ftc_bootstrap_single_host */
    char err[512];
    int (*allgather)(ftc_bootstrap_t *b, const void *mine, size_t len,
                     void *all);
    void (*close)(ftc_bootstrap_t *b);
    char *dir;                  /* file: the rendezvous directory */
    void *impl;                 /* pmix: its state */
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void ftc_bootstrap_seterr(ftc_bootstrap_t *b, const char *fmt, ...);

/* The rendezvous directory's files, which ftcoll-run and the conformance
 * tools read too:
 *   ag<round>.<rank>   a rank's blob for allgather number <round>: the
 *                      header below, then len bytes
 *   dead.<rank>        written by ftcoll-run when a rank has exited, so
 *                      the others stop waiting for it at once */
#define FTC_RDV_MAGIC 0x42435446u   /* "FTCB" little-endian */
typedef struct ftc_rdv_header {
    uint32_t magic, version;
    uint64_t token;
    uint64_t len;
} ftc_rdv_header_t;

/* 16 bytes from getrandom(): 0, or -1 with the message in b. */
int ftc_bootstrap_random_key(ftc_bootstrap_t *b, uint8_t key[16]);

/* The time limit from FTCOLL_BOOTSTRAP_TIMEOUT (seconds, fractions
 * allowed): milliseconds, or -1 with a message if it is malformed. */
int ftc_bootstrap_env_timeout_ms(char *err, size_t errlen);

#endif
