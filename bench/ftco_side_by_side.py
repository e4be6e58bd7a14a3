#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ftco beside the plain tree and the corrected family on real processes,
on one tree, interleaved (docs/ftco.md, "On real processes").

  python3 bench/ftco_side_by_side.py --build build [--rounds 5]
      [--backends zmq:tcp,ucx:sm,libfabric:shm] [--ns 8,16]
      [--tree binomial] [--iters 2000] [--ack-timeout-us 250000]
      [--parts free,hop,kill,stop,raw] [--base BUILD]

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
      what one ACK costs on the wire, the floor; a job of its own, with a
      raw endpoint of its own beside the backend's). The paper's claim:
      ftco - tree <= one ACK latency, which is one ftcoll message: hop
      below. A job that fails at setup is retried (4 tries).
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
hop   One ftcoll hop, the yardstick of the paper's claim (docs/ftco.md,
      "One ACK latency"): an ACK is one ftcoll message, so what it costs
      is one message through ftcoll's own stack, sender's and
      receiver's, of which the transport's raw one-way is the floor.
      Measured as half the p50 of a 2-rank plain tree allreduce (the
      child's DATA up, the root's result down: a ping-pong through
      ftcoll, as the raw one-way is half a ping-pong of the transport),
      --wait spin and --wait block, jobs of their own in the same
      rounds. With free, each n's row then compares ftco - tree, round
      by round, with the hop of its own wait mode (spin where the ranks
      spin, n <= cores, block elsewhere and on ZeroMQ) and with the raw
      one-way: "<= hop in k/R rounds" and the ratio (ftco - tree) / hop.
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


def wait_mode(backend, n):
    """How the ranks of an n-process job wait: spin when each has a core
    (ZeroMQ never: its I/O thread needs one), else block."""
    return "spin" if n <= (os.cpu_count() or 1) and backend != "zmq" \
        else "block"


def hop_cells(backend):
    """The hop's jobs: a 2-rank plain tree allreduce per wait mode."""
    modes = ["block"] if backend == "zmq" else ["spin", "block"]
    return [(2, ("hop " + m, ALGOS[0][1], m)) for m in modes]


def fault_free(args, rng, name, backend, env, ns, raw_only=False,
               hop=False):
    algos = ALGOS + ([("ftco base", ALGOS[-1][1])] if args.base else [])
    p50 = {(n, a): [] for n in ns for a, _ in algos}
    raw, raw_avg = [], []
    hops = {"spin": [], "block": []}
    per_round = {}
    cells = [] if raw_only else [(n, a + (wait_mode(backend, n),))
                                 for n in ns for a in algos]
    cells.append((2, ("raw", [], "block")))
    if hop:
        cells += hop_cells(backend)
    for r, (n, (aname, extra, wait)) in interleaved(rng, args.rounds, cells):
        if aname.startswith("hop "):
            rows = run_retry(args, backend, env, 2,
                             ["--iters", args.iters, "--warmup", 200,
                              "--quiet", "--sizes", 8, "--wait", wait,
                              "--tree", args.tree] + extra, "coll")
            if rows is not None:
                hops[wait].append(rows["coll"]["p50"] / 2)
                per_round[(r, "hop", wait)] = rows["coll"]["p50"] / 2
            continue
        if aname == "raw":
            rows = run_retry(args, backend, env, 2,
                             ["--coll", "none", "--pingpong", "--iters",
                              args.iters, "--warmup", 200, "--quiet",
                              "--sizes", 8, "--wait", "block"], "pingpong")
            if rows is not None:
                raw.append(rows["pingpong"]["p50"])
                raw_avg.append(rows["pingpong"]["avg"])
                per_round[(r, "raw")] = rows["pingpong"]["p50"]
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
    hop_text = "; ".join("hop (%s) %s us" % (m, fmt(hops[m], 6, 2))
                         for m in ("spin", "block") if hops[m])
    if raw_only:
        print("%-14s raw one-way p50 %s us, mean %s us%s" % (
            name, fmt(raw, 6, 1), fmt(raw_avg, 6, 1),
            "; " + hop_text if hop_text else ""))
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
        if hop:
            w = wait_mode(backend, n)
            base += bar_text(args, per_round, n, w, hops[w])
        print("%-14s n=%-2d allreduce 8 B p50 us: %s; ftco-tree %s us, "
              "ftco/tree %s, ftco/corrected %s%s; raw one-way p50 %s us, "
              "mean %s us" % (
                  name, n, "; ".join("%s %s" % (a, fmt(p50[(n, a)], 6, 2))
                                     for a, _ in algos),
                  fmt(diff, 6, 2), fmt(ratio, 4, 2), fmt(ratio_c, 4, 2),
                  base, fmt(raw, 6, 1), fmt(raw_avg, 6, 1)))
        sys.stdout.flush()


def bar_text(args, per_round, n, wait, hop_wait):
    """The paper's claim at n, round by round: ftco - tree against the
    hop of the same wait mode and against the raw one-way."""
    vs_hop, vs_raw, within_hop, within_raw, rounds = [], [], 0, 0, 0
    for r in range(args.rounds):
        f = per_round.get((r, n, "ftco"))
        t = per_round.get((r, n, "tree"))
        h = per_round.get((r, "hop", wait))
        w = per_round.get((r, "raw"))
        if f is None or t is None:
            continue
        if h is not None:
            rounds += 1
            within_hop += f - t <= h
            vs_hop.append((f - t) / h)
            if w is not None and w > 0:
                within_raw += f - t <= w
                vs_raw.append((f - t) / w)
    return ("; hop (%s) %s us; ftco-tree <= hop in %d/%d rounds, "
            "(ftco-tree)/hop %s; <= raw in %d/%d, (ftco-tree)/raw %s" % (
                wait, fmt(hop_wait, 6, 2),
                within_hop, rounds, fmt(vs_hop, 5, 2), within_raw,
                len(vs_raw), fmt(vs_raw, 5, 1)))


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
        if p not in ("free", "hop", "kill", "stop", "raw"):
            ap.error("--parts: free, hop, kill, stop or raw, got %s" % p)
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
            fault_free(args, rng, name, backend, env, ns,
                       hop="hop" in parts)
        elif "raw" in parts or "hop" in parts:
            fault_free(args, rng, name, backend, env, ns, raw_only=True,
                       hop="hop" in parts)
        for kind in ("kill", "stop"):
            if kind in parts:
                faulted(args, rng, name, backend, env, ns, kind)
        print("# load after %s: %s" % (name, " ".join(
            "%.2f" % x for x in os.getloadavg())))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
