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

/*
 * The same function in steps the compiler keeps in registers, for callers
 * whose input has a fixed shape (the wire's MAC: lib/wire/wire.c reads the
 * header as eight words, two of them masked, with no copy of it). The
 * state is a local of the caller's, passed to inline steps: through a
 * pointer to memory the compiler must assume every message load may alias
 * it, and keeps v0..v3 in memory (twice the instructions, measured).
 *
 *   s = ftc_sip_start(key);
 *   ftc_sip_block(&s, word) for each whole 8-byte block (little-endian);
 *   ftc_sip_end(&s, rest, nrest, total): the remaining bytes (whole
 *   blocks, then the tail with total's low byte) and the finalization;
 *   or ftc_sip_finish(&s, last) when the caller built the final block.
 */
typedef struct ftc_sipstate {
    uint64_t v0, v1, v2, v3;
} ftc_sipstate_t;

/* Eight bytes as a little-endian integer, whatever the host's order. Byte
 * by byte in the source; gcc and clang make it one load at -O2 on a
 * little-endian host (a memcpy there measured the same instructions). */
static inline uint64_t ftc_sip_load64le(const void *p)
{
    const uint8_t *b = p;
    return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16
           | (uint64_t)b[3] << 24 | (uint64_t)b[4] << 32
           | (uint64_t)b[5] << 40 | (uint64_t)b[6] << 48
           | (uint64_t)b[7] << 56;
}

static inline uint64_t ftc_sip_rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static inline void ftc_sip_round(ftc_sipstate_t *s)
{
    s->v0 += s->v1;
    s->v1 = ftc_sip_rotl(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = ftc_sip_rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = ftc_sip_rotl(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = ftc_sip_rotl(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = ftc_sip_rotl(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = ftc_sip_rotl(s->v2, 32);
}

static inline ftc_sipstate_t ftc_sip_start(const uint8_t key[16])
{
    uint64_t k0 = ftc_sip_load64le(key), k1 = ftc_sip_load64le(key + 8);
    return (ftc_sipstate_t){k0 ^ UINT64_C(0x736f6d6570736575),
                            k1 ^ UINT64_C(0x646f72616e646f6d),
                            k0 ^ UINT64_C(0x6c7967656e657261),
                            k1 ^ UINT64_C(0x7465646279746573)};
}

/* One 8-byte block m: SipHash-2-4's two compression rounds. */
static inline void ftc_sip_block(ftc_sipstate_t *s, uint64_t m)
{
    s->v3 ^= m;
    ftc_sip_round(s);
    ftc_sip_round(s);
    s->v0 ^= m;
}

/* The final block (the input's last length % 8 bytes, little-endian, and
 * the low byte of its length in the top byte), then the four finalization
 * rounds: the hash. */
static inline uint64_t ftc_sip_finish(ftc_sipstate_t *s, uint64_t last)
{
    ftc_sip_block(s, last);
    s->v2 ^= 0xff;
    ftc_sip_round(s);
    ftc_sip_round(s);
    ftc_sip_round(s);
    ftc_sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* The n bytes at p, then the final block and rounds; total is the length
 * of the whole input: the bytes given to ftc_sip_block so far plus n. */
static inline uint64_t ftc_sip_end(ftc_sipstate_t *s, const void *p, size_t n,
                                   uint64_t total)
{
    const uint8_t *b = p;
    size_t full = n & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8)
        ftc_sip_block(s, ftc_sip_load64le(b + i));
    uint64_t last = (total & 0xff) << 56;
    for (size_t i = 0; i < (n & 7); i++)
        last |= (uint64_t)b[full + i] << (8 * i);
    return ftc_sip_finish(s, last);
}

/* One shot. */
uint64_t ftc_siphash(const uint8_t key[16], const void *data, size_t len);
/* One shot over a then b (a's length a multiple of 8 for the fast path). */
uint64_t ftc_siphash2(const uint8_t key[16], const void *a, size_t alen,
                      const void *b, size_t blen);

#pragma GCC visibility pop

#endif
