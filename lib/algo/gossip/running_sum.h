/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A running sum kept as two doubles, hi + lo (compensated, "double-
 * double"): every term is added without losing the bits that fall below
 * hi's last place, which are carried in lo.
 *
 * Why PCF needs it: a process's mass is its input minus a running sum of
 * flows, e = x - phi (pcf.c). For a sum (FTC_GOSSIP_SUM) the root's input
 * weight is 1 and, once the weight has spread, it holds about 1/n of it:
 * phi's weight is 1 - 1/n, and each term added to a plain double there
 * rounds at 2^-53 of 1, which is 2^-53 * n of the root's own weight. At
 * n = 2^14 that moved the root's estimate by about 1e-12 per iteration,
 * so its local test (changes within a target of 1e-15) could pass only
 * after it had drained a fifth of the weight back from its delivered
 * neighbours, and even then a rounding step above the target reset the
 * window now and then: the root delivered last, thousands of iterations
 * after everyone else (docs/gossip.md, "The simulator and the paper's
 * figures"). Carried in hi + lo, e keeps the accuracy of e itself.
 */
#ifndef FTC_ALGO_GOSSIP_RUNNING_SUM_H
#define FTC_ALGO_GOSSIP_RUNNING_SUM_H

/* *hi + *lo := *hi + *lo + a, exactly but for a rounding at lo's
 * last place (Knuth's TwoSum, then the error and the old lo folded back
 * so that |lo| stays within half of hi's last place). */
static inline void ftc_gossip_running_add(double *hi, double *lo, double a)
{
    double s = *hi + a;
    double a_part = s - *hi;
    double err = (*hi - (s - a_part)) + (a - a_part);
    err += *lo;
    double t = s + err;
    *lo = err - (t - s);
    *hi = t;
}

#endif
