/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every ftcoll command-line tool does the same way around
 * getopt_long(3): --version prints the project's version (meson's, given
 * at build time), and a bad command line is refused on stderr with the
 * flag named and exit status 2.
 *
 * A tool's loop reads:
 *
 *     int c, li = -1;
 *     opterr = 0;   // cli_refuse() says it, in the tool's words
 *     while ((c = getopt_long(argc, argv, ":hV...", opts, &li)) != -1) {
 *         char flag[32];
 *         const char *f = cli_flag(c, li, opts, flag, sizeof(flag));
 *         li = -1;
 *         switch (c) {
 *         case 'V': cli_print_version("ftcoll-x"); return 0;
 *         case '?': case ':': return cli_refuse("ftcoll-x", c, argv, opts);
 *         ...
 *
 * The leading ':' in the short-option string makes getopt_long return ':'
 * for a flag whose value is missing, so the two mistakes are told apart.
 */
#ifndef FTC_BENCH_CLI_H
#define FTC_BENCH_CLI_H

#include <getopt.h>
#include <stddef.h>

/* The project version, e.g. "0.1.0". */
const char *cli_version(void);

/* "PROG VERSION" on stdout. */
void cli_print_version(const char *prog);

/*
 * After getopt_long returned '?' or ':' (c), print why on stderr, naming
 * the flag: "PROG: unknown option '--x' (--help)", "PROG: --coll needs a
 * value", "PROG: --json takes no value". Returns 2, the exit status.
 */
int cli_refuse(const char *prog, int c, char *const argv[],
               const struct option *opts);

/*
 * The flag getopt_long just returned, canonically spelled: "--coll" for
 * opts[longindex] when a long option matched (set longindex to -1 before
 * each getopt_long call), "-n" for the short option c otherwise. buf holds
 * the result; returns buf.
 */
const char *cli_flag(int c, int longindex, const struct option *opts,
                     char *buf, size_t len);

/*
 * For a tool that takes operands and no options but -h/--help and
 * -V/--version: usage is the operands' synopsis ("DIR N"). Returns -1 when
 * argv[optind] .. argv[argc - 1] are exactly `operands` operands, to go on
 * with; otherwise the exit status: 0 after --help or --version, 2 after an
 * unknown flag or a wrong number of operands (both said on stderr).
 */
int cli_operands(const char *prog, const char *usage, int argc,
                 char *argv[], int operands);

/*
 * v as an integer 1..max into *out and 0; or, said on stderr naming what
 * ("-n", "N"), 2: the exit status.
 */
int cli_count(const char *prog, const char *what, const char *v,
              unsigned long max, unsigned long *out);

#endif
