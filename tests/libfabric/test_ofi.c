/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ofi: the libfabric backend's own multi-process tests. Runs jobs of
 * ofi_rank (N processes, real providers, real SIGKILL) under each RDM
 * provider that works here, reads the ranks' "@r ..." lines and checks
 * them; a few checks run in this process. Collectives and faults over
 * tcp;ofi_rxm and shm are the conformance suite's (ftcoll-bench under
 * ftcoll-run): here are the other providers and what only this backend
 * has (its FTCOLL_OFI_* knobs, where it listens, oversize messages, the
 * backend alone, CQ errors without the process monitor). The last line
 * says "N passed, M failed".
 *
 *   test_ofi --rank PATH [--launcher PATH] [--providers a,b,..] [--bench]
 *            [--iters K] [--pingpong PATH] [--backend-pp PATH]
 *            [--ftcoll-bench PATH]
 *
 * --launcher is ftcoll-run; without it this program starts the ranks
 * itself (same environment, same rendezvous). --bench measures 8-byte
 * allreduce latency with ftcoll-bench (--ftcoll-bench) instead of testing,
 * beside fi_pingpong (--pingpong) and the backend's own ping-pong
 * (--backend-pp) in the same run.
 *
 * The killed ranks of shm jobs leave their /dev/shm regions behind (the
 * provider unlinks them at close, which a SIGKILL skips): removed here.
 */
#define _GNU_SOURCE /* mkdtemp, setenv, strsep */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ftcoll/ftcoll.h"
#include "ftcoll_ofi.h"
#include "../listen_sockets.h"
#include "check.h"

#define MAX_RANKS 16
#define MAX_ENV 6

static const char *g_rank_path, *g_launcher, *g_pp_path, *g_lsan_supp;
static const char *g_bench_path; /* ftcoll-bench, for --bench */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- Jobs ---------------------------------------------------------------- */

typedef struct job {
    const char *prog;           /* NULL: ofi_rank */
    const char *prov;
    uint32_t n;
    const char *env[MAX_ENV];   /* "NAME=value" */
    const char *args[12];       /* ofi_rank's arguments */
    int victim;                 /* -1: none */
    int timeout_s;
} job_t;

typedef struct rank_out {
    bool done, info;
    int ok, fail;
    int pid;
    char provider[64];
    bool rxm_srx;               /* INFO: the backend set FI_OFI_RXM_USE_SRX */
    bool res1;
    char status1[32], value1[32], failed1[128];
    uint64_t t1;
    bool res2;
    char status2[32];
    char how[32];
    uint64_t detect_t;
    uint64_t probes;
    bool known, knows_failed;   /* KNOWN line, and what it said */
    int listen_n;               /* LISTEN: -2 none seen, -1 ss failed */
    char listen[512];
    bool memory;                /* a MEMORY line, and what it said */
    char tunables[256], thp[16], malloc_kind[16];
    long anon_huge_kb;
} rank_out_t;

typedef struct result {
    int status;                 /* launcher's exit status (0 good) */
    char *text;                 /* everything the job printed */
    size_t len;
    double seconds;
    rank_out_t r[MAX_RANKS];
    uint64_t t_fault;           /* KILL / STOP time */
    int fault_pid;
    char fails[1024];           /* the ranks' FAIL lines, abridged */
    int shm_removed;            /* stale /dev/shm regions removed */
} result_t;

static void buf_add(result_t *res, const char *p, size_t n)
{
    char *t = realloc(res->text, res->len + n + 1);
    if (t == NULL)
        return;
    memcpy(t + res->len, p, n);
    res->len += n;
    t[res->len] = '\0';
    res->text = t;
}

static void child_env(const job_t *j)
{
    setenv("FI_PROVIDER", j->prov, 1);
    setenv("FTCOLL_OFI_NODE", "127.0.0.1", 1);
    setenv("FTCOLL_BOOTSTRAP_TIMEOUT", "20", 1);
    if (g_lsan_supp != NULL && getenv("LSAN_OPTIONS") == NULL) {
        char v[4200];
        snprintf(v, sizeof(v), "suppressions=%s:print_suppressions=0",
                 g_lsan_supp);
        setenv("LSAN_OPTIONS", v, 1);
    }
    for (int i = 0; i < MAX_ENV && j->env[i] != NULL; i++) {
        char name[128];
        const char *eq = strchr(j->env[i], '=');
        if (eq == NULL || (size_t)(eq - j->env[i]) >= sizeof(name))
            continue;
        memcpy(name, j->env[i], (size_t)(eq - j->env[i]));
        name[eq - j->env[i]] = '\0';
        setenv(name, eq + 1, 1);
    }
}

static int rank_argv(const job_t *j, char **argv, int at)
{
    argv[at++] = (char *)(j->prog != NULL ? j->prog : g_rank_path);
    for (int i = 0; i < 12 && j->args[i] != NULL; i++)
        argv[at++] = (char *)j->args[i];
    argv[at] = NULL;
    return at;
}

/* Read fd into res until EOF or the deadline; returns 0, or -1 on
 * timeout. */
static int slurp(int fd, result_t *res, double deadline)
{
    char buf[4096];
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        buf_add(res, buf, (size_t)n);
    }
}

/* Through ftcoll-run. */
static void run_launcher(const job_t *j, result_t *res)
{
    int pfd[2];
    if (pipe(pfd) != 0) {
        res->status = -1;
        return;
    }
    char nbuf[16], tbuf[16], vbuf[16];
    snprintf(nbuf, sizeof(nbuf), "%u", j->n);
    snprintf(tbuf, sizeof(tbuf), "%d", j->timeout_s);
    snprintf(vbuf, sizeof(vbuf), "%d", j->victim);
    char *argv[40];
    int a = 0;
    argv[a++] = (char *)g_launcher;
    argv[a++] = "-n";
    argv[a++] = nbuf;
    argv[a++] = "--timeout";
    argv[a++] = tbuf;
    if (j->victim >= 0) {
        argv[a++] = "--may-fail";
        argv[a++] = vbuf;
    }
    argv[a++] = "--";
    rank_argv(j, argv, a);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        child_env(j);
        execv(g_launcher, argv);
        _exit(127);
    }
    close(pfd[1]);
    if (slurp(pfd[0], res, now_s() + j->timeout_s + 15) != 0)
        kill(pid, SIGKILL);
    close(pfd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[4096];
            snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Without ftcoll-run: the same environment, our own rendezvous, and the
 * same rule for stopped ranks (resumed once the others are gone). */
static void run_forked(const job_t *j, result_t *res)
{
    char dir[] = "/tmp/ftcoll-ofi-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        res->status = -1;
        return;
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        res->status = -1;
        return;
    }
    char token[32];
    snprintf(token, sizeof(token), "%016llx",
             (unsigned long long)((uint64_t)getpid() << 20
                                  ^ (uint64_t)time(NULL)));
    pid_t pids[MAX_RANKS];
    for (uint32_t r = 0; r < j->n; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            dup2(pfd[1], 1);
            dup2(pfd[1], 2);
            close(pfd[0]);
            close(pfd[1]);
            child_env(j);
            char buf[32];
            snprintf(buf, sizeof(buf), "%u", r);
            setenv("FTCOLL_RANK", buf, 1);
            snprintf(buf, sizeof(buf), "%u", j->n);
            setenv("FTCOLL_SIZE", buf, 1);
            setenv("FTCOLL_RENDEZVOUS", dir, 1);
            setenv("FTCOLL_JOB_TOKEN", token, 1);
            setenv("FTCOLL_BACKEND", "libfabric", 1);
            char *argv[16];
            rank_argv(j, argv, 0);
            execv(argv[0], argv);
            _exit(127);
        }
    }
    close(pfd[1]);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    double deadline = now_s() + j->timeout_s;
    bool running[MAX_RANKS], stopped[MAX_RANKS];
    int status[MAX_RANKS];
    uint32_t alive = j->n;
    for (uint32_t r = 0; r < j->n; r++) {
        running[r] = true;
        stopped[r] = false;
        status[r] = 0;
    }
    bool resumed = false, timed_out = false;
    while (alive > 0) {
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG | WUNTRACED | WCONTINUED)) > 0) {
            for (uint32_t r = 0; r < j->n; r++) {
                if (pids[r] != p || !running[r])
                    continue;
                if (WIFSTOPPED(st)) {
                    stopped[r] = true;
                } else if (WIFCONTINUED(st)) {
                    stopped[r] = false;
                } else {
                    running[r] = false;
                    status[r] = st;
                    alive--;
                    /* As ftcoll-run does: waiting ranks fail at once. */
                    char m[4200];
                    snprintf(m, sizeof(m), "%s/dead.%u", dir, r);
                    int fd = open(m, O_CREAT | O_WRONLY, 0600);
                    if (fd >= 0)
                        close(fd);
                }
            }
        }
        uint32_t nstopped = 0;
        for (uint32_t r = 0; r < j->n; r++)
            nstopped += running[r] && stopped[r];
        if (alive > 0 && nstopped == alive && !resumed) {
            for (uint32_t r = 0; r < j->n; r++)
                if (running[r] && stopped[r])
                    kill(pids[r], SIGCONT);
            resumed = true;
            deadline = now_s() + 5;
        }
        if (now_s() > deadline && !timed_out) {
            for (uint32_t r = 0; r < j->n; r++)
                if (running[r])
                    kill(pids[r], SIGKILL);
            timed_out = true;
        }
        char buf[4096];
        ssize_t n;
        while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
            buf_add(res, buf, (size_t)n);
        struct pollfd pp = {.fd = pfd[0], .events = POLLIN};
        (void)poll(&pp, 1, 10);
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
        buf_add(res, buf, (size_t)n);
    close(pfd[0]);
    res->status = timed_out ? 124 : 0;
    for (uint32_t r = 0; r < j->n && !timed_out; r++) {
        if ((int)r == j->victim)
            continue;
        if (WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0)
            continue;
        res->status = 1;
        /* The launcher's verdict, in its words (see parse). */
        char line[96];
        if (WIFSIGNALED(status[r]))
            snprintf(line, sizeof(line), "ftcoll-run: rank %u was killed by "
                     "signal %d\n", r, WTERMSIG(status[r]));
        else
            snprintf(line, sizeof(line), "ftcoll-run: rank %u exited with "
                     "status %d\n", r, WEXITSTATUS(status[r]));
        buf_add(res, line, strlen(line));
    }
    rm_dir(dir);
}

