/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Margolin & Barak's measures of a run (sim_paper_metrics.h).
 */
#include <stdlib.h>

#include "ftcoll/error.h"
#include "sim_paper_metrics.h"
#include "wire/wire.h"

/* Per rank, kept while the run goes, since a FinishTime is known only
 * at the end (a DATA may leave after the delivery, or before it). */
typedef struct pm_rank {
    uint64_t last_data;    /* departure of its last DATA; 0: none */
    uint64_t delivered;    /* its delivery, if has_delivered */
    uint32_t sent;         /* departed so far */
    uint32_t sent_at_data; /* ... when its last DATA departed, that one in */
    uint32_t sent_at_deliver;
    uint32_t queue, longest;
    uint64_t start;        /* when it enters the operation */
    uint32_t retained;     /* DATA it took before its start, still in its
                              queue as the paper counts it */
    bool has_delivered;
} pm_rank_t;

/* The moment a rank's queue first reached a new length: the longest
 * queue before a FinishTime is the last such record before it. */
typedef struct pm_growth {
    uint64_t t;
    uint32_t rank, length;
} pm_growth_t;

struct ftc_pm {
    uint32_t n;
    ftc_pm_is_data_fn is_data;
    pm_rank_t *rank;
    pm_growth_t *growth;
    size_t ngrowth, capgrowth;
    bool out_of_memory;
};

bool ftc_pm_any_family_message(const void *buf, size_t len)
{
    return len >= FTC_WIRE_HEADER_SIZE
           && ((const uint8_t *)buf)[5] < FTC_MSG_CORE_MIN;
}

int ftc_pm_create(uint32_t n, ftc_pm_is_data_fn is_data, ftc_pm_t **out)
{
    if (out == NULL)
        return FTC_EINVAL;
    *out = NULL;
    if (n == 0 || is_data == NULL)
        return FTC_EINVAL;
    ftc_pm_t *pm = calloc(1, sizeof(*pm));
    if (pm == NULL)
        return FTC_ENOMEM;
    pm->rank = calloc(n, sizeof(pm_rank_t));
    if (pm->rank == NULL) {
        free(pm);
        return FTC_ENOMEM;
    }
    pm->n = n;
    pm->is_data = is_data;
    *out = pm;
    return FTC_OK;
}

void ftc_pm_destroy(ftc_pm_t *pm)
{
    if (pm == NULL)
        return;
    free(pm->growth);
    free(pm->rank);
    free(pm);
}

static void grew(ftc_pm_t *pm, uint64_t t, uint32_t rank, uint32_t length)
{
    if (pm->ngrowth == pm->capgrowth) {
        size_t cap = pm->capgrowth ? pm->capgrowth * 2 : 4096;
        pm_growth_t *g = realloc(pm->growth, sizeof(*g) * cap);
        if (g == NULL) {
            pm->out_of_memory = true; /* the queue column reads 0 then */
            return;
        }
        pm->growth = g;
        pm->capgrowth = cap;
    }
    pm->growth[pm->ngrowth++] = (pm_growth_t){t, rank, length};
}

void ftc_pm_message(ftc_pm_t *pm, uint64_t t, uint32_t rank,
                    ftc_logp_trace_kind_t what, const void *buf, size_t len)
{
    if (pm == NULL || rank >= pm->n)
        return;
    pm_rank_t *r = &pm->rank[rank];
    if (r->retained > 0 && t >= r->start) {
        /* Started: the paper's process reads its retained DATA now. */
        r->queue -= r->retained;
        r->retained = 0;
    }
    switch (what) {
    case FTC_LOGP_SEND_END:
        r->sent++;
        if (pm->is_data(buf, len)) {
            r->last_data = t;
            r->sent_at_data = r->sent;
        }
        break;
    case FTC_LOGP_ARRIVE:
        if (++r->queue > r->longest) {
            r->longest = r->queue;
            grew(pm, t, rank, r->queue);
        }
        break;
    case FTC_LOGP_RECV_START:
        /* Before its start a process of the paper answers KEEPALIVEs and
         * ACKs but leaves DATA in its queue (Appendix B, Algorithm 5);
         * ours takes the DATA early and keeps it for the operation, so
         * the paper's queue still holds it. */
        if (t < r->start && pm->is_data(buf, len))
            r->retained++;
        else if (r->queue > 0)
            r->queue--;
        break;
    default:
        break;
    }
}

void ftc_pm_started(ftc_pm_t *pm, uint32_t rank, uint64_t t)
{
    if (pm != NULL && rank < pm->n)
        pm->rank[rank].start = t;
}

void ftc_pm_delivered(ftc_pm_t *pm, uint32_t rank, uint64_t t)
{
    if (pm == NULL || rank >= pm->n || pm->rank[rank].has_delivered)
        return;
    pm->rank[rank].has_delivered = true;
    pm->rank[rank].delivered = t;
    pm->rank[rank].sent_at_deliver = pm->rank[rank].sent;
}

uint64_t ftc_pm_finish_time(const ftc_pm_t *pm, uint32_t rank)
{
    if (pm == NULL || rank >= pm->n)
        return 0;
    const pm_rank_t *r = &pm->rank[rank];
    return r->last_data > r->delivered ? r->last_data : r->delivered;
}

void ftc_pm_summarise(const ftc_pm_t *pm, const ftc_pm_rank_t *ranks,
                      ftc_pm_result_t *out)
{
    *out = (ftc_pm_result_t){0};
    if (pm == NULL || ranks == NULL)
        return;
    uint64_t first = UINT64_MAX;
    for (uint32_t i = 0; i < pm->n; i++) {
        const pm_rank_t *r = &pm->rank[i];
        bool finished = ranks[i].live && ranks[i].delivered;
        if (!finished) {
            out->messages_by_finish += r->sent;
            continue;
        }
        uint64_t fin = ftc_pm_finish_time(pm, i);
        /* Sends up to the finish: the counts are monotone in time. */
        out->messages_by_finish += r->sent_at_data > r->sent_at_deliver
                                       ? r->sent_at_data
                                       : r->sent_at_deliver;
        if (!ranks[i].root && fin > out->finish_time_last)
            out->finish_time_last = fin;
        if (fin < first)
            first = fin;
    }
    out->finish_time_first = first == UINT64_MAX ? 0 : first;
    if (pm->out_of_memory)
        return;
    for (size_t k = 0; k < pm->ngrowth; k++) {
        const pm_growth_t *g = &pm->growth[k];
        /* A message arriving at the finishing instant joined the queue of
         * a process still in the operation (arrivals come first). */
        if (ranks[g->rank].live && ranks[g->rank].delivered
            && g->t <= ftc_pm_finish_time(pm, g->rank)
            && g->length > out->max_queue) {
            out->max_queue = g->length;
            out->max_queue_rank = g->rank;
        }
    }
}
