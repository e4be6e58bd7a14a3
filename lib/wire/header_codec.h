/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The 64-byte header's bytes (wire.h's table), as inline functions: the
 * field stores of an encode, and a decode's checks and parse but for the
 * MAC. wire.c builds its public functions from them, and the two paths
 * every message takes (the send in core/send.c, the receive in
 * core/dispatch.c) use them directly: a call of their own per message
 * cost a prologue, an epilogue and the argument moves, some 30
 * instructions a side (docs/latency.md, "A steady stream's path").
 *
 * Every field is packed byte by byte in little-endian order, so the code
 * needs neither aligned buffers nor a little-endian host; the compiler
 * merges the byte stores and loads into one access each on a
 * little-endian host.
 */
#ifndef FTC_LIB_WIRE_HEADER_CODEC_H
#define FTC_LIB_WIRE_HEADER_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ftcoll/collective.h"
#include "ftcoll/error.h"
#include "wire/wire.h"

/* Field offsets, as the table in wire.h gives them. */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_KIND = 5,
    OFF_ALGO = 6,
    OFF_COLL = 7,
    OFF_FLAGS = 8,
    OFF_RESERVED1 = 10,
    OFF_GROUP_ID = 12,
    OFF_EPOCH = 16,
    OFF_SENDER = 20,
    OFF_SEQ = 24,
    OFF_WORD = 32,
    OFF_AUX = 36,
    OFF_SIGNATURE = 40,
    OFF_PAYLOAD_LEN = 44,
    OFF_JOB_TOKEN = 48,
    OFF_CRC = 56,
    OFF_RESERVED2 = 60
};

/* The struct mirrors the wire (wire.h): checked here, where the copy
 * relies on it. */
_Static_assert(sizeof(ftc_wire_header_t) == FTC_WIRE_HEADER_SIZE,
               "ftc_wire_header_t is the header's 64 bytes");
_Static_assert(offsetof(ftc_wire_header_t, kind) == OFF_KIND
                   && offsetof(ftc_wire_header_t, algo) == OFF_ALGO
                   && offsetof(ftc_wire_header_t, coll) == OFF_COLL
                   && offsetof(ftc_wire_header_t, flags) == OFF_FLAGS
                   && offsetof(ftc_wire_header_t, group_id) == OFF_GROUP_ID
                   && offsetof(ftc_wire_header_t, epoch) == OFF_EPOCH
                   && offsetof(ftc_wire_header_t, sender) == OFF_SENDER
                   && offsetof(ftc_wire_header_t, seq) == OFF_SEQ
                   && offsetof(ftc_wire_header_t, word) == OFF_WORD
                   && offsetof(ftc_wire_header_t, aux) == OFF_AUX
                   && offsetof(ftc_wire_header_t, signature) == OFF_SIGNATURE
                   && offsetof(ftc_wire_header_t, payload_len)
                          == OFF_PAYLOAD_LEN
                   && offsetof(ftc_wire_header_t, job_token) == OFF_JOB_TOKEN
                   && offsetof(ftc_wire_header_t, wire_crc) == OFF_CRC,
               "ftc_wire_header_t's fields sit at their wire offsets");

/* True when this host stores integers little-endian: the header's
 * integers are then the struct's bytes as they are (a constant the
 * compiler folds). */
static inline bool host_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Largest valid value of the coll byte (0: control message). Any algo
 * byte may name a family (the registry is above this layer). */
#define WIRE_COLL_MAX ((unsigned)FTC_COLL_SHRINK)

static inline void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* FTC_WF_BIG_ENDIAN when this host stores integers big-endian, else 0 (a
 * constant the compiler folds). */
static inline uint16_t host_order_flag(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 0 ? (uint16_t)FTC_WF_BIG_ENDIAN : 0;
}

/* The 64 header bytes, with the token and checksum fields zero when
 * keyed (the MAC goes in afterwards), and the checksum zero always (the
 * caller writes it over the finished message). */
