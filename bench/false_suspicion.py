#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""False suspicions under load: how often a fault-free job loses a live
rank to the core's keepalive (a benchmark, not a test).

  python3 bench/false_suspicion.py --build build [--jobs 10]
      [--backends ucx:sm,zmq:tcp,libfabric:shm] [--n 4]
      [--sizes 4194304] [--iters 4] [--stress 2]
      [--variants before:FTCOLL_PROBE_BACKOFF=0,after:] [--keep DIR]

Every job is fault-free: ftcoll-bench runs corrected allreduces (f = 1)
of the given sizes at n ranks, with the core's keepalive at the library's
defaults (suspect 100 ms, probe 200 ms) unless FTCOLL_SUSPECT_MS /
FTCOLL_PROBE_MS are set. While the jobs run, `stress-ng --cpu S` keeps
S more processes busy on the machine (0: none), so that ranks are
descheduled as on a shared host. A job counts as a false suspicion when
any rank ends excluded, names a rank failed, or ends an operation with
FTC_EEXCLUDED or FTC_ETOO_MANY_FAILURES; other trouble (a wrong value, a
rank that printed no summary, another error) is counted apart.

The variants are environment settings for ftcoll-bench, NAME:VAR=V;...
(an empty setting is the build as it is). Their jobs are interleaved (one
job of each in turn, the order alternating), so that the machine's
changing load falls on all of them alike; compare rates from one run
only. Prints per transport and variant: jobs, false suspicions, the rate
with its 95 % Wilson interval, other failures, probes sent per job
(median), and the job's wall time (median, s). --keep DIR writes the
output of every job that was not ok to DIR, to see who excluded whom.
"""
import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_backends import TRANSPORTS, run  # noqa: E402

SUSPICION_STATUSES = ("FTC_EEXCLUDED", "FTC_ETOO_MANY_FAILURES")


def parse_variants(text):
    out = []
    for item in text.split(","):
        name, _, settings = item.partition(":")
        if not name:
            sys.exit("false_suspicion.py: --variants: %r has no name" % item)
        env = {}
        for kv in filter(None, settings.split(";")):
            k, sep, v = kv.partition("=")
            if not sep or not k:
                sys.exit("false_suspicion.py: --variants: %r is not VAR=V"
                         % kv)
            env[k] = v
        out.append((name, env))
    return out


def wilson(k, n, z=1.96):
    """95 % Wilson score interval of k successes in n trials."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def classify(summaries, n, ops):
    """'ok', 'suspicion' or a description of other trouble."""
    if len(summaries) < n:
        return "only %d of %d ranks printed a summary" % (len(summaries), n)
    for s in summaries.values():
        if s.get("excluded") or s.get("failed"):
            return "suspicion"
        if any(st in SUSPICION_STATUSES for st in s.get("statuses", {})):
            return "suspicion"
    for r, s in summaries.items():
        if s.get("wrong"):
            return "rank %d: %d wrong results" % (r, s["wrong"])
        if s.get("ok") != ops:
            return "rank %d: %s" % (r, s.get("statuses"))
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int, default=10,
                    help="jobs per transport and variant")
    ap.add_argument("--backends", default="ucx:sm,zmq:tcp,libfabric:shm")
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--sizes", default="4194304")
    ap.add_argument("--iters", type=int, default=4)
    ap.add_argument("--stress", type=int, default=2,
                    help="stress-ng --cpu workers (0: none)")
    ap.add_argument("--variants", default="before:FTCOLL_PROBE_BACKOFF=0,"
                                          "after:")
    ap.add_argument("--keep", help="directory for the output of jobs "
                                   "that were not ok")
    args = ap.parse_args()
    if args.jobs < 1 or args.n < 2 or args.iters < 1 or args.stress < 0:
        sys.exit("false_suspicion.py: --jobs, --iters must be >= 1, --n "
                 ">= 2, --stress >= 0")
    configs = []
    for name in args.backends.split(","):
        if name not in TRANSPORTS:
            sys.exit("false_suspicion.py: --backends: unknown %r (known: %s)"
                     % (name, ", ".join(TRANSPORTS)))
        configs.append((name,) + TRANSPORTS[name])
    variants = parse_variants(args.variants)
    sizes = args.sizes.split(",")
    if not all(s.isdigit() and int(s) > 0 for s in sizes):
        sys.exit("false_suspicion.py: --sizes: %r is not a list of byte "
                 "counts" % args.sizes)
    ops = len(sizes) * args.iters
    bench_args = ["--coll", "allreduce", "-f", 1, "--iters", args.iters,
                  "--warmup", 0, "--quiet", "--sizes", args.sizes]

    stress = None
    if args.stress > 0:
        if shutil.which("stress-ng") is None:
            sys.exit("false_suspicion.py: --stress %d needs stress-ng "
                     "(or pass --stress 0)" % args.stress)
        stress = subprocess.Popen(["stress-ng", "--cpu", str(args.stress),
                                   "--quiet"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
    print("# false_suspicion.py --jobs %d --backends %s --n %d --sizes %s "
          "--iters %d --stress %d --variants %s" % (
              args.jobs, args.backends, args.n, args.sizes, args.iters,
              args.stress, args.variants))
    print("# keepalive: suspect %s ms, probe %s ms; load at start %.1f" % (
        os.environ.get("FTCOLL_SUSPECT_MS", "100"),
        os.environ.get("FTCOLL_PROBE_MS", "200"), os.getloadavg()[0]))
    sys.stdout.flush()
    stats = {(c[0], v[0]): {"jobs": 0, "susp": 0, "other": [], "probes": [],
                            "wall": []}
             for c in configs for v in variants}
    try:
        for i in range(args.jobs):
            order = variants if i % 2 == 0 else variants[::-1]
            for name, backend, tenv in configs:
                for vname, venv in order:
                    env = dict(tenv)
                    env.setdefault("FTCOLL_SUSPECT_MS", "100")
                    env.setdefault("FTCOLL_PROBE_MS", "200")
                    env.update(venv)
                    t0 = time.monotonic()
                    _, summaries, _, p = run(args.build, backend, env, args.n,
                                             bench_args)
                    st = stats[(name, vname)]
                    st["wall"].append(time.monotonic() - t0)
                    st["jobs"] += 1
                    verdict = classify(summaries, args.n, ops)
                    if verdict == "suspicion":
                        st["susp"] += 1
                    elif verdict != "ok":
                        st["other"].append(verdict)
                    st["probes"].append(sum(
                        s["counters"]["probes_sent"]
                        for s in summaries.values()))
                    if verdict != "ok" and args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        path = os.path.join(args.keep, "%s-%s-%d.log" % (
                            name.replace(":", "-"), vname, i))
                        with open(path, "w") as f:
                            f.write(p.stdout)
                            f.write(p.stderr)
                    print("# job %d %s %s: %s (%.1f s)" % (
                        i, name, vname, verdict, st["wall"][-1]))
                    sys.stdout.flush()
    finally:
        if stress is not None:
            stress.terminate()
            stress.wait()

    print()
    print("%-15s %-8s %5s %6s %7s %-15s %6s %8s %7s" % (
        "transport", "variant", "jobs", "susp", "rate", "95% interval",
        "other", "probes", "wall s"))
    for name, _, _ in configs:
        for vname, _ in variants:
            st = stats[(name, vname)]
            lo, hi = wilson(st["susp"], st["jobs"])
            print("%-15s %-8s %5d %6d %6.1f%% [%4.1f%%, %5.1f%%] %6d %8.0f "
                  "%7.1f" % (name, vname, st["jobs"], st["susp"],
                             100.0 * st["susp"] / st["jobs"], 100 * lo,
                             100 * hi, len(st["other"]),
                             statistics.median(st["probes"]),
                             statistics.median(st["wall"])))
            for o in sorted(set(st["other"])):
                print("    other: %s" % o)


if __name__ == "__main__":
    main()
