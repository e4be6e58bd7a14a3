/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GLIBC_TUNABLES that ftcoll-run gives its ranks
 * (backends/bootstrap/rank_hugepages.h): glibc.malloc.hugetlb=1 added for
 * the libfabric backend over tcp (or no provider named) and for no
 * backend named with a tcp provider named, kept apart from
 * the user's other tunables; nothing changed for other backends and
 * providers, nor when the user's value names the tunable, whatever its
 * value; a buffer too short is an error, not a cut value.
 * Last line: "N passed, M failed".
 */
#include <string.h>

#include "rank_hugepages.h"
#include "check.h"

static void expect(const char *backend, const char *provider,
                   const char *current, int want_rc, const char *want)
{
    char out[128] = "untouched";
    int rc = ftc_run_hugepage_tunables(backend, provider, current, out,
                                       sizeof(out));
    CHECK_MSG(rc == want_rc, "backend %s provider %s current %s: rc %d, "
              "want %d", backend ? backend : "(none)",
              provider ? provider : "(none)", current ? current : "(unset)",
              rc, want_rc);
    if (rc == 1 && want != NULL)
        CHECK_STR_EQ(out, want);
}

int main(void)
{
    /* Added where rxm runs over tcp. */
    expect("libfabric", "tcp;ofi_rxm", NULL, 1, "glibc.malloc.hugetlb=1");
    expect("libfabric", NULL, NULL, 1, "glibc.malloc.hugetlb=1");
    expect("libfabric", "", "", 1, "glibc.malloc.hugetlb=1");
    expect("libfabric", "tcp", NULL, 1, "glibc.malloc.hugetlb=1");
    /* The user's other tunables stay, in order. */
    expect("libfabric", "tcp;ofi_rxm", "glibc.malloc.tcache_count=0", 1,
           "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1");
    /* A name that only starts like it is another tunable. */
    expect("libfabric", NULL, "glibc.malloc.hugetlbx=1", 1,
           "glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1");
    /* The user's own hugetlb, any value, anywhere in the list, wins. */
    expect("libfabric", NULL, "glibc.malloc.hugetlb=0", 0, NULL);
    expect("libfabric", NULL, "glibc.malloc.hugetlb=2", 0, NULL);
    expect("libfabric", NULL,
           "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=0", 0, NULL);
    /* Other backends and providers: nothing. */
    expect("zmq", NULL, NULL, 0, NULL);
    expect("ucx", "tcp;ofi_rxm", NULL, 0, NULL);
    expect(NULL, NULL, NULL, 0, NULL);
    expect("", "", NULL, 0, NULL);
    /* No backend named, but a tcp provider: a libfabric program. */
    expect(NULL, "tcp;ofi_rxm", NULL, 1, "glibc.malloc.hugetlb=1");
    expect("", "tcp;ofi_rxm", NULL, 1, "glibc.malloc.hugetlb=1");
    expect(NULL, "shm", NULL, 0, NULL);
    expect("libfabric", "shm", NULL, 0, NULL);
    expect("libfabric", "verbs;ofi_rxm", NULL, 0, NULL);

    /* Too short for the value: -1, not a cut value. */
    char small[8];
    CHECK_EQ(ftc_run_hugepage_tunables("libfabric", NULL, NULL, small,
                                       sizeof(small)), -1);
    char exact[sizeof("glibc.malloc.hugetlb=1")];
    CHECK_EQ(ftc_run_hugepage_tunables("libfabric", NULL, NULL, exact,
                                       sizeof(exact)), 1);
    CHECK_STR_EQ(exact, "glibc.malloc.hugetlb=1");
    return check_report();
}
