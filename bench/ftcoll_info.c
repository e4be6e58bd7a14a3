/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-info: what this installation of ftcoll is, as `ucx_info -c`,
 * `ucc_info -A` and `fi_info` say it for theirs.
 *
 *   ftcoll-info [--backends] [--algos] [--knobs] [--json]
 *
 * The library's version; the backends compiled in, with the version of
 * the library each runs on (read from that library at run time, not from
 * its headers); the algorithms of the registry (ftcoll/algo.h), the
 * collectives each provides and its parameters; and every FTCOLL_*
 * variable with its default and meaning, from the tables their readers
 * keep (the core's, each backend's, the bootstrap's, ftcoll-bench's).
 * Nothing here restates a table: a knob added to one shows up here.
 * No flag: every section. Exit status 0, or 2 for a bad command line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ftcoll/algo.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll/knob.h"
#include "ftcoll/version.h"

#include "bench_knobs.h"
#include "cli.h"
#include "ftcoll_bootstrap.h"
#include "json.h"

#if FTC_INFO_HAVE_ZMQ
#include <zmq.h>
#include "ftcoll_zmq.h"
#endif
#if FTC_INFO_HAVE_UCX
#include <ucp/api/ucp.h>
#include "ftcoll_ucx.h"
#endif
#if FTC_INFO_HAVE_OFI
#include <rdma/fabric.h>
#include "ftcoll_ofi.h"
#endif
#if FTC_INFO_HAVE_PMIX
#include <pmix.h>
#endif

#define PROG "ftcoll-info"

/* ---- backends ------------------------------------------------------------ */

typedef struct backend_row {
    const char *name;
    bool built;
    const char *library;    /* what it runs on, with its version */
    const char *what;
} backend_row_t;

enum { NBACKENDS = 6, VERSION_LEN = 64 };

static void backends_fill(backend_row_t rows[NBACKENDS],
                          char versions[NBACKENDS][VERSION_LEN])
{
    rows[0] = (backend_row_t){"loopback", true, "none (in memory)",
                              "deterministic, virtual time, fault injection"};
    rows[1] = (backend_row_t){"logp", true, "none (in memory)",
                              "LogP cost model (ftcoll-sim --model logp)"};
    rows[2] = (backend_row_t){"zmq", false, NULL, "ZeroMQ over TCP"};
    rows[3] = (backend_row_t){"ucx", false, NULL,
                              "UCX: InfiniBand, TCP, shared memory"};
    rows[4] = (backend_row_t){"libfabric", false, NULL,
                              "libfabric: verbs, tcp, shm"};
    rows[5] = (backend_row_t){"pmix", false, NULL,
                              "bootstrap under mpirun, srun, prterun (the "
                              "file rendezvous is always built)"};
    for (int i = 0; i < NBACKENDS; i++)
        versions[i][0] = '\0';
#if FTC_INFO_HAVE_ZMQ
    {
        int major, minor, patch;
        zmq_version(&major, &minor, &patch);
        snprintf(versions[2], VERSION_LEN, "libzmq %d.%d.%d", major, minor,
                 patch);
        rows[2].built = true;
        rows[2].library = versions[2];
    }
#endif
#if FTC_INFO_HAVE_UCX
    snprintf(versions[3], VERSION_LEN, "UCX %s", ucp_get_version_string());
    rows[3].built = true;
    rows[3].library = versions[3];
#endif
#if FTC_INFO_HAVE_OFI
    {
        uint32_t v = fi_version();
        snprintf(versions[4], VERSION_LEN, "libfabric %u.%u",
                 (unsigned)FI_MAJOR(v), (unsigned)FI_MINOR(v));
        rows[4].built = true;
        rows[4].library = versions[4];
    }
#endif
#if FTC_INFO_HAVE_PMIX
    {
        /* PMIx_Get_version may be called before PMIx_Init. Its string
         * goes on with the standard's and the ABIs' versions in
         * parentheses: the implementation's is enough here. */
        const char *v = PMIx_Get_version();
        snprintf(versions[5], VERSION_LEN, "%.*s", (int)strcspn(v, "("), v);
        size_t len = strlen(versions[5]);
        while (len > 0 && versions[5][len - 1] == ' ')
            versions[5][--len] = '\0';
    }
    rows[5].built = true;
    rows[5].library = versions[5];
#endif
}

