/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FTCOLL_* core knobs: their table (for ftcoll-info) and
 * ftc_config_from_env, which the embedder calls if it wants them (the core
 * itself never reads the environment).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/ftcoll.h"

typedef struct knob {
    ftc_knob_info_t info;
    size_t offset;      /* of the field in ftc_config_t */
    size_t width;       /* its size: sizeof(uint64_t) or sizeof(uint32_t) */
    bool nonzero;       /* 0 is not a valid value */
    uint64_t max;       /* the largest valid value */
    bool hex;           /* hexadecimal, 0x optional (as ftcoll-run writes
                           FTCOLL_JOB_TOKEN); else decimal or 0x hex */
} knob_t;

#define U64 sizeof(uint64_t)
#define U32 sizeof(uint32_t)

static const knob_t knobs[] = {
    {{"FTCOLL_SUSPECT_TIMEOUT_NS", "100000000",
      "silence from a waited-on peer before it is probed (ns)"},
     offsetof(ftc_config_t, suspect_timeout_ns), U64, true, UINT64_MAX, false},
    {{"FTCOLL_PROBE_TIMEOUT_NS", "200000000",
      "first wait for a probe's answer (ns); FTCOLL_PROBE_BACKOFF says how "
      "often it doubles"},
     offsetof(ftc_config_t, probe_timeout_ns), U64, true, UINT64_MAX, false},
    {{"FTCOLL_PROBE_BACKOFF", "3",
      "times an unanswered probe's wait is extended, each time by twice as "
      "much, before the peer is declared failed; 0: no extension"},
     offsetof(ftc_config_t, probe_backoff), U32, false, FTC_PROBE_BACKOFF_MAX,
     false},
    {{"FTCOLL_JOB_TOKEN", "0",
      "token every message carries, hexadecimal; other jobs' messages are "
      "dropped"},
     offsetof(ftc_config_t, job_token), U64, false, UINT64_MAX, true},
    {{"FTCOLL_SEED", "0", "seed of the operations' random stream"},
     offsetof(ftc_config_t, seed), U64, false, UINT64_MAX, false},
    /* Bounded by the wire's 32-bit length field (the context refuses a
     * segment longer than a whole message may be). */
    {{"FTCOLL_SEGMENT_SIZE", "262144",
      "payloads longer than this travel as segments of this many bytes"},
     offsetof(ftc_config_t, segment_size), U64, true, UINT32_MAX / 2, false},
    {{"FTCOLL_SEGMENT_WINDOW", "4",
      "segments per destination sent and not yet credited"},
     offsetof(ftc_config_t, segment_window), U32, true, UINT32_MAX, false},
    {{"FTCOLL_PENDING_MAX_MSGS", "65536",
      "messages a peer may have waiting here for operations not started "
      "yet, per group; beyond, it is excluded"},
     offsetof(ftc_config_t, pending_max_msgs), U32, true, UINT32_MAX, false},
    {{"FTCOLL_PENDING_MAX_BYTES", "1073741824",
      "bytes a peer may have waiting here for operations not started yet, "
      "per group; beyond, it is excluded"},
     offsetof(ftc_config_t, pending_max_bytes), U64, true, UINT64_MAX,
     false},
};

/* Not a number, so not in the table above: the job key (docs/security.md).
 * Set, it turns authentication on (auth = 1) with that key. */
static const ftc_knob_info_t job_key_knob = {
    "FTCOLL_JOB_KEY", "unset",
    "the job's 16-byte secret as 32 hexadecimal digits (ftcoll-run and the "
    "PMIx bootstrap make one); set, every message is authenticated with it"};
enum { NKNOBS = sizeof(knobs) / sizeof(knobs[0]) };

uint32_t ftc_config_knob_count(void)
{
    return NKNOBS + 1;
}

const ftc_knob_info_t *ftc_config_knob(uint32_t i)
{
    if (i < NKNOBS)
        return &knobs[i].info;
    return i == NKNOBS ? &job_key_knob : NULL;
}

/* A whole decimal (or 0x hexadecimal) uint64_t, nothing else; with hex,
 * hexadecimal whether or not 0x leads. */
static bool parse_u64(const char *s, bool hex, uint64_t *out)
{
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ')
        return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, hex ? 16 : 0);
    if (errno != 0 || end == s || *end != '\0')
        return false;
    *out = (uint64_t)v;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Exactly 32 hexadecimal digits: the 16 bytes of the key. */
static bool parse_key(const char *s, uint8_t key[16])
{
    if (strlen(s) != 32)
        return false;
    for (int i = 0; i < 16; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

int ftc_config_from_env(ftc_config_t *cfg, const char **bad)
{
    if (bad != NULL)
        *bad = NULL;
    if (cfg == NULL || cfg->size < sizeof(ftc_config_t))
        return FTC_EINVAL;
    /* All or nothing: parse every knob before changing cfg. */
    ftc_config_t next = *cfg;
    for (uint32_t i = 0; i < NKNOBS; i++) {
        const char *v = getenv(knobs[i].info.name);
        if (v == NULL)
            continue;
        uint64_t x;
        if (!parse_u64(v, knobs[i].hex, &x) || (knobs[i].nonzero && x == 0)
            || x > knobs[i].max) {
            if (bad != NULL)
                *bad = knobs[i].info.name;
            return FTC_EINVAL;
        }
        if (knobs[i].width == U32) {
            uint32_t x32 = (uint32_t)x;
            memcpy((char *)&next + knobs[i].offset, &x32, sizeof(x32));
        } else {
            memcpy((char *)&next + knobs[i].offset, &x, sizeof(x));
        }
    }
    const char *key = getenv(job_key_knob.name);
    if (key != NULL && *key != '\0') {
        if (!parse_key(key, next.auth_key)) {
            if (bad != NULL)
                *bad = job_key_knob.name;
            return FTC_EINVAL;
        }
        next.auth = 1;
    }
    *cfg = next;
    return FTC_OK;
}
