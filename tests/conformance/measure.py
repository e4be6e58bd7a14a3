#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The numbers for the performance note (not a test).

  python3 tests/conformance/measure.py --build build [--repeat 3]

1. Fault-free 8-byte allreduce latency over ZeroMQ at n = 2, 4, 8 for
   tree, corrected f=0 and corrected f=1 (checked and opportunistic
   correction), each job also measuring raw ZeroMQ ping-pong first
   (ftcoll-bench --pingpong), so every row has its own baseline.
2. Time from a failure to the delivery of the interrupted allreduce at
   every survivor: a leaf and the first root killed as an iteration starts,
   the root killed inside one, and a SIGSTOPped rank found by the core's
   timeouts or by ZMTP heartbeats.

Each configuration runs --repeat times; the median and the range are
printed. The machine's load matters: run it on a quiet machine.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"^\[(\d+)\] (.*)$")


def run(b, n, bench_args, env=None, run_args=()):
    cmd = [os.path.join(b, "backends/bootstrap/ftcoll-run"), "-n", str(n),
           "--timeout", "300"] + list(run_args) + [
        "--", os.path.join(b, "bench/ftcoll-bench")] + [str(a) for a in bench_args]
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    rows, summaries, events = {}, {}, {}
    kind = None
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        text = m.group(2)
        if text.startswith("# raw ZeroMQ"):
            kind = "pingpong"
        elif text.startswith("# ftcoll-bench"):
            kind = "coll"
        elif text.startswith("{"):
            d = json.loads(text)
            if "event" in d:
                events[d["rank"]] = d
            elif "completed" in d:
                summaries[d["rank"]] = d
        elif kind and re.match(r"^\d+\s", text):
            f = text.split()
            rows[kind] = {"avg": float(f[1]), "p50": float(f[4]),
                          "p99": float(f[5])}
    return rows, summaries, events, p


def fmt(xs):
    if not xs:
        return "n/a"
    return "%7.1f [%6.1f-%7.1f]" % (statistics.median(xs), min(xs), max(xs))


def latency(args):
    print("## Fault-free 8-byte allreduce (int64 sum), µs per operation; "
          "median [min-max] of %d jobs" % args.repeat)
    print("## raw = ZeroMQ PAIR ping-pong one-way (round trip / 2) between "
          "ranks 0 and 1 in the same jobs")
    configs = [("tree", ["--algo", "tree", "-f", 0]),
               ("corrected f=0", ["-f", 0]),
               ("corrected f=1 checked", ["-f", 1]),
               ("corrected f=1 opportunistic",
                ["-f", 1, "--correction", "opportunistic"])]
    print("%-3s %-28s %-26s %-26s %-26s" % ("n", "algorithm", "avg",
                                            "p50", "raw zmq p50"))
    for n in (2, 4, 8):
        for name, extra in configs:
            avg, p50, raw = [], [], []
            for _ in range(args.repeat):
                rows, _, _, p = run(args.build, n,
                                    ["--pingpong", "--iters", args.iters,
                                     "--warmup", 200, "--quiet"] + extra)
                if "coll" not in rows:
                    print("job failed:", p.stderr[-500:], file=sys.stderr)
                    continue
                avg.append(rows["coll"]["avg"])
                p50.append(rows["coll"]["p50"])
                raw.append(rows["pingpong"]["p50"])
            print("%-3d %-28s %-26s %-26s %-26s" % (n, name, fmt(avg),
                                                    fmt(p50), fmt(raw)))
            sys.stdout.flush()


def to_delivery(summaries, events, victim):
    """ms from the victim's event to the last survivor's delivery of that
    iteration, and to the first's."""
    ev = events.get(victim)
    if ev is None:
        return None
    ts = [t for r, s in summaries.items() if r != victim
          for it, t in s["marks"] if it == ev["iter"]]
    if not ts:
        return None
    return (max(ts) - ev["t_ns"]) / 1e6, (min(ts) - ev["t_ns"]) / 1e6


def failures(args):
    n = 8
    print()
    print("## Failure to delivery at every survivor, allreduce corrected f=1, "
          "n=%d, ms; median [min-max] of %d jobs" % (n, args.repeat))
    print("## (last survivor / first survivor; includes the operation itself)")
    quick = {"FTCOLL_SUSPECT_MS": "50", "FTCOLL_PROBE_MS": "100",
             "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}
    hb = {"FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000",
          "FTCOLL_ZMQ_HEARTBEAT_MS": "100",
          "FTCOLL_ZMQ_HEARTBEAT_TIMEOUT_MS": "300"}
    cases = [
        ("SIGKILL leaf (rank 7) as iteration 300 starts", 7,
         ["--kill", "7@300"], None),
        ("SIGKILL first root (rank 0) as iteration 300 starts", 0,
         ["--kill", "0@300"], None),
        ("SIGKILL first root (rank 0) inside iteration 300", 0,
         ["--crash", "0@300:0"], None),
        ("SIGKILL leaf (rank 7) inside iteration 300", 7,
         ["--crash", "7@300:0"], None),
        ("SIGSTOP rank 5, core timeouts 50+100 ms", 5,
         ["--stop", "5@300"], quick),
        ("SIGSTOP rank 5, heartbeat 100/300 ms", 5, ["--stop", "5@300"], hb),
    ]
    for name, victim, extra, env in cases:
        last, first = [], []
        for _ in range(args.repeat):
            _, summaries, events, p = run(
                args.build, n, ["-f", 1, "--iters", 400, "--warmup", 0,
                                "--quiet"] + extra,
                env=env, run_args=["--may-fail", str(victim)])
            d = to_delivery(summaries, events, victim)
            if d is None:
                print("job failed:", p.stderr[-500:], file=sys.stderr)
                continue
            last.append(d[0])
            first.append(d[1])
        print("%-55s last %s  first %s" % (name, fmt(last), fmt(first)))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--only", choices=["latency", "failures"])
    args = ap.parse_args()
    if args.only != "failures":
        latency(args)
    if args.only != "latency":
        failures(args)


if __name__ == "__main__":
    main()
