/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Little-endian integers in byte buffers, for the blobs the backends
 * publish through the bootstrap (addresses, process identities): the
 * bytes mean the same on every host whatever its own byte order.
 */
#ifndef FTC_BK_LE_BYTES_H
#define FTC_BK_LE_BYTES_H

#include <stdint.h>

/* The low n bytes of v (n <= 8) into p, least significant first. */
static inline void ftc_bk_put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* The n-byte (n <= 8) little-endian integer at p. */
static inline uint64_t ftc_bk_get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#endif