static void backends_text(void)
{
    backend_row_t rows[NBACKENDS];
    char versions[NBACKENDS][VERSION_LEN];
    backends_fill(rows, versions);
    printf("Backends\n");
    for (int i = 0; i < NBACKENDS; i++)
        printf("  %-10s %-3s %-20s %s\n", rows[i].name,
               rows[i].built ? "yes" : "no",
               rows[i].built ? rows[i].library : "(not built)", rows[i].what);
}

static void backends_json(json_t *j)
{
    backend_row_t rows[NBACKENDS];
    char versions[NBACKENDS][VERSION_LEN];
    backends_fill(rows, versions);
    json_key(j, "backends");
    json_array_begin(j);
    for (int i = 0; i < NBACKENDS; i++) {
        json_object_begin(j);
        json_key(j, "name");
        json_string(j, rows[i].name);
        json_key(j, "built");
        json_bool(j, rows[i].built);
        json_key(j, "library");
        json_string(j, rows[i].built ? rows[i].library : NULL);
        json_key(j, "description");
        json_string(j, rows[i].what);
        json_object_end(j);
    }
    json_array_end(j);
}

/* ---- algorithms ---------------------------------------------------------- */

/* Every bit of a family's collectives, named: a family that brings a new
 * collective is listed without a change here. */
enum { NCOLL_BITS = 32 };

static void algos_text(void)
{
    printf("Algorithms (%u)\n", (unsigned)ftc_algo_count());
    for (uint32_t i = 0; i < ftc_algo_count(); i++) {
        const ftc_algo_info_t *a = ftc_algo_info(i);
        printf("  %-10s", a->name);
        for (int c = 0; c < NCOLL_BITS; c++)
            if (a->colls & FTC_COLL_BIT(c))
                printf(" %s", ftc_coll_name((ftc_coll_t)c));
        printf("\n      %s\n", a->summary);
        if (a->nparams == 0) {
            printf("      no parameters\n");
            continue;
        }
        printf("      parameters (%s):\n", a->params_type);
        for (uint32_t p = 0; p < a->nparams; p++)
            printf("        %s = %s\n            %s\n", a->params[p].name,
                   a->params[p].default_value, a->params[p].meaning);
    }
}

static void algos_json(json_t *j)
{
    json_key(j, "algorithms");
    json_array_begin(j);
    for (uint32_t i = 0; i < ftc_algo_count(); i++) {
        const ftc_algo_info_t *a = ftc_algo_info(i);
        json_object_begin(j);
        json_key(j, "name");
        json_string(j, a->name);
        json_key(j, "id");
        json_uint(j, (uint64_t)a->id);
        json_key(j, "collectives");
        json_array_begin(j);
        for (int c = 0; c < NCOLL_BITS; c++)
            if (a->colls & FTC_COLL_BIT(c))
                json_string(j, ftc_coll_name((ftc_coll_t)c));
        json_array_end(j);
        json_key(j, "summary");
        json_string(j, a->summary);
        json_key(j, "params_type");
        json_string(j, a->params_type);
        json_key(j, "params");
        json_array_begin(j);
        for (uint32_t p = 0; p < a->nparams; p++) {
            json_object_begin(j);
            json_key(j, "name");
            json_string(j, a->params[p].name);
            json_key(j, "default");
            json_string(j, a->params[p].default_value);
            json_key(j, "meaning");
            json_string(j, a->params[p].meaning);
            json_object_end(j);
        }
        json_array_end(j);
        json_object_end(j);
    }
    json_array_end(j);
}

/* ---- knobs --------------------------------------------------------------- */

typedef struct knob_table {
    const char *owner;
    const char *reader;     /* who reads them */
    /* One of the two: a table ending with a NULL name (ftcoll/knob.h), or
     * a counted one (the core's ftc_config_knob). */
    const ftc_knob_t *(*table)(void);
    const ftc_knob_t *(*indexed)(uint32_t i);
} knob_table_t;

