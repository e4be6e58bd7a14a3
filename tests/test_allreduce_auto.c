/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What FTC_ALLREDUCE_AUTO resolves to (docs/corrected.md §5.5, §5.7):
 * the exchange up to n = 8, the butterfly from n = 9 to 16, reduce +
 * bcast from n = 17; a named variant is kept as it is. That the
 * allreduce then runs what this says is the property checker's to assert
 * (bench/checker.c counts the exchange's and the butterfly's failure-free
 * messages in every auto run of tests/meson.build that resolves to them,
 * and the reduce + bcast's where opportunistic).
 */
#include "ftcoll/corrected.h"
#include "check.h"

static void test_auto(void)
{
    const ftc_allreduce_algo_t A = FTC_ALLREDUCE_AUTO;
    for (uint32_t n = 1; n <= 8; n++)
        CHECK_EQ(ftc_allreduce_algo_resolve(A, n), FTC_ALLREDUCE_EXCHANGE);
    for (uint32_t n = 9; n <= 16; n++)
        CHECK_EQ(ftc_allreduce_algo_resolve(A, n), FTC_ALLREDUCE_BUTTERFLY);
    for (uint32_t n = 17; n <= 64; n++)
        CHECK_EQ(ftc_allreduce_algo_resolve(A, n),
                 FTC_ALLREDUCE_REDUCE_BCAST);
    CHECK_EQ(ftc_allreduce_algo_resolve(A, 65536),
             FTC_ALLREDUCE_REDUCE_BCAST);
}

static void test_named_kept(void)
{
    const ftc_allreduce_algo_t named[] = {FTC_ALLREDUCE_REDUCE_BCAST,
                                          FTC_ALLREDUCE_EXCHANGE,
                                          FTC_ALLREDUCE_BUTTERFLY};
    for (uint32_t n = 1; n <= 9; n++)
        for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
            CHECK_EQ(ftc_allreduce_algo_resolve(named[i], n), named[i]);
}

int main(void)
{
    test_auto();
    test_named_kept();
    return check_report();
}
