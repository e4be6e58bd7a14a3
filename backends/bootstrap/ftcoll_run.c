/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ftcoll-run: start N local processes of one program as a job.
 *
 *   ftcoll-run -n N [--backend zmq|ucx|libfabric] [--kill RANK@WHEN]...
 *              [--stop RANK@WHEN[+SECONDS]]... [--cont RANK@WHEN]...
 *              [--may-fail RANK,...] [--clock start|ready]
 *              [--timeout SECONDS] [--rendezvous DIR] -- PROGRAM [ARGS...]
 *   WHEN is SECONDS, or CUE-RANK:TEXT
 *
 * Each rank gets FTCOLL_RANK, FTCOLL_SIZE, FTCOLL_LOCAL_SIZE (= the
 * size: every rank is on this host), FTCOLL_RENDEZVOUS (a fresh
 * directory for the file bootstrap), FTCOLL_JOB_TOKEN (random),
 * FTCOLL_JOB_KEY (16 bytes from getrandom(), in hex: the job's secret for
 * the core's message authentication, handed over in the environment as
 * the rank is; docs/security.md says why not in a file) and
 * FTCOLL_BACKEND (from --backend; without it, as this launcher's
 * environment has it, else unset: the program's default). The transport
 * under a backend is chosen as the backend's library always does it
 * (UCX_TLS, FI_PROVIDER, ...), through the environment, which the ranks
 * inherit. Its stdout and stderr come out here line by line, with
 * a "[rank] " prefix. --kill sends SIGKILL, --stop SIGSTOP and --cont
 * SIGCONT, either at a time (SECONDS after the start; --stop R@T+D resumes
 * the rank D seconds later) or on a cue: R@C:TEXT acts on rank R as soon
 * as rank C has written a line (to stdout or stderr) that contains TEXT.
 * A cue ties the fault to the program's progress (ftcoll-bench --cue
 * prints one at a chosen iteration), which a time cannot: on a faster or
 * idler machine the job may be over before the time comes. With --clock
 * ready times count from the moment every rank has closed its bootstrap
 * (the file bootstrap leaves ready.<rank>): set-up time differs by backend
 * and machine load, and a fault meant for the collectives should not land
 * in it.
 * Stopped ranks (by --stop or by themselves) are resumed once every other
 * rank has exited, and killed if they do not exit then.
 *
 * Exit status: 0 if every rank that this launcher did not kill or stop
 * (and that --may-fail does not name: ranks the program kills itself, as
 * ftcoll-bench --kill does) exited with status 0; 1 if one did not (each
 * is named on stderr); 124 after --timeout (every rank is killed); 127
 * (126) if PROGRAM cannot be found (executed); 2 for bad usage. Ranks that
 * were excused (killed, stopped, --may-fail) and did not exit with 0 are
 * named too, with how they ended ("rank 3 was killed by SIGKILL (--kill)"),
 * and a --kill, --stop or --cont that never happened (its cue never came,
 * or the rank had ended) is named: a caller can check that its faults
 * landed.
 *
 * A rank that exits early leaves dead.<rank> in the rendezvous directory,
 * so ranks still waiting there fail at once instead of at their timeout.
 * What a rank killed mid-run leaves in /dev/shm is removed when it is
 * reaped (shm_leftovers.h). Ranks of the libfabric backend over tcp (or
 * of no backend named, with a tcp provider named) get
 * glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES unless it names that
 * tunable already (rank_hugepages.h).
 */
#define _GNU_SOURCE /* pipe2, sigabbrev_np, prctl: a Linux launcher */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "line_relay.h"
#include "rank_hugepages.h"
#include "shm_leftovers.h"

#define RELEASE_GRACE_S 5.0     /* resumed ranks get this long to exit */
#define LINGER_PIPES_S 1.0      /* output of exited ranks' descendants */

typedef struct action {
    double at;                  /* seconds after the start, if no cue */
    const char *cue;            /* else: when cue_rank writes a line with it */
    uint32_t cue_rank;
    uint32_t rank;
    int sig;                    /* SIGKILL, SIGSTOP or SIGCONT */
    bool done;
    bool landed;                /* the signal was sent to a live rank */
} action_t;

struct job;
static void on_line(void *arg, const char *line, size_t len);