static bool field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof(pat), " %s=", key);
    const char *p = strstr(line, pat);
    if (p == NULL)
        return false;
    p += strlen(pat);
    size_t k = 0;
    while (p[k] != '\0' && p[k] != ' ' && p[k] != '\n' && k + 1 < cap) {
        out[k] = p[k];
        k++;
    }
    out[k] = '\0';
    return true;
}

static uint64_t field_u64(const char *line, const char *key)
{
    char v[64];
    return field(line, key, v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
}

static void parse(const job_t *j, result_t *res)
{
    char *save = NULL;
    char *text = res->text != NULL ? strdup(res->text) : NULL;
    if (text == NULL)
        return;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        /* A job that ended badly says why in the launcher's verdict
         * ("rank 1 was killed by SIGSEGV"): that goes into the check's
         * own line, which a CI log keeps when it cuts the dump. */
        if (res->status != 0 && strncmp(line, "ftcoll-run: ", 12) == 0
            && strstr(line, "every rank ready") == NULL) {
            size_t used = strlen(res->fails);
            if (used + 8 < sizeof(res->fails))
                snprintf(res->fails + used, sizeof(res->fails) - used,
                         "%s%s", used ? "; " : "", line);
            continue;
        }
        char *at = strchr(line, '@');
        if (at == NULL)
            continue;
        char *end;
        long r = strtol(at + 1, &end, 10);
        if (end == at + 1 || *end != ' ' || r < 0 || r >= (long)j->n)
            continue;
        rank_out_t *o = &res->r[r];
        const char *kw = end + 1;
        /* Fields are found by " key=" in the line from the keyword on. */
        const char *rest = end;
        if (strncmp(kw, "LISTEN ", 7) == 0) {
            char n[16] = "";
            field(rest, "n", n, sizeof(n));
            o->listen_n = atoi(n);
            field(rest, "addrs", o->listen, sizeof(o->listen));
        } else if (strncmp(kw, "MEMORY ", 7) == 0) {
            o->memory = true;
            field(rest, "tunables", o->tunables, sizeof(o->tunables));
            field(rest, "thp", o->thp, sizeof(o->thp));
            field(rest, "malloc", o->malloc_kind, sizeof(o->malloc_kind));
            o->anon_huge_kb = (long)field_u64(rest, "anon_huge_kb");
        } else if (strncmp(kw, "INFO ", 5) == 0) {
            o->info = true;
            o->pid = (int)field_u64(rest, "pid");
            field(rest, "provider", o->provider, sizeof(o->provider));
            o->rxm_srx = strstr(rest, " FI_OFI_RXM_USE_SRX=1") != NULL;
        } else if (strncmp(kw, "DONE ", 5) == 0) {
            o->done = true;
            o->ok = (int)field_u64(rest, "ok");
            o->fail = (int)field_u64(rest, "fail");
        } else if (strncmp(kw, "FAIL ", 5) == 0) {
            size_t used = strlen(res->fails);
            if (used + 8 < sizeof(res->fails))
                snprintf(res->fails + used, sizeof(res->fails) - used,
                         "%s[%ld] %s", used ? "; " : "", r, kw + 5);
        } else if (strncmp(kw, "KILL ", 5) == 0
                   || strncmp(kw, "STOP ", 5) == 0) {
            res->t_fault = field_u64(rest, "t");
            res->fault_pid = (int)field_u64(rest, "pid");
        } else if (strncmp(kw, "RES ", 4) == 0) {
            char op[8] = "";
            field(rest, "op", op, sizeof(op));
            if (strcmp(op, "1") == 0) {
                o->res1 = true;
                field(rest, "status", o->status1, sizeof(o->status1));
                field(rest, "value", o->value1, sizeof(o->value1));
                field(rest, "failed", o->failed1, sizeof(o->failed1));
                o->t1 = field_u64(rest, "t");
            } else if (strcmp(op, "2") == 0) {
                o->res2 = true;
                field(rest, "status", o->status2, sizeof(o->status2));
            }
        } else if (strncmp(kw, "DETECT ", 7) == 0) {
            field(rest, "how", o->how, sizeof(o->how));
            o->detect_t = field_u64(rest, "t");
            o->probes = field_u64(rest, "probes");
        } else if (strncmp(kw, "KNOWN ", 6) == 0) {
            o->known = true;
            o->knows_failed = field_u64(rest, "failed") == 1;
        }
    }
    free(text);
}

/* shm regions of ranks that did not close their endpoint. */
static int clean_shm(const result_t *res, uint32_t n)
{
    int removed = 0;
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        for (uint32_t r = 0; r < n; r++) {
            if (res->r[r].pid <= 0)
                continue;
            char pre[32];
            int k = snprintf(pre, sizeof(pre), "%d:", res->r[r].pid);
            if (strncmp(e->d_name, pre, (size_t)k) != 0)
                continue;
            char p[512];
            snprintf(p, sizeof(p), "/dev/shm/%s", e->d_name);
            if (unlink(p) == 0)
                removed++;
        }
    }
    closedir(d);
    return removed;
}

static void run(const job_t *j, result_t *res)
{
    memset(res, 0, sizeof(*res));
    for (uint32_t r = 0; r < MAX_RANKS; r++)
        res->r[r].listen_n = -2;
    double t0 = now_s();
    if (g_launcher != NULL)
        run_launcher(j, res);
    else
        run_forked(j, res);
    res->seconds = now_s() - t0;
    parse(j, res);
    if (strcmp(j->prov, "shm") == 0)
        res->shm_removed = clean_shm(res, j->n);
}

