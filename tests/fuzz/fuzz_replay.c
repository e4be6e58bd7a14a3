/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs the libFuzzer target without libFuzzer, so any compiler exercises it:
 * first over the files named on the command line (crash reproducers, a
 * corpus), then over pseudo-random inputs made by damaging valid messages.
 *
 *   fuzz_replay [-runs=N] [-seed=N] [FILE...]
 *
 * The target aborts on any wrong verdict; this driver also tallies the
 * verdicts itself and fails if some class of input was never produced.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftcoll/error.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same values as in fuzz_decode.c, so that generated messages pass the
 * token and sender checks there. */
#define FUZZ_TOKEN UINT64_C(0x0123456789abcdef)
#define FUZZ_WORLD 64u

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)(rnd() % n);
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_crc(uint8_t *m, size_t len)
{
    wr32(m + 56, 0);
    wr32(m + 56, ftc_crc32c(0, m, len));
}

static unsigned long tally[FTC_ERROR_COUNT];

/* Longest input made of random bytes only. */
#define NOISE_MAX 200u

static void run(const uint8_t *data, size_t size)
{
    /* An exact-size copy, as libFuzzer gives, so that sanitizers see any
     * read past the end. */
    uint8_t *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL)
        abort();
    if (size > 0)
        memcpy(copy, data, size);
    ftc_wire_header_t h;
    int rc = ftc_wire_decode(copy, size, FUZZ_TOKEN, FUZZ_WORLD, &h);
    if (rc <= 0 && rc > -FTC_ERROR_COUNT)
        tally[-rc]++;
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (buf == NULL)
            abort();
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    run(buf, len);
    free(buf);
    return 0;
}

/* A valid message (to this receiver) with up to maxp payload bytes. */
static uint8_t *valid_message(size_t *len, uint32_t maxp)
{
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    /* A family's kind under a family's algo byte, or a core kind. */
    if (below(4) == 0) {
        h.kind = (uint8_t)(FTC_MSG_CORE_MIN
                           + below(FTC_MSG_CORE_MAX - FTC_MSG_CORE_MIN + 1));
        h.algo = (uint8_t)below(3);
    } else {
        h.kind = (uint8_t)(1 + below(FTC_MSG_FAMILY_MAX));
        h.algo = (uint8_t)(1 + below(255));
    }
    h.coll = (uint8_t)below(4);
    h.flags = (uint16_t)(rnd() & FTC_WF_ALL);
    h.group_id = (uint32_t)rnd();
    h.epoch = (uint32_t)rnd();
    h.sender = below(FUZZ_WORLD);
    h.seq = rnd();
    h.word = (uint32_t)rnd();
    h.aux = (uint32_t)rnd();
    h.signature = (uint32_t)rnd();
    h.payload_len = below(maxp + 1);
    h.job_token = FUZZ_TOKEN;
    *len = FTC_WIRE_HEADER_SIZE + h.payload_len;
    /* Room for trailing bytes and for noise inputs. */
    size_t cap = *len + 32 > NOISE_MAX ? *len + 32 : NOISE_MAX;
    uint8_t *m = malloc(cap);
    if (m == NULL)
        abort();
    for (size_t i = FTC_WIRE_HEADER_SIZE; i < cap; i++)
        m[i] = (uint8_t)rnd();
    ftc_wire_encode(&h, m);
    return m;
}

static void random_input(void)
{
    size_t len;
    uint8_t *m = valid_message(&len, below(4) == 0 ? 600 : 40);
    switch (below(10)) {
    case 0: /* untouched */
        break;
    case 1: /* a few flipped bits */
        for (uint32_t k = 1 + below(4); k > 0; k--) {
            size_t bit = below((uint32_t)(8 * len));
            m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        break;
    case 2: /* flipped bits in the header, checksum recomputed */
        for (uint32_t k = 1 + below(3); k > 0; k--) {
            size_t bit = below(8 * FTC_WIRE_HEADER_SIZE);
            m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        if (below(4) != 0)
            fix_crc(m, len);
        break;
    case 3: /* truncated */
        len = below((uint32_t)len);
        break;
    case 4: /* trailing bytes */
        len += 1 + below(32);
        break;
    case 5: { /* length field changed, checksum sometimes recomputed */
        uint32_t plen = (uint32_t)(len - FTC_WIRE_HEADER_SIZE);
        static const int32_t deltas[] = {-2, -1, 1, 2, 64, -64};
        uint32_t v = below(3) == 0 ? (uint32_t)rnd()
                                   : plen + (uint32_t)deltas[below(6)];
        wr32(m + 44, v);
        if (below(2) == 0)
            fix_crc(m, len);
        break;
    }
    case 6: { /* one header byte set to anything, checksum recomputed */
        size_t at = below(FTC_WIRE_HEADER_SIZE);
        m[at] = (uint8_t)rnd();
        if (at < 56 || at >= 60)
            fix_crc(m, len);
        break;
    }
    case 7: { /* a field the receiver must reject, checksum recomputed */
        static const size_t fields[] = {5, 6, 7, 9, 10, 11, 20, 21, 60, 63};
        size_t at = fields[below(10)];
        m[at] = (uint8_t)(m[at] + 1 + below(255));
        fix_crc(m, len);
        break;
    }
    case 8: /* another job, checksum recomputed */
        m[48 + below(8)] ^= (uint8_t)(1 + below(255));
        fix_crc(m, len);
        break;
    default: /* noise */
        len = below(NOISE_MAX + 1);
        for (size_t i = 0; i < len; i++)
            m[i] = (uint8_t)rnd();
        break;
    }
    run(m, len);
    free(m);
}

int main(int argc, char **argv)
{
    unsigned long runs = 100000, files = 0;
    unsigned long long seed = 20240601;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-runs=", 6) == 0) {
            runs = strtoul(argv[i] + 6, NULL, 10);
        } else if (strncmp(argv[i], "-seed=", 6) == 0) {
            seed = strtoull(argv[i] + 6, NULL, 10);
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [-runs=N] [-seed=N] [FILE...]\n",
                    argv[0]);
            return 2;
        } else {
            if (run_file(argv[i]) != 0)
                return 1;
            files++;
        }
    }
    rng_state = seed;
    for (unsigned long i = 0; i < runs; i++)
        random_input();

    static const int expected[] = {FTC_OK,       FTC_ETRUNCATED,
                                   FTC_ECHECKSUM, FTC_EVERSION,
                                   FTC_EFOREIGN, FTC_EBADMSG};
    int missing = 0;
    printf("fuzz-replay: %lu files, %lu generated inputs (seed %llu)\n", files,
           runs, seed);
    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
        printf("  %-15s %lu\n", ftc_err_name(expected[i]),
               tally[-expected[i]]);
        if (runs >= 1000 && tally[-expected[i]] == 0) {
            printf("FAIL: no input gave %s\n", ftc_err_name(expected[i]));
            missing++;
        }
    }
    printf("%d passed, %d failed\n", missing == 0, missing != 0);
    return missing == 0 ? 0 : 1;
}
