#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Agreement and shrink on the LogP simulator from 1K to 1M processes.

For each P and each number K of crashes during the operation (random
ranks at random times over its four waves, the first coordinators
included; 'Kc': the first coordinator, rank 0, is one of them), runs ftcoll-sim --coll agree|shrink --model logp -L 10 -o 1
and prints one Markdown row: the processes that failed (mean; a shrink
counts its --faults 1), latency (the last live delivery, in LogP
time units), messages per process (mean and the busiest process), the
latency per tree level (latency / log2 P: flat when the latency grows
with log P), and the simulator's own wall time and peak memory. A shrink
follows a failure known before it (--faults 1), as it must: its K
crashes come on top. Every run is checked by ftcoll-sim (exit status 1
on a violated property), and this script fails if any run did.

  bench/sim_ulfm_scaling.py [--sim build/bench/ftcoll-sim]
      [--sizes 1024,4096,...] [--crashes 0,1,10,1c,10c] [--runs 3]
      [--big-runs 1] [--colls agree,shrink] [--agree-round rd2|rd4|tree]
      [--csv FILE]

--agree-round passes the agreement's failure-free round to ftcoll-sim
(default: ftcoll-sim's, rd2).

--runs seeds per point up to 64K processes, --big-runs above (each
1M-process run takes about a minute and 4 GB). Virtual time does not
depend on the machine; wall time and memory do.
"""
import argparse
import json
import math
import subprocess
import sys


def run_point(sim, coll, p, spec, runs, agree_round=None):
    k, coord = crash_spec(spec)
    argv = [sim, "--coll", coll, "--model", "logp", "-L", "10", "-o", "1",
            "-n", str(p), "--crashes", str(k - coord), "--fault-root", "any",
            "--runs", str(runs), "--json", "--summary"]
    if agree_round:
        argv += ["--agree-round", agree_round]
    if coord:
        # The first coordinator (rank 0) crashes after its first send: a
        # new ballot, the agreement's worst single failure.
        argv += ["--crash", "0:1"]
    if coll == "shrink":
        argv += ["--faults", "1"]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    d = json.loads(r.stdout)
    if runs == 1:
        agg = {key: {"mean": d[key], "max": d[key]}
               for key in ("reach", "msgs_per_proc", "max_rank_msgs",
                           "violations", "wall_s")}
        agg["failed"] = {"mean": d["failed_ranks"]}
        rss = d["peak_rss_kb"]
    else:
        agg = d["aggregate"]
        rss = d["peak_rss_kb"]
    return argv, agg, rss, r.returncode


def crash_spec(spec):
    """'K': K random crashes; 'Kc': rank 0 and K - 1 random ones."""
    coord = spec.endswith("c")
    k = int(spec[:-1] if coord else spec)
    if coord and k < 1:
        sys.exit(f"--crashes: {spec!r}: a coordinator crash counts one")
    return k, int(coord)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default="build/bench/ftcoll-sim")
    ap.add_argument("--sizes", default="1024,4096,16384,65536,262144,1048576")
    ap.add_argument("--crashes", default="0,1,10,1c,10c")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--big-runs", type=int, default=1)
    ap.add_argument("--colls", default="agree,shrink")
    ap.add_argument("--agree-round", choices=("rd2", "rd4", "tree"))
    ap.add_argument("--csv")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    crashes = a.crashes.split(",")
    for spec in crashes:
        if not (spec.rstrip("c").isdigit()):
            sys.exit(f"--crashes: {spec!r} is not K or Kc")
        crash_spec(spec)
    colls = a.colls.split(",")
    for c in colls:
        if c not in ("agree", "shrink"):
            sys.exit(f"--colls: {c!r} is neither agree nor shrink")
    rows = []
    failed = 0
    print("| op | P | crashes | failed | latency | per level (latency / log2 P) "
          "| msgs/process | busiest | wall s | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in colls:
        for p in sizes:
            for k in crashes:
                runs = a.runs if p <= 65536 else a.big_runs
                if k == "0":
                    runs = 1  # deterministic: every seed gives the same run
                argv, g, rss, rc = run_point(a.sim, c, p, k, runs,
                                             a.agree_round)
                failed += rc != 0
                lat = g["reach"]["mean"]
                row = (c, p, k, runs, lat, lat / math.log2(p),
                       g["msgs_per_proc"]["mean"], g["max_rank_msgs"]["max"],
                       g["wall_s"]["mean"], rss / 1024.0,
                       g["violations"]["max"], g["failed"]["mean"])
                rows.append(row)
                print(f"| {c} | {p} | {k} | {row[11]:.1f} | {lat:.0f} "
                      f"| {lat / math.log2(p):.1f} "
                      f"| {row[6]:.3f} | {row[7]:.0f} | {row[8]:.1f} "
                      f"| {row[9]:.0f} |" + ("" if rc == 0 else " VIOLATION"),
                      flush=True)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("op,P,crashes,runs,latency,per_level,msgs_per_proc,"
                    "busiest,wall_s,peak_rss_mb,violations,failed\n")
            for r in rows:
                f.write(",".join(str(x) for x in r) + "\n")
    print(f"last point: {' '.join(argv)}")
    print(f"{len(rows)} points, {failed} with a violated property")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
