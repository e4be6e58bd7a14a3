/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The environment variables ftcoll-bench reads itself (beyond the
 * bootstrap's and its backend's), described for people: ftcoll-info lists
 * them with every other knob table.
 */
#ifndef FTC_BENCH_KNOBS_H
#define FTC_BENCH_KNOBS_H

#include "ftcoll/knob.h"

/* A const array ending with an entry whose name is NULL. */
const ftc_knob_t *bench_knobs(void);

#endif