static void dump(const result_t *res)
{
    if (res->text == NULL)
        return;
    /* The tail is where the trouble is. On stderr: a CI log that is
     * cut keeps the failures' lines, and stdout has every case's. */
    size_t from = res->len > 6000 ? res->len - 6000 : 0;
    fprintf(stderr, "---- job output (last %zu bytes) ----\n%s\n----\n",
            res->len - from, res->text + from);
}

static const char *env_label(const job_t *j)
{
    static char buf[256];
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < MAX_ENV && j->env[i] != NULL; i++) {
        const char *s = j->env[i];
        if (strncmp(s, "FTCOLL_OFI_", 11) == 0)
            s += 11;
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, " %s", s);
        if (used >= sizeof(buf))
            break;
    }
    return buf;
}

/* --- Checks -------------------------------------------------------------- */

static bool all_done(const job_t *j, const result_t *res, bool skip_victim)
{
    for (uint32_t r = 0; r < j->n; r++) {
        if (skip_victim && (int)r == j->victim)
            continue;
        if (!res->r[r].done || res->r[r].fail != 0)
            return false;
    }
    return true;
}

static void check_coll(const job_t *j, const char *what)
{
    result_t res;
    run(j, &res);
    bool ok = res.status == 0 && all_done(j, &res, false);
    int checks = 0;
    for (uint32_t r = 0; r < j->n; r++)
        checks += res.r[r].ok;
    CHECK_MSG(ok, "%-12s n=%u %s%s: %d self-checks at %u ranks (%.1f s)%s%s",
              j->prov, j->n, what, env_label(j), checks, j->n, res.seconds,
              res.fails[0] ? "; " : "", res.fails);
    if (!ok)
        dump(&res);
    free(res.text);
}

/* Survivors agree on the value and the failed set, and their results
 * came after the fault. */
/* expect_how: the detection paths a survivor may report (NULL: any);
 * need_how: one survivor at least must report this one (NULL: none). */
/* The victim SIGKILLs itself in an allreduce it started: the survivors
 * deliver after it, agree, know it failed, and (expect_how, need_how)
 * learnt it by the paths named. */
static void check_fault(const job_t *j, const char *what,
                        const char *expect_how, const char *need_how)
{
    int need_seen = 0;
    result_t res;
    run(j, &res);
    const rank_out_t *first = NULL;
    bool agree = true, after = true, delivered = true, how_ok = true;
    double lat_max = 0, det_min = 1e9, det_max = 0;
    int nhow = 0;
    char hows[256] = "";
    size_t used = 0;
    for (uint32_t r = 0; r < j->n; r++) {
        if ((int)r == j->victim)
            continue;
        const rank_out_t *o = &res.r[r];
        if (!o->res1 || strcmp(o->status1, "FTC_OK") != 0) {
            delivered = false;
            continue;
        }
        if (first == NULL)
            first = o;
        else if (strcmp(first->value1, o->value1) != 0
                 || strcmp(first->failed1, o->failed1) != 0)
            agree = false;
        if (res.t_fault == 0 || o->t1 <= res.t_fault)
            after = false;
        else if ((double)(o->t1 - res.t_fault) / 1e6 > lat_max)
            lat_max = (double)(o->t1 - res.t_fault) / 1e6;
        if (o->detect_t > res.t_fault && res.t_fault > 0) {
            double d = (double)(o->detect_t - res.t_fault) / 1e6;
            det_min = d < det_min ? d : det_min;
            det_max = d > det_max ? d : det_max;
            nhow++;
        }
        if (expect_how != NULL && strstr(expect_how, o->how) == NULL)
            how_ok = false;
        if (need_how != NULL && strcmp(need_how, o->how) == 0)
            need_seen++;
        if (used < sizeof(hows) - 40)
            used += (size_t)snprintf(hows + used, sizeof(hows) - used,
                                     "%s%s", used ? "," : "", o->how);
    }
    if (need_how != NULL && need_seen == 0)
        how_ok = false;
    /* The fault landed: the victim (its own pid) said so just before,
     * every survivor knows it failed at the end, and the victim died
     * (ftcoll-run names how; forked here: no DONE from it). */
    const rank_out_t *vo = &res.r[j->victim];
    char landed[160] = "";
    if (res.t_fault == 0 || vo->pid == 0 || res.fault_pid != vo->pid)
        snprintf(landed, sizeof(landed), "no KILL event from the victim");
    for (uint32_t r = 0; r < j->n && landed[0] == '\0'; r++)
        if ((int)r != j->victim && !(res.r[r].known && res.r[r].knows_failed))
            snprintf(landed, sizeof(landed), "rank %u does not know rank %d "
                     "failed", r, j->victim);
    if (landed[0] == '\0') {
        char said[64];
        snprintf(said, sizeof(said), "rank %d was killed by SIGKILL",
                 j->victim);
        if (vo->done || (g_launcher != NULL
                         && (res.text == NULL || strstr(res.text, said) == NULL)))
            snprintf(landed, sizeof(landed), "the victim did not die of "
                     "SIGKILL");
    }
    bool done = all_done(j, &res, true);
    bool ok = res.status == 0 && done && delivered && agree
              && after && how_ok && first != NULL
              && landed[0] == '\0';
    char det[96] = "";
    if (nhow > 0)
        snprintf(det, sizeof(det), ", backend report %.1f-%.1f ms after",
                 det_min, det_max);
    char shm[64] = "";
    if (res.shm_removed > 0)
        snprintf(shm, sizeof(shm), ", %d stale /dev/shm region%s removed",
                 res.shm_removed, res.shm_removed > 1 ? "s" : "");
    CHECK_MSG(ok,
              "%-12s n=%u %s%s: survivors %s%s%s%s, kill->deliver max %.1f ms, "
              "detected by [%s]%s%s (%.1f s)%s%s",
              j->prov, j->n, what, env_label(j),
              delivered ? "delivered" : "DID NOT deliver",
              agree ? " and agree" : " DISAGREE", first != NULL ? " on " : "",
              first != NULL ? first->value1 : "", lat_max, hows, det, shm, res.seconds, res.fails[0] ? "; " : "",
              res.fails);
    if (!after && delivered)
        printf("     note: a survivor delivered before the fault\n");
    if (landed[0] != '\0')
        printf("     the fault did not land: %s\n", landed);
    if (!how_ok)
        printf("     expected detection by %s%s%s\n",
               expect_how != NULL ? expect_how : "any",
               need_how != NULL ? ", at least once by " : "",
               need_how != NULL ? need_how : "");
    if (!ok)
        dump(&res);
    free(res.text);
}

/* rxm over net (libfabric 1.17) closes a connection's msg endpoint and
 * then reads the msg CQ, and a receive completion still queued reposts
 * its buffer on the freed endpoint: a SIGSEGV in fi_close at about 3 %
 * of job ends with freed memory scribbled over (MALLOC_PERTURB_, as
 * meson runs tests). The backend asks rxm over net for a shared receive
 * context, which takes the buffer back instead (backends/libfabric/
 * transport.c, rxm_use_srx). Each job must end cleanly and say that the
 * backend asked; without the request, 30 job ends crash with a
 * probability of about 60 %, and the INFO check fails every time. */
