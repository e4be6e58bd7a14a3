/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copies of a collective's small values (an element or two, a header's
 * worth of words), inline.
 *
 * Why: the values of a stream of small collectives are a few bytes (an
 * 8-byte element, a 20-byte broadcast blob), and every operation copies
 * them several times: into the operation, into the send record, into
 * the result. A call into the C library for each cost ~20 instructions
 * of call, dispatch and size tests around a single load and store; up
 * to 32 bytes the copy below is two to four loads and as many stores,
 * with no call. Longer values go to memmove, as before.
 */
#ifndef FTC_CORE_COPY_H
#define FTC_CORE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Copy n bytes from src to dst; the two may overlap (every load is done
 * before the first store, and memmove beyond 32 bytes). */
static inline void ftc_copy_bytes(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n >= 8 && n <= 32) {
        uint64_t a, b, c, e;
        if (n <= 16) {
            /* Two words, overlapping in the middle when n < 16. */
            memcpy(&a, s, 8);
            memcpy(&b, s + n - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + n - 8, &b, 8);
            return;
        }
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + n - 16, 8);
        memcpy(&e, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + 8, &b, 8);
        memcpy(d + n - 16, &c, 8);
        memcpy(d + n - 8, &e, 8);
        return;
    }
    if (n == 4) {
        uint32_t w;
        memcpy(&w, s, 4);
        memcpy(d, &w, 4);
        return;
    }
    if (n > 0)
        memmove(d, s, n);
}

#endif
