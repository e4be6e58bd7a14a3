#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Allreduce bandwidth: ftcoll per backend beside Open MPI and Gloo.

One run measures the allreduce (int64 sum, n ranks on this host) of every
size in --sizes with each contender, interleaved: round 1 runs A, B, C ...
over all sizes, round 2 runs them again, and so on (--rounds), so that a
noisy host (shared cores) disturbs every contender alike. Per contender
and size it reports the median over rounds of the mean time of one
allreduce, and the algorithmic bandwidth size / time, as a markdown table
and as CSV (--csv FILE). Every result is checked by the program that ran
it (ftcoll-bench, mpi_allreduce, gloo_allreduce); a wrong result, a
failed rank or a missing row fails the run (exit status 1), so --quick
serves as a smoke test of the script and of the contenders' answers.

Contenders (--contenders, default: every one this build and host can
run):
  ftcoll-zmq, ftcoll-ucx-sm, ftcoll-ucx-tcp, ftcoll-ofi-shm, ftcoll-ofi-tcp
      ftcoll-bench --coll allreduce (corrected, f = 1) under ftcoll-run;
  mpi  MPI_Allreduce, bench/mpi_allreduce under mpirun (Open MPI);
  gloo-ring, gloo-hd
      Gloo's allreduce_ring and allreduce_halving_doubling over its TCP
      device, bench/gloo_allreduce under ftcoll-run (FileStore rendezvous).

  bench/bandwidth.py --launcher build/backends/bootstrap/ftcoll-run \\
      --bench build/bench/ftcoll-bench --mpi build/bench/mpi_allreduce \\
      --gloo build/bench/gloo_allreduce [--quick] [--sizes 8,...] \\
      [--iters I] [--rounds R] [--n 4] [--csv out.csv]

Before and after a change: --base-bench OLD/ftcoll-bench (and
--base-launcher OLD/ftcoll-run) adds NAME@base beside every ftcoll
contender NAME, run right after it in every round.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

UCX_SM = {"UCX_TLS": "sm", "UCX_MM_ERROR_HANDLING": "y",
          "UCX_KEEPALIVE_INTERVAL": "100ms"}
FTCOLL = {
    "ftcoll-zmq": ("zmq", {}),
    "ftcoll-ucx-sm": ("ucx", UCX_SM),
    "ftcoll-ucx-tcp": ("ucx", {"UCX_TLS": "tcp"}),
    "ftcoll-ofi-shm": ("libfabric", {"FI_PROVIDER": "shm"}),
    "ftcoll-ofi-tcp": ("libfabric", {"FI_PROVIDER": "tcp;ofi_rxm"}),
}
ORDER = list(FTCOLL) + ["mpi", "gloo-ring", "gloo-hd"]
BASE = "@base"      # an ftcoll contender run with --base-bench

# 8 B to 256 MiB, powers of 4 (and 256 MiB itself).
FULL_SIZES = [8 * 4 ** k for k in range(13)] + [256 << 20]
QUICK_SIZES = [8, 4096, 262144, 1 << 20]

ROW = re.compile(r"^(?:\[\d+\] )?csv,([^,]+),(?:[^,]+,){3}(\d+),([\d.]+)")
SIMPLE = re.compile(r"^(?:\[\d+\] )?csv,([^,]+),(\d+),([\d.]+)\s*$")
SUMMARY = re.compile(r"^\[(\d+)\] (\{.*\})\s*$")


def iters_for(size, quick, forced=None):
    if forced:
        return forced
    if quick:
        return 3
    if size >= 16 << 20:
        return 3
    if size >= 1 << 20:
        return 10
    return 100


def human(b):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div:
            return "%g %s" % (b / div, unit)
    return "%d B" % b


