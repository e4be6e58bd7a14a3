/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithm registry: one entry per family, read by the API (checks
 * and dispatch), ftc_algo_parse/ftc_algo_name and the tools (ftcoll/algo.h).
 * A family provides its entry from its own folder (algo/<family>/family.c)
 * and takes one line in lib/algo/meson.build; docs/architecture.md,
 * "Adding a family", has the steps.
 */
#ifndef FTC_ALGO_REGISTRY_H
#define FTC_ALGO_REGISTRY_H

#include "ftcoll/algo.h"
#include "core/op.h"

#pragma GCC visibility push(hidden)

/* Start collective coll of this family. params is the family's
 * parameter struct, complete (its size is the family's params_size,
 * defaults filled in) and valid during the call only: a family that needs
 * it later copies it into its operation. args->params is the caller's,
 * not to be read. */
typedef int (*ftc_algo_create_fn)(ftc_group_t *g, const ftc_coll_args_t *args,
                                  const void *params, ftc_coll_t coll,
                                  ftc_cop_t **out);

/* Largest parameter struct a family may have. */
#define FTC_ALGO_PARAMS_MAX 256

typedef struct ftc_algo_entry {
    ftc_algo_info_t info;       /* what ftcoll/algo.h shows */
    size_t params_size;         /* sizeof its parameter struct */
    /* Its defaults, size included (what params == NULL means). */
    const void *params_default;
    /* Check what the complete params (and args) mean to the family for
     * coll; the API has checked the generic fields. FTC_OK or an error,
     * FTC_EINVAL for a bad parameter. */
    int (*check)(const ftc_group_t *g, const ftc_coll_args_t *args,
                 ftc_coll_t coll, const void *params);
    /* check's verdict depends on nothing but coll, params, the group's
     * size and rank and args' fields other than the buffers and the
     * callback: a call like the group's last one that passed needs no
     * new check (api/call_memo.h). false: checked on every call. */
    bool check_pure;
    /* By ftc_coll_t; NULL where the family does not provide it (the
     * collective is refused with FTC_ENOTSUP). */
    ftc_algo_create_fn create[FTC_COLL_ALLREDUCE + 1];
    /* Optional: a message of the family arrived for an operation (or a
     * group) not started here, and is kept for it (core/pending.h); answer it
     * now if the family's protocol wants an answer before the start. */
    void (*answer_early)(ftc_context_t *ctx, const ftc_wire_header_t *hdr);
    /* Optional: whether answer_early settles the message in full, so
     * that it is answered and not kept (a liveness question asked again
     * and again of a process that starts late would otherwise pile up
     * until its start: ftco's KEEPALIVEs, docs/ftco.md). */
    bool (*answered_early_only)(const ftc_wire_header_t *hdr);
} ftc_algo_entry_t;

/* Storage for a complete parameter struct. */
typedef union ftc_algo_params_buf {
    max_align_t align;
    unsigned char bytes[FTC_ALGO_PARAMS_MAX];
} ftc_algo_params_buf_t;

/* The family with this id, or NULL. */
const ftc_algo_entry_t *ftc_algo_entry(ftc_algo_t id);

/* What ftc_algo_prepare found: the family and its complete parameters
 * (the caller's struct itself, the defaults, or buf). */
typedef struct ftc_algo_call {
    const ftc_algo_entry_t *entry;
    const void *params;
    ftc_algo_params_buf_t buf;
} ftc_algo_call_t;

/* Find args' family, complete its parameters and run its check for
 * coll: FTC_OK, or the error the call is refused with. */
int ftc_algo_prepare(const ftc_group_t *g, const ftc_coll_args_t *args,
                     ftc_coll_t coll, ftc_algo_call_t *call);
/* Start the prepared call (no checked-mode pairing). */
static inline int ftc_algo_create(ftc_algo_call_t *call, ftc_group_t *g,
                                  const ftc_coll_args_t *args, ftc_coll_t coll,
                                  ftc_cop_t **out)
{
    return call->entry->create[coll](g, args, call->params, coll, out);
}
/* Prepare and start (checked mode's second operation). */
int ftc_algo_start(ftc_group_t *g, const ftc_coll_args_t *args,
                   ftc_coll_t coll, ftc_cop_t **out);

/*
 * For tests only: add a family at run time (tests/test_registry.c shows
 * that a family needs nothing but its entry). A library family is a line
 * in lib/algo/meson.build instead. FTC_EINVAL for a bad entry or a taken
 * id or name, FTC_ENOMEM when the few test slots are full.
 */
int ftc_algo_register(const ftc_algo_entry_t *entry);

#pragma GCC visibility pop

#endif
