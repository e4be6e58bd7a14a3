#!/usr/bin/env python3
"""What a SIGKILLed rank's own exit costs, under two environments, interleaved.

  python3 bench/exit_cost_ab.py --build build [--repeat 6] [-n 2]
      [--provider 'tcp;ofi_rxm'] [--a-env VAR=VALUE]... [--b-env VAR=VALUE]...

Each job runs ftcoll-bench's steady allreduce (corrected f = 1, the core's
keepalive at 5 s) over the libfabric backend under ftcoll-run; once the
highest rank's pools are resident it is SIGKILLed from here while
`perf record -a` takes the tracepoints signal:signal_generate,
sched:sched_switch, sched:sched_process_exit and kmem:rss_stat. Per job it
prints the victim's resident anonymous memory and how much of it was in
transparent huge pages before the kill, then, in ms from the kill: its
pidfd firing here (what the backend's exit monitor waits for), its last
rss_stat (its memory freed), its last switch-out (a zombie), and the CPU
it ran between the kill and then. A (first on even rounds) and B take
turns. Needs root (or perf_event_paranoid <= -1) for the tracepoints.
A benchmark, not a test: quote the load it prints.
"""
import argparse
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

EVENTS = ("signal:signal_generate,sched:sched_switch,"
          "sched:sched_process_exit,kmem:rss_stat")
LINE = re.compile(r"\s*(\d+)\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)")


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                         text=True).stdout.split()
    return [int(x) for x in out]


def rollup(pid):
    keep = ("Anonymous", "AnonHugePages")
    with open("/proc/%d/smaps_rollup" % pid) as f:
        return {l.split(":")[0]: int(l.split()[1]) for l in f
                if l.split(":")[0] in keep}


def trace_exit(text, victim):
    """(ms to the last rss_stat, to the final switch-out, CPU ms) from
    the kill, read from `perf script` output."""
    t_kill = t_rss = t_zombie = None
    on = None           # when the victim last went on a CPU, if it is on
    cpu = 0.0
    exited = False
    prev, nxt = "prev_pid=%d " % victim, "next_pid=%d " % victim
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        pid, t, ev, rest = int(m.group(1)), float(m.group(2)) * 1e3, \
            m.group(3), m.group(4)
        if ev == "sched:sched_switch":
            if prev in rest:
                if on is not None and t_kill is not None:
                    cpu += t - max(on, t_kill)
                on = None
                if exited:
                    t_zombie = t
                    break
            elif nxt in rest:
                on = t
        elif (ev == "signal:signal_generate" and t_kill is None
              and ("pid=%d " % victim) in rest and "sig=9 " in rest):
            t_kill = t
        elif t_kill is not None and pid == victim:
            if ev == "kmem:rss_stat":
                t_rss = t
            elif ev == "sched:sched_process_exit":
                exited = True
    if t_kill is None or t_zombie is None:
        return None
    return ((t_rss - t_kill) if t_rss else float("nan"), t_zombie - t_kill,
            cpu)


