#!/usr/bin/env python3
"""SIGKILL to delivery on two builds, interleaved job by job.

  python3 bench/failures_ab.py --a ../main/build --b build [--repeat 10]
      [--backends libfabric:tcp,libfabric:shm] [--a-env VAR=VALUE]...
      [--b-env VAR=VALUE]...

The SIGKILL rows of measure_backends.py --only failures (n = 8, corrected
f = 1; leaf 7 killed as iteration 300 starts, root 0 inside it; the core's
keepalive at 100 + 200 ms and at 5 s), each job run on build A and on
build B in turn (A first on even rounds, B first on odd ones), so that a
machine whose load drifts weighs on both alike. It prints every job, then
per row and per backend the median [min-max] of the last survivor's
delivery and of the first backend report, in ms from the kill. A
benchmark, not a test: quote the load it prints.

--a-env and --b-env add variables to one side's jobs (repeat them for
several), so that A and B can be one build under two settings, e.g.
--a-env GLIBC_TUNABLES=glibc.malloc.hugetlb=0 --b build --a build.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_backends as mb  # noqa: E402

SLOW = {"FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000",
        "FTCOLL_ZMQ_HEARTBEAT_MS": "0"}
KEEPALIVES = (("keepalive 100+200 ms", {}), ("keepalive 5 s", SLOW))
CASES = (("kill leaf 7", 7, ["--kill", "7@300"]),
         ("kill root 0", 0, ["--crash", "0@300:0"]))


def fmt(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return "%5.1f [%.1f-%.1f]" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="build directory A")
    ap.add_argument("--b", required=True, help="build directory B")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--backends", default="libfabric:tcp,libfabric:shm")
    ap.add_argument("--a-env", action="append", default=[],
                    metavar="VAR=VALUE", help="set in A's jobs (repeatable)")
    ap.add_argument("--b-env", action="append", default=[],
                    metavar="VAR=VALUE", help="set in B's jobs (repeatable)")
    args = ap.parse_args()
    side_env = {}
    for who, pairs in (("A", args.a_env), ("B", args.b_env)):
        side_env[who] = {}
        for pair in pairs:
            var, eq, val = pair.partition("=")
            if not eq or not var:
                ap.error("--%s-env wants VAR=VALUE, not %r" % (who.lower(), pair))
            side_env[who][var] = val
    names = args.backends.split(",")
    for name in names:
        if name not in mb.TRANSPORTS:
            ap.error("unknown backend %s" % name)
    builds = {"A": os.path.abspath(args.a), "B": os.path.abspath(args.b)}
    print("# failures_ab: A %s %s, B %s %s, %d cores, load %s, repeat %d" % (
        builds["A"], " ".join(args.a_env), builds["B"], " ".join(args.b_env),
        os.cpu_count(),
        " ".join("%.2f" % x for x in os.getloadavg()), args.repeat))
    res = {}
    for rnd in range(args.repeat):
        order = ("A", "B") if rnd % 2 == 0 else ("B", "A")
        for name in names:
            backend, env = mb.TRANSPORTS[name]
            for kname, kenv in KEEPALIVES:
                for cname, victim, extra in CASES:
                    for who in order:
                        e = dict(env)
                        e.update(kenv)
                        e.update(side_env[who])
                        _, s, ev, p = mb.run(
                            builds[who], backend, e, 8,
                            ["-f", 1, "--iters", 400, "--warmup", 0,
                             "--quiet"] + extra,
                            run_args=["--may-fail", str(victim)])
                        d = mb.kill_times(s, ev, victim)
                        if d is None:
                            print("job failed: %s" % p.stderr[-400:],
                                  file=sys.stderr)
                            continue
                        res.setdefault((name, kname, cname, who), []).append(d)
                        print("round %d %-14s %-21s %-11s %s  last %6.1f "
                              "first %6.1f report %s" % (
                                  rnd, name, kname, cname, who, d[0], d[1],
                                  "-" if d[2] is None else "%.1f" % d[2]),
                              flush=True)
    print()
    print("# median [min-max], ms from the kill: last delivery, first "
          "backend report")
    for name in names:
        for kname, _ in KEEPALIVES:
            for cname, _, _ in CASES:
                cols = []
                for who in ("A", "B"):
                    ds = res.get((name, kname, cname, who), [])
                    cols.append("%s last %s report %s" % (
                        who, fmt([d[0] for d in ds]), fmt([d[2] for d in ds])))
                print("%-14s %-21s %-11s %s | %s" % (name, kname, cname,
                                                      cols[0], cols[1]))
    for name in names:
        for who in ("A", "B"):
            ds = [d for k, v in res.items() if k[0] == name and k[3] == who
                  for d in v]
            print("%-14s %s all %d jobs: last %s report %s" % (
                name, who, len(ds), fmt([d[0] for d in ds]),
                fmt([d[2] for d in ds])))


if __name__ == "__main__":
    main()
