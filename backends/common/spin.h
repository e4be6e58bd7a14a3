/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a blocking progress call waits: busy-poll a little, then sleep.
 *
 * Sleeping on a descriptor costs a wake-up (several microseconds through
 * epoll) on every hop of a collective, which made a 2-rank allreduce over
 * shared memory 15-17 us instead of ~2. Spinning for ever costs a core,
 * and when ranks outnumber CPUs it takes the CPU from the very rank being
 * waited for (n = 4 on 2 CPUs spinning was 12x slower than sleeping).
 * So, as UCX's and MPI's progress engines do, a wait spins for a budget
 * and then sleeps, and the budget adapts: a spin that found work doubles
 * it (up to max_ns), one that ran out halves it, and below max_ns / 16
 * it stops: a rank in a steady stream of messages keeps spinning, an
 * idle one sleeps at once. So does a rank on a machine whose other
 * tenants keep the peer off the CPU (every spin runs out there; a spin
 * of even 3 us per wait cost 6-7 us per 2-rank allreduce). Every
 * FTC_BK_SPIN_PROBE_EVERY-th wait without a spin probes, and a probe
 * that finds work starts the budget again at twice the time the work
 * took to come, so that a spin is long enough for the hop it waits for.
 * A probe that runs out makes the next one twice as long, up to max_ns,
 * and once a full-length probe has run out the probes come half as often
 * (down to one in FTC_BK_SPIN_PROBE_RAREST waits). Why: a hop over
 * loopback TCP takes 5-25 us; a probe of max_ns / 16 (3 us) never caught
 * one, so after one bad patch a 2-rank tree allreduce over UCX tcp slept
 * on every hop for good (60 us blocking against 9 us spinning, on an idle
 * machine). The doubling interval keeps the probes' cost on a machine
 * whose other tenants keep the peer off the CPU below 0.1 us a wait.
 *
 * Oversubscribed (more ranks of the job on this host than CPUs this
 * process may run on; sched_getaffinity), every idle pass of a spin
 * yields the CPU (sched_yield), and so does a non-blocking progress call
 * that found nothing, so that the peers being waited for run. A spin
 * that yields does not hold the CPU a peer needs, as a plain spin did
 * (the 12x above), and it costs no wake-up: with 16 ranks on 2 CPUs over
 * UCX shared memory an allreduce took 72 us yielding and 227 us sleeping
 * at once, which was this policy before (docs/latency.md, "Eleventh
 * round"). Its ceiling is FTC_BK_SPIN_YIELD_NS, not FTC_BK_SPIN_AUTO_NS:
 * a wait there lasts until every rank ahead of the awaited one had its
 * turn, and spins of 50 or 200 us ran out so often that they were slower
 * than sleeping at once. A spin configured explicitly is kept, and yields
 * too.
 */
#ifndef FTC_BK_SPIN_H
#define FTC_BK_SPIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"

/* The automatic spin's ceiling: above a shared-memory hop (~1 us) and a
 * loopback TCP one (~10-25 us), far below a keepalive timeout. */
#define FTC_BK_SPIN_AUTO_NS 50000u
/* The automatic spin's ceiling when ranks outnumber CPUs: a spin that
 * yields on every idle pass, long enough for every other rank of the
 * host to take its turn (16 ranks on 2 CPUs: one allreduce ~70 us). */
#define FTC_BK_SPIN_YIELD_NS 1000000u
/* Waits between two probing spins once the budget is 0. */
#define FTC_BK_SPIN_PROBE_EVERY 32u
/* The longest interval between probes, once full-length ones fail. */
#define FTC_BK_SPIN_PROBE_RAREST 1024u

typedef struct ftc_bk_spin {
    uint64_t max_ns;            /* the longest spin; 0: sleep at once */
    uint64_t budget_ns;         /* the spin of the waits to come */
    uint64_t probe_ns;          /* the next probe's length */
    uint32_t probe_every;       /* waits without a spin between probes */
    uint32_t unprobed;          /* waits without a spin since a probe */
    bool probing;               /* the budget handed out is a probe */
    bool oversubscribed;        /* yield on an idle non-blocking call */
} ftc_bk_spin_t;

/* CPUs this process may run on (sched_getaffinity; 1 at least). */
uint32_t ftc_bk_cpus(void);

/*
 * Ranks of the job on this host when the backend's config does not say
 * (its local_ranks, from FTCOLL_LOCAL_SIZE, which ftcoll-run sets): Open
 * MPI's, PMIx's, MPICH's or Slurm's local size, else nranks when
 * single_host is 1, else 0 (unknown).
 */
uint32_t ftc_bk_local_ranks(uint32_t nranks, int single_host);

/* spin_us: configured (-1: automatic); local_ranks: ftc_bk_local_ranks. */
void ftc_bk_spin_init(ftc_bk_spin_t *s, int spin_us, uint32_t local_ranks);

/* How long this wait spins before it sleeps (0: sleep at once). Call
 * once per wait, then ftc_bk_spin_adapt if it returned > 0. */
uint64_t ftc_bk_spin_budget(ftc_bk_spin_t *s);

/* After a wait's spin: found work within it after waited_ns, or ran
 * out (found false; waited_ns is then ignored). */
void ftc_bk_spin_adapt(ftc_bk_spin_t *s, bool found, uint64_t waited_ns);

/* A non-blocking progress call found nothing to do: yield the CPU when
 * oversubscribed. */
void ftc_bk_spin_idle(const ftc_bk_spin_t *s);

/* Pass number pass (1, 2, ...) of a wait's spin, which ends at spin_end,
 * found nothing: whether the spin is over. Oversubscribed, the pass
 * yields the CPU first and the clock is read after each one (a yield may
 * last another rank's turn); else the clock is read every clock_every
 * passes only (an idle pass is ~100 ns, a clock read 20-60). */
static inline bool ftc_bk_spin_idle_pass(const ftc_bk_spin_t *s,
                                         unsigned pass, unsigned clock_every,
                                         uint64_t spin_end)
{
    if (s->oversubscribed) {
        ftc_bk_spin_idle(s);
        return ftc_bk_now_ns() >= spin_end;
    }
    return pass % clock_every == 0 && ftc_bk_now_ns() >= spin_end;
}

#endif
