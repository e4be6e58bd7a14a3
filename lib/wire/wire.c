/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Encoding and checking of the 64-byte message header (wire.h): the
 * public functions, built from the header's inline pieces
 * (wire/header_codec.h), and the MAC.
 */
#include "wire/siphash.h"
#include "wire/wire.h"

#include <string.h>

#include "ftcoll/collective.h"
#include "ftcoll/error.h"
#include "wire/header_codec.h"

/* CRC32C of the len-byte message (len >= the header) with its checksum
 * field read as zero. */
static uint32_t message_crc(const uint8_t *msg, size_t len)
{
    return ftc_crc32c_message(msg, len);
}

/* SipHash-2-4 under key, begun with the first 48 header bytes (six
 * words, read in place), and the state it leaves. The last 16, the token
 * (bytes 48-55), the checksum (56-59) and reserved2 (60-63), are not
 * absorbed: a keyed message must have all three 0 (the token holds the
 * MAC itself; decode refuses a checksum or reserved2 that is not 0), so
 * they carry nothing to authenticate, and two blocks fewer are a sixth of
 * the MAC of a short message (wire version 3; version 2 absorbed them as
 * zeros). */
static inline __attribute__((always_inline)) ftc_sipstate_t
mac_header(const uint8_t *key, const uint8_t *msg)
{
    _Static_assert(OFF_JOB_TOKEN == FTC_WIRE_MAC_HEADER && OFF_CRC == 56
                       && OFF_RESERVED2 == 60 && FTC_WIRE_HEADER_SIZE == 64,
                   "the MAC reads the header's first six words");
    ftc_sipstate_t s = ftc_sip_start(key);
    ftc_sip_block(&s, ftc_sip_load64le(msg));
    ftc_sip_block(&s, ftc_sip_load64le(msg + 8));
    ftc_sip_block(&s, ftc_sip_load64le(msg + 16));
    ftc_sip_block(&s, ftc_sip_load64le(msg + 24));
    ftc_sip_block(&s, ftc_sip_load64le(msg + 32));
    ftc_sip_block(&s, ftc_sip_load64le(msg + 40));
    return s;
}

/* SipHash-2-4 of the len-byte message without the header's last 16
 * bytes: its first 48, then the payload. */
static uint64_t message_mac(const uint8_t *key, const uint8_t *msg, size_t len)
{
    ftc_sipstate_t s = mac_header(key, msg);
    return ftc_sip_end(&s, msg + FTC_WIRE_HEADER_SIZE,
                       len - FTC_WIRE_HEADER_SIZE,
                       (uint64_t)(len - FTC_WIRE_HEADER_SIZE
                                  + FTC_WIRE_MAC_HEADER));
}

/* The key the segment digests are computed under: derived from the job
 * key (two SipHash-2-4 outputs of fixed labels), so that a digest, which
 * never travels, is never a value of the MAC function itself. */
static void digest_key(const uint8_t *key, uint8_t out[16])
{
    static const char label[2][24] = {"ftcoll segment digest 0",
                                      "ftcoll segment digest 1"};
    put64(out, ftc_siphash(key, label[0], sizeof(label[0])));
    put64(out + 8, ftc_siphash(key, label[1], sizeof(label[1])));
}

uint64_t ftc_wire_segment_digest(const uint8_t *key, const void *bytes,
                                 size_t len)
{
    uint8_t dk[16];
    digest_key(key, dk);
    return ftc_siphash(dk, bytes, len);
}

/* The MAC of a segment with FTC_WF_DIGEST: SipHash-2-4 under the job key
 * of the header (token and checksum read as zero), the sub-header and
 * the digest of the len - header - sub-header bytes after them. */
static uint64_t digest_mac(const uint8_t *key, const uint8_t *msg,
                           uint64_t digest)
{
    _Static_assert(FTC_WIRE_SEGMENT_HDR == 16, "two sub-header words");
    const uint8_t *sub = msg + FTC_WIRE_HEADER_SIZE;
    ftc_sipstate_t s = mac_header(key, msg);
    ftc_sip_block(&s, ftc_sip_load64le(sub));
    ftc_sip_block(&s, ftc_sip_load64le(sub + 8));
    ftc_sip_block(&s, digest);
    return ftc_sip_finish(
        &s, (uint64_t)(FTC_WIRE_MAC_HEADER + FTC_WIRE_SEGMENT_HDR + 8) << 56);
}

void ftc_wire_encode(const ftc_wire_header_t *hdr, uint8_t *msg)
{
    ftc_wire_encode_key(hdr, msg, NULL);
}

