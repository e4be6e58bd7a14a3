/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Phase marks for callgrind: `bench_core --steady ... --phase K` collects
 * only the instructions of phase K of every operation of the measured
 * loop (bench/callgrind_phases.sh runs the four), so that the work between
 * a peer's message and the rank's next send, which a steady stream's
 * latency pays in full, is told from the work that overlaps the hop.
 * Instructions per message (callgrind_core.sh) count both alike.
 *
 *   1 receive     from a message's arrival (ftc_transport_recv) to the
 *                 deliver callback, or to the return if nothing delivers
 *   2 return      from the deliver callback to ftc_transport_recv's
 *                 return: what settling does after a delivery
 *   3 start       from ftc_init_* to the operation's first send
 *   4 after send  from the first send to ftc_init_*'s return
 *
 * The marks use callgrind's client request (valgrind/callgrind.h, from
 * the valgrind package); a build without the header refuses --phase. A
 * mark costs a few instructions of the phase it opens or closes.
 */
#ifndef FTC_BENCH_PHASE_MARKS_H
#define FTC_BENCH_PHASE_MARKS_H

#include <stdbool.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_PHASE_MARKS 1
#endif
#endif
#ifndef BENCH_PHASE_MARKS
#define BENCH_PHASE_MARKS 0
#define CALLGRIND_TOGGLE_COLLECT ((void)0)
#endif

enum {
    PHASE_NONE = 0,
    PHASE_RECEIVE = 1,
    PHASE_RETURN = 2,
    PHASE_START = 3,
    PHASE_AFTER_SEND = 4,
    PHASE_MAX = 4,
};

typedef struct phase_marks {
    int want;   /* the phase to collect, PHASE_NONE for none */
    int at;     /* the phase the loop is in, PHASE_NONE between calls */
} phase_marks_t;

/* The loop enters phase k (PHASE_NONE: back between calls); callgrind
 * collects while it is in the wanted one. With nothing wanted, a load
 * and a compare: callgrind_core.sh's program total grew by 20
 * instructions per message with the marks, the core's count not at all. */
static inline void phase_set(phase_marks_t *m, int k)
{
    if (m->want == PHASE_NONE)
        return;
    bool was = m->at != PHASE_NONE && m->at == m->want;
    bool will = k != PHASE_NONE && k == m->want;
    m->at = k;
    if (was != will)
        CALLGRIND_TOGGLE_COLLECT;
}

#endif
