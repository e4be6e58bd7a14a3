/* SPDX-License-Identifier: BSD-3-Clause */
/* The command-line conventions of cli.h. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FTC_TOOL_VERSION
#error "FTC_TOOL_VERSION comes from meson (the project's version)"
#endif

const char *cli_version(void)
{
    return FTC_TOOL_VERSION;
}

void cli_print_version(const char *prog)
{
    printf("%s %s\n", prog, FTC_TOOL_VERSION);
}

/* The long option "--name" or "--name=value" names, or NULL; *ambiguous
 * tells a prefix of several (getopt_long accepts a prefix of one). */
static const struct option *long_option(const struct option *opts,
                                        const char *arg, int *ambiguous)
{
    size_t len = strcspn(arg, "=");
    const struct option *hit = NULL;
    int hits = 0;
    for (const struct option *o = opts; o->name != NULL; o++) {
        if (strncmp(o->name, arg, len) != 0)
            continue;
        if (o->name[len] == '\0')
            return o;
        hit = o;
        hits++;
    }
    *ambiguous = hits > 1;
    return hits == 1 ? hit : NULL;
}

int cli_refuse(const char *prog, int c, char *const argv[],
               const struct option *opts)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (strncmp(arg, "--", 2) == 0) {
        int ambiguous = 0;
        const struct option *o = long_option(opts, arg + 2, &ambiguous);
        int n = (int)strcspn(arg, "=");
        if (o == NULL && ambiguous)
            fprintf(stderr, "%s: '%.*s' is ambiguous (--help)\n", prog, n,
                    arg);
        else if (o == NULL)
            fprintf(stderr, "%s: unknown option '%.*s' (--help)\n", prog, n,
                    arg);
        else if (c == ':')
            fprintf(stderr, "%s: --%s needs a value\n", prog, o->name);
        else if (o->has_arg == no_argument && arg[n] == '=')
            fprintf(stderr, "%s: --%s takes no value\n", prog, o->name);
        else
            fprintf(stderr, "%s: bad use of --%s (--help)\n", prog, o->name);
    } else if (c == ':') {
        fprintf(stderr, "%s: -%c needs a value\n", prog, optopt);
    } else if (optopt != 0) {
        fprintf(stderr, "%s: unknown option '-%c' (--help)\n", prog, optopt);
    } else {
        fprintf(stderr, "%s: unknown option '%s' (--help)\n", prog, arg);
    }
    return 2;
}

const char *cli_flag(int c, int longindex, const struct option *opts,
                     char *buf, size_t len)
{
    if (longindex >= 0)
        snprintf(buf, len, "--%s", opts[longindex].name);
    else
        snprintf(buf, len, "-%c", c);
    return buf;
}

int cli_operands(const char *prog, const char *usage, int argc,
                 char *argv[], int operands)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    /* '+': an operand ends the options, so "-1" there is an operand. */
    while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf("usage: %s %s\n       %s -h|--help | -V|--version\n",
                   prog, usage, prog);
            return 0;
        case 'V':
            cli_print_version(prog);
            return 0;
        default:
            return cli_refuse(prog, c, argv, opts);
        }
    }
    if (argc - optind != operands) {
        fprintf(stderr, "%s: wants %d operands, got %d\nusage: %s %s\n",
                prog, operands, argc - optind, prog, usage);
        return 2;
    }
    return -1;
}

int cli_count(const char *prog, const char *what, const char *v,
              unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno != 0 || *end != '\0' || *v == '\0' || *v == '-' || x == 0
        || x > max) {
        fprintf(stderr, "%s: %s wants an integer 1..%lu, got '%s'\n", prog,
                what, max, v);
        return 2;
    }
    *out = x;
    return 0;
}
