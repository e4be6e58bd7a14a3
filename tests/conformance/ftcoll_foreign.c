/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-foreign DIR N: a process of no job that connects to every rank of
 * a live job and sends what a job must survive and count:
 *
 *   per rank, over a DEALER without a valid routing id:
 *     1 message of random bytes                  -> dropped_version
 *     2 messages too short for a header (10, 0)  -> dropped_truncated
 *     1 well-formed message of another job       -> dropped_foreign
 *     1 message with a broken checksum           -> dropped_checksum
 *   per rank, one DEALER claiming to be rank 0 without the job's token
 *     1 random message                           -> dropped_version
 *   per rank, a raw TCP connection that writes non-ZMTP garbage (ZeroMQ
 *   refuses the handshake; nothing reaches the core).
 *   per rank, over the first DEALER: STRANGER_FORGED messages forged with
 *   the job's token (stranger.h), which a job with the key drops
 *                                                -> dropped_foreign
 *
 * Addresses come from the rendezvous files of ftcoll-run --rendezvous DIR
 * (ag0.<rank>, after the bootstrap header). Prints one JSON line with what
 * it sent per rank. Exit 0, or 1 if it could not reach the job.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "stranger.h"
#include "wire/wire.h"

#define ADDR_MAX 128
#define HEADER_LEN 24   /* the rendezvous file header (bootstrap_internal.h) */

static int read_addr(const char *dir, unsigned r, char *out)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/ag0.%u", dir, r);
    for (int tries = 0; tries < 1000; tries++) {
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            char buf[HEADER_LEN + ADDR_MAX];
            size_t n = fread(buf, 1, sizeof(buf), f);
            fclose(f);
            if (n < HEADER_LEN + 1)
                return -1;
            memcpy(out, buf + HEADER_LEN, ADDR_MAX);
            out[ADDR_MAX - 1] = '\0';
            return 0;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void send_raw_tcp_garbage(const char *addr)
{
    /* tcp://127.0.0.1:PORT only; anything else is skipped. */
    const char *colon = strrchr(addr, ':');
    if (strncmp(addr, "tcp://127.0.0.1:", 16) != 0 || colon == NULL)
        return;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        const char junk[] = "GET / HTTP/1.0\r\n\r\n\xff\xff\xff\xff garbage";
        (void)!write(s, junk, sizeof(junk));
    }
    close(s);
}

static void *dealer(void *zc, const char *addr, const void *id, size_t idlen)
{
    void *d = zmq_socket(zc, ZMQ_DEALER);
    int linger = 1000;
    zmq_setsockopt(d, ZMQ_LINGER, &linger, sizeof(linger));
    if (id != NULL)
        zmq_setsockopt(d, ZMQ_ROUTING_ID, id, idlen);
    zmq_connect(d, addr);
    return d;
}

int main(int argc, char **argv)
{
    const char *dir;
    unsigned n;
    int usage_rc = stranger_args("ftcoll-foreign", argc, argv, &dir, &n);
    if (usage_rc >= 0)
        return usage_rc;
    /* The job token, as any process of this user can read it. */
    unsigned char *blob = NULL;
    size_t bloblen = 0;
    uint64_t token = 0;
    if (stranger_read_rdv(dir, 0, 0, 10000, &blob, &bloblen, &token) != 0)
        return 1;
    free(blob);
    stranger_msgs_t forged;
    stranger_msgs_init(&forged, token);
    void *zc = zmq_ctx_new();
    unsigned char random_bytes[100];
    srand((unsigned)time(NULL));
    for (size_t i = 0; i < sizeof(random_bytes); i++)
        random_bytes[i] = (unsigned char)rand();
    random_bytes[0] = 'X';  /* never the magic */

    /* A well-formed probe of another job, and a copy with one bit off. */
    ftc_wire_header_t h;
    memset(&h, 0, sizeof(h));
    h.kind = FTC_MSG_PROBE;
    h.group_id = 1;
    h.job_token = 0xBADC0FFEEull;
    uint8_t other_job[FTC_WIRE_HEADER_SIZE], broken[FTC_WIRE_HEADER_SIZE];
    ftc_wire_encode(&h, other_job);
    memcpy(broken, other_job, sizeof(broken));
    broken[20] ^= 0x01;   /* the sender field: the CRC no longer matches */

    void **socks = calloc(2 * (size_t)n, sizeof(void *));
    unsigned reached = 0;
    for (unsigned r = 0; r < n; r++) {
        char addr[ADDR_MAX];
        if (read_addr(dir, r, addr) != 0) {
            fprintf(stderr, "ftcoll-foreign: no address for rank %u\n", r);
            continue;
        }
        void *d = dealer(zc, addr, NULL, 0);
        zmq_send(d, random_bytes, sizeof(random_bytes), 0);
        zmq_send(d, random_bytes, 10, 0);
        zmq_send(d, "", 0, 0);
        zmq_send(d, other_job, sizeof(other_job), 0);
        zmq_send(d, broken, sizeof(broken), 0);
        for (unsigned i = 0; i < STRANGER_FORGED; i++) {
            size_t len;
            const unsigned char *msg = stranger_forged(&forged, i, &len);
            zmq_send(d, msg, len, 0);
        }
        /* Claims rank 0, but not with this job's token. */
        unsigned char spoof[13] = {'F', 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
        void *s = dealer(zc, addr, spoof, sizeof(spoof));
        zmq_send(s, random_bytes, sizeof(random_bytes), 0);
        socks[2 * r] = d;
        socks[2 * r + 1] = s;
        send_raw_tcp_garbage(addr);
        reached++;
    }
    /* Let the messages leave before the sockets close (linger). */
    for (unsigned k = 0; k < 2 * n; k++)
        if (socks[k] != NULL)
            zmq_close(socks[k]);
    zmq_ctx_term(zc);
    free(socks);
    printf("{\"foreign\":true,\"ranks\":%u,\"per_rank\":{\"version\":2,"
           "\"truncated\":2,\"foreign\":1,\"checksum\":1,\"forged\":%d,"
           "\"stranger\":%d}}\n",
           reached, STRANGER_FORGED, 6 + STRANGER_FORGED);
    return reached == n ? 0 : 1;
}
