#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The numbers of the backends' performance notes (a benchmark, not a test).

  python3 bench/measure_backends.py --build build [--repeat 3]
      [--only latency|failures] [--backends zmq:tcp,ucx:sm,...]

1. Fault-free 8-byte allreduce latency (int64 sum) per backend and
   transport at n = 2, 4, 8: tree, corrected f=0, corrected f=1 (checked
   correction, the default). Every job first measures the raw transport's
   one-way latency between ranks 0 and 1 (ftcoll-bench --pingpong: ZeroMQ
   PAIR, UCP active messages, a libfabric RDM endpoint), so every row has
   its own floor from the same run. Ranks spin (--wait spin) when each
   has a core of its own (n <= cores), else they sleep when idle (--wait
   block); ZeroMQ always sleeps (its I/O thread needs the core).
2. Time from a SIGKILL to every survivor's delivery of the interrupted
   allreduce (corrected f=1, n=8), per backend and transport, once with
   the core's keepalive at its defaults (suspect 100 ms + probe 200 ms)
   and once slowed to 5 s so that only the backend's own report (ZeroMQ
   disconnect, UCX endpoint error callback, libfabric process monitor or
   CQ error) can end it quickly; plus when the backend itself reported
   the victim, and how. A SIGSTOPped rank is found by the keepalive only.

Each configuration runs --repeat times; the median [min-max] is printed.
Numbers depend on the machine's load: run it on a quiet machine, and
quote the configuration line it prints with them.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"^\[(\d+)\] (.*)$")

TRANSPORTS = {
    "zmq:tcp": ("zmq", {}),
    "ucx:tcp": ("ucx", {"UCX_TLS": "tcp"}),
    "ucx:sm": ("ucx", {"UCX_TLS": "sm", "UCX_MM_ERROR_HANDLING": "y",
                       "UCX_KEEPALIVE_INTERVAL": "100ms"}),
    "ucx:posix": ("ucx", {"UCX_TLS": "posix,cma,self",
                          "UCX_MM_ERROR_HANDLING": "y",
                          "UCX_KEEPALIVE_INTERVAL": "100ms"}),
    "libfabric:tcp": ("libfabric", {"FI_PROVIDER": "tcp;ofi_rxm"}),
    "libfabric:shm": ("libfabric", {"FI_PROVIDER": "shm"}),
    # Failures only: without the process monitor, what the provider's CQ
    # reports (if anything) and the core's keepalive are all there is, as
    # for a peer on another host.
    "libfabric:tcp-nopid": ("libfabric", {"FI_PROVIDER": "tcp;ofi_rxm",
                                          "FTCOLL_OFI_PID_MONITOR": "0"}),
    "libfabric:shm-nopid": ("libfabric", {"FI_PROVIDER": "shm",
                                          "FTCOLL_OFI_PID_MONITOR": "0"}),
}
FAILURES_ONLY = ("libfabric:tcp-nopid", "libfabric:shm-nopid")


JSON_LINE = re.compile(r"^\[(\d+)\] (\{.*\})\s*$")


def json_lines(text):
    """(rank, object) for each "[rank] {json}" line of a job's output;
    lines that are not one (text, cut JSON) are skipped."""
    for line in text.splitlines():
        m = JSON_LINE.match(line)
        if not m:
            continue
        try:
            yield int(m.group(1)), json.loads(m.group(2))
        except ValueError:
            continue


def run(build, backend, env, n, bench_args, run_args=()):
    cmd = [os.path.join(build, "backends/bootstrap/ftcoll-run"), "-n", str(n),
           "--timeout", "300", "--clock", "ready", "--backend", backend] \
        + list(run_args) + ["--", os.path.join(build, "bench/ftcoll-bench")] \
        + [str(a) for a in bench_args]
    e = dict(os.environ)
    e.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    rows, summaries, events = {}, {}, {}
    kind = None
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        text = m.group(2)
        if text.startswith("# raw "):
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


def fmt(xs, w=7, prec=2):
    if not xs:
        return "n/a"
    return "%*.*f [%.*f-%.*f]" % (w, prec, statistics.median(xs), prec,
                                  min(xs), prec, max(xs))


def latency(args, configs):
    cores = os.cpu_count() or 1
    print("## Fault-free 8-byte allreduce, p50 us per operation; median "
          "[min-max] of %d jobs x %d iterations" % (args.repeat, args.iters))
    print("## raw = the transport's own ping-pong one-way p50 (round trip "
          "/ 2) in the same jobs")
    algos = [("tree", ["--algo", "tree", "-f", 0]),
             ("corrected f=0", ["-f", 0]),
             ("corrected f=1", ["-f", 1])]
    print("%-14s %-2s %-5s %-14s %-24s %-24s" % (
        "transport", "n", "wait", "algorithm", "allreduce p50", "raw p50"))
    for name in configs:
        if name in FAILURES_ONLY:
            continue
        backend, env = TRANSPORTS[name]
        for n in (2, 4, 8):
            wait = "spin" if n <= cores and backend != "zmq" else "block"
            for aname, extra in algos:
                p50, raw = [], []
                for _ in range(args.repeat):
                    rows, _, _, p = run(
                        args.build, backend, env, n,
                        ["--pingpong", "--iters", args.iters, "--warmup",
                         200, "--quiet", "--wait", wait] + extra)
                    if "coll" not in rows or "pingpong" not in rows:
                        print("job failed: %s" % p.stderr[-400:],
                              file=sys.stderr)
                        continue
                    p50.append(rows["coll"]["p50"])
                    raw.append(rows["pingpong"]["p50"])
                print("%-14s %-2d %-5s %-14s %-24s %-24s" % (
                    name, n, wait, aname, fmt(p50), fmt(raw)))
                sys.stdout.flush()