typedef struct rank_proc {
    pid_t pid;
    bool running;               /* not reaped yet */
    bool stopped;               /* last seen stopped */
    bool killed_by_us, stopped_by_us;
    bool may_fail;              /* --may-fail: its end does not count */
    int status;                 /* from waitpid, once reaped */
    ftc_line_relay_t out, err;
    uint32_t rank;
    struct job *job;            /* for the cues in its lines */
} rank_proc_t;

typedef struct options {
    uint32_t n;
    const char *backend;
    double timeout;             /* 0: none */
    const char *rendezvous;     /* NULL: make one */
    action_t *actions;
    uint32_t nactions;
    const char *may_fail;       /* comma-separated ranks */
    bool clock_ready;           /* --clock ready */
    char **argv;                /* PROGRAM ARGS... */
} options_t;

typedef struct job {
    options_t *o;
    rank_proc_t *procs;
    double start;
} job_t;

static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    int saved = errno;
    if (sig != SIGCHLD)
        got_signal = sig;
    char c = 0;
    (void)!write(sig_pipe[1], &c, 1);
    errno = saved;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fputs("usage: ftcoll-run -n N [--backend zmq|ucx|libfabric]\n"
          "                  [--kill RANK@WHEN]...\n"
          "                  [--stop RANK@WHEN[+SECONDS]]...\n"
          "                  [--cont RANK@WHEN]...\n"
          "                  [--may-fail RANK,...]\n"
          "                  [--clock start|ready] [--timeout SECONDS]\n"
          "                  [--rendezvous DIR]\n"
          "                  [--] PROGRAM [ARGS...]\n"
          "       ftcoll-run -h|--help | -V|--version\n"
          "Every --opt value may also be written --opt=value; everything from\n"
          "PROGRAM (or after --) on is the program's, passed untouched.\n"
          "WHEN is SECONDS, or CUE-RANK:TEXT (as soon as rank CUE-RANK has\n"
          "written a line containing TEXT).\n"
          "Starts N processes of PROGRAM as ranks 0..N-1 of one job, with\n"
          "the environment the ftcoll bootstrap reads (docs/running.md).\n",
          f);
}

static int parse_action(const char *s, int sig, options_t *o)
{
    char *at = strchr(s, '@');
    if (at == NULL)
        return -1;
    char *end;
    errno = 0;
    unsigned long r = strtoul(s, &end, 10);
    if (errno != 0 || end != at || s[0] == '-')
        return -1;
    action_t *a = realloc(o->actions, sizeof(*a) * (o->nactions + 2));
    if (a == NULL)
        return -1;
    o->actions = a;
    /* A cue: digits, a colon, the text (which may hold anything). */
    errno = 0;
    unsigned long c = strtoul(at + 1, &end, 10);
    if (end != at + 1 && *end == ':' && at[1] != '-') {
        if (end[1] == '\0' || errno != 0)
            return -1;
        a[o->nactions++] = (action_t){.cue = end + 1, .cue_rank = (uint32_t)c,
                                      .rank = (uint32_t)r, .sig = sig};
        return 0;
    }
    double t = strtod(at + 1, &end);
    if (end == at + 1 || !(t >= 0))
        return -1;
    double resume = -1;
    if (sig == SIGSTOP && *end == '+') {
        const char *d = end + 1;
        resume = strtod(d, &end);
        if (end == d || !(resume >= 0))
            return -1;
    }
    if (*end != '\0')
        return -1;
    a[o->nactions++] = (action_t){.at = t, .rank = (uint32_t)r, .sig = sig};
    if (resume >= 0)
        a[o->nactions++] = (action_t){.at = t + resume, .rank = (uint32_t)r,
                                      .sig = SIGCONT};
    return 0;
}

/* Long-only options get distinct values above any character, so that
 * getopt_long refuses a prefix of several ("--c") instead of taking the
 * first. */
enum {
    OPT_BACKEND = 256,
    OPT_CLOCK,
    OPT_KILL,
    OPT_STOP,
    OPT_CONT,
    OPT_TIMEOUT,
    OPT_MAY_FAIL,
    OPT_RENDEZVOUS,
};

static const struct option run_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"clock", required_argument, NULL, OPT_CLOCK},
    {"kill", required_argument, NULL, OPT_KILL},
    {"stop", required_argument, NULL, OPT_STOP},
    {"cont", required_argument, NULL, OPT_CONT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"may-fail", required_argument, NULL, OPT_MAY_FAIL},
    {"rendezvous", required_argument, NULL, OPT_RENDEZVOUS},
    {NULL, 0, NULL, 0},
};

