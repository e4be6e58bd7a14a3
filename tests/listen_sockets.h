/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * For the backends' tests: where does a process listen? Reads `ss -ltnupH`
 * (iproute2), the tool an administrator would use, and keeps the sockets
 * that process pid holds (users:(("prog",pid=P,fd=F))): TCP listeners and
 * UDP sockets, by local address ("127.0.0.1:40123", "[::1]:5000",
 * "192.0.2.2:41000", "*:7000"). Header-only: each test program includes
 * it once.
 */
#ifndef FTC_TEST_LISTEN_SOCKETS_H
#define FTC_TEST_LISTEN_SOCKETS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The local addresses, comma-separated, into out. Returns how many, or
 * -1 if ss could not be run. */
static inline int ftc_test_listen_addrs(long pid, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = popen("ss -ltnupH 2>/dev/null", "r");
    if (f == NULL)
        return -1;
    char want[64], line[2048];
    snprintf(want, sizeof(want), "pid=%ld,", pid);
    int n = 0;
    bool any_line = false;
    while (fgets(line, sizeof(line), f) != NULL) {
        any_line = true;
        if (strstr(line, want) == NULL)
            continue;
        /* Netid State Recv-Q Send-Q Local-Address:Port Peer ... */
        char netid[16], state[32], local[256];
        unsigned long rq, sq;
        if (sscanf(line, "%15s %31s %lu %lu %255s", netid, state, &rq, &sq,
                   local) != 5)
            continue;
        size_t k = strlen(out);
        if (k + strlen(local) + 2 < len)
            snprintf(out + k, len - k, "%s%s", k > 0 ? "," : "", local);
        n++;
    }
    int st = pclose(f);
    return st != 0 && !any_line ? -1 : n;
}

/* Every address of the list is a loopback one (127.0.0.0/8 or ::1). */
static inline bool ftc_test_all_loopback(const char *list)
{
    if (list[0] == '\0')
        return false;
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, ",");
        bool lo = strncmp(p, "127.", 4) == 0 || strncmp(p, "[::1]", 5) == 0
                  || strncmp(p, "[::ffff:127.", 12) == 0;
        if (!lo)
            return false;
        p += n;
        if (*p == ',')
            p++;
    }
    return true;
}

#endif
