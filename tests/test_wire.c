/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC32C and the wire format (lib/wire/wire.h): known vectors, software against
 * hardware against a bitwise reference, round trips, and every way a message
 * can be damaged on the way.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitmix.h"
#include "wire/crc32c_sw.h"
#include "ftcoll/error.h"
#include "ftcoll/collective.h"
#include "wire/siphash.h"
#include "wire/wire.h"
#include "algo/corrected/kinds.h"
#include "check.h"
#include "wire_header_eq.h"

/* Report at most a few failures of one loop in detail. */
static unsigned detail_budget = 40;

#define DETAIL(...)                                                           \
    do {                                                                      \
        if (detail_budget > 0) {                                              \
            detail_budget--;                                                  \
            printf("  detail: " __VA_ARGS__);                                 \
        }                                                                     \
    } while (0)

/* ---- helpers independent of the code under test ---------------------- */

static uint64_t rng_state = UINT64_C(0x0123456789abcdef);

static uint64_t rnd(void)
{
    return splitmix64(&rng_state);
}

static uint32_t rnd_below(uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)(rnd() % n);
}

static void rnd_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

/* Bit-at-a-time CRC32C, straight from the definition. */
static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool host_big_endian(void)
{
    const uint32_t one = 1;
    uint8_t b[4];
    memcpy(b, &one, sizeof(b));
    return b[0] == 0;
}

static uint16_t host_flag(void)
{
    return host_big_endian() ? (uint16_t)FTC_WF_BIG_ENDIAN : 0;
}

/* Recompute the checksum field after editing a message by hand. */
static void recrc(uint8_t *msg, size_t len)
{
    le32(msg + 56, 0);
    le32(msg + 56, crc_ref(0, msg, len));
}

#define TOKEN UINT64_C(0xfeedfacecafebeef)
#define WORLD 37u

/* Some kinds the wire accepts: families' (1..FTC_MSG_FAMILY_MAX, under a
 * family's algo byte) and every core kind. */
static const uint8_t valid_kinds[] = {
    1, 2, 3, 4, 5, 6, 7, 16, 100, FTC_MSG_FAMILY_MAX, FTC_MSG_PROBE,
    FTC_MSG_PROBE_ACK, FTC_MSG_EXCLUDED, FTC_MSG_LEAVE, FTC_MSG_ENDED,
    FTC_MSG_STOPPED};
#define NVALID_KINDS (sizeof(valid_kinds) / sizeof(valid_kinds[0]))

static uint8_t random_kind(void)
{
    return valid_kinds[rnd_below((uint32_t)NVALID_KINDS)];
}

static ftc_wire_header_t random_header(uint8_t kind, uint32_t plen)
{
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = kind;
    /* A family's kind names its family (any algo byte but 0). */
    h.algo = (uint8_t)(kind < FTC_MSG_CORE_MIN ? 1 + rnd_below(255)
                                               : rnd_below(3));
    h.coll = (uint8_t)rnd_below(4);
    /* MAC and DIGEST: set by the keyed encoders only (test_mac,
     * test_digest). */
    h.flags = (uint16_t)(rnd() & FTC_WF_ALL
                         & ~(unsigned)(FTC_WF_MAC | FTC_WF_DIGEST));
    h.group_id = (uint32_t)rnd();
    h.epoch = (uint32_t)rnd();
    h.sender = rnd_below(WORLD);
    h.seq = rnd();
    h.word = (uint32_t)rnd();
    h.aux = (uint32_t)rnd();
    h.signature = (uint32_t)rnd();
    h.payload_len = plen;
    h.job_token = TOKEN;
    return h;
}

/* An encoded message in a buffer of exactly its size (so that ASan sees any
 * read past the end). */
static uint8_t *make_msg(const ftc_wire_header_t *h, size_t *len)
{
    *len = FTC_WIRE_HEADER_SIZE + h->payload_len;
    uint8_t *m = malloc(*len);
    if (m == NULL)
        abort();
    rnd_fill(m + FTC_WIRE_HEADER_SIZE, h->payload_len);
    ftc_wire_encode(h, m);
    return m;
}

static int decode(const uint8_t *m, size_t len, ftc_wire_header_t *out)
{
    return ftc_wire_decode(m, len, TOKEN, WORLD, out);
}

/* ---- CRC32C ----------------------------------------------------------- */

static void check_crc_all(const char *name, const void *buf, size_t len,
                          uint32_t want)
{
    char what[160];
    uint32_t got = ftc_crc32c(0, buf, len);
    uint32_t sw = ftc_crc32c_sw(0, buf, len);
    uint32_t ref = crc_ref(0, buf, len);
    snprintf(what, sizeof(what),
             "crc32c(%s) = %08x (sw %08x, ref %08x), want %08x", name,
             (unsigned)got, (unsigned)sw, (unsigned)ref, (unsigned)want);
    CHECK_MSG(got == want && sw == want && ref == want, "%s", what);
}

static void test_crc_vectors(void)
{
    uint8_t b[32];
    check_crc_all("\"123456789\"", "123456789", 9, 0xE3069283u);
    memset(b, 0, sizeof(b));
    check_crc_all("32 x 0x00", b, 32, 0x8A9136AAu);
    memset(b, 0xff, sizeof(b));
    check_crc_all("32 x 0xff", b, 32, 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)i;
    check_crc_all("0..31", b, 32, 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)(31 - i);
    check_crc_all("31..0", b, 32, 0x113FDB5Cu);
    check_crc_all("empty", b, 0, 0);
    CHECK_MSG(ftc_crc32c(0x12345678u, NULL, 0) == 0x12345678u &&
                  ftc_crc32c_sw(0x12345678u, NULL, 0) == 0x12345678u,
              "crc32c of nothing leaves the crc unchanged");
}