static inline __attribute__((always_inline)) void
ftc_wire_write_header(const ftc_wire_header_t *hdr, uint8_t *msg,
                      uint16_t keyed_flags)
{
    uint16_t flags = (uint16_t)((hdr->flags
                                 & ~(unsigned)(FTC_WF_BIG_ENDIAN | FTC_WF_MAC
                                               | FTC_WF_DIGEST))
                                | host_order_flag() | keyed_flags);
    if (host_little_endian()) {
        /* The struct is the wire's bytes: copy it, then stamp what only
         * this layer writes (magic, version, flags and the first reserved
         * field, token, checksum and the second reserved field). */
        memcpy(msg, hdr, FTC_WIRE_HEADER_SIZE);
        put32(msg + OFF_MAGIC, FTC_WIRE_MAGIC);
        msg[OFF_VERSION] = (uint8_t)FTC_WIRE_VERSION;
        put32(msg + OFF_FLAGS, flags);
        if (keyed_flags != 0)
            put64(msg + OFF_JOB_TOKEN, 0);
        put64(msg + OFF_CRC, 0);
        return;
    }
    put32(msg + OFF_MAGIC, FTC_WIRE_MAGIC);
    msg[OFF_VERSION] = (uint8_t)FTC_WIRE_VERSION;
    msg[OFF_KIND] = hdr->kind;
    msg[OFF_ALGO] = hdr->algo;
    msg[OFF_COLL] = hdr->coll;
    put16(msg + OFF_FLAGS, flags);
    put16(msg + OFF_RESERVED1, 0);
    put32(msg + OFF_GROUP_ID, hdr->group_id);
    put32(msg + OFF_EPOCH, hdr->epoch);
    put32(msg + OFF_SENDER, hdr->sender);
    put64(msg + OFF_SEQ, hdr->seq);
    put32(msg + OFF_WORD, hdr->word);
    put32(msg + OFF_AUX, hdr->aux);
    put32(msg + OFF_SIGNATURE, hdr->signature);
    put32(msg + OFF_PAYLOAD_LEN, hdr->payload_len);
    put64(msg + OFF_JOB_TOKEN, keyed_flags != 0 ? 0 : hdr->job_token);
    put32(msg + OFF_CRC, 0);
    put32(msg + OFF_RESERVED2, 0);
}

/* The unkeyed encode (ftc_wire_encode): header, then the checksum over
 * header and payload. */
static inline __attribute__((always_inline)) void
ftc_wire_encode_inline(const ftc_wire_header_t *hdr, uint8_t *msg)
{
    ftc_wire_write_header(hdr, msg, 0);
    put32(msg + OFF_CRC,
          ftc_crc32c_message(msg,
                             (size_t)FTC_WIRE_HEADER_SIZE + hdr->payload_len));
}

/* A decode's first checks, before any checksum or MAC: FTC_ETRUNCATED
 * (shorter than a header, or not header + payload length), FTC_EVERSION
 * (magic or version), in that order. */
static inline __attribute__((always_inline)) int
ftc_wire_check_frame(const uint8_t *p, size_t len)
{
    if (len < FTC_WIRE_HEADER_SIZE)
        return FTC_ETRUNCATED;
    if (get32(p + OFF_MAGIC) != FTC_WIRE_MAGIC
        || p[OFF_VERSION] != FTC_WIRE_VERSION)
        return FTC_EVERSION;
    if ((uint64_t)(len - FTC_WIRE_HEADER_SIZE) != get32(p + OFF_PAYLOAD_LEN))
        return FTC_ETRUNCATED;
    return FTC_OK;
}

/* The unkeyed integrity check, after the frame's: the checksum (unless
 * verify_crc is false: tests only), then the job token; a keyed message
 * is another job's (FTC_EFOREIGN), and a digest without a MAC is
 * FTC_EBADMSG. */
