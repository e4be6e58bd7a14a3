/* SPDX-License-Identifier: BSD-3-Clause */
/* Which backends this build of ftcoll-bench has, and what to say about
 * the ones it has not. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_transport.h"
#include "ftcoll_bootstrap.h"
#include "json.h"

int64_t bench_die_after_exchange = -1;
double bench_die_wait_s = 60;
static unsigned g_rounds_left = 1;

void bench_exchange_begin(unsigned rounds)
{
    g_rounds_left = rounds;
}

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

int bench_exchange_allgather(void *boot, const void *mine, size_t len,
                             void *all)
{
    int rc = ftc_bootstrap_allgather(boot, mine, len, all);
    if (g_rounds_left > 0)
        g_rounds_left--;
    if (rc != 0 || bench_die_after_exchange < 0 || g_rounds_left > 0)
        return rc;
    uint32_t victim = (uint32_t)bench_die_after_exchange;
    if (ftc_bootstrap_rank(boot) == victim) {
        /* Iteration 0 has not begun: the kill is at the exchange. */
        json_t j;
        json_to_file(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "rank");
        json_uint(&j, victim);
        json_key(&j, "event");
        json_string(&j, "kill");
        json_key(&j, "iter");
        json_uint(&j, 0);
        json_key(&j, "t_ns");
        json_uint(&j, bench_now_ns());
        json_key(&j, "at");
        json_string(&j, "exchange");
        json_object_end(&j);
        putchar('\n');
        fflush(stdout);
        raise(SIGKILL);
    }
    const char *dir = getenv("FTCOLL_RENDEZVOUS");
    if (dir == NULL || *dir == '\0') {
        fprintf(stderr, "ftcoll-bench: --die-after-exchange needs ftcoll-run "
                        "(FTCOLL_RENDEZVOUS is not set)\n");
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/dead.%u", dir, victim);
    uint64_t limit = bench_now_ns() + (uint64_t)(bench_die_wait_s * 1e9);
    while (access(path, F_OK) != 0) {
        if (bench_now_ns() > limit) {
            fprintf(stderr, "ftcoll-bench: rank %u did not die within %.0f s "
                            "of the exchange\n", victim, bench_die_wait_s);
            return -1;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
