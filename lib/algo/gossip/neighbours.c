/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip family's neighbourhoods. Everything is computed from
 * (rank, n, parameters), so no process stores the graph: only its own row.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "ftcoll/error.h"
#include "algo/gossip/neighbours.h"

static bool is_pow2(uint32_t n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Add v to out unless it is r or already there (a torus side of 1 or 2
 * names the same neighbour twice). */
static void add_unique(uint32_t *out, uint32_t *k, uint32_t r, uint32_t v)
{
    if (v == r)
        return;
    for (uint32_t i = 0; i < *k; i++)
        if (out[i] == v)
            return;
    out[(*k)++] = v;
}

static uint32_t torus_row(const ftc_gossip_params_t *p, uint32_t r,
                          uint32_t *out)
{
    uint32_t X = p->torus[0], Y = p->torus[1], Z = p->torus[2];
    uint32_t x = r % X, y = (r / X) % Y, z = r / (X * Y);
    uint32_t k = 0;
    add_unique(out, &k, r, (x + 1) % X + X * (y + Y * z));
    add_unique(out, &k, r, (x + X - 1) % X + X * (y + Y * z));
    add_unique(out, &k, r, x + X * ((y + 1) % Y + Y * z));
    add_unique(out, &k, r, x + X * ((y + Y - 1) % Y + Y * z));
    add_unique(out, &k, r, x + X * (y + Y * ((z + 1) % Z)));
    add_unique(out, &k, r, x + X * (y + Y * ((z + Z - 1) % Z)));
    return k;
}

static bool torus_ok(const ftc_gossip_params_t *p, uint32_t n)
{
    uint64_t prod = (uint64_t)p->torus[0] * p->torus[1] * p->torus[2];
    return prod == n;
}

uint32_t ftc_gossip_neighbours(const ftc_gossip_params_t *p, uint32_t n,
                               uint32_t r, uint32_t *out)
{
    uint32_t k = 0;
    if (r >= n)
        return 0;
    switch (p->neighbours) {
    case FTC_NEIGHBOURS_FULL:
        for (uint32_t j = 0; j < n; j++)
            if (j != r)
                out[k++] = j;
        return k;
    case FTC_NEIGHBOURS_HYPERCUBE:
        if (!is_pow2(n))
            return 0;
        for (uint32_t b = 1; b < n; b <<= 1)
            out[k++] = r ^ b;
        break;
    case FTC_NEIGHBOURS_TORUS3D:
        if (!torus_ok(p, n))
            return 0;
        k = torus_row(p, r, out);
        break;
    case FTC_NEIGHBOURS_RING:
        add_unique(out, &k, r, (r + n - 1) % n);
        add_unique(out, &k, r, (r + 1) % n);
        break;
    case FTC_NEIGHBOURS_BUS:
        if (r > 0)
            out[k++] = r - 1;
        if (r + 1 < n)
            out[k++] = r + 1;
        break;
    case FTC_NEIGHBOURS_OVERLAY:
        if (p->overlay_index == NULL || p->overlay_adj == NULL)
            return 0;
        for (uint32_t i = p->overlay_index[r]; i < p->overlay_index[r + 1]; i++)
            out[k++] = p->overlay_adj[i];
        break;
    default:
        return 0;
    }
    qsort(out, k, sizeof(uint32_t), cmp_u32);
    return k;
}

uint32_t ftc_gossip_degree(const ftc_gossip_params_t *p, uint32_t n,
                           uint32_t r)
{
    if (r >= n)
        return 0;
    switch (p->neighbours) {
    case FTC_NEIGHBOURS_FULL:
        return n - 1;
    case FTC_NEIGHBOURS_HYPERCUBE: {
        uint32_t d = 0;
        for (uint32_t b = 1; b < n && is_pow2(n); b <<= 1)
            d++;
        return d;
    }
    case FTC_NEIGHBOURS_OVERLAY:
        if (p->overlay_index == NULL || p->overlay_adj == NULL)
            return 0;
        return p->overlay_index[r + 1] - p->overlay_index[r];
    default: {
        uint32_t row[6];
        if (p->neighbours == FTC_NEIGHBOURS_TORUS3D && !torus_ok(p, n))
            return 0;
        if (p->neighbours != FTC_NEIGHBOURS_TORUS3D
            && p->neighbours != FTC_NEIGHBOURS_RING
            && p->neighbours != FTC_NEIGHBOURS_BUS)
            return 0;
        return ftc_gossip_neighbours(p, n, r, row);
    }
    }
}

/* The overlay's own rules, checked row by row (O(edges log degree)). */
static int overlay_check(const ftc_gossip_params_t *p, uint32_t n,
                         const char **why)
{
    const uint32_t *ix = p->overlay_index, *adj = p->overlay_adj;
    if (ix == NULL || adj == NULL) {
        *why = "overlay_index and overlay_adj are required for an overlay";
        return FTC_EINVAL;
    }
    if (ix[0] != 0) {
        *why = "overlay_index[0] must be 0";
        return FTC_EINVAL;
    }
    for (uint32_t r = 0; r < n; r++) {
        if (ix[r + 1] < ix[r]) {
            *why = "overlay_index must not decrease";
            return FTC_EINVAL;
        }
        for (uint32_t i = ix[r]; i < ix[r + 1]; i++) {
            uint32_t j = adj[i];
            if (j >= n || j == r) {
                *why = "overlay_adj names a rank out of range or a self-loop";
                return FTC_EINVAL;
            }
            for (uint32_t k = ix[r]; k < i; k++)
                if (adj[k] == j) {
                    *why = "overlay_adj repeats a neighbour";
                    return FTC_EINVAL;
                }
            bool back = false;
            for (uint32_t k = ix[j]; k < ix[j + 1] && !back; k++)
                back = adj[k] == r;
            if (!back) {
                *why = "overlay is not symmetric (j lists no i where i lists j)";
                return FTC_EINVAL;
            }
        }
    }
    return FTC_OK;
}

int ftc_gossip_neighbours_check(const ftc_gossip_params_t *p, uint32_t n,
                                const char **why)
{
    switch (p->neighbours) {
    case FTC_NEIGHBOURS_FULL:
    case FTC_NEIGHBOURS_RING:
    case FTC_NEIGHBOURS_BUS:
        break;
    case FTC_NEIGHBOURS_HYPERCUBE:
        if (!is_pow2(n)) {
            *why = "neighbours: a hypercube needs a power-of-two group size";
            return FTC_EINVAL;
        }
        break;
    case FTC_NEIGHBOURS_TORUS3D:
        if (p->torus[0] == 0 || p->torus[1] == 0 || p->torus[2] == 0
            || !torus_ok(p, n)) {
            *why = "torus: the three sides must multiply to the group size";
            return FTC_EINVAL;
        }
        break;
    case FTC_NEIGHBOURS_OVERLAY: {
        int rc = overlay_check(p, n, why);
        if (rc != FTC_OK)
            return rc;
        break;
    }
    default:
        *why = "neighbours: unknown kind";
        return FTC_EINVAL;
    }
    /* The built-in shapes are connected by construction; an overlay is
     * whatever the caller says, so search it. */
    if (n == 1 || p->neighbours != FTC_NEIGHBOURS_OVERLAY)
        return FTC_OK;
    /* Connected: a breadth-first search from rank 0 reaches everyone. */
    uint32_t *queue = malloc(sizeof(uint32_t) * n);
    uint8_t *seen = calloc(n, 1);
    uint32_t *row = malloc(sizeof(uint32_t) * n);
    if (queue == NULL || seen == NULL || row == NULL) {
        free(queue), free(seen), free(row);
        return FTC_ENOMEM;
    }
    uint32_t head = 0, tail = 0, reached = 1;
    queue[tail++] = 0;
    seen[0] = 1;
    int rc = FTC_OK;
    while (head < tail) {
        uint32_t r = queue[head++];
        uint32_t k = ftc_gossip_neighbours(p, n, r, row);
        if (k == 0) {
            *why = "neighbours: a process has no neighbour";
            rc = FTC_EINVAL;
            break;
        }
        for (uint32_t i = 0; i < k; i++)
            if (!seen[row[i]]) {
                seen[row[i]] = 1;
                queue[tail++] = row[i];
                reached++;
            }
    }
    if (rc == FTC_OK && reached < n) {
        *why = "neighbours: the graph is not connected";
        rc = FTC_EINVAL;
    }
    free(queue), free(seen), free(row);
    return rc;
}
