/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What ftcoll-info must list, read straight from the library's and the
 * tools' tables, for tests/test_info.py to hold its output against:
 *
 *   algo NAME NPARAMS COLLECTIVES...   one per registered family, each
 *                                      collective bit by ftc_coll_name
 *   knob OWNER NAME                    one per entry of every knob table
 *
 * OWNER is the name ftcoll-info gives the table. This program walks the
 * tables on its own, so a table the tool forgets to list fails the test.
 */
#include <stdint.h>
#include <stdio.h>

#include "ftcoll/algo.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/knob.h"

#include "bench_knobs.h"
#include "ftcoll_bootstrap.h"
#if FTC_INFO_HAVE_ZMQ
#include "ftcoll_zmq.h"
#endif
#if FTC_INFO_HAVE_UCX
#include "ftcoll_ucx.h"
#endif
#if FTC_INFO_HAVE_OFI
#include "ftcoll_ofi.h"
#endif

static void table(const char *owner, const ftc_knob_t *k)
{
    for (; k->name != NULL; k++)
        printf("knob %s %s\n", owner, k->name);
}

int main(void)
{
    for (uint32_t i = 0; i < ftc_algo_count(); i++) {
        const ftc_algo_info_t *a = ftc_algo_info(i);
        printf("algo %s %u", a->name, (unsigned)a->nparams);
        /* Every bit set, by its value: a name the library does not know
         * ("?") fails the test. */
        for (uint32_t c = 0; c < 32; c++)
            if (a->colls & (UINT32_C(1) << c))
                printf(" %s", ftc_coll_name((ftc_coll_t)c));
        printf("\n");
    }
    for (uint32_t i = 0; i < ftc_config_knob_count(); i++)
        printf("knob core %s\n", ftc_config_knob(i)->name);
#if FTC_INFO_HAVE_ZMQ
    table("zmq", ftc_zmq_knobs());
#endif
#if FTC_INFO_HAVE_UCX
    table("ucx", ftc_ucx_knobs());
#endif
#if FTC_INFO_HAVE_OFI
    table("libfabric", ftc_ofi_knobs());
#endif
    table("bootstrap", ftc_bootstrap_knobs());
    table("ftcoll-bench", bench_knobs());
    return fflush(stdout) == 0 ? 0 : 1;
}
