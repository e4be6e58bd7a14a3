/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype and local-reduction tests: every op on every type against
 * hand-computed values, wraparound, unaligned and in-place buffers, and
 * argument checking.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ftcoll/datatype.h"
#include "ftcoll/error.h"
#include "check.h"

#define N 5

/*
 * Inputs and expected results per op, in the order sum, prod, min, max,
 * band, bor, bxor, land, lor. Element 4 is 0 (op) 0 for the logical ops.
 */
static const int64_t s_a[N] = {5, -3, 0, 12, 0};
static const int64_t s_b[N] = {3, 4, -6, 10, 0};
static const int64_t s_want[9][N] = {
    {8, 1, -6, 22, 0},    /* sum */
    {15, -12, 0, 120, 0}, /* prod */
    {3, -3, -6, 10, 0},   /* min */
    {5, 4, 0, 12, 0},     /* max */
    {1, 4, 0, 8, 0},      /* band: -3 & 4 == 4 */
    {7, -3, -6, 14, 0},   /* bor */
    {6, -7, -6, 6, 0},    /* bxor: -3 ^ 4 == -7 */
    {1, 1, 0, 1, 0},      /* land */
    {1, 1, 1, 1, 0},      /* lor */
};

static const uint64_t u_a[N] = {5, 60, 0, 12, 0};
static const uint64_t u_b[N] = {3, 4, 6, 10, 0};
static const uint64_t u_want[9][N] = {
    {8, 64, 6, 22, 0},    /* sum */
    {15, 240, 0, 120, 0}, /* prod */
    {3, 4, 0, 10, 0},     /* min */
    {5, 60, 6, 12, 0},    /* max */
    {1, 4, 0, 8, 0},      /* band */
    {7, 60, 6, 14, 0},    /* bor */
    {6, 56, 6, 6, 0},     /* bxor */
    {1, 1, 0, 1, 0},      /* land */
    {1, 1, 1, 1, 0},      /* lor */
};

static const double f_a[N] = {1.5, -2.0, 0.0, 3.0, 0.0};
static const double f_b[N] = {2.25, 4.0, -6.5, 0.5, 0.0};
static const double f_want[9][N] = {
    {3.75, 2.0, -6.5, 3.5, 0.0},  /* sum */
    {3.375, -8.0, 0.0, 1.5, 0.0}, /* prod (0 * -6.5 is -0.0 == 0) */
    {1.5, -2.0, -6.5, 0.5, 0.0},  /* min */
    {2.25, 4.0, 0.0, 3.0, 0.0},   /* max */
    {0}, {0}, {0},                /* bitwise: mismatch */
    {1, 1, 0, 1, 0},              /* land */
    {1, 1, 1, 1, 0},              /* lor */
};

/* Runs op on dtype over the inputs converted to T, aligned and at an odd
 * offset, and compares with the expectation converted to T. */
#define RUN_CASE(T, dtype, op, A, B, WANT)                                   \
    do {                                                                     \
        T x[N], y[N], w[N];                                                  \
        unsigned char ux[N * sizeof(T) + 1], uy[N * sizeof(T) + 3];          \
        for (int i = 0; i < N; i++) {                                        \
            x[i] = (T)(A)[i];                                                \
            y[i] = (T)(B)[i];                                                \
            w[i] = (T)(WANT)[i];                                             \
        }                                                                    \
        memcpy(ux + 1, x, sizeof(x));                                        \
        memcpy(uy + 3, y, sizeof(y));                                        \
        CHECK(ftc_reduce_local(x, y, N, dtype, op, NULL, NULL) == FTC_OK);   \
        CHECK(ftc_reduce_local(ux + 1, uy + 3, N, dtype, op, NULL, NULL)     \
              == FTC_OK);                                                    \
        memcpy(y, ux + 1, sizeof(y));                                        \
        bool same_ = true;                                                   \
        for (int i = 0; i < N; i++) /* ==: -0.0 equals 0.0 */               \
            same_ = same_ && x[i] == w[i] && y[i] == w[i];                   \
        if (!same_)                                                          \
            fprintf(stderr, "  %s %s\n", ftc_op_name(op),                    \
                    ftc_dtype_name(dtype));                                  \
        CHECK(same_);                                                        \
    } while (0)