static void check_close_repeated(const char *prov, int jobs)
{
    int crashed = 0, unasked = 0, first_bad = -1;
    result_t bad;
    memset(&bad, 0, sizeof(bad));
    double seconds = 0;
    for (int k = 0; k < jobs; k++) {
        job_t j = {.prov = prov, .n = 2, .victim = -1, .timeout_s = 60,
                   .env = {"MALLOC_PERTURB_=165"},
                   .args = {"--mode", "coll"}};
        result_t res;
        run(&j, &res);
        seconds += res.seconds;
        bool ended = res.status == 0 && all_done(&j, &res, false);
        bool asked = res.r[0].rxm_srx && res.r[1].rxm_srx;
        crashed += !ended;
        unasked += !asked;
        if ((!ended || !asked) && first_bad < 0) {
            first_bad = k;
            bad = res;          /* keeps its text for the dump */
            continue;
        }
        free(res.text);
    }
    CHECK_MSG(crashed == 0 && unasked == 0,
              "%-12s n=2 %d job ends with MALLOC_PERTURB_: %d bad ends, %d "
              "without FI_OFI_RXM_USE_SRX=1 from the backend (%.1f s)%s%s",
              prov, jobs, crashed, unasked, seconds,
              bad.fails[0] ? "; " : "", bad.fails);
    if (first_bad >= 0)
        dump(&bad);
    free(bad.text);
}

/* Where the ranks of a single-host job listen when nothing chooses the
 * address (FTCOLL_OFI_NODE unset; the other jobs here bind 127.0.0.1
 * by hand): the backend must bind loopback, not the first interface the
 * provider finds (tcp, net and udp take eth0 by default). */
static void check_listen(const char *prov)
{
    job_t j = {.prov = prov, .n = 2, .victim = -1, .timeout_s = 60,
               .env = {"FTCOLL_OFI_NODE="},
               .args = {"--mode", "coll", "--report-listen"}};
    result_t res;
    run(&j, &res);
    bool ok = res.status == 0 && all_done(&j, &res, false);
    bool shm = strcmp(prov, "shm") == 0;
    for (uint32_t r = 0; r < j.n; r++) {
        const rank_out_t *o = &res.r[r];
        if (o->listen_n < 0)
            ok = false;     /* ss failed, or no LISTEN line */
        else if (shm)
            ok = ok && o->listen_n == 0;
        else
            ok = ok && o->listen_n > 0 && ftc_test_all_loopback(o->listen);
    }
    CHECK_MSG(ok,
              "%-12s n=2 single-host job, no node given: ranks listen on "
              "%s (rank 0: %s) (%.1f s)%s%s",
              prov, shm ? "no IP socket" : "loopback only", res.r[0].listen,
              res.seconds, res.fails[0] ? "; " : "", res.fails);
    if (!ok)
        dump(&res);
    free(res.text);
}

/* The launcher starts ranks of rxm over tcp with malloc asking for huge
 * pages, so that a killed rank's exit frees rxm's pools quickly and its
 * local peers hear of it sooner (backends/bootstrap/rank_hugepages.h):
 * every rank has glibc.malloc.hugetlb=1 in GLIBC_TUNABLES and, where
 * glibc's malloc serves it and transparent huge pages are not off, at
 * least MIN_HUGE_KB of its anonymous memory in huge pages: more than
 * anything of a rank but rxm's two pools (~17 MB each, 2 MiB-aligned
 * parts of them huge) could make. A GLIBC_TUNABLES that names the
 * tunable is the user's and is passed on as it is; other providers get
 * nothing. Launcher jobs only: forked ranks bypass it. */
#define MIN_HUGE_KB 8192
static void check_hugepages(const char *prov, const char *tunables,
                            const char *want)
{
    char env[300];
    snprintf(env, sizeof(env), "GLIBC_TUNABLES=%s", tunables);
    job_t j = {.prov = prov, .n = 2, .victim = -1, .timeout_s = 60,
               .env = {env}, .args = {"--mode", "coll", "--report-memory"}};
    result_t res;
    run(&j, &res);
    bool ok = res.status == 0 && all_done(&j, &res, false);
    bool huge = strcmp(want, "glibc.malloc.hugetlb=1") == 0;
    bool sized = false;
    for (uint32_t r = 0; r < j.n; r++) {
        const rank_out_t *o = &res.r[r];
        ok = ok && o->memory && strcmp(o->tunables, want) == 0;
        if (huge && strcmp(o->malloc_kind, "glibc") == 0
            && strcmp(o->thp, "never") != 0 && strcmp(o->thp, "-") != 0) {
            sized = true;
            ok = ok && o->anon_huge_kb >= MIN_HUGE_KB;
        }
    }
    CHECK_MSG(ok,
              "%-12s n=2 launched with GLIBC_TUNABLES='%s': ranks start with "
              "'%s' (rank 0: '%s', thp %s, malloc %s, %ld kB in huge "
              "pages%s) (%.1f s)%s%s",
              prov, tunables, want, res.r[0].tunables, res.r[0].thp,
              res.r[0].malloc_kind, res.r[0].anon_huge_kb,
              sized ? "" : ", not checked", res.seconds,
              res.fails[0] ? "; " : "", res.fails);
    if (!ok)
        dump(&res);
    free(res.text);
}

static void check_oversize(const char *prov)
{
    job_t j = {.prov = prov, .n = 2, .victim = -1, .timeout_s = 30,
               .args = {"--mode", "oversize"}};
    result_t res;
    run(&j, &res);
    bool logged = res.text != NULL
                  && strstr(res.text, "longer than max_msg_size") != NULL;
    bool ok = all_done(&j, &res, false) && logged;
    CHECK_MSG(ok,
              "%-12s n=2 oversize message: refused with a clear error, "
              "the collective ends (%.1f s)%s%s",
              prov, res.seconds, res.fails[0] ? "; " : "", res.fails);
    if (!ok)
        dump(&res);
    free(res.text);
}

/* The providers the conformance suite runs (tests/conformance/meson.build:
 * conformance-libfabric-tcp, -shm). */
static bool in_conformance(const char *prov)
{
    return strcmp(prov, "tcp;ofi_rxm") == 0 || strcmp(prov, "shm") == 0;
}

/* --- In-process checks --------------------------------------------------- */

static char g_log[4096];

static void log_keep(void *arg, const char *msg)
{
    (void)arg;
    size_t used = strlen(g_log);
    snprintf(g_log + used, sizeof(g_log) - used, "%s\n", msg);
}

/* The configuration of rank `rank` of a job of nranks ranks on
 * 127.0.0.1 over prov: what every hand-made endpoint here starts from. */
static void local_config(ftc_ofi_config_t *c, const char *prov,
                         uint32_t nranks, uint32_t rank, uint64_t token)
{
    ftc_ofi_config_init(c);
    c->nranks = nranks;
    c->rank = rank;
    c->job_token = token;
    c->provider = prov;
    c->node = "127.0.0.1";
}

/* A child process publishes rank `rank`'s address into blobs (nranks
 * slots) and exits, cleanly: with shm its region is gone once it is
 * reaped, as ftcoll-run leaves a killed rank's. true if it did. */
static bool publish_and_exit(const char *prov, uint32_t rank, uint32_t nranks,
                             uint64_t token, unsigned char *blobs)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        ftc_ofi_config_t c;
        local_config(&c, prov, nranks, rank, token);
        ftc_ofi_t *z = NULL;
        unsigned char blob[FTC_OFI_BLOB_SIZE] = {0};
        if (ftc_ofi_create(&c, &z) == FTC_OK)
            memcpy(blob, ftc_ofi_local_blob(z), sizeof(blob));
        ssize_t w = write(fds[1], blob, sizeof(blob));
        ftc_ofi_destroy(z);
        _exit(w == (ssize_t)sizeof(blob) ? 0 : 1);
    }
    close(fds[1]);
    unsigned char *mine = blobs + (size_t)rank * FTC_OFI_BLOB_SIZE;
    size_t got = 0;
    while (got < FTC_OFI_BLOB_SIZE) {
        ssize_t k = read(fds[0], mine + got, FTC_OFI_BLOB_SIZE - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fds[0]);
    int st = 0;
    return child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st)
           && WEXITSTATUS(st) == 0 && got == FTC_OFI_BLOB_SIZE;
}

