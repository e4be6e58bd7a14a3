/* SPDX-License-Identifier: BSD-3-Clause */
/* What GLIBC_TUNABLES a libfabric rank starts with (rank_hugepages.h). */
#include "rank_hugepages.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* True if the colon-separated list names the tunable, with any value. */
static int names_tunable(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > n && strncmp(p, name, n) == 0 && p[n] == '=')
            return 1;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return 0;
}

int ftc_run_hugepage_tunables(const char *backend, const char *provider,
                              const char *current, char *out, size_t len)
{
    bool named = provider != NULL && *provider != '\0';
    if (named && strstr(provider, "tcp") == NULL)
        return 0;
    /* No backend named: a libfabric provider named is the sign that the
     * program runs libfabric (ofi_rank, a program of the user's). */
    bool libfabric = backend != NULL && strcmp(backend, "libfabric") == 0;
    bool unnamed = backend == NULL || *backend == '\0';
    if (!libfabric && !(unnamed && named))
        return 0;
    if (current != NULL && names_tunable(current, FTC_RUN_HUGETLB_TUNABLE))
        return 0;
    int w = current != NULL && *current != '\0'
                ? snprintf(out, len, "%s:%s=1", current,
                           FTC_RUN_HUGETLB_TUNABLE)
                : snprintf(out, len, "%s=1", FTC_RUN_HUGETLB_TUNABLE);
    return w < 0 || (size_t)w >= len ? -1 : 1;
}
