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
    suspicion), and every rank killed before an operation that all wait on
    is known failed;
  - time limits hold (no hang), strangers are counted, bad input gives a
    clear error.

Faults are drawn from a seeded generator (--seed, default 1): ranks that
SIGKILL themselves as an iteration starts ("before"), inside an iteration
after a random delay ("during"), killed or stopped by ftcoll-run at random
times, and SIGSTOPped ranks found by timeouts or heartbeats. A kill with
the core's keepalive slowed to 5 s shows that the backend's own failure
report (ZeroMQ disconnect, UCX endpoint error, libfabric's local process
monitor) reaches the core, and how fast.

The rank program (--bench) is ftcoll-bench, or any program that takes its
options (--coll, --algo, -f, --iters, --warmup, --sizes, --kill, --crash,
--stop, --victims, --interval-ms, --quiet) and prints its JSON lines; a
backend joins the suite with such a program (tests/conformance/meson.build).

Prints one line per case and finally "N passed, M failed"; exit status 1
if any failed. --soak runs the long suite (1000 allreduces per job with
random kills) instead of the default one.
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

LINE = re.compile(r"^\[(\d+)\] (\{.*\})\s*$")

# Per backend, the transports this suite runs on: the environment that
# selects each (what a user sets), and the longest the backend may take to
# report a SIGKILLed peer by itself here (generous: 2 shared vCPUs).
TRANSPORTS = {
    "zmq": {"tcp": ({}, 1000)},
    "ucx": {
        "tcp": ({"UCX_TLS": "tcp"}, 1000),
        # Shared memory reports a dead peer through UCX's keepalive only
        # with UCX_MM_ERROR_HANDLING; one interval of 100 ms (docs/ucx.md).
        "sm": ({"UCX_TLS": "sm", "UCX_MM_ERROR_HANDLING": "y",
                "UCX_KEEPALIVE_INTERVAL": "100ms"}, 1500),
        # The same, spelt as the POSIX shared-memory transport alone (UCX
        # picks sysv for "sm" here).
        "posix": ({"UCX_TLS": "posix,cma,self", "UCX_MM_ERROR_HANDLING": "y",
                   "UCX_KEEPALIVE_INTERVAL": "100ms"}, 1500),
    },
    "libfabric": {
        "tcp": ({"FI_PROVIDER": "tcp;ofi_rxm"}, 1000),
        "shm": ({"FI_PROVIDER": "shm"}, 1000),
    },
}