static void test_ops(void)
{
    for (int op = 0; op < 9; op++) {
        ftc_op_t o = (ftc_op_t)op;
        RUN_CASE(int8_t, FTC_INT8, o, s_a, s_b, s_want[op]);
        RUN_CASE(int16_t, FTC_INT16, o, s_a, s_b, s_want[op]);
        RUN_CASE(int32_t, FTC_INT32, o, s_a, s_b, s_want[op]);
        RUN_CASE(int64_t, FTC_INT64, o, s_a, s_b, s_want[op]);
        RUN_CASE(uint8_t, FTC_UINT8, o, u_a, u_b, u_want[op]);
        RUN_CASE(uint16_t, FTC_UINT16, o, u_a, u_b, u_want[op]);
        RUN_CASE(uint32_t, FTC_UINT32, o, u_a, u_b, u_want[op]);
        RUN_CASE(uint64_t, FTC_UINT64, o, u_a, u_b, u_want[op]);
        if (o == FTC_BAND || o == FTC_BOR || o == FTC_BXOR) {
            float fx[N] = {0};
            double dx[N] = {0};
            CHECK(ftc_reduce_local(fx, fx, N, FTC_FLOAT, o, NULL, NULL)
                  == FTC_EMISMATCH);
            CHECK(ftc_reduce_local(dx, dx, N, FTC_DOUBLE, o, NULL, NULL)
                  == FTC_EMISMATCH);
            continue;
        }
        RUN_CASE(float, FTC_FLOAT, o, f_a, f_b, f_want[op]);
        RUN_CASE(double, FTC_DOUBLE, o, f_a, f_b, f_want[op]);
    }
}

