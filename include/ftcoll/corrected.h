/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected family's parameters (Kuettler & Haertig; docs/corrected.md):
 * reduce with up-correction over an I(f) tree, bcast as a tree phase plus a
 * ring correction, allreduce as both with root retry. Pass a
 * ftc_corrected_params_t as ftc_coll_args_t.params; NULL means the
 * defaults below.
 */
#ifndef FTCOLL_CORRECTED_H
#define FTCOLL_CORRECTED_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/collective.h"
#include "ftcoll/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Failure information carried up the reduce tree (the reduce paper, 4.4;
 * docs/semantics.md). */
typedef enum ftc_fault_info {
    FTC_FAULT_LIST = 1,  /* the ranks whose input a value misses:
                            O(failures) bytes; feeds the known-failed set */
    FTC_FAULT_COUNT = 2, /* their number, plus a subtree-failed bit */
    FTC_FAULT_BIT = 3    /* only the subtree-failed bit */
} ftc_fault_info_t;

/* Correction phase of the corrected broadcast (docs/corrected.md §2). */
typedef enum ftc_correction {
    FTC_CORRECTION_OPPORTUNISTIC = 1, /* send to the next d ranks on the ring */
    FTC_CORRECTION_CHECKED = 2        /* both directions until heard from f+1 */
} ftc_correction_t;

/* How the corrected allreduce reaches its value (docs/corrected.md §5). */
typedef enum ftc_allreduce_algo {
    FTC_ALLREDUCE_AUTO = 0,         /* exchange for n <= 8, butterfly
                                       for 9 <= n <= 16, else
                                       reduce_bcast; over a transport
                                       with costly messages (TCP) the
                                       butterfly from n = 4 (measured:
                                       docs/corrected.md §5.7) */
    FTC_ALLREDUCE_REDUCE_BCAST = 1, /* reduce to a root, broadcast back
                                       (the paper's; two trees deep) */
    FTC_ALLREDUCE_EXCHANGE = 2,     /* every member sends its input to
                                       every other, n-1 messages each, one
                                       hop; on a failure, falls back to
                                       reduce_bcast rounds that keep the
                                       exchange's value if any survivor
                                       delivered it */
    FTC_ALLREDUCE_BUTTERFLY = 3     /* recursive doubling in place of the
                                       exchange's all-to-all: log2 n hops,
                                       n log2 n messages for n a power of
                                       two; the same fallback */
} ftc_allreduce_algo_t;

typedef struct ftc_corrected_params {
    size_t size;                  /* sizeof(ftc_corrected_params_t); a
                                     smaller (older) size gets defaults
                                     for the fields it lacks */
    ftc_fault_info_t fault_info;  /* reduce and allreduce; default list */
    ftc_correction_t correction;  /* bcast and allreduce; default checked */
    uint32_t distance;            /* opportunistic correction distance d,
                                     >= 1 when n > 1; default 2 */
    ftc_tree_t bcast_tree;        /* tree of the bcast phase; default the
                                     interleaved binomial */
    ftc_allreduce_algo_t allreduce; /* allreduce only; default auto */
} ftc_corrected_params_t;

/* The defaults: list, checked, d = 2, interleaved binomial bcast tree,
 * allreduce auto. */
void ftc_corrected_params_init(ftc_corrected_params_t *params);

int ftc_fault_info_parse(const char *name, ftc_fault_info_t *out);
int ftc_correction_parse(const char *name, ftc_correction_t *out);
const char *ftc_fault_info_name(ftc_fault_info_t info);
const char *ftc_correction_name(ftc_correction_t correction);
/* "auto", "reduce_bcast", "exchange", "butterfly". */
int ftc_allreduce_algo_parse(const char *name, ftc_allreduce_algo_t *out);
const char *ftc_allreduce_algo_name(ftc_allreduce_algo_t algo);
/* What auto means for a group of n over a transport with no cost hints:
 * exchange up to n = 8, butterfly up to n = 16, else reduce_bcast. Any
 * other value is returned as it is. */
ftc_allreduce_algo_t ftc_allreduce_algo_resolve(ftc_allreduce_algo_t algo,
                                                uint32_t n);
/* What algo means for group, over its context's transport (its
 * cost_hints, transport.h): with FTC_TRANSPORT_COSTLY_MESSAGES auto is the
 * exchange up to n = 3, the butterfly up to n = 16, else reduce_bcast;
 * without, as ftc_allreduce_algo_resolve. What ftc_init_allreduce runs
 * on group. A NULL group returns algo as it is. */
ftc_allreduce_algo_t ftc_group_allreduce_algo(const ftc_group_t *group,
                                              ftc_allreduce_algo_t algo);

#ifdef __cplusplus
}
#endif
#endif
