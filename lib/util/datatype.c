/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatypes and element-wise reductions.
 *
 * Every operation whose result bits do not depend on signedness (SUM, PROD,
 * the bitwise and the logical ones) runs on the unsigned type of the same
 * width. That is what makes signed SUM and PROD wrap around without signed
 * overflow, which would be undefined behaviour; accessing an intN_t object
 * through its uintN_t counterpart is allowed by the aliasing rules. Only
 * MIN and MAX need signed kernels.
 *
 * Floating-point MIN and MAX use plain comparisons: a NaN already in inout
 * stays, a NaN arriving in `in` is ignored, and +0.0 and -0.0 compare equal
 * so inout's is kept. With NaNs present the result therefore depends on the
 * order in which values are combined, which the corrected algorithms do not
 * fix; MPI leaves this unspecified too.
 *
 * LAND and LOR treat zero as false (for floats, both zeros are false and NaN
 * is true) and yield 1 or 0 of the element type.
 */
#include "ftcoll/datatype.h"
#include "ftcoll/error.h"
#include "util/reduce_kernel.h"

#include <stdbool.h>
#include <string.h>

typedef ftc_reduce_kernel_fn kernel_fn;

static bool is_aligned(const void *p, size_t align)
{
    return (uintptr_t)p % align == 0;
}

/*
 * One kernel: inout[i] = EXPR(a = inout[i], b = in[i]). Buffers from the
 * wire are often misaligned for T, so that case goes through memcpy, which
 * the compiler turns into plain loads; the aligned case keeps a typed loop
 * the compiler can vectorise. inout and in may be the same buffer.
 */
#define KERNEL(NAME, T, EXPR)                                                 \
    static void NAME(void *inout, const void *in, uint64_t count)            \
    {                                                                         \
        if (is_aligned(inout, _Alignof(T)) && is_aligned(in, _Alignof(T))) { \
            T *x = inout;                                                     \
            const T *y = in;                                                  \
            for (uint64_t i = 0; i < count; i++) {                            \
                T a = x[i], b = y[i];                                         \
                x[i] = (T)(EXPR);                                             \
            }                                                                 \
            return;                                                           \
        }                                                                     \
        unsigned char *xb = inout;                                            \
        const unsigned char *yb = in;                                         \
        for (uint64_t i = 0; i < count; i++) {                                \
            T a, b, res;                                                      \
            memcpy(&a, xb + i * sizeof(T), sizeof(T));                        \
            memcpy(&b, yb + i * sizeof(T), sizeof(T));                        \
            res = (T)(EXPR);                                                  \
            memcpy(xb + i * sizeof(T), &res, sizeof(T));                      \
        }                                                                     \
    }

