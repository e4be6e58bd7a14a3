/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's receive order in the LogP simulator (sim_ftco.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sim_ftco.h"
#include "algo/ftco/kinds.h"

int ftc_sim_service_parse(const char *name, ftc_sim_service_t *out)
{
    static const char *const names[] = {"none", "rsd", "disd"};
    for (int i = 0; i < 3; i++)
        if (name != NULL && strcmp(name, names[i]) == 0) {
            *out = (ftc_sim_service_t)i;
            return FTC_OK;
        }
    return FTC_EINVAL;
}

const char *ftc_sim_service_name(ftc_sim_service_t s)
{
    return s == FTC_SERVICE_RSD ? "rsd" : s == FTC_SERVICE_DISD ? "disd" : "none";
}

void ftc_sim_ftco_kind_classes(uint8_t cls[16])
{
    for (int k = 0; k < 16; k++)
        cls[k] = 3;
    cls[FTCO_MSG_UP] = 0;
    cls[FTCO_MSG_DOWN] = 0;
    cls[FTCO_MSG_KEEPALIVE] = 1;
    cls[FTCO_MSG_ACK] = 2;
}

bool ftc_sim_ftco_is_data(const void *buf, size_t len)
{
    if (len < FTC_WIRE_HEADER_SIZE)
        return false;
    const uint8_t *b = buf;
    unsigned kind = b[5], algo = b[6];
    return algo == (unsigned)FTC_ALGO_FTCO
           && (kind == FTCO_MSG_UP || kind == FTCO_MSG_DOWN
               || kind == FTCO_MSG_EXCH);
}

int ftc_sim_ftco_sends_first(const void *buf, size_t len, void *arg)
{
    (void)arg;
    return ftc_sim_ftco_is_data(buf, len);
}

struct ftc_sim_service_state {
    ftc_sim_service_t kind;
    ftc_tree_t tree;
    uint32_t n, root;
    uint64_t *word; /* per rank: DISD its receive count, RSD its stream */
};

int ftc_sim_service_create(ftc_sim_service_t kind, const ftc_tree_t *tree,
                           uint32_t n, uint32_t root, uint64_t seed,
                           ftc_sim_service_state_t **out)
{
    *out = NULL;
    if ((kind != FTC_SERVICE_RSD && kind != FTC_SERVICE_DISD) || tree == NULL
        || n == 0 || root >= n || ftc_tree_check(tree) != FTC_OK)
        return FTC_EINVAL;
    ftc_sim_service_state_t *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return FTC_ENOMEM;
    st->word = calloc(n, sizeof(uint64_t));
    if (st->word == NULL) {
        free(st);
        return FTC_ENOMEM;
    }
    st->kind = kind;
    st->tree = *tree;
    st->n = n;
    st->root = root;
    if (kind == FTC_SERVICE_RSD)
        for (uint32_t r = 0; r < n; r++)
            st->word[r] = seed ^ (0x5E41CEull + (uint64_t)r * 0x9E3779B97F4A7C15ull);
    *out = st;
    return FTC_OK;
}

void ftc_sim_service_destroy(ftc_sim_service_state_t *st)
{
    if (st == NULL)
        return;
    free(st->word);
    free(st);
}

