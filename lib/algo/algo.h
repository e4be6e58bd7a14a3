/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every algorithm module includes: the core's services (operations,
 * sending, the failure monitor), the pure topology, and helpers that join
 * the two.
 */
#ifndef FTC_ALGO_ALGO_H
#define FTC_ALGO_ALGO_H

#include "core/monitor.h"
#include "core/op.h"
#include "core/send.h"
#include "topo/topo.h"

#pragma GCC visibility push(hidden)

#pragma GCC visibility pop

#endif
