/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tree children in an operation's memory, and how much room to plan for
 * them.
 */
#include <string.h>

#include "algo/algo.h"


uint32_t *ftc_cop_tree_children(ftc_cop_t *op, const ftc_tree_t *tree,
                               uint32_t n, uint32_t r, uint32_t *count)
{
    /* Through the stack, so that one pass through the topology gives
     * both the count and the list (a second only for a wide node). */
    uint32_t tmp[64];
    uint32_t k = ftc_tree_children(tree, n, r, tmp, 64);
    uint32_t *c = ftc_cop_alloc(op, sizeof(uint32_t) * k);
    if (c == NULL)
        return NULL;
    if (k <= 64)
        memcpy(c, tmp, sizeof(uint32_t) * k);
    else
        k = ftc_tree_children(tree, n, r, c, k);
    *count = k;
    return c;
}
