/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ftco family's receive order in the LogP simulator (Margolin &
 * Barak, docs/ftco.md "In the simulator"): the message priorities of
 * Algorithm 2 (DATA, then KEEPALIVE, then ACK) as inbound-queue classes,
 * and the service-distance functions of Appendix A (RSD, DISD), which
 * pick the tree distance whose senders a process serves first at each
 * receive. The core handles messages as the transport hands them over,
 * so the receive order belongs to the transport, here the simulator's.
 */
#ifndef FTC_BENCH_SIM_FTCO_H
#define FTC_BENCH_SIM_FTCO_H

#include <stdbool.h>
#include <stdint.h>

#include "ftcoll/ftco.h"

typedef enum ftc_sim_service {
    FTC_SERVICE_NONE = 0, /* the queue's head (by class under --queue kind) */
    FTC_SERVICE_RSD = 1,  /* randomized: distance d with probability 2^-d */
    FTC_SERVICE_DISD = 2  /* deterministic intervals: half the steps of an
                             interval of 4 x (neighbours at distance 1)
                             to distance 1, a quarter to 2, ... */
} ftc_sim_service_t;

/* "none", "rsd", "disd"; FTC_EINVAL otherwise. */
int ftc_sim_service_parse(const char *name, ftc_sim_service_t *out);
const char *ftc_sim_service_name(ftc_sim_service_t s);

/* Inbound-queue classes for --queue kind under ftco: DATA (UP, DOWN) 0,
 * KEEPALIVE 1, ACK 2 (the core's probes keep theirs, 2 and 3). */
void ftc_sim_ftco_kind_classes(uint8_t cls[16]);

/* Whether a message is the paper's DATA (UP, DOWN, or a root's EXCH):
 * what passes the value on, which ends a process's FinishTime
 * (sim_paper_metrics.h); ACKs and KEEPALIVEs are not. */
bool ftc_sim_ftco_is_data(const void *buf, size_t len);

/* The LogP backend's sends_first (ftcoll_logp.h): a DATA goes before
 * receives, as Algorithm 1 calls tree_progress() before it handles the
 * queue (and the authors' simulator sends before it reads). Without it
 * the KEEPALIVEs and probes of processes that wait (arrival spread) hold
 * the value back where it passes: receives come first in flogsim's
 * LogP. arg is unused. */
int ftc_sim_ftco_sends_first(const void *buf, size_t len, void *arg);

typedef struct ftc_sim_service_state ftc_sim_service_state_t;

/* State for n ranks on tree (rooted at root, as the family roots it):
 * per rank a step count (DISD) and a random stream seeded from seed
 * (RSD). FTC_EINVAL for NONE or a bad tree, FTC_ENOMEM. */
int ftc_sim_service_create(ftc_sim_service_t kind, const ftc_tree_t *tree,
                           uint32_t n, uint32_t root, uint64_t seed,
                           ftc_sim_service_state_t **out);
void ftc_sim_service_destroy(ftc_sim_service_state_t *st);

/* The LogP backend's service() and distance() (ftcoll_logp.h), arg the
 * state: the distance rank serves at this receive, and the tree distance
 * between rank and src. */
unsigned ftc_sim_service_next(void *arg, uint32_t rank);
unsigned ftc_sim_service_distance(void *arg, uint32_t rank, uint32_t src);

/* ftcoll-sim's ftco settings, completed and checked once its flags are
 * read: the tree from --tree and -k (each defaulting to the family's
 * 4-nomial; -k best: the k-nomial radix of least fault-free latency for
 * the run's n, L and o, for any algorithm, said on stderr), the queue
 * classes of Algorithm 2 under --queue kind (which --service implies),
 * late starters that receive before they start (Appendix B), DATA sent
 * before receives (unless receives_first), and the flags that belong to
 * ftco alone. 0, or 2
 * with *flag and *why naming the argument and the reason. */
struct ftc_scenario;
int ftc_sim_ftco_settle(struct ftc_scenario *s, bool tree_given,
                        bool k_given, bool k_best, const char **flag,
                        const char **why);

#endif
