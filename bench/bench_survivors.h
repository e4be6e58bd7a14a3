/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-bench, the gossip family after a kill: how far each average is
 * from the survivors' exact average. Whether an operation must give that
 * value depends on every survivor: it must, to the family's tolerance,
 * when every survivor's operation started with the victims already known
 * failed (none exchanged anything with them; docs/gossip.md, "Node
 * failure"). One rank knows only its own start, so each rank records its
 * errors from the first operation it started so, and the conformance
 * suite, which sees every rank, asserts the tolerance on the operations
 * that started so at all of them.
 */
#ifndef FTCOLL_BENCH_SURVIVORS_H
#define FTCOLL_BENCH_SURVIVORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/ftcoll.h"
#include "json.h"

#define SURVIVORS_KEPT 128 /* the last operations' errors, kept */

typedef struct survivors {
    uint64_t known_from;     /* the first operation started with every
                                victim known failed; UINT64_MAX: none */
    uint64_t last;           /* the last one recorded */
    double err[SURVIVORS_KEPT]; /* by operation index mod SURVIVORS_KEPT;
                                   NaN: no converged FTC_OK result */
    uint64_t not_ok, unconverged; /* of the operations started so: ended
                                   otherwise than FTC_OK; FTC_OK at the
                                   iteration cap (report.converged 0) */
    bool known;              /* the operation in flight started so */
    double weight_sum;       /* sum of (r + 1) over the survivors then */
    uint32_t nsurvivors;
} survivors_t;

void survivors_init(survivors_t *s);

/* Operation g starts at this rank: victims (nv) are the ranks the job
 * kills; it counts if the group knows all of them failed already. */
void survivors_start(survivors_t *s, const ftc_group_t *group,
                     const uint32_t *victims, uint32_t nv, uint64_t g);

/* Its outcome (converged: the family's report said so). Rank r's input was (r + 1)(g + 1 + i) for element i
 * (ftcoll-bench's fill_input), so the survivors' average is
 * (g + 1 + i) * weight_sum / nsurvivors. out: count doubles. */
void survivors_result(survivors_t *s, uint64_t g, int status,
                      bool converged, const void *out, size_t count);

/* "gossip_survivors": {"known_from": G or null, "from": F, "err": [...],
 * "not_ok": K, "unconverged": U}, err[k] belonging to operation F + k
 * (null: no converged FTC_OK result). */
void survivors_json(const survivors_t *s, json_t *j);

#endif
