/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether two decoded wire headers are the same, field by field (not
 * memcmp: the struct has padding). For the tests that decode what they
 * encoded (test_wire, the fuzz target). Header-only, so that the fuzz
 * target, which compiles the decoder itself, needs no library for it;
 * the includer puts lib/ on its include path.
 */
#ifndef FTC_TEST_WIRE_HEADER_EQ_H
#define FTC_TEST_WIRE_HEADER_EQ_H

#include <stdbool.h>

#include "wire/wire.h"

static inline bool ftc_test_wire_header_eq(const ftc_wire_header_t *a,
                                           const ftc_wire_header_t *b)
{
    return a->kind == b->kind && a->algo == b->algo && a->coll == b->coll
           && a->flags == b->flags && a->group_id == b->group_id
           && a->epoch == b->epoch && a->sender == b->sender
           && a->seq == b->seq && a->word == b->word && a->aux == b->aux
           && a->signature == b->signature
           && a->payload_len == b->payload_len
           && a->job_token == b->job_token;
}

#endif
