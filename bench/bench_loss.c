/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-bench --loss (bench_loss.h). A dropped message is reported to
 * the core as sent (FTC_SEND_INLINE): on a real network the sender never
 * learns of a loss either.
 */
#include "bench_loss.h"

#include <stdbool.h>
#include <string.h>

#include "ftcoll/gossip.h"

/* The wire header's fields this needs (lib/wire/wire.h documents the
 * layout: magic at 0, kind at 5, algo at 6; kinds from 0xF0 up are the
 * core's, whatever the algo byte says). */
#define WIRE_HEADER_SIZE 64u
#define WIRE_KIND 5u
#define WIRE_ALGO 6u
#define WIRE_CORE_KINDS 0xF0u

static int (*next_send)(void *tp, uint32_t dest, const void *buf, size_t len,
                        void *cookie);
static uint64_t state;
static uint64_t threshold; /* drop when the next draw is below it */
static uint64_t dropped;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static bool gossip_message(const unsigned char *m, size_t len)
{
    if (len < WIRE_HEADER_SIZE || memcmp(m, "FTCL", 4) != 0)
        return false;
    unsigned algo = m[WIRE_ALGO];
    return m[WIRE_KIND] < WIRE_CORE_KINDS
           && (algo == FTC_ALGO_PUSH_SUM || algo == FTC_ALGO_PUSH_FLOW
               || algo == FTC_ALGO_PCF);
}

static int lossy_send(void *tp, uint32_t dest, const void *buf, size_t len,
                      void *cookie)
{
    if (gossip_message(buf, len) && splitmix(&state) < threshold) {
        dropped++;
        return FTC_SEND_INLINE;
    }
    return next_send(tp, dest, buf, len, cookie);
}

void bench_loss_wrap_send(ftc_transport_ops_t *ops, double prob, uint64_t seed,
                          uint32_t rank)
{
    next_send = ops->send;
    ops->send = lossy_send;
    state = seed * 0x100000001B3ull ^ ((uint64_t)rank << 32 | rank);
    threshold = prob >= 1.0 ? UINT64_MAX : (uint64_t)(prob * 18446744073709551616.0);
}

uint64_t bench_loss_dropped(void)
{
    return dropped;
}