static void test_wraparound(void)
{
    int32_t a32 = INT32_MAX, b32 = 1;
    CHECK(ftc_reduce_local(&a32, &b32, 1, FTC_INT32, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(a32 == INT32_MIN);
    a32 = INT32_MIN;
    b32 = -1;
    CHECK(ftc_reduce_local(&a32, &b32, 1, FTC_INT32, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(a32 == INT32_MAX);
    a32 = INT32_MIN;
    CHECK(ftc_reduce_local(&a32, &b32, 1, FTC_INT32, FTC_PROD, NULL, NULL)
          == FTC_OK);
    CHECK(a32 == INT32_MIN);
    a32 = 65536;
    b32 = 65536;
    CHECK(ftc_reduce_local(&a32, &b32, 1, FTC_INT32, FTC_PROD, NULL, NULL)
          == FTC_OK);
    CHECK(a32 == 0);

    int8_t a8[3] = {127, -128, 16}, b8[3] = {1, -1, 16};
    CHECK(ftc_reduce_local(a8, b8, 3, FTC_INT8, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(a8[0] == -128 && a8[1] == 127 && a8[2] == 32);
    int8_t c8[3] = {-128, 16, -1}, d8[3] = {-1, 16, -1};
    CHECK(ftc_reduce_local(c8, d8, 3, FTC_INT8, FTC_PROD, NULL, NULL)
          == FTC_OK);
    CHECK(c8[0] == -128 && c8[1] == 0 && c8[2] == 1);

    int16_t a16 = INT16_MAX, b16 = INT16_MAX;
    CHECK(ftc_reduce_local(&a16, &b16, 1, FTC_INT16, FTC_PROD, NULL, NULL)
          == FTC_OK);
    CHECK(a16 == 1); /* (2^15-1)^2 = 2^30 - 2^16 + 1 */

    int64_t a64 = INT64_MAX, b64 = 1;
    CHECK(ftc_reduce_local(&a64, &b64, 1, FTC_INT64, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(a64 == INT64_MIN);
    b64 = -1;
    CHECK(ftc_reduce_local(&a64, &b64, 1, FTC_INT64, FTC_PROD, NULL, NULL)
          == FTC_OK);
    CHECK(a64 == INT64_MIN);

    uint8_t u8 = 255, v8 = 1;
    CHECK(ftc_reduce_local(&u8, &v8, 1, FTC_UINT8, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(u8 == 0);
    uint16_t u16 = 65535, v16 = 65535; /* promotes to int in C */
    CHECK(ftc_reduce_local(&u16, &v16, 1, FTC_UINT16, FTC_PROD, NULL, NULL)
          == FTC_OK);
    CHECK(u16 == 1);
    uint32_t u32 = UINT32_MAX, v32 = UINT32_MAX;
    CHECK(ftc_reduce_local(&u32, &v32, 1, FTC_UINT32, FTC_PROD, NULL, NULL)
          == FTC_OK);
    CHECK(u32 == 1);
    uint64_t u64 = UINT64_MAX, v64 = 2;
    CHECK(ftc_reduce_local(&u64, &v64, 1, FTC_UINT64, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(u64 == 1);

    /* Signed and unsigned order differ although they share other kernels. */
    int8_t m8 = -1, n8 = 1;
    CHECK(ftc_reduce_local(&m8, &n8, 1, FTC_INT8, FTC_MAX, NULL, NULL)
          == FTC_OK);
    CHECK(m8 == 1);
    uint8_t m = 255, n = 1;
    CHECK(ftc_reduce_local(&m, &n, 1, FTC_UINT8, FTC_MAX, NULL, NULL)
          == FTC_OK);
    CHECK(m == 255);
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    CHECK(ftc_reduce_local(&hi, &lo, 1, FTC_INT64, FTC_MIN, NULL, NULL)
          == FTC_OK);
    CHECK(hi == INT64_MIN);
}

static void test_float_details(void)
{
    /* NaN: one already in inout stays, one arriving in `in` is ignored. */
    double x[2] = {NAN, 1.0}, y[2] = {1.0, NAN};
    CHECK(ftc_reduce_local(x, y, 2, FTC_DOUBLE, FTC_MIN, NULL, NULL)
          == FTC_OK);
    CHECK(isnan(x[0]) && x[1] == 1.0);
    float fx[2] = {NAN, 2.0f}, fy[2] = {3.0f, NAN};
    CHECK(ftc_reduce_local(fx, fy, 2, FTC_FLOAT, FTC_MAX, NULL, NULL)
          == FTC_OK);
    CHECK(isnan(fx[0]) && fx[1] == 2.0f);
    /* Logical: both zeros are false, NaN is true. */
    double l[3] = {-0.0, NAN, 0.0}, r[3] = {1.0, 1.0, -0.0};
    CHECK(ftc_reduce_local(l, r, 3, FTC_DOUBLE, FTC_LAND, NULL, NULL)
          == FTC_OK);
    CHECK(l[0] == 0.0 && l[1] == 1.0 && l[2] == 0.0);
    double p[2] = {-0.0, 0.0}, q[2] = {0.0, -0.0};
    CHECK(ftc_reduce_local(p, q, 2, FTC_DOUBLE, FTC_LOR, NULL, NULL)
          == FTC_OK);
    CHECK(p[0] == 0.0 && p[1] == 0.0);
    /* Infinities add like IEEE says. */
    float inf[1] = {INFINITY}, one[1] = {1.0f};
    CHECK(ftc_reduce_local(inf, one, 1, FTC_FLOAT, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(isinf(inf[0]) && inf[0] > 0);
}

/* Long, in-place and misaligned buffers agree with a scalar loop. */
static void test_buffers(void)
{
    enum { LEN = 1001 };
    static int32_t a[LEN], b[LEN], want[LEN];
    static unsigned char ua[LEN * 4 + 8], ub[LEN * 4 + 8];
    for (int i = 0; i < LEN; i++) {
        a[i] = i * 7919 - 3000000;
        b[i] = INT32_MAX - i * 104729;
        want[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
    }
    for (int off = 0; off < 4; off++) {
        memcpy(ua + off, a, sizeof(a));
        memcpy(ub + 3 - off, b, sizeof(b));
        CHECK(ftc_reduce_local(ua + off, ub + 3 - off, LEN, FTC_INT32,
                               FTC_SUM, NULL, NULL)
              == FTC_OK);
        CHECK(memcmp(ua + off, want, sizeof(want)) == 0);
    }
    /* inout and in the same buffer */
    static double d[LEN];
    for (int i = 0; i < LEN; i++)
        d[i] = i * 0.5;
    CHECK(ftc_reduce_local(d, d, LEN, FTC_DOUBLE, FTC_SUM, NULL, NULL)
          == FTC_OK);
    bool ok = true;
    for (int i = 0; i < LEN; i++)
        ok = ok && d[i] == (double)i;
    CHECK(ok);
    /* unaligned 64-bit min */
    int64_t s[3] = {-5, 9, INT64_MIN}, t[3] = {4, -9, 0};
    unsigned char us[sizeof(s) + 1], ut[sizeof(t) + 5];
    memcpy(us + 1, s, sizeof(s));
    memcpy(ut + 5, t, sizeof(t));
    CHECK(ftc_reduce_local(us + 1, ut + 5, 3, FTC_INT64, FTC_MIN, NULL, NULL)
          == FTC_OK);
    memcpy(s, us + 1, sizeof(s));
    CHECK(s[0] == -5 && s[1] == -9 && s[2] == INT64_MIN);
}

struct user_call {
    int calls;
    void *inout;
    const void *in;
    uint64_t count;
    ftc_dtype_t dtype;
};

static void user_max_abs(void *inout, const void *in, uint64_t count,
                         ftc_dtype_t dtype, void *arg)
{
    struct user_call *c = arg;
    c->calls++;
    c->inout = inout;
    c->in = in;
    c->count = count;
    c->dtype = dtype;
    int32_t *x = inout;
    const int32_t *y = in;
    for (uint64_t i = 0; i < count; i++) {
        int32_t ax = x[i] < 0 ? -x[i] : x[i], ay = y[i] < 0 ? -y[i] : y[i];
        x[i] = ay > ax ? y[i] : x[i];
    }
}

static void test_user_op(void)
{
    struct user_call c = {0, NULL, NULL, 0, FTC_INT8};
    int32_t x[3] = {1, -5, 3}, y[3] = {-2, 4, 3};
    CHECK(ftc_reduce_local(x, y, 3, FTC_INT32, FTC_USER, user_max_abs, &c)
          == FTC_OK);
    CHECK(c.calls == 1 && c.inout == x && c.in == y && c.count == 3
          && c.dtype == FTC_INT32);
    CHECK(x[0] == -2 && x[1] == -5 && x[2] == 3);
    CHECK(ftc_reduce_local(x, y, 3, FTC_INT32, FTC_USER, NULL, &c)
          == FTC_EINVAL);
    CHECK(ftc_reduce_local(NULL, NULL, 0, FTC_INT32, FTC_USER, user_max_abs,
                           &c)
          == FTC_OK);
    CHECK(c.calls == 1); /* nothing to combine: not called */
}

/* inout[i] += 3 * in[i] on doubles, counting the calls that were handed a
 * buffer misaligned for double (the promise in datatype.h is none). */
static int misaligned_calls;
static uint64_t elements_seen;

static void user_add3(void *inout, const void *in, uint64_t count,
                      ftc_dtype_t dtype, void *arg)
{
    (void)dtype;
    (void)arg;
    if ((uintptr_t)inout % _Alignof(double) != 0
        || (uintptr_t)in % _Alignof(double) != 0) {
        misaligned_calls++;
        return;
    }
    double *x = inout;
    const double *y = in;
    for (uint64_t i = 0; i < count; i++)
        x[i] += 3 * y[i];
    elements_seen += count;
}

/* Values from the wire sit at any offset: a user function still gets
 * aligned buffers, over slices when the values are long, with the same
 * result as one call. */
static void test_user_op_misaligned(void)
{
    enum { COUNT = 1000 };
    static unsigned char xs[COUNT * 8 + 8], ys[COUNT * 8 + 8];
    static const size_t offsets[][2] = {{1, 0}, {0, 4}, {3, 5}, {0, 0}};
    for (size_t k = 0; k < sizeof(offsets) / sizeof(offsets[0]); k++) {
        unsigned char *x = xs + offsets[k][0], *y = ys + offsets[k][1];
        for (int i = 0; i < COUNT; i++) {
            double a = i, b = 0.5 * i;
            memcpy(x + 8 * i, &a, 8);
            memcpy(y + 8 * i, &b, 8);
        }
        misaligned_calls = 0;
        elements_seen = 0;
        CHECK(ftc_reduce_local(x, y, COUNT, FTC_DOUBLE, FTC_USER, user_add3,
                               NULL)
              == FTC_OK);
        CHECK(misaligned_calls == 0 && elements_seen == COUNT);
        int wrong = 0;
        for (int i = 0; i < COUNT; i++) {
            double got;
            memcpy(&got, x + 8 * i, 8);
            wrong += got != i + 1.5 * i;
        }
        CHECK(wrong == 0);
        double y0;
        memcpy(&y0, y, 8);
        CHECK(y0 == 0.0); /* in is not written */
    }
}

static void test_checks(void)
{
    for (int d = 0; d < FTC_DTYPE_COUNT; d++) {
        bool is_float = d == FTC_FLOAT || d == FTC_DOUBLE;
        for (int o = 0; o < FTC_OP_COUNT; o++) {
            int rc = ftc_op_check((ftc_op_t)o, (ftc_dtype_t)d, NULL);
            int want = FTC_OK;
            if (o == FTC_USER)
                want = FTC_EINVAL;
            else if (is_float
                     && (o == FTC_BAND || o == FTC_BOR || o == FTC_BXOR))
                want = FTC_EMISMATCH;
            CHECK(rc == want);
        }
        CHECK(ftc_op_check(FTC_USER, (ftc_dtype_t)d, user_max_abs) == FTC_OK);
    }
    CHECK(ftc_op_check(FTC_OP_COUNT, FTC_INT32, NULL) == FTC_EINVAL);
    CHECK(ftc_op_check((ftc_op_t)-1, FTC_INT32, NULL) == FTC_EINVAL);
    CHECK(ftc_op_check(FTC_SUM, FTC_DTYPE_COUNT, NULL) == FTC_EINVAL);
    CHECK(ftc_op_check(FTC_SUM, (ftc_dtype_t)-1, NULL) == FTC_EINVAL);
    CHECK(ftc_op_check(FTC_USER, FTC_DTYPE_COUNT, user_max_abs)
          == FTC_EINVAL);

    int32_t v = 1;
    CHECK(ftc_reduce_local(NULL, &v, 1, FTC_INT32, FTC_SUM, NULL, NULL)
          == FTC_EINVAL);
    CHECK(ftc_reduce_local(&v, NULL, 1, FTC_INT32, FTC_SUM, NULL, NULL)
          == FTC_EINVAL);
    CHECK(ftc_reduce_local(NULL, NULL, 0, FTC_INT32, FTC_SUM, NULL, NULL)
          == FTC_OK);
    CHECK(ftc_reduce_local(&v, &v, 1, FTC_DTYPE_COUNT, FTC_SUM, NULL, NULL)
          == FTC_EINVAL);
    CHECK(ftc_reduce_local(&v, &v, 1, FTC_INT32, FTC_OP_COUNT, NULL, NULL)
          == FTC_EINVAL);
    float f = 1.0f;
    CHECK(ftc_reduce_local(&f, &f, 1, FTC_FLOAT, FTC_BXOR, NULL, NULL)
          == FTC_EMISMATCH);
    CHECK(f == 1.0f);
    CHECK(v == 1);
}

static void test_names(void)
{
    static const char *const dnames[FTC_DTYPE_COUNT] = {
        "int8", "int16", "int32", "int64", "uint8",
        "uint16", "uint32", "uint64", "float", "double"};
    static const size_t sizes[FTC_DTYPE_COUNT] = {1, 2, 4, 8, 1,
                                                  2, 4, 8, 4, 8};
    static const char *const onames[FTC_OP_COUNT] = {
        "sum", "prod", "min", "max", "band", "bor", "bxor", "land", "lor",
        "user"};
    for (int d = 0; d < FTC_DTYPE_COUNT; d++) {
        ftc_dtype_t parsed = FTC_DTYPE_COUNT;
        CHECK(strcmp(ftc_dtype_name((ftc_dtype_t)d), dnames[d]) == 0);
        CHECK(ftc_dtype_parse(dnames[d], &parsed) == FTC_OK
              && parsed == (ftc_dtype_t)d);
        CHECK(ftc_dtype_size((ftc_dtype_t)d) == sizes[d]);
    }
    for (int o = 0; o < FTC_OP_COUNT; o++) {
        ftc_op_t parsed = FTC_OP_COUNT;
        CHECK(strcmp(ftc_op_name((ftc_op_t)o), onames[o]) == 0);
        CHECK(ftc_op_parse(onames[o], &parsed) == FTC_OK
              && parsed == (ftc_op_t)o);
    }
    CHECK(ftc_dtype_size(FTC_DTYPE_COUNT) == 0);
    CHECK(ftc_dtype_size((ftc_dtype_t)-1) == 0);
    CHECK(strcmp(ftc_dtype_name(FTC_DTYPE_COUNT), "?") == 0);
    CHECK(strcmp(ftc_dtype_name((ftc_dtype_t)-3), "?") == 0);
    CHECK(strcmp(ftc_op_name(FTC_OP_COUNT), "?") == 0);
    CHECK(strcmp(ftc_op_name((ftc_op_t)-1), "?") == 0);

    ftc_dtype_t d = FTC_INT16;
    ftc_op_t o = FTC_MAX;
    CHECK(ftc_dtype_parse("int", &d) == FTC_EINVAL && d == FTC_INT16);
    CHECK(ftc_dtype_parse("INT32", &d) == FTC_EINVAL && d == FTC_INT16);
    CHECK(ftc_dtype_parse("", &d) == FTC_EINVAL);
    CHECK(ftc_dtype_parse(NULL, &d) == FTC_EINVAL);
    CHECK(ftc_dtype_parse("int32", NULL) == FTC_EINVAL);
    CHECK(ftc_op_parse("add", &o) == FTC_EINVAL && o == FTC_MAX);
    CHECK(ftc_op_parse("?", &o) == FTC_EINVAL);
    CHECK(ftc_op_parse(NULL, &o) == FTC_EINVAL);
    CHECK(ftc_op_parse("sum", NULL) == FTC_EINVAL);
}

int main(void)
{
    test_ops();
    test_wraparound();
    test_float_details();
    test_buffers();
    test_user_op();
    test_user_op_misaligned();
    test_checks();
    test_names();
    return check_report();
}
