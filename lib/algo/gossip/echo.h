/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mass in flight, made visible. Every message on a link carries the
 * sender's sequence number for that link and echoes the sequence number
 * of the latest message from the receiver whose flows the sender has
 * applied. A process remembers, for each of its pushes the neighbour has
 * not yet echoed, how much weight it moved and how far its own estimate
 * has moved since: their product bounds how much that push, once it
 * lands, can move the aggregate from the estimates that agree now
 * (lib/algo/gossip/echo.c; docs/gossip.md, "the local convergence test").
 */
#ifndef FTC_ALGO_GOSSIP_ECHO_H
#define FTC_ALGO_GOSSIP_ECHO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Pushes remembered per link. Links many periods long hold more; the
 * oldest two are then folded into one, which counts as applied only once
 * the later of them is (so folding errs towards waiting). */
#define FTC_GOSSIP_ECHO_KEEP 8

/* One push the neighbour has not echoed yet. */
typedef struct ftc_gossip_unechoed {
    uint32_t seq;       /* its sequence number */
    uint32_t iteration; /* ours when it was sent (low 32 bits) */
    float weight;       /* |weight| it moved onto the link */
    float drift;        /* the sum of our estimate's relative changes per
                           iteration since it was sent: a bound on how far
                           its ratio is from our estimate now */
} ftc_gossip_unechoed_t;

/* A link's sequence numbers, as one end keeps them. */
typedef struct ftc_gossip_echo {
    uint32_t sent;      /* our messages on the link so far: the last one's
                           sequence number (the first is 1) */
    uint32_t applied;   /* the peer's sequence number of the latest message
                           from it whose flows we applied: what we echo */
    uint32_t heard;     /* the peer's sequence number of the latest
                           message from it, applied or not */
    uint32_t told;      /* heard as it was when we last wrote to the peer:
                           while it differs, the peer has spoken since and
                           waits for our answer (op.c, ready_link) */
    uint32_t echoed;    /* the highest of our sequence numbers the peer has
                           echoed: it applied our flows up to that message */
    uint32_t nunechoed;
    ftc_gossip_unechoed_t unechoed[FTC_GOSSIP_ECHO_KEEP]; /* oldest first */
} ftc_gossip_echo_t;

/* Bytes the echo adds to every message, after the algorithm's payload:
 * the sequence number, the echo, and a check word that shows a flipped
 * bit in either. */
#define FTC_GOSSIP_ECHO_LEN (3 * sizeof(uint32_t))

/* Number the next message on the link and write the trailer; weight:
 * what it moved onto the link (0 for a sync). */
void ftc_gossip_echo_write(ftc_gossip_echo_t *e, double weight,
                           uint32_t iteration, uint8_t *out);

/* Take a message's trailer in: remember its sequence number if its flows
 * were applied, and forget our pushes it echoes. A trailer whose check
 * word does not match is ignored (a flipped bit: the next message
 * restates it). */
void ftc_gossip_echo_read(ftc_gossip_echo_t *e, const uint8_t *in,
                          bool applied);

/* Read a message's trailer without taking it in: the sender's sequence
 * number and its echo of ours. false when the check word does not match
 * (a flipped bit). */
bool ftc_gossip_echo_peek(const uint8_t *in, uint32_t *seq, uint32_t *echo);

/* Our estimate moved by change (relative) this iteration: every push
 * still on the way is that much further from it. */
void ftc_gossip_echo_drift(ftc_gossip_echo_t *e, double change);

/* How far (relative) a push sent at our iteration `iteration` is from
 * our estimate now, when that is known exactly (op.c keeps the recent
 * estimates); else the drift, the bound. */
typedef double (*ftc_gossip_deviation_fn)(const void *ctx, uint32_t iteration,
                                          float drift);

/* The sum over our unechoed pushes of weight times deviation: how much
 * mass at another ratio than our estimate's is still to land. */
double ftc_gossip_echo_offset(const ftc_gossip_echo_t *e,
                              ftc_gossip_deviation_fn deviation,
                              const void *ctx);

#pragma GCC visibility pop

#endif
