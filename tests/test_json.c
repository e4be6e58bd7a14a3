/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tools' JSON writer (bench/json.h): commas in the right places,
 * strings escaped as RFC 8259 asks, null for numbers that are not finite,
 * and a buffer that is never overrun.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "json.h"

static void test_structure(void)
{
    char buf[256];
    json_t j;
    json_to_buffer(&j, buf, sizeof(buf));
    json_object_begin(&j);
    json_key(&j, "n");
    json_uint(&j, 8);
    json_key(&j, "list");
    json_array_begin(&j);
    json_int(&j, -1);
    json_array_begin(&j);
    json_array_end(&j);
    json_object_begin(&j);
    json_object_end(&j);
    json_bool(&j, true);
    json_null(&j);
    json_array_end(&j);
    json_key(&j, "x");
    json_fixed(&j, 0.5, 3);
    json_key(&j, "y");
    json_general(&j, 1.0 / 3.0, 10);
    json_object_end(&j);
    CHECK_STR_EQ(buf, "{\"n\":8,\"list\":[-1,[],{},true,null],\"x\":0.500,"
                      "\"y\":0.3333333333}");
    CHECK(!json_truncated(&j));
}

static void test_escapes(void)
{
    char buf[256];
    json_t j;
    json_to_buffer(&j, buf, sizeof(buf));
    json_string(&j, "say \"hi\"\\ now\n\t\r\b\f\x01\x1f end");
    CHECK_STR_EQ(buf, "\"say \\\"hi\\\"\\\\ now\\n\\t\\r\\b\\f\\u0001\\u001f "
                      "end\"");

    json_to_buffer(&j, buf, sizeof(buf));
    json_object_begin(&j);
    json_key(&j, "a\"b");
    json_string(&j, NULL);
    json_object_end(&j);
    CHECK_STR_EQ(buf, "{\"a\\\"b\":null}");

    /* Bytes above 0x7f (UTF-8) pass through as they are. */
    json_to_buffer(&j, buf, sizeof(buf));
    json_string(&j, "K\xc3\xbcttler");
    CHECK_STR_EQ(buf, "\"K\xc3\xbcttler\"");
}

static void test_not_finite(void)
{
    char buf[64];
    json_t j;
    json_to_buffer(&j, buf, sizeof(buf));
    json_array_begin(&j);
    json_fixed(&j, NAN, 4);
    json_general(&j, INFINITY, 17);
    json_general(&j, -INFINITY, 17);
    json_general(&j, 2.5, 17);
    json_array_end(&j);
    CHECK_STR_EQ(buf, "[null,null,null,2.5]");
}

static void test_members(void)
{
    char frag[64], buf[128];
    json_t j;
    json_to_buffer(&j, frag, sizeof(frag));
    json_members_begin(&j);
    json_key(&j, "name");
    json_string(&j, "zmq");
    json_key(&j, "queued");
    json_uint(&j, 3);
    CHECK_STR_EQ(frag, "\"name\":\"zmq\",\"queued\":3");

    json_to_buffer(&j, buf, sizeof(buf));
    json_object_begin(&j);
    json_members(&j, frag);
    json_key(&j, "reports");
    json_array_begin(&j);
    json_array_end(&j);
    json_object_end(&j);
    CHECK_STR_EQ(buf, "{\"name\":\"zmq\",\"queued\":3,\"reports\":[]}");

    /* An empty fragment adds nothing, not a stray comma. */
    json_to_buffer(&j, buf, sizeof(buf));
    json_object_begin(&j);
    json_members(&j, "");
    json_key(&j, "a");
    json_uint(&j, 1);
    json_object_end(&j);
    CHECK_STR_EQ(buf, "{\"a\":1}");
}

static void test_truncation(void)
{
    char buf[8];
    memset(buf, 'Z', sizeof(buf));
    json_t j;
    json_to_buffer(&j, buf, 6);
    json_string(&j, "abcdefgh");
    CHECK(json_truncated(&j));
    CHECK_STR_EQ(buf, "\"abcd");
    CHECK_EQ(buf[6], 'Z'); /* nothing written past the capacity given */

    json_to_buffer(&j, buf, 6);
    json_uint(&j, 12345);
    CHECK(!json_truncated(&j));
    CHECK_STR_EQ(buf, "12345");
}

static void test_file(void)
{
    char text[64] = "";
    FILE *f = tmpfile();
    if (!CHECK(f != NULL))
        return;
    json_t j;
    json_to_file(&j, f);
    json_object_begin(&j);
    json_key(&j, "k");
    json_string(&j, "v\n");
    json_object_end(&j);
    CHECK(!json_truncated(&j));
    rewind(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    CHECK_STR_EQ(text, "{\"k\":\"v\\n\"}");
}

int main(void)
{
    test_structure();
    test_escapes();
    test_not_finite();
    test_members();
    test_truncation();
    test_file();
    return check_report();
}
