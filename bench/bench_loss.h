/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message loss on a real backend (ftcoll-bench --loss P): the gossip
 * family's messages that this rank sends are dropped with a seeded
 * probability, as a lossy network would drop them, so that the family's
 * repair of lost flows is exercised over ZeroMQ, UCX and libfabric and
 * not only on the loopback. Only the family's own messages are dropped:
 * the core's keepalive, failure notices and bootstrap are left alone (a
 * lost probe would be a suspicion, which is the failure monitor's
 * business, not the algorithm's).
 */
#ifndef FTCOLL_BENCH_LOSS_H
#define FTCOLL_BENCH_LOSS_H

#include <stdint.h>

#include "ftcoll/ftcoll.h"

/* Put the dropping send in front of ops->send (which may itself be a
 * wrapper); the other ops and their argument are the backend's. prob in
 * (0, 1]; the stream is seeded by seed and rank. */
void bench_loss_wrap_send(ftc_transport_ops_t *ops, double prob, uint64_t seed,
                          uint32_t rank);

/* Messages dropped so far. */
uint64_t bench_loss_dropped(void);

#endif