class Runner:
    def __init__(self, a):
        self.a = a
        self.problems = []

    def env(self, extra):
        e = dict(os.environ)
        # Fault-free runs on a shared host: the suite's keepalive, not a
        # hair trigger (tests/conformance/conformance.py does the same).
        e.setdefault("FTCOLL_SUSPECT_MS", "300")
        e.setdefault("FTCOLL_PROBE_MS", "600")
        e.update(extra)
        return e

    def run(self, name, cmd, env, timeout):
        """Run one job; its rows, or none if anything went wrong in it
        (a time from a job with a failed rank or a wrong result is not a
        measurement of the collective)."""
        before = len(self.problems)
        rows = self.run_job(name, cmd, env, timeout)
        return rows if len(self.problems) == before else {}

    def run_job(self, name, cmd, env, timeout):
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            self.problems.append("%s: no end after %d s" % (name, timeout))
            return {}
        rows = {}
        for line in p.stdout.splitlines():
            m = SIMPLE.match(line) or ROW.match(line)
            if m:
                rows[int(m.group(2))] = float(m.group(3))
        if p.returncode != 0:
            tail = (p.stdout + p.stderr).strip().splitlines()[-6:]
            self.problems.append("%s: exit status %d: %s" % (
                name, p.returncode, " | ".join(tail)))
        elif name.startswith("ftcoll"):
            # Every rank: all FTC_OK, nothing wrong, nobody failed.
            good = 0
            for line in p.stdout.splitlines():
                m = SUMMARY.match(line)
                if not m:
                    continue
                try:
                    d = json.loads(m.group(2))
                except ValueError:
                    continue
                if "completed" not in d:
                    continue
                if (d["wrong"] == 0 and d["ok"] == d["completed"]
                        and not d["failed"] and not d["excluded"]):
                    good += 1
                else:
                    self.problems.append("%s: rank %s: %d of %d FTC_OK, %d "
                                         "wrong, failed %s" % (
                                             name, m.group(1), d["ok"],
                                             d["completed"], d["wrong"],
                                             d["failed"]))
            if good != self.a.n:
                self.problems.append("%s: %d of %d ranks ended well"
                                     % (name, good, self.a.n))
        return rows

    def ftcoll(self, name, sizes):
        launcher, bench = self.a.launcher, self.a.bench
        if name.endswith(BASE):
            name = name[:-len(BASE)]
            launcher = self.a.base_launcher or launcher
            bench = self.a.base_bench
        backend, extra = FTCOLL[name]
        env = self.env(extra)
        env["FTCOLL_BACKEND"] = backend
        rows = {}
        # One job per size: ftcoll-bench runs the same --iters for every
        # size it is given.
        for s in sizes:
            cmd = [launcher, "-n", str(self.a.n), "--timeout",
                   str(self.a.timeout), "--", bench, "--coll",
                   "allreduce", "-f", "1", "--sizes", str(s), "--iters",
                   str(iters_for(s, self.a.quick, self.a.iters)), "--warmup",
                   "1", "--csv",
                   "--quiet"]
            rows.update(self.run("%s %s" % (name, human(s)), cmd, env,
                                 self.a.timeout + 30))
        return rows

    def mpi(self, sizes):
        cmd = [self.a.mpirun, "--allow-run-as-root", "--oversubscribe",
               "-np", str(self.a.n), self.a.mpi, "--sizes",
               ",".join(map(str, sizes))]
        if self.a.iters or self.a.quick:
            cmd += ["--iters", str(self.a.iters or 3)]
        # Open MPI leaks at exit by design; in a sanitizer build that
        # would fail the contender for what is not ours to check.
        env = self.env({})
        env["ASAN_OPTIONS"] = ":".join(
            x for x in (env.get("ASAN_OPTIONS", ""), "detect_leaks=0") if x)
        return self.run("mpi", cmd, env, self.a.timeout + 30)

    def gloo(self, algo, sizes):
        cmd = [self.a.launcher, "-n", str(self.a.n), "--timeout",
               str(self.a.timeout), "--", self.a.gloo, "--algo", algo,
               "--sizes", ",".join(map(str, sizes))]
        if self.a.iters or self.a.quick:
            cmd += ["--iters", str(self.a.iters or 3)]
        return self.run("gloo-" + algo, cmd, self.env({}),
                        self.a.timeout + 30)

    def contender(self, name, sizes):
        if name in FTCOLL or name.endswith(BASE):
            return self.ftcoll(name, sizes)
        if name == "mpi":
            return self.mpi(sizes)
        return self.gloo(name.split("-", 1)[1], sizes)