static void test_crc_chaining(void)
{
    enum { N = 300 };
    uint8_t b[N];
    rnd_fill(b, N);
    uint32_t whole = ftc_crc32c(0, b, N);
    unsigned bad = 0;
    for (size_t k = 0; k <= N; k++) {
        uint32_t hw = ftc_crc32c(ftc_crc32c(0, b, k), b + k, N - k);
        uint32_t sw = ftc_crc32c_sw(ftc_crc32c_sw(0, b, k), b + k, N - k);
        if (hw != whole || sw != whole) {
            bad++;
            DETAIL("split at %zu: %08x %08x want %08x\n", k, (unsigned)hw,
                   (unsigned)sw, (unsigned)whole);
        }
        size_t j = k + rnd_below((uint32_t)(N - k + 1));
        uint32_t three = ftc_crc32c(0, b, k);
        three = ftc_crc32c_sw(three, b + k, j - k);
        three = ftc_crc32c(three, b + j, N - j);
        if (three != whole) {
            bad++;
            DETAIL("split at %zu, %zu: %08x want %08x\n", k, j,
                   (unsigned)three, (unsigned)whole);
        }
    }
    CHECK_MSG(bad == 0,
              "crc32c(crc32c(0, a), b) == crc32c(0, a || b), all splits");
    CHECK_MSG(ftc_crc32c(ftc_crc32c(0, "12345", 5), "6789", 4) == 0xE3069283u,
              "chained \"12345\" + \"6789\" gives the check value");
}

static void test_crc_sw_hw(void)
{
    enum { MAXLEN = 300, ALIGNS = 16 };
    static uint8_t buf[MAXLEN + ALIGNS];
    unsigned bad = 0;
    for (int fill = 0; fill < 4; fill++) {
        rnd_fill(buf, sizeof(buf));
        uint32_t seed = fill == 0 ? 0 : (uint32_t)rnd();
        for (size_t align = 0; align < ALIGNS; align++) {
            for (size_t len = 0; len <= MAXLEN; len++) {
                const uint8_t *p = buf + align;
                uint32_t ref = crc_ref(seed, p, len);
                uint32_t sw = ftc_crc32c_sw(seed, p, len);
                uint32_t hw = ftc_crc32c(seed, p, len);
                if (sw != ref || hw != ref) {
                    bad++;
                    DETAIL("len %zu align %zu: sw %08x hw %08x ref %08x\n",
                           len, align, (unsigned)sw, (unsigned)hw,
                           (unsigned)ref);
                }
            }
        }
    }
    char what[120];
    snprintf(what, sizeof(what),
             "sw == hw == bitwise on lengths 0..300, alignments 0..15 "
             "(hardware path %s)",
             ftc_crc32c_hw_enabled() ? "on" : "off");
    CHECK_MSG(bad == 0, "%s", what);
}

/* The message checksum (the field at 56-59 read as zero, no copy) equals
 * the bitwise CRC of a copy with that field zeroed, in hardware and in
 * software, whatever the field holds, the length and the alignment. */
static void test_crc_message(void)
{
    enum { MAXLEN = 64 + 200, ALIGNS = 16 };
    static uint8_t buf[MAXLEN + ALIGNS], copy[MAXLEN];
    unsigned bad = 0;
    for (int fill = 0; fill < 4; fill++) {
        rnd_fill(buf, sizeof(buf));
        for (size_t align = 0; align < ALIGNS; align++) {
            for (size_t len = FTC_WIRE_HEADER_SIZE; len <= MAXLEN; len++) {
                const uint8_t *p = buf + align;
                memcpy(copy, p, len);
                memset(copy + 56, 0, 4);
                uint32_t ref = crc_ref(0, copy, len);
                uint32_t sw = ftc_crc32c_message_sw(p, len);
                uint32_t hw = ftc_crc32c_message(p, len);
                if (sw != ref || hw != ref) {
                    bad++;
                    DETAIL("len %zu align %zu: sw %08x hw %08x ref %08x\n",
                           len, align, (unsigned)sw, (unsigned)hw,
                           (unsigned)ref);
                }
            }
        }
    }
    CHECK_MSG(bad == 0, "message checksum == bitwise CRC of a copy with "
                        "bytes 56-59 zeroed, lengths 64..264, alignments "
                        "0..15, sw and hw");
}

/* Every entry of every slicing table: one nonzero byte at each position of
 * an 8- and a 16-byte block. */
static void test_crc_tables(void)
{
    unsigned bad = 0;
    for (size_t n = 8; n <= 16; n += 8) {
        for (size_t pos = 0; pos < n; pos++) {
            for (unsigned v = 0; v < 256; v++) {
                uint8_t b[16] = {0};
                b[pos] = (uint8_t)v;
                uint32_t seed = v & 1 ? 0 : 0xa5a5a5a5u ^ (uint32_t)pos;
                if (ftc_crc32c_sw(seed, b, n) != crc_ref(seed, b, n)
                    || ftc_crc32c(seed, b, n) != crc_ref(seed, b, n)) {
                    bad++;
                    DETAIL("byte %02x at %zu of %zu\n", v, pos, n);
                }
            }
        }
    }
    CHECK_MSG(bad == 0, "every slicing-table entry matches the bitwise CRC");
}

/* ---- encoding --------------------------------------------------------- */

