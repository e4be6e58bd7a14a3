/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pairing heap of lib/core/timer_heap.h. A node's children hang from
 * it as a list (child, then next), and every node's deadline is at or
 * after its parent's, so the root is the earliest. Two heaps meld by
 * making the later root the first child of the earlier; removing a node
 * melds its children back in pairs, left to right, then the pairs right
 * to left (the two passes that give the O(log n) amortized bound).
 */
#include "core/timer_heap.h"

/* Meld two heaps (roots, or NULL); the earlier root wins, a on ties. */
static ftc_timer_node_t *meld(ftc_timer_node_t *a, ftc_timer_node_t *b)
{
    if (b == NULL)
        return a;
    if (a == NULL)
        return b;
    if (b->at < a->at) {
        ftc_timer_node_t *t = a;
        a = b;
        b = t;
    }
    b->next = a->child;
    if (a->child != NULL)
        a->child->prev = b;
    b->prev = a;
    a->child = b;
    return a;
}

/* The heap made of a list of sibling subtrees (first, then next). */
static ftc_timer_node_t *meld_siblings(ftc_timer_node_t *first)
{
    /* Left to right, in pairs; the melded pairs are stacked on pairs
     * (through next), so the stack pops them right to left. */
    ftc_timer_node_t *pairs = NULL;
    while (first != NULL) {
        ftc_timer_node_t *a = first;
        ftc_timer_node_t *b = a->next;
        first = b != NULL ? b->next : NULL;
        a->next = a->prev = NULL;
        if (b != NULL)
            b->next = b->prev = NULL;
        ftc_timer_node_t *m = meld(a, b);
        m->next = pairs;
        pairs = m;
    }
    ftc_timer_node_t *root = NULL;
    while (pairs != NULL) {
        ftc_timer_node_t *p = pairs;
        pairs = p->next;
        p->next = NULL;
        root = meld(root, p);
    }
    if (root != NULL)
        root->prev = NULL;
    return root;
}

void ftc_timer_heap_insert(ftc_timer_heap_t *h, ftc_timer_node_t *x)
{
    x->child = x->next = x->prev = NULL;
    h->root = meld(h->root, x);
    h->n++;
}

void ftc_timer_heap_remove(ftc_timer_heap_t *h, ftc_timer_node_t *x)
{
    if (x == h->root) {
        h->root = meld_siblings(x->child);
    } else {
        /* Cut x's subtree out of its parent's list of children. */
        if (x->prev->child == x)
            x->prev->child = x->next;
        else
            x->prev->next = x->next;
        if (x->next != NULL)
            x->next->prev = x->prev;
        x->next = x->prev = NULL;
        h->root = meld(h->root, meld_siblings(x->child));
    }
    x->child = x->next = x->prev = NULL;
    h->n--;
}