static const knob_table_t tables[] = {
    {"core", "ftc_config_from_env, if the program calls it", NULL,
     ftc_config_knob},
#if FTC_INFO_HAVE_ZMQ
    {"zmq", "ftc_zmq_config_from_env", ftc_zmq_knobs, NULL},
#endif
#if FTC_INFO_HAVE_UCX
    {"ucx", "ftc_ucx_config_from_env", ftc_ucx_knobs, NULL},
#endif
#if FTC_INFO_HAVE_OFI
    {"libfabric", "ftc_ofi_config_from_env", ftc_ofi_knobs, NULL},
#endif
    {"bootstrap", "ftc_bootstrap_open; ftcoll-run sets most of them",
     ftc_bootstrap_knobs, NULL},
    {"ftcoll-bench", "ftcoll-bench", bench_knobs, NULL},
};
enum { NTABLES = sizeof(tables) / sizeof(tables[0]) };

/* Knob i of t, or NULL past its end. */
static const ftc_knob_t *knob_at(const knob_table_t *t, uint32_t i)
{
    if (t->indexed != NULL)
        return t->indexed(i);
    const ftc_knob_t *k = t->table();
    for (uint32_t n = 0; n < i; n++)
        if (k[n].name == NULL)
            return NULL;
    return k[i].name != NULL ? &k[i] : NULL;
}

static void knobs_text(void)
{
    printf("Knobs (environment variables)\n");
    for (int t = 0; t < NTABLES; t++) {
        printf("  %s (%s)\n", tables[t].owner, tables[t].reader);
        const ftc_knob_t *k;
        for (uint32_t i = 0; (k = knob_at(&tables[t], i)) != NULL; i++)
            printf("    %s = %s\n        %s\n", k->name, k->default_value,
                   k->meaning);
    }
}

static void knobs_json(json_t *j)
{
    json_key(j, "knobs");
    json_array_begin(j);
    for (int t = 0; t < NTABLES; t++) {
        const ftc_knob_t *k;
        for (uint32_t i = 0; (k = knob_at(&tables[t], i)) != NULL; i++) {
            json_object_begin(j);
            json_key(j, "name");
            json_string(j, k->name);
            json_key(j, "owner");
            json_string(j, tables[t].owner);
            json_key(j, "default");
            json_string(j, k->default_value);
            json_key(j, "meaning");
            json_string(j, k->meaning);
            json_object_end(j);
        }
    }
    json_array_end(j);
}

/* ---- command line -------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
        "usage: " PROG " [--backends] [--algos] [--knobs] [--json]\n"
        "What this ftcoll is: its version, the backends compiled in and the\n"
        "libraries they run on, the algorithms and their parameters, every\n"
        "FTCOLL_* environment variable with its default and meaning.\n"
        "Without a section flag, every section.\n"
        "  -b, --backends  the backends and their libraries' versions\n"
        "  -a, --algos     the algorithms, their collectives and parameters\n"
        "  -k, --knobs     the FTCOLL_* environment variables\n"
        "  -j, --json      one JSON object instead of text\n"
        "  -h, --help      this text\n"
        "  -V, --version   the version\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"backends", no_argument, NULL, 'b'},
        {"algos", no_argument, NULL, 'a'},
        {"knobs", no_argument, NULL, 'k'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    bool backends = false, algos = false, knobs = false, json = false;
    int c, li = -1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":bakjhV", opts, &li)) != -1) {
        li = -1;
        switch (c) {
        case 'b': backends = true; break;
        case 'a': algos = true; break;
        case 'k': knobs = true; break;
        case 'j': json = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': cli_print_version(PROG); return 0;
        default: return cli_refuse(PROG, c, argv, opts);
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s' (--help)\n",
                argv[optind]);
        return 2;
    }
    if (!backends && !algos && !knobs)
        backends = algos = knobs = true;

    const char *version = ftc_version(NULL, NULL, NULL);
    if (json) {
        json_t j;
        json_to_file(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "version");
        json_string(&j, version);
        if (backends)
            backends_json(&j);
        if (algos)
            algos_json(&j);
        if (knobs)
            knobs_json(&j);
        json_object_end(&j);
        printf("\n");
    } else {
        printf("ftcoll %s\n", version);
        if (backends) {
            printf("\n");
            backends_text();
        }
        if (algos) {
            printf("\n");
            algos_text();
        }
        if (knobs) {
            printf("\n");
            knobs_text();
        }
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
