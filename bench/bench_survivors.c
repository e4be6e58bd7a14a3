/* SPDX-License-Identifier: BSD-3-Clause */
/* The survivors' average after a kill (bench_survivors.h). */
#include "bench_survivors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void survivors_init(survivors_t *s)
{
    *s = (survivors_t){.known_from = UINT64_MAX};
}

void survivors_start(survivors_t *s, const ftc_group_t *group,
                     const uint32_t *victims, uint32_t nv, uint64_t g)
{
    s->known = false;
    if (nv == 0)
        return;
    uint32_t n = ftc_group_size(group);
    uint32_t *failed = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (failed == NULL)
        return;
    uint32_t nf = ftc_group_failed(group, failed, n);
    if (nf > n)
        nf = n;
    uint32_t found = 0;
    for (uint32_t k = 0; k < nv; k++)
        for (uint32_t i = 0; i < nf; i++)
            found += failed[i] == victims[k];
    if (found == nv) {
        /* The survivors: everyone this rank does not know failed (a
         * false suspicion the suite reports apart). */
        double sum = 0.0;
        for (uint32_t r = 0; r < n; r++)
            sum += r + 1;
        for (uint32_t i = 0; i < nf; i++)
            sum -= failed[i] + 1;
        s->known = true;
        s->weight_sum = sum;
        s->nsurvivors = n - nf;
        if (s->known_from == UINT64_MAX)
            s->known_from = g;
    }
    free(failed);
}

void survivors_result(survivors_t *s, uint64_t g, int status,
                      bool converged, const void *out, size_t count)
{
    if (!s->known)
        return;
    s->not_ok += status != FTC_OK;
    s->unconverged += status == FTC_OK && !converged;
    /* An estimate delivered at the iteration cap is the report's to
     * qualify (converged 0), not the tolerance's. */
    bool counted = status == FTC_OK && converged;
    double worst = counted ? 0.0 : NAN;
    for (size_t i = 0; counted && i < count; i++) {
        double exact = (double)(g + 1 + i) * s->weight_sum / s->nsurvivors;
        double v;
        memcpy(&v, (const unsigned char *)out + i * sizeof(v), sizeof(v));
        double e = fabs(v - exact) / exact;
        if (!(e <= worst))
            worst = e; /* NaN too */
    }
    s->err[g % SURVIVORS_KEPT] = worst;
    s->last = g;
}

void survivors_json(const survivors_t *s, json_t *j)
{
    json_key(j, "gossip_survivors");
    json_object_begin(j);
    json_key(j, "known_from");
    if (s->known_from == UINT64_MAX) {
        json_null(j);
        json_object_end(j);
        return;
    }
    json_uint(j, s->known_from);
    uint64_t from = s->known_from;
    if (s->last < from) { /* started so, never ended */
        json_key(j, "from");
        json_uint(j, from);
        json_key(j, "err");
        json_array_begin(j);
        json_array_end(j);
        json_key(j, "not_ok");
        json_uint(j, s->not_ok);
        json_key(j, "unconverged");
        json_uint(j, s->unconverged);
        json_object_end(j);
        return;
    }
    if (s->last + 1 - from > SURVIVORS_KEPT)
        from = s->last + 1 - SURVIVORS_KEPT;
    json_key(j, "from");
    json_uint(j, from);
    json_key(j, "err");
    json_array_begin(j);
    for (uint64_t g = from; g <= s->last; g++) {
        double e = s->err[g % SURVIVORS_KEPT];
        if (e != e)
            json_null(j);
        else
            json_general(j, e, 3);
    }
    json_array_end(j);
    json_key(j, "not_ok");
    json_uint(j, s->not_ok);
    json_key(j, "unconverged");
    json_uint(j, s->unconverged);
    json_object_end(j);
}
