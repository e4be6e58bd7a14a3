/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for ftc_wire_decode. Each input is decoded three ways:
 *
 *   1. as received;
 *   2. with the checksum field fixed up, so that mutations reach the checks
 *      behind the CRC;
 *   3. with magic, version, length, job token and checksum all fixed up, so
 *      that only the field checks (kind, reserved, flags, sender, coll,
 *      algo) decide.
 *
 * Every verdict is compared with a plain reference classifier written from
 * wire.h, and every accepted message must re-encode to exactly its own bytes
 * and decode again to the same header. Any disagreement aborts.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/collective.h"
#include "ftcoll/error.h"
#include "wire/wire.h"
#include "wire_header_eq.h"

#define FUZZ_TOKEN UINT64_C(0x0123456789abcdef)
#define FUZZ_WORLD 64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static unsigned host_flag(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0 ? FTC_WF_BIG_ENDIAN : 0;
}

/* Store the checksum a correct sender would have written. */
static void fix_crc(uint8_t *m, size_t len)
{
    wr32(m + 56, 0);
    wr32(m + 56, ftc_crc32c(0, m, len));
}

/* The verdict wire.h prescribes, computed the obvious way. */
static int reference_verdict(const uint8_t *m, size_t len)
{
    if (len < 64)
        return FTC_ETRUNCATED;
    if (rd32(m) != FTC_WIRE_MAGIC || m[4] != FTC_WIRE_VERSION)
        return FTC_EVERSION;
    if ((uint64_t)len - 64 != rd32(m + 44))
        return FTC_ETRUNCATED;
    uint8_t zero[4] = {0, 0, 0, 0};
    uint32_t crc = ftc_crc32c(0, m, 56);
    crc = ftc_crc32c(crc, zero, 4);
    crc = ftc_crc32c(crc, m + 60, len - 60);
    unsigned flags = (unsigned)m[8] | (unsigned)m[9] << 8;
    if (crc != rd32(m + 56)) {
        /* A keyed message carries no checksum (0): another job's. */
        if ((flags & FTC_WF_MAC) && rd32(m + 56) == 0)
            return FTC_EFOREIGN;
        return FTC_ECHECKSUM;
    }
    /* (No job key here: a message that claims a MAC is another job's.) */
    if (rd64(m + 48) != FUZZ_TOKEN || (flags & FTC_WF_MAC))
        return FTC_EFOREIGN;
    /* Kinds: a family's (1..0xEF) under a non-zero algo byte, or the
     * core's (0xF0..FTC_MSG_CORE_MAX) under any. */
    bool kind_ok = m[5] >= 0xF0 ? m[5] <= FTC_MSG_CORE_MAX : m[5] >= 1 && m[6] != 0;
    if (!kind_ok || m[7] > FTC_COLL_SHRINK
        || m[10] != 0 || m[11] != 0 || rd32(m + 60) != 0
        || (flags & ~(unsigned)FTC_WF_ALL) != 0
        || (flags & FTC_WF_DIGEST) /* only under a MAC */
        || (flags & FTC_WF_BIG_ENDIAN) != host_flag()
        || rd32(m + 20) >= FUZZ_WORLD)
        return FTC_EBADMSG;
    return FTC_OK;
}

static void fail(const char *what, int rc, int want, size_t len)
{
    fprintf(stderr, "fuzz_decode: %s: got %s, want %s (len %zu)\n", what,
            ftc_err_name(rc), ftc_err_name(want), len);
    abort();
}

/* Decode m, compare with the reference, and check that an accepted message
 * survives encode/decode unchanged. Returns the verdict. */
static int check_one(const uint8_t *m, size_t len, const char *what)
{
    ftc_wire_header_t h;
    int rc = ftc_wire_decode(m, len, FUZZ_TOKEN, FUZZ_WORLD, &h);
    int want = reference_verdict(m, len);
    if (rc != want)
        fail(what, rc, want, len);
    if (rc != FTC_OK)
        return rc;

    if (h.payload_len != len - FTC_WIRE_HEADER_SIZE || h.kind < 1
        || (h.kind > FTC_MSG_FAMILY_MAX && h.kind < FTC_MSG_CORE_MIN)
        || h.kind > FTC_MSG_CORE_MAX || h.sender >= FUZZ_WORLD
        || h.job_token != FUZZ_TOKEN || (h.flags & ~FTC_WF_ALL) != 0)
        fail("accepted header out of range", rc, FTC_EBADMSG, len);

    uint8_t *copy = malloc(len);
    if (copy == NULL)
        abort();
    memcpy(copy, m, len);
    memset(copy, 0xa5, FTC_WIRE_HEADER_SIZE); /* encode must write it all */
    ftc_wire_encode(&h, copy);
    if (memcmp(copy, m, len) != 0)
        fail("encode(decode(m)) != m", FTC_OK, FTC_OK, len);
    ftc_wire_header_t h2;
    memset(&h2, 0x5a, sizeof(h2));
    int rc2 = ftc_wire_decode(copy, len, FUZZ_TOKEN, FUZZ_WORLD, &h2);
    if (rc2 != FTC_OK)
        fail("decode(encode(hdr))", rc2, FTC_OK, len);
    if (!ftc_test_wire_header_eq(&h, &h2))
        fail("decode(encode(hdr)) != hdr", rc2, FTC_OK, len);
    free(copy);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1: the bytes as received (libFuzzer's buffer is exactly size long, so
     * ASan catches any read past the end). */
    check_one(data, size, "raw");
    if (size < FTC_WIRE_HEADER_SIZE)
        return 0;
#if SIZE_MAX > UINT32_MAX
    if (size - FTC_WIRE_HEADER_SIZE > UINT32_MAX)
        return 0; /* no length field can describe it */
#endif

    uint8_t *m = malloc(size);
    if (m == NULL)
        abort();

    /* 2: a sender that computes the checksum correctly. */
    memcpy(m, data, size);
    fix_crc(m, size);
    int rc = check_one(m, size, "checksum fixed");
    if (rc == FTC_ECHECKSUM)
        fail("checksum fixed", rc, FTC_OK, size);

    /* 3: framing and token right as well. */
    wr32(m, FTC_WIRE_MAGIC);
    m[4] = (uint8_t)FTC_WIRE_VERSION;
    wr32(m + 44, (uint32_t)(size - FTC_WIRE_HEADER_SIZE));
    wr64(m + 48, FUZZ_TOKEN);
    /* A MAC claim is another job's (no key); a digest, no message. */
    m[8] &= (uint8_t)~(FTC_WF_MAC | FTC_WF_DIGEST);
    fix_crc(m, size);
    rc = check_one(m, size, "framing fixed");
    if (rc != FTC_OK && rc != FTC_EBADMSG)
        fail("framing fixed", rc, FTC_EBADMSG, size);

    free(m);
    return 0;
}