static inline __attribute__((always_inline)) int
ftc_wire_check_unkeyed(const uint8_t *p, size_t len, uint64_t job_token,
                       bool verify_crc)
{
    if (verify_crc && get32(p + OFF_CRC) != ftc_crc32c_message(p, len)) {
        /* A keyed message (checksum 0) that reached a receiver without
         * the key is another job's, not a corrupted one. */
        if ((get16(p + OFF_FLAGS) & FTC_WF_MAC) && get32(p + OFF_CRC) == 0)
            return FTC_EFOREIGN;
        return FTC_ECHECKSUM;
    }
    if (get64(p + OFF_JOB_TOKEN) != job_token
        || (get16(p + OFF_FLAGS) & FTC_WF_MAC))
        return FTC_EFOREIGN;
    /* A digest stands in for bytes only under a MAC. */
    if (get16(p + OFF_FLAGS) & FTC_WF_DIGEST)
        return FTC_EBADMSG;
    return FTC_OK;
}

/* The last checks, once the message is known intact and ours: the kind,
 * the reserved fields and flag bits, the payload's byte order, the
 * sender, the coll byte; each wrong one is FTC_EBADMSG, so they are
 * evaluated together, without a branch each. Then the parse into *hdr
 * (the token field is the job's: a keyed message carries its MAC
 * there). */
static inline __attribute__((always_inline)) int
ftc_wire_check_fields(const uint8_t *p, uint64_t job_token,
                      uint32_t world_size, ftc_wire_header_t *hdr)
{
    unsigned kind = p[OFF_KIND], algo = p[OFF_ALGO], coll = p[OFF_COLL];
    /* Flags and the first reserved field, one 32-bit word: every bit
     * outside FTC_WF_ALL must be 0, and the byte-order bit the host's. */
    uint32_t flags_word = get32(p + OFF_FLAGS);
    uint32_t sender = get32(p + OFF_SENDER);
    bool bad = !ftc_wire_kind_ok(kind, algo);
    bad |= (flags_word & ~((uint32_t)FTC_WF_ALL & ~(uint32_t)FTC_WF_BIG_ENDIAN))
           != host_order_flag();
    bad |= get32(p + OFF_RESERVED2) != 0;
    bad |= sender >= world_size;
    bad |= coll > WIRE_COLL_MAX;
    if (bad)
        return FTC_EBADMSG;

    if (host_little_endian()) {
        /* The struct is the wire's bytes (wire.h). */
        memcpy(hdr, p, FTC_WIRE_HEADER_SIZE);
        hdr->job_token = job_token;
        return FTC_OK;
    }
    hdr->kind = (uint8_t)kind;
    hdr->algo = (uint8_t)algo;
    hdr->coll = (uint8_t)coll;
    hdr->flags = (uint16_t)flags_word;
    hdr->group_id = get32(p + OFF_GROUP_ID);
    hdr->epoch = get32(p + OFF_EPOCH);
    hdr->sender = sender;
    hdr->seq = get64(p + OFF_SEQ);
    hdr->word = get32(p + OFF_WORD);
    hdr->aux = get32(p + OFF_AUX);
    hdr->signature = get32(p + OFF_SIGNATURE);
    hdr->payload_len = get32(p + OFF_PAYLOAD_LEN);
    hdr->job_token = job_token;
    hdr->wire_magic = FTC_WIRE_MAGIC;
    hdr->wire_version = (uint8_t)FTC_WIRE_VERSION;
    hdr->wire_reserved1 = 0;
    hdr->wire_crc = get32(p + OFF_CRC);
    hdr->wire_reserved2 = 0;
    return FTC_OK;
}

/* The unkeyed decode (ftc_wire_decode_opts with key NULL), whole. */
static inline __attribute__((always_inline)) int
ftc_wire_decode_unkeyed(const void *buf, size_t len, uint64_t job_token,
                        uint32_t world_size, bool verify_crc,
                        ftc_wire_header_t *hdr)
{
    const uint8_t *p = buf;
    int rc = ftc_wire_check_frame(p, len);
    if (rc == FTC_OK)
        rc = ftc_wire_check_unkeyed(p, len, job_token, verify_crc);
    if (rc == FTC_OK)
        rc = ftc_wire_check_fields(p, job_token, world_size, hdr);
    return rc;
}

#endif