/* A rank that dies right after it published its address, before anyone
 * connected to it: a child process creates rank 1, hands its blob over a
 * pipe and exits; once it is reaped, rank 0 (here) sets its peers. The
 * eager connect must not wait connect_timeout_ms (set to 20 s here) for
 * a hello that never comes: the exit monitor sees that the pid is gone
 * and the peer is reported as exited, at once. Before, it waited the
 * whole timeout and reported "connect" (10 s of set-up by default, while
 * the other ranks' keepalive could exclude the waiting one). */
static void dead_before_connect(const char *prov)
{
    unsigned char blobs[2 * FTC_OFI_BLOB_SIZE];
    if (!publish_and_exit(prov, 1, 2, 44, blobs)) {
        CHECK_MSG(false, "%s: the child did not publish its address", prov);
        return;
    }
    ftc_ofi_config_t c;
    local_config(&c, prov, 2, 0, 44);
    c.connect_timeout_ms = 20000;
    c.log = log_keep;
    ftc_ofi_t *z = NULL;
    int rc = ftc_ofi_create(&c, &z);
    if (rc != FTC_OK) {
        CHECK_MSG(false, "%s: create: %s", prov, ftc_strerror(rc));
        return;
    }
    memcpy(blobs, ftc_ofi_local_blob(z), FTC_OFI_BLOB_SIZE);
    g_log[0] = '\0';
    double t0 = now_s();
    rc = ftc_ofi_set_peers(z, blobs);
    double took = now_s() - t0;
    /* Reports reach the core (and count as made) from progress. */
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = 44;
    ftc_context_t *ctx = NULL;
    uint64_t when = 0;
    ftc_ofi_detect_t how = FTC_OFI_DETECT_NONE;
    if (rc == FTC_OK
        && ftc_context_create(0, 2, ftc_ofi_ops(), z, &cfg, &ctx) == FTC_OK) {
        ftc_ofi_attach(z, ctx);
        double end = now_s() + 10;
        while ((how = ftc_ofi_peer_reported(z, 1, &when))
                   == FTC_OFI_DETECT_NONE
               && now_s() < end)
            (void)ftc_ofi_progress(z, 5);
    }
    CHECK_MSG(rc == FTC_OK && how == FTC_OFI_DETECT_EXIT &&
                  ftc_context_is_failed(ctx, 1),
              "%-12s a rank gone before anyone connected to it is reported as "
              "exited at set-up (%s, %s, %.3f s)",
              prov, ftc_strerror(rc), ftc_ofi_detect_name(how), took);
    if (how != FTC_OFI_DETECT_EXIT)
        printf("     log: %s\n", g_log);
    ftc_context_destroy(ctx);
    ftc_ofi_destroy(z);
}

/* Ranks 0 and 1 over tcp;ofi_rxm on 127.0.0.1; rank 0 connects eagerly
 * with connect_timeout_ms, rank 1 (whose blob says eager or lazy) never
 * progresses. Returns what rank 0's ftc_ofi_set_peers returned, or the
 * error that kept either endpoint from being created; *took is how long
 * set_peers took, and g_log holds what rank 0 logged. */
static int connect_to_silent_peer(int connect_timeout_ms,
                                  int silent_eager, double *took)
{
    ftc_ofi_config_t c;
    ftc_ofi_t *a = NULL, *b = NULL;
    local_config(&c, "tcp;ofi_rxm", 2, 0, 43);
    c.log = log_keep;
    c.connect_timeout_ms = connect_timeout_ms;
    c.eager_connect = 1;
    int rc = ftc_ofi_create(&c, &a);
    c.rank = 1;
    c.eager_connect = silent_eager;
    int rb = ftc_ofi_create(&c, &b);
    *took = 0;
    g_log[0] = '\0';
    if (rc == FTC_OK && rb == FTC_OK) {
        unsigned char blobs[2 * FTC_OFI_BLOB_SIZE];
        memcpy(blobs, ftc_ofi_local_blob(a), FTC_OFI_BLOB_SIZE);
        memcpy(blobs + FTC_OFI_BLOB_SIZE, ftc_ofi_local_blob(b),
               FTC_OFI_BLOB_SIZE);
        double t0 = now_s();
        rc = ftc_ofi_set_peers(a, blobs);
        *took = now_s() - t0;
    } else if (rc == FTC_OK) {
        rc = rb;
    }
    ftc_ofi_destroy(a);
    ftc_ofi_destroy(b);
    return rc;
}

typedef struct {
    bool done;
    int status;
} one_op_t;

static void one_op_deliver(const ftc_completion_t *c, void *arg)
{
    one_op_t *o = arg;
    o->done = true;
    o->status = c->status;
}

/* A rank dead since the exchange with live ranks after it (ranks 0 and 2
 * in this process, rank 1 a child that exited): libfabric 1.17's shm
 * gives rank 2 the dead rank's fi_addr, and the set-up used to fail
 * ("not inserted in order"). Both must set up, report rank 1 failed and
 * nobody else, and reach each other: an allreduce of 10 and 30 gives 40
 * at both. Lazy connect: the two share one thread. */
static void dead_between_peers(const char *prov)
{
    const uint32_t n = 3;
    const uint64_t token = 45;
    unsigned char blobs[3 * FTC_OFI_BLOB_SIZE];
    if (!publish_and_exit(prov, 1, n, token, blobs)) {
        CHECK_MSG(false, "%s: the child did not publish its address", prov);
        return;
    }
    ftc_ofi_t *z[3] = {NULL, NULL, NULL};
    ftc_context_t *ctx[3] = {NULL, NULL, NULL};
    ftc_group_t *g[3] = {NULL, NULL, NULL};
    int rc[3] = {FTC_OK, FTC_OK, FTC_OK};
    for (uint32_t r = 0; r < n; r += 2) {
        ftc_ofi_config_t c;
        local_config(&c, prov, n, r, token);
        c.eager_connect = 0;
        c.log = log_keep;
        rc[r] = ftc_ofi_create(&c, &z[r]);
        if (rc[r] == FTC_OK)
            memcpy(blobs + (size_t)r * FTC_OFI_BLOB_SIZE,
                   ftc_ofi_local_blob(z[r]), FTC_OFI_BLOB_SIZE);
    }
    g_log[0] = '\0';
    for (uint32_t r = 0; r < n; r += 2)
        if (rc[r] == FTC_OK)
            rc[r] = ftc_ofi_set_peers(z[r], blobs);
    ftc_config_t cfg;
    ftc_config_init(&cfg);
    cfg.job_token = token;
    int32_t in[3] = {10, 0, 30}, out[3] = {0, 0, 0};
    one_op_t op[3];
    memset(op, 0, sizeof(op));
    for (uint32_t r = 0; r < n; r += 2) {
        if (rc[r] == FTC_OK)
            rc[r] = ftc_context_create(r, n, ftc_ofi_ops(), z[r], &cfg,
                                       &ctx[r]);
        if (rc[r] != FTC_OK)
            continue;
        ftc_ofi_attach(z[r], ctx[r]);
        rc[r] = ftc_group_create(ctx[r], 1, 0, n, NULL, &g[r]);
        if (rc[r] != FTC_OK)
            continue;
        ftc_coll_args_t a;
        ftc_coll_args_init(&a);
        a.f = 1;
        a.count = 1;
        a.sendbuf = &in[r];
        a.recvbuf = &out[r];
        a.deliver = one_op_deliver;
        a.deliver_arg = &op[r];
        rc[r] = ftc_init_allreduce(g[r], &a, NULL);
    }
    double end = now_s() + 20;
    while (rc[0] == FTC_OK && rc[2] == FTC_OK && !(op[0].done && op[2].done)
           && now_s() < end) {
        (void)ftc_ofi_progress(z[0], 0);
        (void)ftc_ofi_progress(z[2], 0);
    }
    bool ok = rc[0] == FTC_OK && rc[2] == FTC_OK;
    for (uint32_t r = 0; ok && r < n; r += 2) {
        uint32_t other = 2 - r;
        ok = op[r].done && op[r].status == FTC_OK && out[r] == 40
             && ftc_ofi_peer_reported(z[r], 1, NULL) != FTC_OFI_DETECT_NONE
             && ftc_ofi_peer_reported(z[r], other, NULL)
                    == FTC_OFI_DETECT_NONE
             && ftc_context_is_failed(ctx[r], 1)
             && !ftc_context_is_failed(ctx[r], other);
    }
    CHECK_MSG(ok,
              "%-12s a rank dead since the exchange, live ranks after it: "
              "set-up %s/%s, rank 1 reported (%s/%s), allreduce %s/%s = "
              "%d/%d (40)",
              prov, ftc_strerror(rc[0]), ftc_strerror(rc[2]),
              ftc_ofi_detect_name(ftc_ofi_peer_reported(z[0], 1, NULL)),
              ftc_ofi_detect_name(ftc_ofi_peer_reported(z[2], 1, NULL)),
              op[0].done ? ftc_strerror(op[0].status) : "not delivered",
              op[2].done ? ftc_strerror(op[2].status) : "not delivered",
              (int)out[0], (int)out[2]);
    if (!ok)
        printf("     log: %s\n", g_log);
    for (uint32_t r = 0; r < n; r += 2) {
        if (g[r] != NULL)
            ftc_group_destroy(g[r]);
        ftc_context_destroy(ctx[r]);
        ftc_ofi_destroy(z[r]);
    }
}

