/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gossip family inside the library: the operation every algorithm
 * shares (neighbour links, the estimate, the local convergence test, the
 * lingering end) and the table by which push-sum, push-flow and PCF plug
 * their exchange rules into it.
 */
#ifndef FTC_ALGO_GOSSIP_H
#define FTC_ALGO_GOSSIP_H

#include "ftcoll/gossip.h"
#include "core/op.h"
#include "algo/gossip/echo.h"

#pragma GCC visibility push(hidden)

/* One neighbour, as this process sees the link to it. */
typedef struct ftc_gossip_link {
    uint32_t peer;       /* group rank */
    bool alive;          /* not found failed */
    bool peer_done;      /* it has delivered (its DONE flag) */
    bool peer_saw_done;  /* it has seen our DONE */
    bool watched;        /* we hold a failure-monitor watch on it */
    bool unsent;         /* our last push to it has not left yet: the
                            transport still holds it (op.c, pacing) */
    bool spoke;          /* since our estimate last moved by more than
                            the target, mass came from it, or any
                            message once it had delivered (op.c,
                            all_spoke) */
    bool peer_unsettled; /* its latest message had UNSETTLED: it still
                            waits for its own flow to land (op.c,
                            all_settled) */
    bool leads;          /* PCF: this end (the lower rank) decides when
                            the passive flow is cancelled */
    bool heard_set;      /* PCF follower: heard holds this round's value */
    bool cancel_due;     /* PCF leader: the follower holds the negation of
                            our passive flow: cancel it as we next send */
    uint32_t r;          /* PCF: the link's round; flow r mod 2 is active */
    uint64_t wrote_at;   /* our iteration when we last wrote to it (op.c,
                            ready_link) */
    uint32_t pushed_seq; /* push-flow: the sequence number (echo.h) of our
                            latest message that pushed on this link */
    uint32_t peer_pushed_seq; /* push-flow: the peer's pushed_seq as its
                                 latest message we applied stated it */
    ftc_gossip_echo_t echo; /* what of our flow the peer has applied
                               (echo.h; op.c, all_settled) */
    double *f;           /* push-flow: f_ij (m); PCF: f_ij1, f_ij2 (2m) */
    double *cancelled;   /* PCF: passive flows absorbed into phi (m), for
                            the mass account only; kept when the
                            neighbour is excluded, as the record of what
                            was written off with it */
    double *heard;       /* PCF follower: the leader's passive flow as its
                            last message of this round stated it (m) */
} ftc_gossip_link_t;

typedef struct ftc_gossip_op ftc_gossip_op_t;

/* An algorithm's exchange rules. m = count + 1 (the values, then the
 * weight); every vector below has m doubles. */
typedef struct ftc_gossip_rules {
    const char *name;
    uint32_t link_flows;     /* flow vectors per link: 0, 1 or 2 */
    bool tolerant;           /* loss and failures keep the mass */
    /* Payload bytes of one message (the echo trailer comes after). */
    size_t (*payload_len)(uint32_t m);
    /* This process's current (s, w): its share of the mass. */
    void (*mass)(const ftc_gossip_op_t *g, double *e);
    /* Build the message to link l into out; a push first moves half of
     * this process's mass to l (the paper's "on send"), a sync does not. */
    void (*build)(ftc_gossip_op_t *g, ftc_gossip_link_t *l, bool push,
                  uint8_t *out);
    /* Whether a push to l may move mass now; false: the message goes as
     * a sync (push-flow: our last push there is not echoed yet). NULL:
     * always. */
    bool (*may_push)(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l);
    /* A message from l (payload_len bytes, already length-checked).
     * Returns whether its flows were applied: false when they were
     * ignored (PCF: a stale or corrupted round), so the message is not
     * echoed as taken in. */
    bool (*receive)(ftc_gossip_op_t *g, ftc_gossip_link_t *l,
                    const uint8_t *payload);
    /* l's neighbour failed: exclude it (the flows to it set to zero). */
    void (*lose)(ftc_gossip_op_t *g, ftc_gossip_link_t *l);
    /* The relative accuracy to which this process's arithmetic resolves
     * its estimate est from its mass e (push_flow.c, pf_rounding_floor);
     * NULL: the target alone decides (PCF's and push-sum's masses hold no
     * sums of history-sized terms). */
    double (*rounding_floor)(const ftc_gossip_op_t *g, const double *e,
                             const double *est);
    /* For the mass account: what this process records as sent over l
     * (its flows and, for PCF, what it cancelled on l); NULL for push-sum. */
    void (*outflow)(const ftc_gossip_op_t *g, const ftc_gossip_link_t *l,
                    double *t);
} ftc_gossip_rules_t;

