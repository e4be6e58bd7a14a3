#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The uniform allreduce against the plain one over real processes (a
benchmark, not a test; docs/ulfm.md, "Uniform allreduce").

  python3 bench/uniform_real.py --build build [--pairs 5] [--sizes 4,8]
      [--backends zmq:tcp,ucx:sm,libfabric:shm] [--iters 500]
      [--warmup 50] [--bytes 8]

Each pair is two jobs of ftcoll-bench --coll allreduce (corrected, f = 1,
one size, failure-free) under ftcoll-run, one plain and one with
--uniform, started back to back; the order alternates from pair to pair,
so that a change of the machine's load during a pair weighs on both modes
alike. From each job: rank 0's "latency" line, the median of all ranks'
operations (p50_us). Printed per transport and n: the medians over pairs
of each mode's p50, and the median, min and max of the per-pair ratios
uniform / plain. On a host whose cores the ranks share, one pair means
little: quote the median over pairs and the range, never one job.

The core's keepalive is 300 ms / 600 ms unless FTCOLL_SUSPECT_MS,
FTCOLL_PROBE_MS say otherwise (as bench/ulfm_real.py); ranks sleep when
idle (--wait block).
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_backends import TRANSPORTS, json_lines  # noqa: E402

def job(args, backend, env, n, uniform):
    """p50 latency of one job in us, or None (and why) if it failed."""
    cmd = [os.path.join(args.build, "backends/bootstrap/ftcoll-run"),
           "-n", str(n), "--timeout", "300", "--backend", backend, "--",
           os.path.join(args.build, "bench/ftcoll-bench"),
           "--coll", "allreduce", "--sizes", str(args.bytes),
           "--iters", str(args.iters), "--warmup", str(args.warmup),
           "--json"] + (["--uniform"] if uniform else [])
    e = dict(os.environ)
    e.setdefault("FTCOLL_SUSPECT_MS", "300")
    e.setdefault("FTCOLL_PROBE_MS", "600")
    e.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    lat, modes = None, set()
    for rank, d in json_lines(p.stdout):
        if d.get("kind") == "latency" and rank == 0:
            lat = d["p50_us"]
        elif "completed" in d:
            modes.add(bool(d.get("uniform")))
    if p.returncode != 0 or lat is None:
        return None, "exit %d: %s" % (p.returncode,
                                      (p.stderr.strip().splitlines()
                                       or ["no output"])[-1])
    if modes != {uniform}:
        return None, "the ranks did not all run the %s mode" % (
            "uniform" if uniform else "plain")
    return lat, None


def measure(args, name, n):
    backend, env = TRANSPORTS[name]
    plain, uni, ratios = [], [], []
    for k in range(args.pairs):
        got = {}
        for uniform in ((False, True) if k % 2 == 0 else (True, False)):
            got[uniform], why = job(args, backend, env, n, uniform)
            if why:
                print("  %s n=%d: pair %d skipped: %s" % (name, n, k, why))
                break
        if len(got) != 2 or None in got.values():
            continue
        plain.append(got[False])
        uni.append(got[True])
        ratios.append(got[True] / got[False])
    med = statistics.median
    if not ratios:
        print("%-14s %3d %5d  (no pair completed)" % (name, n, 0))
        return
    print("%-14s %3d %5d %10.1f %10.1f %7.2f  [%.2f-%.2f]  %s" % (
        name, n, len(ratios), med(plain), med(uni), med(ratios),
        min(ratios), max(ratios), " ".join("%.2f" % r for r in ratios)))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--bytes", type=int, default=8)
    ap.add_argument("--sizes", default="4,8")
    ap.add_argument("--backends", default="zmq:tcp,ucx:sm,libfabric:shm")
    args = ap.parse_args()
    for c in args.backends.split(","):
        if c not in TRANSPORTS:
            ap.error("--backends: %s is none of %s"
                     % (c, ", ".join(TRANSPORTS)))
    for what, v in (("--pairs", args.pairs), ("--iters", args.iters),
                    ("--bytes", args.bytes)):
        if v < 1:
            ap.error("%s: at least 1, got %d" % (what, v))
    sizes = []
    for s in args.sizes.split(","):
        if not s.isdigit() or int(s) < 2:
            ap.error("--sizes: ranks >= 2, got '%s'" % s)
        sizes.append(int(s))
    print("# uniform vs plain corrected allreduce (f = 1), %d bytes, %d "
          "iterations (+%d warm-up), %d pairs; keepalive %s / %s ms; "
          "%d cores; load %s" % (
              args.bytes, args.iters, args.warmup, args.pairs,
              os.environ.get("FTCOLL_SUSPECT_MS", "300"),
              os.environ.get("FTCOLL_PROBE_MS", "600"), os.cpu_count() or 1,
              " ".join(open("/proc/loadavg").read().split()[:3])
              if os.path.exists("/proc/loadavg") else "?"))
    print("%-14s %3s %5s %10s %10s %7s  %s" % (
        "transport", "n", "pairs", "plain p50", "uniform", "ratio",
        "[min-max]  per pair"))
    for name in args.backends.split(","):
        for n in sizes:
            measure(args, name, n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
