/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exactly-once aggregation by contributor sets (partials.h says why).
 */
#include <string.h>

#include "algo/ftco/partials.h"

int ftco_partials_init(ftco_partials_t *p, ftc_cop_t *op, uint32_t n,
                       size_t nbytes, uint32_t cap)
{
    memset(p, 0, sizeof(*p));
    p->setb = (n + 7) / 8;
    p->nbytes = nbytes;
    p->cap = cap > 0 ? cap : 1;
    p->sets = ftc_cop_alloc(op, (size_t)p->cap * p->setb);
    p->vals = ftc_cop_alloc(op, (size_t)p->cap * (nbytes > 0 ? nbytes : 1));
    p->cover = ftc_cop_zalloc(op, p->setb);
    return p->sets != NULL && p->vals != NULL && p->cover != NULL ? FTC_OK
                                                                  : FTC_ENOMEM;
}

static bool subset(const uint8_t *a, const uint8_t *b, uint32_t setb)
{
    for (uint32_t i = 0; i < setb; i++)
        if ((a[i] & ~b[i]) != 0)
            return false;
    return true;
}

static bool disjoint(const uint8_t *a, const uint8_t *b, uint32_t setb)
{
    for (uint32_t i = 0; i < setb; i++)
        if ((a[i] & b[i]) != 0)
            return false;
    return true;
}

static int grow(ftco_partials_t *p, ftc_cop_t *op)
{
    /* Operation memory is freed with the operation only: the old arrays
     * stay until then, which is fine for the few growths a run sees. */
    uint32_t cap = p->cap * 2;
    size_t vb = p->nbytes > 0 ? p->nbytes : 1;
    uint8_t *sets = ftc_cop_alloc(op, (size_t)cap * p->setb);
    uint8_t *vals = ftc_cop_alloc(op, (size_t)cap * vb);
    if (sets == NULL || vals == NULL)
        return FTC_ENOMEM;
    memcpy(sets, p->sets, (size_t)p->count * p->setb);
    memcpy(vals, p->vals, (size_t)p->count * vb);
    p->sets = sets;
    p->vals = vals;
    p->cap = cap;
    return FTC_OK;
}

int ftco_partials_merge(ftco_partials_t *p, ftc_cop_t *op, const uint8_t *set,
                        const void *val)
{
    uint32_t setb = p->setb;
    size_t vb = p->nbytes > 0 ? p->nbytes : 1;
    if (subset(set, p->cover, setb))
        return 0;
    for (uint32_t i = 0; i < p->count; i++) {
        const uint8_t *h = p->sets + (size_t)i * setb;
        if (!disjoint(h, set, setb) && !subset(h, set, setb)) {
            p->conflicts++;
            return 0;
        }
    }
    /* Drop the held partials the new value contains. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        const uint8_t *h = p->sets + (size_t)i * setb;
        if (subset(h, set, setb))
            continue;
        if (kept != i) {
            memmove(p->sets + (size_t)kept * setb, h, setb);
            memmove(p->vals + kept * vb, p->vals + i * vb, vb);
        }
        kept++;
    }
    p->count = kept;
    if (p->count == p->cap && grow(p, op) != FTC_OK)
        return FTC_ENOMEM;
    memcpy(p->sets + (size_t)p->count * setb, set, setb);
    if (p->nbytes > 0)
        memcpy(p->vals + p->count * vb, val, p->nbytes);
    p->count++;
    for (uint32_t i = 0; i < setb; i++)
        p->cover[i] |= set[i];
    return 1;
}

void ftco_partials_fold(const ftco_partials_t *p, const ftc_cop_t *op,
                        void *out)
{
    if (p->nbytes == 0 || p->count == 0)
        return;
    memcpy(out, p->vals, p->nbytes);
    for (uint32_t i = 1; i < p->count; i++)
        (void)ftc_reduce_local(out, p->vals + i * p->nbytes, op->args.count,
                               op->args.dtype, op->args.op, op->args.user_fn,
                               op->args.user_arg);
}