static void test_layout(void)
{
    static const uint8_t want_bytes[67] = {
        0x46, 0x54, 0x43, 0x4c, 0x03, 0x02, 0x01, 0x03, 0x20, 0x01, 0x00,
        0x00, 0x44, 0x33, 0x22, 0x11, 0x88, 0x77, 0x66, 0x55, 0x05, 0x00,
        0x00, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x0d,
        0x0c, 0x0b, 0x0a, 0xef, 0xbe, 0xad, 0xde, 0x0d, 0xf0, 0xfe, 0xca,
        0x03, 0x00, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
        0x88, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x62,
        0x63};
    uint8_t want[67];
    memcpy(want, want_bytes, sizeof(want));
    want[8] = (uint8_t)(want[8] | host_flag());
    uint32_t crc = crc_ref(0, want, sizeof(want));
    le32(want + 56, crc);

    ftc_wire_header_t h = {
        .kind = FTC_CORR_MSG_TREE_UP, .algo = 1, .coll = 3, .flags = 0x0120,
        .group_id = 0x11223344u, .epoch = 0x55667788u, .sender = 5,
        .seq = UINT64_C(0x0102030405060708), .word = 0x0a0b0c0du,
        .aux = 0xdeadbeefu, .signature = 0xcafef00du, .payload_len = 3,
        .job_token = UINT64_C(0x8877665544332211)};
    uint8_t m[67];
    memset(m, 0x5a, sizeof(m));
    memcpy(m + 64, "abc", 3);
    ftc_wire_encode(&h, m);
    CHECK_MSG(memcmp(m, want, sizeof(m)) == 0,
              "encoded bytes follow the layout in wire.h (little-endian)");
    if (!host_big_endian())
        CHECK_MSG(rd32(m + 56) == 0x030555dcu,
                  "golden checksum of the reference message");
    CHECK_MSG(memcmp(m, "FTCL", 4) == 0, "magic reads \"FTCL\"");

    ftc_wire_header_t d;
    CHECK_MSG(ftc_wire_decode(m, sizeof(m), h.job_token, 6, &d) == FTC_OK,
              "reference message decodes");
    h.flags = (uint16_t)(h.flags | host_flag());
    CHECK_MSG(ftc_test_wire_header_eq(&d, &h),
              "reference message decodes to its header");
}

static void test_roundtrip(void)
{
    unsigned bad = 0, n = 0;
    static const uint32_t lens[] = {0, 1, 7, 8, 63, 64, 65, 255, 1000};
    for (size_t ki = 0; ki < NVALID_KINDS; ki++) {
        uint8_t kind = valid_kinds[ki];
        for (int it = 0; it < 60; it++) {
            uint32_t plen = it < 9 ? lens[it] : rnd_below(2000);
            ftc_wire_header_t h = random_header(kind, plen);
            if (it == 0) { /* the extremes of every field */
                h.group_id = h.epoch = h.word = h.aux = UINT32_MAX;
                h.signature = UINT32_MAX;
                h.seq = UINT64_MAX;
                h.sender = WORLD - 1;
                /* MAC, DIGEST: test_mac, test_digest */
                h.flags = FTC_WF_ALL & ~(FTC_WF_MAC | FTC_WF_DIGEST);
            }
            size_t len;
            uint8_t *m = make_msg(&h, &len);
            uint8_t *payload = malloc(plen + 1);
            memcpy(payload, m + 64, plen);
            ftc_wire_header_t d;
            memset(&d, 0xee, sizeof(d));
            int rc = decode(m, len, &d);
            ftc_wire_header_t want = h;
            want.flags = (uint16_t)((h.flags & ~FTC_WF_BIG_ENDIAN)
                                    | host_flag());
            n++;
            if (rc != FTC_OK || !ftc_test_wire_header_eq(&d, &want)
                || memcmp(payload, m + 64, plen) != 0) {
                bad++;
                DETAIL("kind %u plen %u: %s\n", kind, (unsigned)plen,
                       ftc_err_name(rc));
            }
            /* The caller's byte-order bit makes no difference. */
            uint8_t *m2 = malloc(len);
            memcpy(m2, m, len);
            ftc_wire_header_t h2 = h;
            h2.flags = (uint16_t)(h2.flags ^ FTC_WF_BIG_ENDIAN);
            ftc_wire_encode(&h2, m2);
            if (memcmp(m, m2, len) != 0) {
                bad++;
                DETAIL("kind %u: caller's FTC_WF_BIG_ENDIAN leaked\n", kind);
            }
            /* Re-encoding the decoded header reproduces the message. */
            if (rc == FTC_OK && d.payload_len == plen)
                ftc_wire_encode(&d, m2);
            if (rc != FTC_OK || memcmp(m, m2, len) != 0) {
                bad++;
                DETAIL("kind %u: encode(decode(m)) != m\n", kind);
            }
            free(m2);
            free(payload);
            free(m);
        }
    }
    char what[80];
    snprintf(what, sizeof(what), "round trip of %u messages, every kind", n);
    CHECK_MSG(bad == 0, "%s", what);
}

/* Messages at odd addresses: no code path may assume alignment. */
static void test_unaligned(void)
{
    unsigned bad = 0;
    uint8_t *raw = malloc(64 + 100 + 16);
    for (size_t off = 0; off < 16; off++) {
        ftc_wire_header_t h = random_header(FTC_CORR_MSG_BCAST, 100), d;
        uint8_t *m = raw + off;
        rnd_fill(m + 64, 100);
        ftc_wire_encode(&h, m);
        h.flags = (uint16_t)((h.flags & ~FTC_WF_BIG_ENDIAN) | host_flag());
        if (decode(m, 164, &d) != FTC_OK || !ftc_test_wire_header_eq(&d, &h))
            bad++;
    }
    free(raw);
    CHECK_MSG(bad == 0, "encode and decode at every alignment 0..15");
}

