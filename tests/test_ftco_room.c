/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An ftco operation's tables on lent room (peers.h, partials.h: the
 * room is the operation's own block, which its group keeps for the next
 * operation). While they fit they stay in the room; once they outgrow
 * it they move to the heap with every entry kept, and the room is never
 * freed by them (under ASan a free of it would be an error). The peer
 * table leaves nothing in the room once it moved (the room is poisoned
 * and every entry read back); the partials' sets may keep spans there,
 * since the room outlives them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "algo/ftco/partials.h"
#include "algo/ftco/peers.h"
#include "check.h"

static void check_peers(void)
{
    enum { EXPECT_N = 4, RANKS = 100 };
    size_t size = ftco_peers_room(EXPECT_N);
    void *room = malloc(size);
    CHECK_MSG(room != NULL, "room");
    if (room == NULL)
        return;
    ftco_peers_t p;
    CHECK_MSG(ftco_peers_init(&p, EXPECT_N, room) == FTC_OK, "init on room");
    CHECK_MSG(!p.at_owned && !p.index_owned && (void *)p.at == room,
           "starts in the room");
    uint32_t fit = p.cap;
    for (uint32_t i = 0; i < RANKS; i++) {
        uint32_t rank = i * 7919u + 3;
        int64_t e = ftco_peers_get(&p, rank);
        CHECK_MSG(e == (int64_t)i, "entry %u in order", i);
        if (e >= 0)
            p.at[e].flag = (uint8_t)(i & 0x7f);
        if (i + 1 == fit)
            CHECK_MSG(!p.at_owned, "still in the room at %u entries", fit);
    }
    CHECK_MSG(p.at_owned && p.index_owned && !p.nomem, "moved to the heap");
    /* The room is the caller's again: fill it, then read every entry. */
    memset(room, 0xa5, size);
    for (uint32_t i = 0; i < RANKS; i++) {
        int64_t e = ftco_peers_find(&p, i * 7919u + 3);
        CHECK_MSG(e == (int64_t)i && p.at[e].flag == (uint8_t)(i & 0x7f),
               "entry %u kept", i);
    }
    CHECK_MSG(ftco_peers_find(&p, 5) < 0, "absent rank absent");
    ftco_peers_free(&p);
    free(room);
}

static void check_partials(void)
{
    enum { CAP = 2, VALUES = 10 };
    size_t size = ftco_partials_room(sizeof(uint64_t), CAP);
    void *room = malloc(size);
    CHECK_MSG(room != NULL, "room");
    if (room == NULL)
        return;
    ftco_partials_t p;
    CHECK_MSG(ftco_partials_init(&p, sizeof(uint64_t), CAP, room) == FTC_OK,
           "init on room");
    CHECK_MSG(!p.sets_owned && !p.vals_owned, "starts in the room");
    /* Disjoint values at positions 0, 2, 4, ...: each added. */
    for (uint32_t i = 0; i < VALUES; i++) {
        ftco_span_t sp = {2 * i, 2 * i + 1};
        ftco_rset_t set = {&sp, 1, 1, false};
        uint64_t v = 100 + i;
        CHECK_MSG(ftco_partials_merge(&p, &set, &v) == 1, "value %u added", i);
        if (i + 1 == CAP)
            CHECK_MSG(!p.sets_owned && !p.vals_owned, "in the room at %u", CAP);
    }
    CHECK_MSG(p.sets_owned && p.vals_owned && p.count == VALUES,
           "moved to the heap, %u partials", p.count);
    /* (Not poisoned: the first sets' spans stay lent from the room,
     * which lives as long as the partials, as an operation's block
     * does.) */
    for (uint32_t i = 0; i < p.count; i++) {
        uint64_t v;
        memcpy(&v, p.vals + i * sizeof(v), sizeof(v));
        CHECK_MSG(v == 100 + i && ftco_rset_has(&p.sets[i], 2 * i)
                   && p.sets[i].count == 1,
               "partial %u kept", i);
    }
    for (uint32_t pos = 0; pos < 2 * VALUES; pos++)
        CHECK_MSG(ftco_partials_has(&p, pos) == (pos % 2 == 0), "cover %u",
               pos);
    /* A duplicate is refused; a value over the first five replaces them. */
    ftco_span_t dup_sp = {4, 5};
    ftco_rset_t dup = {&dup_sp, 1, 1, false};
    uint64_t v = 7;
    CHECK_MSG(ftco_partials_merge(&p, &dup, &v) == 0, "duplicate refused");
    ftco_span_t big_sp = {0, 9};
    ftco_rset_t big = {&big_sp, 1, 1, false};
    CHECK_MSG(ftco_partials_merge(&p, &big, &v) == 1 && p.count == VALUES - 4,
           "the five it contains replaced (%u partials)", p.count);
    ftco_partials_free(&p);
    free(room);
}

int main(void)
{
    check_peers();
    check_partials();
    return check_report();
}
