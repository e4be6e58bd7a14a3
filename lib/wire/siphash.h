/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast short-input PRF",
 * 2012): a keyed 64-bit MAC, the message authenticator of the wire format
 * when the job has a secret key (docs/security.md).
 */
#ifndef FTC_LIB_SIPHASH_H
#define FTC_LIB_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef struct ftc_siphash {
    uint64_t v0, v1, v2, v3;
    uint64_t tail;          /* bytes not yet absorbed, little-endian */
    size_t ntail;           /* 0..7 */
    uint64_t total;         /* bytes absorbed */
} ftc_siphash_t;

void ftc_siphash_init(ftc_siphash_t *h, const uint8_t key[16]);
void ftc_siphash_update(ftc_siphash_t *h, const void *data, size_t len);
uint64_t ftc_siphash_final(ftc_siphash_t *h);

/* One shot. */
uint64_t ftc_siphash(const uint8_t key[16], const void *data, size_t len);
/* One shot over a then b (a's length a multiple of 8 for the fast path). */
uint64_t ftc_siphash2(const uint8_t key[16], const void *a, size_t alen,
                      const void *b, size_t blen);

#pragma GCC visibility pop

#endif
