/* SPDX-License-Identifier: BSD-3-Clause */
/* The checks of check.h: counting, and saying what failed. */
#include "check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static unsigned long g_passed, g_failed;
static const char *g_context;
static bool g_verbose;

check_value_t check_value_signed(intmax_t v)
{
    return (check_value_t){.kind = CHECK_SIGNED, .i = v};
}

check_value_t check_value_unsigned(uintmax_t v)
{
    return (check_value_t){.kind = CHECK_UNSIGNED, .u = v};
}

check_value_t check_value_float(long double v)
{
    return (check_value_t){.kind = CHECK_FLOAT, .f = v};
}

check_value_t check_value_pointer(const void *v)
{
    return (check_value_t){.kind = CHECK_POINTER, .p = v};
}

void check_set_verbose(bool verbose)
{
    g_verbose = verbose;
}

void check_set_context(const char *context)
{
    g_context = context;
}

unsigned long check_passed(void)
{
    return g_passed;
}

unsigned long check_failed(void)
{
    return g_failed;
}

void check_add(unsigned long passed, unsigned long failed)
{
    g_passed += passed;
    g_failed += failed;
}

/* Count the outcome; on failure start the message "FAIL file:line: ".
 * stdout is flushed first so the failure lands after what the test
 * printed before it when both go to one terminal or log. */
static bool count(bool ok, const char *file, int line)
{
    if (ok) {
        g_passed++;
        return true;
    }
    g_failed++;
    fflush(stdout);
    if (g_context != NULL)
        fprintf(stderr, "FAIL [%s] %s:%d: ", g_context, file, line);
    else
        fprintf(stderr, "FAIL %s:%d: ", file, line);
    return false;
}

bool check_true(bool ok, const char *file, int line, const char *expr,
                const char *fmt, ...)
{
    if (ok && g_verbose && fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        printf("ok   ");
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
    }
    if (count(ok, file, line))
        return true;
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (%s)\n", expr);
    } else {
        fprintf(stderr, "%s\n", expr);
    }
    return false;
}

static bool value_negative(const check_value_t *v)
{
    return v->kind == CHECK_SIGNED && v->i < 0;
}

/* Equal by value: integers as mathematical integers (so -1 never equals
 * UINTMAX_MAX), anything against a float as long double, pointers by
 * address. */
static bool values_equal(const check_value_t *a, const check_value_t *b)
{
    if (a->kind == CHECK_POINTER || b->kind == CHECK_POINTER)
        return a->kind == b->kind && a->p == b->p;
    if (a->kind == CHECK_FLOAT || b->kind == CHECK_FLOAT) {
        long double x = a->kind == CHECK_FLOAT    ? a->f
                        : a->kind == CHECK_SIGNED ? (long double)a->i
                                                  : (long double)a->u;
        long double y = b->kind == CHECK_FLOAT    ? b->f
                        : b->kind == CHECK_SIGNED ? (long double)b->i
                                                  : (long double)b->u;
        return x == y;
    }
    if (value_negative(a) || value_negative(b))
        return a->kind == CHECK_SIGNED && b->kind == CHECK_SIGNED &&
               a->i == b->i;
    uintmax_t x = a->kind == CHECK_SIGNED ? (uintmax_t)a->i : a->u;
    uintmax_t y = b->kind == CHECK_SIGNED ? (uintmax_t)b->i : b->u;
    return x == y;
}

static void value_print(const check_value_t *v)
{
    switch (v->kind) {
    case CHECK_SIGNED:
        fprintf(stderr, "%" PRIdMAX, v->i);
        break;
    case CHECK_UNSIGNED:
        fprintf(stderr, "%" PRIuMAX, v->u);
        if (v->u > 9)
            fprintf(stderr, " (0x%" PRIxMAX ")", v->u);
        break;
    case CHECK_FLOAT:
        fprintf(stderr, "%.17Lg", v->f);
        break;
    case CHECK_POINTER:
        fprintf(stderr, "%p", v->p);
        break;
    }
}

bool check_eq(check_value_t a, check_value_t b, const char *file, int line,
              const char *expr_a, const char *expr_b)
{
    if (count(values_equal(&a, &b), file, line))
        return true;
    fprintf(stderr, "%s == %s: ", expr_a, expr_b);
    value_print(&a);
    fprintf(stderr, " != ");
    value_print(&b);
    fputc('\n', stderr);
    return false;
}

static void string_print(const char *s)
{
    if (s == NULL)
        fprintf(stderr, "NULL");
    else
        fprintf(stderr, "\"%s\"", s);
}

bool check_str_eq(const char *a, const char *b, const char *file, int line,
                  const char *expr_a, const char *expr_b)
{
    bool ok = (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
    if (count(ok, file, line))
        return true;
    fprintf(stderr, "%s == %s: ", expr_a, expr_b);
    string_print(a);
    fprintf(stderr, " != ");
    string_print(b);
    fputc('\n', stderr);
    return false;
}

bool check_rc(int rc, int want, const char *file, int line, const char *expr,
              const char *(*err_name)(int))
{
    if (count(rc == want, file, line))
        return true;
    fprintf(stderr, "%s: %s (%d), want %s (%d)\n", expr, err_name(rc), rc,
            err_name(want), want);
    return false;
}

int check_report(void)
{
    fflush(stderr);
    printf("%lu passed, %lu failed\n", g_passed, g_failed);
    fflush(stdout);
    return g_failed == 0 ? 0 : 1;
}
