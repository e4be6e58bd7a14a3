#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ftcoll beside Open MPI and Gloo: 8-byte allreduce latency, interleaved.

  python3 bench/side_by_side.py --build after=build [--build before=DIR]
      [--peers DIR] [--jobs 9] [--iters 5000] [--n 2] [--transports ucx:sm,...]
      [--waits spin,block] [--algos tree,f0,f1,bf0,bf1,raw] [--auth on,off]

Every round runs one job of every variant, in an order rotated from round
to round, so that a change in the machine's load reaches every variant
alike; --jobs rounds. A variant is one of:

  mpi sm     Open MPI's MPI_Allreduce, vader (shared memory) + self
  mpi tcp    Open MPI's MPI_Allreduce, ob1 / tcp over lo
  gloo ring  Gloo's allreduce_ring, TCP device on 127.0.0.1
  ftcoll     ftcoll-bench, per --build (a label=DIR pair: the same
             variants for every build), transport, wait mode and algorithm,
             and with --auth on,off with the job key's MAC (ftcoll-run's
             default, the rows without a mark) and without it (`no-auth`:
             the job token only, as Open MPI and Gloo, which authenticate
             nothing), to show what the MAC costs beside the peers

  raw hop    (--algos raw) the transport alone, per build and transport:
             ftcoll-bench --pingpong --coll none, a ping-pong of 8 bytes
             between two ranks with the provider's own calls (no core, no
             backend), one-way latency = round trip / 2; polled, so one row
             serves both wait modes, and no MAC. Every ftcoll row of the same
             build and transport then also shows `-raw`: its p50 less the
             raw hop's, the time that is ftcoll's own (at n = 2 the
             exchange's critical path is one hop and a rank's work from the
             peer's message to its next send; the tree's is two of each)

Each job times --iters back-to-back int64-sum allreduces of 8 bytes (one
element) after a warm-up, every operation on its own, with no barrier
between them, and checks every result. A job gives the worst rank's
median (p50) and the mean over ranks of each rank's mean. The table
shows, per variant, the median over jobs of both, the ratio of the p50
to Open MPI's (shared-memory variants to `mpi sm`, TCP ones to `mpi tcp`
and to Gloo), the median over rounds of the same ratio taken within each
round (`/mpi rnd`: a VM's vCPUs may change placement during a run, and
Open MPI's shared-memory allreduce then moves between ~0.16 and ~0.41 us;
two jobs of one round most likely share a placement), and mean / p50,
the weight of the tail.

The ranks are not pinned (mpirun --bind-to none, as ftcoll-run starts
them); Open MPI always polls (its progress engine spins), so its one row
serves both ftcoll wait modes. Jobs that fail are reported on stderr and
left out.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

# ftcoll transports: backend and its environment.
TRANSPORTS = {
    "ucx:sm": ("ucx", {"UCX_TLS": "sm", "UCX_MM_ERROR_HANDLING": "y",
                       "UCX_KEEPALIVE_INTERVAL": "100ms"}),
    "libfabric:shm": ("libfabric", {"FI_PROVIDER": "shm"}),
    "ucx:tcp": ("ucx", {"UCX_TLS": "tcp"}),
    "libfabric:tcp": ("libfabric", {"FI_PROVIDER": "tcp;ofi_rxm"}),
    "zmq:tcp": ("zmq", {}),
}
ALGOS = {
    "tree": ["--algo", "tree", "-f", "0"],
    "f0": ["--algo", "corrected", "-f", "0"],
    "f1": ["--algo", "corrected", "-f", "1"],
    # The corrected allreduce with the butterfly as round 0
    # (docs/corrected.md §5.6), which `auto` does not pick.
    "bf0": ["--algo", "corrected", "-f", "0", "--allreduce", "butterfly"],
    "bf1": ["--algo", "corrected", "-f", "1", "--allreduce", "butterfly"],
    # The transport alone (bench/bench_transport_*.c, pingpong).
    "raw": ["--pingpong", "--coll", "none"],
}
ALGO_NAMES = {"tree": "tree", "f0": "corrected f=0", "f1": "corrected f=1",
              "bf0": "butterfly f=0", "bf1": "butterfly f=1",
              "raw": "raw hop"}
ROW = re.compile(r"^\[(\d+)\] 8\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s+\S+\s*$")
MPI_LAT = re.compile(r"^lat,mpi,8,(\S+),(\S+)$")
GLOO_LAT = re.compile(r"^(?:\[\d+\] )?lat,gloo-ring,8,(\d+),(\S+),(\S+)$")


def is_tcp(transport):
    return transport.endswith(":tcp")


