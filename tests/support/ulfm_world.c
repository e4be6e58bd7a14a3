/* SPDX-License-Identifier: BSD-3-Clause */
#include "ulfm_world.h"

#include <stdlib.h>

void ulfm_world_create(const ftc_lb_config_t *lc, const ftc_config_t *cfg,
                       uint32_t group_id, uint32_t epoch, ulfm_world_t *w)
{
    uint32_t n = lc->n;
    w->n = n;
    if (ftc_lb_world_create(lc, &w->lb) != FTC_OK)
        abort();
    w->ctx = calloc(n, sizeof(*w->ctx));
    w->g = calloc(n, sizeof(*w->g));
    w->before = calloc(n, sizeof(*w->before));
    if (!w->ctx || !w->g || !w->before)
        abort();
    for (uint32_t r = 0; r < n; r++) {
        if (ftc_context_create(r, n, ftc_lb_ops(), ftc_lb_endpoint(w->lb, r),
                               cfg, &w->ctx[r]) != FTC_OK)
            abort();
        ftc_lb_attach(w->lb, r, w->ctx[r]);
        if (ftc_group_create(w->ctx[r], group_id, epoch, n, NULL, &w->g[r])
            != FTC_OK)
            abort();
    }
}

void ulfm_world_set_round(ulfm_world_t *w, ftc_agree_round_t round)
{
    ftc_ulfm_params_t p;
    ftc_ulfm_params_init(&p);
    p.agree_round = round;
    for (uint32_t r = 0; r < w->n; r++)
        if (ftc_group_set_ulfm_params(w->g[r], &p) != FTC_OK)
            abort();
}

void ulfm_world_inject(ulfm_world_t *w, const ulfm_crash_t *crash,
                       uint32_t ncrash)
{
    for (uint32_t i = 0; i < ncrash; i++) {
        if (crash[i].k == 0) {
            ftc_lb_crash(w->lb, crash[i].rank);
            w->before[crash[i].rank] = true;
        } else {
            ftc_lb_crash_after_sends(w->lb, crash[i].rank, crash[i].k);
        }
    }
}

uint64_t ulfm_splitmix(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

bool ulfm_crash_has(const ulfm_crash_t *crash, uint32_t ncrash, uint32_t rank)
{
    for (uint32_t i = 0; i < ncrash; i++)
        if (crash[i].rank == rank)
            return true;
    return false;
}

uint32_t ulfm_fresh_rank(uint64_t *x, const ulfm_crash_t *crash,
                         uint32_t ncrash, uint32_t n)
{
    uint32_t r;
    do
        r = (uint32_t)(ulfm_splitmix(x) % n);
    while (ulfm_crash_has(crash, ncrash, r));
    return r;
}

void ulfm_world_destroy(ulfm_world_t *w)
{
    for (uint32_t r = 0; r < w->n; r++)
        ftc_context_destroy(w->ctx[r]);
    ftc_lb_world_destroy(w->lb);
    free(w->ctx);
    free(w->g);
    free(w->before);
    *w = (ulfm_world_t){0};
}

void ulfm_on_tally(const ftc_completion_t *c, void *arg)
{
    ulfm_tally_t *t = arg;
    t->calls++;
    t->status = c->status;
    t->nfailed = c->nfailed;
}
