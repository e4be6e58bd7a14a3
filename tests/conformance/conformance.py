#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Backend conformance suite: real processes, real failures.

Every case starts a job with ftcoll-run (n = 2 .. 16) running ftcoll-bench
over the backend under test (--backend zmq|ucx|libfabric) on one of its
transports (--transport, see TRANSPORTS: the library's own environment
variables, UCX_TLS or FI_PROVIDER), then checks what each rank reports
(the JSON line ftcoll-bench prints at the end):

  - every rank that was not made to fail finishes, with no wrong result
    (ftcoll-bench checks each result against what it can compute locally:
    the sum over a valid set of ranks, the root's value, statuses that the
    faults explain);
  - allreduce survivors agree: the same digest over all results;
  - nobody is declared failed who was not made to fail (no false
    suspicion);
  - every fault the case planned really happened: a killed rank printed
    its kill event or ftcoll-run killed it, died of SIGKILL (ftcoll-run
    names how each rank ended) and printed no summary; a stopped rank was
    stopped and, where the core's keepalive excluded it, learnt that it
    was excluded; every survivor names every victim failed. A run in
    which a fault did not land fails, it does not pass vacuously;
  - no hang, strangers are counted, bad input gives a clear error;
  - wrong use (one rank calls differently from the others): every rank
    ends every operation with the status docs/semantics.md promises for
    the mistake, and no two FTC_OK results differ;
  - agreement, shrink and invalidation (conformance_ulfm.py): the
    properties of docs/ulfm.md across ranks, with SIGKILLs inside them.

