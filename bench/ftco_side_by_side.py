#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ftco beside the plain tree and the corrected family on real processes,
on one tree, interleaved (docs/ftco.md, "On real processes").

  python3 bench/ftco_side_by_side.py --build build [--rounds 5]
      [--backends zmq:tcp,ucx:sm,libfabric:shm] [--ns 8,16]
      [--tree binomial] [--iters 2000] [--ack-timeout-us 250000]
      [--parts free,kill,stop,raw] [--base BUILD]

Every job runs ftcoll-bench with --tree (default binomial: the one tree
ftco, the plain tree family's reduce and bcast and the corrected
family's bcast all run, so the plain tree is ftco's tree without the
ACKs). Within a round the jobs of every (n, algorithm) pair run once each
in a fresh random order, so that the machine's load falls on all alike;
differences and ratios are taken within a round, and the median [min-max]
over the rounds is printed.

free  Fault-free 8-byte allreduce, p50 us: tree, corrected f=1 and ftco;
      and, in the same rounds, the transport's raw one-way latency between
      two processes (an n = 2 job of ftcoll-bench --coll none --pingpong,
      --wait block as the collectives here:
      what one ACK costs on the wire; a job of its own, with a raw
      endpoint of its own beside the backend's). The paper's claim: ftco - tree
      <= one ACK latency. A job that fails at setup is retried (4 tries).
      The raw p50 and mean both print: on shared memory most round trips
      find both processes running (sub-microsecond) and the rest wait
      for a descheduled one, which the collectives' p50 cannot avoid.
      With --base BUILD, a fourth job per (round, n), "ftco base": the
      same ftco job from another build (an earlier version, to measure a
      change): ftco base - tree and ftco / ftco base print per round too.
kill  A SIGKILL tied to progress (the last rank, a leaf of the binomial
      tree, kills itself as iteration 300 starts), ftco and corrected f=1,
      the core's keepalive at its defaults (100 + 200 ms): ms from the
      kill to the last survivor's delivery of that iteration, and to the
      first report of the victim by a survivor's backend.
raw   Only free's raw one-way jobs.
stop  A SIGSTOP, same rank and iteration, ftco with its per-message
      timeouts (--ack-timeout-us), the core's keepalive slowed to 5 s and
      ZeroMQ's heartbeats off, so that only ftco's own timeouts find it:
      ms from the stop to the last survivor's delivery, n side by side.
"""
import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_backends import TRANSPORTS, run, kill_times, fmt  # noqa: E402

ALGOS = [("tree", ["--algo", "tree", "-f", 0]),
         ("corrected f=1", ["--algo", "corrected", "-f", 1]),
         ("ftco", ["--algo", "ftco", "-f", 0])]
KILL_ALGOS = [a for a in ALGOS if a[0] != "tree"]
# Only ftco's timeouts may find a stopped process (the conformance suite's
# setting); UCX shared memory needs room in the stopped rank's FIFO.
SLOW = {"FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000",
        "FTCOLL_PROBE_BACKOFF": "0", "FTCOLL_ZMQ_HEARTBEAT_MS": "0",
        "UCX_MM_FIFO_SIZE": "1024"}


def interleaved(rng, rounds, cells):
    """Yield (round, cell) with every cell once per round, shuffled."""
    for r in range(rounds):
        order = list(cells)
        rng.shuffle(order)
        for c in order:
            yield r, c


def run_retry(args, backend, env, n, bench_args, want, build=None):
    """run() up to 4 times while the job fails at setup; rows or None."""
    for _ in range(4):
        rows, _, _, p = run(build or args.build, backend, env, n, bench_args)
        if want in rows:
            return rows
        print("job failed (n=%d, %s): %s" % (n, " ".join(map(str,
                                                              bench_args)),
                                             p.stderr[-300:]),
              file=sys.stderr)
    return None


def fault_free(args, rng, name, backend, env, ns, raw_only=False):
    algos = ALGOS + ([("ftco base", ALGOS[-1][1])] if args.base else [])
    p50 = {(n, a): [] for n in ns for a, _ in algos}
    raw, raw_avg = [], []
    per_round = {}
    cells = [] if raw_only else [(n, a) for n in ns for a in algos]
    cells.append((2, ("raw", [])))
    for r, (n, (aname, extra)) in interleaved(rng, args.rounds, cells):
        wait = "spin" if n <= (os.cpu_count() or 1) and backend != "zmq" \
            else "block"
        if aname == "raw":
            rows = run_retry(args, backend, env, 2,
                             ["--coll", "none", "--pingpong", "--iters",
                              args.iters, "--warmup", 200, "--quiet",
                              "--sizes", 8, "--wait", "block"], "pingpong")
            if rows is not None:
                raw.append(rows["pingpong"]["p50"])
                raw_avg.append(rows["pingpong"]["avg"])
            continue
        rows = run_retry(args, backend, env, n,
                         ["--iters", args.iters, "--warmup", 200, "--quiet",
                          "--sizes", 8, "--wait", wait, "--tree",
                          args.tree] + extra, "coll",
                         args.base if aname == "ftco base" else None)
        if rows is None:
            continue
        p50[(n, aname)].append(rows["coll"]["p50"])
        per_round[(r, n, aname)] = rows["coll"]["p50"]
    if raw_only:
        print("%-14s raw one-way p50 %s us, mean %s us" % (
            name, fmt(raw, 6, 1), fmt(raw_avg, 6, 1)))
        return
    for n in ns:
        diff, ratio, ratio_c, diff_b, ratio_b = [], [], [], [], []
        for r in range(args.rounds):
            f = per_round.get((r, n, "ftco"))
            t = per_round.get((r, n, "tree"))
            c = per_round.get((r, n, "corrected f=1"))
            b = per_round.get((r, n, "ftco base"))
            if f is not None and t is not None:
                diff.append(f - t)
                ratio.append(f / t)
            if f is not None and c is not None:
                ratio_c.append(f / c)
            if b is not None and t is not None:
                diff_b.append(b - t)
            if b is not None and f is not None:
                ratio_b.append(f / b)
        base = "; ftco base-tree %s us, ftco/ftco base %s" % (
            fmt(diff_b, 6, 1), fmt(ratio_b, 4, 2)) if args.base else ""
        print("%-14s n=%-2d allreduce 8 B p50 us: %s; ftco-tree %s us, "
              "ftco/tree %s, ftco/corrected %s%s; raw one-way p50 %s us, "
              "mean %s us" % (
                  name, n, "; ".join("%s %s" % (a, fmt(p50[(n, a)], 6, 1))
                                     for a, _ in algos),
                  fmt(diff, 6, 1), fmt(ratio, 4, 2), fmt(ratio_c, 4, 2),
                  base, fmt(raw, 6, 1), fmt(raw_avg, 6, 1)))
        sys.stdout.flush()


def faulted(args, rng, name, backend, env, ns, kind):
    algos = KILL_ALGOS if kind == "kill" else \
        [("ftco timeouts", ["--algo", "ftco", "-f", 0, "--ack-timeout-us",
                            args.ack_timeout_us])]
    e = dict(env)
    if kind == "stop":
        e.update(SLOW)
    last = {(n, a): [] for n in ns for a, _ in algos}
    report = {(n, a): [] for n in ns for a, _ in algos}
    how = {(n, a): set() for n in ns for a, _ in algos}
    cells = [(n, a) for n in ns for a in algos]
    for _, (n, (aname, extra)) in interleaved(rng, args.rounds, cells):
        victim = n - 1
        _, summaries, events, p = run(
            args.build, backend, e, n,
            ["--iters", 320, "--warmup", 0, "--quiet", "--tree", args.tree,
             "--%s" % kind, "%d@300" % victim] + extra,
            run_args=["--may-fail", str(victim)])
        d = kill_times(summaries, events, victim)
        if d is None:
            print("job failed (%s, %s, n=%d): %s" % (aname, kind, n,
                                                     p.stderr[-400:]),
                  file=sys.stderr)
            continue
        last[(n, aname)].append(d[0])
        if d[2] is not None:
            report[(n, aname)].append(d[2])
        how[(n, aname)].add(d[3])
    what = "SIGKILL" if kind == "kill" else "SIGSTOP"
    for n in ns:
        print("%-14s n=%-2d %s rank %d at iteration 300, ms to the last "
              "delivery: %s" % (name, n, what, n - 1, "; ".join(
                  "%s %s (backend report %s, %s)" % (
                      a, fmt(last[(n, a)], 6, 1), fmt(report[(n, a)], 6, 1),
                      ",".join(sorted(how[(n, a)])) or "-")
                  for a, _ in algos)))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--ns", default="8,16")
    ap.add_argument("--tree", default="binomial",
                    help="ftcoll-bench --tree (binomial, knomial, kary)")
    ap.add_argument("--ack-timeout-us", type=int, default=250000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backends", default="zmq:tcp,ucx:sm,libfabric:shm")
    ap.add_argument("--parts", default="free,kill,stop")
    ap.add_argument("--base", default=None,
                    help="another build whose ftco runs beside (free)")
    args = ap.parse_args()
    if args.base is not None and not os.path.isfile(
            os.path.join(args.base, "bench/ftcoll-bench")):
        ap.error("--base: no bench/ftcoll-bench in %s" % args.base)
    rng = random.Random(args.seed)
    try:
        ns = [int(x) for x in args.ns.split(",")]
    except ValueError:
        ap.error("--ns: comma-separated process counts, got %s" % args.ns)
    if not ns or min(ns) < 2:
        ap.error("--ns: every n must be at least 2")
    parts = args.parts.split(",")
    for p in parts:
        if p not in ("free", "kill", "stop", "raw"):
            ap.error("--parts: free, kill, stop or raw, got %s" % p)
    for name in args.backends.split(","):
        if name not in TRANSPORTS:
            ap.error("unknown backend:transport %s" % name)
    print("# ftco_side_by_side: n = %s, --tree %s, %d rounds, %d cores, "
          "load %s%s" % (args.ns, args.tree, args.rounds, os.cpu_count() or 1,
                         " ".join("%.2f" % x for x in os.getloadavg()),
                         ", base %s" % args.base if args.base else ""))
    for name in args.backends.split(","):
        backend, env = TRANSPORTS[name]
        if "free" in parts:
            fault_free(args, rng, name, backend, env, ns)
        elif "raw" in parts:
            fault_free(args, rng, name, backend, env, ns, raw_only=True)
        for kind in ("kill", "stop"):
            if kind in parts:
                faulted(args, rng, name, backend, env, ns, kind)
        print("# load after %s: %s" % (name, " ".join(
            "%.2f" % x for x in os.getloadavg())))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