static void local_checks(const char *avail)
{
    ftc_ofi_config_t c;
    ftc_ofi_t *z = NULL;

    ftc_ofi_config_init(&c);
    CHECK_MSG(ftc_ofi_create(&c, &z) == FTC_EINVAL && z == NULL,
              "create rejects nranks = 0");
    c.nranks = 2;
    c.rank = 2;
    CHECK_MSG(ftc_ofi_create(&c, &z) == FTC_EINVAL,
              "create rejects rank >= nranks");

    setenv("FTCOLL_OFI_RX_DEPTH", "lots", 1);
    char err[256] = "";
    ftc_ofi_config_init(&c);
    int rc = ftc_ofi_config_from_env(&c, err, sizeof(err));
    CHECK_MSG(rc == FTC_EINVAL && strstr(err, "FTCOLL_OFI_RX_DEPTH") != NULL,
              "config_from_env names a bad variable (%s)", err);
    unsetenv("FTCOLL_OFI_RX_DEPTH");

    /* A provider that is not here: ENOTSUP, naming what is. */
    const char *missing = ftc_ofi_provider_available("verbs;ofi_rxm")
                              ? "no-such-provider"
                              : "verbs;ofi_rxm";
    ftc_ofi_config_init(&c);
    c.nranks = 1;
    c.provider = missing;
    c.log = log_keep;
    g_log[0] = '\0';
    rc = ftc_ofi_create(&c, &z);
    bool names = strstr(g_log, missing) != NULL
                 && (avail[0] == '\0' || strstr(g_log, "tcp;ofi_rxm") != NULL
                     || strstr(g_log, "shm") != NULL);
    CHECK_MSG(rc == FTC_ENOTSUP && names,
              "an unavailable provider (%s) fails with FTC_ENOTSUP naming the "
              "available ones",
              missing);
    if (!(rc == FTC_ENOTSUP && names))
        printf("     log: %s\n", g_log);

    /* Two ranks in this process, on different providers: refused. */
    if (ftc_ofi_provider_available("tcp;ofi_rxm")
        && ftc_ofi_provider_available("shm")) {
        ftc_ofi_t *a = NULL, *b = NULL;
        local_config(&c, "tcp;ofi_rxm", 2, 0, 42);
        c.log = log_keep;
        int ra = ftc_ofi_create(&c, &a);
        c.provider = "shm";
        c.rank = 1;
        int rb = ftc_ofi_create(&c, &b);
        if (ra == FTC_OK && rb == FTC_OK) {
            unsigned char blobs[2 * FTC_OFI_BLOB_SIZE];
            memcpy(blobs, ftc_ofi_local_blob(a), FTC_OFI_BLOB_SIZE);
            memcpy(blobs + FTC_OFI_BLOB_SIZE, ftc_ofi_local_blob(b),
                   FTC_OFI_BLOB_SIZE);
            g_log[0] = '\0';
            rc = ftc_ofi_set_peers(a, blobs);
            CHECK_MSG(rc == FTC_EINVAL && strstr(g_log, "'shm'") != NULL &&
                          strstr(g_log, "'tcp;ofi_rxm'") != NULL,
                      "ranks on different providers are refused, naming both");
            /* A corrupted blob, then another job's. */
            unsigned char bad[2 * FTC_OFI_BLOB_SIZE];
            memcpy(bad, ftc_ofi_local_blob(a), FTC_OFI_BLOB_SIZE);
            memcpy(bad + FTC_OFI_BLOB_SIZE, ftc_ofi_local_blob(a),
                   FTC_OFI_BLOB_SIZE);
            bad[FTC_OFI_BLOB_SIZE + 200] ^= 1;
            CHECK_MSG(ftc_ofi_set_peers(a, bad) == FTC_EINVAL,
                      "a corrupted address blob is refused");
        } else {
            CHECK_MSG(false,
                      "create tcp;ofi_rxm (%s) and shm (%s) in one process",
                      ftc_strerror(ra), ftc_strerror(rb));
            printf("     log: %s\n", g_log);
        }
        ftc_ofi_destroy(a);
        ftc_ofi_destroy(b);
    }

    /* Where a single-host endpoint binds, and a loopback address for a
     * job that spans hosts. */
    if (ftc_ofi_provider_available("tcp;ofi_rxm")) {
        ftc_ofi_config_init(&c);
        c.nranks = 2;
        c.provider = "tcp;ofi_rxm";
        c.single_host = 1;
        c.log = log_keep;
        z = NULL;
        rc = ftc_ofi_create(&c, &z);
        char addrs[512] = "";
        int k = rc == FTC_OK ? ftc_test_listen_addrs((long)getpid(), addrs,
                                                     sizeof(addrs))
                             : 0;
        CHECK_MSG(rc == FTC_OK &&
                      (k < 0 || (k > 0 && ftc_test_all_loopback(addrs))),
                  "single_host = 1, no node: tcp;ofi_rxm listens on %s",
                  k < 0 ? "(ss did not run)" : addrs);
        ftc_ofi_destroy(z);
        c.single_host = 0;
        c.node = "127.0.0.1";
        g_log[0] = '\0';
        z = NULL;
        rc = ftc_ofi_create(&c, &z);
        CHECK_MSG(rc == FTC_EINVAL && z == NULL &&
                      strstr(g_log, "loopback") != NULL,
                  "single_host = 0 with node 127.0.0.1: refused (%s)",
                  ftc_strerror(rc));
        ftc_ofi_destroy(z);
        setenv("FTCOLL_SINGLE_HOST", "2", 1);
        ftc_ofi_config_init(&c);
        rc = ftc_ofi_config_from_env(&c, err, sizeof(err));
        CHECK_MSG(rc == FTC_EINVAL && strstr(err, "FTCOLL_SINGLE_HOST") != NULL,
                  "config_from_env: a bad FTCOLL_SINGLE_HOST (%s)", err);
        setenv("FTCOLL_SINGLE_HOST", "1", 1);
        rc = ftc_ofi_config_from_env(&c, err, sizeof(err));
        CHECK_MSG(rc == FTC_OK && c.single_host == 1,
                  "config_from_env: FTCOLL_SINGLE_HOST=1");
        unsetenv("FTCOLL_SINGLE_HOST");
    }

    if (ftc_ofi_provider_available("tcp;ofi_rxm"))
        dead_before_connect("tcp;ofi_rxm");
    if (ftc_ofi_provider_available("shm"))
        dead_before_connect("shm");
    if (ftc_ofi_provider_available("tcp;ofi_rxm"))
        dead_between_peers("tcp;ofi_rxm");
    if (ftc_ofi_provider_available("shm"))
        dead_between_peers("shm");

    /* Eager connect to a peer that never progresses (created, never
     * given its peers): set_peers gives up after connect_timeout_ms and
     * reports it, instead of hanging or failing. */
    if (ftc_ofi_provider_available("tcp;ofi_rxm")) {
        double took;
        rc = connect_to_silent_peer(300, 1, &took);
        /* At least the timeout (a bound no machine can break); that it
         * returned at all shows it gave up. */
        CHECK_MSG(rc == FTC_OK && took >= 0.25
                      && strstr(g_log, "rank 1 failed (connect") != NULL,
                  "eager connect gives up on a silent peer after "
                  "connect_timeout_ms and reports it (%.2f s, %s)",
                  took, ftc_strerror(rc));
        if (strstr(g_log, "rank 1 failed (connect") == NULL)
            printf("     log: %s\n", g_log);

        /* The same silent peer, but its blob says it connects lazily:
         * not waited for, not reported. The connect timeout is a minute
         * here, so that "not waited for" is no guess about how fast this
         * machine is: waiting would take that minute. */
        rc = connect_to_silent_peer(60000, 0, &took);
        CHECK_MSG(rc == FTC_OK && took < 30
                      && strstr(g_log, "failed (connect") == NULL,
                  "eager connect skips a peer that connects lazily "
                  "(%.3f s, %s)",
                  took, ftc_strerror(rc));
    }
}