#define UNSIGNED_KERNELS(NAME, EXPR)   \
    KERNEL(NAME##_u8, uint8_t, EXPR)   \
    KERNEL(NAME##_u16, uint16_t, EXPR) \
    KERNEL(NAME##_u32, uint32_t, EXPR) \
    KERNEL(NAME##_u64, uint64_t, EXPR)

#define SIGNED_KERNELS(NAME, EXPR)   \
    KERNEL(NAME##_i8, int8_t, EXPR)   \
    KERNEL(NAME##_i16, int16_t, EXPR) \
    KERNEL(NAME##_i32, int32_t, EXPR) \
    KERNEL(NAME##_i64, int64_t, EXPR)

#define FLOAT_KERNELS(NAME, EXPR)   \
    KERNEL(NAME##_f, float, EXPR)   \
    KERNEL(NAME##_d, double, EXPR)

/* The 0u + and 1u * keep narrow types from promoting to (signed) int,
 * whose overflow would be undefined: 65535 * 65535 does not fit an int. */
UNSIGNED_KERNELS(sum, 0u + a + b)
UNSIGNED_KERNELS(prod, 1u * a * b)
UNSIGNED_KERNELS(min, b < a ? b : a)
UNSIGNED_KERNELS(max, b > a ? b : a)
UNSIGNED_KERNELS(band, a & b)
UNSIGNED_KERNELS(bor, a | b)
UNSIGNED_KERNELS(bxor, a ^ b)
UNSIGNED_KERNELS(land, a != 0 && b != 0)
UNSIGNED_KERNELS(lor, a != 0 || b != 0)

SIGNED_KERNELS(min, b < a ? b : a)
SIGNED_KERNELS(max, b > a ? b : a)

FLOAT_KERNELS(sum, a + b)
FLOAT_KERNELS(prod, a * b)
FLOAT_KERNELS(min, b < a ? b : a)
FLOAT_KERNELS(max, b > a ? b : a)
FLOAT_KERNELS(land, a != 0 && b != 0)
FLOAT_KERNELS(lor, a != 0 || b != 0)

/* Signed and unsigned integers share the kernel of their width. */
#define INTEGER_ROW(NAME)                                   \
    [FTC_INT8] = NAME##_u8, [FTC_INT16] = NAME##_u16,       \
    [FTC_INT32] = NAME##_u32, [FTC_INT64] = NAME##_u64,     \
    [FTC_UINT8] = NAME##_u8, [FTC_UINT16] = NAME##_u16,     \
    [FTC_UINT32] = NAME##_u32, [FTC_UINT64] = NAME##_u64

#define ORDERED_ROW(NAME)                                   \
    [FTC_INT8] = NAME##_i8, [FTC_INT16] = NAME##_i16,       \
    [FTC_INT32] = NAME##_i32, [FTC_INT64] = NAME##_i64,     \
    [FTC_UINT8] = NAME##_u8, [FTC_UINT16] = NAME##_u16,     \
    [FTC_UINT32] = NAME##_u32, [FTC_UINT64] = NAME##_u64,   \
    [FTC_FLOAT] = NAME##_f, [FTC_DOUBLE] = NAME##_d

#define ARITH_ROW(NAME) \
    INTEGER_ROW(NAME), [FTC_FLOAT] = NAME##_f, [FTC_DOUBLE] = NAME##_d

/* NULL: the operation is not defined on the type (FTC_EMISMATCH). */
static const kernel_fn kernels[FTC_OP_COUNT][FTC_DTYPE_COUNT] = {
    [FTC_SUM] = {ARITH_ROW(sum)},
    [FTC_PROD] = {ARITH_ROW(prod)},
    [FTC_MIN] = {ORDERED_ROW(min)},
    [FTC_MAX] = {ORDERED_ROW(max)},
    [FTC_BAND] = {INTEGER_ROW(band)},
    [FTC_BOR] = {INTEGER_ROW(bor)},
    [FTC_BXOR] = {INTEGER_ROW(bxor)},
    [FTC_LAND] = {ARITH_ROW(land)},
    [FTC_LOR] = {ARITH_ROW(lor)},
};

static const size_t dtype_sizes[FTC_DTYPE_COUNT] = {
    [FTC_INT8] = 1, [FTC_INT16] = 2, [FTC_INT32] = 4, [FTC_INT64] = 8,
    [FTC_UINT8] = 1, [FTC_UINT16] = 2, [FTC_UINT32] = 4, [FTC_UINT64] = 8,
    [FTC_FLOAT] = sizeof(float), [FTC_DOUBLE] = sizeof(double),
};

static const char *const dtype_names[FTC_DTYPE_COUNT] = {
    [FTC_INT8] = "int8", [FTC_INT16] = "int16",
    [FTC_INT32] = "int32", [FTC_INT64] = "int64",
    [FTC_UINT8] = "uint8", [FTC_UINT16] = "uint16",
    [FTC_UINT32] = "uint32", [FTC_UINT64] = "uint64",
    [FTC_FLOAT] = "float", [FTC_DOUBLE] = "double",
};

static const char *const op_names[FTC_OP_COUNT] = {
    [FTC_SUM] = "sum", [FTC_PROD] = "prod",
    [FTC_MIN] = "min", [FTC_MAX] = "max",
    [FTC_BAND] = "band", [FTC_BOR] = "bor", [FTC_BXOR] = "bxor",
    [FTC_LAND] = "land", [FTC_LOR] = "lor",
    [FTC_USER] = "user",
};

/* Enums may be signed: the cast sends negative values out of range too. */
static bool dtype_valid(ftc_dtype_t dtype)
{
    return (unsigned)dtype < FTC_DTYPE_COUNT;
}

static bool op_valid(ftc_op_t op)
{
    return (unsigned)op < FTC_OP_COUNT;
}

size_t ftc_dtype_size(ftc_dtype_t dtype)
{
    return dtype_valid(dtype) ? dtype_sizes[dtype] : 0;
}

const char *ftc_dtype_name(ftc_dtype_t dtype)
{
    return dtype_valid(dtype) ? dtype_names[dtype] : "?";
}

const char *ftc_op_name(ftc_op_t op)
{
    return op_valid(op) ? op_names[op] : "?";
}

static int parse_name(const char *name, const char *const *names,
                      unsigned count, unsigned *out)
{
    if (name == NULL)
        return FTC_EINVAL;
    for (unsigned i = 0; i < count; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = i;
            return FTC_OK;
        }
    }
    return FTC_EINVAL;
}

int ftc_dtype_parse(const char *name, ftc_dtype_t *out)
{
    unsigned i;
    if (out == NULL
        || parse_name(name, dtype_names, FTC_DTYPE_COUNT, &i) != FTC_OK)
        return FTC_EINVAL;
    *out = (ftc_dtype_t)i;
    return FTC_OK;
}

int ftc_op_parse(const char *name, ftc_op_t *out)
{
    unsigned i;
    if (out == NULL || parse_name(name, op_names, FTC_OP_COUNT, &i) != FTC_OK)
        return FTC_EINVAL;
    *out = (ftc_op_t)i;
    return FTC_OK;
}

int ftc_op_check(ftc_op_t op, ftc_dtype_t dtype, ftc_user_op_fn user_fn)
{
    if (!op_valid(op) || !dtype_valid(dtype))
        return FTC_EINVAL;
    if (op == FTC_USER)
        return user_fn != NULL ? FTC_OK : FTC_EINVAL;
    return kernels[op][dtype] != NULL ? FTC_OK : FTC_EMISMATCH;
}

ftc_reduce_kernel_fn ftc_reduce_kernel(ftc_op_t op, ftc_dtype_t dtype)
{
    if (!op_valid(op) || !dtype_valid(dtype) || op == FTC_USER)
        return NULL;
    return kernels[op][dtype];
}

/* Elements of at most 8 bytes per stage: 2 KiB of stack on each side. */
#define USER_STAGE_BYTES 2048u

/*
 * A user function is promised buffers aligned for dtype (datatype.h), so
 * it may read them as typed arrays. Values taken off the wire sit where
 * the message put them, often misaligned: those go through aligned stages
 * on the stack, a slice of consecutive elements at a time. The function
 * is element-wise, so slices give the same result as one call.
 */
static void user_reduce(void *inout, const void *in, uint64_t count,
                        ftc_dtype_t dtype, ftc_user_op_fn user_fn,
                        void *user_arg)
{
    size_t size = ftc_dtype_size(dtype);
    if (is_aligned(inout, size) && is_aligned(in, size)) {
        user_fn(inout, in, count, dtype, user_arg);
        return;
    }
    _Alignas(8) unsigned char x[USER_STAGE_BYTES];
    _Alignas(8) unsigned char y[USER_STAGE_BYTES];
    unsigned char *xb = inout;
    const unsigned char *yb = in;
    uint64_t per_stage = USER_STAGE_BYTES / size;
    for (uint64_t done = 0; done < count;) {
        uint64_t k = count - done < per_stage ? count - done : per_stage;
        size_t nb = (size_t)k * size;
        memcpy(x, xb + done * size, nb);
        memcpy(y, yb + done * size, nb);
        user_fn(x, y, k, dtype, user_arg);
        memcpy(xb + done * size, x, nb);
        done += k;
    }
}

int ftc_reduce_local(void *inout, const void *in, uint64_t count,
                     ftc_dtype_t dtype, ftc_op_t op,
                     ftc_user_op_fn user_fn, void *user_arg)
{
    int rc = ftc_op_check(op, dtype, user_fn);
    if (rc != FTC_OK)
        return rc;
    if (count == 0)
        return FTC_OK;
    if (inout == NULL || in == NULL)
        return FTC_EINVAL;
    if (op == FTC_USER)
        user_reduce(inout, in, count, dtype, user_fn, user_arg);
    else
        kernels[op][dtype](inout, in, count);
    return FTC_OK;
}