/* ---- damaged messages ------------------------------------------------- */

/* What a single flipped bit in byte i must give. */
static int flip_verdict(size_t i)
{
    if (i < 5)
        return FTC_EVERSION;     /* magic, version */
    if (i >= 44 && i < 48)
        return FTC_ETRUNCATED;   /* payload length */
    return FTC_ECHECKSUM;
}

static void test_bitflips(void)
{
    static const uint32_t lens[] = {0, 1, 13, 100};
    unsigned bad = 0, n = 0, multi_bad = 0;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        ftc_wire_header_t h = random_header(random_kind(), lens[li]), d;
        size_t len;
        uint8_t *m = make_msg(&h, &len);
        for (size_t bit = 0; bit < 8 * len; bit++) {
            m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            int rc = decode(m, len, &d);
            n++;
            if (rc != flip_verdict(bit / 8)) {
                bad++;
                DETAIL("plen %u, bit %zu: %s, want %s\n", (unsigned)lens[li],
                       bit, ftc_err_name(rc),
                       ftc_err_name(flip_verdict(bit / 8)));
            }
            m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        CHECK_MSG(decode(m, len, &d) == FTC_OK, "message intact after flips");
        /* Two and three flipped bits: CRC32C's Hamming distance is at least
         * 4 at these lengths, so nothing gets through. */
        for (int it = 0; it < 20000; it++) {
            size_t bits[3];
            int k = 2 + (int)rnd_below(2);
            for (int j = 0; j < k; j++) {
                bits[j] = rnd_below((uint32_t)(8 * len));
                m[bits[j] / 8] ^= (uint8_t)(1u << (bits[j] % 8));
            }
            bool same = k == 2 && bits[0] == bits[1];
            int rc = decode(m, len, &d);
            if (!same && rc == FTC_OK) {
                multi_bad++;
                DETAIL("plen %u: %d flips accepted\n", (unsigned)lens[li], k);
            }
            for (int j = k - 1; j >= 0; j--)
                m[bits[j] / 8] ^= (uint8_t)(1u << (bits[j] % 8));
        }
        free(m);
    }
    char what[120];
    snprintf(what, sizeof(what),
             "each of %u single-bit flips gives EVERSION/ETRUNCATED/ECHECKSUM "
             "by position", n);
    CHECK_MSG(bad == 0, "%s", what);
    CHECK_MSG(multi_bad == 0, "no 2- or 3-bit flip is accepted");
}

static void test_truncation(void)
{
    static const uint32_t lens[] = {0, 5, 100};
    unsigned bad = 0;
    ftc_wire_header_t d;
    CHECK_MSG(ftc_wire_decode(NULL, 0, TOKEN, WORLD, &d) == FTC_ETRUNCATED,
              "empty message (NULL, 0) is ETRUNCATED");
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        ftc_wire_header_t h = random_header(FTC_CORR_MSG_UPCORR, lens[li]);
        size_t len;
        uint8_t *m = make_msg(&h, &len);
        /* Shorter: the length check comes first, so even a message cut
         * inside its magic is ETRUNCATED, never EVERSION. */
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *c = malloc(cut + 1);
            memcpy(c, m, cut);
            int rc = decode(c, cut, &d);
            if (rc != FTC_ETRUNCATED) {
                bad++;
                DETAIL("plen %u cut to %zu: %s\n", (unsigned)lens[li], cut,
                       ftc_err_name(rc));
            }
            free(c);
        }
        /* Longer: trailing bytes the length field does not cover. */
        for (size_t extra = 1; extra <= 9; extra++) {
            uint8_t *c = calloc(len + extra, 1);
            memcpy(c, m, len);
            int rc = decode(c, len + extra, &d);
            if (rc != FTC_ETRUNCATED) {
                bad++;
                DETAIL("plen %u + %zu bytes: %s\n", (unsigned)lens[li], extra,
                       ftc_err_name(rc));
            }
            free(c);
        }
        free(m);
    }
    CHECK_MSG(bad == 0, "every truncation and extension is ETRUNCATED");
}

static void test_length_lies(void)
{
    ftc_wire_header_t h = random_header(FTC_CORR_MSG_TREE_UP, 40), d;
    size_t len;
    uint8_t *m = make_msg(&h, &len);
    static const uint32_t lies[] = {41, 39, 0, 1, 64, 104, 0x80000000u,
                                    UINT32_MAX};
    unsigned bad = 0;
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        le32(m + 44, lies[i]);
        recrc(m, len); /* a sender that lies consistently */
        int rc = decode(m, len, &d);
        if (rc != FTC_ETRUNCATED) {
            bad++;
            DETAIL("length field %u for 40 bytes: %s\n", (unsigned)lies[i],
                   ftc_err_name(rc));
        }
    }
    CHECK_MSG(bad == 0, "a length field that disagrees with the size is "
                        "ETRUNCATED, checksum or not");
    le32(m + 44, 40);
    recrc(m, len);
    CHECK_MSG(decode(m, len, &d) == FTC_OK, "restored length decodes again");
    free(m);
}

static void test_foreign(void)
{
    ftc_wire_header_t h = random_header(FTC_CORR_MSG_NUDGE, 10), d;
    size_t len;
    uint8_t *m = make_msg(&h, &len);
    CHECK_MSG(ftc_wire_decode(m, len, TOKEN + 1, WORLD, &d) == FTC_EFOREIGN,
              "job token off by one is EFOREIGN");
    CHECK_MSG(ftc_wire_decode(m, len, TOKEN ^ (UINT64_C(1) << 63), WORLD, &d) ==
                  FTC_EFOREIGN,
              "job token differing in bit 63 is EFOREIGN");
    CHECK_MSG(ftc_wire_decode(m, len, 0, WORLD, &d) == FTC_EFOREIGN,
              "job token 0 is EFOREIGN");
    free(m);
}

