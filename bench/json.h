/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small JSON writer for the tools' machine-readable output (ftcoll-sim
 * --json, ftcoll-bench's per-rank summary and events). It places the
 * commas, escapes strings (quote, backslash, and every control character,
 * as \n, \t, ... or \u00XX), and writes null for a number that is not
 * finite: whatever a run's messages hold, a reader's JSON parser accepts
 * the line. The output has no spaces, so an ordinary line is exactly what
 * the printf calls it replaced wrote.
 *
 *     json_t j;
 *     json_to_file(&j, stdout);
 *     json_object_begin(&j);
 *     json_key(&j, "rank");   json_uint(&j, 3);
 *     json_key(&j, "status"); json_string(&j, "FTC_OK");
 *     json_object_end(&j);    // {"rank":3,"status":"FTC_OK"}
 *
 * Writing into a buffer never overflows it: json_truncated() tells when
 * the text did not fit (it is then cut, and not valid JSON).
 */
#ifndef FTC_BENCH_JSON_H
#define FTC_BENCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct json {
    FILE *out;              /* a stream, or NULL: the buffer below */
    char *buf;
    size_t cap, len;        /* len counts what did not fit, too */
    unsigned depth;
    bool after_key;         /* the next value is a member's: no comma */
    bool has_item[JSON_MAX_DEPTH + 1];
} json_t;

/* Write to a stream, or into buf (always NUL-terminated when cap > 0). */
void json_to_file(json_t *j, FILE *out);
void json_to_buffer(json_t *j, char *buf, size_t cap);

/*
 * Start as if inside an object whose braces someone else writes: the
 * members that follow are separated by commas but not enclosed. For a
 * fragment another writer inserts with json_members().
 */
void json_members_begin(json_t *j);

bool json_truncated(const json_t *j);

void json_object_begin(json_t *j);
void json_object_end(json_t *j);
void json_array_begin(json_t *j);
void json_array_end(json_t *j);

/* The name of the next member of the current object. */
void json_key(json_t *j, const char *key);

void json_string(json_t *j, const char *s);   /* NULL writes null */
void json_uint(json_t *j, uint64_t v);
void json_int(json_t *j, int64_t v);
void json_bool(json_t *j, bool v);
void json_null(json_t *j);
/* v with `decimals` digits after the point ("%.*f"); null if not finite. */
void json_fixed(json_t *j, double v, int decimals);
/* v with `digits` significant digits ("%.*g"); null if not finite. */
void json_general(json_t *j, double v, int digits);

/* Members already written by json_members_begin() elsewhere, inserted
 * into the current object as they are (nothing when empty). */
void json_members(json_t *j, const char *members);

#endif
