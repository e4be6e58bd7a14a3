#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Agreement and shrink over real processes (a benchmark, not a test).

  python3 bench/ulfm_real.py --build build [--runs 3] [--sizes 8,16]
      [--backends zmq:tcp,ucx:sm,...] [--iters 200] [--only agree|shrink]
      [--victim middle|first]

1. ulfm-testing's benchagree phases (benchmarks/benchagree.c of
   ICLDisco/ulfm-testing), on one stream of ftcoll-bench --coll agree
   --with-allreduce: iteration g runs one agreement, then one 8-byte
   corrected allreduce (f = 1) on the same group, each timed apart, so
   that the two share the machine's load; rank n/2 SIGKILLs itself as it
   starts iteration K = iters/2 (--kill), a rank that is neither the
   first coordinator nor a leaf of its tree (--victim first: rank 0, the
   first coordinator, whose death costs a new ballot). Per survivor, from the
   per-iteration latencies it prints (bench_ulfm.c):

     before   mean agreement of iterations [warm-up, K)
     first    the agreement of iteration K, the first after the kill,
              which finds the death (the backend's report or the core's
              keepalive) and agrees on it
     stab     benchagree loops on MPIX_Comm_agree until it stops
              returning MPI_ERR_PROC_FAILED (after MPIX_Comm_failure_ack);
              ftcoll's agreement never fails, and the first after the
              kill already carries the failed set: the loop is empty, and
              the column shows iteration K+1, the next agreement
     after    mean agreement of iterations (K+1, end)
     ratio    before: mean agreement / mean allreduce of the same
              iterations (the issue's target is at most 1.5)

   Printed per backend and n: the median over runs of the survivors'
   mean (us; first and stab: the median over runs of the slowest
   survivor). The victim's death is checked (its kill event, its bit set
   in the agreement of K).

2. Failure -> shrunk group usable: ftcoll-bench --coll shrink, the same
   stream with shrinks (an agreement that names a failure is followed by
   ftc_init_shrink and an allreduce on the new group); rank n/2 SIGKILLs
   itself as it starts iteration K. The time from its kill event (just
   before it raised SIGKILL) to the last survivor's delivery of the
   shrink (the new group in hand), CLOCK_MONOTONIC on one host; ms,
   median [min-max] over runs.

The core's keepalive is 300 ms / 600 ms (FTCOLL_SUSPECT_MS,
FTCOLL_PROBE_MS; what the conformance suite uses on this shared host)
unless set; ranks sleep when idle (--wait block): with 16 ranks on two
cores, spinning would measure the scheduler. Numbers depend on the
machine and its load; quote the configuration line with them.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_backends import TRANSPORTS, json_lines  # noqa: E402

def run(build, backend, env, n, bench_args, victim):
    cmd = [os.path.join(build, "backends/bootstrap/ftcoll-run"), "-n", str(n),
           "--timeout", "300", "--clock", "ready", "--backend", backend,
           "--may-fail", str(victim), "--",
           os.path.join(build, "bench/ftcoll-bench")] + \
        [str(a) for a in bench_args]
    e = dict(os.environ)
    e.setdefault("FTCOLL_SUSPECT_MS", "300")
    e.setdefault("FTCOLL_PROBE_MS", "600")
    e.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    ulfm, events = {}, {}
    for _, d in json_lines(p.stdout):
        if "ulfm" in d:
            ulfm[d["rank"]] = d["ulfm"]
        elif d.get("event") in ("kill", "crash"):
            events[d["rank"]] = d
    problems = []
    if p.returncode != 0:
        # The whole output, to find out why (a wrong result is a bug to
        # chase, not a slow run).
        fd, path = tempfile.mkstemp(prefix="ulfm_real_", suffix=".log")
        with os.fdopen(fd, "w") as f:
            f.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
        wrong = [l for l in p.stderr.splitlines() if "WRONG" in l
                 or "HANG" in l]
        problems.append("ftcoll-run exit %d (%s; output in %s)" % (
            p.returncode, wrong[0] if wrong else "no WRONG line", path))
    if victim not in events:
        problems.append("rank %d did not die" % victim)
    missing = [r for r in range(n) if r != victim and r not in ulfm]
    if missing:
        problems.append("no results from %s" % missing)
    return ulfm, events, problems