void ftc_wire_encode_key(const ftc_wire_header_t *hdr, uint8_t *msg,
                         const uint8_t *key)
{
    ftc_wire_write_header(hdr, msg, key != NULL ? (uint16_t)FTC_WF_MAC : 0);
    if (key != NULL) {
        /* The MAC detects corruption as well as forgery: no checksum. */
        put64(msg + OFF_JOB_TOKEN,
              message_mac(key, msg,
                          (size_t)FTC_WIRE_HEADER_SIZE + hdr->payload_len));
        return;
    }
    put32(msg + OFF_CRC,
          message_crc(msg, (size_t)FTC_WIRE_HEADER_SIZE + hdr->payload_len));
}

void ftc_wire_encode_digest(const ftc_wire_header_t *hdr, uint8_t *msg,
                            const uint8_t *key, uint64_t digest)
{
    ftc_wire_header_t h = *hdr;
    h.flags = (uint16_t)(h.flags | FTC_WF_SEGMENT);
    ftc_wire_write_header(&h, msg, (uint16_t)(FTC_WF_MAC | FTC_WF_DIGEST));
    put64(msg + OFF_JOB_TOKEN, digest_mac(key, msg, digest));
}

int ftc_wire_decode(const void *buf, size_t len, uint64_t job_token,
                    uint32_t world_size, ftc_wire_header_t *hdr)
{
    return ftc_wire_decode_key(buf, len, job_token, NULL, world_size, hdr);
}

int ftc_wire_decode_key(const void *buf, size_t len, uint64_t job_token,
                        const uint8_t *key, uint32_t world_size,
                        ftc_wire_header_t *hdr)
{
    return ftc_wire_decode_opts(buf, len, job_token, key, world_size, true,
                                hdr);
}

int ftc_wire_decode_opts(const void *buf, size_t len, uint64_t job_token,
                         const uint8_t *key, uint32_t world_size,
                         bool verify_crc, ftc_wire_header_t *hdr)
{
    const uint8_t *p = buf;
    if (key == NULL)
        return ftc_wire_decode_unkeyed(buf, len, job_token, world_size,
                                       verify_crc, hdr);
    int rc = ftc_wire_check_frame(p, len);
    if (rc != FTC_OK)
        return rc;
    uint32_t payload_len = get32(p + OFF_PAYLOAD_LEN);
    { /* keyed: the MAC in place of checksum and token */
        /* A message with a MAC has no checksum: the MAC covers both
         * (a corrupted message fails it as a forged one does). */
        if (!(get16(p + OFF_FLAGS) & FTC_WF_MAC)) {
            if (get32(p + OFF_CRC) != message_crc(p, len))
                return FTC_ECHECKSUM;
            return FTC_EAUTH;
        }
        /* The checksum and reserved2 are outside the MAC (mac_header):
         * a keyed message has both 0, and anything else is refused as
         * the MAC would refuse it. */
        if (get64(p + OFF_CRC) != 0)
            return FTC_EAUTH;
        uint16_t fl = get16(p + OFF_FLAGS);
        if (fl & FTC_WF_DIGEST) {
            /* Only a segment has a digest form: anything else with the
             * flag cannot have been made by a holder of the key. */
            if (!(fl & FTC_WF_SEGMENT)
                || payload_len < FTC_WIRE_SEGMENT_HDR)
                return FTC_EAUTH;
            const uint8_t *bytes =
                p + FTC_WIRE_HEADER_SIZE + FTC_WIRE_SEGMENT_HDR;
            uint64_t d = ftc_wire_segment_digest(
                key, bytes, payload_len - FTC_WIRE_SEGMENT_HDR);
            if (get64(p + OFF_JOB_TOKEN) != digest_mac(key, p, d))
                return FTC_EAUTH;
        } else if (get64(p + OFF_JOB_TOKEN) != message_mac(key, p, len)) {
            return FTC_EAUTH;
        }
    }
    return ftc_wire_check_fields(p, job_token, world_size, hdr);
}

/* The splitmix64 finalizer: a bijection on 64 bits with full avalanche. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Absorb one value: a bijection of the state for a fixed v and of v for a
 * fixed state, so changing any one argument changes the 64-bit state. */
static uint64_t absorb(uint64_t h, uint64_t v)
{
    return mix64((h ^ v) + UINT64_C(0x9e3779b97f4a7c15));
}

uint32_t ftc_wire_signature(uint32_t coll, uint32_t algo, uint32_t root,
                            uint32_t f, uint32_t dtype, uint32_t op,
                            uint64_t count, uint32_t variant)
{
    uint64_t h = UINT64_C(0x6674636f6c6c7331); /* "ftcolls1" */
    h = absorb(h, coll);
    h = absorb(h, algo);
    h = absorb(h, root);
    h = absorb(h, f);
    h = absorb(h, dtype);
    h = absorb(h, op);
    h = absorb(h, count);
    h = absorb(h, variant);
    return (uint32_t)(h ^ (h >> 32));
}
