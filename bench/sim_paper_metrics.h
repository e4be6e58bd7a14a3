/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Margolin & Barak's own measures of a run (their section 5.2 and Table
 * 2), taken on the LogP simulator beside ftcoll-sim's (docs/simulator.md
 * "What is measured"). The paper's main loop (its Algorithm 1) runs on a
 * process until Algorithm 3 says the traversal is done, that is until the
 * process has the value and has sent it on as DATA; what it sends or
 * queues after that is outside the operation as the paper measures it:
 *
 *  - FinishTime_i: when process i had delivered and its last DATA
 *    message had left (a leaf: its delivery). FinishTime_last is the
 *    latest of a live *non-root* process, FinishTime_first the earliest
 *    of any live process; latency = FinishTime_last - StartTime_last,
 *    output spread = FinishTime_last - FinishTime_first.
 *  - work: the messages each process sent up to its own FinishTime, per
 *    process (the paper's "3": a process's ACK of the value it passed on
 *    leaves after its finish); a failed or undelivered process counts all
 *    it sent.
 *  - queue: the longest inbound queue of a live process at any time up
 *    to its own FinishTime (the msg_queue its Algorithm 2 serves). A
 *    process that has not started yet takes only KEEPALIVEs and ACKs
 *    (Appendix B, Algorithm 5): a DATA it received before its start
 *    stays in its queue until then (ftc_pm_started).
 *
 * Which messages are DATA is the family's business: is_data() says, from
 * a message's bytes. Fed from the LogP backend's trace_msg.
 */
#ifndef FTC_BENCH_SIM_PAPER_METRICS_H
#define FTC_BENCH_SIM_PAPER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll_logp.h"

typedef bool (*ftc_pm_is_data_fn)(const void *buf, size_t len);

/* Every message of a family (not the core's probes and notices) is DATA:
 * the reading for families without the paper's ACKs. */
bool ftc_pm_any_family_message(const void *buf, size_t len);

typedef struct ftc_pm ftc_pm_t;

/* State for n ranks: O(n) words, plus one record each time a rank's
 * inbound queue grows past its longest so far. FTC_EINVAL, FTC_ENOMEM. */
int ftc_pm_create(uint32_t n, ftc_pm_is_data_fn is_data, ftc_pm_t **out);
void ftc_pm_destroy(ftc_pm_t *pm);

/* A LogP trace_msg event (SEND_END, ARRIVE, RECV_START; others ignored). */
void ftc_pm_message(ftc_pm_t *pm, uint64_t t, uint32_t rank,
                    ftc_logp_trace_kind_t what, const void *buf, size_t len);

/* Rank enters the operation at time t (its arrival; 0 unless said). */
void ftc_pm_started(ftc_pm_t *pm, uint32_t rank, uint64_t t);

/* Rank delivered at time t (its first delivery). */
void ftc_pm_delivered(ftc_pm_t *pm, uint32_t rank, uint64_t t);

/* One rank as the summary sees it. */
typedef struct ftc_pm_rank {
    bool live;      /* never failed */
    bool delivered;
    bool root;      /* a root of the tree: not in FinishTime_last */
} ftc_pm_rank_t;

typedef struct ftc_pm_result {
    uint64_t finish_time_last;  /* 0 when no live non-root delivered */
    uint64_t finish_time_first;
    uint64_t messages_by_finish; /* summed over ranks */
    uint32_t max_queue;
    uint32_t max_queue_rank;
} ftc_pm_result_t;

/* FinishTime of rank (meaningful once delivered). */
uint64_t ftc_pm_finish_time(const ftc_pm_t *pm, uint32_t rank);

void ftc_pm_summarise(const ftc_pm_t *pm, const ftc_pm_rank_t *ranks,
                      ftc_pm_result_t *out);

#endif
