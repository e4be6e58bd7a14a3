/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The roots a gather names on the wire (lib/algo/ftco/gather_roots.h):
 *
 *   - a list of strictly increasing roots below m is read back as written,
 *     the empty list included (a gather that names nobody, or one from a
 *     version that sent no list);
 *   - anything else is refused (-1: the gather is dropped as malformed),
 *     so a bad list never makes a process hold a rank failed: a length
 *     that is not a whole number of ranks, a rank not below m, a rank
 *     named twice or out of order, more ranks than roots.
 *
 * Last line: "N passed, M failed".
 */
#include <string.h>

#include "algo/ftco/gather_roots.h"
#include "check.h"

static int64_t count_of(const uint32_t *roots, uint32_t k, uint32_t m)
{
    uint8_t buf[64];
    memcpy(buf, roots, sizeof(uint32_t) * k);
    return ftco_gather_roots_count(buf, sizeof(uint32_t) * k, m);
}

static void test_read_back(void)
{
    CHECK_EQ(ftco_gather_roots_count(NULL, 0, 3), 0);
    uint32_t roots[] = {0, 2, 5};
    uint8_t buf[sizeof roots];
    memcpy(buf, roots, sizeof roots);
    CHECK_EQ(ftco_gather_roots_count(buf, sizeof buf, 9), 3);
    for (uint32_t i = 0; i < 3; i++)
        CHECK_EQ(ftco_gather_roots_at(buf, i), roots[i]);
}

static void test_refused(void)
{
    uint32_t ok[] = {1, 2};
    uint8_t buf[sizeof ok];
    memcpy(buf, ok, sizeof ok);
    CHECK_EQ(ftco_gather_roots_count(buf, sizeof ok - 1, 3), -1);
    CHECK_EQ(ftco_gather_roots_count(buf, 2, 3), -1);
    uint32_t too_big[] = {0, 3};
    CHECK_EQ(count_of(too_big, 2, 3), -1);
    uint32_t twice[] = {1, 1};
    CHECK_EQ(count_of(twice, 2, 3), -1);
    uint32_t unordered[] = {2, 1};
    CHECK_EQ(count_of(unordered, 2, 3), -1);
    uint32_t too_many[] = {0, 1, 2, 3};
    CHECK_EQ(count_of(too_many, 4, 3), -1);
    CHECK_EQ(count_of(ok, 2, 3), 2);
}

int main(void)
{
    test_read_back();
    test_refused();
    return check_report();
}
