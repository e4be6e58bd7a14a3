/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checks every test program uses. A check never stops the program: it
 * counts a pass or a failure, and a failure prints where (file:line), what
 * was checked (the expression as written) and, for the comparing forms,
 * both sides' values, so a failed run tells what went wrong without a
 * debugger. check_report() prints the closing line "N passed, M failed"
 * alone on stdout (meson and the scripts read it) and returns the exit
 * status: non-zero when anything failed.
 *
 *   CHECK(cond)                 cond is true
 *   CHECK_MSG(cond, fmt, ...)   the same, and on failure a printf message
 *   CHECK_EQ(a, b)              a == b; integers, floating point, pointers
 *   CHECK_STR_EQ(a, b)          equal C strings (NULL equals only NULL)
 *   CHECK_OK(rc)                rc == FTC_OK; prints ftc_err_name(rc)
 *   CHECK_RC(rc, want)          rc == want, an ftc_error_t; prints both names
 *
 * Each evaluates its arguments exactly once and is an expression worth the
 * check's outcome (true when it passed), so a test may stop early:
 * `if (!CHECK_OK(rc)) return;`.
 */
#ifndef FTC_TEST_CHECK_H
#define FTC_TEST_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftcoll/error.h"

/* One side of CHECK_EQ, widened so both sides compare by value whatever
 * their types (an unsigned count against a signed literal included). */
typedef struct check_value {
    enum { CHECK_SIGNED, CHECK_UNSIGNED, CHECK_FLOAT, CHECK_POINTER } kind;
    intmax_t i;
    uintmax_t u;
    long double f;
    const void *p;
} check_value_t;

check_value_t check_value_signed(intmax_t v);
check_value_t check_value_unsigned(uintmax_t v);
check_value_t check_value_float(long double v);
check_value_t check_value_pointer(const void *v);

#define CHECK_VALUE_(x)                                                       \
    _Generic((x),                                                             \
        _Bool: check_value_unsigned,                                          \
        char: check_value_signed,                                             \
        signed char: check_value_signed,                                      \
        short: check_value_signed,                                            \
        int: check_value_signed,                                              \
        long: check_value_signed,                                             \
        long long: check_value_signed,                                        \
        unsigned char: check_value_unsigned,                                  \
        unsigned short: check_value_unsigned,                                 \
        unsigned int: check_value_unsigned,                                   \
        unsigned long: check_value_unsigned,                                  \
        unsigned long long: check_value_unsigned,                             \
        float: check_value_float,                                             \
        double: check_value_float,                                            \
        long double: check_value_float,                                       \
        default: check_value_pointer)(x)

#if defined(__GNUC__)
#define CHECK_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define CHECK_PRINTF_(f, a)
#endif

bool check_true(bool ok, const char *file, int line, const char *expr,
                const char *fmt, ...) CHECK_PRINTF_(5, 6);
bool check_eq(check_value_t a, check_value_t b, const char *file, int line,
              const char *expr_a, const char *expr_b);
bool check_str_eq(const char *a, const char *b, const char *file, int line,
                  const char *expr_a, const char *expr_b);
/* err_name is ftc_err_name, passed by the macro so that only programs
 * using CHECK_OK / CHECK_RC link libftcoll (the backend tests stand in
 * for parts of it). */
bool check_rc(int rc, int want, const char *file, int line, const char *expr,
              const char *(*err_name)(int));

#define CHECK(cond) check_true((cond) ? true : false, __FILE__, __LINE__,     \
                               #cond, NULL)
#define CHECK_MSG(cond, ...) check_true((cond) ? true : false, __FILE__,      \
                                        __LINE__, #cond, __VA_ARGS__)
#define CHECK_EQ(a, b) check_eq(CHECK_VALUE_(a), CHECK_VALUE_(b), __FILE__,   \
                                __LINE__, #a, #b)
#define CHECK_STR_EQ(a, b) check_str_eq((a), (b), __FILE__, __LINE__, #a, #b)
#define CHECK_OK(rc) check_rc((int)(rc), FTC_OK, __FILE__, __LINE__, #rc,    \
                              ftc_err_name)
#define CHECK_RC(rc, want) check_rc((int)(rc), (int)(want), __FILE__,         \
                                    __LINE__, #rc, ftc_err_name)

/* Prefix printed before every failure, e.g. the case being run; NULL for
 * none. The string must outlive the checks made under it. */
void check_set_context(const char *context);

/* When on, a passing CHECK_MSG prints "ok   <message>" on stdout too: the
 * multi-process drivers show each case as it ends. Off by default. */
void check_set_verbose(bool verbose);

/* Checks counted so far. */
unsigned long check_passed(void);
unsigned long check_failed(void);

/* Add checks counted elsewhere (a sub-process, a sweep's own tally). */
void check_add(unsigned long passed, unsigned long failed);

/* Print "N passed, M failed" alone on a line on stdout; return 0 when
 * nothing failed, 1 otherwise: `return check_report();` ends main(). */
int check_report(void);

#endif
