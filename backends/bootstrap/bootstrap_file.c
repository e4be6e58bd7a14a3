/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file rendezvous of ftcoll-run: one directory on a file system every
 * rank sees (one host: ftcoll-run makes it under /tmp). For allgather
 * number k, rank r writes ag<k>.<r> under a temporary name and renames it,
 * so a reader sees the whole file or none; then it polls for the others'
 * files until all exist, a rank is known gone (dead.<r>, written by the
 * launcher), or the time limit passes. Polling backs off to 10 ms: the
 * rendezvous happens once or twice per job. Closing the bootstrap leaves
 * ready.<r>: the rank is set up, which ftcoll-run --clock ready waits for
 * before it injects faults.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap_internal.h"

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int publish(ftc_bootstrap_t *b, const void *mine, size_t len)
{
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof(tmp), "%s/.ag%u.%u.%ld.tmp", b->dir, b->round,
             b->rank, (long)getpid());
    snprintf(path, sizeof(path), "%s/ag%u.%u", b->dir, b->round, b->rank);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        ftc_bootstrap_seterr(b, "bootstrap: cannot write %s: %s", tmp,
                             strerror(errno));
        return FTC_ETRANSPORT;
    }
    ftc_rdv_header_t h = {FTC_RDV_MAGIC, 1, b->token, len};
    int bad = write_all(fd, &h, sizeof(h)) != 0
              || (len > 0 && write_all(fd, mine, len) != 0);
    if (close(fd) != 0)
        bad = 1;
    if (bad || rename(tmp, path) != 0) {
        ftc_bootstrap_seterr(b, "bootstrap: cannot publish %s: %s", path,
                             strerror(errno));
        unlink(tmp);
        return FTC_ETRANSPORT;
    }
    return FTC_OK;
}

/* 1: got it; 0: not there yet; negative: an error (message set). */
static int fetch(ftc_bootstrap_t *b, uint32_t r, size_t len, void *dst)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/ag%u.%u", b->dir, b->round, r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) {
            ftc_bootstrap_seterr(b, "bootstrap: cannot read %s: %s", path,
                                 strerror(errno));
            return FTC_ETRANSPORT;
        }
        snprintf(path, sizeof(path), "%s/dead.%u", b->dir, r);
        if (access(path, F_OK) == 0) {
            ftc_bootstrap_seterr(b, "bootstrap: rank %u exited before it "
                                    "reached the rendezvous (exchange %u)",
                                 r, b->round);
            return FTC_ETRANSPORT;
        }
        return 0;
    }
    ftc_rdv_header_t h;
    int rc = FTC_ETRANSPORT;
    if (read_all(fd, &h, sizeof(h)) != 0 || h.magic != FTC_RDV_MAGIC
        || h.version != 1)
        ftc_bootstrap_seterr(b, "bootstrap: %s is not a rendezvous file", path);
    else if (h.token != b->token)
        ftc_bootstrap_seterr(b, "bootstrap: %s belongs to another job "
                                "(token %llx, ours %llx)", path,
                             (unsigned long long)h.token,
                             (unsigned long long)b->token);
    else if (h.len != len)
        ftc_bootstrap_seterr(b, "bootstrap: rank %u contributed %llu bytes, "
                                "we %zu: ranks disagree", r,
                             (unsigned long long)h.len, len);
    else if (len > 0 && read_all(fd, dst, len) != 0)
        ftc_bootstrap_seterr(b, "bootstrap: %s is truncated", path);
    else
        rc = 1;
    close(fd);
    return rc;
}

static void missing_list(const bool *have, uint32_t size, char *out,
                         size_t outlen)
{
    size_t k = 0;
    uint32_t listed = 0, missing = 0;
    out[0] = '\0';
    for (uint32_t r = 0; r < size; r++) {
        if (have[r])
            continue;
        missing++;
        if (listed < 16 && k < outlen) {
            int n = snprintf(out + k, outlen - k, "%s%u", listed ? ", " : "", r);
            if (n > 0)
                k += (size_t)n;
            listed++;
        }
    }
    if (missing > listed && k < outlen)
        snprintf(out + k, outlen - k, " and %u more", missing - listed);
}

static int file_allgather(ftc_bootstrap_t *b, const void *mine, size_t len,
                          void *all)
{
    int rc = publish(b, mine, len);
    if (rc != FTC_OK)
        return rc;
    bool *have = calloc(b->size, sizeof(bool));
    if (have == NULL)
        return FTC_ENOMEM;
    if (len > 0)
        memcpy((char *)all + (size_t)b->rank * len, mine, len);
    have[b->rank] = true;
    uint32_t missing = b->size - 1;
    uint64_t start = now_ms();
    long sleep_us = 100;
    for (;;) {
        for (uint32_t r = 0; r < b->size && missing > 0; r++) {
            if (have[r])
                continue;
            rc = fetch(b, r, len, (char *)all + (size_t)r * len);
            if (rc < 0)
                goto out;
            if (rc == 1) {
                have[r] = true;
                missing--;
            }
        }
        if (missing == 0) {
            rc = FTC_OK;
            goto out;
        }
        if (b->timeout_ms >= 0 && now_ms() - start >= (uint64_t)b->timeout_ms) {
            char list[160];
            missing_list(have, b->size, list, sizeof(list));
            ftc_bootstrap_seterr(b, "bootstrap: rank %u timed out after %.1f s "
                                    "waiting for rank(s) %s to reach the "
                                    "rendezvous in %s (FTCOLL_BOOTSTRAP_TIMEOUT)",
                                 b->rank, b->timeout_ms / 1000.0, list, b->dir);
            rc = FTC_ETRANSPORT;
            goto out;
        }
        struct timespec ts = {0, sleep_us * 1000};
        nanosleep(&ts, NULL);
        if (sleep_us < 10000)
            sleep_us *= 2;
    }
out:
    free(have);
    return rc;
}

static void file_close(ftc_bootstrap_t *b)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/ready.%u", b->dir, b->rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    free(b->dir);
    free(b);
}

int ftc_bootstrap_file_open(const char *dir, uint32_t rank, uint32_t size,
                            uint64_t job_token, int timeout_ms,
                            ftc_bootstrap_t **out, char *err, size_t errlen)
{
    if (out == NULL)
        return FTC_EINVAL;
    *out = NULL;
    struct stat st;
    if (dir == NULL || size == 0 || rank >= size) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "bootstrap: need a directory and rank < size");
        return FTC_EINVAL;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "bootstrap: rendezvous %s is not a directory",
                     dir);
        return FTC_EINVAL;
    }
    ftc_bootstrap_t *b = calloc(1, sizeof(*b));
    if (b == NULL || (b->dir = strdup(dir)) == NULL) {
        free(b);
        return FTC_ENOMEM;
    }
    b->method = "file";
    /* ftcoll-run starts every rank on its own host. */
    b->single_host = 1;
    b->rank = rank;
    b->size = size;
    b->token = job_token;
    b->timeout_ms = timeout_ms;
    b->allgather = file_allgather;
    b->close = file_close;
    *out = b;
    return FTC_OK;
}