def available(a):
    have = []
    for name in ORDER:
        if name in FTCOLL:
            if a.bench and a.launcher:
                have.append(name)
        elif name == "mpi":
            if a.mpi and a.mpirun:
                have.append(name)
        elif a.gloo and a.launcher:
            have.append(name)
    return have


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launcher", required=True, help="ftcoll-run")
    ap.add_argument("--bench", help="ftcoll-bench")
    ap.add_argument("--mpi", help="bench/mpi_allreduce")
    ap.add_argument("--mpirun", default=shutil.which("mpirun"))
    ap.add_argument("--gloo", help="bench/gloo_allreduce")
    ap.add_argument("--contenders", help="comma-separated, of: "
                    + ", ".join(ORDER))
    ap.add_argument("--sizes", help="bytes, comma-separated (default 8 B to "
                    "256 MiB in powers of 4; --quick: 8 B to 1 MiB)")
    ap.add_argument("--quick", action="store_true",
                    help="few sizes, 3 iterations, one round: a smoke test")
    ap.add_argument("--iters", type=int, default=None,
                    help="allreduces per size and job, every contender "
                    "(default: 100, 10 from 1 MiB, 3 from 16 MiB; the "
                    "baselines' own defaults for mpi and gloo)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=600,
                    help="seconds per job")
    ap.add_argument("--csv", help="also write the results here")
    ap.add_argument("--base-bench", help="an older build's ftcoll-bench: "
                    "every ftcoll contender NAME also runs with it, as "
                    "NAME@base, right after NAME in every round")
    ap.add_argument("--base-launcher", help="the older build's ftcoll-run "
                    "(default: --launcher)")
    a = ap.parse_args()
    if a.sizes:
        try:
            sizes = [int(x) for x in a.sizes.split(",")]
        except ValueError:
            ap.error("--sizes: byte counts separated by commas")
        if any(s < 8 or s > 1 << 30 for s in sizes):
            ap.error("--sizes: 8 .. 2^30 bytes")
    else:
        sizes = QUICK_SIZES if a.quick else FULL_SIZES
    if a.iters is not None and a.iters < 1:
        ap.error("--iters: at least 1")
    rounds = a.rounds if a.rounds is not None else (1 if a.quick else 3)
    if rounds < 1:
        ap.error("--rounds: at least 1")
    have = available(a)
    names = a.contenders.split(",") if a.contenders else have
    for c in names:
        if c not in ORDER:
            ap.error("--contenders: unknown %s (one of %s)"
                     % (c, ", ".join(ORDER)))
        if c not in have:
            ap.error("--contenders: %s needs its program (--bench, --mpi "
                     "with mpirun, --gloo)" % c)
    if not names:
        ap.error("no contender: give --bench, --mpi or --gloo")
    if a.base_launcher and not a.base_bench:
        ap.error("--base-launcher: only with --base-bench")
    if a.base_bench:
        if not os.access(a.base_bench, os.X_OK):
            ap.error("--base-bench: %s is not an executable program"
                     % a.base_bench)
        names = [x for c in names
                 for x in ((c, c + BASE) if c in FTCOLL else (c,))]

    r = Runner(a)
    times = {c: {s: [] for s in sizes} for c in names}
    for k in range(rounds):
        for c in names:
            print("# round %d/%d: %s" % (k + 1, rounds, c), file=sys.stderr)
            rows = r.contender(c, sizes)
            for s in sizes:
                if s in rows:
                    times[c][s].append(rows[s])
                else:
                    r.problems.append("%s: no result for %s in round %d"
                                      % (c, human(s), k + 1))

    med = {c: {s: statistics.median(v) if v else None
               for s, v in times[c].items()} for c in names}
    print("| size | " + " | ".join(names) + " |")
    print("|---:|" + "---:|" * len(names))
    for s in sizes:
        cells = []
        for c in names:
            t = med[c][s]
            cells.append("-" if t is None else "%.1f us, %.1f MB/s"
                         % (t, s / t if t > 0 else 0.0))
        print("| %s | %s |" % (human(s), " | ".join(cells)))
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("contender,n,size,rounds,median_us,min_us,max_us,"
                    "algbw_MBps\n")
            for c in names:
                for s in sizes:
                    v = times[c][s]
                    if not v:
                        continue
                    m = statistics.median(v)
                    f.write("%s,%d,%d,%d,%.3f,%.3f,%.3f,%.3f\n" % (
                        c, a.n, s, len(v), m, min(v), max(v),
                        s / m if m > 0 else 0.0))
    for p in r.problems:
        print("problem: " + p, file=sys.stderr)
    return 1 if r.problems else 0


if __name__ == "__main__":
    sys.exit(main())
