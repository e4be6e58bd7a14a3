#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ftco beside the plain tree and the corrected family on real processes
(docs/ftco.md, "On real processes"), interleaved.

  python3 bench/ftco_side_by_side.py --build build [--rounds 5]
      [--backends zmq:tcp,ucx:sm,libfabric:shm] [-n 8] [--iters 2000]

1. Fault-free 8-byte allreduce, p50 us: each round runs tree, corrected
   f=1 and ftco once each, in a fresh random order, so that the machine's
   load falls on all three alike; the ratios ftco/tree and
   ftco/corrected are taken within a round, and their median is printed.
2. A SIGKILL tied to progress (rank 5 kills itself as iteration 300
   starts; ftco and corrected f=1, interleaved the same way): ms from the
   kill to the last survivor's delivery of that iteration.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backends", default="zmq:tcp,ucx:sm,libfabric:shm")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n = args.n
    print("# ftco_side_by_side: n = %d, %d rounds, %d cores, load %s"
          % (n, args.rounds, os.cpu_count() or 1,
             " ".join("%.2f" % x for x in os.getloadavg())))
    for name in args.backends.split(","):
        if name not in TRANSPORTS:
            ap.error("unknown backend:transport %s" % name)
        backend, env = TRANSPORTS[name]
        wait = "spin" if n <= (os.cpu_count() or 1) and backend != "zmq" \
            else "block"
        p50 = {a: [] for a, _ in ALGOS}
        ratio_tree, ratio_corr = [], []
        for _ in range(args.rounds):
            order = list(ALGOS)
            rng.shuffle(order)
            got = {}
            for aname, extra in order:
                rows, _, _, p = run(args.build, backend, env, n,
                                    ["--iters", args.iters, "--warmup", 200,
                                     "--quiet", "--sizes", 8, "--wait",
                                     wait] + extra)
                if "coll" not in rows:
                    print("job failed (%s): %s" % (aname, p.stderr[-400:]),
                          file=sys.stderr)
                    continue
                got[aname] = rows["coll"]["p50"]
                p50[aname].append(got[aname])
            if "ftco" in got and "tree" in got:
                ratio_tree.append(got["ftco"] / got["tree"])
            if "ftco" in got and "corrected f=1" in got:
                ratio_corr.append(got["ftco"] / got["corrected f=1"])
        print("%-14s allreduce 8 B p50 us: %s; ftco/tree %s, "
              "ftco/corrected %s" % (
                  name, "; ".join("%s %s" % (a, fmt(p50[a], 6, 1))
                                  for a, _ in ALGOS),
                  fmt(ratio_tree, 4, 2), fmt(ratio_corr, 4, 2)))
        sys.stdout.flush()
        kill = {"ftco": [], "corrected f=1": []}
        for _ in range(args.rounds):
            order = [a for a in ALGOS if a[0] in kill]
            rng.shuffle(order)
            for aname, extra in order:
                _, summaries, events, p = run(
                    args.build, backend, env, n,
                    ["--iters", 400, "--warmup", 0, "--quiet", "--kill",
                     "5@300"] + extra, run_args=["--may-fail", "5"])
                d = kill_times(summaries, events, 5)
                if d is None:
                    print("job failed (%s, kill): %s" % (aname,
                                                         p.stderr[-400:]),
                          file=sys.stderr)
                    continue
                kill[aname].append(d[0])
        print("%-14s SIGKILL rank 5 at iteration 300, ms to the last "
              "delivery: %s" % (name, "; ".join(
                  "%s %s" % (a, fmt(v, 6, 1)) for a, v in kill.items())))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