/* --- Bench --------------------------------------------------------------- */

/* fi_pingpong server and client, 8 bytes; returns usec/xfer or -1. */
static double fi_pingpong(const char *pp, const char *prov, int iters)
{
    char cmd[1024];
    static int port = 47700;
    port++;
    /* The client retries until the server listens: how long the server
     * takes to start is the machine's business. */
    snprintf(cmd, sizeof(cmd),
             "(timeout 60 %s -p '%s' -e rdm -B %d -I %d -S 8 "
             ">/dev/null 2>&1 &);"
             " for i in $(seq 200); do out=$(timeout 60 %s -p '%s' -e rdm "
             "-P %d -I %d -S 8 127.0.0.1 2>&1) && break; sleep 0.05; done;"
             " echo \"$out\"",
             pp, prov, port, iters, pp, prov, port, iters);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return -1;
    char line[512];
    double us = -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        /* bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec */
        char c1[32], c2[32], c3[32], c4[32], c5[32];
        double mbs, usx;
        if (sscanf(line, "%31s %31s %31s %31s %31s %lf %lf", c1, c2, c3, c4,
                   c5, &mbs, &usx) == 7 && strcmp(c1, "8") == 0)
            us = usx;
    }
    pclose(f);
    return us;
}

static void bench(char **provs, int nprov, int iters, const char *pp,
                  const char *bpp)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char it[16];
    snprintf(it, sizeof(it), "%d", iters);
    printf("# 8-byte allreduce latency, rank 0's view (us); %ld CPUs\n", ncpu);
    for (int p = 0; p < nprov; p++) {
        if (pp != NULL) {
            /* fi_pingpong reports a mean, which preemption on a shared
             * machine inflates: the best of three. */
            double best = -1;
            for (int k = 0; k < 3; k++) {
                double us = fi_pingpong(pp, provs[p], iters * 2);
                if (us > 0 && (best < 0 || us < best))
                    best = us;
            }
            printf("%-12s fi_pingpong 8 B: %.2f us/xfer one-way (mean, best "
                   "of 3 runs)\n", provs[p], best);
        }
        if (bpp != NULL) {
            char k[16];
            snprintf(k, sizeof(k), "%d", iters * 5);
            job_t j = {.prog = bpp, .prov = provs[p], .n = 2, .victim = -1,
                       .timeout_s = 120, .args = {"--pingpong", k}};
            result_t res;
            run(&j, &res);
            char *at = res.text != NULL ? strstr(res.text, "PINGPONG ") : NULL;
            char *nl = at != NULL ? strchr(at, '\n') : NULL;
            if (nl != NULL)
                *nl = '\0';
            printf("%-12s backend ping-pong %s\n", provs[p],
                   at != NULL ? at + 9 : "failed");
            free(res.text);
        }
        /* The collective: ftcoll-bench over this backend (every result
         * checked), sleeping in progress (the default way to wait) at
         * every n, and spinning too where every rank has a CPU of its
         * own. Its JSON latency line, from rank 0, is printed as it is. */
        static const struct {
            const char *algo, *f;
        } cfgs[] = {{"corrected", "0"}, {"corrected", "1"}, {"tree", "0"}};
        char warm[16];
        snprintf(warm, sizeof(warm), "%d", iters / 10 + 10);
        for (uint32_t k = 0; k < 4 && g_bench_path != NULL; k++) {
            uint32_t n = k < 3 ? 2u << k : 2;
            bool spin = k == 3;
            if (spin && (long)n > ncpu)
                continue;
            for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
                if ((uint32_t)atoi(cfgs[c].f) >= n)
                    continue;
                /* Latency, not detection: a generous keepalive, so that
                 * an oversubscribed machine does not exclude a slow rank. */
                job_t j = {.prog = g_bench_path, .prov = provs[p], .n = n,
                           .victim = -1, .timeout_s = 300,
                           .env = {"FTCOLL_BACKEND=libfabric",
                                   "FTCOLL_SUSPECT_MS=2000",
                                   "FTCOLL_PROBE_MS=3000"},
                           .args = {"--algo", cfgs[c].algo, "-f", cfgs[c].f,
                                    "--iters", it, "--warmup", warm, "--wait",
                                    spin ? "spin" : "block", "--json",
                                    "--quiet"}};
                result_t res;
                run(&j, &res);
                char *line = res.text != NULL
                                 ? strstr(res.text, "{\"kind\":\"latency\"")
                                 : NULL;
                char *nl = line != NULL ? strchr(line, '\n') : NULL;
                if (nl != NULL)
                    *nl = '\0';
                if (res.status != 0 || line == NULL) {
                    printf("%-12s n=%u %s f=%s bench failed\n", provs[p], n,
                           cfgs[c].algo, cfgs[c].f);
                    dump(&res);
                } else {
                    printf("%-12s %s %s\n", provs[p],
                           spin ? "spin " : "block", line);
                }
                free(res.text);
                fflush(stdout);
            }
        }
    }
}

