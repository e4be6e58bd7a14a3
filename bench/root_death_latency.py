#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Root death to delivery: how long survivors stall after their backend
reported the root dead (a benchmark, not a test).

  python3 bench/root_death_latency.py --build build [--runs 20]
      [--backends zmq:tcp,ucx:sm,...] [--wait block|spin] [--json]

--build takes a comma-separated list of build directories to compare
(say, before and after a change): their runs are interleaved, one job of
each in turn, so that a shared machine's changing load falls on all of
them alike; one row per transport and build.

Scenario 2 of "the guarantee holds over streams of operations": n = 8,
a stream of 200 corrected allreduces (f = 1, 8 bytes), and rank 0, the
root, SIGKILLs itself right after it delivered iteration 99
(ftcoll-bench --kill 0@100: as it starts iteration 100). Per survivor
and run, from its JSON summary:

  report   when its own backend reported rank 0 failed ("reports"),
  deliver  when it delivered iteration 100 ("marks"),

both on CLOCK_MONOTONIC (one clock per host). The number of the
scenario is deliver - report: what the core adds once the transport has
said the root is gone. It is negative when a survivor learnt the death
from another (a failure list) before its own backend reported it; a
survivor whose backend never reported it counts as "no report". Also
printed for context: kill -> report and kill -> deliver (from the
victim's own kill event, the moment before it raised SIGKILL).

Prints, per backend and transport, the distribution over every survivor
of every run: p50, p95 and max of report -> deliver in ms. Two columns
separate what the transports cost from what the core costs: first->del
(p95), from the job's earliest report, whichever survivor's, to each
delivery (the core's part once anybody knows), and spread (p50, max),
how far apart the survivors' own reports were in a job (the transport's
part: UCX shared memory reports from each process's own keepalive). Numbers
depend on the machine and its load; quote the configuration line with
them. The core's keepalive is at ftcoll-bench's defaults (suspect 100 ms,
probe 200 ms) unless FTCOLL_SUSPECT_MS / FTCOLL_PROBE_MS are set. Ranks
sleep when idle (--wait block): with 8 ranks on fewer cores, spinning
ranks take turns on the CPU and the numbers measure the scheduler.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_backends import TRANSPORTS, FAILURES_ONLY, run  # noqa: E402

N, F, ITERS, KILL_AT, ROOT = 8, 1, 200, 100, 0


def percentile(xs, q):
    """Nearest-rank percentile of a sorted list."""
    if not xs:
        return None
    k = max(0, min(len(xs) - 1, int(round(q / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def one_run(build, backend, env, wait):
    """Per survivor: (report -> deliver, kill -> report, kill -> deliver,
    first report -> deliver) in ms (None where there is no report), and
    the spread of the job's reports (last - first survivor's, None if
    fewer than two reported); or a string on failure."""
    _, summaries, events, p = run(
        build, backend, env, N,
        ["-f", F, "--iters", ITERS, "--warmup", 0, "--quiet", "--wait", wait,
         "--kill", "%d@%d" % (ROOT, KILL_AT)],
        run_args=["--may-fail", str(ROOT)])
    ev = events.get(ROOT)
    if ev is None or ev.get("event") != "kill":
        return "rank 0 printed no kill event (exit %d): %s" % (
            p.returncode, p.stderr[-300:])
    if "rank %d was killed by SIGKILL" % ROOT not in p.stderr:
        return "rank 0 did not die of SIGKILL: %s" % p.stderr[-300:]
    out, reports, delivered = [], [], []
    for r in range(N):
        if r == ROOT:
            continue
        s = summaries.get(r)
        if s is None:
            return "survivor %d printed no summary (exit %d): %s" % (
                r, p.returncode, p.stderr[-300:])
        if s["wrong"] or s["ok"] != ITERS:
            return "survivor %d: %d wrong, %d of %d FTC_OK" % (
                r, s["wrong"], s["ok"], ITERS)
        deliver = [t for it, t in s["marks"] if it == KILL_AT]
        if not deliver:
            return "survivor %d has no delivery mark of %d" % (r, KILL_AT)
        rep = [t for rr, _, t in s["transport"].get("reports", [])
               if rr == ROOT and t > 0]
        k2d = (deliver[0] - ev["t_ns"]) / 1e6
        delivered.append(deliver[0])
        if rep:
            reports.append(rep[0])
            out.append(((deliver[0] - rep[0]) / 1e6,
                        (rep[0] - ev["t_ns"]) / 1e6, k2d))
        else:
            out.append((None, None, k2d))
    # What the core costs once any survivor knows, apart from how far
    # apart the transports' reports are (UCX shared memory: each process's
    # own keepalive).
    first = min(reports) if reports else None
    out = [o + (None if first is None else (d - first) / 1e6,)
           for o, d in zip(out, delivered)]
    spread = (max(reports) - first) / 1e6 if len(reports) > 1 else None
    return out, spread


def fmt(x):
    return "    n/a" if x is None else "%7.2f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build",
                    help="build directory, or several, comma-separated, to "
                    "compare with interleaved runs")
    ap.add_argument("--runs", type=int, default=20,
                    help="jobs per backend and transport (K)")
    ap.add_argument("--backends",
                    default=",".join(t for t in TRANSPORTS
                                     if t not in FAILURES_ONLY),
                    help="comma-separated backend:transport pairs of %s"
                    % ", ".join(TRANSPORTS))
    ap.add_argument("--wait", choices=("block", "spin"), default="block")
    ap.add_argument("--json", action="store_true",
                    help="also one JSON line per backend with every sample")
    args = ap.parse_args()
    configs = args.backends.split(",")
    for c in configs:
        if c not in TRANSPORTS:
            ap.error("unknown backend:transport %s" % c)
    builds = args.build.split(",")
    for b in builds:
        if not os.path.exists(os.path.join(b, "bench/ftcoll-bench")):
            ap.error("--build %s: no bench/ftcoll-bench in it" % b)
    print("# root_death_latency: build %s, %d cores, load %s, n=%d f=%d, "
          "%d allreduces, rank %d killed as iteration %d starts, %d runs "
          "each, --wait %s, keepalive %s+%s ms"
          % (args.build, os.cpu_count() or 1,
             " ".join("%.2f" % x for x in os.getloadavg()), N, F, ITERS,
             ROOT, KILL_AT, args.runs, args.wait,
             os.environ.get("FTCOLL_SUSPECT_MS", "100"),
             os.environ.get("FTCOLL_PROBE_MS", "200")))
    print("# report -> deliver: per survivor, its backend's report of rank "
          "%d to its delivery of iteration %d, ms" % (ROOT, KILL_AT))
    print("# first->del: from the job's earliest report (any survivor's) to "
          "each delivery; spread: last - first survivor's report, per job")
    print("%-14s %5s %7s %7s %7s %7s %6s %6s %9s %9s %9s %9s %9s%s" % (
        "transport", "runs", "p50", "p95", "max", "min", "<0", "norep",
        "first->del", "spread", "spreadmax", "kill->rep", "kill->del",
        "  build" if len(builds) > 1 else ""))
    for name in configs:
        backend, env = TRANSPORTS[name]
        acc = {b: ([], [], [], [], [0], [], []) for b in builds}
        for _ in range(args.runs):
            for b in builds:
                r2d, k2r, k2d, failed, norep, f2d, spreads = acc[b]
                res = one_run(b, backend, env, args.wait)
                if isinstance(res, str):
                    failed.append(res)
                    continue
                res, spread = res
                if spread is not None:
                    spreads.append(spread)
                for x, y, z, w in res:
                    k2d.append(z)
                    if w is not None:
                        f2d.append(w)
                    if x is None:
                        norep[0] += 1
                    else:
                        r2d.append(x)
                        k2r.append(y)
        for b in builds:
            r2d, k2r, k2d, failed, norep, f2d, spreads = acc[b]
            for xs in (r2d, k2r, k2d, f2d, spreads):
                xs.sort()
            print("%-14s %5d %s %s %s %s %6d %6d   %s   %s   %s   %s   %s%s"
                  % (name, args.runs - len(failed), fmt(percentile(r2d, 50)),
                     fmt(percentile(r2d, 95)), fmt(r2d[-1] if r2d else None),
                     fmt(r2d[0] if r2d else None),
                     sum(1 for x in r2d if x < 0), norep[0],
                     fmt(percentile(f2d, 95)), fmt(percentile(spreads, 50)),
                     fmt(spreads[-1] if spreads else None),
                     fmt(percentile(k2r, 50)), fmt(percentile(k2d, 50)),
                     "  " + b if len(builds) > 1 else ""))
            for f in failed:
                print("    run failed: %s" % f.replace("\n", " ")[:300])
            if args.json:
                print(json.dumps({"transport": name, "build": b,
                                  "report_to_deliver_ms": r2d,
                                  "kill_to_report_ms": k2r,
                                  "kill_to_deliver_ms": k2d,
                                  "first_report_to_deliver_ms": f2d,
                                  "report_spread_ms": spreads,
                                  "failed_runs": len(failed),
                                  "no_report": norep[0]}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
