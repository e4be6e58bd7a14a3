/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A killed peer's last words reach the core before its death does.
 *
 * The property (backends/libfabric/exit_drain.c): a local peer's exit,
 * seen through its pidfd, is reported to the core only after the
 * messages it wrote before it died have been read. The rule counts
 * progress passes (the CQ read to empty several times in a row with
 * nothing more from that peer); it used to be a fixed 2 ms
 * (report_grace_ms), which a slow pass could outlast.
 *
 * Three processes: this one (rank 0, the survivor), a forked victim
 * (rank 1) and a forked watcher; ranks 0 and 1 each have an endpoint and
 * the recording stand-in for the core (tests/support/core_double.h).
 * Rank 0 sets up and waits in ftc_ofi_progress. The watcher waits until
 * it sleeps there, stops it (SIGSTOP), lets the victim inject N
 * messages (over tcp;ofi_rxm written to its socket as fi_inject returns,
 * over shm copied into our queue; the victim checks that none waited in
 * a queue), after which the victim is SIGKILLed; once the victim's pidfd is
 * readable (its exit complete) the watcher resumes rank 0 (SIGCONT). So
 * rank 0 wakes with the exit and every message on its side at once, as
 * a survivor does that was not scheduled while its peer died (8 ranks on
 * 2 CPUs). It progresses until the backend reports rank 1, and every
 * one of the N messages, intact and in order, must have reached the core
 * before the report.
 *
 * 600 messages of 8 bytes (about 50 KB on the wire) fit in what loopback
 * TCP takes in before the receiver reads (its first window, 64 KiB).
 * A pass reads the CQ 32 entries at a time, at most 512, and rxm over
 * tcp hands over what one provider progress call produced, so reporting
 * on the pass that sees the exit (the drain switched off) gave the core
 * 10-12 of the 600 over tcp;ofi_rxm, once 512, in 5 runs: the case
 * fails. shm copies every message into our queue and one progress call
 * takes them all: there the case checks that nothing is lost, and could
 * not tell the rules apart.
 *
 * The victim has read everything sent to it, so its connection ends
 * with a FIN. With data left unread its kernel sends an RST instead;
 * Linux keeps our side's received bytes readable before the reset
 * (checked separately, docs/libfabric.md).
 */
#define _GNU_SOURCE /* siginfo_t with waitid, syscall() for pidfd_open */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core_double.h"
#include "ftcoll/ftcoll.h"
#include "ftcoll_ofi.h"
#include "shm_leftovers.h"

enum { MSG_LEN = 8, NMSGS = 600 };

static const uint64_t TOKEN = 47;

/* Message i's bytes: its index, then a pattern of it. */
static void msg_fill(unsigned char *b, uint32_t i)
{
    memcpy(b, &i, sizeof(i));
    for (size_t j = sizeof(i); j < MSG_LEN; j++)
        b[j] = (unsigned char)(i * 31 + j);   /* none at 8 bytes */
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_log(void *arg, const char *msg)
{
    (void)arg;
    fprintf(stderr, "%s\n", msg);
}

static void config(ftc_ofi_config_t *c, const char *prov, uint32_t rank)
{
    ftc_ofi_config_init(c);
    c->nranks = 2;
    c->rank = rank;
    c->job_token = TOKEN;
    c->provider = prov;
    c->node = "127.0.0.1";
    c->log = on_log;
    c->report_grace_ms = 0;     /* the default: the drain alone */
}

static bool write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t k = write(fd, p, len);
        if (k <= 0)
            return false;
        p += k;
        len -= (size_t)k;
    }
    return true;
}

static bool read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t k = read(fd, p, len);
        if (k <= 0)
            return false;
        p += k;
        len -= (size_t)k;
    }
    return true;
}

/* The scheduler state of pid ('S' sleeping, 'T' stopped, ...), or 0. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');
    return close_paren != NULL && close_paren[1] == ' ' ? close_paren[2] : 0;
}

/* Wait (polling /proc) until pid is in state want; false after 20 s, a
 * guard against a hang, not a measure. */
static bool await_state(pid_t pid, char want)
{
    uint64_t end = now_ns() + 20000000000u;
    while (proc_state(pid) != want) {
        if (now_ns() > end)
            return false;
        usleep(200);
    }
    return true;
}