/* splitmix64: one draw of rank's stream. */
static uint64_t next_draw(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The family's logical rank (the root is 0), as lib/topo/topo.h maps it. */
static uint32_t logical(const ftc_sim_service_state_t *st, uint32_t rank)
{
    return (uint32_t)(((uint64_t)rank + st->n - st->root) % st->n);
}

static uint32_t depth_of(const ftc_sim_service_state_t *st, uint32_t x)
{
    uint32_t d = 0;
    while (x != 0) {
        x = (uint32_t)ftc_tree_parent(&st->tree, st->n, x);
        d++;
    }
    return d;
}

unsigned ftc_sim_service_distance(void *arg, uint32_t rank, uint32_t src)
{
    const ftc_sim_service_state_t *st = arg;
    if (rank >= st->n || src >= st->n)
        return 0;
    uint32_t a = logical(st, rank), b = logical(st, src);
    uint32_t da = depth_of(st, a), db = depth_of(st, b);
    unsigned d = 0;
    for (; da > db; da--, d++)
        a = (uint32_t)ftc_tree_parent(&st->tree, st->n, a);
    for (; db > da; db--, d++)
        b = (uint32_t)ftc_tree_parent(&st->tree, st->n, b);
    for (; a != b; d += 2) {
        a = (uint32_t)ftc_tree_parent(&st->tree, st->n, a);
        b = (uint32_t)ftc_tree_parent(&st->tree, st->n, b);
    }
    return d;
}

/* DISD: an interval of 4 x (neighbours at distance 1) receives, so that
 * a DATA and an ACK of each of them fit in its first half; the first half
 * serves distance 1, the next quarter 2, the next eighth 3, and so on;
 * what is left when the shares round to nothing serves anyone (0). */
static unsigned disd(ftc_sim_service_state_t *st, uint32_t rank)
{
    uint32_t x = logical(st, rank);
    uint64_t near = ftc_tree_children(&st->tree, st->n, x, NULL, 0)
                    + (x != 0);
    uint64_t len = 4 * (near > 0 ? near : 1);
    uint64_t pos = st->word[rank]++ % len, lim = 0;
    for (unsigned d = 1; d < 64 && (len >> d) > 0; d++) {
        lim += len >> d;
        if (pos < lim)
            return d;
    }
    return 0;
}

/* RSD: f(Y) = ceil(log_r Y), Y ~ U(0, 1], r = 1/2: distance d with
 * probability 2^-d, i.e. one plus the trailing zero bits of a draw. */
static unsigned rsd(ftc_sim_service_state_t *st, uint32_t rank)
{
    uint64_t y = next_draw(&st->word[rank]);
    unsigned d = 1;
    while ((y & 1) == 0 && d < 64) {
        y >>= 1;
        d++;
    }
    return d;
}

unsigned ftc_sim_service_next(void *arg, uint32_t rank)
{
    ftc_sim_service_state_t *st = arg;
    if (rank >= st->n)
        return 0;
    return st->kind == FTC_SERVICE_DISD ? disd(st, rank) : rsd(st, rank);
}

int ftc_sim_ftco_settle(struct ftc_scenario *s, bool tree_given, bool k_given,
                        bool k_best, const char **flag, const char **why)
{
    if (k_best) {
        uint32_t L = (uint32_t)(s->model == FTC_MODEL_LOGP ? s->logp_L : 2);
        uint32_t o = (uint32_t)(s->model == FTC_MODEL_LOGP ? s->logp_o : 1);
        if (ftc_tree_knomial_best_k(s->n, L, o ? o : 1,
                                    &s->corrected.bcast_tree.k) != FTC_OK) {
            *flag = "-k";
            *why = "best needs -n >= 1";
            return 2;
        }
        fprintf(stderr, "ftcoll-sim: -k best: k = %u for P = %u, L = %u, "
                        "o = %u\n", s->corrected.bcast_tree.k, s->n, L, o);
    }
    if (s->args.algo != FTC_ALGO_FTCO) {
        if (s->service != FTC_SERVICE_NONE) {
            *flag = "--service";
            *why = "the service-distance functions belong to --algo ftco";
            return 2;
        }
        if (s->ftco.ack_timeout_ns != 0) {
            *flag = "--ack-timeout";
            *why = "the per-message timeouts belong to --algo ftco";
            return 2;
        }
        return 0;
    }
    if (tree_given) {
        ftc_tree_kind_t kind = s->corrected.bcast_tree.kind;
        if (kind != FTC_TREE_KNOMIAL && kind != FTC_TREE_KARY
            && kind != FTC_TREE_KNOMIAL_MULTIROOT
            && kind != FTC_TREE_KARY_MULTIROOT) {
            *flag = "--tree";
            *why = "ftco runs on knomial, kary, knomial-multiroot or "
                   "kary-multiroot trees";
            return 2;
        }
        s->ftco.tree.kind = s->corrected.bcast_tree.kind;
    }
    if (k_given)
        s->ftco.tree.k = s->corrected.bcast_tree.k;
    if (s->ftco.tree.k < 2) {
        *flag = "-k";
        *why = "ftco's trees need k >= 2";
        return 2;
    }
    if (s->n > 2 && s->ftco.tree.k >= s->n) {
        *flag = "-k";
        *why = "ftco's trees need k below -n";
        return 2;
    }
    if (s->service != FTC_SERVICE_NONE) {
        if (s->model != FTC_MODEL_LOGP) {
            *flag = "--service";
            *why = "belongs to the LogP model (--model logp)";
            return 2;
        }
        s->queue = FTC_QUEUE_KIND;
    }
    if (s->queue == FTC_QUEUE_KIND)
        ftc_sim_ftco_kind_classes(s->kind_class);
    /* Appendix B: a process not yet in the operation still receives. */
    s->prestart_receives = true;
    /* Algorithm 1: tree_progress() passes DATA on before the queue is
     * read. */
    s->data_sends_first = !s->receives_first;
    return 0;
}