class Job:
    """One ftcoll-run invocation and what came out of it."""

    def __init__(self, rc, out, err, elapsed):
        self.rc, self.out, self.err, self.elapsed = rc, out, err, elapsed
        self.summary = {}   # rank -> final JSON line
        self.events = {}    # rank -> kill/crash/stop event
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
                self.events[rank] = d
            elif "completed" in d:
                self.summary[rank] = d
            else:
                self.other.append(d)

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
        self.transport_env, self.report_ms = \
            TRANSPORTS[args.backend][args.transport]
        self.passed = 0
        self.failed = 0
        self.notes = []

    # --- running ---------------------------------------------------------

    def run(self, n, bench_args, run_args=(), env=None, timeout=60,
            rendezvous=None, during=None):
        # Faults timed by ftcoll-run count from when every rank is set
        # up: start-up takes longer on some backends than on others.
        cmd = [self.args.launcher, "-n", str(n), "--timeout", str(timeout),
               "--clock", "ready"]
        cmd += list(run_args)
        if rendezvous:
            cmd += ["--rendezvous", rendezvous]
        cmd += ["--", self.args.bench] + [str(a) for a in bench_args]
        full_env = dict(os.environ)
        full_env.update(self.transport_env)
        full_env["FTCOLL_BACKEND"] = self.args.backend
        full_env.setdefault("FTCOLL_BENCH_OP_TIMEOUT", "20")
        # The core's keepalive, for the cases that do not test it: a live
        # rank descheduled for 300 ms on two shared vCPUs must not be
        # excluded (the keepalive cases set their own, shorter values).
        full_env.setdefault("FTCOLL_SUSPECT_MS", "300")
        full_env.setdefault("FTCOLL_PROBE_MS", "600")
        full_env.update(env or {})
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=full_env)
        helper = None
        if during is not None:
            helper = threading.Thread(target=during)
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
        try:
            problems, job = fn()
        except Exception as e:  # a bug here must not hide the others
            problems, job = ["driver error: %r" % (e,)], None
        dt = time.monotonic() - t0
        if problems:
            self.failed += 1
            print("FAIL %-58s %6.2f s" % (name, dt))
            for p in problems[:8]:
                print("    - " + p)
            if job is not None:
                print(job.tail())
        else:
            self.passed += 1
            print("ok   %-58s %6.2f s" % (name, dt))
        sys.stdout.flush()

    # --- checking --------------------------------------------------------

    def check(self, job, n, coll, victims=(), killed_before=(),
              expect_rc=0, ops=None, agree=True):
        """The common checks of a job whose victims may fail."""
        problems = []
        victims = set(victims)
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
            extra = set(s["failed"]) - victims
            if extra:
                problems.append("rank %d declared %s failed: no victims"
                                % (r, sorted(extra)))
            missing = set(killed_before) - set(s["failed"])
            if missing:
                problems.append("rank %d does not know %s failed"
                                % (r, sorted(missing)))
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
                        return self.check(job, n, coll,
                                          ops=2 * (iters + 2)), job
                    self.case(name, fn)

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
                plan, before = [], []
                for v in victims:
                    it = self.rng.randint(1, iters - 2)
                    if mode == "before":
                        plan += ["--kill", "%d@%d" % (v, it)]
                        before.append(v)
                    else:
                        plan += ["--crash", "%d@%d:%d"
                                 % (v, it, self.rng.randint(0, 300))]
                name = "kill-%s %s corrected n=%d f=%d victims=%s" % (
                    mode, coll, n, f, ",".join(map(str, sorted(victims))))

                def fn(coll=coll, n=n, f=f, plan=plan, victims=victims,
                       before=before, iters=iters):
                    args = ["--coll", coll, "-f", f, "--iters", iters,
                            "--warmup", 0, "--quiet"] + plan
                    run_args = ["--may-fail", ",".join(map(str, victims))]
                    job = self.run(n, args, run_args)
                    # A rank killed before an iteration is missed by all
                    # only if all wait on it: true of allreduce.
                    kb = before if coll == "allreduce" else ()
                    return self.check(job, n, coll, victims, kb,
                                      ops=iters), job
                self.case(name, fn)

    def launcher_kills(self):
        """ftcoll-run kills ranks at random times while operations run."""
        for n, f in ((4, 1), (8, 2), (16, 2)):
            k = self.rng.randint(1, f)
            victims = self.rng.sample(range(n), k)
            iters = {4: 400, 8: 250, 16: 80}[n]
            run_args = []
            for v in victims:
                run_args += ["--kill", "%d@%.3f"
                             % (v, self.rng.uniform(0.25, 0.5))]
            name = "kill-random-time allreduce n=%d f=%d victims=%s" % (
                n, f, ",".join(map(str, sorted(victims))))

            def fn(n=n, f=f, victims=victims, run_args=run_args, iters=iters):
                args = ["-f", f, "--iters", iters, "--warmup", 0,
                        "--interval-ms", 1, "--quiet",
                        "--victims", ",".join(map(str, victims))]
                job = self.run(n, args, run_args)
                problems = self.check(job, n, "allreduce", victims,
                                      ops=iters)
                if "killed rank" not in job.err:
                    problems.append("the job ended before the kill")
                return problems, job
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
            problems = []
            pids = re.findall(r"^\[(\d+)\] pid=(\d+)$", p.stdout, re.M)
            if len(pids) != 3:
                problems.append("%d ranks said their pid, expected 3"
                                % len(pids))
            for r, pid in pids:
                if os.path.exists("/dev/shm/%s:0:0" % pid):
                    problems.append("rank %s left /dev/shm/%s:0:0"
                                    % (r, pid))
                    os.unlink("/dev/shm/%s:0:0" % pid)
            if p.returncode != 0:
                problems.append("exit status %d" % p.returncode)
            return problems, Job(p.returncode, p.stdout, p.stderr, 0)

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
                return self.check(job, n, coll, [v], ops=20,
                                  agree=False), job
            self.case(name, fn)

    def stops(self):
        quick = {"FTCOLL_SUSPECT_MS": "50", "FTCOLL_PROBE_MS": "100",
                 "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}

        def by_timeout():
            # Core keepalive only: detection after suspect + probe.
            n, v = 6, self.rng.randint(1, 5)
            args = ["-f", 1, "--iters", 40, "--warmup", 0, "--quiet",
                    "--stop", "%d@10" % v]
            job = self.run(n, args, ["--may-fail", str(v)],
                           env=quick)
            problems = self.check(job, n, "allreduce", [v], [v], ops=40)
            ev = job.events.get(v)
            for r, s in job.summary.items():
                if r == v or ev is None:
                    continue
                for it, t in s["marks"]:
                    ms = (t - ev["t_ns"]) / 1e6
                    if not 150 <= ms < 150 + 250:
                        problems.append("rank %d delivered %.1f ms after the "
                                        "stop (timeouts: 150 ms)" % (r, ms))
            return problems, job

        def by_heartbeat():
            # ZMTP heartbeats (100/300 ms) beat slow core timeouts.
            n, v = 5, self.rng.randint(0, 4)
            env = {"FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000",
                   "FTCOLL_ZMQ_HEARTBEAT_MS": "100",
                   "FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS": "300"}
            args = ["-f", 1, "--iters", 40, "--warmup", 0, "--quiet",
                    "--stop", "%d@10" % v]
            job = self.run(n, args, ["--may-fail", str(v)], env=env)
            problems = self.check(job, n, "allreduce", [v], [v], ops=40)
            ev = job.events.get(v)
            for r, s in job.summary.items():
                if r == v or ev is None:
                    continue
                for it, t in s["marks"]:
                    ms = (t - ev["t_ns"]) / 1e6
                    if ms > 1000:
                        problems.append("rank %d delivered %.1f ms after the "
                                        "stop (heartbeat timeout 300 ms)"
                                        % (r, ms))
            return problems, job

        def resumed():
            # Stopped and resumed while the others still run: it must
            # learn that it was excluded, and leave.
            n, v = 5, self.rng.randint(1, 4)
            args = ["-f", 1, "--iters", 250, "--warmup", 0, "--quiet",
                    "--interval-ms", 3, "--victims", v]
            job = self.run(n, args, ["--stop", "%d@0.3+0.4" % v], env=quick)
            problems = self.check(job, n, "allreduce", [v], ops=250)
            s = job.summary.get(v)
            if s is None or not s["excluded"]:
                problems.append("resumed rank %d did not learn that it was "
                                "excluded" % v)
            return problems, job

        self.case("stop (core timeouts 50+100 ms) allreduce n=6", by_timeout)
        # Only ZeroMQ has heartbeats that find a hung peer; UCX and
        # libfabric never report one (transport-facts.md): the core's
        # keepalive above is their only way.
        if self.args.backend == "zmq":
            self.case("stop (heartbeat 100/300 ms) allreduce n=5",
                      by_heartbeat)
        self.case("stop and resume: excluded, ends allreduce n=5", resumed)

    def backend_reports(self):
        """A SIGKILL while the core's keepalive is slowed to 5 s: only the
        backend's own report can make the survivors deliver quickly. Every
        survivor must deliver the interrupted allreduce within the
        transport's bound, and some survivor's backend must name the
        victim among the peers it reported."""
        slow = {"FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000",
                "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}
        for n, v in ((5, self.rng.randint(1, 4)), (4, 0)):
            name = "kill found by the backend (keepalive 5 s) n=%d victim=%d" \
                % (n, v)

            def fn(n=n, v=v):
                args = ["-f", 1, "--iters", 40, "--warmup", 0, "--quiet",
                        "--kill", "%d@10" % v]
                job = self.run(n, args, ["--may-fail", str(v)], env=slow)
                problems = self.check(job, n, "allreduce", [v], [v], ops=40)
                ev = job.events.get(v)
                if ev is None:
                    return problems + ["victim %d printed no event" % v], job
                reporters = 0
                for r, s in job.summary.items():
                    if r == v:
                        continue
                    for it, t in s["marks"]:
                        ms = (t - ev["t_ns"]) / 1e6
                        if it == 10 and ms > self.report_ms:
                            problems.append(
                                "rank %d delivered %.1f ms after the kill "
                                "(backend bound %d ms)" % (r, ms,
                                                          self.report_ms))
                    reports = s["transport"].get("reports", [])
                    if any(rep[0] == v for rep in reports):
                        reporters += 1
                if reporters == 0:
                    problems.append("no survivor's backend reported rank %d"
                                    % v)
                return problems, job
            self.case(name, fn)

    def strangers(self):
        if not self.args.foreign:
            return

        def fn():
            n = 4
            d = tempfile.mkdtemp(prefix="ftcoll-conf-")
            result = {}

            def attack():
                # Wait for the job's addresses, then send it garbage.
                end = time.monotonic() + 20
                while time.monotonic() < end:
                    if all(os.path.exists(os.path.join(d, "ag0.%d" % r))
                           for r in range(n)):
                        break
                    time.sleep(0.01)
                p = subprocess.run([self.args.foreign, d, str(n)],
                                   capture_output=True, text=True,
                                   env=dict(os.environ,
                                            **self.transport_env))
                result["rc"], result["out"] = p.returncode, p.stdout

            try:
                args = ["-f", 1, "--iters", 300, "--warmup", 0,
                        "--interval-ms", 3, "--quiet"]
                job = self.run(n, args, rendezvous=d, during=attack)
            finally:
                shutil.rmtree(d, ignore_errors=True)
            problems = self.check(job, n, "allreduce", ops=300)
            if result.get("rc") != 0:
                problems.append("ftcoll-foreign failed: %r" % result)
            want = {"dropped_version": 2, "dropped_truncated": 2,
                    "dropped_foreign": 1, "dropped_checksum": 1}
            for r, s in job.summary.items():
                for k, v in want.items():
                    if s["counters"][k] < v:
                        problems.append("rank %d counted %s=%d, sent %d"
                                        % (r, k, s["counters"][k], v))
                if s["transport"]["stranger"] < 6:
                    problems.append("rank %d saw %d stranger messages of 6"
                                    % (r, s["transport"]["stranger"]))
            return problems, job
        self.case("strangers: garbage, other job, spoofed id, raw TCP", fn)

    def bad_input(self):
        def missing_program():
            t0 = time.monotonic()
            p = subprocess.run([self.args.launcher, "-n", "3", "--",
                                "/nonexistent/ftcoll-program"],
                               capture_output=True, text=True, timeout=10)
            problems = []
            if p.returncode != 127:
                problems.append("exit status %d, expected 127" % p.returncode)
            if "not found" not in p.stderr:
                problems.append("no clear message: %r" % p.stderr)
            if time.monotonic() - t0 > 2:
                problems.append("took %.1f s" % (time.monotonic() - t0))
            return problems, Job(p.returncode, p.stdout, p.stderr, 0)

        def never_arrives():
            # Rank 1 never reaches the rendezvous: the others give up
            # after FTCOLL_BOOTSTRAP_TIMEOUT with a message naming it.
            script = ('if [ "$FTCOLL_RANK" = 1 ]; then sleep 30; '
                      'else exec "$0" --iters 5 --quiet; fi')
            t0 = time.monotonic()
            p = subprocess.run([self.args.launcher, "-n", "3", "--timeout",
                                "3", "--", "sh", "-c", script,
                                self.args.bench], capture_output=True,
                               text=True, timeout=30,
                               env=dict(os.environ,
                                        FTCOLL_BOOTSTRAP_TIMEOUT="1"))
            job = Job(p.returncode, p.stdout, p.stderr, 0)
            problems = []
            for r in (0, 2):
                if not re.search(r"\[%d\] .*timed out after 1\.0 s waiting "
                                 r"for rank\(s\) 1" % r, p.stdout + p.stderr):
                    problems.append("rank %d: no clear timeout message" % r)
            if p.returncode == 0:
                problems.append("ftcoll-run exited 0")
            if time.monotonic() - t0 > 6:
                problems.append("took %.1f s" % (time.monotonic() - t0))
            return problems, job

        def exits_early():
            script = ('if [ "$FTCOLL_RANK" = 2 ]; then exit 3; '
                      'else exec "$0" --iters 5 --quiet; fi')
            t0 = time.monotonic()
            p = subprocess.run([self.args.launcher, "-n", "4", "--timeout",
                                "20", "--", "sh", "-c", script,
                                self.args.bench], capture_output=True,
                               text=True, timeout=40)
            job = Job(p.returncode, p.stdout, p.stderr, 0)
            problems = []
            if "rank 2 exited before it reached the rendezvous" not in p.stderr:
                problems.append("no message naming rank 2")
            if p.returncode != 1:
                problems.append("exit status %d, expected 1" % p.returncode)
            if time.monotonic() - t0 > 5:
                problems.append("took %.1f s (no early failure)"
                                % (time.monotonic() - t0))
            return problems, job

        self.case("bad input: program does not exist", missing_program)
        self.case("bad input: a rank never reaches the rendezvous",
                  never_arrives)
        self.case("bad input: a rank exits before the rendezvous", exits_early)

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
            return self.check(job, n, "allreduce", ops=50), job

        def with_kill():
            n = 6
            job = mpirun(n, ["--enable-recovery"],
                         ["-f", 2, "--iters", 60, "--warmup", 0, "--quiet",
                          "--kill", "2@20", "--crash", "0@40:100"])
            return self.check(job, n, "allreduce", [0, 2], [0, 2],
                              ops=60), job

        self.case("pmix: mpirun allreduce n=4", fault_free)
        self.case("pmix: mpirun --enable-recovery, 2 killed, n=6", with_kill)

    def soak(self):
        for i in range(self.args.soak_runs):
            n, f = ((8, 2), (6, 1), (12, 3), (16, 2))[i % 4]
            iters = 1000
            k = self.rng.randint(1, f)
            victims = self.rng.sample(range(n), k)
            plan, run_args, external = [], [], []
            for v in victims:
                it = self.rng.randint(1, iters - 2)
                how = self.rng.random()
                if how < 0.35:
                    plan += ["--kill", "%d@%d" % (v, it)]
                elif how < 0.7:
                    plan += ["--crash", "%d@%d:%d"
                             % (v, it, self.rng.randint(0, 500))]
                else:
                    # At a random time; the run lasts > 1 s at any n.
                    run_args += ["--kill", "%d@%.3f"
                                 % (v, self.rng.uniform(0.15, 0.5))]
                    external.append(v)
            if external:
                plan += ["--victims", ",".join(map(str, external))]
            name = "soak %d: allreduce n=%d f=%d x%d %s" % (
                i, n, f, iters, " ".join(plan + run_args))

            def fn(n=n, f=f, plan=plan, victims=victims, iters=iters,
                   run_args=run_args):
                args = ["-f", f, "--iters", iters, "--warmup", 0,
                        "--quiet"] + plan
                ra = run_args + ["--may-fail", ",".join(map(str, victims))]
                job = self.run(n, args, ra, timeout=300)
                return self.check(job, n, "allreduce", victims,
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
    ap.add_argument("--filter", help="only cases whose name matches")
    args = ap.parse_args()
    if args.transport is None:
        args.transport = next(iter(TRANSPORTS[args.backend]))
    if args.transport not in TRANSPORTS[args.backend]:
        ap.error("--transport for %s: %s" % (
            args.backend, ", ".join(TRANSPORTS[args.backend])))

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
    if args.soak:
        s.soak()
    else:
        s.fault_free()
        s.kills("before")
        s.kills("during")
        s.launcher_kills()
        s.tree_with_kill()
        s.stops()
        s.backend_reports()
        s.strangers()
        s.bad_input()
        s.pmix()
    for note in sorted(set(s.notes)):
        print("note: " + note)
    print("# %.1f s" % (time.monotonic() - t0))
    print("%d passed, %d failed" % (s.passed, s.failed))
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