static int parse_args(int argc, char **argv, options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->backend = getenv("FTCOLL_BACKEND");
    /* '+': stop at PROGRAM (or after "--"), so that its own arguments
     * reach it untouched, in order, whatever they look like. */
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+:hVn:", run_options, NULL)) !=
           -1) {
        const char *v = optarg;
        switch (opt) {
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            cli_print_version("ftcoll-run");
            exit(0);
        case 'n': {
            /* mpirun's spelling "-np N" reads as -n with the value "p". */
            if (strcmp(v, "p") == 0) {
                if (optind >= argc) {
                    fprintf(stderr, "ftcoll-run: -np needs a value\n");
                    return -1;
                }
                v = argv[optind++];
            }
            char *end;
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (errno != 0 || *end != '\0' || n == 0 || n > 65536
                || v[0] == '-') {
                fprintf(stderr, "ftcoll-run: -n must be 1..65536\n");
                return -1;
            }
            o->n = (uint32_t)n;
            break;
        }
        case OPT_BACKEND:
            /* What the program has compiled in, it says itself; this is
             * only the launcher's check of the name. */
            if (strcmp(v, "zmq") != 0 && strcmp(v, "ucx") != 0
                && strcmp(v, "libfabric") != 0) {
                fprintf(stderr, "ftcoll-run: --backend is zmq, ucx or "
                                "libfabric, not '%s'\n", v);
                return -1;
            }
            o->backend = v;
            break;
        case OPT_CLOCK:
            if (strcmp(v, "ready") == 0) {
                o->clock_ready = true;
            } else if (strcmp(v, "start") != 0) {
                fprintf(stderr, "ftcoll-run: --clock is start or ready\n");
                return -1;
            }
            break;
        case OPT_KILL:
        case OPT_STOP:
        case OPT_CONT: {
            int sig = opt == OPT_KILL   ? SIGKILL
                      : opt == OPT_STOP ? SIGSTOP
                                        : SIGCONT;
            if (parse_action(v, sig, o) != 0) {
                fprintf(stderr, "ftcoll-run: --%s wants RANK@SECONDS%s or "
                                "RANK@CUE-RANK:TEXT, got '%s'\n",
                        opt == OPT_KILL ? "kill" : opt == OPT_STOP ? "stop"
                                                                   : "cont",
                        sig == SIGSTOP ? "[+SECONDS]" : "", v);
                return -1;
            }
            break;
        }
        case OPT_TIMEOUT: {
            char *end;
            o->timeout = strtod(v, &end);
            if (*end != '\0' || !(o->timeout > 0)) {
                fprintf(stderr, "ftcoll-run: --timeout wants seconds > 0\n");
                return -1;
            }
            break;
        }
        case OPT_MAY_FAIL:
            o->may_fail = v;
            break;
        case OPT_RENDEZVOUS:
            o->rendezvous = v;
            break;
        default:
            cli_refuse("ftcoll-run", opt, argv, run_options);
            return -1;
        }
    }
    int i = optind;
    if (o->n == 0 || i >= argc) {
        usage(stderr);
        return -1;
    }
    for (uint32_t k = 0; k < o->nactions; k++) {
        const action_t *ac = &o->actions[k];
        if (ac->rank >= o->n || (ac->cue != NULL && ac->cue_rank >= o->n)) {
            fprintf(stderr, "ftcoll-run: --kill/--stop/--cont rank %u is not "
                            "below -n %u\n",
                    ac->rank >= o->n ? ac->rank : ac->cue_rank, o->n);
            return -1;
        }
    }
    o->argv = argv + i;
    return 0;
}

/* execvp's search, done up front so a missing program is one clear error
 * instead of N. Returns 0 (path filled), 127 (not found), 126 (found but
 * not executable). */
static int resolve_program(const char *prog, char *path, size_t pathlen)
{
    struct stat st;
    if (strchr(prog, '/') != NULL) {
        snprintf(path, pathlen, "%s", prog);
        if (stat(path, &st) != 0)
            return 127;
        return S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : 126;
    }
    const char *env = getenv("PATH");
    if (env == NULL || *env == '\0')
        env = "/usr/local/bin:/usr/bin:/bin";
    int found_not_exec = 0;
    for (const char *p = env; ; ) {
        const char *colon = strchr(p, ':');
        size_t len = colon != NULL ? (size_t)(colon - p) : strlen(p);
        if (len == 0)
            snprintf(path, pathlen, "./%s", prog);
        else
            snprintf(path, pathlen, "%.*s/%s", (int)len, p, prog);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(path, X_OK) == 0)
                return 0;
            found_not_exec = 1;
        }
        if (colon == NULL)
            break;
        p = colon + 1;
    }
    return found_not_exec ? 126 : 127;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (n > 0 && (size_t)n < sizeof(path))
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void mark_dead(const char *dir, uint32_t r)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/dead.%u", dir, r);
    if (n < 0 || (size_t)n >= sizeof(path))
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
}