def one_job(args, env, data):
    e = dict(os.environ)
    e.update(env)
    e.update({"FI_PROVIDER": args.provider, "FTCOLL_SUSPECT_MS": "5000",
              "FTCOLL_PROBE_MS": "5000"})
    victim_rank = args.n - 1
    job = subprocess.Popen(
        [os.path.join(args.build, "backends/bootstrap/ftcoll-run"), "-n",
         str(args.n), "--backend", "libfabric", "--may-fail",
         str(victim_rank), "--",
         os.path.join(args.build, "bench/ftcoll-bench"), "-f", "1",
         "--iters", "1000000000", "--warmup", "0", "--quiet"],
        env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        victim = None
        for _ in range(600):    # up to 30 s of set-up on a loaded machine
            time.sleep(0.05)
            ranks = children(job.pid)
            if len(ranks) != args.n:
                continue
            try:
                if rollup(max(ranks)).get("Anonymous", 0) > args.min_kb:
                    victim = max(ranks)     # the last rank started
                    break
            except OSError:
                pass
        if victim is None:
            return None
        mem = rollup(victim)
        perf = subprocess.Popen(
            ["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-a", "-e",
             EVENTS, "-o", data, "--", "sleep", "2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)         # perf has its events open by then
        fd = os.pidfd_open(victim)
        t0 = time.monotonic_ns()
        os.kill(victim, signal.SIGKILL)
        select.select([fd], [], [])
        pidfd_ms = (time.monotonic_ns() - t0) / 1e6
        os.close(fd)
        perf.wait()
    finally:
        job.send_signal(signal.SIGTERM)
        try:
            job.wait(timeout=10)
        except subprocess.TimeoutExpired:
            job.kill()
            job.wait()
    text = subprocess.run(["perf", "script", "-i", data, "-F",
                           "pid,cpu,time,event,trace", "--ns"],
                          capture_output=True, text=True).stdout
    traced = trace_exit(text, victim)
    if traced is None:
        return None
    return (mem, pidfd_ms) + traced


def parse_env(ap, pairs, flag):
    env = {}
    for pair in pairs:
        var, eq, val = pair.partition("=")
        if not eq or not var:
            ap.error("%s wants VAR=VALUE, not %r" % (flag, pair))
        env[var] = val
    return env


def fmt(xs):
    xs = [x for x in xs if x == x]
    if not xs:
        return "-"
    return "%.2f [%.2f-%.2f]" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--provider", default="tcp;ofi_rxm")
    ap.add_argument("--min-kb", type=int, default=30000,
                    help="anonymous kB the victim must hold before the "
                         "kill (rxm's pools: ~38 MB)")
    ap.add_argument("--a-env", action="append", default=[],
                    metavar="VAR=VALUE")
    ap.add_argument("--b-env", action="append", default=[],
                    metavar="VAR=VALUE")
    args = ap.parse_args()
    if args.n < 2:
        ap.error("-n must be at least 2")
    args.build = os.path.abspath(args.build)
    envs = {"A": parse_env(ap, args.a_env, "--a-env"),
            "B": parse_env(ap, args.b_env, "--b-env")}
    print("# exit_cost_ab: %s, n = %d, %s; A %s, B %s; %d cores, load %s" % (
        args.build, args.n, args.provider, " ".join(args.a_env),
        " ".join(args.b_env), os.cpu_count(),
        " ".join("%.2f" % x for x in os.getloadavg())), flush=True)
    res = {"A": [], "B": []}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        for rnd in range(args.repeat):
            for who in (("A", "B") if rnd % 2 == 0 else ("B", "A")):
                r = one_job(args, envs[who], data)
                if r is None:
                    print("round %d %s: no trace (job did not set up, or "
                          "perf missed the kill)" % (rnd, who),
                          file=sys.stderr, flush=True)
                    continue
                res[who].append(r)
                mem, pidfd, freed, zombie, cpu = r
                print("round %d %s anon %6d kB huge %6d kB | pidfd %6.2f "
                      "freed %6.2f zombie %6.2f cpu %5.2f ms | load %.2f" % (
                          rnd, who, mem.get("Anonymous", 0),
                          mem.get("AnonHugePages", 0), pidfd, freed, zombie,
                          cpu, os.getloadavg()[0]), flush=True)
    print("\n# median [min-max]; ms from the kill")
    for who in ("A", "B"):
        rs = res[who]
        if not rs:
            continue
        print("%s %2d jobs: anon kB %s huge kB %s | pidfd %s | freed %s | "
              "zombie %s | cpu %s" % (
                  who, len(rs),
                  fmt([r[0].get("Anonymous", 0) for r in rs]),
                  fmt([r[0].get("AnonHugePages", 0) for r in rs]),
                  fmt([r[1] for r in rs]), fmt([r[2] for r in rs]),
                  fmt([r[3] for r in rs]), fmt([r[4] for r in rs])))


if __name__ == "__main__":
    main()
