/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON writer of json.h. */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static void put(json_t *j, const char *s, size_t n)
{
    if (j->out != NULL) {
        fwrite(s, 1, n, j->out);
        return;
    }
    if (j->len < j->cap) {
        size_t room = j->cap - 1 - j->len;
        size_t k = n < room ? n : room;
        memcpy(j->buf + j->len, s, k);
        j->buf[j->len + k] = '\0';
    }
    j->len += n;
}

static void puts_(json_t *j, const char *s)
{
    put(j, s, strlen(s));
}

static void reset(json_t *j)
{
    j->depth = 0;
    j->after_key = false;
    memset(j->has_item, 0, sizeof(j->has_item));
}

void json_to_file(json_t *j, FILE *out)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
    reset(j);
}

void json_to_buffer(json_t *j, char *buf, size_t cap)
{
    memset(j, 0, sizeof(*j));
    j->buf = buf;
    j->cap = cap;
    if (cap > 0)
        buf[0] = '\0';
    reset(j);
}

void json_members_begin(json_t *j)
{
    j->depth = 1;
    j->has_item[1] = false;
}

bool json_truncated(const json_t *j)
{
    return j->out == NULL && j->cap > 0 && j->len >= j->cap;
}

/* Before a value or a key: a comma unless it is the first in its object
 * or array, or the value of the key just written. */
static void separate(json_t *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->has_item[j->depth])
        put(j, ",", 1);
    j->has_item[j->depth] = true;
}

static void open_(json_t *j, char c)
{
    separate(j);
    put(j, &c, 1);
    if (j->depth < JSON_MAX_DEPTH)
        j->depth++;
    j->has_item[j->depth] = false;
}

static void close_(json_t *j, char c)
{
    put(j, &c, 1);
    if (j->depth > 0)
        j->depth--;
}

void json_object_begin(json_t *j)
{
    open_(j, '{');
}

void json_object_end(json_t *j)
{
    close_(j, '}');
}

void json_array_begin(json_t *j)
{
    open_(j, '[');
}

void json_array_end(json_t *j)
{
    close_(j, ']');
}

/* s between quotes, escaped as RFC 8259 section 7 asks. */
static void quoted(json_t *j, const char *s)
{
    put(j, "\"", 1);
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        char esc[8];
        const char *e = NULL;
        switch (*p) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof(esc), "\\u%04x", *p);
                e = esc;
            }
        }
        if (e == NULL)
            continue;
        put(j, run, (size_t)((const char *)p - run));
        puts_(j, e);
        run = (const char *)p + 1;
    }
    puts_(j, run);
    put(j, "\"", 1);
}

void json_key(json_t *j, const char *key)
{
    separate(j);
    quoted(j, key);
    put(j, ":", 1);
    j->after_key = true;
}

void json_string(json_t *j, const char *s)
{
    separate(j);
    if (s == NULL)
        puts_(j, "null");
    else
        quoted(j, s);
}

void json_uint(json_t *j, uint64_t v)
{
    char b[24];
    separate(j);
    snprintf(b, sizeof(b), "%" PRIu64, v);
    puts_(j, b);
}

void json_int(json_t *j, int64_t v)
{
    char b[24];
    separate(j);
    snprintf(b, sizeof(b), "%" PRId64, v);
    puts_(j, b);
}

void json_bool(json_t *j, bool v)
{
    separate(j);
    puts_(j, v ? "true" : "false");
}

void json_null(json_t *j)
{
    separate(j);
    puts_(j, "null");
}

void json_fixed(json_t *j, double v, int decimals)
{
    char b[352];
    separate(j);
    if (!isfinite(v)) {
        puts_(j, "null");
        return;
    }
    snprintf(b, sizeof(b), "%.*f", decimals, v);
    puts_(j, b);
}

void json_general(json_t *j, double v, int digits)
{
    char b[64];
    separate(j);
    if (!isfinite(v)) {
        puts_(j, "null");
        return;
    }
    snprintf(b, sizeof(b), "%.*g", digits, v);
    puts_(j, b);
}

void json_members(json_t *j, const char *members)
{
    if (members == NULL || members[0] == '\0')
        return;
    separate(j);
    puts_(j, members);
}