/* Has rank r closed its bootstrap (--clock ready)? A rank that is gone
 * counts as ready: nothing will come from it. */
static bool rank_ready(const char *dir, uint32_t r)
{
    char path[4200];
    struct stat st;
    int n = snprintf(path, sizeof(path), "%s/ready.%u", dir, r);
    if (n > 0 && (size_t)n < sizeof(path) && stat(path, &st) == 0)
        return true;
    n = snprintf(path, sizeof(path), "%s/dead.%u", dir, r);
    return n > 0 && (size_t)n < sizeof(path) && stat(path, &st) == 0;
}

static uint64_t random_token(void)
{
    uint64_t t = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &t, sizeof(t)) != (ssize_t)sizeof(t))
            t = 0;
        close(fd);
    }
    if (t == 0)
        t = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)time(NULL);
    return t;
}

/* The job key, as FTCOLL_JOB_KEY carries it: 32 hex digits. No fallback:
 * a guessable key is worse than none, so without getrandom() the job does
 * not start. 0, or -1 (said on stderr). */
static int random_key_hex(char out[33])
{
    uint8_t key[16];
    size_t got = 0;
    while (got < sizeof(key)) {
        ssize_t n = getrandom(key + got, sizeof(key) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            perror("ftcoll-run: getrandom (the job key)");
            return -1;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(key); i++)
        snprintf(out + 2 * i, 3, "%02x", key[i]);
    return 0;
}

/* Ranks that run rxm over tcp start with malloc asking for huge pages,
 * so that the exit of a killed one, which its peers wait for, frees rxm's
 * pools quickly (rank_hugepages.h). Set here, once, for the ranks to
 * inherit; a GLIBC_TUNABLES that names the tunable is left alone. */
static void give_ranks_hugepages(const options_t *o)
{
    const char *provider = getenv("FTCOLL_OFI_PROVIDER");
    if (provider == NULL || *provider == '\0')
        provider = getenv("FI_PROVIDER");
    char value[4096];
    int rc = ftc_run_hugepage_tunables(o->backend, provider,
                                       getenv("GLIBC_TUNABLES"), value,
                                       sizeof(value));
    if (rc > 0)
        setenv("GLIBC_TUNABLES", value, 1);
    else if (rc < 0)
        fputs("ftcoll-run: GLIBC_TUNABLES too long to add "
              FTC_RUN_HUGETLB_TUNABLE "=1; ranks keep it as it is\n",
              stderr);
}

/* The child side of a fork: never returns. */
static void exec_rank(const options_t *o, const char *path, uint32_t r,
                      const char *dir, uint64_t token, const char *key_hex,
                      int out_fd, int err_fd, int status_fd)
{
    /* Die with the launcher: no orphaned ranks if it is killed. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(127);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    char buf[32];
    snprintf(buf, sizeof(buf), "%u", r);
    setenv("FTCOLL_RANK", buf, 1);
    snprintf(buf, sizeof(buf), "%u", o->n);
    setenv("FTCOLL_SIZE", buf, 1);
    /* Every rank runs here: the backends' wait spins only when the ranks
     * have CPUs to spare (backends/common/spin.h). */
    setenv("FTCOLL_LOCAL_SIZE", buf, 1);
    setenv("FTCOLL_RENDEZVOUS", dir, 1);
    snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)token);
    setenv("FTCOLL_JOB_TOKEN", buf, 1);
    setenv("FTCOLL_JOB_KEY", key_hex, 1);
    if (o->backend != NULL && *o->backend != '\0')
        setenv("FTCOLL_BACKEND", o->backend, 1);
    signal(SIGPIPE, SIG_DFL);
    execv(path, o->argv);
    int e = errno;
    (void)!write(status_fd, &e, sizeof(e));
    _exit(127);
}