No fault and no check depends on wall-clock time or on the machine's
speed. Ranks kill or stop themselves at an iteration ("before": as it
starts; "during": inside it, after a random delay), and faults from
outside are tied to progress: the victim prints a cue at a random
iteration g, ftcoll-run signals it on that cue, and the victim holds
before iteration h until the signal has landed (ftcoll-bench --cue,
--hold; ftcoll-run --kill R@R:TEXT), so the fault falls at a random point
of [g, h], inside the stream, on any machine. Which path reported a
failure is checked by making the other paths impossible (the core's
keepalive set to an hour), not by timing it; times are printed, never
asserted. The only clocks are hang guards (ftcoll-run --timeout, the
bench's FTCOLL_BENCH_OP_TIMEOUT), far above any healthy run.

Faults are drawn from a seeded generator (--seed, default 1).

The rank program (--bench) is ftcoll-bench, or any program that takes its
options (--coll, --algo, -f, --iters, --warmup, --sizes, --kill, --crash,
--stop, --die-after-exchange, --victims, --cue, --hold, --gate, --quiet)
and prints its JSON
lines (the butterfly's cases also read the summary's "allreduce" and
"op_msgs_sent"); a backend joins the suite with such a program
(tests/conformance/meson.build).

Prints one line per case and finally "N passed, M failed"; exit status 1
if any failed. --soak runs the long suite (1000 allreduces per job with
random kills, and --root-crash-runs jobs of the roots-crash stream)
instead of the default one.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from conformance_gossip import gossip_cases
from conformance_ulfm import ulfm_cases

LINE = re.compile(r"^\[(\d+)\] (\{.*\})\s*$")

# Per backend, the transports this suite runs on: the environment that
# selects each (what a user sets).
TRANSPORTS = {
    "zmq": {"tcp": {}},
    "ucx": {
        "tcp": {"UCX_TLS": "tcp"},
        # Shared memory reports a dead peer through UCX's keepalive only
        # with UCX_MM_ERROR_HANDLING; one interval of 100 ms (docs/ucx.md).
        # A receive FIFO of 1024 elements instead of 64, so that a rank
        # stopped for seconds still has room for its exclusion notice
        # (UCX's keepalive fills a stopped process's FIFO: docs/ucx.md);
        # set in the environment, so that the job and the stranger tool
        # agree on it (UCX takes its own FIFO size for its peers').
        "sm": {"UCX_TLS": "sm", "UCX_MM_ERROR_HANDLING": "y",
               "UCX_KEEPALIVE_INTERVAL": "100ms", "UCX_MM_FIFO_SIZE": "1024"},
        # The same, spelt as the POSIX shared-memory transport alone (UCX
        # picks sysv for "sm" here).
        "posix": {"UCX_TLS": "posix,cma,self", "UCX_MM_ERROR_HANDLING": "y",
                  "UCX_KEEPALIVE_INTERVAL": "100ms",
                  "UCX_MM_FIFO_SIZE": "1024"},
    },
    "libfabric": {
        "tcp": {"FI_PROVIDER": "tcp;ofi_rxm"},
        "shm": {"FI_PROVIDER": "shm"},
    },
}

# Shared-memory transports where a process killed in the middle of a send
# wedges the peer it was writing to, for good: libfabric's shm provider
# leaves a spinlock in the peer's region held (the peer spins in fi_inject
# forever), UCX's mm transports a half-written FIFO element that the peer
# waits on (it hears nobody any more, and the group excludes it). Found by
# this suite (docs/backends.md §7); on these, a fault from outside lands
# where the victim holds (not sending) instead of at a random point.
KILL_MID_SEND_WEDGES = {("ucx", "sm"), ("ucx", "posix"), ("libfabric", "shm")}

# The large-message case (large_messages) runs in the default suite, one
# collective of each size per job (a job of three of each took 8 to 60 s
# under stress-ng --cpu 2 at load 25 to 30 on this 2-vCPU host), and with
# 3 per size in the soak suite. A transport listed in LARGE_SOAK_ONLY
# would run it in the soak suite only; UCX shared memory was, until its
# waits stopped spinning behind full FIFOs (docs/running.md, "Large
# messages").
LARGE_ITERS = 1
LARGE_SOAK_ITERS = 3
LARGE_SOAK_ONLY = set()

# The core's keepalive when a case must show that something else (the
# backend, ZMTP heartbeats) found a failure: it never fires in a run.
NO_KEEPALIVE = {"FTCOLL_SUSPECT_MS": "3600000", "FTCOLL_PROBE_MS": "3600000"}

FAULT_EVENTS = ("kill", "crash", "stop")
LAUNCHER = re.compile(r"^ftcoll-run: (killed|stopped|resumed) rank (\d+) at",
                      re.M)
ENDED = re.compile(r"^ftcoll-run: rank (\d+) (was killed by SIG\w+|exited "
                   r"with status \d+)", re.M)
MISSED = re.compile(r"^ftcoll-run: (--\w+ \S+) did not happen.*$", re.M)


def cue_text(it):
    """What ftcoll-bench --cue R@it prints, for ftcoll-run to match."""
    return '"cue","iter":%d}' % it


class Job:
    """One ftcoll-run invocation and what came out of it."""

    def __init__(self, rc, out, err, elapsed):
        self.rc, self.out, self.err, self.elapsed = rc, out, err, elapsed
        self.summary = {}   # rank -> final JSON line
        self.events = {}    # rank -> [events: kill, crash, stop, cue, ...]
        self.other = []
        for line in out.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            try:
                d = json.loads(m.group(2))
            except ValueError:
                continue
            rank = int(m.group(1))
            if "event" in d:
                self.events.setdefault(rank, []).append(d)
            elif "completed" in d:
                self.summary[rank] = d
            else:
                self.other.append(d)
        # What ftcoll-run did and saw (stderr, its own lines).
        self.launcher = {"killed": set(), "stopped": set(), "resumed": set()}
        for what, r in LAUNCHER.findall(err):
            self.launcher[what].add(int(r))
        self.ended = {int(r): how for r, how in ENDED.findall(err)}
        self.missed = MISSED.findall(err)

    def fault(self, rank):
        """The rank's own kill, crash or stop event, or None."""
        for e in self.events.get(rank, []):
            if e["event"] in FAULT_EVENTS:
                return e
        return None

    def tail(self, k=None):
        # FTCOLL_CONFORMANCE_TAIL: more of a failed job's output, to debug.
        if k is None:
            k = int(os.environ.get("FTCOLL_CONFORMANCE_TAIL", 80))
        lines = (self.out + self.err).splitlines()
        return "\n".join("    | " + l[:220] for l in lines[-k:])


class Suite:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.transport_env = TRANSPORTS[args.backend][args.transport]
        self.passed = 0
        self.failed = 0
        self.notes = []
        self.info = ""

    # --- running ---------------------------------------------------------

    def run(self, n, bench_args, run_args=(), env=None, timeout=60,
            rendezvous=None, during=None, culprit=None):
        """culprit: (rank, [extra bench args]) to give one rank more
        options than the others (later options win): the program runs
        under sh -c, which checks FTCOLL_RANK."""
        # Faults timed by ftcoll-run count from when every rank is set
        # up: start-up takes longer on some backends than on others.
        cmd = [self.args.launcher, "-n", str(n), "--timeout", str(timeout),
               "--clock", "ready"]
        cmd += list(run_args)
        if rendezvous:
            cmd += ["--rendezvous", rendezvous]
        cmd += ["--"]
        if culprit is not None:
            r, extra = culprit
            cmd += ["sh", "-c", 'if [ "$FTCOLL_RANK" = %d ]; then exec "$0" '
                    '"$@" %s; fi; exec "$0" "$@"'
                    % (r, " ".join(str(a) for a in extra))]
        cmd += [self.args.bench] + [str(a) for a in bench_args]
        full_env = dict(os.environ)
        full_env.update(self.transport_env)
        full_env["FTCOLL_BACKEND"] = self.args.backend
        full_env.setdefault("FTCOLL_BENCH_OP_TIMEOUT", "20")
        # The core's keepalive, for the cases that do not test it: the
        # library's defaults, whose probes back off (100 ms, then a probe
        # waited for 200 ms doubling to 1600 ms: 3.1 s of silence), so a
        # live rank descheduled for seconds on two shared vCPUs is not
        # excluded; a fixed 300 + 600 ms was not enough under load
        # (docs/decisions.md, "Failure detection"). The keepalive cases
        # set their own, shorter values.
        full_env.setdefault("FTCOLL_SUSPECT_MS", "100")
        full_env.setdefault("FTCOLL_PROBE_MS", "200")
        full_env.update(env or {})
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=full_env)
        helper = None
        if during is not None:
            helper = threading.Thread(target=during, args=(p,))
            helper.start()
        try:
            out, err = p.communicate(timeout=timeout + 15)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            err += "\nconformance: ftcoll-run itself did not end\n"
        if helper is not None:
            helper.join()
        return Job(p.returncode, out, err, time.monotonic() - t0)

    def case(self, name, fn):
        if self.args.filter and not re.search(self.args.filter, name):
            return
        t0 = time.monotonic()
        self.info = ""
        try:
            problems, job = fn()
        except Exception as e:  # a bug here must not hide the others
            problems, job = ["driver error: %r" % (e,)], None
        dt = time.monotonic() - t0
        info = "  (%s)" % self.info if self.info else ""
        if problems:
            self.failed += 1
            print("FAIL %-58s %6.2f s%s" % (name, dt, info))
            for p in problems[:8]:
                print("    - " + p)
            if job is not None:
                print(job.tail())
        else:
            self.passed += 1
            print("ok   %-58s %6.2f s%s" % (name, dt, info))
        sys.stdout.flush()

    # --- faults from outside, tied to progress ------------------------------

    def outside(self, v, iters, sig="kill", window=None):
        """ftcoll-run kills (or stops) rank v at a random point of its
        stream: v prints a cue as it starts a random iteration g,
        ftcoll-run signals it on that cue, and v holds before iteration h
        until the signal has landed. Wherever the signal finds v, it is in
        [g, h], and the others are still running: on any machine.
        On the transports of KILL_MID_SEND_WEDGES the cue is the hold
        itself (g = h): the signal finds v waiting, not sending.
        Returns (bench args, ftcoll-run args, g, h)."""
        if window is None:
            window = max(2, iters // 4)
        g = self.rng.randint(1, max(1, iters // 2))
        h = min(g + window, iters - 1)
        bench = ["--hold", "%d@%d" % (v, h)]
        if (self.args.backend, self.args.transport) in KILL_MID_SEND_WEDGES:
            g = h
            cue = '"hold","iter":%d}' % h
        else:
            bench += ["--cue", "%d@%d" % (v, g)]
            cue = cue_text(g)
        run = ["--" + sig, "%d@%d:%s" % (v, v, cue)]
        return bench, run, g, h

    # --- checking --------------------------------------------------------

    def check(self, job, n, coll, kills=(), stops=(), expect_rc=0, ops=None,
              all_ok=False, agree=True, stop_learns=True, launcher=True):
        """The common checks of a job, and that its faults landed.

        kills: ranks that must have died of SIGKILL (by their own hand or
        ftcoll-run's); stops: ranks that must have been stopped (and, with
        stop_learns, have learnt, once resumed, that they were excluded);
        all_ok: every survivor delivered every operation with FTC_OK;
        launcher: the job ran under ftcoll-run (not mpirun), which says
        how each rank ended."""
        problems = []
        victims = set(kills) | set(stops)
        if job.rc != expect_rc:
            problems.append("ftcoll-run exit status %s, expected %s"
                            % (job.rc, expect_rc))
        survivors = [r for r in range(n) if r not in victims]
        for r in survivors:
            s = job.summary.get(r)
            if s is None:
                problems.append("rank %d (no victim) printed no result" % r)
                continue
            if s["wrong"]:
                problems.append("rank %d: %d wrong results" % (r, s["wrong"]))
            if s["excluded"]:
                problems.append("rank %d was excluded (false suspicion)" % r)
            if ops is not None and s["completed"] != ops:
                problems.append("rank %d completed %d of %d operations"
                                % (r, s["completed"], ops))
            if all_ok and (s["ok"] != s["completed"] or s["errors"]):
                problems.append("rank %d: %d of %d operations FTC_OK, %d "
                                "errors" % (r, s["ok"], s["completed"],
                                            s["errors"]))
            extra = set(s["failed"]) - victims
            if extra:
                problems.append("rank %d declared %s failed: no victims"
                                % (r, sorted(extra)))
        problems += self.landed(job, survivors, kills, stops, stop_learns,
                                launcher)
        for r in victims:
            s = job.summary.get(r)
            if s is not None and s["late_ok"]:
                self.notes.append("rank %d, once resumed, delivered FTC_OK "
                                  "%d time(s) for an operation that had "
                                  "excluded it (core issue)"
                                  % (r, s["late_ok"]))
        if agree and coll == "allreduce":
            digests = {job.summary[r]["digest"] for r in survivors
                       if r in job.summary}
            if len(digests) > 1:
                problems.append("allreduce survivors disagree: %d different "
                                "digests" % len(digests))
        return problems

    def ran_variant(self, job, survivors, variant):
        """Every survivor's summary names the corrected allreduce's
        variant that ran (its "allreduce": --allreduce, auto resolved), so
        a case for one variant cannot pass on another's run."""
        problems = []
        for r in survivors:
            s = job.summary.get(r)
            if s is not None and s.get("allreduce") != variant:
                problems.append("rank %d ran the allreduce %s, not %s"
                                % (r, s.get("allreduce", "(not said)"),
                                   variant))
        return problems

    def auto_ran(self, job, n, ops):
        """The corrected allreduce's auto ran what it picks for n over
        this transport (docs/corrected.md §5.7): the exchange up to
        n = 8, or up to n = 3 where every message crosses a kernel socket
        (ZeroMQ, UCX with UCX_TLS=tcp, libfabric's tcp provider: the
        backends' cost_hints), each rank sending exactly n - 1 messages
        an operation (its input to every other: the summary's
        "op_msgs_sent", exact for the exchange); the butterfly from there
        to n = 16 (exact counts too: butterfly_sent); reduce + bcast
        above (its count is the sends before each delivery, no exact
        figure: the name only)."""
        costly = self.args.transport == "tcp"
        if n > 16:
            return self.ran_variant(job, range(n), "reduce_bcast")
        if n > (3 if costly else 8):
            return self.ran_variant(job, range(n), "butterfly") \
                + self.butterfly_sent(job, n, ops)
        problems = self.ran_variant(job, range(n), "exchange")
        for r in range(n):
            s = job.summary.get(r)
            if s is not None and s.get("op_msgs_sent") != (n - 1) * ops:
                problems.append("rank %d sent %s messages in %d operations,"
                                " the exchange's %d each (%d)"
                                % (r, s.get("op_msgs_sent"), ops, n - 1,
                                   (n - 1) * ops))
        return problems

    def butterfly_sent(self, job, n, ops):
        """Fault-free, every rank sent exactly the butterfly's messages
        (docs/corrected.md §5.6) in each of its ops operations, counted
        by the operations themselves (the summary's "op_msgs_sent": no
        probes, no control messages): with P = 2^floor(log2 n) and
        e = n - P, an extra (odd rank below 2e) sends its input to its
        twin, 1; a twin (even rank below 2e) log2 P partials and the
        value back, log2 P + 1; every other rank log2 P partials. (Their
        sum is the checkers' P log2 P + 2e.) Reduce + bcast, the
        exchange, or a round past 0 sends other counts."""
        p = 1
        while p * 2 <= n:
            p *= 2
        e, steps = n - p, p.bit_length() - 1
        problems = []
        for r in range(n):
            s = job.summary.get(r)
            if s is None:
                continue
            if r < 2 * e:
                per_op = 1 if r % 2 else steps + 1
            else:
                per_op = steps
            sent = s.get("op_msgs_sent")
            if sent != per_op * ops:
                problems.append("rank %d sent %s messages in %d operations,"
                                " the butterfly's %d each (%d)"
                                % (r, sent, ops, per_op, per_op * ops))
        return problems

    def landed(self, job, survivors, kills, stops, stop_learns, launcher):
        """Did every planned fault really happen?"""
        problems = []
        for v in kills:
            ev = job.fault(v)
            if (ev is None or ev["event"] == "stop") \
                    and v not in job.launcher["killed"]:
                problems.append("rank %d: no kill happened (no kill event, "
                                "ftcoll-run did not kill it)" % v)
            how = job.ended.get(v, "no word of its end")
            if launcher and how != "was killed by SIGKILL":
                problems.append("rank %d did not die of SIGKILL: ftcoll-run "
                                "says %s" % (v, how))
            if v in job.summary:
                problems.append("rank %d lived on to print a summary" % v)
        for v in stops:
            ev = job.fault(v)
            if (ev is None or ev["event"] != "stop") \
                    and v not in job.launcher["stopped"]:
                problems.append("rank %d: no stop happened (no stop event, "
                                "ftcoll-run did not stop it)" % v)
            s = job.summary.get(v)
            # Excluded when its last operation was over (all its data had
            # been sent before), it learns at finalize: an event then.
            late = any(e["event"] == "excluded"
                       for e in job.events.get(v, []))
            if stop_learns and (s is None or not (s["excluded"] or late)):
                problems.append("rank %d, stopped then resumed, did not "
                                "learn that it was excluded" % v)
        for v in sorted(set(kills) | set(stops)):
            unaware = [r for r in survivors if r in job.summary
                       and v not in job.summary[r]["failed"]]
            if unaware:
                problems.append("rank(s) %s do not name rank %d failed"
                                % (",".join(map(str, unaware)), v))
        for m in job.missed:
            problems.append("ftcoll-run: %s did not happen" % m)
        return problems

    def kill_to_delivery(self, job, v):
        """ms from v's own fault event to the survivors' delivery of that
        iteration (min-max), for the record: printed, never asserted."""
        ev = job.fault(v)
        if ev is None:
            return ""
        ms = [(t - ev["t_ns"]) / 1e6 for r, s in job.summary.items()
              if r != v for it, t in s["marks"] if it == ev["iter"]]
        if not ms:
            return ""
        return "%s to delivery %.1f-%.1f ms" % (ev["event"], min(ms), max(ms))

    # --- the cases -------------------------------------------------------

    def fault_free(self):
        for coll in ("allreduce", "reduce", "bcast"):
            for algo in ("corrected", "tree"):
                for n in (2, 3, 5, 8, 16):
                    if n == 16 and coll != "allreduce":
                        continue
                    f = 0 if algo == "tree" else min(2, n - 1)
                    iters = 20 if n >= 16 else 40
                    name = "fault-free %s %s n=%d f=%d" % (coll, algo, n, f)

                    def fn(coll=coll, algo=algo, n=n, f=f, iters=iters):
                        args = ["--coll", coll, "--algo", algo, "-f", f,
                                "--iters", iters, "--warmup", 2, "--quiet",
                                "--sizes", "8,4096"]
                        job = self.run(n, args)
                        ops = 2 * (iters + 2)
                        problems = self.check(job, n, coll, ops=ops,
                                              all_ok=True)
                        if coll == "allreduce" and algo == "corrected":
                            problems += self.auto_ran(job, n, ops)
                        return problems, job
                    self.case(name, fn)

        # Messages of 32 KiB: past every backend's eager or inject limit
        # (UCX's rendezvous protocol, libfabric's larger sends).
        def large(n=4, iters=20):
            args = ["--coll", "allreduce", "-f", 1, "--iters", iters,
                    "--warmup", 2, "--quiet", "--sizes", "32768"]
            job = self.run(n, args)
            return self.check(job, n, "allreduce", ops=iters + 2,
                              all_ok=True), job
        self.case("fault-free allreduce corrected n=4 f=1 32 KiB", large)

    def startup_deaths(self):
        """A rank dies right after the address exchange, before anybody
        connected to it (ftcoll-bench --die-after-exchange: the others
        connect once ftcoll-run has reaped it). Its address is published
        and dead: over tcp a refused connect, over shared memory a region
        nobody serves. That is a failure like any other, not a set-up
        error: the survivors run every operation without it and agree.
        Eager endpoints (UCX, libfabric) find it at set-up: every
        survivor's backend must report it. (Found libfabric's shm backend
        refusing its set-up when the dead rank was not the last: the
        provider gave the next rank the dead one's fi_addr;
        docs/libfabric.md, "A peer gone at set-up".)"""
        for n, v in ((4, self.rng.randint(1, 3)), (5, 0)):
            name = "death right after the address exchange allreduce n=%d " \
                   "victim=%d" % (n, v)

            def fn(n=n, v=v, iters=20):
                args = ["-f", 1, "--iters", iters, "--warmup", 0, "--quiet",
                        "--die-after-exchange", v]
                job = self.run(n, args, ["--may-fail", str(v)])
                problems = self.check(job, n, "allreduce", kills=[v],
                                      ops=iters)
                if self.args.backend in ("ucx", "libfabric"):
                    quiet = [r for r, s in sorted(job.summary.items())
                             if r != v and not any(
                                 rep[0] == v
                                 for rep in s["transport"]["reports"])]
                    if quiet:
                        problems.append("the backend of rank(s) %s did not "
                                        "report rank %d" % (quiet, v))
                return problems, job
            self.case(name, fn)

    def large_messages(self):
        """Fault-free collectives of 16 and 32 MiB at n = 4: every rank
        FTC_OK, nobody excluded or named failed, every result checked.
        A whole value used to sit in front of keepalive answers and count
        as nothing heard until its last byte: healthy ranks were excluded
        (UCX sm, ZeroMQ), and libfabric refused anything over its 64 KiB
        messages (FTC_EOVERFLOW). Payloads now travel as segments under a
        credit window (lib/core/segment.h). Run with the suite's keepalive,
        the library's own, whose probes back off (docs/decisions.md,
        "Failure detection")."""
        if ((self.args.backend, self.args.transport) in LARGE_SOAK_ONLY
                and not self.args.soak):
            self.notes.append("large messages: soak suite only on %s %s "
                              "(LARGE_SOAK_ONLY)"
                              % (self.args.backend, self.args.transport))
            return
        sizes = [16 << 20, 32 << 20]
        iters = LARGE_SOAK_ITERS if self.args.soak else LARGE_ITERS
        env = {}
        for coll in ("allreduce", "bcast", "reduce"):
            name = "large messages %s n=4 %s MiB" % (
                coll, ",".join(str(x >> 20) for x in sizes))

            def fn(coll=coll):
                args = ["--coll", coll, "-f", 1, "--iters", iters,
                        "--warmup", 0, "--quiet",
                        "--sizes", ",".join(map(str, sizes))]
                job = self.run(4, args, env=env, timeout=240)
                return self.check(job, 4, coll, ops=len(sizes) * iters,
                                  all_ok=True), job
            self.case(name, fn)

    def fault_plan(self, victims, iters, mode):
        """ftcoll-bench arguments that kill each victim at a random
        iteration of iters: 'before' (a self-SIGKILL as the iteration
        starts) or 'during' (a crash inside it after a random delay)."""
        plan = []
        for v in victims:
            it = self.rng.randint(1, iters - 2)
            if mode == "before":
                plan += ["--kill", "%d@%d" % (v, it)]
            else:
                plan += ["--crash", "%d@%d:%d"
                         % (v, it, self.rng.randint(0, 300))]
        return plan

    def kills(self, mode):
        """mode: 'before' (self-kill as an iteration starts) or 'during'
        (self-kill inside an iteration after a random delay)."""
        shapes = [(4, 1), (5, 2), (8, 1), (8, 2), (16, 3)]
        for coll in ("allreduce", "reduce", "bcast"):
            for n, f in shapes:
                if n == 16 and coll != "allreduce":
                    continue
                k = self.rng.randint(1, f)
                victims = self.rng.sample(range(n), k)
                # Root candidates are the interesting victims: make sure
                # some cases kill rank 0 (the first root).
                if mode == "before" and (n, f) == (8, 2) and 0 not in victims:
                    victims[0] = 0
                iters = 30
                plan = self.fault_plan(victims, iters, mode)
                name = "kill-%s %s corrected n=%d f=%d victims=%s" % (
                    mode, coll, n, f, ",".join(map(str, sorted(victims))))

                def fn(coll=coll, n=n, f=f, plan=plan, victims=victims,
                       iters=iters):
                    args = ["--coll", coll, "-f", f, "--iters", iters,
                            "--warmup", 0, "--quiet"] + plan
                    run_args = ["--may-fail", ",".join(map(str, victims))]
                    job = self.run(n, args, run_args)
                    return self.check(job, n, coll, kills=victims,
                                      ops=iters), job
                self.case(name, fn)

    def launcher_kills(self):
        """ftcoll-run kills ranks at random points of the stream, from
        outside (the signal finds the victim wherever it is: inside an
        operation, between two, in a send)."""
        for n, f in ((4, 1), (8, 2), (16, 2)):
            k = self.rng.randint(1, f)
            victims = self.rng.sample(range(n), k)
            iters = {4: 120, 8: 80, 16: 40}[n]
            bench, run_args, where = [], [], []
            for v in victims:
                b, r, g, h = self.outside(v, iters)
                bench += b
                run_args += r
                where.append("%d@%d..%d" % (v, g, h))
            name = "kill-from-outside allreduce n=%d f=%d %s" % (
                n, f, " ".join(where))

            def fn(n=n, f=f, victims=victims, run_args=run_args,
                   bench=bench, iters=iters):
                args = ["-f", f, "--iters", iters, "--warmup", 0,
                        "--quiet"] + bench
                job = self.run(n, args, run_args)
                self.info = ", ".join(
                    "%d %s" % (v, "held" if any(
                        e["event"] == "hold" for e in job.events.get(v, []))
                        else "before its hold") for v in victims)
                return self.check(job, n, "allreduce", kills=victims,
                                  ops=iters), job
            self.case(name, fn)

        def shm_leftovers():
            # A rank killed mid-run leaves its libfabric shm region
            # (/dev/shm/<pid>:<n>:<m>) behind; ftcoll-run removes it when
            # it reaps the rank. Every rank makes one, rank 1 is killed.
            script = ('echo "pid=$$"; : > "/dev/shm/$$:0:0"; '
                      'if [ "$FTCOLL_RANK" = 1 ]; then kill -9 $$; fi; '
                      'rm -f "/dev/shm/$$:0:0"')
            p = subprocess.run([self.args.launcher, "-n", "3", "--may-fail",
                                "1", "--", "sh", "-c", script],
                               capture_output=True, text=True, timeout=30)
            job = Job(p.returncode, p.stdout, p.stderr, 0)
            problems = []
            pids = re.findall(r"^\[(\d+)\] pid=(\d+)$", p.stdout, re.M)
            if len(pids) != 3:
                problems.append("%d ranks said their pid, expected 3"
                                % len(pids))
            for r, pid in pids:
                if os.path.exists("/dev/shm/%s:0:0" % pid):
                    problems.append("rank %s left /dev/shm/%s:0:0"
                                    % (r, pid))
            if job.ended.get(1) != "was killed by SIGKILL":
                problems.append("rank 1 was not killed: %s"
                                % job.ended.get(1, "no word of its end"))
            if p.returncode != 0:
                problems.append("exit status %d" % p.returncode)
            return problems, job

        self.case("launcher: a killed rank's /dev/shm region is removed",
                  shm_leftovers)

    def tree_with_kill(self):
        for coll in ("allreduce", "reduce", "bcast"):
            n = 6
            v = self.rng.randint(0, n - 1)
            name = "kill-before %s tree n=%d victim=%d (no hang)" % (coll, n, v)

            def fn(coll=coll, n=n, v=v):
                args = ["--coll", coll, "--algo", "tree", "-f", 0,
                        "--iters", 20, "--warmup", 0, "--quiet",
                        "--kill", "%d@5" % v]
                job = self.run(n, args, ["--may-fail", str(v)])
                # Tree operations report FTC_EPEER_FAILED instead of a
                # result once a member failed; they must not hang, and
                # what they do deliver must be right.
                return self.check(job, n, coll, kills=[v], ops=20,
                                  agree=False), job
            self.case(name, fn)

    def butterfly(self):
        """The corrected allreduce with the butterfly as round 0
        (docs/corrected.md §5.6), which `auto` does not pick: fault-free,
        then SIGKILLs tied to progress as in kills(), at n = 5 (extras
        that fold into a twin), 8 and 16. A death during round 0 sends
        the ones waiting on it to the reduce + bcast rounds; every
        survivor must deliver, agree and be exact about whose input is
        missing, as for any corrected allreduce. That the butterfly is
        what ran: every summary names it, and without faults every rank
        sent exactly its messages (butterfly_sent), which no fallback to
        reduce + bcast and no other variant sends."""
        for n in (5, 8):
            name = "fault-free allreduce butterfly n=%d" % n

            def fn(n=n, iters=30):
                args = ["--coll", "allreduce", "--allreduce", "butterfly",
                        "-f", 1, "--iters", iters, "--warmup", 2, "--quiet",
                        "--sizes", "8,4096"]
                job = self.run(n, args)
                ops = 2 * (iters + 2)  # two sizes, warm-up included
                problems = self.check(job, n, "allreduce", ops=ops,
                                      all_ok=True)
                problems += self.ran_variant(job, range(n), "butterfly")
                problems += self.butterfly_sent(job, n, ops)
                return problems, job
            self.case(name, fn)
        for mode in ("before", "during"):
            for n, f in ((5, 1), (8, 2), (16, 2)):
                victims = self.rng.sample(range(n), self.rng.randint(1, f))
                iters = 30
                plan = self.fault_plan(victims, iters, mode)
                name = "kill-%s allreduce butterfly n=%d f=%d victims=%s" % (
                    mode, n, f, ",".join(map(str, sorted(victims))))

                def fn(n=n, f=f, plan=plan, victims=victims, iters=iters):
                    args = ["--coll", "allreduce", "--allreduce", "butterfly",
                            "-f", f, "--iters", iters, "--warmup", 0,
                            "--quiet"] + plan
                    run_args = ["--may-fail", ",".join(map(str, victims))]
                    job = self.run(n, args, run_args)
                    survivors = [r for r in range(n) if r not in victims]
                    return (self.check(job, n, "allreduce", kills=victims,
                                       ops=iters)
                            + self.ran_variant(job, survivors, "butterfly"),
                            job)
                self.case(name, fn)

    def ftco(self):
        """The ftco family (docs/ftco.md): fault-free, then SIGKILLs tied
        to progress (a rank kills itself as iteration K starts, or inside
        it after a random delay), the first root among the victims in some
        cases. It takes no f: every live rank must deliver FTC_OK (or, for
        a bcast whose root died, FTC_EROOT_FAILED), agree, and its result
        must be exactly the inputs its failed list does not name."""
        for coll in ("allreduce", "reduce", "bcast"):
            for n in (3, 8):
                name = "fault-free %s ftco n=%d" % (coll, n)

                def fn(coll=coll, n=n, iters=30):
                    args = ["--coll", coll, "--algo", "ftco", "--iters",
                            iters, "--warmup", 2, "--quiet", "--sizes",
                            "8,4096"]
                    job = self.run(n, args)
                    return self.check(job, n, coll, ops=2 * (iters + 2),
                                      all_ok=True), job
                self.case(name, fn)
        for mode in ("before", "during"):
            for coll in ("allreduce", "reduce", "bcast"):
                n, iters = 8, 30
                victims = self.rng.sample(range(n), self.rng.randint(1, 3))
                if mode == "before" and coll == "allreduce" \
                        and 0 not in victims:
                    victims[0] = 0
                plan = self.fault_plan(victims, iters, mode)
                name = "kill-%s %s ftco n=%d victims=%s" % (
                    mode, coll, n, ",".join(map(str, sorted(victims))))

                def fn(coll=coll, n=n, plan=plan, victims=victims,
                       iters=iters):
                    args = ["--coll", coll, "--algo", "ftco", "-f", 0,
                            "--iters", iters, "--warmup", 0,
                            "--quiet"] + plan
                    run_args = ["--may-fail", ",".join(map(str, victims))]
                    job = self.run(n, args, run_args)
                    return self.check(job, n, coll, kills=victims,
                                      ops=iters), job
                self.case(name, fn)

        # The per-message timeouts of Appendix A on real processes, the
        # core's keepalive slowed to 5 s and ZeroMQ's heartbeats off, so
        # that nothing but ftco's own timeouts can find a stopped process
        # in time (kills: the transports' reports too); the sends they time complete
        # asynchronously on ucx and libfabric (on_sent). The base, 250 ms
        # (f_timeout up to 3 x that here), stays well above what a
        # process of this loaded 2-core machine may be descheduled for:
        # at 20 ms live processes were excluded (exclusion is final).
        # (No back-off: the keepalive's 5 + 5 s must stay under the
        # bench's 20 s hang watchdog for the statistics allreduce that
        # follows the stream, which the keepalive alone may have to end.)
        slow = {"FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000",
                "FTCOLL_PROBE_BACKOFF": "0", "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}
        n = 8
        kv = self.rng.sample(range(n), 2)
        sv = self.rng.randint(1, n - 1)
        name = "kill allreduce ftco per-message timeouts n=%d victims=%s" % (
            n, ",".join(map(str, sorted(kv))))

        def timed_kill(n=n, kv=kv):
            args = ["--algo", "ftco", "--ack-timeout-us", 250000, "--iters",
                    60, "--warmup", 0, "--quiet", "--kill", "%d@10" % kv[0],
                    "--crash", "%d@30:50" % kv[1]]
            job = self.run(n, args, ["--may-fail", "%d,%d" % tuple(kv)],
                           env=slow)
            return self.check(job, n, "allreduce", kills=kv, ops=60), job
        self.case(name, timed_kill)
        name = "stop allreduce ftco per-message timeouts n=%d victim=%d" % (
            n, sv)

        def timed_stop(n=n, sv=sv):
            args = ["--algo", "ftco", "--ack-timeout-us", 250000, "--iters",
                    40, "--warmup", 0, "--quiet", "--stop", "%d@10" % sv]
            job = self.run(n, args, ["--may-fail", str(sv)], env=slow)
            return self.check(job, n, "allreduce", stops=[sv], ops=40), job
        self.case(name, timed_stop)

        # A stopped process is alive: no backend reports it. The others
        # finish by the core's keepalive (probes, then exclusion), with
        # one doubling of the probe's wait as in stops() below. The
        # stopped rank, resumed once its peers exited, must have learnt
        # that it was excluded, on every backend (over UCX shared memory
        # only with a larger FIFO, UCX_MM_FIFO_SIZE above: docs/ucx.md).
        # Over ZeroMQ the connections are made on demand (the default):
        # the notice of a peer that excludes the stopped process, having
        # never talked to it, waits behind a handshake the stopped process
        # cannot answer and is lost when that peer exits; the peers that
        # talked to it tell it too, also those that learnt its failure
        # from another member (lib/core/notice.c).
        quick = {"FTCOLL_SUSPECT_MS": "50", "FTCOLL_PROBE_MS": "100",
                 "FTCOLL_PROBE_BACKOFF": "1", "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}
        # A bcast's stopped process is excluded by its parent, and its
        # notice comes from a peer that has exited by the time it resumes
        # (the ZeroMQ backend reads a lost peer's last messages before it
        # reports the loss: backends/zmq/inbound.c), often after all its
        # operations' data (it learns at finalize: landed() above).
        # A bcast's root (rank 0) is the exception to lazy connections:
        # it needs nobody to run its first ten operations, so it may stop
        # before its I/O thread has made a connection either way (its
        # DATA never left, nobody sent to it); then only a connection to
        # it made before the first operation carries a notice (lazily,
        # about 4 in 10 root stops failed, with or without
        # lib/core/notice.c: docs/ftco.md).
        for coll in ("allreduce", "bcast"):
            n, v = 6, self.rng.randint(0, 5)
            name = "stop %s ftco n=%d victim=%d (keepalive 50+100 ms)" % (
                coll, n, v)
            env = dict(quick)
            if coll == "bcast" and v == 0:
                env["FTCOLL_ZMQ_CONNECT"] = "eager"

            def fn(coll=coll, n=n, v=v, env=env):
                args = ["--coll", coll, "--algo", "ftco", "-f", 0,
                        "--iters", 40, "--warmup", 0, "--quiet",
                        "--stop", "%d@10" % v]
                job = self.run(n, args, ["--may-fail", str(v)], env=env)
                problems = self.check(job, n, coll, stops=[v], ops=40)
                if not any(s["counters"]["probes_sent"]
                           for r, s in job.summary.items() if r != v):
                    problems.append("no survivor sent a probe")
                self.info = self.kill_to_delivery(job, v)
                return problems, job
            self.case(name, fn)

    def stops(self):
        # One doubling of the probe's wait (50 + 100 + 200 ms). A process
        # stopped until its peers exited must learn, once resumed, that
        # it was excluded: over UCX it once did not (tcp: its answers to
        # the late probes failed before the notices were read; shared
        # memory: UCX's keepalive filled its FIFO and the notices were
        # cancelled in the senders at exit: docs/ucx.md).
        # Over ZeroMQ the connections are made on demand (the default):
        # the notice of a peer that excludes the stopped process, having
        # never talked to it, waits behind a handshake the stopped process
        # cannot answer and is lost when that peer exits; the peers that
        # talked to it tell it too, also those that learnt its failure
        # from another member (lib/core/notice.c).
        quick = {"FTCOLL_SUSPECT_MS": "50", "FTCOLL_PROBE_MS": "100",
                 "FTCOLL_PROBE_BACKOFF": "1", "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}

        def by_keepalive():
            # A stopped process is alive: no backend reports it (ZMTP
            # heartbeats are off). The survivors can only finish by the
            # core's keepalive: probes sent, and the victim excluded.
            n, v = 6, self.rng.randint(1, 5)
            args = ["-f", 1, "--iters", 40, "--warmup", 0, "--quiet",
                    "--stop", "%d@10" % v]
            job = self.run(n, args, ["--may-fail", str(v)], env=quick)
            problems = self.check(job, n, "allreduce", stops=[v], ops=40)
            for r, s in job.summary.items():
                if r != v and any(rep[0] == v
                                  for rep in s["transport"]["reports"]):
                    problems.append("rank %d: its backend reported the "
                                    "stopped rank %d" % (r, v))
            if not any(s["counters"]["probes_sent"]
                       for r, s in job.summary.items() if r != v):
                problems.append("no survivor sent a probe")
            self.info = self.kill_to_delivery(job, v)
            return problems, job

        def root_by_keepalive():
            # The same with the first root stopped: the allreduce must move
            # on to the next root candidate once the keepalive excluded it.
            n, v = 4, 0
            args = ["-f", 1, "--iters", 40, "--warmup", 0, "--quiet",
                    "--stop", "%d@10" % v]
            job = self.run(n, args, ["--may-fail", str(v)], env=quick)
            problems = self.check(job, n, "allreduce", stops=[v], ops=40)
            if not any(s["counters"]["probes_sent"]
                       for r, s in job.summary.items() if r != v):
                problems.append("no survivor sent a probe")
            self.info = self.kill_to_delivery(job, v)
            return problems, job

        def by_heartbeat():
            # ZMTP heartbeats (100/300 ms) find a hung peer; the core's
            # keepalive is off, so finishing proves they did.
            n, v = 5, self.rng.randint(0, 4)
            env = dict(NO_KEEPALIVE, FTCOLL_ZMQ_HEARTBEAT_MS="100",
                       FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS="300")
            args = ["-f", 1, "--iters", 40, "--warmup", 0, "--quiet",
                    "--stop", "%d@10" % v]
            job = self.run(n, args, ["--may-fail", str(v)], env=env)
            # Dropped by the transport, the stopped rank is never told it
            # was excluded: it finds the others gone once resumed.
            problems = self.check(job, n, "allreduce", stops=[v], ops=40,
                                  stop_learns=False)
            if not any(rep[0] == v for r, s in job.summary.items() if r != v
                       for rep in s["transport"]["reports"]):
                problems.append("no survivor's backend reported rank %d"
                                % v)
            self.info = self.kill_to_delivery(job, v)
            return problems, job

        def resumed():
            # Stopped from outside at a random point, excluded by the
            # keepalive, and resumed once a survivor is well past that
            # (its cue): it must learn that it was excluded, and leave.
            n, v = 5, self.rng.randint(1, 4)
            iters = 80
            bench, run_args, g, h = self.outside(v, iters, sig="stop",
                                                 window=10)
            s = 0 if v != 0 else 1
            k = h + 20
            bench += ["--cue", "%d@%d" % (s, k)]
            run_args += ["--cont", "%d@%d:%s" % (v, s, cue_text(k))]
            args = ["-f", 1, "--iters", iters, "--warmup", 0,
                    "--quiet"] + bench
            job = self.run(n, args, run_args, env=quick)
            problems = self.check(job, n, "allreduce", stops=[v], ops=iters)
            if v not in job.launcher["resumed"]:
                problems.append("rank %d was not resumed" % v)
            return problems, job

        self.case("stop found by the core's keepalive (50+100 ms) "
                  "allreduce n=6", by_keepalive)
        self.case("stop of the first root found by the core's keepalive "
                  "allreduce n=4", root_by_keepalive)
        # Only ZeroMQ has heartbeats that find a hung peer; UCX and
        # libfabric never report one (transport-facts.md): the core's
        # keepalive above is their only way.
        if self.args.backend == "zmq":
            self.case("stop found by heartbeats (100/300 ms) allreduce n=5",
                      by_heartbeat)
        self.case("stop from outside, resume: excluded, ends allreduce n=5",
                  resumed)

    def backend_reports(self):
        """A SIGKILL while the core's keepalive is off: the survivors can
        only go on if a backend reports the death by itself. Every
        survivor must deliver every operation, and some survivor's backend
        must name the victim among the peers it reported."""
        slow = dict(NO_KEEPALIVE, FTCOLL_ZMQ_HEARTBEAT_MS="0")
        for n, v in ((5, self.rng.randint(1, 4)), (4, 0)):
            name = "kill found by the backend (no keepalive) n=%d victim=%d" \
                % (n, v)

            def fn(n=n, v=v):
                args = ["-f", 1, "--iters", 40, "--warmup", 0, "--quiet",
                        "--kill", "%d@10" % v]
                job = self.run(n, args, ["--may-fail", str(v)], env=slow)
                problems = self.check(job, n, "allreduce", kills=[v], ops=40,
                                      all_ok=True)
                if not any(rep[0] == v for r, s in job.summary.items()
                           if r != v for rep in s["transport"]["reports"]):
                    problems.append("no survivor's backend reported rank %d"
                                    % v)
                problems += self.exit_watched(job, v)
                self.info = self.kill_to_delivery(job, v)
                return problems, job
            self.case(name, fn)

    def exit_watched(self, job, v):
        """Over UCX shared memory every survivor runs on the victim's
        host, and its backend watches the victim's process (docs/ucx.md,
        "Exit watch"): each must report the kill as an exit, not wait
        for UCX's keepalive ("Connection reset by remote peer" after up
        to UCX_KEEPALIVE_INTERVAL). Over tcp UCX's connection reset and
        the exit race; either is right."""
        if self.args.backend != "ucx" or self.args.transport == "tcp":
            return []
        late = [r for r, s in sorted(job.summary.items())
                if r != v and not any(rep[0] == v and "exited" in rep[1]
                                      for rep in s["transport"]["reports"])]
        if late:
            return ["rank(s) %s: rank %d's exit not reported by the exit "
                    "watch" % (late, v)]
        return []

    def strangers(self):
        if not self.args.foreign:
            return

        def fn():
            n, iters, gate = 4, 300, 200
            d = tempfile.mkdtemp(prefix="ftcoll-conf-")
            go = os.path.join(d, "strangers-done")
            result = {}

            def attack(job_proc):
                # Wait for the job's addresses, then send it garbage. The
                # ranks wait before iteration 200 until it is sent (the
                # gate file), so that it lands while they still run. No
                # deadline: the job cannot finish before the gate opens, so
                # the wait ends when the addresses are there, or when the
                # job died before publishing them (then the case fails on
                # the job's own report, and on the missing attack).
                try:
                    while not all(os.path.exists(os.path.join(d, "ag0.%d" % r))
                                  for r in range(n)):
                        if job_proc.poll() is not None:
                            result["rc"] = None
                            return
                        time.sleep(0.01)
                    p = subprocess.run([self.args.foreign, d, str(n)],
                                       capture_output=True, text=True,
                                       env=dict(os.environ,
                                                **self.transport_env))
                    result["rc"], result["out"] = p.returncode, p.stdout
                finally:
                    open(go, "w").close()

            try:
                # 4 KiB operations: ZeroMQ refuses frames larger than the
                # job's largest message, and the flood's are 1 KiB.
                args = ["-f", 1, "--iters", iters, "--warmup", 0, "--quiet",
                        "--sizes", 4096, "--gate", "%d:%s" % (gate, go)]
                job = self.run(n, args, rendezvous=d, during=attack)
            finally:
                shutil.rmtree(d, ignore_errors=True)
            problems = self.check(job, n, "allreduce", ops=iters)
            if result.get("rc") != 0:
                problems.append("ftcoll-foreign failed: %r" % result)
            sent = {}
            try:
                sent = json.loads(result["out"].strip().splitlines()[-1])
            except (KeyError, ValueError, IndexError):
                problems.append("ftcoll-foreign said nothing of what it sent")
            forged = sent.get("per_rank", {}).get("forged", 0)
            if not forged:
                problems.append("the stranger forged no message")
            gated = [r for r in range(n) if any(
                e["event"] == "gate" for e in job.events.get(r, []))]
            if len(gated) != n:
                problems.append("only ranks %s reached the gate" % gated)
            # With the job key (ftcoll-run makes one), every forged message
            # (an exclusion, a value, a flood for a group that does not
            # exist: stranger.h) is dropped as foreign before the core
            # reads it: check() above shows nobody excluded and every
            # value right; here, that they all arrived and were dropped.
            want = {"dropped_version": 2, "dropped_truncated": 2,
                    "dropped_foreign": 1 + forged, "dropped_checksum": 1}
            for r, s in job.summary.items():
                if not s.get("auth"):
                    problems.append("rank %d ran without the job key" % r)
                for k, v in want.items():
                    if s["counters"][k] < v:
                        problems.append("rank %d counted %s=%d, sent %d"
                                        % (r, k, s["counters"][k], v))
                if s["transport"]["stranger"] < 6 + forged:
                    problems.append("rank %d saw %d stranger messages of %d"
                                    % (r, s["transport"]["stranger"],
                                       6 + forged))
            return problems, job
        self.case("strangers: garbage, other job, spoofed id, forged with "
                  "the token, no key", fn)

        def unkeyed():
            # --no-auth (trusted fabrics): the job token alone, and the
            # same results.
            n, iters = 4, 40
            job = self.run(n, ["--no-auth", "--iters", iters, "--warmup", 0,
                               "--quiet", "--sizes", "8,4096"])
            problems = self.check(job, n, "allreduce", ops=2 * iters,
                                  all_ok=True)
            keyed = [r for r, s in job.summary.items() if s.get("auth")]
            if keyed:
                problems.append("ranks %s authenticated despite --no-auth"
                                % keyed)
            return problems, job
        self.case("no key: --no-auth allreduce n=4", unkeyed)

    def bad_input(self):
        def launch_script(n, script, **env):
            # ftcoll-run over n ranks of `sh -c script`, with the bench as
            # $0 and env added to the environment.
            p = subprocess.run([self.args.launcher, "-n", str(n), "--timeout",
                                "60", "--", "sh", "-c", script,
                                self.args.bench], capture_output=True,
                               text=True, timeout=90,
                               env=dict(os.environ, **env))
            return p, Job(p.returncode, p.stdout, p.stderr, 0)

        def missing_program():
            p = subprocess.run([self.args.launcher, "-n", "3", "--",
                                "/nonexistent/ftcoll-program"],
                               capture_output=True, text=True, timeout=30)
            problems = []
            if p.returncode != 127:
                problems.append("exit status %d, expected 127" % p.returncode)
            # Checked once, before anything starts: one message, not N.
            if p.stderr.count("not found") != 1:
                problems.append("not one clear message: %r" % p.stderr)
            return problems, Job(p.returncode, p.stdout, p.stderr, 0)

        def never_arrives():
            # Rank 1 never reaches the rendezvous (it waits until the
            # others have given up): they give up after
            # FTCOLL_BOOTSTRAP_TIMEOUT with a message naming it.
            script = ('if [ "$FTCOLL_RANK" = 1 ]; then '
                      'while [ ! -e "$FTCOLL_RENDEZVOUS/dead.0" ] || '
                      '[ ! -e "$FTCOLL_RENDEZVOUS/dead.2" ]; do sleep 0.05; '
                      'done; else exec "$0" --iters 5 --quiet; fi')
            p, job = launch_script(3, script, FTCOLL_BOOTSTRAP_TIMEOUT="1")
            problems = []
            for r in (0, 2):
                if not re.search(r"\[%d\] .*timed out after 1\.0 s waiting "
                                 r"for rank\(s\) 1" % r, p.stdout + p.stderr):
                    problems.append("rank %d: no clear timeout message" % r)
            if p.returncode not in (1,):
                problems.append("ftcoll-run exited %d, expected 1"
                                % p.returncode)
            return problems, job

        def exits_early():
            # The others must fail at once, not at their bootstrap
            # timeout: that is an hour here, and ftcoll-run's --timeout
            # (exit status 124) would end the job first.
            script = ('if [ "$FTCOLL_RANK" = 2 ]; then exit 3; '
                      'else exec "$0" --iters 5 --quiet; fi')
            p, job = launch_script(4, script,
                                   FTCOLL_BOOTSTRAP_TIMEOUT="3600")
            problems = []
            if "rank 2 exited before it reached the rendezvous" not in p.stderr:
                problems.append("no message naming rank 2")
            if p.returncode != 1:
                problems.append("exit status %d, expected 1%s" % (
                    p.returncode, " (no early failure: the others waited)"
                    if p.returncode == 124 else ""))
            return problems, job

        def bad_key():
            # A job key that is not 32 hex digits: every rank refuses to
            # start, naming the variable (no job runs half-keyed).
            script = 'FTCOLL_JOB_KEY=00112233-not-hex exec "$0" --iters 5'
            p, job = launch_script(2, script)
            problems = []
            said = re.findall(r"^\[(\d)\] .*FTCOLL_JOB_KEY must be 32 "
                              r"hexadecimal digits", p.stdout + p.stderr,
                              re.M)
            if sorted(said) != ["0", "1"]:
                problems.append("not every rank named FTCOLL_JOB_KEY: %s"
                                % said)
            if p.returncode != 1:
                problems.append("exit status %d, expected 1" % p.returncode)
            return problems, job

        self.case("bad input: program does not exist", missing_program)
        self.case("bad input: a malformed FTCOLL_JOB_KEY", bad_key)
        self.case("bad input: a rank never reaches the rendezvous",
                  never_arrives)
        self.case("bad input: a rank exits before the rendezvous", exits_early)

    def wrong_use(self):
        """One rank (the culprit, 3 of 4) calls every operation of a short
        stream differently from the others. What each rank must end each
        operation with is what docs/semantics.md ("Usage errors between
        peers") promises: a mismatch ends with FTC_EMISMATCH everywhere
        (by default, reduce leaves may deliver FTC_OK first: their value
        went up before anything could tell them; never the root or the
        culprit); a refused call ends with its own error at the culprit
        and FTC_EPEER_INVALID at the others, and the stream goes on. No
        rank hangs (the bench's FTCOLL_BENCH_OP_TIMEOUT), none is
        excluded, no two FTC_OK results with a value differ."""
        n, c, iters = 4, 3, 3
        MM, OK = "FTC_EMISMATCH", "FTC_OK"

        def everywhere(*allowed):
            return lambda r, g: set(allowed)

        def strict_root_culprit(r, g):
            # Reduce: the root and the culprit never deliver FTC_OK.
            return {MM} if r in (0, c) else {MM, OK}

        def refused(own):
            def expect(r, g):
                if g != 1:
                    return {OK}
                return set(own) if r == c else {"FTC_EPEER_INVALID"}
            return expect

        cases = [
            ("collective: rank 3 reduce, others allreduce",
             ["--coll", "allreduce"], ["--coll", "reduce"], everywhere(MM)),
            ("collective: rank 3 bcast, others reduce",
             ["--coll", "reduce"], ["--coll", "bcast"], strict_root_culprit),
            ("algorithm: rank 3 tree -f 0, others corrected -f 1",
             ["--algo", "corrected", "-f", 1], ["--algo", "tree", "-f", 0],
             everywhere(MM)),
            ("root: reduce, rank 3 says root 1, others 0",
             ["--coll", "reduce"], ["--root", 1], strict_root_culprit),
            # A bcast root mismatch is caught only in checked mode (the
            # ranks that believe they are root deliver at once).
            ("root, checked: bcast, rank 3 says root 1, others 0",
             ["--coll", "bcast", "--checked"], ["--root", 1], everywhere(MM)),
            ("count: rank 3 16 bytes, others 8",
             ["--sizes", 8], ["--sizes", 16], everywhere(MM)),
            ("bad argument: rank 3 NULL buffer at 1 of 3",
             [], ["--bad-arg", "null-buffer@1"], refused(["FTC_EINVAL"])),
            ("bad argument: rank 3 count 2^40 at 1 of 3",
             [], ["--bad-arg", "huge-count@1"],
             refused(["FTC_EINVAL", "FTC_EOVERFLOW"])),
            ("bad argument: rank 3 bad operator at 1 of 3",
             [], ["--bad-arg", "bad-op@1"], refused(["FTC_EINVAL"])),
            # Checked mode is part of the signature. It takes two places
            # in the group's sequence, so after the stream the culprit is
            # out of step with the others (its closing allreduces meet
            # nobody, and it finds them gone): its failed list is not
            # checked.
            ("checked mode at rank 3 only", [], ["--checked"],
             everywhere(MM)),
        ]
        for name, base, extra, expect in cases:
            def fn(base=base, extra=extra, expect=expect, name=name):
                args = ["--iters", iters, "--warmup", 0, "--quiet",
                        "--usage-errors"] + base
                job = self.run(n, args, culprit=(c, extra))
                problems = []
                if job.rc != 0:
                    problems.append("ftcoll-run exit status %s (a hang is 3 "
                                    "at a rank, a wrong result 1)" % job.rc)
                values = {}
                for r in range(n):
                    s = job.summary.get(r)
                    if s is None:
                        problems.append("rank %d printed no result" % r)
                        continue
                    if s["wrong"] or s["excluded"]:
                        problems.append("rank %d: %d wrong results%s" % (
                            r, s["wrong"],
                            ", excluded" if s["excluded"] else ""))
                    if s["failed"] and not name.startswith("checked mode"):
                        problems.append("rank %d declared %s failed"
                                        % (r, s["failed"]))
                    got = {g: (st, v) for g, st, v in s["results"]}
                    for g in range(iters):
                        if g not in got:
                            problems.append("rank %d: no status for "
                                            "operation %d" % (r, g))
                            continue
                        st, v = got[g]
                        if st not in expect(r, g):
                            problems.append(
                                "rank %d, operation %d: %s, expected %s"
                                % (r, g, st, " or ".join(sorted(
                                    expect(r, g)))))
                        if st == OK and v != 0:
                            values.setdefault(g, set()).add(v)
                for g, vs in sorted(values.items()):
                    if len(vs) > 1:
                        problems.append("operation %d: FTC_OK results differ:"
                                        " %s" % (g, sorted(vs)))
                return problems, job
            self.case("wrong use: " + name, fn)

    def pmix(self):
        """The same program under mpirun: rank, size and addresses from
        PMIx. With --enable-recovery, survivors of a SIGKILL live on
        (plain mpirun would abort the job)."""
        if not self.args.mpirun:
            return
        base = [self.args.mpirun, "--allow-run-as-root", "--oversubscribe"]

        def mpirun(n, extra, bench_args):
            env = dict(os.environ, FTCOLL_BACKEND=self.args.backend,
                       FTCOLL_BENCH_OP_TIMEOUT="20")
            env.update(self.transport_env)
            for k in ("FTCOLL_RANK", "FTCOLL_SIZE", "FTCOLL_RENDEZVOUS"):
                env.pop(k, None)
            cmd = base + extra + ["-np", str(n), self.args.bench]
            cmd += [str(a) for a in bench_args]
            t0 = time.monotonic()
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=120, env=env)
            # mpirun does not prefix lines: tag them with the rank field.
            out = "\n".join("[%s] %s" % (json.loads(l).get("rank", 0), l)
                            if l.startswith("{") else l
                            for l in p.stdout.splitlines())
            return Job(p.returncode, out, p.stderr, time.monotonic() - t0)

        def fault_free():
            n = 4
            job = mpirun(n, [], ["--iters", 50, "--warmup", 0, "--quiet"])
            return self.check(job, n, "allreduce", ops=50, all_ok=True,
                              launcher=False), job

        def with_kill():
            n = 6
            job = mpirun(n, ["--enable-recovery"],
                         ["-f", 2, "--iters", 60, "--warmup", 0, "--quiet",
                          "--kill", "2@20", "--crash", "0@40:100"])
            return self.check(job, n, "allreduce", kills=[0, 2], ops=60,
                              launcher=False), job

        self.case("pmix: mpirun allreduce n=4", fault_free)
        self.case("pmix: mpirun --enable-recovery, 2 killed, n=6", with_kill)

    def roots_crash(self, runs):
        """Scenario 1 of "the guarantee holds over streams of operations":
        a stream of 200 corrected allreduces (n = 6, f = 2) in which the
        first two root candidates, 0 and 1, crash inside iteration 100 (30
        and 50 us into it). Every survivor must deliver every operation
        with FTC_OK, each value a valid sum (ftcoll-bench checks it), all
        survivors the same values (their digests), and both crashes must
        have happened."""
        n, f, iters = 6, 2, 200
        for i in range(runs):
            name = "roots 0,1 crash inside 100 of 200 allreduce n=6 f=2 " \
                "[%d/%d]" % (i + 1, runs)

            def fn():
                args = ["-f", f, "--iters", iters, "--warmup", 0, "--quiet",
                        "--crash", "0@100:30", "--crash", "1@100:50"]
                job = self.run(n, args, ["--may-fail", "0,1"])
                return self.check(job, n, "allreduce", kills=[0, 1],
                                  ops=iters, all_ok=True), job
            self.case(name, fn)

    def soak(self):
        for i in range(self.args.soak_runs):
            n, f = ((8, 2), (6, 1), (12, 3), (16, 2))[i % 4]
            iters = 1000
            k = self.rng.randint(1, f)
            victims = self.rng.sample(range(n), k)
            plan, run_args, where = [], [], []
            for v in victims:
                it = self.rng.randint(1, iters - 2)
                how = self.rng.random()
                if how < 0.35:
                    plan += ["--kill", "%d@%d" % (v, it)]
                    where.append("kill %d@%d" % (v, it))
                elif how < 0.7:
                    us = self.rng.randint(0, 500)
                    plan += ["--crash", "%d@%d:%d" % (v, it, us)]
                    where.append("crash %d@%d:%d" % (v, it, us))
                else:
                    b, r, g, h = self.outside(v, iters, window=100)
                    plan += b
                    run_args += r
                    where.append("outside %d@%d..%d" % (v, g, h))
            name = "soak %d: allreduce n=%d f=%d x%d %s" % (
                i, n, f, iters, ", ".join(where))

            def fn(n=n, f=f, plan=plan, victims=victims, iters=iters,
                   run_args=run_args):
                args = ["-f", f, "--iters", iters, "--warmup", 0,
                        "--quiet"] + plan
                ra = run_args + ["--may-fail", ",".join(map(str, victims))]
                job = self.run(n, args, ra, timeout=300)
                return self.check(job, n, "allreduce", kills=victims,
                                  ops=iters), job
            self.case(name, fn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="zmq", choices=sorted(TRANSPORTS))
    ap.add_argument("--transport", help="one of the backend's TRANSPORTS "
                    "(default: its first)")
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--bench", required=True,
                    help="the rank program: ftcoll-bench, or any program "
                    "with its command line and JSON output")
    ap.add_argument("--foreign", help="the backend's stranger tool "
                    "(ftcoll-foreign for zmq); without it no stranger case")
    ap.add_argument("--mpirun", help="a PMIx launcher (Open MPI's mpirun) "
                    "to run the PMIx cases with")
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("FTCOLL_CONFORMANCE_SEED", 1)))
    ap.add_argument("--soak", action="store_true",
                    help="the soak suite instead of the default one")
    ap.add_argument("--soak-runs", type=int, default=8)
    ap.add_argument("--scenario1", action="store_true",
                    help="only the roots-crash stream, 500 jobs (CI's "
                    "soak of scenario 1: meson test --suite scenario1)")
    ap.add_argument("--gossip", action="store_true",
                    help="only the gossip family's cases (meson test "
                    "--suite gossip-real)")
    ap.add_argument("--gossip-ops", type=int, default=60,
                    help="operations per gossip job (60; the default test "
                    "setup runs 24)")
    ap.add_argument("--root-crash-runs", type=int,
                    help="jobs of the roots-crash stream (default 5, "
                    "--soak 500)")
    ap.add_argument("--filter", help="only cases whose name matches")
    args = ap.parse_args()
    if args.transport is None:
        args.transport = next(iter(TRANSPORTS[args.backend]))
    if args.transport not in TRANSPORTS[args.backend]:
        ap.error("--transport for %s: %s" % (
            args.backend, ", ".join(TRANSPORTS[args.backend])))
    if args.root_crash_runs is None:
        args.root_crash_runs = 500 if args.soak or args.scenario1 else 5

    # Sanitizer builds: leaks inside third-party libraries (lsan.supp
    # says which and why) are not ours; every rank inherits this.
    if "suppressions=" not in os.environ.get("LSAN_OPTIONS", ""):
        supp = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "lsan.supp")
        os.environ["LSAN_OPTIONS"] = ":".join(
            x for x in (os.environ.get("LSAN_OPTIONS", ""),
                        "suppressions=" + supp) if x)

    s = Suite(args)
    t0 = time.monotonic()
    print("# conformance: backend %s, transport %s %s, seed %d"
          % (args.backend, args.transport,
             " ".join("%s=%s" % kv for kv in s.transport_env.items()),
             args.seed))
    if args.gossip:
        gossip_cases(s, args.gossip_ops)
    elif args.scenario1:
        s.roots_crash(args.root_crash_runs)
    elif args.soak:
        s.soak()
        s.roots_crash(args.root_crash_runs)
        s.large_messages()
    else:
        s.fault_free()
        s.startup_deaths()
        s.large_messages()
        s.kills("before")
        s.kills("during")
        s.launcher_kills()
        s.tree_with_kill()
        s.butterfly()
        s.ftco()
        s.stops()
        s.backend_reports()
        s.strangers()
        s.bad_input()
        s.wrong_use()
        ulfm_cases(s)
        s.pmix()
        s.roots_crash(args.root_crash_runs)
    for note in sorted(set(s.notes)):
        print("note: " + note)
    print("# %.1f s" % (time.monotonic() - t0))
    print("%d passed, %d failed" % (s.passed, s.failed))
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
