/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tree family's parameters: plain trees without fault tolerance, the
 * baseline that shows what tolerance costs (reduce up an interleaved
 * binomial tree, bcast down the chosen tree). Pass a ftc_tree_params_t as
 * ftc_coll_args_t.params; NULL means the defaults below.
 */
#ifndef FTCOLL_TREE_H
#define FTCOLL_TREE_H

#include <stddef.h>

#include "ftcoll/collective.h"
#include "ftcoll/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_tree_params {
    size_t size;            /* sizeof(ftc_tree_params_t); a smaller (older)
                               size gets defaults for the fields it lacks */
    ftc_tree_t bcast_tree;  /* tree of bcast (and allreduce's second half);
                               default the interleaved binomial */
} ftc_tree_params_t;

void ftc_tree_params_init(ftc_tree_params_t *params);

#ifdef __cplusplus
}
#endif
#endif
