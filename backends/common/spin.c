/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE     /* sched_getaffinity, CPU_COUNT */
#include "spin.h"

#include <sched.h>
#include <stdlib.h>

uint32_t ftc_bk_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? (uint32_t)n : 1;
}

/* A positive count from the environment, or 0. */
static uint32_t env_count(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return 0;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (*end != '\0' || x == 0 || x > UINT32_MAX)
        return 0;
    return (uint32_t)x;
}

uint32_t ftc_bk_local_ranks(uint32_t nranks, int single_host)
{
    /* The launchers' words for "ranks on this node" (ours,
     * FTCOLL_LOCAL_SIZE, the backends read into their config). */
    static const char *const names[] = {
        "OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE",
        "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        uint32_t n = env_count(names[i]);
        if (n > 0)
            return n;
    }
    return single_host == 1 ? nranks : 0;
}

void ftc_bk_spin_init(ftc_bk_spin_t *s, int spin_us, uint32_t local_ranks)
{
    s->oversubscribed = local_ranks > ftc_bk_cpus();
    if (spin_us < 0)
        s->max_ns = s->oversubscribed ? FTC_BK_SPIN_YIELD_NS
                                      : FTC_BK_SPIN_AUTO_NS;
    else
        s->max_ns = (uint64_t)spin_us * 1000u;
    s->budget_ns = s->max_ns;
    s->probe_ns = s->max_ns / 16;
    s->probe_every = FTC_BK_SPIN_PROBE_EVERY;
    s->unprobed = 0;
    s->probing = false;
}

uint64_t ftc_bk_spin_budget(ftc_bk_spin_t *s)
{
    s->probing = false;
    if (s->budget_ns > 0 || s->max_ns == 0)
        return s->budget_ns;
    if (++s->unprobed < s->probe_every)
        return 0;
    s->unprobed = 0;
    s->probing = true;
    return s->probe_ns;
}

void ftc_bk_spin_adapt(ftc_bk_spin_t *s, bool found, uint64_t waited_ns)
{
    if (s->max_ns == 0)
        return;
    uint64_t floor = s->max_ns / 16;
    if (found) {
        /* Long enough for what this wait needed, twice over. */
        uint64_t b = s->budget_ns * 2;
        if (b < floor)
            b = floor;
        if (waited_ns < s->max_ns / 2 && b < waited_ns * 2)
            b = waited_ns * 2;
        else if (waited_ns >= s->max_ns / 2)
            b = s->max_ns;
        s->budget_ns = b > s->max_ns ? s->max_ns : b;
        s->probe_ns = floor;
        s->probe_every = FTC_BK_SPIN_PROBE_EVERY;
    } else if (s->probing) {
        if (s->probe_ns < s->max_ns)
            s->probe_ns = s->probe_ns * 2 > s->max_ns ? s->max_ns
                                                      : s->probe_ns * 2;
        else if (s->probe_every < FTC_BK_SPIN_PROBE_RAREST)
            s->probe_every *= 2;
    } else {
        s->budget_ns /= 2;
        if (s->budget_ns < floor)
            s->budget_ns = 0;
    }
    s->probing = false;
}

void ftc_bk_spin_idle(const ftc_bk_spin_t *s)
{
    if (s->oversubscribed)
        sched_yield();
}