def victim_of(args, n):
    """--victim middle: rank n/2; first: rank 0, the first ballot's
    coordinator, whose death costs a new ballot."""
    return 0 if args.victim == "first" else n // 2


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def agree_phases(args, name, n):
    backend, env = TRANSPORTS[name]
    victim, kill = victim_of(args, n), args.iters // 2
    total = args.iters + args.warmup
    k = args.warmup + kill
    cols = {c: [] for c in ("before", "first", "stab", "after", "ar",
                            "ratio")}
    for _ in range(args.runs):
        ulfm, events, problems = run(
            args.build, backend, env, n,
            ["--coll", "agree", "--with-allreduce", "--iters", args.iters,
             "--warmup", args.warmup, "--quiet", "--kill",
             "%d@%d" % (victim, k)], victim)
        if problems:
            print("  %s n=%d: skipped a run: %s" % (name, n,
                                                    "; ".join(problems)))
            continue
        survivors = [r for r in ulfm]
        res = ulfm[survivors[0]]["results"]
        if not (int(res[k][2], 16) >> victim) & 1 or victim not in res[k][3]:
            print("  %s n=%d: the agreement of %d does not name victim %d "
                  "failed" % (name, n, k, victim))
            continue
        per = lambda key, lo, hi: [  # noqa: E731
            statistics.mean(ulfm[r][key][lo:hi]) / 1e3 for r in survivors]
        before = per("agree_ns", args.warmup, k)
        ar = per("allreduce_ns", args.warmup, k)
        cols["before"].append(statistics.mean(before))
        cols["ar"].append(statistics.mean(ar))
        cols["ratio"].append(statistics.mean(
            b / a for b, a in zip(before, ar)))
        cols["first"].append(max(ulfm[r]["agree_ns"][k] for r in survivors)
                             / 1e3)
        cols["stab"].append(max(ulfm[r]["agree_ns"][k + 1]
                                for r in survivors) / 1e3)
        cols["after"].append(statistics.mean(per("agree_ns", k + 2, total)))
    print("%-14s %3d %4d %10.1f %12.1f %10.1f %10.1f %10.1f %6.2f" % (
        name, n, len(cols["before"]), med(cols["before"]),
        med(cols["first"]), med(cols["stab"]), med(cols["after"]),
        med(cols["ar"]), med(cols["ratio"])))
    sys.stdout.flush()


def shrink_time(args, name, n):
    backend, env = TRANSPORTS[name]
    victim, k = victim_of(args, n), args.warmup + 10
    ms = []
    for _ in range(args.runs):
        ulfm, events, problems = run(
            args.build, backend, env, n,
            ["--coll", "shrink", "--iters", 20, "--warmup", args.warmup,
             "--quiet", "--kill", "%d@%d" % (victim, k)], victim)
        if problems:
            print("  %s n=%d: skipped a run: %s" % (name, n,
                                                    "; ".join(problems)))
            continue
        t_kill = events[victim]["t_ns"]
        done = []
        for r, u in ulfm.items():
            got = [s for s in u["shrinks"] if victim not in s[3]]
            if got:
                done.append(got[0][4])
        if len(done) != len(ulfm):
            print("  %s n=%d: a survivor did not shrink" % (name, n))
            continue
        ms.append((max(done) - t_kill) / 1e6)
    print("%-14s %3d %4d %8.1f [%.1f-%.1f]" % (
        name, n, len(ms), med(ms), min(ms) if ms else float("nan"),
        max(ms) if ms else float("nan")))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--sizes", default="8,16")
    ap.add_argument("--backends", default="zmq:tcp,ucx:sm,ucx:tcp,"
                    "libfabric:shm,libfabric:tcp")
    ap.add_argument("--only", choices=["agree", "shrink"])
    ap.add_argument("--victim", choices=["middle", "first"],
                    default="middle")
    args = ap.parse_args()
    configs = args.backends.split(",")
    for c in configs:
        if c not in TRANSPORTS:
            ap.error("--backends: %s is none of %s"
                     % (c, ", ".join(TRANSPORTS)))
    sizes = [int(s) for s in args.sizes.split(",")]
    print("# keepalive suspect %s ms, probe %s ms; --wait block; %d cores; "
          "load %s" % (os.environ.get("FTCOLL_SUSPECT_MS", "300"),
                       os.environ.get("FTCOLL_PROBE_MS", "600"),
                       os.cpu_count() or 1,
                       " ".join(open("/proc/loadavg").read().split()[:3])
                       if os.path.exists("/proc/loadavg") else "?"))
    if args.only != "shrink":
        print("## benchagree phases, us; %d iterations (+%d warm-up), rank "
              "%s killed at iteration iters/2; median over runs"
              % (args.iters, args.warmup,
                 "0" if args.victim == "first" else "n/2"))
        print("%-14s %3s %4s %10s %12s %10s %10s %10s %6s" % (
            "transport", "n", "runs", "before", "first(max)", "next(max)",
            "after", "allreduce", "ratio"))
        for name in configs:
            for n in sizes:
                agree_phases(args, name, n)
    if args.only != "agree":
        print("## SIGKILL -> every survivor holds the shrunk group, ms; "
              "median [min-max] over runs")
        print("%-14s %3s %4s %s" % ("transport", "n", "runs", "kill->shrunk"))
        for name in configs:
            for n in sizes:
                shrink_time(args, name, n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
