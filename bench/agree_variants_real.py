#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Failure-free agreement against the 8-byte corrected allreduce over real
processes, for several builds of the library side by side (a benchmark,
not a test; docs/ulfm.md, "Cost").

  python3 bench/agree_variants_real.py --builds build,build-r16
      [--rounds 5] [--sizes 8,16] [--backends zmq:tcp,ucx:sm,...]
      [--iters 200] [--warmup 10]

Each build is one variant of the agreement's failure-free round (e.g. a
build configured with -Dc_args=-DFTC_AGREE_EARLY_RADIX=16); its name is
printed as given. A job is ftcoll-bench --coll agree --with-allreduce
(bench_ulfm.c) with no fault: iteration g runs one agreement, then one
8-byte corrected allreduce (f = 1) on the same group, each timed apart,
so the ratio agreement / allreduce is taken within one job, under one
load. A round runs one job of every build, in an order that rotates from
round to round, so that no build always goes first. Per job: the mean
over survivors of mean agreement / mean allreduce over the iterations
after the warm-up (bench/ulfm_real.py's "ratio"), and the mean agreement
in us. Printed per transport, n and build: the median over rounds of
both, and the range of the ratio.

The core's keepalive is 300 ms / 600 ms unless set (as bench/ulfm_real.py).
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_backends import TRANSPORTS, json_lines  # noqa: E402

def job(args, build, backend, env, n):
    """(ratio, mean agreement us), or (None, why)."""
    cmd = [os.path.join(build, "backends/bootstrap/ftcoll-run"), "-n", str(n),
           "--timeout", "300", "--backend", backend, "--",
           os.path.join(build, "bench/ftcoll-bench"), "--coll", "agree",
           "--with-allreduce", "--iters", str(args.iters), "--warmup",
           str(args.warmup), "--quiet"]
    e = dict(os.environ)
    e.setdefault("FTCOLL_SUSPECT_MS", "300")
    e.setdefault("FTCOLL_PROBE_MS", "600")
    e.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    ulfm = {}
    for _, d in json_lines(p.stdout):
        if "ulfm" in d:
            ulfm[d["rank"]] = d["ulfm"]
    if p.returncode != 0 or len(ulfm) != n:
        return None, "exit %d, %d of %d ranks' results: %s" % (
            p.returncode, len(ulfm), n,
            (p.stderr.strip().splitlines() or ["no output"])[-1])
    lo = args.warmup
    ratios, agree = [], []
    for u in ulfm.values():
        a = statistics.mean(u["agree_ns"][lo:]) / 1e3
        r = statistics.mean(u["allreduce_ns"][lo:]) / 1e3
        ratios.append(a / r)
        agree.append(a)
    return (statistics.mean(ratios), statistics.mean(agree)), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", required=True,
                    help="comma-separated build directories, one a variant")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--sizes", default="8,16")
    ap.add_argument("--backends", default="zmq:tcp,ucx:sm,libfabric:shm")
    args = ap.parse_args()
    builds = args.builds.split(",")
    for b in builds:
        if not os.path.exists(os.path.join(b, "bench/ftcoll-bench")):
            ap.error("--builds: %s has no bench/ftcoll-bench" % b)
    for c in args.backends.split(","):
        if c not in TRANSPORTS:
            ap.error("--backends: %s is none of %s"
                     % (c, ", ".join(TRANSPORTS)))
    if args.rounds < 1 or args.iters <= args.warmup:
        ap.error("--rounds >= 1 and --iters > --warmup")
    sizes = [int(s) for s in args.sizes.split(",")]
    print("# failure-free agreement / 8-byte corrected allreduce, same job;"
          " %d iterations (%d warm-up), %d rounds; %d cores; load %s" % (
              args.iters, args.warmup, args.rounds, os.cpu_count() or 1,
              " ".join(open("/proc/loadavg").read().split()[:3])
              if os.path.exists("/proc/loadavg") else "?"))
    print("%-14s %3s %-12s %6s %7s  %-13s %s" % (
        "transport", "n", "build", "jobs", "ratio", "[min-max]",
        "agree us"))
    for name in args.backends.split(","):
        backend, env = TRANSPORTS[name]
        for n in sizes:
            got = {b: [] for b in builds}
            for k in range(args.rounds):
                order = builds[k % len(builds):] + builds[:k % len(builds)]
                for b in order:
                    res, why = job(args, b, backend, env, n)
                    if why:
                        print("  %s n=%d %s: job skipped: %s"
                              % (name, n, b, why))
                        continue
                    got[b].append(res)
            for b in builds:
                if not got[b]:
                    print("%-14s %3d %-12s %6d  (none)" % (name, n, b, 0))
                    continue
                rs = [r for r, _ in got[b]]
                print("%-14s %3d %-12s %6d %7.2f  [%.2f-%.2f]  %9.1f" % (
                    name, n, os.path.basename(b.rstrip("/")), len(rs),
                    statistics.median(rs), min(rs), max(rs),
                    statistics.median(a for _, a in got[b])))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