/* Pipes between the three processes. */
typedef struct wires {
    int blob_up[2];     /* victim -> rank 0: its blob */
    int blob_down[2];   /* rank 0 -> victim: rank 0's blob */
    int waiting[2];     /* rank 0 -> watcher: set up, about to wait */
    int go[2];          /* watcher -> victim: rank 0 is stopped, send */
    int sent[2];        /* victim -> watcher: sent, about to die */
} wires_t;

/* The victim, rank 1: ends by SIGKILL (or _exit on an error). */
static void victim(const char *prov, const wires_t *w)
{
    ftc_ofi_config_t oc;
    config(&oc, prov, 1);
    /* Every message (24 bytes with the header) is injected: over tcp
     * written to the socket, over shm copied into rank 0's queue. */
    ftc_ofi_t *z = NULL;
    unsigned char blobs[2 * FTC_OFI_BLOB_SIZE];
    if (ftc_ofi_create(&oc, &z) != FTC_OK)
        _exit(2);
    memcpy(blobs + FTC_OFI_BLOB_SIZE, ftc_ofi_local_blob(z),
           FTC_OFI_BLOB_SIZE);
    if (!write_all(w->blob_up[1], blobs + FTC_OFI_BLOB_SIZE,
                   FTC_OFI_BLOB_SIZE)
        || !read_all(w->blob_down[0], blobs, FTC_OFI_BLOB_SIZE)
        || ftc_ofi_set_peers(z, blobs) != FTC_OK)
        _exit(3);
    static ftc_context_t ctx;
    core_double_init(&ctx, 1, z);
    ftc_ofi_attach(z, &ctx);
    char go = 0;
    if (!read_all(w->go[0], &go, 1))
        _exit(4);
    unsigned char buf[MSG_LEN];
    for (uint32_t i = 0; i < NMSGS; i++) {
        msg_fill(buf, i);
        int rc = ftc_ofi_ops()->send(z, 0, buf, MSG_LEN, NULL);
        if (rc != FTC_SEND_INLINE)
            _exit(5);
    }
    /* Some passes, for anything the provider queued inside (nothing is
     * expected: rank 0's side takes 64 KiB before it reads). */
    for (int i = 0; i < 100; i++)
        (void)ftc_ofi_progress(z, 0);
    ftc_ofi_stats_t st;
    ftc_ofi_stats(z, &st);
    if (st.msgs_injected != NMSGS || st.msgs_queued != 0) {
        fprintf(stderr, "rank 1: %" PRIu64 " of %d injected, %" PRIu64
                " queued\n", st.msgs_injected, NMSGS, st.msgs_queued);
        _exit(6);
    }
    char sent = 'S';
    if (!write_all(w->sent[1], &sent, 1))
        _exit(7);
    raise(SIGKILL);
    _exit(8);
}

/* The watcher: stops rank 0 while it sleeps in progress, resumes it once
 * the victim's exit is complete. Exit status 0 when all went so. */
static void watcher(pid_t rank0, pid_t victim_pid, const wires_t *w)
{
    char c = 0;
    if (!read_all(w->waiting[0], &c, 1) || !await_state(rank0, 'S')
        || kill(rank0, SIGSTOP) != 0 || !await_state(rank0, 'T'))
        _exit(2);
    int pfd = (int)syscall(SYS_pidfd_open, victim_pid, 0);
    char go = 'G';
    int rc = 0;
    if (pfd < 0 || !write_all(w->go[1], &go, 1) || !read_all(w->sent[0], &c, 1))
        rc = 3;
    struct pollfd p = {.fd = pfd, .events = POLLIN};
    if (rc == 0 && poll(&p, 1, 20000) != 1)   /* the exit complete */
        rc = 4;
    (void)kill(rank0, SIGCONT);
    _exit(rc);
}

