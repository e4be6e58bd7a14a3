/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry table and what reads it: the API's family-specific checks
 * and dispatch, names, and ftcoll/algo.h for the tools. Adding a family is
 * one line in lib/algo/meson.build (docs/architecture.md, "Adding a
 * family"): nothing here names a family.
 */
#include <string.h>

#include "algo/families.h"
#include "algo/registry.h"
#include "core/pending.h"

/* FTC_FAMILIES(X) lists the families, in the order tools list them
 * (generated from the ftcoll_families list in lib/algo/meson.build: that
 * list is the one line a family adds). Each provides, from its folder,
 * const ftc_algo_entry_t ftc_algo_<name>. */

#pragma GCC visibility push(hidden)
#define FTC_DECLARE_FAMILY(name) extern const ftc_algo_entry_t ftc_algo_##name;
FTC_FAMILIES(FTC_DECLARE_FAMILY)
#pragma GCC visibility pop

#define FTC_FAMILY_ENTRY(name) &ftc_algo_##name,
static const ftc_algo_entry_t *const builtin[] = {FTC_FAMILIES(FTC_FAMILY_ENTRY)};
enum { NBUILTIN = sizeof(builtin) / sizeof(builtin[0]) };

/* Families registered by tests (ftc_algo_register). */
enum { NTEST_SLOTS = 4 };
static const ftc_algo_entry_t *test_families[NTEST_SLOTS];
static uint32_t ntest_families;

static const ftc_algo_entry_t *entry_at(uint32_t i)
{
    if (i < NBUILTIN)
        return builtin[i];
    i -= NBUILTIN;
    return i < ntest_families ? test_families[i] : NULL;
}

uint32_t ftc_algo_count(void)
{
    return NBUILTIN + ntest_families;
}

const ftc_algo_info_t *ftc_algo_info(uint32_t i)
{
    const ftc_algo_entry_t *e = entry_at(i);
    return e != NULL ? &e->info : NULL;
}

const ftc_algo_entry_t *ftc_algo_entry(ftc_algo_t id)
{
    /* The builtin ids are small and dense: try the direct slot first. */
    uint32_t guess = (uint32_t)id - 1;
    if (guess < NBUILTIN && builtin[guess]->info.id == id)
        return builtin[guess];
    for (uint32_t i = 0; i < NBUILTIN; i++)
        if (builtin[i]->info.id == id)
            return builtin[i];
    for (uint32_t i = 0; i < ntest_families; i++)
        if (test_families[i]->info.id == id)
            return test_families[i];
    return NULL;
}

void ftc_algo_answer_early(ftc_context_t *ctx, const ftc_wire_header_t *hdr)
{
    const ftc_algo_entry_t *e = ftc_algo_entry((ftc_algo_t)hdr->algo);
    if (e != NULL && e->answer_early != NULL)
        e->answer_early(ctx, hdr);
}

bool ftc_algo_answered_early_only(const ftc_wire_header_t *hdr)
{
    const ftc_algo_entry_t *e = ftc_algo_entry((ftc_algo_t)hdr->algo);
    return e != NULL && e->answer_early != NULL
           && e->answered_early_only != NULL && e->answered_early_only(hdr);
}

const char *ftc_algo_name(ftc_algo_t algo)
{
    const ftc_algo_entry_t *e = ftc_algo_entry(algo);
    return e != NULL ? e->info.name : "?";
}

int ftc_algo_parse(const char *name, ftc_algo_t *out)
{
    if (name == NULL || out == NULL)
        return FTC_EINVAL;
    for (uint32_t i = 0; i < ftc_algo_count(); i++)
        if (strcmp(entry_at(i)->info.name, name) == 0) {
            *out = entry_at(i)->info.id;
            return FTC_OK;
        }
    return FTC_EINVAL;
}

int ftc_algo_register(const ftc_algo_entry_t *e)
{
    if (e == NULL || e->info.name == NULL || e->params_default == NULL
        || e->params_size < sizeof(size_t)
        || e->params_size > FTC_ALGO_PARAMS_MAX || e->info.id == 0
        || (uint32_t)e->info.id > UINT8_MAX) /* the header's algo byte */
        return FTC_EINVAL;
    ftc_algo_t dummy;
    if (ftc_algo_entry(e->info.id) != NULL
        || ftc_algo_parse(e->info.name, &dummy) == FTC_OK)
        return FTC_EINVAL;
    if (ntest_families == NTEST_SLOTS)
        return FTC_ENOMEM;
    test_families[ntest_families++] = e;
    return FTC_OK;
}

/* The complete parameter struct for params (NULL: the defaults). A caller
 * compiled against an older, smaller struct gets defaults for the fields
 * it lacks; a size beyond the family's is a newer caller's (FTC_EINVAL).
 * Only that case copies: the common ones cost a comparison. */
static int params_resolve(const ftc_algo_entry_t *e, const void *params,
                          ftc_algo_call_t *call)
{
    if (params == NULL) {
        call->params = e->params_default;
        return FTC_OK;
    }
    size_t size;
    memcpy(&size, params, sizeof(size));
    if (size == e->params_size) {
        call->params = params;
        return FTC_OK;
    }
    if (size < sizeof(size_t) || size > e->params_size)
        return FTC_EINVAL;
    memcpy(&call->buf, e->params_default, e->params_size);
    memcpy(&call->buf, params, size);
    size = e->params_size;
    memcpy(&call->buf, &size, sizeof(size));
    call->params = &call->buf;
    return FTC_OK;
}

int ftc_algo_prepare(const ftc_group_t *g, const ftc_coll_args_t *args,
                     ftc_coll_t coll, ftc_algo_call_t *call)
{
    const ftc_algo_entry_t *e = ftc_algo_entry(args->algo);
    if (e == NULL)
        return FTC_EINVAL;
    if ((unsigned)coll > FTC_COLL_ALLREDUCE || e->create[coll] == NULL)
        return FTC_ENOTSUP;
    call->entry = e;
    int rc = params_resolve(e, args->params, call);
    if (rc != FTC_OK)
        return rc;
    return e->check != NULL ? e->check(g, args, coll, call->params) : FTC_OK;
}

int ftc_algo_start(ftc_group_t *g, const ftc_coll_args_t *args,
                   ftc_coll_t coll, ftc_cop_t **out)
{
    ftc_algo_call_t call;
    int rc = ftc_algo_prepare(g, args, coll, &call);
    if (rc != FTC_OK)
        return rc;
    return ftc_algo_create(&call, g, args, coll, out);
}
