/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A transport that goes nowhere, for tests that drive one context's API
 * and bookkeeping and never need a message to arrive: every send is
 * taken and finished at once (FTC_SEND_INLINE), the timer is never set,
 * and the clock stands still at 1 ns.
 */
#ifndef FTC_TEST_NULL_TRANSPORT_H
#define FTC_TEST_NULL_TRANSPORT_H

#include "ftcoll/transport.h"

extern const ftc_transport_ops_t ftc_test_null_ops;

#endif
