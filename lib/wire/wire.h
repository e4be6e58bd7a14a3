/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire format (DESIGN.md 6). Every message is a fixed 64-byte header
 * followed by payload_len bytes. Header integers are little-endian whatever
 * the host; payload values are in the sender's native order, which the
 * FTC_WF_BIG_ENDIAN flag records (a receiver of the other order drops it).
 *
 *   off size field
 *     0  4   magic "FTCL" (0x4C435446 read little-endian)
 *     4  1   version (FTC_WIRE_VERSION)
 *     5  1   kind    (a family's kind, 1..FTC_MSG_FAMILY_MAX, or a core
 *                   kind, ftc_msg_kind_t)
 *     6  1   algo    (ftc_algo_t: whose kind it is; 0 for the core's own
 *                   operations; a probe names the operation's)
 *     7  1   coll    (ftc_coll_t, 0 for control messages)
 *     8  2   flags   (FTC_WF_*)
 *    10  2   reserved, must be 0
 *    12  4   group id
 *    16  4   group epoch
 *    20  4   sender (world rank)
 *    24  8   operation sequence number
 *    32  4   word    (the family's: the corrected allreduce's root attempt;
 *                   in a keepalive, the operation's progress word)
 *    36  4   aux (kind-specific)
 *    40  4   signature of the operation's arguments (ftc_wire_signature)
 *    44  4   payload length
 *    48  8   job token; or, with FTC_WF_MAC, SipHash-2-4 under the job key
 *            of the header's bytes 0-47 and the payload (with
 *            FTC_WF_DIGEST: of bytes 0-47, the segment sub-header and the
 *            digest of the segment's bytes)
 *    56  4   CRC32C of the whole message with this field taken as 0; 0
 *            with FTC_WF_MAC (the MAC detects corruption too)
 *    60  4   reserved, must be 0
 *
 * A keyed message's last 16 header bytes are all fixed (the MAC, and two
 * fields that must be 0), so the MAC does not read them: version 3 of the
 * wire; version 2 read them as zeros, two SipHash blocks more a message.
 *
 * Decoding never trusts the network: ftc_wire_decode checks length, magic,
 * version, checksum, job token, kind, reserved fields and the sender, and
 * names the first thing wrong.
 */
#ifndef FTC_LIB_WIRE_H
#define FTC_LIB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FTC_WIRE_MAGIC 0x4C435446u
/* 3: the MAC covers the header's first 48 bytes and the payload (2 read
 * the whole header, its token and checksum as 0). 2: kinds and flags per
 * (algorithm, kind); version 1 had one global list. */
#define FTC_WIRE_VERSION 3u
#define FTC_WIRE_HEADER_SIZE 64u
/* The header bytes a MAC covers: all but the token, checksum and
 * reserved2 fields, which a keyed message has as 0. */
#define FTC_WIRE_MAC_HEADER 48u
/* Largest payload the format allows (the length field is 32 bits). */
#define FTC_WIRE_MAX_PAYLOAD (UINT32_MAX - FTC_WIRE_HEADER_SIZE)

#pragma GCC visibility push(hidden)

/*
 * Kinds are namespaced by (algorithm, kind). Kinds 1..FTC_MSG_FAMILY_MAX
 * belong to the family the algo byte names (which must not be 0): each
 * family numbers its own (lib/algo/<family>/) and checks its own kinds
 * and flags (its operations' msg_valid hook). The kinds from
 * FTC_MSG_CORE_MIN up are the core's: keepalives, exclusion, the usage
 * error notice, the group stop, and finalize's LEAVE.
 */
#define FTC_MSG_FAMILY_MAX 0xEFu
typedef enum ftc_msg_kind {
    FTC_MSG_CORE_MIN = 0xF0,
    FTC_MSG_PROBE = 0xF0,     /* keepalive request (control) */
    FTC_MSG_PROBE_ACK = 0xF1, /* keepalive answer (control) */
    FTC_MSG_EXCLUDED = 0xF2,  /* "you were declared failed" (control) */
    FTC_MSG_LEAVE = 0xF3,     /* finalize: delivered everything, leaving */
    FTC_MSG_ENDED = 0xF4,     /* "operation seq ended with error -aux here"
                                 (control): a usage error every member
                                 must see (mismatch, a refused call) */
    FTC_MSG_STOPPED = 0xF5,   /* "the group is stopped with error -aux"
                                 (control; core/stop.c) */
    FTC_MSG_SEG_CREDIT = 0xF6, /* "word segments from you received so far"
                                  (control): the sender's window moves on
                                  (lib/core/segment.h) */
    FTC_MSG_CORE_MAX = 0xF6
} ftc_msg_kind_t;

/* The aux word of FTC_MSG_EXCLUDED: why the sender excluded us. Only a
 * verdict of the sender's own expired probe can be refuted by a receiver
 * that answered that probe (core/cutoff.c); a notice told again to a
 * process others excluded (aux 0, as from older versions) is accepted, as
 * is one for running too far ahead of the sender (core/pending.h).
 * FTC_EXCLUDED_HEARD_YOU is the answer to a message that reached a process
 * which had excluded its sender: it proves the sender is heard, so a
 * receiver that refuted the sender's probe verdict (taking it for a
 * process that hears nobody) learns that it was wrong, and leaves.
 * FTC_EXCLUDED_ASK_EXPIRED is a family's own verdict of the same kind (a
 * question the sender put to us, ftco's KEEPALIVE, unanswered past the
 * sender's wait, which the header's word carries in microseconds): a
 * receiver that answered that question refutes it as it refutes an
 * expired probe (core/cutoff.c). */
enum {
    FTC_EXCLUDED_TOLD_AGAIN = 0,
    FTC_EXCLUDED_PROBE_EXPIRED = 1,
    FTC_EXCLUDED_OVER_BUDGET = 2,
    FTC_EXCLUDED_HEARD_YOU = 3,
    FTC_EXCLUDED_ASK_EXPIRED = 4
};

enum {
    FTC_WF_BIG_ENDIAN = 1u << 0,  /* payload values are big-endian */
    FTC_WF_DIGEST = 1u << 1,      /* with FTC_WF_MAC and FTC_WF_SEGMENT:
                                     the MAC covers the header, the
                                     segment sub-header and a keyed digest
                                     of the segment's bytes, which the
                                     sender computes once for every
                                     destination (ftc_wire_encode_digest) */
    FTC_WF_OP_ENDED = 1u << 5,    /* PROBE_ACK: the operation ended here
                                     with error -aux (e.g. a mismatch) */
    FTC_WF_MAC = 1u << 6,         /* the job-token field holds the
                                     message's SipHash-2-4 under the job
                                     key, not the token */
    FTC_WF_SEGMENT = 1u << 7,     /* one segment of a longer message: the
                                     payload starts with the segment
                                     sub-header below (lib/core/segment.h);
                                     a core flag, valid with any kind */
    FTC_WF_FAMILY = 0xFF00u,      /* the family's own flags (bits 8-15) */
    FTC_WF_ALL = FTC_WF_BIG_ENDIAN | FTC_WF_DIGEST | FTC_WF_OP_ENDED
                 | FTC_WF_MAC | FTC_WF_SEGMENT
                 | FTC_WF_FAMILY  /* bits 2-4 are reserved: 0 */
};

/* A kind the wire accepts: a family's (with a family named) or the
 * core's. */
static inline int ftc_wire_kind_ok(unsigned kind, unsigned algo)
{
    if (kind >= FTC_MSG_CORE_MIN)
        return kind <= FTC_MSG_CORE_MAX;
    return kind >= 1 && kind <= FTC_MSG_FAMILY_MAX && algo != 0;
}

/*
 * Segment sub-header: the first FTC_WIRE_SEGMENT_HDR bytes of the payload
 * of a message with FTC_WF_SEGMENT, little-endian, then the segment's
 * bytes. Every other header field is the whole message's, the same in
 * each of its segments.
 *
 *   off size field
 *     0  4   message id (per sender, distinct for every segmented message)
 *     4  4   offset of this segment's bytes in the whole payload
 *     8  4   total length of the whole payload
 *    12  4   reserved, must be 0
 */
#define FTC_WIRE_SEGMENT_HDR 16u

/*
 * A header's fields. The struct is laid out as the wire's 64 bytes are
 * (the table above), so that on a little-endian host encoding is a copy
 * of it with the fields only the wire layer writes stamped over, and
 * decoding, once the checks passed, a copy back (wire/header_codec.h).
 * Those fields, wire_*, are the encoder's and the decoder's alone: what
 * a caller leaves in them is never sent, and a decoded header holds the
 * received bytes there.
 */
typedef struct ftc_wire_header {
    uint32_t wire_magic;
    uint8_t wire_version;
    uint8_t kind, algo, coll;
    uint16_t flags;
    uint16_t wire_reserved1;
    uint32_t group_id, epoch, sender;
    uint64_t seq;
    uint32_t word, aux, signature, payload_len;
    uint64_t job_token;
    uint32_t wire_crc, wire_reserved2;
} ftc_wire_header_t;

/* CRC32C (Castagnoli), as iSCSI, ext4 and RDMA use; crc starts at 0. */
uint32_t ftc_crc32c(uint32_t crc, const void *buf, size_t len);

/* The checksum a message carries: the CRC32C of its len bytes (len >=
 * FTC_WIRE_HEADER_SIZE) with the checksum field, bytes 56-59, read as
 * zero, so neither side copies the header to zero it. */
uint32_t ftc_crc32c_message(const void *msg, size_t len);

/*
 * Write the header for hdr (with hdr->payload_len already set) and the
 * checksum over header and payload into msg, which holds
 * FTC_WIRE_HEADER_SIZE + payload_len bytes with the payload already at
 * msg + FTC_WIRE_HEADER_SIZE.
 */
void ftc_wire_encode(const ftc_wire_header_t *hdr, uint8_t *msg);

/*
 * Check and parse a received message of len bytes. Returns FTC_OK and fills
 * *hdr (payload at buf + FTC_WIRE_HEADER_SIZE, hdr->payload_len bytes), or
 * the first reason to drop it: FTC_ETRUNCATED (len below the header, or not
 * header + payload_len), FTC_EVERSION (magic or version), FTC_ECHECKSUM,
 * FTC_EFOREIGN (job token differs from job_token), FTC_EBADMSG (unknown
 * kind, reserved bits set, sender >= world_size, flags out of range).
 */
int ftc_wire_decode(const void *buf, size_t len, uint64_t job_token,
                    uint32_t world_size, ftc_wire_header_t *hdr);

/*
 * The same with a job key (16 bytes; NULL: the functions above). Encode
 * sets FTC_WF_MAC and writes, in place of the token, SipHash-2-4 under the
 * key of the message without the header's last 16 bytes (its first
 * FTC_WIRE_MAC_HEADER, then the payload), and 0 as the checksum. Decode
 * checks length, magic and version as above, then requires FTC_WF_MAC,
 * zero checksum and reserved2 fields and that MAC,
 * else FTC_EAUTH (a message without MAC and with a bad checksum is still
 * FTC_ECHECKSUM): without the key nobody can make a message this process
 * accepts, nor alter one (the sender field included). A keyed message
 * decoded without a key is FTC_EFOREIGN.
 */
void ftc_wire_encode_key(const ftc_wire_header_t *hdr, uint8_t *msg,
                         const uint8_t *key);
int ftc_wire_decode_key(const void *buf, size_t len, uint64_t job_token,
                        const uint8_t *key, uint32_t world_size,
                        ftc_wire_header_t *hdr);
/*
 * Segments under a key, MACed once for many destinations. The same bytes
 * of a large value often go to several peers (an exchange, a broadcast's
 * children); hashing them again per destination was a sixth of a rank's
 * time. ftc_wire_segment_digest is SipHash-2-4 of a segment's bytes (the
 * payload after its sub-header) under a key derived from the job key,
 * computed once per segment; ftc_wire_encode_digest then writes the
 * message's MAC as SipHash-2-4 under the job key of the header's first
 * FTC_WIRE_MAC_HEADER bytes, the sub-header and that digest, and sets
 * FTC_WF_MAC | FTC_WF_DIGEST. hdr must carry FTC_WF_SEGMENT and msg hold
 * the sub-header and the bytes the digest was computed over. The
 * receiver (ftc_wire_decode_key) recomputes the digest from the bytes it
 * got and checks the MAC the same way (docs/security.md, "Bulk data").
 */
uint64_t ftc_wire_segment_digest(const uint8_t *key, const void *bytes,
                                 size_t len);
void ftc_wire_encode_digest(const ftc_wire_header_t *hdr, uint8_t *msg,
                            const uint8_t *key, uint64_t digest);
/* The same; verify_crc false skips the checksum of an unkeyed message
 * (everything else is still checked). For tests only: a corrupted message
 * then reaches the algorithm, whose own tolerance of bit flips is what
 * such a test exercises (ftc_ctx_test_skip_checksum). */
int ftc_wire_decode_opts(const void *buf, size_t len, uint64_t job_token,
                         const uint8_t *key, uint32_t world_size,
                         bool verify_crc, ftc_wire_header_t *hdr);

/* A 32-bit digest of the arguments all members must agree on; peers that
 * disagree see a signature mismatch instead of garbage. */
uint32_t ftc_wire_signature(uint32_t coll, uint32_t algo, uint32_t root,
                            uint32_t f, uint32_t dtype, uint32_t op,
                            uint64_t count, uint32_t variant);

#pragma GCC visibility pop

#endif
