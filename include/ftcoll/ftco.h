/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's parameters (Margolin & Barak, "Tree-Based
 * Fault-Tolerant Collective Operations for MPI"; docs/ftco.md): bcast,
 * reduce and allreduce along one tree, DATA acknowledged by its receiver,
 * a failed neighbour routed around (up to its parent, down to its
 * children, several levels when neighbours fail together), the root
 * replaced by its children. Select it with args.algo = FTC_ALGO_FTCO and
 * pass a ftc_ftco_params_t as ftc_coll_args_t.params; NULL means the
 * defaults below.
 */
#ifndef FTCOLL_FTCO_H
#define FTCOLL_FTCO_H

#include <stddef.h>
#include <stdint.h>

#include "ftcoll/collective.h"
#include "ftcoll/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The family's id (the wire header's algorithm byte). */
#define FTC_ALGO_FTCO ((ftc_algo_t)3)

typedef struct ftc_ftco_params {
    size_t size;        /* sizeof(ftc_ftco_params_t); a smaller (older)
                           size gets defaults for the fields it lacks */
    /* The tree every phase runs on: FTC_TREE_KNOMIAL or FTC_TREE_KARY,
     * or their multi-root forms FTC_TREE_KNOMIAL_MULTIROOT and
     * FTC_TREE_KARY_MULTIROOT (min(k, n) roots; an allreduce's roots then
     * exchange their trees' values instead of going through rank 0),
     * with 2 <= k, and k < n for groups of more than two. Default the
     * interleaved 4-nomial tree. */
    ftc_tree_t tree;
    /* 0 (default): failures are detected by the core's failure monitor
     * alone (the transport's reports, else keepalive probes after
     * ftc_config_t's suspect and probe timeouts). Otherwise also the
     * paper's per-message timeouts (Appendix A): a DATA or KEEPALIVE this
     * process sent that is not answered within
     *   ack_timeout_ns x (1 + the receiver's children) x (tree distance)
     * (a root of a multi-root allreduce also counts the other roots)
     * declares the receiver failed, for good (it is told it was
     * excluded); a child whose DATA has not come by its expected
     * arrival, ack_timeout_ns x (2 + log2 of its subtree's size), and
     * (allreduce) a parent whose value has not come by
     * ack_timeout_ns x (2 + log2 n) after this process started, are sent
     * KEEPALIVEs, one per timeout, until it comes. Pick it well above a
     * round trip (a third above it at least: the timeout to a leaf is
     * the base itself). A process that has not started the collective yet
     * answers with an ACK (Appendix B), so arrival spread costs
     * KEEPALIVEs, one per timeout while a neighbour is late, not an
     * exclusion. */
    uint64_t ack_timeout_ns;
} ftc_ftco_params_t;

/* The defaults: 4-nomial tree. */
void ftc_ftco_params_init(ftc_ftco_params_t *params);

#ifdef __cplusplus
}
#endif
#endif
