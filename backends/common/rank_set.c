/* SPDX-License-Identifier: BSD-3-Clause */
#include "rank_set.h"

#include <stdlib.h>

int ftc_bk_rank_set_init(ftc_bk_rank_set_t *s, uint32_t nranks)
{
    s->count = 0;
    s->ranks = calloc(nranks, sizeof(*s->ranks));
    s->member = calloc(nranks, sizeof(*s->member));
    return s->ranks != NULL && s->member != NULL ? 0 : -1;
}

void ftc_bk_rank_set_fini(ftc_bk_rank_set_t *s)
{
    free(s->ranks);
    free(s->member);
    s->ranks = NULL;
    s->member = NULL;
    s->count = 0;
}

void ftc_bk_rank_set_add(ftc_bk_rank_set_t *s, uint32_t r)
{
    if (s->member[r])
        return;
    s->member[r] = true;
    s->ranks[s->count++] = r;
}

int ftc_bk_rank_set_sweep(ftc_bk_rank_set_t *s,
                          int (*visit)(void *arg, uint32_t r, bool *keep),
                          void *arg)
{
    int done = 0;
    for (uint32_t i = 0; i < s->count;) {
        uint32_t r = s->ranks[i];
        bool keep = true;
        done += visit(arg, r, &keep);
        if (keep) {
            i++;
        } else {
            s->member[r] = false;
            s->ranks[i] = s->ranks[--s->count];
        }
    }
    return done;
}
