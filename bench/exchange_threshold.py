#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where the exchange allreduce beats reduce + bcast (docs/corrected.md §5.5).

For each group size n and f, runs the corrected allreduce both ways,
reduce_bcast then exchange then exchange then reduce_bcast ... (the
order alternates, so a shared machine's load falls on both alike), and
prints per variant the median of the runs' figures and the median of the
per-pair ratios exchange / reduce_bcast (below 1: the exchange is faster).
--against butterfly compares the butterfly (§5.6) in the exchange's
place, the same way; --against exchange,butterfly runs all three
variants in a rotating order, each ratio against reduce_bcast (§5.7).
--size sets the allreduce's bytes (8 by default) where a run has a
size (ucx-sm, ucx-tcp).

  --where ucx-sm    ftcoll-bench under ftcoll-run, UCX shared memory: the
                    median (p50) latency of an 8-byte allreduce, rank 0
  --where ucx-tcp   the same over UCX tcp (issue 16's transport)
  --where loopback  bench_core --steady: the core's time per allreduce,
                    every rank in one thread over an inline transport
                    (what all ranks together cost, not a latency)
  --where logp      ftcoll-sim --model logp: the model's latency, which
                    does not depend on the machine (one run per point)

Run from the build directory's parent, or give --build.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

# Long keepalive timeouts: on a loaded machine the defaults (100 + 200
# ms) can exclude a healthy, descheduled rank, which measures nothing.
UCX_SM = {"UCX_TLS": "sm", "UCX_MM_ERROR_HANDLING": "y",
          "UCX_KEEPALIVE_INTERVAL": "100ms",
          "FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000"}
UCX_TCP = {"UCX_TLS": "tcp",
           "FTCOLL_SUSPECT_MS": "5000", "FTCOLL_PROBE_MS": "5000"}


def run(cmd, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, env=e, capture_output=True, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                         p.stderr[-2000:]))
    return p.stdout


def ucx_sm(build, n, f, variant, iters, wait, size=8, env=UCX_SM):
    out = run([os.path.join(build, "backends/bootstrap/ftcoll-run"), "-n",
               str(n), "--backend", "ucx", "--",
               os.path.join(build, "bench/ftcoll-bench"), "--coll",
               "allreduce", "-f", str(f), "--iters", str(iters), "--sizes",
               str(size), "--json", "--wait", wait, "--allreduce", variant], env)
    for line in out.splitlines():
        m = re.match(r"^\[0\] (\{.*\"kind\":\"latency\".*\})$", line)
        if m:
            row = json.loads(m.group(1))
            return row["p50_us"]
    sys.exit("no latency row: " + out[-2000:])


def ucx_tcp(build, n, f, variant, iters, wait, size=8):
    return ucx_sm(build, n, f, variant, iters, wait, size, UCX_TCP)


def loopback(build, n, f, variant, iters, wait, size=8):
    algo = "corrected" if variant == "reduce_bcast" else variant
    out = run([os.path.join(build, "bench/bench_core"), "--steady",
               "%s:%d" % (algo, f), "--n", str(n), "--iters", str(iters)])
    last = out.strip().splitlines()[-1].split()
    return float(last[4]) / 1000.0  # ns/op -> us/op


def logp(build, n, f, variant, iters, wait, size=8):
    out = run([os.path.join(build, "bench/ftcoll-sim"), "--coll",
               "allreduce", "-n", str(n), "-f", str(f), "--model", "logp",
               "--allreduce", variant, "--json"])
    return float(json.loads(out)["time"])  # model time units


WHERE = {"ucx-sm": ucx_sm, "ucx-tcp": ucx_tcp, "loopback": loopback,
         "logp": logp}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--where", choices=sorted(WHERE), default="ucx-sm")
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", default="2,3,4,5,6,8")
    ap.add_argument("--f", default="0,1")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--wait", choices=("block", "spin"), default="block")
    ap.add_argument("--against", default="exchange",
                    help="exchange, butterfly, or both (comma-separated)")
    ap.add_argument("--size", type=int, default=8)
    a = ap.parse_args()
    others = a.against.split(",")
    for o in others:
        if o not in ("exchange", "butterfly"):
            ap.error("--against: exchange, butterfly or both")
    variants = ["reduce_bcast"] + others
    measure = WHERE[a.where]
    reps = 1 if a.where == "logp" else a.reps
    print("# %s, %d bytes, %d interleaved rounds per point; figures in us"
          " (logp: time units), medians" % (a.where, a.size, reps))
    print("%3s %2s %13s" % ("n", "f", "reduce_bcast")
          + "".join(" %10s" % o for o in others)
          + "".join(" %9s" % ("%s/rb" % o[:2]) for o in others), flush=True)
    for n in [int(x) for x in a.n.split(",")]:
        for f in [int(x) for x in a.f.split(",")]:
            if f >= n:
                continue
            got = {v: [] for v in variants}
            ratios = {o: [] for o in others}
            for r in range(reps):
                # Rotate, and reverse every other round, so that each
                # variant runs first, last and in between alike.
                k = r % len(variants)
                order = variants[k:] + variants[:k]
                if r % 2 == 1:
                    order = order[::-1]
                run_of = {}
                for v in order:
                    run_of[v] = measure(a.build, n, f, v, a.iters, a.wait,
                                        a.size)
                    got[v].append(run_of[v])
                for o in others:
                    ratios[o].append(run_of[o] / run_of["reduce_bcast"])
            print("%3d %2d %13.3f" % (n, f, statistics.median(got["reduce_bcast"]))
                  + "".join(" %10.3f" % statistics.median(got[o])
                            for o in others)
                  + "".join(" %9.2f" % statistics.median(ratios[o])
                            for o in others), flush=True)


if __name__ == "__main__":
    main()
