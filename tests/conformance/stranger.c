/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stranger tools' common part: see stranger.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap_internal.h"
#include "cli.h"
#include "ftcoll/ftcoll.h"
#include "stranger.h"
#include "algo/corrected/kinds.h"

void stranger_msgs_init(stranger_msgs_t *m, uint64_t job_token)
{
    srand((unsigned)time(NULL) ^ (unsigned)clock());
    for (size_t i = 0; i < sizeof(m->random); i++)
        m->random[i] = (unsigned char)rand();
    m->random[0] = 'X';     /* never the magic: a version error, always */

    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = FTC_MSG_PROBE;
    h.group_id = 1;
    h.job_token = 0xBADC0FFEEull;
    if (h.job_token == job_token)
        h.job_token++;
    ftc_wire_encode(&h, m->other_job);
    memcpy(m->broken, m->other_job, sizeof(m->broken));
    m->broken[20] ^= 0x01;  /* the sender field: the CRC no longer matches */

    /* Forged, with the job's token. */
    memset(&h, 0, sizeof(h));
    h.kind = FTC_MSG_EXCLUDED;
    h.group_id = 1;
    h.sender = 0;
    h.job_token = job_token;
    ftc_wire_encode(&h, m->excluded);

    uint8_t guess[16];
    for (size_t i = 0; i < sizeof(guess); i++)
        guess[i] = (uint8_t)rand();
    ftc_wire_encode_key(&h, m->guessed, guess);

    memset(&h, 0, sizeof(h));
    h.kind = FTC_CORR_MSG_TREE_UP;
    h.algo = FTC_ALGO_CORRECTED;
    h.coll = FTC_COLL_ALLREDUCE;
    h.group_id = 1;
    h.sender = 1;
    h.seq = 250;
    h.signature = ftc_wire_signature(FTC_COLL_ALLREDUCE, FTC_ALGO_CORRECTED,
                                     0, 1, FTC_INT64, FTC_SUM, 1, 0);
    h.payload_len = 8;
    h.job_token = job_token;
    int64_t big = 1000000000;
    memcpy(m->inject + FTC_WIRE_HEADER_SIZE, &big, sizeof(big));
    ftc_wire_encode(&h, m->inject);

    memset(&h, 0, sizeof(h));
    h.kind = FTC_CORR_MSG_UPCORR;
    h.algo = FTC_ALGO_CORRECTED;
    h.coll = FTC_COLL_REDUCE;
    h.group_id = 0x57A6E;   /* no job makes this group */
    h.sender = 1;
    h.payload_len = STRANGER_FLOOD_PAYLOAD;
    h.job_token = job_token;
    memset(m->flood + FTC_WIRE_HEADER_SIZE, 0x5A, STRANGER_FLOOD_PAYLOAD);
    ftc_wire_encode(&h, m->flood);
}

const unsigned char *stranger_forged(const stranger_msgs_t *m, unsigned i,
                                     size_t *len)
{
    switch (i) {
    case 0:
        *len = sizeof(m->excluded);
        return m->excluded;
    case 1:
        *len = sizeof(m->inject);
        return m->inject;
    case 2:
        *len = sizeof(m->guessed);
        return m->guessed;
    default:
        *len = sizeof(m->flood);
        return m->flood;
    }
}

uint64_t stranger_wrong_token(uint64_t job_token)
{
    return job_token ^ 0x5354524e47455221ull;   /* "STRNGER!" */
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int stranger_read_rdv(const char *dir, unsigned round, unsigned rank,
                      int timeout_ms, unsigned char **data, size_t *len,
                      uint64_t *token)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/ag%u.%u", dir, round, rank);
    FILE *f = NULL;
    /* The bootstrap renames a whole file into place: once it opens, it is
     * complete. */
    for (int waited = 0; (f = fopen(path, "rb")) == NULL; waited += 10) {
        /* No directory: no job will ever write there. */
        if (errno != ENOENT || waited >= timeout_ms
            || access(dir, F_OK) != 0) {
            fprintf(stderr, "stranger: %s: %s\n", path, strerror(errno));
            return -1;
        }
        nap_ms(10);
    }
    ftc_rdv_header_t h;
    unsigned char *buf = NULL;
    int rc = -1;
    if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != FTC_RDV_MAGIC
        || h.version != 1 || h.len > (1u << 20)) {
        fprintf(stderr, "stranger: %s is not a rendezvous file\n", path);
        goto out;
    }
    buf = malloc(h.len > 0 ? (size_t)h.len : 1);
    if (buf == NULL || (h.len > 0 && fread(buf, (size_t)h.len, 1, f) != 1)) {
        fprintf(stderr, "stranger: %s is truncated\n", path);
        goto out;
    }
    *data = buf;
    *len = (size_t)h.len;
    *token = h.token;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    fclose(f);
    return rc;
}

int stranger_args(const char *prog, int argc, char *argv[], const char **dir,
                  unsigned *n)
{
    int usage_rc = cli_operands(prog, "DIR N", argc, argv, 2);
    if (usage_rc >= 0)
        return usage_rc;
    unsigned long n_arg;
    if (cli_count(prog, "N", argv[optind + 1], 65536, &n_arg) != 0)
        return 2;
    *dir = argv[optind];
    *n = (unsigned)n_arg;
    return -1;
}
