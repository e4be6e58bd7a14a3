/* SPDX-License-Identifier: BSD-3-Clause */
#include "shm_leftovers.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ftc_shm_remove_leftovers(pid_t pid)
{
    char prefix[32];
    int len = snprintf(prefix, sizeof(prefix), "%ld:", (long)pid);
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return 0;
    int removed = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        if (strncmp(e->d_name, prefix, (size_t)len) == 0
            && unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
    closedir(d);
    return removed;
}
