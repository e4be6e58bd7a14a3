/* SPDX-License-Identifier: BSD-3-Clause */
#include "line_relay.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ftc_relay_init(ftc_line_relay_t *r, int in_fd, int out_fd, unsigned rank)
{
    r->in_fd = in_fd;
    r->out_fd = out_fd;
    r->len = 0;
    r->on_line = NULL;
    r->on_line_arg = NULL;
    snprintf(r->prefix, sizeof(r->prefix), "[%u] ", rank);
}

static void write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;   /* our own output is gone: nothing better to do */
        p += n;
        len -= (size_t)n;
    }
}

/* One line (with its newline, if any) as a single write: concurrent
 * writers to one terminal or file keep whole lines. */
static void emit(ftc_line_relay_t *r, const char *line, size_t len, int nl)
{
    char out[FTC_RELAY_BUF + 32];
    size_t k = strlen(r->prefix);
    memcpy(out, r->prefix, k);
    memcpy(out + k, line, len);
    k += len;
    if (nl)
        out[k++] = '\n';
    write_all(r->out_fd, out, k);
    if (r->on_line != NULL)
        r->on_line(r->on_line_arg, line, len);
}

static void flush_lines(ftc_line_relay_t *r, int final)
{
    size_t start = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->buf[i] == '\n') {
            emit(r, r->buf + start, i - start, 1);
            start = i + 1;
        }
    }
    if (start < r->len && (final || (start == 0 && r->len == sizeof(r->buf)))) {
        emit(r, r->buf + start, r->len - start, 1);
        start = r->len;
    }
    memmove(r->buf, r->buf + start, r->len - start);
    r->len -= start;
}

int ftc_relay_pump(ftc_line_relay_t *r)
{
    if (r->in_fd < 0)
        return -1;
    ssize_t n = read(r->in_fd, r->buf + r->len, sizeof(r->buf) - r->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) {
        flush_lines(r, 1);
        close(r->in_fd);
        r->in_fd = -1;
        return -1;
    }
    r->len += (size_t)n;
    flush_lines(r, 0);
    return 0;
}
