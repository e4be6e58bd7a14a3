/* SPDX-License-Identifier: BSD-3-Clause */
#include "progress.h"

int ftc_bk_run_passes(int (*pass)(void *b), void *b, int max_passes)
{
    int total = 0;
    for (int i = 0; i < max_passes; i++) {
        int n = pass(b);
        total += n;
        if (n == 0)
            break;
    }
    return total;
}
