/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The corrected family (Kuettler & Haertig; docs/corrected.md): its
 * constructors and how its operations keep their parameters.
 */
#ifndef FTC_ALGO_CORRECTED_H
#define FTC_ALGO_CORRECTED_H

#include "ftcoll/corrected.h"
#include "algo/corrected/kinds.h"
#include "core/op.h"

#pragma GCC visibility push(hidden)

/* The family's registry entry (algo/corrected/family.c). */
struct ftc_algo_entry;
extern const struct ftc_algo_entry ftc_algo_corrected;

/* params is complete (the registry filled the defaults). */
int ftc_reduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                         const ftc_corrected_params_t *params,
                         ftc_cop_t **out);
int ftc_bcast_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                        const ftc_corrected_params_t *params, ftc_cop_t **out);
int ftc_allreduce_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                            const ftc_corrected_params_t *params,
                            ftc_cop_t **out);

/* The parameters of a corrected operation (its own copy). */
static inline const ftc_corrected_params_t *
ftc_corrected_params(const ftc_cop_t *op)
{
    return (const ftc_corrected_params_t *)op->args.params;
}

/* ftc_cop_setup for a corrected operation: keeps the parameters in keep
 * (a field of the operation) and signs them. */
void ftc_corrected_op_setup(ftc_group_t *g, const ftc_coll_args_t *args,
                            const ftc_corrected_params_t *params,
                            ftc_coll_t coll, ftc_cop_t *op,
                            const ftc_cop_vtable_t *vt,
                            ftc_corrected_params_t *keep);

/* What the members must agree on besides the generic arguments (params
 * resolved: an allreduce's auto never reaches here): the variant the
 * operation's signature digests. */
uint32_t ftc_corrected_variant(const ftc_corrected_params_t *params,
                               ftc_coll_t coll);

/* Whether an operation that kept parameters `kept` read what one given
 * `given` would, with given's allreduce resolved to `allreduce`: a
 * steady stream's template (ftc_cop_template_of) is taken only then.
 * Every field an operation reads, the bcast tree whole (the signature
 * digests only its kind and k, and an optimal tree's LogP parameters
 * shape it too); not size, which the registry's copy settled. Inline:
 * every call of a stream asks. */
static inline bool
ftc_corrected_params_alike(const ftc_corrected_params_t *kept,
                           const ftc_corrected_params_t *given,
                           ftc_allreduce_algo_t allreduce)
{
    return kept->fault_info == given->fault_info
           && kept->correction == given->correction
           && kept->distance == given->distance
           && kept->allreduce == allreduce
           && kept->bcast_tree.kind == given->bcast_tree.kind
           && kept->bcast_tree.k == given->bcast_tree.k
           && kept->bcast_tree.L == given->bcast_tree.L
           && kept->bcast_tree.o == given->bcast_tree.o
           && kept->bcast_tree.g == given->bcast_tree.g;
}

#pragma GCC visibility pop

#endif