/* Re-encode h with one byte of the header forced to v (with a valid CRC). */
static int decode_with_byte(const ftc_wire_header_t *h, size_t at, uint8_t v,
                            uint32_t world)
{
    size_t len;
    uint8_t *m = make_msg(h, &len);
    m[at] = v;
    recrc(m, len);
    ftc_wire_header_t d;
    int rc = ftc_wire_decode(m, len, TOKEN, world, &d);
    free(m);
    return rc;
}

static void test_bad_fields(void)
{
    char what[120];
    ftc_wire_header_t h = random_header(FTC_CORR_MSG_CORRECT, 12), d;

    /* sender */
    {
        unsigned bad = 0;
        size_t len;
        static const uint32_t worlds[] = {1, 2, 37, 1000, UINT32_MAX};
        for (size_t i = 0; i < sizeof(worlds) / sizeof(worlds[0]); i++) {
            uint32_t w = worlds[i];
            static const uint32_t deltas[] = {0, 1, 2, 1000};
            for (size_t j = 0; j < 4; j++) {
                h.sender = w + deltas[j] < w ? UINT32_MAX : w + deltas[j];
                if (h.sender < w)
                    continue;
                uint8_t *m = make_msg(&h, &len);
                if (ftc_wire_decode(m, len, TOKEN, w, &d) != FTC_EBADMSG)
                    bad++;
                free(m);
            }
            h.sender = w - 1;
            uint8_t *m = make_msg(&h, &len);
            if (ftc_wire_decode(m, len, TOKEN, w, &d) != FTC_OK
                || d.sender != w - 1)
                bad++;
            free(m);
        }
        h.sender = 0;
        uint8_t *m = make_msg(&h, &len);
        if (ftc_wire_decode(m, len, TOKEN, 0, &d) != FTC_EBADMSG)
            bad++;
        free(m);
        CHECK_MSG(bad == 0, "sender >= world size is EBADMSG, world - 1 is OK");
        h.sender = 3;
    }

    /* kind */
    {
        unsigned bad = 0;
        for (unsigned k = 0; k < 256; k++) {
            /* h names a family: its kinds 1..0xEF and the core's
             * 0xF0..FTC_MSG_CORE_MAX decode, 0 and above it do not. */
            int want = (k >= 1 && k <= 0xEF) || (k >= 0xF0 && k <= FTC_MSG_CORE_MAX)
                           ? FTC_OK
                           : FTC_EBADMSG;
            int rc = decode_with_byte(&h, 5, (uint8_t)k, WORLD);
            if (rc != want) {
                bad++;
                DETAIL("kind %u: %s\n", k, ftc_err_name(rc));
            }
        }
        CHECK_MSG(bad == 0, "kinds outside the families' and the core's "
                            "with a valid checksum are EBADMSG");
    }

    /* algo and coll */
    {
        unsigned bad = 0;
        for (unsigned v = 0; v < 256; v++) {
            /* h is a family's kind: it must name a family. */
            if (decode_with_byte(&h, 6, (uint8_t)v, WORLD)
                != (v != 0 ? FTC_OK : FTC_EBADMSG))
                bad++;
            if (decode_with_byte(&h, 7, (uint8_t)v, WORLD)
                != (v <= FTC_COLL_SHRINK ? FTC_OK : FTC_EBADMSG))
                bad++;
        }
        CHECK_MSG(bad == 0,
                  "a family's kind under algo 0 and coll > FTC_COLL_SHRINK "
                  "are EBADMSG, any family is allowed");
        ftc_wire_header_t c = h;
        c.kind = FTC_MSG_PROBE;
        bad = 0;
        for (unsigned v = 0; v < 256; v++)
            if (decode_with_byte(&c, 6, (uint8_t)v, WORLD) != FTC_OK)
                bad++;
        CHECK_MSG(bad == 0, "a core kind decodes under any algo byte");
    }

    /* reserved bytes 10-11 and 60-63 */
    {
        static const size_t at[] = {10, 11, 60, 61, 62, 63};
        unsigned bad = 0;
        for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
            for (unsigned bit = 0; bit < 8; bit++) {
                int rc = decode_with_byte(&h, at[i], (uint8_t)(1u << bit),
                                          WORLD);
                if (rc != FTC_EBADMSG) {
                    bad++;
                    DETAIL("reserved byte %zu = %02x: %s\n", at[i], 1u << bit,
                           ftc_err_name(rc));
                }
            }
        }
        snprintf(what, sizeof(what),
                 "any bit of the reserved fields is EBADMSG");
        CHECK_MSG(bad == 0, "%s", what);
    }

    /* flags */
    {
        unsigned bad = 0;
        size_t len;
        for (unsigned bit = 0; bit < 16; bit++) {
            if (FTC_WF_ALL & (1u << bit))
                continue;
            uint8_t *m = make_msg(&h, &len);
            uint32_t f = (m[8] | (uint32_t)m[9] << 8) | 1u << bit;
            m[8] = (uint8_t)f;
            m[9] = (uint8_t)(f >> 8);
            recrc(m, len);
            if (decode(m, len, &d) != FTC_EBADMSG)
                bad++;
            free(m);
        }
        CHECK_MSG(bad == 0, "reserved flag bits (outside FTC_WF_ALL) are "
                            "EBADMSG");

        bad = 0;
        for (unsigned f = 0; f <= 0xFFFFu; f++) {
            if ((f & ~(unsigned)FTC_WF_ALL) != 0)
                continue;
            if (f & (FTC_WF_MAC | FTC_WF_DIGEST))
                continue; /* set by the keyed encoders only: test_mac */
            h.flags = (uint16_t)f;
            uint8_t *m = make_msg(&h, &len);
            if (decode(m, len, &d) != FTC_OK
                || d.flags != ((f & ~FTC_WF_BIG_ENDIAN) | host_flag()))
                bad++;
            m[8] ^= FTC_WF_BIG_ENDIAN; /* the other byte order */
            recrc(m, len);
            if (decode(m, len, &d) != FTC_EBADMSG)
                bad++;
            free(m);
        }
        CHECK_MSG(bad == 0, "every legal flag set decodes; the other byte "
                            "order's payload is EBADMSG");
    }
}

