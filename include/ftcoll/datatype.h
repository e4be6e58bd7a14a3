/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatypes and reduction operations. Values travel in the sender's native
 * byte order; the wire header marks it, and a message of the other byte
 * order is dropped (ftcoll targets homogeneous clusters).
 */
#ifndef FTCOLL_DATATYPE_H
#define FTCOLL_DATATYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ftc_dtype {
    FTC_INT8, FTC_INT16, FTC_INT32, FTC_INT64,
    FTC_UINT8, FTC_UINT16, FTC_UINT32, FTC_UINT64,
    FTC_FLOAT, FTC_DOUBLE,
    FTC_DTYPE_COUNT
} ftc_dtype_t;

typedef enum ftc_op {
    FTC_SUM, FTC_PROD, FTC_MIN, FTC_MAX,
    FTC_BAND, FTC_BOR, FTC_BXOR, /* integers only */
    FTC_LAND, FTC_LOR,           /* any type: zero is false; the result
                                    is 1 or 0 of the type */
    FTC_USER,                    /* a user function, commutative and associative */
    FTC_OP_COUNT
} ftc_op_t;

/*
 * Built-in operations: signed integer SUM and PROD wrap around (two's
 * complement) instead of overflowing. Floating MIN and MAX keep a NaN that
 * is already in inout and ignore one that arrives in in.
 *
 * A user reduction: inout[i] = inout[i] (op) in[i] for i < count; it is not
 * called when count is 0. It must be commutative and associative: the
 * corrected algorithms combine values in an order that depends on which
 * processes failed. inout and in are aligned for dtype: they may be read
 * as arrays of its C type. The library may split one combination into
 * several calls over consecutive slices of the elements.
 */
typedef void (*ftc_user_op_fn)(void *inout, const void *in, uint64_t count,
                               ftc_dtype_t dtype, void *arg);

/* Size in bytes of one element, or 0 for an invalid dtype. */
size_t ftc_dtype_size(ftc_dtype_t dtype);

/* "int32", "double", ...; "?" for an invalid dtype. */
const char *ftc_dtype_name(ftc_dtype_t dtype);
const char *ftc_op_name(ftc_op_t op);

/* Parse the names above; FTC_OK or FTC_EINVAL. */
int ftc_dtype_parse(const char *name, ftc_dtype_t *out);
int ftc_op_parse(const char *name, ftc_op_t *out);

/* FTC_OK if op is defined on dtype, FTC_EMISMATCH (e.g. BAND on float) or
 * FTC_EINVAL (out of range, or FTC_USER without a function). */
int ftc_op_check(ftc_op_t op, ftc_dtype_t dtype, ftc_user_op_fn user_fn);

/* inout = inout (op) in, element-wise. Checks its arguments like
 * ftc_op_check and returns FTC_EINVAL for NULL buffers with count > 0. */
int ftc_reduce_local(void *inout, const void *in, uint64_t count,
                     ftc_dtype_t dtype, ftc_op_t op,
                     ftc_user_op_fn user_fn, void *user_arg);

#ifdef __cplusplus
}
#endif
#endif
