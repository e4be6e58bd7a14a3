#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Failure-free agreement against the 8-byte corrected allreduce over real
processes, for each failure-free round of the agreement side by side (a
benchmark, not a test; docs/ulfm.md, "Choosing the failure-free round").

  python3 bench/agree_variants_real.py [--build build]
      [--rounds-of rd2,rd4,tree] [--rounds 5] [--sizes 8,16]
      [--backends zmq:tcp,ucx:sm,...] [--iters 200] [--warmup 10]

One build: the round is the caller's choice at run time (ftcoll-bench
--agree-round, which sets it on the group at every rank). A job is
ftcoll-bench --coll agree --with-allreduce --agree-round R (bench_ulfm.c)
with no fault: iteration g runs one agreement, then one 8-byte corrected
allreduce (f = 1) on the same group, each timed apart, so the ratio
agreement / allreduce is taken within one job, under one load. A round
runs one job of every choice, in an order that rotates from round to
round, so that no choice always goes first. Per job: the mean over the
ranks of mean agreement / mean allreduce over the iterations after the
warm-up (bench/ulfm_real.py's "ratio"), and the mean agreement in us.
Printed per transport, n and choice: the median over rounds of both, and
the range of the ratio; then each choice's ratio against rd2's in the
same round (geometric mean over rounds), which the load moves less.

The core's keepalive is 300 ms / 600 ms unless set (as bench/ulfm_real.py).
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_backends import TRANSPORTS, json_lines  # noqa: E402

def job(args, choice, backend, env, n):
    """(ratio, mean agreement us), or (None, why)."""
    cmd = [os.path.join(args.build, "backends/bootstrap/ftcoll-run"), "-n",
           str(n), "--timeout", "300", "--backend", backend, "--",
           os.path.join(args.build, "bench/ftcoll-bench"), "--coll", "agree",
           "--with-allreduce", "--agree-round", choice, "--iters",
           str(args.iters), "--warmup", str(args.warmup), "--quiet"]
    e = dict(os.environ)
    e.setdefault("FTCOLL_SUSPECT_MS", "300")
    e.setdefault("FTCOLL_PROBE_MS", "600")
    e.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    ulfm = {}
    for _, d in json_lines(p.stdout):
        if "ulfm" in d:
            ulfm[d["rank"]] = d["ulfm"]
    ran = {u.get("agree_round") for u in ulfm.values()}
    if ulfm and ran != {choice}:
        return None, "ranks ran %s, not %s" % (sorted(map(str, ran)), choice)
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


def load():
    if not os.path.exists("/proc/loadavg"):
        return "?"
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build",
                    help="the build directory (one build runs every choice)")
    ap.add_argument("--rounds-of", default="rd2,rd4,tree",
                    help="comma-separated failure-free rounds to compare "
                         "(ftcoll-bench --agree-round)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--sizes", default="8,16")
    ap.add_argument("--backends", default="zmq:tcp,ucx:sm,libfabric:shm")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.build, "bench/ftcoll-bench")):
        ap.error("--build: %s has no bench/ftcoll-bench" % args.build)
    choices = args.rounds_of.split(",")
    for c in choices:
        if c not in ("rd2", "rd4", "tree"):
            ap.error("--rounds-of: %s is none of rd2, rd4, tree" % c)
    if len(set(choices)) != len(choices):
        ap.error("--rounds-of: %s names a round twice" % args.rounds_of)
    for c in args.backends.split(","):
        if c not in TRANSPORTS:
            ap.error("--backends: %s is none of %s"
                     % (c, ", ".join(TRANSPORTS)))
    if args.rounds < 1 or args.iters <= args.warmup:
        ap.error("--rounds >= 1 and --iters > --warmup")
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        ap.error("--sizes: comma-separated whole numbers, not %s" % args.sizes)
    if any(n < 2 for n in sizes):
        ap.error("--sizes: every n at least 2")
    print("# failure-free agreement / 8-byte corrected allreduce, same job;"
          " %d iterations (%d warm-up), %d rounds; %d cores; load %s" % (
              args.iters, args.warmup, args.rounds, os.cpu_count() or 1,
              load()))
    print("%-14s %3s %-6s %6s %7s  %-13s %9s  %s" % (
        "transport", "n", "round", "jobs", "ratio", "[min-max]",
        "agree us", "vs rd2"))
    for name in args.backends.split(","):
        backend, env = TRANSPORTS[name]
        for n in sizes:
            got = {c: [] for c in choices}
            by_round = []   # per round: {choice: ratio}
            for k in range(args.rounds):
                order = choices[k % len(choices):] + choices[:k % len(choices)]
                this = {}
                for c in order:
                    res, why = job(args, c, backend, env, n)
                    if why:
                        print("  %s n=%d %s: job skipped: %s"
                              % (name, n, c, why))
                        continue
                    got[c].append(res)
                    this[c] = res[0]
                by_round.append(this)
            for c in choices:
                if not got[c]:
                    print("%-14s %3d %-6s %6d  (none)" % (name, n, c, 0))
                    continue
                rs = [r for r, _ in got[c]]
                rel = [rd[c] / rd["rd2"] for rd in by_round
                       if c in rd and "rd2" in rd]
                vs = ("%.2f" % statistics.geometric_mean(rel)) if rel else "-"
                print("%-14s %3d %-6s %6d %7.2f  [%.2f-%.2f]  %9.1f  %s" % (
                    name, n, c, len(rs), statistics.median(rs), min(rs),
                    max(rs), statistics.median(a for _, a in got[c]), vs))
            sys.stdout.flush()
    print("# load at the end %s" % load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
