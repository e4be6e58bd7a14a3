/* SPDX-License-Identifier: BSD-3-Clause */
/* The roots a gatherer counts failed, on the wire (gather_roots.h). */
#include <string.h>

#include "algo/ftco/gather_roots.h"

int64_t ftco_gather_roots_count(const uint8_t *payload, size_t len,
                                uint32_t m)
{
    if (len % sizeof(uint32_t) != 0 || len / sizeof(uint32_t) > m)
        return -1;
    uint32_t k = (uint32_t)(len / sizeof(uint32_t));
    for (uint32_t i = 0; i < k; i++) {
        uint32_t r = ftco_gather_roots_at(payload, i);
        if (r >= m || (i > 0 && r <= ftco_gather_roots_at(payload, i - 1)))
            return -1;
    }
    return k;
}

uint32_t ftco_gather_roots_at(const uint8_t *payload, uint32_t i)
{
    uint32_t r;
    memcpy(&r, payload + sizeof(uint32_t) * (size_t)i, sizeof(r));
    return r;
}