extern const ftc_gossip_rules_t ftc_gossip_push_sum_rules;
extern const ftc_gossip_rules_t ftc_gossip_push_flow_rules;
extern const ftc_gossip_rules_t ftc_gossip_pcf_rules;

struct ftc_gossip_op {
    ftc_cop_t base;
    const ftc_gossip_rules_t *rules;
    ftc_gossip_params_t params;  /* a copy; the overlay pointers cleared */
    uint32_t m;                  /* count + 1 */
    double *x;                   /* initial (x_i, w_i) */
    /* push-sum: the current mass; push-flow: unused; PCF: phi_i, the
     * running sum of flows and cancelled flows (the efficient variant) or
     * of cancelled flows only (bit-flip tolerant); */
    double *phi;
    double *phi_low;             /* PCF: what phi's rounding left out,
                                    so that phi + phi_low is the exact
                                    running sum (running_sum.h: a sum's
                                    root holds 1/n of the weight as
                                    1 - phi) */
    double *written_off;         /* PCF: cancelled flows of lost links */
    double *est, *prev_est;      /* count each */
    double *scratch;             /* m */
    double *history;             /* the estimates of the last history_len
                                    iterations (count each; NaN: none),
                                    for how far an unechoed push is from
                                    the estimate now (op.c, deviation) */
    uint32_t history_len;
    uint8_t *msg;                /* one payload */
    ftc_gossip_link_t *links;
    uint32_t nlinks, nalive;
    uint32_t rr;                 /* round-robin cursor */
    uint64_t iterations;
    uint32_t stable_needed, stable_count;
    double target, err;
    double floor_used;           /* the largest change above the target
                                    that the rounding floor let count as
                                    quiet since the estimate last moved
                                    (op.c, quiet_threshold); 0: none */
    bool received;               /* mass came in since the last
                                    iteration (op.c, convergence_step) */
    double weight_unit;          /* a process's share of the weight: 1
                                    for an average, 1/n for a sum */
    bool have_est;
    bool had_est;                /* prev_est holds the last estimate there
                                    was (op.c, convergence_step) */
    bool ticking;                /* iterating (its timer armed) */
    bool gave_up;                /* stopped at 2 * max_iterations */
    bool recovering;             /* delivered, iterating again after a
                                    failure (op.c, maybe_wake) */
    uint64_t delivered_at;       /* iterations when it delivered */
    uint64_t woke_at;            /* iterations when it last woke */
    uint32_t wakes_left;         /* wakes a RECOVER push may still cause */
    bool displaced;              /* took in a RECOVER push before it
                                    delivered: its own pushes carry mass
                                    a failure displaced, and say so
                                    (op.c, gossip_on_timer) */
    bool watching_root;
    uint32_t lost;
    uint32_t weightless;         /* consecutive iterations without positive
                                    weight since this process knew of a
                                    failure (op.c, no_estimate_exists) */
};

/* The local estimate from a mass vector e: est = e[0..m-2] / e[m-1].
 * false when the weight is not positive (no estimate yet). */
bool ftc_gossip_estimate(uint32_t m, const double *e, double *est);

/* Test hook: called once per gossip operation as it is destroyed, with
 * its final state, so a checker can account for the mass. NULL: none. */
typedef struct ftc_gossip_final {
    ftc_group_t *group;
    uint32_t rank;               /* group rank */
    uint32_t m;
    const double *x, *mass, *written_off; /* m each; written_off NULL
                                             unless PCF */
    uint32_t nlinks;
    const ftc_gossip_link_t *links;
    const ftc_gossip_op_t *op;   /* for rules->outflow */
} ftc_gossip_final_t;
typedef void (*ftc_gossip_observer_fn)(const ftc_gossip_final_t *fin,
                                       void *arg);
void ftc_gossip_set_observer(ftc_gossip_observer_fn fn, void *arg);

/* Test and simulator hook: called after each iteration's convergence
 * step with the operation (its est holds the current estimate when
 * have_est), so a simulator can trace every process's accuracy over the
 * run (ftcoll-sim --trace-error). NULL: none. */
typedef void (*ftc_gossip_tick_fn)(const ftc_gossip_op_t *g, void *arg);
void ftc_gossip_set_tick_observer(ftc_gossip_tick_fn fn, void *arg);

/* The create function of all three entries (algo/gossip/op.c). */
int ftc_gossip_op_create(ftc_group_t *g, const ftc_coll_args_t *args,
                         const void *params, ftc_coll_t coll,
                         ftc_cop_t **out);

#pragma GCC visibility pop

#endif
