/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "wire/siphash.h"

static uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static uint64_t load64le(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16
           | (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32
           | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48
           | (uint64_t)p[7] << 56;
}

#define SIPROUND(h)                                                            \
    do {                                                                       \
        (h)->v0 += (h)->v1;                                                    \
        (h)->v1 = rotl((h)->v1, 13);                                           \
        (h)->v1 ^= (h)->v0;                                                    \
        (h)->v0 = rotl((h)->v0, 32);                                           \
        (h)->v2 += (h)->v3;                                                    \
        (h)->v3 = rotl((h)->v3, 16);                                           \
        (h)->v3 ^= (h)->v2;                                                    \
        (h)->v0 += (h)->v3;                                                    \
        (h)->v3 = rotl((h)->v3, 21);                                           \
        (h)->v3 ^= (h)->v0;                                                    \
        (h)->v2 += (h)->v1;                                                    \
        (h)->v1 = rotl((h)->v1, 17);                                           \
        (h)->v1 ^= (h)->v2;                                                    \
        (h)->v2 = rotl((h)->v2, 32);                                           \
    } while (0)

static void absorb(ftc_siphash_t *h, uint64_t m)
{
    h->v3 ^= m;
    SIPROUND(h);
    SIPROUND(h);
    h->v0 ^= m;
}

void ftc_siphash_init(ftc_siphash_t *h, const uint8_t key[16])
{
    uint64_t k0 = load64le(key), k1 = load64le(key + 8);
    h->v0 = k0 ^ UINT64_C(0x736f6d6570736575);
    h->v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    h->v2 = k0 ^ UINT64_C(0x6c7967656e657261);
    h->v3 = k1 ^ UINT64_C(0x7465646279746573);
    h->tail = 0;
    h->ntail = 0;
    h->total = 0;
}

void ftc_siphash_update(ftc_siphash_t *h, const void *data, size_t len)
{
    const uint8_t *p = data;
    h->total += len;
    while (h->ntail > 0 && len > 0) {
        h->tail |= (uint64_t)*p++ << (8 * h->ntail);
        len--;
        if (++h->ntail == 8) {
            absorb(h, h->tail);
            h->tail = 0;
            h->ntail = 0;
        }
    }
    for (; len >= 8; len -= 8, p += 8)
        absorb(h, load64le(p));
    for (size_t i = 0; i < len; i++)
        h->tail |= (uint64_t)p[i] << (8 * h->ntail++);
}

uint64_t ftc_siphash_final(ftc_siphash_t *h)
{
    uint64_t b = h->tail | (h->total & 0xff) << 56;
    absorb(h, b);
    h->v2 ^= 0xff;
    SIPROUND(h);
    SIPROUND(h);
    SIPROUND(h);
    SIPROUND(h);
    return h->v0 ^ h->v1 ^ h->v2 ^ h->v3;
}

uint64_t ftc_siphash(const uint8_t key[16], const void *data, size_t len)
{
    return ftc_siphash2(key, NULL, 0, data, len);
}

/* The hot path, with the state in locals: through a struct pointer the
 * compiler must assume every byte load of the message may alias it, and
 * keeps v0..v3 in memory (twice the instructions, measured). */
#define ROUND(v0, v1, v2, v3)                                                  \
    do {                                                                       \
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);              \
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                 \
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                 \
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);              \
    } while (0)

uint64_t ftc_siphash2(const uint8_t key[16], const void *a, size_t alen,
                      const void *b, size_t blen)
{
    if (alen % 8 != 0) {
        ftc_siphash_t h;
        ftc_siphash_init(&h, key);
        ftc_siphash_update(&h, a, alen);
        ftc_siphash_update(&h, b, blen);
        return ftc_siphash_final(&h);
    }
    uint64_t k0 = load64le(key), k1 = load64le(key + 8);
    uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575);
    uint64_t v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261);
    uint64_t v3 = k1 ^ UINT64_C(0x7465646279746573);
    const uint8_t *p = a;
    for (size_t i = 0; i < alen; i += 8) {
        uint64_t m = load64le(p + i);
        v3 ^= m;
        ROUND(v0, v1, v2, v3);
        ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    p = b;
    size_t full = blen & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = load64le(p + i);
        v3 ^= m;
        ROUND(v0, v1, v2, v3);
        ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)((alen + blen) & 0xff) << 56;
    for (size_t i = 0; i < (blen & 7); i++)
        last |= (uint64_t)p[full + i] << (8 * i);
    v3 ^= last;
    ROUND(v0, v1, v2, v3);
    ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    ROUND(v0, v1, v2, v3);
    ROUND(v0, v1, v2, v3);
    ROUND(v0, v1, v2, v3);
    ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