/* When several things are wrong, the first check in the documented order
 * names it. */
static void test_check_order(void)
{
    ftc_wire_header_t h = random_header(FTC_MSG_PROBE, 20), d;
    size_t len;
    uint8_t *m = make_msg(&h, &len);

    m[0] ^= 1;
    m[70] ^= 1;
    CHECK_MSG(decode(m, len, &d) == FTC_EVERSION,
              "bad magic beats bad checksum");
    CHECK_MSG(decode(m, 63, &d) == FTC_ETRUNCATED, "short beats bad magic");
    m[0] ^= 1;
    m[4] = FTC_WIRE_VERSION + 1;
    le32(m + 44, 5);
    CHECK_MSG(decode(m, len, &d) == FTC_EVERSION,
              "bad version beats bad length");
    m[4] = FTC_WIRE_VERSION;
    CHECK_MSG(decode(m, len, &d) == FTC_ETRUNCATED,
              "bad length beats bad checksum");
    le32(m + 44, 20);
    CHECK_MSG(ftc_wire_decode(m, len, TOKEN + 1, WORLD, &d) == FTC_ECHECKSUM,
              "bad checksum beats foreign token");
    m[70] ^= 1;
    m[5] = 0;
    m[10] = 1;
    recrc(m, len);
    CHECK_MSG(ftc_wire_decode(m, len, TOKEN + 1, WORLD, &d) == FTC_EFOREIGN,
              "foreign token beats bad kind and reserved bits");
    CHECK_MSG(decode(m, len, &d) == FTC_EBADMSG,
              "bad kind with our token is EBADMSG");
    free(m);
}

/* ---- signature -------------------------------------------------------- */

static uint32_t sig_of(const uint64_t a[8])
{
    return ftc_wire_signature((uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2],
                              (uint32_t)a[3], (uint32_t)a[4], (uint32_t)a[5],
                              a[6], (uint32_t)a[7]);
}

static void test_signature(void)
{
    uint32_t s = ftc_wire_signature(1, 1, 0, 2, 3, 4, 1000, 0x120);
    CHECK_MSG(s == ftc_wire_signature(1, 1, 0, 2, 3, 4, 1000, 0x120),
              "signature is deterministic");
    CHECK_MSG(s == 0xcc8a7f7cu, "signature golden value (same on every host)");

    unsigned bad = 0, n = 0;
    for (int it = 0; it < 20000; it++) {
        uint64_t a[8];
        for (int i = 0; i < 8; i++)
            a[i] = i == 6 ? rnd() >> rnd_below(64)
                          : rnd() >> (32 + rnd_below(32));
        uint32_t base = sig_of(a);
        for (int i = 0; i < 8; i++) {
            uint64_t keep = a[i];
            uint64_t width = i == 6 ? 64 : 32;
            switch (it % 3) {
            case 0: a[i] += 1; break;
            case 1: a[i] ^= UINT64_C(1) << rnd_below((uint32_t)width); break;
            default: a[i] = rnd(); break;
            }
            if (width == 32)
                a[i] &= UINT32_MAX;
            if (a[i] != keep) {
                n++;
                if (sig_of(a) == base) {
                    bad++;
                    DETAIL("field %d %llx -> %llx collides\n", i,
                           (unsigned long long)keep, (unsigned long long)a[i]);
                }
            }
            a[i] = keep;
        }
    }
    char what[100];
    snprintf(what, sizeof(what),
             "changing one argument changes the signature (%u cases)", n);
    CHECK_MSG(bad == 0, "%s", what);
    CHECK_MSG(ftc_wire_signature(1, 1, 2, 3, 3, 4, 1000, 0) !=
                  ftc_wire_signature(1, 1, 3, 2, 3, 4, 1000, 0),
              "signature depends on argument order (root/f swapped)");
    CHECK_MSG(ftc_wire_signature(1, 1, 0, 0, 0, 0, UINT64_C(1) << 32, 0) !=
                  ftc_wire_signature(1, 1, 0, 0, 0, 0, 0, 0),
              "signature covers the high half of count");
}

/* ---- authentication (SipHash-2-4 under the job key) -------------------- */

static void put_crc(uint8_t *m, size_t len)
{
    memset(m + 56, 0, 4);
    uint32_t c = ftc_crc32c(0, m, len);
    for (int i = 0; i < 4; i++)
        m[56 + i] = (uint8_t)(c >> (8 * i));
}

