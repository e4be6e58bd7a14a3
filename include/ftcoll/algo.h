/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithm registry, read-only: which families this library has, the
 * collectives each provides and the parameters each takes, for tools that
 * list them (ftcoll-info) and for callers that choose at run time.
 */
#ifndef FTCOLL_ALGO_H
#define FTCOLL_ALGO_H

#include <stdint.h>

#include "ftcoll/collective.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One field of a family's parameter struct. */
typedef struct ftc_algo_param_info {
    const char *name;           /* the field's name */
    const char *default_value;  /* as text */
    const char *meaning;        /* one line */
} ftc_algo_param_info_t;

/* Bit of ftc_algo_info_t.colls for collective c. */
#define FTC_COLL_BIT(c) (1u << (unsigned)(c))

typedef struct ftc_algo_info {
    ftc_algo_t id;
    const char *name;           /* what ftc_algo_parse accepts */
    uint32_t colls;             /* FTC_COLL_BIT of each collective provided */
    const char *summary;        /* one line */
    const char *params_type;    /* the C type of its parameter struct */
    const ftc_algo_param_info_t *params;
    uint32_t nparams;
} ftc_algo_info_t;

/* How many families are registered; ftc_algo_info(i) for i below it gives
 * each (NULL beyond). The table does not change while a program runs. */
uint32_t ftc_algo_count(void);
const ftc_algo_info_t *ftc_algo_info(uint32_t i);

#ifdef __cplusplus
}
#endif
#endif
