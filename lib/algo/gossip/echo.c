/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The echo trailer of every gossip message (echo.h): sequence number,
 * echo, check word, in host byte order as the flows are; and the pushes
 * a neighbour has not echoed yet.
 *
 * Why a check word: with the checksum off (the bit-flip tests), a flipped
 * bit in an echo could claim that the peer applied a message it never
 * received, and the local test would pass with mass still on the wire.
 * The word is the complement of the other two XORed, so a single flip in
 * any of the three is seen and the trailer ignored. An echo above what we
 * sent is impossible and ignored for the same reason; echoes only grow
 * (a late or repeated one says less than what we already know).
 */
#include <math.h>
#include <string.h>

#include "algo/gossip/echo.h"

static void remember(ftc_gossip_echo_t *e, float weight, uint32_t iteration)
{
    if (e->nunechoed == FTC_GOSSIP_ECHO_KEEP) {
        /* Fold the oldest into the next: applied only with the later. */
        ftc_gossip_unechoed_t *a = &e->unechoed[0], *b = &e->unechoed[1];
        b->weight += a->weight;
        if (a->drift > b->drift) {
            b->drift = a->drift;
            b->iteration = a->iteration;
        }
        memmove(a, b, sizeof(*a) * (FTC_GOSSIP_ECHO_KEEP - 1));
        e->nunechoed--;
    }
    e->unechoed[e->nunechoed++] = (ftc_gossip_unechoed_t){
        .seq = e->sent, .iteration = iteration, .weight = weight,
        .drift = 0.0f};
}

void ftc_gossip_echo_write(ftc_gossip_echo_t *e, double weight,
                           uint32_t iteration, uint8_t *out)
{
    e->sent++;
    if (weight != 0.0)
        remember(e, (float)fabs(weight), iteration);
    e->told = e->heard;
    uint32_t w[3] = {e->sent, e->applied, ~(e->sent ^ e->applied)};
    memcpy(out, w, sizeof(w));
}

void ftc_gossip_echo_read(ftc_gossip_echo_t *e, const uint8_t *in,
                          bool applied)
{
    uint32_t w[3];
    memcpy(w, in, sizeof(w));
    if (w[2] != ~(w[0] ^ w[1]))
        return;
    if (w[0] > e->heard)
        e->heard = w[0];
    if (applied)
        e->applied = w[0];
    if (w[1] > e->sent || w[1] <= e->echoed)
        return;
    e->echoed = w[1];
    uint32_t gone = 0;
    while (gone < e->nunechoed && e->unechoed[gone].seq <= e->echoed)
        gone++;
    memmove(e->unechoed, e->unechoed + gone,
            sizeof(e->unechoed[0]) * (e->nunechoed - gone));
    e->nunechoed -= gone;
}

bool ftc_gossip_echo_peek(const uint8_t *in, uint32_t *seq, uint32_t *echo)
{
    uint32_t w[3];
    memcpy(w, in, sizeof(w));
    *seq = w[0];
    *echo = w[1];
    return w[2] == ~(w[0] ^ w[1]);
}

void ftc_gossip_echo_drift(ftc_gossip_echo_t *e, double change)
{
    /* A NaN or infinite change (no estimate, a corrupted flow) makes
     * every push on the way count as far off until it is echoed. */
    float c = change == change ? (float)change : INFINITY;
    for (uint32_t i = 0; i < e->nunechoed; i++)
        e->unechoed[i].drift += c;
}

double ftc_gossip_echo_offset(const ftc_gossip_echo_t *e,
                              ftc_gossip_deviation_fn deviation,
                              const void *ctx)
{
    double sum = 0.0;
    for (uint32_t i = 0; i < e->nunechoed; i++) {
        const ftc_gossip_unechoed_t *u = &e->unechoed[i];
        if (u->drift > 0.0f)
            sum += (double)u->weight * deviation(ctx, u->iteration, u->drift);
    }
    return sum;
}
