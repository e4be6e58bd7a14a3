/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback's transport with the core's watch and unwatch calls
 * counted per rank, for the tests of the failure monitor's watches
 * (test_ftco_watch.c, test_stream_watch.c). One loopback world at a
 * time: the test creates it into lb, sets nranks, clears the counts and
 * creates its contexts with counted_ops(). Included by one file of a
 * test program.
 */
#ifndef FTCOLL_TESTS_COUNTED_WATCHES_H
#define FTCOLL_TESTS_COUNTED_WATCHES_H

#include <stdint.h>
#include <stdlib.h>

#include "ftcoll_loopback.h"

enum { COUNTED_NMAX = 16 };

static ftc_lb_world_t *lb;
static uint32_t nranks;
static uint64_t watches[COUNTED_NMAX], unwatches[COUNTED_NMAX];

static uint32_t rank_of(void *tp)
{
    for (uint32_t r = 0; r < nranks; r++)
        if (ftc_lb_endpoint(lb, r) == tp)
            return r;
    abort();
}

static void count_watch(void *tp, uint32_t peer)
{
    watches[rank_of(tp)]++;
    ftc_lb_ops()->watch(tp, peer);
}

static void count_unwatch(void *tp, uint32_t peer)
{
    unwatches[rank_of(tp)]++;
    ftc_lb_ops()->unwatch(tp, peer);
}

/* The loopback's ops with watch and unwatch counted; NULL if the
 * loopback had no watch to count (then nothing could be asserted). */
static const ftc_transport_ops_t *counted_ops(void)
{
    static ftc_transport_ops_t counting;
    counting = *ftc_lb_ops();
    if (counting.watch == NULL || counting.unwatch == NULL)
        return NULL;
    counting.watch = count_watch;
    counting.unwatch = count_unwatch;
    return &counting;
}

#endif