static void test_mac(void)
{
    /* The reference vectors of SipHash-2-4: key 00..0f, message 00..len-1. */
    uint8_t k[16], msg[64];
    for (int i = 0; i < 16; i++)
        k[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    CHECK_MSG(ftc_siphash(k, msg, 0) == UINT64_C(0x726fdb47dd0e0e31) &&
                  ftc_siphash(k, msg, 15) == UINT64_C(0xa129ca6149be45e5) &&
                  ftc_siphash(k, msg, 63) == UINT64_C(0x958a324ceb064572),
              "SipHash-2-4 reference vectors (lengths 0, 15, 63)");
    ftc_siphash_t st;
    ftc_siphash_init(&st, k);
    ftc_siphash_update(&st, msg, 5);
    ftc_siphash_update(&st, msg + 5, 58);
    CHECK_MSG(ftc_siphash_final(&st) == UINT64_C(0x958a324ceb064572),
              "SipHash-2-4 in pieces equals one shot");

    uint8_t key[16], other[16];
    rnd_fill(key, sizeof(key));
    memcpy(other, key, sizeof(other));
    other[7] ^= 1;
    unsigned bad_rt = 0, bad_key = 0, bad_nomac = 0, bad_unkeyed = 0,
             bad_forged = 0, bad_flip = 0;
    for (int it = 0; it < 300; it++) {
        ftc_wire_header_t h = random_header(random_kind(), rnd_below(200));
        h.coll = (uint8_t)rnd_below(FTC_COLL_SHRINK + 1);
        size_t len = FTC_WIRE_HEADER_SIZE + h.payload_len;
        uint8_t *m = malloc(len);
        if (m == NULL)
            abort();
        rnd_fill(m + FTC_WIRE_HEADER_SIZE, h.payload_len);
        ftc_wire_encode_key(&h, m, key);
        ftc_wire_header_t d;
        if (ftc_wire_decode_key(m, len, TOKEN, key, WORLD, &d) != FTC_OK
            || d.sender != h.sender || d.seq != h.seq || d.aux != h.aux)
            bad_rt++;
        if (ftc_wire_decode_key(m, len, TOKEN, other, WORLD, &d) != FTC_EAUTH)
            bad_key++;
        if (ftc_wire_decode(m, len, TOKEN, WORLD, &d) != FTC_EFOREIGN)
            bad_unkeyed++;
        /* A stranger who knows the format (and the token) but not the key:
         * a message without MAC, and one whose sender it rewrote. */
        uint8_t *plain = malloc(len);
        if (plain == NULL)
            abort();
        memcpy(plain + FTC_WIRE_HEADER_SIZE, m + FTC_WIRE_HEADER_SIZE,
               h.payload_len);
        ftc_wire_encode(&h, plain);
        if (ftc_wire_decode_key(plain, len, TOKEN, key, WORLD, &d) != FTC_EAUTH)
            bad_nomac++;
        uint32_t s2 = (h.sender + 1) % WORLD;
        for (int i = 0; i < 4; i++)
            m[20 + i] = (uint8_t)(s2 >> (8 * i));
        put_crc(m, len);
        if (ftc_wire_decode_key(m, len, TOKEN, key, WORLD, &d) != FTC_EAUTH)
            bad_forged++;
        /* Any one bit flipped, checksum made right again: never accepted. */
        ftc_wire_encode_key(&h, m, key);
        size_t bit = rnd_below((uint32_t)(len * 8));
        if (bit / 8 < 56 || bit / 8 >= 60) {
            m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            put_crc(m, len);
            if (ftc_wire_decode_key(m, len, TOKEN, key, WORLD, &d) == FTC_OK)
                bad_flip++;
        }
        free(plain);
        free(m);
    }
    CHECK_MSG(bad_rt == 0, "keyed round trip");
    CHECK_MSG(bad_key == 0, "another key is FTC_EAUTH");
    CHECK_MSG(bad_unkeyed == 0, "a keyed message to an unkeyed receiver is "
                                "FTC_EFOREIGN");
    CHECK_MSG(bad_nomac == 0, "a message without MAC is FTC_EAUTH");
    CHECK_MSG(bad_forged == 0, "a rewritten sender (checksum fixed) is "
                               "FTC_EAUTH");
    CHECK_MSG(bad_flip == 0, "no single bit flip (checksum fixed) is accepted");
}

/* Segments MACed over a digest of their bytes (FTC_WF_DIGEST): the
 * receiver accepts exactly what the sender made, and nothing a holder of
 * no key (or another key) could make from it. */
static void test_digest(void)
{
    uint8_t key[16], other[16];
    rnd_fill(key, sizeof(key));
    memcpy(other, key, sizeof(other));
    other[3] ^= 0x10;
    unsigned bad_rt = 0, bad_key = 0, bad_flip = 0, bad_swap = 0,
             bad_unkeyed = 0, bad_noseg = 0, bad_plain = 0, n = 0;
    for (int it = 0; it < 300; it++) {
        uint32_t chunk = 1 + rnd_below(300);
        ftc_wire_header_t h = random_header(random_kind(),
                                            FTC_WIRE_SEGMENT_HDR + chunk);
        h.flags = (uint16_t)(h.flags | FTC_WF_SEGMENT);
        size_t len = FTC_WIRE_HEADER_SIZE + h.payload_len;
        uint8_t *m = malloc(len), *m2 = malloc(len);
        if (m == NULL || m2 == NULL)
            abort();
        rnd_fill(m + FTC_WIRE_HEADER_SIZE, h.payload_len);
        const uint8_t *bytes = m + FTC_WIRE_HEADER_SIZE + FTC_WIRE_SEGMENT_HDR;
        uint64_t dg = ftc_wire_segment_digest(key, bytes, chunk);
        ftc_wire_encode_digest(&h, m, key, dg);
        ftc_wire_header_t d;
        n++;
        if (ftc_wire_decode_key(m, len, TOKEN, key, WORLD, &d) != FTC_OK
            || !(d.flags & FTC_WF_DIGEST) || d.sender != h.sender
            || d.payload_len != h.payload_len)
            bad_rt++;
        if (ftc_wire_decode_key(m, len, TOKEN, other, WORLD, &d) != FTC_EAUTH)
            bad_key++;
        if (ftc_wire_decode(m, len, TOKEN, WORLD, &d) != FTC_EFOREIGN)
            bad_unkeyed++;
        /* Any one bit of header, sub-header or bytes flipped (checksum
         * field left alone: it must stay 0). */
        size_t bit = rnd_below((uint32_t)(len * 8));
        memcpy(m2, m, len);
        m2[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        if (ftc_wire_decode_key(m2, len, TOKEN, key, WORLD, &d) == FTC_OK)
            bad_flip++;
        /* The MAC of these bytes on other bytes of the same length. */
        memcpy(m2, m, len);
        m2[len - 1] ^= 0x5a;
        if (ftc_wire_decode_key(m2, len, TOKEN, key, WORLD, &d) != FTC_EAUTH)
            bad_swap++;
        /* The digest form on a message that is no segment. */
        ftc_wire_header_t h2 = h;
        memcpy(m2, m, len);
        ftc_wire_encode_digest(&h2, m2, key, dg);
        m2[8] = (uint8_t)(m2[8] & ~FTC_WF_SEGMENT);
        if (ftc_wire_decode_key(m2, len, TOKEN, key, WORLD, &d) != FTC_EAUTH)
            bad_noseg++;
        /* An unkeyed message claiming a digest (checksum right). */
        h2.flags = (uint16_t)(h.flags & ~FTC_WF_SEGMENT);
        ftc_wire_encode(&h2, m2);
        m2[8] = (uint8_t)(m2[8] | FTC_WF_DIGEST);
        recrc(m2, len);
        if (ftc_wire_decode(m2, len, TOKEN, WORLD, &d) != FTC_EBADMSG)
            bad_plain++;
        free(m);
        free(m2);
    }
    /* The digest depends on the key and on every byte. */
    uint8_t b[64];
    rnd_fill(b, sizeof(b));
    uint64_t d0 = ftc_wire_segment_digest(key, b, sizeof(b));
    b[17] ^= 1;
    CHECK_MSG(d0 != ftc_wire_segment_digest(key, b, sizeof(b))
                  && ftc_wire_segment_digest(key, b, sizeof(b))
                         != ftc_wire_segment_digest(other, b, sizeof(b)),
              "the digest changes with a byte and with the key");
    CHECK_MSG(bad_rt == 0, "digest-MACed segments round-trip (%u)", n);
    CHECK_MSG(bad_key == 0, "a digest-MACed segment under another key is "
                            "FTC_EAUTH");
    CHECK_MSG(bad_unkeyed == 0, "a digest-MACed segment to an unkeyed "
                                "receiver is FTC_EFOREIGN");
    CHECK_MSG(bad_flip == 0, "no single bit flip of a digest-MACed segment "
                             "is accepted");
    CHECK_MSG(bad_swap == 0, "other bytes under the same MAC are FTC_EAUTH");
    CHECK_MSG(bad_noseg == 0, "the digest form without FTC_WF_SEGMENT is "
                              "FTC_EAUTH");
    CHECK_MSG(bad_plain == 0, "FTC_WF_DIGEST without a MAC is FTC_EBADMSG");
}

/* The encoder copies the header struct, which is laid out as the wire
 * (wire.h), and stamps the fields only it writes: whatever a caller left
 * in the struct's wire_* fields never reaches the wire, keyed or not. */
static void test_wire_fields_ignored(void)
{
    static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8,
                                    9, 10, 11, 12, 13, 14, 15, 16};
    unsigned bad = 0;
    for (int it = 0; it < 200; it++) {
        ftc_wire_header_t h = random_header(random_kind(), 24);
        ftc_wire_header_t junk = h;
        junk.wire_magic = (uint32_t)rnd();
        junk.wire_version = (uint8_t)rnd();
        junk.wire_reserved1 = (uint16_t)(rnd() | 1);
        junk.wire_crc = (uint32_t)rnd();
        junk.wire_reserved2 = (uint32_t)(rnd() | 1);
        for (int keyed = 0; keyed <= 1; keyed++) {
            uint8_t a[64 + 24], b[64 + 24];
            rnd_fill(a + 64, 24);
            memcpy(b + 64, a + 64, 24);
            ftc_wire_encode_key(&h, a, keyed ? key : NULL);
            ftc_wire_encode_key(&junk, b, keyed ? key : NULL);
            ftc_wire_header_t d;
            if (memcmp(a, b, sizeof(a)) != 0
                || ftc_wire_decode_key(b, sizeof(b), TOKEN,
                                       keyed ? key : NULL, WORLD, &d)
                       != FTC_OK)
                bad++;
        }
    }
    CHECK_MSG(bad == 0, "the struct's wire_* fields never reach the wire");
}

int main(void)
{
    printf("crc32c: %s path\n",
           ftc_crc32c_hw_enabled() ? "SSE4.2 hardware" : "software");
    test_crc_vectors();
    test_crc_chaining();
    test_crc_sw_hw();
    test_crc_message();
    test_crc_tables();
    test_layout();
    test_roundtrip();
    test_unaligned();
    test_wire_fields_ignored();
    test_bitflips();
    test_truncation();
    test_length_lies();
    test_foreign();
    test_bad_fields();
    test_check_order();
    test_signature();
    test_mac();
    test_digest();
    return check_report();
}
