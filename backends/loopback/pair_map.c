/* SPDX-License-Identifier: BSD-3-Clause */
#include "pair_map.h"

#include <stdlib.h>

static uint64_t pair_key(uint32_t a, uint32_t b)
{
    return (uint64_t)a << 32 | b;
}

/* splitmix64's finaliser: neighbouring ranks land far apart. */
static size_t pair_hash(uint64_t key, size_t cap)
{
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    key ^= key >> 31;
    return (size_t)key & (cap - 1);
}

void ftc_lb_map_init(ftc_lb_pair_map_t *m)
{
    m->slots = NULL;
    m->cap = m->len = 0;
}

void ftc_lb_map_fini(ftc_lb_pair_map_t *m)
{
    free(m->slots);
    ftc_lb_map_init(m);
}

static ftc_lb_pair_slot_t *map_find(const ftc_lb_pair_map_t *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = pair_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        ftc_lb_pair_slot_t *s = &m->slots[i];
        if (s->key == FTC_LB_PAIR_FREE)
            return NULL;
        if (s->key == key)
            return s;
    }
}

/* Places key in a table known to have room and not to hold it. */
static ftc_lb_pair_slot_t *map_insert_new(ftc_lb_pair_slot_t *slots,
                                          size_t cap, uint64_t key,
                                          uint64_t value)
{
    size_t i = pair_hash(key, cap);
    while (slots[i].key != FTC_LB_PAIR_FREE)
        i = (i + 1) & (cap - 1);
    slots[i].key = key;
    slots[i].value = value;
    return &slots[i];
}

static int map_grow(ftc_lb_pair_map_t *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    ftc_lb_pair_slot_t *slots = malloc(cap * sizeof(*slots));
    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < cap; i++)
        slots[i].key = FTC_LB_PAIR_FREE;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != FTC_LB_PAIR_FREE)
            map_insert_new(slots, cap, m->slots[i].key, m->slots[i].value);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int ftc_lb_map_get(const ftc_lb_pair_map_t *m, uint32_t a, uint32_t b,
                   uint64_t *value)
{
    const ftc_lb_pair_slot_t *s = map_find(m, pair_key(a, b));
    if (s == NULL)
        return 0;
    *value = s->value;
    return 1;
}

int ftc_lb_map_put(ftc_lb_pair_map_t *m, uint32_t a, uint32_t b,
                   uint64_t value)
{
    uint64_t key = pair_key(a, b);
    ftc_lb_pair_slot_t *s = map_find(m, key);
    if (s != NULL) {
        s->value = value;
        return 0;
    }
    /* Keep the load at most one half so that probe runs stay short. */
    if ((m->len + 1) * 2 > m->cap && map_grow(m) != 0)
        return -1;
    map_insert_new(m->slots, m->cap, key, value);
    m->len++;
    return 0;
}

int ftc_lb_map_remove(ftc_lb_pair_map_t *m, uint32_t a, uint32_t b)
{
    ftc_lb_pair_slot_t *s = map_find(m, pair_key(a, b));
    if (s == NULL)
        return 0;
    size_t mask = m->cap - 1;
    size_t hole = (size_t)(s - m->slots);

    /* Backward shift: an entry further along the run moves into the hole
     * unless its home slot lies cyclically in (hole, its position], where
     * moving it would put it before its home and make it unreachable. */
    for (size_t j = (hole + 1) & mask; m->slots[j].key != FTC_LB_PAIR_FREE;
         j = (j + 1) & mask) {
        size_t home = pair_hash(m->slots[j].key, m->cap);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = FTC_LB_PAIR_FREE;
    m->len--;
    return 1;
}
