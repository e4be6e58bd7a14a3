/* SPDX-License-Identifier: BSD-3-Clause */
#include "ulfm_args.h"

#include "ftcoll/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

/* A whole number, all of s: strtoull alone takes "" and "12x" as numbers,
 * and "-1" as a huge one. */
static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int ulfm_args_parse(int argc, char **argv, const char *usage, ulfm_args_t *a)
{
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        uint64_t v = 0;
        if (strcmp(opt, "--agree-round") == 0) {
            if (i + 1 >= argc
                || ftc_agree_round_parse(argv[i + 1], &a->round) != FTC_OK) {
                fprintf(stderr, "--agree-round: wants rd2, rd4 or tree\n"
                                "usage: %s %s\n", argv[0], usage);
                return 2;
            }
            i++;
            continue;
        }
        bool known = strcmp(opt, "--max-n") == 0
                     || strcmp(opt, "--random") == 0
                     || strcmp(opt, "--seed") == 0;
        if (!known) {
            fprintf(stderr, "%s: unknown option\nusage: %s %s\n", opt, argv[0],
                    usage);
            return 2;
        }
        if (i + 1 >= argc || parse_u64(argv[i + 1], &v) != 0) {
            fprintf(stderr, "%s: wants a whole number\nusage: %s %s\n", opt,
                    argv[0], usage);
            return 2;
        }
        i++;
        if (strcmp(opt, "--max-n") == 0) {
            if (v < 1 || v > 16) {
                fprintf(stderr, "--max-n: 1 to 16\n");
                return 2;
            }
            a->max_n = (uint32_t)v;
        } else if (strcmp(opt, "--random") == 0) {
            a->runs = v;
        } else {
            a->seed = v;
        }
    }
    return 0;
}
