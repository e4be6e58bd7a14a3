/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire/siphash.h"

/* The streaming form keeps its state in memory between calls; each step
 * runs the inline steps of siphash.h on a local copy. */
static ftc_sipstate_t state_of(const ftc_siphash_t *h)
{
    return (ftc_sipstate_t){h->v0, h->v1, h->v2, h->v3};
}

static void set_state(ftc_siphash_t *h, ftc_sipstate_t s)
{
    h->v0 = s.v0;
    h->v1 = s.v1;
    h->v2 = s.v2;
    h->v3 = s.v3;
}

static void absorb(ftc_siphash_t *h, uint64_t m)
{
    ftc_sipstate_t s = state_of(h);
    ftc_sip_block(&s, m);
    set_state(h, s);
}

void ftc_siphash_init(ftc_siphash_t *h, const uint8_t key[16])
{
    set_state(h, ftc_sip_start(key));
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
        absorb(h, ftc_sip_load64le(p));
    for (size_t i = 0; i < len; i++)
        h->tail |= (uint64_t)p[i] << (8 * h->ntail++);
}

uint64_t ftc_siphash_final(ftc_siphash_t *h)
{
    ftc_sipstate_t s = state_of(h);
    return ftc_sip_finish(&s, h->tail | (h->total & 0xff) << 56);
}

uint64_t ftc_siphash(const uint8_t key[16], const void *data, size_t len)
{
    return ftc_siphash2(key, NULL, 0, data, len);
}

/* Over a then b, with the state in registers when a is whole blocks. */
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
    ftc_sipstate_t s = ftc_sip_start(key);
    const uint8_t *p = a;
    for (size_t i = 0; i < alen; i += 8)
        ftc_sip_block(&s, ftc_sip_load64le(p + i));
    return ftc_sip_end(&s, b, blen, (uint64_t)(alen + blen));
}