static void run_case(const char *prov)
{
    wires_t w;
    int *all[] = {w.blob_up, w.blob_down, w.waiting, w.go, w.sent};
    for (size_t i = 0; i < 5; i++)
        if (pipe(all[i]) != 0) {
            CHECK_MSG(false, "pipe");
            return;
        }
    fflush(stdout);
    fflush(stderr);
    pid_t vpid = fork();
    if (vpid == 0)
        victim(prov, &w);
    pid_t me = getpid();
    pid_t wpid = fork();
    if (wpid == 0)
        watcher(me, vpid, &w);

    core_double_reset();
    ftc_ofi_config_t oc;
    config(&oc, prov, 0);
    ftc_ofi_t *z = NULL;
    unsigned char blobs[2 * FTC_OFI_BLOB_SIZE];
    bool ok = ftc_ofi_create(&oc, &z) == FTC_OK;
    if (ok) {
        memcpy(blobs, ftc_ofi_local_blob(z), FTC_OFI_BLOB_SIZE);
        ok = write_all(w.blob_down[1], blobs, FTC_OFI_BLOB_SIZE)
             && read_all(w.blob_up[0], blobs + FTC_OFI_BLOB_SIZE,
                         FTC_OFI_BLOB_SIZE)
             && ftc_ofi_set_peers(z, blobs) == FTC_OK;
    }
    static ftc_context_t ctx;
    core_double_init(&ctx, 0, z);
    if (ok)
        ftc_ofi_attach(z, &ctx);
    char waiting = 'W';
    ok = ok && write_all(w.waiting[1], &waiting, 1);
    uint64_t calls = 0;
    uint64_t end = now_ns() + 30000000000u;   /* a hang guard */
    uint64_t first_end = 0, last_end = 0;
    while (ok && ctx.peer_failures == 0 && now_ns() < end) {
        (void)ftc_ofi_progress(z, 1000);
        last_end = now_ns();
        if (calls++ == 0)
            first_end = last_end;   /* the call that slept through it */
    }
    for (size_t i = 0; i < 5; i++) {
        close(all[i][0]);
        close(all[i][1]);
    }
    /* The victim has exited; its /dev/shm region goes while its pid is
     * still its own (not reaped), as ftcoll-run does. */
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)vpid, &si, WEXITED | WNOWAIT) == 0)
        (void)ftc_shm_remove_leftovers(vpid);
    int vst = 0, wst = 0;
    (void)waitpid(vpid, &vst, 0);
    (void)waitpid(wpid, &wst, 0);
    bool killed = WIFSIGNALED(vst) && WTERMSIG(vst) == SIGKILL;
    bool watched = WIFEXITED(wst) && WEXITSTATUS(wst) == 0;
    /* What reached the core from rank 1 before its failure, in order. */
    uint32_t before = 0, intact = 0;
    bool reported = false;
    static unsigned char want[MSG_LEN];
    for (size_t k = 0; k < core_nrecords; k++) {
        const core_record_t *r = &core_records[k];
        if (r->kind == CORE_PEER_FAILED && r->a == 1) {
            reported = true;
            break;
        }
        if (r->kind != CORE_RECV || r->a != 1)
            continue;
        msg_fill(want, before);
        if (r->len == MSG_LEN && r->hash == core_double_hash(want, MSG_LEN))
            intact++;
        before++;
    }
    ftc_ofi_detect_t how = z != NULL ? ftc_ofi_peer_reported(z, 1, NULL)
                                     : FTC_OFI_DETECT_NONE;
    CHECK_MSG(ok && killed && watched && reported
                  && how == FTC_OFI_DETECT_EXIT && before == NMSGS
                  && intact == NMSGS,
              "%-12s all %d messages of %d B written before the kill reach "
              "the core before the exit report (set-up %s, victim %s, "
              "survivor %s, reported: %s, %u messages before it, %u "
              "intact, %" PRIu64 " progress calls)",
              prov, NMSGS, MSG_LEN, ok ? "ok" : "failed",
              killed ? "killed" : "not killed",
              watched ? "stopped and resumed" : "not stopped as planned",
              ftc_ofi_detect_name(how), before, intact, calls);
    /* Information, never asserted: from the end of the call that slept
     * through the death to the report (the rest of the reading and the
     * drain's quiet passes). */
    printf("%-12s %u of %d messages before the report, %" PRIu64
           " progress calls, %.1f us after the first\n", prov, before,
           NMSGS, calls, (double)(last_end - first_end) / 1e3);
    ftc_ofi_destroy(z);
}

int main(void)
{
    /* 41 x 1000 bytes fit in what loopback TCP takes in before the
     * receiver reads (its first window, 64 KiB): the victim's sends
     * complete while rank 0 is stopped. */
    static const char *const provs[] = {"tcp;ofi_rxm", "shm"};
    for (size_t i = 0; i < 2; i++) {
        if (ftc_ofi_provider_available(provs[i]) != 1) {
            printf("SKIP %s: not available here\n", provs[i]);
            continue;
        }
        run_case(provs[i]);
    }
    CHECK_MSG(core_reentries == 0, "no entry point called from inside one");
    return check_report();
}
