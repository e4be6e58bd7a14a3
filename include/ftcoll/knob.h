/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tunable read from the environment, described for people: what a tool
 * such as `ftcoll-info` lists (as `ucx_info -c` and `fi_info -e` do).
 * Each backend's public header has a function returning its knobs, e.g.
 * ftc_zmq_knobs(): a const array ending with an entry whose name is NULL.
 */
#ifndef FTCOLL_KNOB_H
#define FTCOLL_KNOB_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ftc_knob {
    const char *name;           /* the environment variable */
    const char *default_value;  /* as it would be written in it */
    const char *meaning;        /* one or two sentences */
} ftc_knob_t;

#ifdef __cplusplus
}
#endif
#endif
