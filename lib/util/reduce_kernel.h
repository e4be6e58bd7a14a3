/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The element-wise kernel of a built-in operator on a datatype
 * (util/datatype.c), for the core to choose once per operation instead
 * of having ftc_reduce_local look it up for every reduction.
 *
 * Why: ftc_reduce_local checks its operator, datatype, count and buffers
 * on every call, some 20 instructions of the ~25 that one 8-byte sum
 * costs; an operation's arguments were checked when it was created and
 * do not change, so its reductions need only the kernel's own loop.
 */
#ifndef FTC_UTIL_REDUCE_KERNEL_H
#define FTC_UTIL_REDUCE_KERNEL_H

#include <stdint.h>

#include "ftcoll/datatype.h"

#pragma GCC visibility push(hidden)

/* inout[i] = inout[i] OP in[i] for i < count; inout and in may be the
 * same buffer, either may be misaligned for the type. */
typedef void (*ftc_reduce_kernel_fn)(void *inout, const void *in,
                                     uint64_t count);

/* The kernel of op on dtype, or NULL when there is none: FTC_USER (the
 * caller's function, with its argument), an operator not defined on the
 * type or values out of range (ftc_op_check says which). */
ftc_reduce_kernel_fn ftc_reduce_kernel(ftc_op_t op, ftc_dtype_t dtype);

#pragma GCC visibility pop

#endif
