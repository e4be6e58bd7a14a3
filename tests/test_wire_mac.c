/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job key's MAC on the wire (docs/security.md, lib/wire/wire.h) against
 * its definition, computed here by a SipHash-2-4 written straight from the
 * paper and independent of lib/wire/siphash.[ch]:
 *
 *   plain form:  MAC = SipHash-2-4(K, the header's first 48 bytes ||
 *                      the payload): all but the token (bytes 48-55),
 *                      checksum (56-59) and reserved2 (60-63) fields,
 *                      which a keyed message has as 0
 *   digest form: MAC = SipHash-2-4(K, those 48 bytes || sub-header || D),
 *                D = SipHash-2-4(K_d, the segment's bytes),
 *                K_d = SipHash(K, "ftcoll segment digest 0") ||
 *                      SipHash(K, "ftcoll segment digest 1")
 *
 * The library computes these in place, reading the header's first six
 * words (lib/wire/wire.c, mac_header): this test pins
 * the value it computes (for every tail length, on unaligned buffers) and
 * what a receiver does with every single bit of a keyed message flipped,
 * which is the check order of ftc_wire_decode_key: whatever reaches the
 * MAC check fails it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitmix.h"
#include "ftcoll/error.h"
#include "check.h"
#include "wire/siphash.h"
#include "wire/wire.h"

#define TOKEN UINT64_C(0x0ddba11cafef00d5)
#define WORLD 64u

/* ---- the reference: SipHash-2-4 as the paper gives it ------------------ */

static uint64_t ref_rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static uint64_t ref_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void ref_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void ref_sipround(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = ref_rotl(v[1], 13) ^ v[0];
    v[0] = ref_rotl(v[0], 32);
    v[2] += v[3];
    v[3] = ref_rotl(v[3], 16) ^ v[2];
    v[0] += v[3];
    v[3] = ref_rotl(v[3], 21) ^ v[0];
    v[2] += v[1];
    v[1] = ref_rotl(v[1], 17) ^ v[2];
    v[2] = ref_rotl(v[2], 32);
}

static uint64_t ref_siphash(const uint8_t key[16], const uint8_t *m, size_t n)
{
    uint64_t k0 = ref_le64(key), k1 = ref_le64(key + 8);
    uint64_t v[4] = {k0 ^ UINT64_C(0x736f6d6570736575),
                     k1 ^ UINT64_C(0x646f72616e646f6d),
                     k0 ^ UINT64_C(0x6c7967656e657261),
                     k1 ^ UINT64_C(0x7465646279746573)};
    /* The input padded to whole blocks, the last byte its length. */
    size_t blocks = n / 8 + 1;
    for (size_t b = 0; b < blocks; b++) {
        uint8_t w[8] = {0};
        for (size_t i = 0; i < 8 && 8 * b + i < n; i++)
            w[i] = m[8 * b + i];
        if (b == blocks - 1)
            w[7] = (uint8_t)n;
        uint64_t mi = ref_le64(w);
        v[3] ^= mi;
        ref_sipround(v);
        ref_sipround(v);
        v[0] ^= mi;
    }
    v[2] ^= 0xff;
    for (int r = 0; r < 4; r++)
        ref_sipround(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* The plain form's MAC of the len-byte message at msg. */
static uint64_t ref_message_mac(const uint8_t key[16], const uint8_t *msg,
                                size_t len)
{
    uint8_t *cut = malloc(len - 16);
    if (cut == NULL)
        abort();
    memcpy(cut, msg, 48);
    memcpy(cut + 48, msg + 64, len - 64);
    uint64_t mac = ref_siphash(key, cut, len - 16);
    free(cut);
    return mac;
}

/* The digest form's MAC of the segment at msg whose bytes digest to d. */
static uint64_t ref_digest_mac(const uint8_t key[16], const uint8_t *msg,
                               uint64_t d)
{
    uint8_t buf[48 + 16 + 8];
    memcpy(buf, msg, 48);
    memcpy(buf + 48, msg + 64, 16);
    ref_put64(buf + 64, d);
    return ref_siphash(key, buf, sizeof(buf));
}

static uint64_t ref_digest(const uint8_t key[16], const uint8_t *bytes,
                           size_t n)
{
    static const char label[2][24] = {"ftcoll segment digest 0",
                                      "ftcoll segment digest 1"};
    uint8_t kd[16];
    ref_put64(kd, ref_siphash(key, (const uint8_t *)label[0], 24));
    ref_put64(kd + 8, ref_siphash(key, (const uint8_t *)label[1], 24));
    return ref_siphash(kd, bytes, n);
}

/* ---- inputs ---------------------------------------------------------------- */

static uint64_t rng_state = UINT64_C(0x5eed0fa11ab1e5ed);

static uint64_t rnd(void)
{
    return splitmix64(&rng_state);
}

static void rnd_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

/* A header the wire accepts, every field random where it may be. */
static ftc_wire_header_t random_header(uint32_t plen)
{
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = (uint8_t)(1 + rnd() % FTC_MSG_FAMILY_MAX);
    h.algo = (uint8_t)(1 + rnd() % 255);
    h.coll = (uint8_t)(rnd() % 4);
    h.flags = (uint16_t)(rnd() & FTC_WF_FAMILY);
    h.group_id = (uint32_t)rnd();
    h.epoch = (uint32_t)rnd();
    h.sender = (uint32_t)(rnd() % WORLD);
    h.seq = rnd();
    h.word = (uint32_t)rnd();
    h.aux = (uint32_t)rnd();
    h.signature = (uint32_t)rnd();
    h.payload_len = plen;
    h.job_token = TOKEN;
    return h;
}

/* ---- the tests ------------------------------------------------------------- */

/* The reference itself, on SipHash-2-4's published vectors (key 00..0f,
 * message 00..len-1), and the library's one-shot and streaming forms
 * against it on every length up to 200 under random keys. */
static void test_reference(void)
{
    uint8_t k[16], m[256];
    for (int i = 0; i < 16; i++)
        k[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        m[i] = (uint8_t)i;
    CHECK_EQ(ref_siphash(k, m, 0), UINT64_C(0x726fdb47dd0e0e31));
    CHECK_EQ(ref_siphash(k, m, 15), UINT64_C(0xa129ca6149be45e5));
    CHECK_EQ(ref_siphash(k, m, 63), UINT64_C(0x958a324ceb064572));

    unsigned bad_one = 0, bad_two = 0, bad_stream = 0;
    for (size_t n = 0; n <= 200; n++) {
        rnd_fill(k, sizeof(k));
        rnd_fill(m, n);
        uint64_t want = ref_siphash(k, m, n);
        if (ftc_siphash(k, m, n) != want)
            bad_one++;
        size_t split = (size_t)(rnd() % (n + 1));
        if (ftc_siphash2(k, m, split, m + split, n - split) != want)
            bad_two++;
        ftc_siphash_t st;
        ftc_siphash_init(&st, k);
        ftc_siphash_update(&st, m, split);
        ftc_siphash_update(&st, m + split, n - split);
        if (ftc_siphash_final(&st) != want)
            bad_stream++;
    }
    CHECK_MSG(bad_one == 0, "ftc_siphash is SipHash-2-4 at every length "
                            "0..200 (%u wrong)", bad_one);
    CHECK_MSG(bad_two == 0, "ftc_siphash2 is SipHash-2-4 of a || b at every "
                            "split (%u wrong)", bad_two);
    CHECK_MSG(bad_stream == 0, "the streaming form is SipHash-2-4 (%u wrong)",
              bad_stream);
}

/* The MAC a keyed sender writes is the definition's, for every payload
 * length 0..64 (every tail length, several whole blocks) and some long
 * ones, at every alignment of the buffer; the receiver accepts it. */
static void test_plain_form(void)
{
    uint8_t key[16];
    unsigned n = 0, bad_mac = 0, bad_crc = 0, bad_decode = 0;
    uint8_t *buf = malloc(8 + 64 + 2000);
    if (buf == NULL)
        abort();
    for (uint32_t plen = 0; plen <= 64 + 3; plen++) {
        uint32_t len_here = plen <= 64 ? plen : (uint32_t)(100 + rnd() % 1900);
        for (size_t at = 0; at < 8; at++, n++) {
            rnd_fill(key, sizeof(key));
            ftc_wire_header_t h = random_header(len_here);
            uint8_t *m = buf + at;
            size_t len = 64 + (size_t)len_here;
            rnd_fill(m, len); /* the encoder must overwrite every field */
            ftc_wire_encode_key(&h, m, key);
            if (ref_le64(m + 48) != ref_message_mac(key, m, len)) {
                bad_mac++;
                printf("  plain MAC wrong: payload %u, buffer + %zu\n",
                       (unsigned)len_here, at);
            }
            if (m[56] | m[57] | m[58] | m[59])
                bad_crc++;
            ftc_wire_header_t d;
            if (ftc_wire_decode_key(m, len, TOKEN, key, WORLD, &d) != FTC_OK
                || d.seq != h.seq || d.payload_len != h.payload_len)
                bad_decode++;
        }
    }
    free(buf);
    CHECK_MSG(bad_mac == 0, "the MAC field is SipHash-2-4 of the header's "
                            "first 48 bytes and the payload (%u of %u wrong)",
              bad_mac, n);
    CHECK_MSG(bad_crc == 0, "a keyed message's checksum field is 0");
    CHECK_MSG(bad_decode == 0, "the receiver accepts every one (%u refused)",
              bad_decode);
}

/* The digest form: the MAC of header, sub-header and digest, the digest
 * under the derived key, as security.md defines them. */
static void test_digest_form(void)
{
    uint8_t key[16];
    unsigned n = 0, bad_digest = 0, bad_mac = 0, bad_decode = 0;
    uint8_t *buf = malloc(8 + 64 + 16 + 300);
    if (buf == NULL)
        abort();
    for (uint32_t chunk = 1; chunk <= 300; chunk += 1 + chunk / 8, n++) {
        rnd_fill(key, sizeof(key));
        ftc_wire_header_t h = random_header(16 + chunk);
        h.flags = (uint16_t)(h.flags | FTC_WF_SEGMENT);
        uint8_t *m = buf + n % 8;
        size_t len = 64 + 16 + (size_t)chunk;
        rnd_fill(m, len);
        memset(m + 64 + 12, 0, 4); /* the sub-header's reserved field */
        const uint8_t *bytes = m + 64 + 16;
        uint64_t dg = ftc_wire_segment_digest(key, bytes, chunk);
        if (dg != ref_digest(key, bytes, chunk))
            bad_digest++;
        ftc_wire_encode_digest(&h, m, key, dg);
        if (ref_le64(m + 48) != ref_digest_mac(key, m, dg))
            bad_mac++;
        ftc_wire_header_t d;
        if (ftc_wire_decode_key(m, len, TOKEN, key, WORLD, &d) != FTC_OK)
            bad_decode++;
    }
    free(buf);
    CHECK_MSG(bad_digest == 0, "the segment digest is SipHash-2-4 under the "
                               "derived key (%u of %u wrong)", bad_digest, n);
    CHECK_MSG(bad_mac == 0, "the digest form's MAC is SipHash-2-4 of header, "
                            "sub-header and digest (%u of %u wrong)",
              bad_mac, n);
    CHECK_MSG(bad_decode == 0, "the receiver accepts every one (%u refused)",
              bad_decode);
}

/* What the receiver must answer for the message with bit `bit` flipped:
 * the check that comes first in ftc_wire_decode_key's order. */
static int expected_rc(const uint8_t *flipped, size_t len, size_t bit)
{
    size_t byte = bit / 8;
    if (byte < 5)
        return FTC_EVERSION;     /* magic, version */
    if (byte >= 44 && byte < 48)
        return FTC_ETRUNCATED;   /* the payload length no longer fits */
    if (byte == 8 && (1u << (bit % 8)) == FTC_WF_MAC) {
        /* No MAC flag: an unkeyed message to a keyed receiver, checked
         * (its checksum field is 0) and refused either way. */
        uint8_t *c = malloc(len);
        if (c == NULL)
            abort();
        memcpy(c, flipped, len);
        memset(c + 56, 0, 4);
        uint32_t crc = ftc_crc32c(0, c, len);
        free(c);
        return crc != 0 ? FTC_ECHECKSUM : FTC_EAUTH;
    }
    return FTC_EAUTH;            /* everything else: the MAC check */
}

/* Every single bit of keyed messages flipped, one at a time, for every
 * payload length 0..17 (each tail length, and past one whole block):
 * never accepted, and refused by the check that comes first; a bit of the
 * token, checksum or reserved2 field included (the MAC does not read
 * them, but the MAC field itself fails, and a keyed message's checksum
 * and reserved2 must be 0). */
static void test_every_bit(void)
{
    uint8_t key[16], m[64 + 17], f[64 + 17];
    unsigned tried = 0, accepted = 0, wrong_rc = 0;
    for (uint32_t plen = 0; plen <= 17; plen++) {
        rnd_fill(key, sizeof(key));
        ftc_wire_header_t h = random_header(plen);
        size_t len = 64 + (size_t)plen;
        rnd_fill(m + 64, plen);
        ftc_wire_encode_key(&h, m, key);
        for (size_t bit = 0; bit < 8 * len; bit++, tried++) {
            memcpy(f, m, len);
            f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            ftc_wire_header_t d;
            int rc = ftc_wire_decode_key(f, len, TOKEN, key, WORLD, &d);
            int want = expected_rc(f, len, bit);
            if (rc == FTC_OK)
                accepted++;
            if (rc != want) {
                wrong_rc++;
                if (wrong_rc <= 10)
                    printf("  payload %u, bit %zu: %s, expected %s\n",
                           (unsigned)plen, bit, ftc_err_name(rc),
                           ftc_err_name(want));
            }
        }
    }
    CHECK_MSG(accepted == 0, "no single bit flip of a keyed message is "
                             "accepted (%u of %u were)", accepted, tried);
    CHECK_MSG(wrong_rc == 0, "each flip is refused by the first check it "
                             "fails (%u of %u otherwise)", wrong_rc, tried);
}

int main(void)
{
    test_reference();
    test_plain_form();
    test_digest_form();
    test_every_bit();
    return check_report();
}
