/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The multi-root exchange's store and its canonical fold (exchange.h).
 */
#include <stdlib.h>
#include <string.h>

#include "algo/ftco/exchange.h"

int ftco_exchange_mutant = FTCO_MUTANT_NONE;

int ftco_exchange_init(ftco_exchange_t *x, uint32_t m, size_t nbytes)
{
    memset(x, 0, sizeof(*x));
    if (m == 0)
        return FTC_OK;
    x->nbytes = nbytes;
    x->have = calloc(m, sizeof(*x->have));
    x->sets = calloc(m, sizeof(*x->sets));
    x->vals = malloc((size_t)m * (nbytes > 0 ? nbytes : 1));
    if (x->have == NULL || x->sets == NULL || x->vals == NULL) {
        ftco_exchange_free(x);
        return FTC_ENOMEM;
    }
    x->m = m;
    return FTC_OK;
}

void ftco_exchange_free(ftco_exchange_t *x)
{
    if (x->sets != NULL)
        for (uint32_t j = 0; j < x->m; j++)
            ftco_rset_free(&x->sets[j]);
    free(x->have);
    free(x->sets);
    free(x->vals);
    memset(x, 0, sizeof(*x));
}

int ftco_exchange_put(ftco_exchange_t *x, uint32_t j, const ftco_rset_t *set,
                      const void *val)
{
    if (j >= x->m)
        return FTC_EINVAL;
    if (x->have[j])
        return 0;
    if (ftco_rset_copy(&x->sets[j], set) != FTC_OK)
        return FTC_ENOMEM;
    if (x->nbytes > 0)
        memcpy(x->vals + (size_t)j * x->nbytes, val, x->nbytes);
    x->have[j] = true;
    x->filled++;
    return 1;
}

int ftco_exchange_fold(const ftco_exchange_t *x, const ftc_cop_t *op,
                       void *out, ftco_rset_t *set)
{
    if (!ftco_exchange_full(x))
        return FTC_EINVAL;
    ftco_rset_t all = {0};
    for (uint32_t j = 0; j < x->m; j++) {
        /* The roots' trees are disjoint, so their sets are: anything
         * else is a bug upstream, and folding it would count twice. */
        if (!ftco_rset_disjoint(&all, &x->sets[j])) {
            ftco_rset_free(&all);
            return FTC_EINVAL;
        }
        if (ftco_rset_union(&all, &x->sets[j]) != FTC_OK) {
            ftco_rset_free(&all);
            return FTC_ENOMEM;
        }
    }
    ftco_rset_free(set);
    *set = all;
    if (x->nbytes == 0)
        return FTC_OK;
    /* Root order, not arrival order: every root folds alike. */
    memcpy(out, x->vals, x->nbytes);
    for (uint32_t j = 1; j < x->m; j++)
        (void)ftc_reduce_local(out, x->vals + (size_t)j * x->nbytes,
                               op->args.count, op->args.dtype, op->args.op,
                               op->args.user_fn, op->args.user_arg);
    return FTC_OK;
}

void ftco_exchange_clear(ftco_exchange_t *x)
{
    for (uint32_t j = 0; j < x->m; j++) {
        ftco_rset_free(&x->sets[j]);
        x->have[j] = false;
    }
    x->filled = 0;
}
