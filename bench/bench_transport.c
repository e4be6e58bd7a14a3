/* SPDX-License-Identifier: BSD-3-Clause */
/* Which backends this build of ftcoll-bench has, and what to say about
 * the ones it has not. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_transport.h"

static const bench_backend_t *const built_in[] = {
#ifdef FTCOLL_BENCH_HAVE_ZMQ
    &bench_backend_zmq,
#endif
#ifdef FTCOLL_BENCH_HAVE_UCX
    &bench_backend_ucx,
#endif
#ifdef FTCOLL_BENCH_HAVE_OFI
    &bench_backend_ofi,
#endif
    NULL
};

/* Every backend ftcoll knows, and how a build gets it. */
static const struct {
    const char *name, *package, *option;
} known[] = {
    {"zmq", "libzmq3-dev", "zmq"},
    {"ucx", "libucx-dev", "ucx"},
    {"libfabric", "libfabric-dev", "libfabric"},
};

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_backend_list(char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; built_in[i] != NULL && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "",
                              built_in[i]->name);
    if (buf[0] == '\0')
        snprintf(buf, len, "none");
}

const bench_backend_t *bench_backend_find(const char *name, char *err,
                                          size_t errlen)
{
    char have[128];
    bench_backend_list(have, sizeof(have));
    if (name == NULL || *name == '\0') {
        if (built_in[0] != NULL)
            return built_in[0];
        snprintf(err, errlen, "this build has no backend for real processes:"
                 " install libzmq3-dev, libucx-dev or libfabric-dev and "
                 "reconfigure (meson setup --reconfigure build)");
        return NULL;
    }
    for (size_t i = 0; built_in[i] != NULL; i++)
        if (strcmp(built_in[i]->name, name) == 0)
            return built_in[i];
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(known[i].name, name) == 0) {
            snprintf(err, errlen, "backend '%s' is not compiled into this "
                     "build (built in: %s): install %s and reconfigure "
                     "with meson setup --reconfigure -D%s=enabled build",
                     name, have, known[i].package, known[i].option);
            return NULL;
        }
    snprintf(err, errlen, "no backend is called '%s' (ftcoll has zmq, ucx "
             "and libfabric; this build: %s)", name, have);
    return NULL;
}
