/* SPDX-License-Identifier: BSD-3-Clause */
/* ftcoll-bench's own environment variables (bench_knobs.h). They predate
 * the core's FTCOLL_*_TIMEOUT_NS knobs and are kept for the scripts that
 * set them (the conformance suite, the measuring scripts). */
#include <stddef.h>

#include "bench_knobs.h"

static const ftc_knob_t knobs[] = {
    {"FTCOLL_BACKEND", "unset (the first built of zmq, ucx, libfabric)",
     "The backend ftcoll-bench runs over: zmq, ucx or libfabric "
     "(ftcoll-run --backend sets it)."},
    {"FTCOLL_SUSPECT_MS", "100",
     "ftcoll-bench's core suspect timeout in ms (ftc_config_t "
     "suspect_timeout_ns), > 0."},
    {"FTCOLL_PROBE_MS", "200",
     "ftcoll-bench's core probe timeout in ms (ftc_config_t "
     "probe_timeout_ns), > 0."},
    {"FTCOLL_PROBE_BACKOFF", "3",
     "ftcoll-bench's probe back-off (ftc_config_t probe_backoff): the wait "
     "for an unanswered probe is extended this many times, each by twice "
     "the last, before the peer is declared failed; 0 .. 16, 0: none."},
    {"FTCOLL_BENCH_OP_TIMEOUT", "60",
     "Seconds an operation may take before ftcoll-bench declares a hang "
     "(exit status 3)."},
    {NULL, NULL, NULL},
};

const ftc_knob_t *bench_knobs(void)
{
    return knobs;
}