static int spawn(const options_t *o, const char *path, uint32_t r,
                 const char *dir, uint64_t token, const char *key_hex,
                 rank_proc_t *p)
{
    int out[2], err[2], st[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0
        || pipe2(st, O_CLOEXEC) != 0) {
        perror("ftcoll-run: pipe");
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("ftcoll-run: fork");
        return -1;
    }
    if (pid == 0)
        exec_rank(o, path, r, dir, token, key_hex, out[1], err[1], st[1]);
    close(out[1]);
    close(err[1]);
    close(st[1]);
    int e = 0;
    ssize_t n;
    do
        n = read(st[0], &e, sizeof(e));   /* EOF: exec succeeded */
    while (n < 0 && errno == EINTR);
    close(st[0]);
    p->pid = pid;
    p->running = true;
    ftc_relay_init(&p->out, out[0], 1, r);
    ftc_relay_init(&p->err, err[0], 2, r);
    p->out.on_line = p->err.on_line = on_line;
    p->out.on_line_arg = p->err.on_line_arg = p;
    if (n == (ssize_t)sizeof(e)) {
        fprintf(stderr, "ftcoll-run: cannot execute %s: %s\n", path,
                strerror(e));
        return e == ENOENT ? 127 : 126;
    }
    return 0;
}

static int mark_may_fail(const char *list, rank_proc_t *procs, uint32_t n)
{
    for (const char *p = list; p != NULL && *p != '\0';) {
        char *end;
        errno = 0;
        unsigned long r = strtoul(p, &end, 10);
        if (errno != 0 || end == p || r >= n || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "ftcoll-run: --may-fail wants ranks below %u "
                            "separated by commas, got '%s'\n", n, list);
            return -1;
        }
        procs[r].may_fail = true;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static const char *signame(int sig)
{
    const char *s = sigabbrev_np(sig);
    return s != NULL ? s : "?";
}

static const char *action_name(int sig)
{
    return sig == SIGKILL ? "--kill" : sig == SIGSTOP ? "--stop" : "--cont";
}

/* Send a's signal, now (t seconds after the start). */
static void act(job_t *job, action_t *a, double t)
{
    a->done = true;
    rank_proc_t *p = &job->procs[a->rank];
    if (!p->running) {
        fprintf(stderr, "ftcoll-run: %s rank %u: it had ended already\n",
                action_name(a->sig), a->rank);
        return;
    }
    kill(p->pid, a->sig);
    a->landed = true;
    if (a->sig == SIGKILL)
        p->killed_by_us = true;
    else if (a->sig == SIGSTOP)
        p->stopped_by_us = true;
    fprintf(stderr, "ftcoll-run: %s rank %u at %.3f s\n",
            a->sig == SIGKILL   ? "killed"
            : a->sig == SIGSTOP ? "stopped"
                                : "resumed",
            a->rank, t);
}

/* A line of a rank's output: the actions it cues. */
static void on_line(void *arg, const char *line, size_t len)
{
    rank_proc_t *p = arg;
    job_t *job = p->job;
    for (uint32_t k = 0; k < job->o->nactions; k++) {
        action_t *a = &job->o->actions[k];
        if (!a->done && a->cue != NULL && a->cue_rank == p->rank
            && memmem(line, len, a->cue, strlen(a->cue)) != NULL)
            act(job, a, now_s() - job->start);
    }
}

/* How rank r ended, for a line on stderr. */
static void say_end(uint32_t r, int status, const char *excuse)
{
    if (WIFEXITED(status))
        fprintf(stderr, "ftcoll-run: rank %u exited with status %d%s\n", r,
                WEXITSTATUS(status), excuse);
    else if (WIFSIGNALED(status))
        fprintf(stderr, "ftcoll-run: rank %u was killed by SIG%s%s\n", r,
                signame(WTERMSIG(status)), excuse);
}

int main(int argc, char **argv)
{
    options_t o;
    if (parse_args(argc, argv, &o) != 0) {
        free(o.actions); /* what a refused command line had parsed */
        return 2;
    }

    char path[4096];
    int rc = resolve_program(o.argv[0], path, sizeof(path));
    if (rc != 0) {
        fprintf(stderr, "ftcoll-run: %s: %s\n", o.argv[0],
                rc == 127 ? "command not found" : "permission denied");
        return rc;
    }
    give_ranks_hugepages(&o);

    char dir[4096];
    bool own_dir = o.rendezvous == NULL;
    if (own_dir) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/ftcoll-run-XXXXXX",
                 tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            perror("ftcoll-run: mkdtemp");
            return 1;
        }
    } else {
        snprintf(dir, sizeof(dir), "%s", o.rendezvous);
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "ftcoll-run: --rendezvous %s: %s\n", dir,
                    strerror(errno));
            return 1;
        }
    }

    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        perror("ftcoll-run: pipe");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    rank_proc_t *procs = calloc(o.n, sizeof(*procs));
    struct pollfd *pfds = calloc(2 * (size_t)o.n + 1, sizeof(*pfds));
    if (procs == NULL || pfds == NULL) {
        fputs("ftcoll-run: out of memory\n", stderr);
        return 1;
    }
    if (mark_may_fail(o.may_fail, procs, o.n) != 0)
        return 2;
    job_t job = {.o = &o, .procs = procs};
    for (uint32_t r = 0; r < o.n; r++) {
        procs[r].rank = r;
        procs[r].job = &job;
    }
    uint64_t token = random_token();
    char key_hex[33];
    if (random_key_hex(key_hex) != 0)
        return 1;
    int exit_code = 0;
    bool timed_out = false;
    for (uint32_t r = 0; r < o.n; r++) {
        rc = spawn(&o, path, r, dir, token, key_hex, &procs[r]);
        if (rc != 0) {
            for (uint32_t k = 0; k <= r; k++)
                if (procs[k].running)
                    kill(procs[k].pid, SIGKILL);
            exit_code = rc > 0 ? rc : 1;
            break;
        }
    }

    double start = now_s();
    job.start = start;
    /* --clock ready: actions wait for every rank's ready.<r>. */
    double action_origin = o.clock_ready ? -1 : 0;
    uint32_t next_ready = 0;
    double release_at = -1;     /* when resumed ranks must be gone */
    double reaped_all_at = -1;
    for (;;) {
        /* Reap, and notice ranks that stopped or continued. An exited
         * rank is looked at first and reaped after its leftovers in
         * /dev/shm are gone: until reaped, its pid cannot be reused. */
        int st;
        pid_t pid;
        siginfo_t si;
        for (;;) {
            memset(&si, 0, sizeof(si));
            if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED
                                          | WNOHANG | WNOWAIT) != 0
                || si.si_pid == 0)
                break;
            if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED
                || si.si_code == CLD_DUMPED)
                (void)ftc_shm_remove_leftovers(si.si_pid);
            pid = waitpid(si.si_pid, &st, WNOHANG | WUNTRACED | WCONTINUED);
            if (pid <= 0)
                break;
            for (uint32_t r = 0; r < o.n; r++) {
                rank_proc_t *p = &procs[r];
                if (p->pid != pid || !p->running)
                    continue;
                if (WIFSTOPPED(st)) {
                    p->stopped = true;
                } else if (WIFCONTINUED(st)) {
                    p->stopped = false;
                } else {
                    p->running = false;
                    p->status = st;
                    mark_dead(dir, r);
                }
            }
        }
        double t = now_s() - start;
        uint32_t running = 0, stopped = 0, open_pipes = 0;
        for (uint32_t r = 0; r < o.n; r++) {
            running += procs[r].running;
            stopped += procs[r].running && procs[r].stopped;
            open_pipes += (procs[r].out.in_fd >= 0) + (procs[r].err.in_fd >= 0);
        }
        if (running == 0 && reaped_all_at < 0)
            reaped_all_at = t;
        if (running == 0
            && (open_pipes == 0 || t - reaped_all_at > LINGER_PIPES_S))
            break;

        if (got_signal != 0) {
            fprintf(stderr, "ftcoll-run: got %s, killing every rank\n",
                    signame(got_signal));
            for (uint32_t r = 0; r < o.n; r++)
                if (procs[r].running)
                    kill(procs[r].pid, SIGKILL);
            if (exit_code == 0)
                exit_code = 128 + got_signal;
            got_signal = 0;
        }
        double next = t + 1.0;
        if (action_origin < 0) {
            while (next_ready < o.n && rank_ready(dir, next_ready))
                next_ready++;
            if (next_ready == o.n) {
                action_origin = t;
                fprintf(stderr, "ftcoll-run: every rank ready at %.3f s\n", t);
            } else {
                next = t + 0.002;
            }
        }
        for (uint32_t k = 0; k < o.nactions && action_origin >= 0; k++) {
            action_t *a = &o.actions[k];
            if (a->done || a->cue != NULL)
                continue;
            if (action_origin + a->at > t) {
                if (action_origin + a->at < next)
                    next = action_origin + a->at;
                continue;
            }
            act(&job, a, t);
        }
        /* Everyone else is gone: resume the stopped so they can learn
         * they were excluded and exit; kill them if they do not. */
        if (running > 0 && stopped == running && release_at < 0) {
            release_at = t + RELEASE_GRACE_S;
            for (uint32_t r = 0; r < o.n; r++)
                if (procs[r].running && procs[r].stopped)
                    kill(procs[r].pid, SIGCONT);
        }
        if (release_at >= 0 && t >= release_at) {
            for (uint32_t r = 0; r < o.n; r++) {
                if (procs[r].running) {
                    fprintf(stderr, "ftcoll-run: rank %u did not exit after "
                                    "being resumed: killing it\n", r);
                    procs[r].killed_by_us |= procs[r].stopped_by_us;
                    kill(procs[r].pid, SIGKILL);
                }
            }
            release_at = t + 3600;
        }
        if (o.timeout > 0 && !timed_out) {
            if (t >= o.timeout) {
                fprintf(stderr, "ftcoll-run: timed out after %.1f s, killing "
                                "every rank\n", o.timeout);
                for (uint32_t r = 0; r < o.n; r++)
                    if (procs[r].running)
                        kill(procs[r].pid, SIGKILL);
                timed_out = true;
            } else if (o.timeout < next) {
                next = o.timeout;
            }
        }
        if (release_at >= 0 && release_at < next)
            next = release_at;

        nfds_t nf = 0;
        pfds[nf++] = (struct pollfd){.fd = sig_pipe[0], .events = POLLIN};
        for (uint32_t r = 0; r < o.n; r++) {
            if (procs[r].out.in_fd >= 0)
                pfds[nf++] = (struct pollfd){.fd = procs[r].out.in_fd,
                                             .events = POLLIN};
            if (procs[r].err.in_fd >= 0)
                pfds[nf++] = (struct pollfd){.fd = procs[r].err.in_fd,
                                             .events = POLLIN};
        }
        double wait = next - t;
        int wait_ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
        if (wait_ms > 1000)
            wait_ms = 1000;
        if (poll(pfds, nf, wait_ms) < 0 && errno != EINTR)
            break;
        char drain[64];
        while (read(sig_pipe[0], drain, sizeof(drain)) > 0) {
        }
        for (nfds_t k = 1; k < nf; k++) {
            if (pfds[k].revents == 0)
                continue;
            for (uint32_t r = 0; r < o.n; r++) {
                if (procs[r].out.in_fd == pfds[k].fd)
                    ftc_relay_pump(&procs[r].out);
                else if (procs[r].err.in_fd == pfds[k].fd)
                    ftc_relay_pump(&procs[r].err);
            }
        }
    }

    /* Verdict: every rank we did not kill or stop must have exited 0.
     * The others' ends are named too, so that a caller can tell that a
     * fault it planned really happened. */
    for (uint32_t r = 0; r < o.n; r++) {
        rank_proc_t *p = &procs[r];
        if (p->pid == 0 || p->running
            || (WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0))
            continue;
        if (p->killed_by_us || p->stopped_by_us || p->may_fail) {
            say_end(r, p->status, p->killed_by_us    ? " (--kill)"
                                  : p->stopped_by_us ? " (--stop)"
                                                     : " (--may-fail)");
            continue;
        }
        say_end(r, p->status, "");
        if (exit_code == 0)
            exit_code = 1;
    }
    for (uint32_t k = 0; k < o.nactions; k++) {
        const action_t *a = &o.actions[k];
        if (a->landed)
            continue;
        if (a->cue != NULL)
            fprintf(stderr, "ftcoll-run: %s %u@%u:%s did not happen%s\n",
                    action_name(a->sig), a->rank, a->cue_rank, a->cue,
                    a->done ? "" : ": the cue never came");
        else
            fprintf(stderr, "ftcoll-run: %s %u@%g did not happen%s\n",
                    action_name(a->sig), a->rank, a->at,
                    a->done ? "" : ": the job ended first");
    }
    if (timed_out)
        exit_code = 124;
    if (own_dir)
        remove_dir(dir);
    free(procs);
    free(pfds);
    free(o.actions);
    return exit_code;
}