class Variant:
    def __init__(self, key, label, cmd, env, parse):
        self.key, self.label, self.cmd, self.env = key, label, cmd, env
        self.parse = parse
        self.p50, self.mean, self.failed = [], [], 0
        self.by_round = {}      # round -> p50, for the per-round ratio

    def run(self, timeout, rnd=0):
        e = dict(os.environ)
        e.update(self.env)
        try:
            p = subprocess.run(self.cmd, capture_output=True, text=True,
                               env=e, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.failed += 1
            print("%s: timed out" % self.label, file=sys.stderr)
            return
        got = self.parse(p.stdout) if p.returncode == 0 else None
        if got is None:
            self.failed += 1
            print("%s: job failed (exit %d): %s" % (
                self.label, p.returncode, (p.stderr or p.stdout)[-300:]),
                file=sys.stderr)
            return
        self.p50.append(got[0])
        self.mean.append(got[1])
        self.by_round[rnd] = got[0]


def parse_ftcoll(out):
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            return float(m.group(3)), float(m.group(2))
    return None


def parse_mpi(out):
    for line in out.splitlines():
        m = MPI_LAT.match(line.strip())
        if m:
            return float(m.group(1)), float(m.group(2))
    return None


def parse_gloo(out):
    p50, means = [], []
    for line in out.splitlines():
        m = GLOO_LAT.match(line.strip())
        if m:
            p50.append(float(m.group(2)))
            means.append(float(m.group(3)))
    if not p50:
        return None
    return max(p50), sum(means) / len(means)


def variants(a):
    vs = []
    n, iters, warm = str(a.n), str(a.iters), str(max(a.iters // 10, 100))
    first = a.peers or a.build[0][1]
    mpi = os.path.join(first, "bench/mpi_allreduce")
    gloo = os.path.join(first, "bench/gloo_allreduce")
    run = os.path.join(first, "backends/bootstrap/ftcoll-run")
    mpirun = shutil.which("mpirun")
    noleak = {"ASAN_OPTIONS": "detect_leaks=0"}
    if mpirun and os.path.exists(mpi):
        base = [mpirun, "--allow-run-as-root", "--oversubscribe",
                "--bind-to", "none", "-np", n]
        tail = [mpi, "--sizes", "8", "--latency", "--iters", iters,
                "--warmup", warm]
        vs.append(Variant("mpi sm", "mpi sm (vader)",
                          base + ["--mca", "btl", "vader,self"] + tail,
                          noleak, parse_mpi))
        vs.append(Variant("mpi tcp", "mpi tcp (ob1/tcp)",
                          base + ["--mca", "pml", "ob1", "--mca", "btl",
                                  "tcp,self", "--mca", "btl_tcp_if_include",
                                  "lo"] + tail, noleak, parse_mpi))
    else:
        print("no mpirun or %s: no Open MPI rows" % mpi, file=sys.stderr)
    if os.path.exists(gloo):
        # Gloo gets a tenth of the iterations: it is ~100x slower.
        vs.append(Variant("gloo", "gloo ring (tcp)",
                          [run, "-n", n, "--timeout", "300", "--", gloo,
                           "--algo", "ring", "--sizes", "8", "--latency",
                           "--iters", str(max(a.iters // 10, 200)),
                           "--warmup", "50"], {}, parse_gloo))
    else:
        print("no %s: no Gloo row" % gloo, file=sys.stderr)
    for label, build in a.build:
        run = os.path.join(build, "backends/bootstrap/ftcoll-run")
        bench = os.path.join(build, "bench/ftcoll-bench")
        for t in a.transports:
            backend, env = TRANSPORTS[t]
            for w in a.waits:
                for al in a.algos:
                    for auth in a.auth:
                        if al == "raw" and (w != a.waits[0]
                                            or auth != a.auth[0]):
                            continue    # polled and unkeyed: one row
                        cmd = [run, "-n", n, "--timeout", "300", "--clock",
                               "ready", "--backend", backend, "--", bench,
                               "--iters", iters, "--warmup", warm,
                               "--quiet", "--wait", w] + ALGOS[al]
                        if auth == "off":
                            cmd.append("--no-auth")
                        key = (label, t, w, al, auth)
                        if al == "raw":
                            name = "%s %s raw hop (one-way)" % (label, t)
                        else:
                            name = "%s %s %s %s%s" % (
                                label, t, w, ALGO_NAMES[al],
                                " no-auth" if auth == "off" else "")
                        vs.append(Variant(key, name, cmd, env,
                                          parse_ftcoll))
    return vs


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", action="append", default=[],
                    help="LABEL=DIR: an ftcoll build to measure (repeat "
                    "for before/after); the first one's mpi_allreduce, "
                    "gloo_allreduce and ftcoll-run serve the peers")
    ap.add_argument("--peers", help="the build whose mpi_allreduce, "
                    "gloo_allreduce and ftcoll-run to use (default: the "
                    "first --build)")
    ap.add_argument("--jobs", type=int, default=9)
    ap.add_argument("--iters", type=int, default=5000)
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--transports", default="ucx:sm,libfabric:shm,ucx:tcp")
    ap.add_argument("--waits", default="spin,block")
    ap.add_argument("--algos", default="tree,f0,f1")
    ap.add_argument("--auth", default="on",
                    help="on, off or on,off: ftcoll rows with the job "
                    "key's MAC (the default under ftcoll-run), without it "
                    "(--no-auth), or both")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    builds = []
    for b in a.build or ["after=build"]:
        if "=" not in b:
            ap.error("--build wants LABEL=DIR, got %r" % b)
        label, d = b.split("=", 1)
        if not os.path.exists(os.path.join(d, "bench/ftcoll-bench")):
            ap.error("--build %s: no bench/ftcoll-bench in %s" % (b, d))
        builds.append((label, d))
    a.build = builds
    if a.peers is not None and not os.path.isdir(a.peers):
        ap.error("--peers %s: not a directory" % a.peers)
    a.transports = a.transports.split(",")
    for t in a.transports:
        if t not in TRANSPORTS:
            ap.error("--transports: unknown %r (of %s)"
                     % (t, ", ".join(TRANSPORTS)))
    a.waits = a.waits.split(",")
    for w in a.waits:
        if w not in ("spin", "block"):
            ap.error("--waits: spin or block, got %r" % w)
    a.algos = a.algos.split(",")
    for al in a.algos:
        if al not in ALGOS:
            ap.error("--algos: unknown %r (of %s)" % (al, ", ".join(ALGOS)))
    a.auth = a.auth.split(",")
    for x in a.auth:
        if x not in ("on", "off"):
            ap.error("--auth: on, off or on,off, got %r" % x)
    if a.jobs < 1 or a.iters < 1 or a.n < 2:
        ap.error("--jobs, --iters at least 1, --n at least 2")
    if "raw" in a.algos and a.n != 2:
        ap.error("--algos raw: the ping-pong runs between two ranks (--n 2)")

    vs = variants(a)
    print("# side_by_side: n = %d, 8-byte int64-sum allreduce, %d jobs per "
          "variant interleaved, %d iterations per job; %d cores, load %s"
          % (a.n, a.jobs, a.iters, os.cpu_count() or 1,
             " ".join("%.2f" % x for x in os.getloadavg())))
    print("# command: %s" % " ".join(sys.argv))
    sys.stdout.flush()
    for j in range(a.jobs):
        k = j % len(vs)
        for v in vs[k:] + vs[:k]:
            v.run(a.timeout, j)
        print("# round %d/%d done, load %.2f" % (j + 1, a.jobs,
                                                  os.getloadavg()[0]),
              file=sys.stderr)
    print("# finished, load %s" % " ".join("%.2f" % x
                                            for x in os.getloadavg()))
    by = {v.key: v for v in vs}
    mpi_sm, mpi_tcp, gl = (by.get(k) for k in ("mpi sm", "mpi tcp", "gloo"))

    def ratio(v, ref):
        if ref is None or not ref.p50 or not v.p50:
            return "-"
        return "%.2f" % (med(v.p50) / med(ref.p50))

    def round_ratio(v, ref):
        # The vCPUs of a VM may change placement during a run (Open MPI's
        # sm allreduce then moves between ~0.16 and ~0.41 us): the ratio
        # of the two jobs of one round, whose placement is most likely
        # the same, median over the rounds, is what a shifted placement
        # disturbs least.
        if ref is None:
            return "-"
        rs = [v.by_round[r] / ref.by_round[r] for r in v.by_round
              if r in ref.by_round and ref.by_round[r] > 0]
        return "%.2f" % med(rs) if rs else "-"

    def less_raw(v):
        # p50 less the raw hop's of the same build and transport.
        if not isinstance(v.key, tuple) or v.key[3] == "raw" or not v.p50:
            return "-"
        raw = [r for r in vs if isinstance(r.key, tuple)
               and r.key[3] == "raw" and r.key[:2] == v.key[:2] and r.p50]
        return "%.3f" % (med(v.p50) - med(raw[0].p50)) if raw else "-"

    print("%-50s %9s %9s %9s %8s %8s %8s %8s %5s" % (
        "variant", "p50 us", "mean us", "mean/p50", "/mpi", "/mpi rnd",
        "/gloo", "-raw us", "fail"))
    for v in vs:
        tcp = v.key == "mpi tcp" or v.key == "gloo" or (
            isinstance(v.key, tuple) and is_tcp(v.key[1]))
        ref = mpi_tcp if tcp else mpi_sm
        tail = med(v.mean) / med(v.p50) if v.p50 else float("nan")
        print("%-50s %9.3f %9.3f %9.2f %8s %8s %8s %8s %5d" % (
            v.label, med(v.p50), med(v.mean), tail, ratio(v, ref),
            round_ratio(v, ref), ratio(v, gl) if tcp else "-", less_raw(v),
            v.failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