/* --- Main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *plist = NULL, *pp = NULL, *bpp = NULL;
    bool do_bench = false;
    int iters = 2000;
    check_set_verbose(true); /* each case says "ok" or "FAIL" as it ends */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--bench") == 0) {
            do_bench = true;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "%s: %s wants a value\n", argv[0], a);
            return 2;
        }
        i++;
        if (strcmp(a, "--rank") == 0)
            g_rank_path = v;
        else if (strcmp(a, "--launcher") == 0)
            g_launcher = access(v, X_OK) == 0 ? v : NULL;
        else if (strcmp(a, "--providers") == 0)
            plist = v;
        else if (strcmp(a, "--iters") == 0)
            iters = atoi(v);
        else if (strcmp(a, "--pingpong") == 0)
            pp = access(v, X_OK) == 0 ? v : NULL;
        else if (strcmp(a, "--lsan-supp") == 0)
            g_lsan_supp = v;
        else if (strcmp(a, "--backend-pp") == 0)
            bpp = g_pp_path = v;
        else if (strcmp(a, "--ftcoll-bench") == 0)
            g_bench_path = v;
        else {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
            return 2;
        }
    }
    if (g_rank_path == NULL) {
        fprintf(stderr, "usage: %s --rank PATH [--launcher PATH] "
                        "[--providers a,b] [--bench] [--iters K]\n", argv[0]);
        return 2;
    }
    /* The jobs choose their provider through FI_PROVIDER: ours must not
     * narrow what we see. */
    unsetenv("FI_PROVIDER");
    /* And the rxm request is the backend's to make (check_close_repeated). */
    unsetenv("FI_OFI_RXM_USE_SRX");
    signal(SIGPIPE, SIG_IGN);

    char avail[512];
    ftc_ofi_available_providers(avail, sizeof(avail));
    printf("# libfabric RDM providers here: %s\n# ranks started by %s\n",
           avail[0] ? avail : "none",
           g_launcher != NULL ? g_launcher : "this program (fork)");

    /* Providers known to work here, in order; 'sockets' hangs. */
    char *provs[8];
    int nprov = 0;
    char *list = strdup(plist != NULL
                            ? plist
                            : "tcp;ofi_rxm,shm,net;ofi_rxm,net,udp;ofi_rxd");
    for (char *s = list, *tok; (tok = strsep(&s, ",")) != NULL && nprov < 8;) {
        if (*tok == '\0')
            continue;
        if (!ftc_ofi_provider_available(tok)) {
            printf("skip %s: not available here\n", tok);
            continue;
        }
        provs[nprov++] = tok;
    }

    if (do_bench) {
        bench(provs, nprov, iters, pp, bpp);
        free(list);
        return 0;
    }

    local_checks(avail);

    /* Collectives and faults over tcp;ofi_rxm and shm are the conformance
     * suite's (conformance-libfabric-tcp, -shm: ftcoll-bench under
     * ftcoll-run); here the other providers, and what is this backend's
     * own: its knobs, where it listens, oversize messages, the backend
     * alone, and CQ errors without the process monitor. */
    for (int p = 0; p < nprov; p++) {
        if (in_conformance(provs[p]))
            continue;
        for (uint32_t n = 2; n <= 8; n *= 2) {
            job_t j = {.prov = provs[p], .n = n, .victim = -1, .timeout_s = 60,
                       .args = {"--mode", "coll"}};
            check_coll(&j, "reduce/bcast/allreduce (corrected f=0,1; tree)");
        }
    }

    /* A single-host job with no address given binds loopback. */
    for (int p = 0; p < nprov; p++)
        check_listen(provs[p]);

    /* rxm over net's teardown (check_close_repeated). */
    for (int p = 0; p < nprov; p++)
        if (strcmp(provs[p], "net;ofi_rxm") == 0)
            check_close_repeated(provs[p], 30);

    /* The launcher's huge pages for rxm's pools over tcp, the user's own
     * choice kept, and nothing for shm. */
    for (int p = 0; p < nprov && g_launcher != NULL; p++) {
        if (strcmp(provs[p], "tcp;ofi_rxm") == 0) {
            check_hugepages(provs[p], "", "glibc.malloc.hugetlb=1");
            check_hugepages(provs[p], "glibc.malloc.hugetlb=0",
                            "glibc.malloc.hugetlb=0");
        } else if (strcmp(provs[p], "shm") == 0) {
            check_hugepages(provs[p], "", "-");
        }
    }

    /* The backend alone: a burst of every message size, in order. */
    for (int p = 0; p < nprov && g_pp_path != NULL; p++) {
        job_t j = {.prog = g_pp_path, .prov = provs[p], .n = 2, .victim = -1,
                   .timeout_s = 60, .args = {"--order", "3000"}};
        result_t res;
        run(&j, &res);
        char *at = res.text != NULL ? strstr(res.text, "@1 ORDER ") : NULL;
        char *at0 = res.text != NULL ? strstr(res.text, "@0 ORDER ") : NULL;
        char line[512] = "", line0[512] = "";
        if (at != NULL)
            sscanf(at + 9, "%511[^\n]", line);
        if (at0 != NULL)
            sscanf(at0 + 9, "%511[^\n]", line0);
        bool ok = res.status == 0 && all_done(&j, &res, false);
        CHECK_MSG(ok,
                  "%-12s n=2 backend alone, 3000 messages of 8 B..max in "
                  "one burst: %s; sender %s (%.1f s)",
                  provs[p], line, line0, res.seconds);
        if (!ok)
            dump(&res);
        free(res.text);
    }

    bool have_tcp = false, have_shm = false;
    for (int p = 0; p < nprov; p++) {
        have_tcp |= strcmp(provs[p], "tcp;ofi_rxm") == 0;
        have_shm |= strcmp(provs[p], "shm") == 0;
    }
    /* SIGKILL of the first root during an 8-byte allreduce: with local
     * process monitoring (the default), and without it (what a remote
     * peer gets: CQ errors or the core's keepalive). */
    for (int p = 0; p < nprov; p++) {
        const char *prov = provs[p];
        if (!in_conformance(prov)) {
            job_t j = {.prov = prov, .n = 4, .victim = 0, .timeout_s = 60,
                       .args = {"--mode", "kill", "--victim", "0"}};
            /* The core may learn it from another survivor's failure list
             * before its own backend reports: "core" is fine too. */
            check_fault(&j, "SIGKILL root in allreduce", "process-exit,core",
                        "process-exit");
            continue;
        }
        /* Without the process monitor: what a remote peer gets, CQ
         * errors or the core's keepalive (the suite runs with it on). */
        job_t k = {.prov = prov, .n = 8, .victim = 0, .timeout_s = 60,
                   .env = {"FTCOLL_OFI_PID_MONITOR=0"},
                   .args = {"--mode", "kill", "--victim", "0"}};
        check_fault(&k, "SIGKILL root in allreduce", "core,cq-error", NULL);
    }

    /* Send paths and knobs. */
    if (have_tcp || have_shm) {
        const char *prov = have_tcp ? "tcp;ofi_rxm" : "shm";
        check_oversize(prov);
        job_t z = {.prov = prov, .n = 4, .victim = -1, .timeout_s = 60,
                   .env = {"FTCOLL_OFI_ZCOPY_MIN=1024"},
                   .args = {"--mode", "coll"}};
        check_coll(&z, "zero-copy sends");
        job_t r = {.prov = prov, .n = 4, .victim = -1, .timeout_s = 60,
                   .env = {"FTCOLL_OFI_MR_LOCAL=1",
                           "FTCOLL_OFI_ZCOPY_MIN=4096"},
                   .args = {"--mode", "coll"}};
        check_coll(&r, "registered buffers (FI_MR_LOCAL path)");
        job_t s = {.prov = prov, .n = 4, .victim = -1, .timeout_s = 60,
                   .env = {"FTCOLL_OFI_FI_SOURCE=1", "FTCOLL_OFI_WAIT_FD=0",
                           "FTCOLL_OFI_TX_DEPTH=2", "FTCOLL_OFI_RX_DEPTH=4"},
                   .args = {"--mode", "coll"}};
        check_coll(&s, "FI_SOURCE checked, polled CQ, 2 tx slots");
        /* Connections made on the first send, as before eager connect:
         * the first send to a peer can wait 100+ ms for it to accept
         * (docs/libfabric.md), so a keepalive that tolerates that. */
        job_t l = {.prov = prov, .n = 4, .victim = -1, .timeout_s = 60,
                   .env = {"FTCOLL_OFI_CONNECT=lazy"},
                   .args = {"--mode", "coll", "--suspect-ms", "2000",
                            "--probe-ms", "3000"}};
        check_coll(&l, "lazy connect");
    }
    if (have_shm) {
        job_t z = {.prov = "shm", .n = 4, .victim = -1, .timeout_s = 60,
                   .env = {"FTCOLL_OFI_ZCOPY_MIN=1024", "FTCOLL_OFI_MR_LOCAL=1",
                           "FTCOLL_OFI_FI_SOURCE=1"},
                   .args = {"--mode", "coll"}};
        check_coll(&z, "zero-copy, registered buffers, FI_SOURCE checked");
    }

    free(list);
    return check_report();
}