def kill_times(summaries, events, victim):
    """(ms to the last survivor's delivery, ms to the first's, ms to the
    first backend report of the victim or None, how it was reported)."""
    ev = events.get(victim)
    if ev is None:
        return None
    ts = [t for r, s in summaries.items() if r != victim
          for it, t in s["marks"] if it == ev["iter"]]
    if not ts:
        return None
    reports = [(rep[2], rep[1]) for r, s in summaries.items() if r != victim
               for rep in s["transport"].get("reports", [])
               if rep[0] == victim and rep[2] > 0]
    first = min(reports) if reports else None
    return ((max(ts) - ev["t_ns"]) / 1e6, (min(ts) - ev["t_ns"]) / 1e6,
            (first[0] - ev["t_ns"]) / 1e6 if first else None,
            first[1] if first else "-")


def failures(args, configs):
    n = 8
    print()
    print("## SIGKILL to delivery of the interrupted allreduce (corrected "
          "f=1, n=%d), ms; median [min-max] of %d jobs" % (n, args.repeat))
    print("## last/first = survivors' deliveries; backend = first report of "
          "the victim by a survivor's backend, and what it said")
    default = {}
    slow = {"FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000",
            "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}
    cases = [("kill leaf 7 as iteration 300 starts", 7, ["--kill", "7@300"]),
             ("kill root 0 inside iteration 300", 0, ["--crash", "0@300:0"])]
    for name in configs:
        backend, env = TRANSPORTS[name]
        for kname, kenv in (("keepalive 100+200 ms", default),
                            ("keepalive 5 s", slow)):
            for cname, victim, extra in cases:
                last, first, rep, how = [], [], [], set()
                for _ in range(args.repeat):
                    e = dict(env)
                    e.update(kenv)
                    _, summaries, events, p = run(
                        args.build, backend, e, n,
                        ["-f", 1, "--iters", 400, "--warmup", 0, "--quiet"]
                        + extra, run_args=["--may-fail", str(victim)])
                    d = kill_times(summaries, events, victim)
                    if d is None:
                        print("job failed: %s" % p.stderr[-400:],
                              file=sys.stderr)
                        continue
                    last.append(d[0])
                    first.append(d[1])
                    if d[2] is not None:
                        rep.append(d[2])
                    how.add(d[3])
                print("%-14s %-21s %-36s last %s first %s backend %s (%s)" % (
                    name, kname, cname, fmt(last, 6, 1), fmt(first, 6, 1),
                    fmt(rep, 6, 1), ", ".join(sorted(how))))
                sys.stdout.flush()
        # A hung process: no backend here reports it.
        e = dict(env)
        e.update({"FTCOLL_SUSPECT_MS": "100", "FTCOLL_PROBE_MS": "200",
                  "FTCOLL_ZMQ_HEARTBEAT_MS": "0"})
        last = []
        for _ in range(args.repeat):
            _, summaries, events, p = run(
                args.build, backend, e, n,
                ["-f", 1, "--iters", 400, "--warmup", 0, "--quiet",
                 "--stop", "5@300"], run_args=["--may-fail", "5"])
            d = kill_times(summaries, events, 5)
            if d is not None:
                last.append(d[0])
        print("%-14s %-21s %-36s last %s" % (name, "keepalive 100+200 ms",
                                             "SIGSTOP rank 5", fmt(last, 6, 1)))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iters", type=int, default=5000)
    ap.add_argument("--only", choices=["latency", "failures"])
    ap.add_argument("--backends", default=",".join(TRANSPORTS),
                    help="comma-separated backend:transport pairs of %s"
                    % ", ".join(TRANSPORTS))
    args = ap.parse_args()
    configs = args.backends.split(",")
    for c in configs:
        if c not in TRANSPORTS:
            ap.error("unknown backend:transport %s" % c)
    print("# measure_backends: build %s, %d cores, load %s, repeat %d"
          % (args.build, os.cpu_count() or 1,
             " ".join("%.2f" % x for x in os.getloadavg()), args.repeat))
    if args.only != "failures":
        latency(args, configs)
    if args.only != "latency":
        failures(args, configs)


if __name__ == "__main__":
    main()
