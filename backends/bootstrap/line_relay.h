/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding a child's output line by line with a "[rank] " prefix. Whole
 * lines only, so that lines of different ranks never interleave mid-line;
 * a line longer than the buffer goes out in pieces, each prefixed.
 */
#ifndef FTC_LINE_RELAY_H
#define FTC_LINE_RELAY_H

#include <stddef.h>

#define FTC_RELAY_BUF 65536

typedef struct ftc_line_relay {
    int in_fd;          /* read end of the child's pipe; -1 once closed */
    int out_fd;         /* where lines go: 1 or 2 */
    /* Optional: called with each line (without its newline) once it has
     * been written out, e.g. to act on what a rank says. */
    void (*on_line)(void *arg, const char *line, size_t len);
    void *on_line_arg;
    char prefix[24];
    size_t len;
    char buf[FTC_RELAY_BUF];
} ftc_line_relay_t;

/* No on_line: set it after init. */
void ftc_relay_init(ftc_line_relay_t *r, int in_fd, int out_fd,
                    unsigned rank);

/* Read what is available and write out the complete lines. Returns 0, or
 * -1 at end of file (the rest has been written and in_fd closed). */
int ftc_relay_pump(ftc_line_relay_t *r);

#endif
