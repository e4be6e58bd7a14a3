#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-process tests and measurements of the UCX backend.

Starts N ranks of ucx_rank with ftcoll-run (or, without it, forks them
here with the same file rendezvous), under several UCX transports:

  tcp             UCX_TLS=tcp
  sm              UCX_TLS=sm  UCX_MM_ERROR_HANDLING=y UCX_KEEPALIVE_INTERVAL=100ms
  posix,cma,self  UCX_TLS=posix,cma,self (same MM settings)

and checks what the ranks report:

  correctness  allreduce, reduce, bcast (corrected f=1 and tree) at
               n = 2, 4, 8 with 8 bytes, and at n = 4 with 32 KiB: every
               result right, the ranks' allreduce results identical;
  kill         a rank SIGKILLs itself during a corrected allreduce (a
               non-root at n = 4, the root at n = 8): the survivors finish
               with the same valid results; we measure the time from the
               kill to UCX's report and to the first result without the
               victim, and which path reported it (UCX's error callback,
               or the core's keepalive / a failure list);
  stop         a rank SIGSTOPs itself: UCX never reports a hung process,
               the core's keepalive excludes it after suspect + probe
               timeouts, the survivors finish, and the stopped rank, once
               resumed, learns that it was excluded;
  tree kill    the baseline tree with a victim ends with FTC_EPEER_FAILED
               instead of hanging;
  external     SIGKILL from outside at a random point of a stream of
               corrected allreduces (a cue the victim prints, on which
               ftcoll-run kills it; the victim holds until it has);
  listen       a single-host job's ranks listen on loopback only (ss);
  startup      a rank dies right after the address exchange, before
               anyone connected to it: a failure, not a set-up error;
  config       UCX_TLS=sm without UCX_MM_ERROR_HANDLING=y fails at once
               with a message that says what to set.

--bench adds (or, with --only-bench, runs only) latency measurements:
8-byte allreduce (corrected f=0, f=1, tree) at n = 2, 4, 8 per transport,
and a raw UCX active-message ping-pong between ranks 0 and 1 in the same
run. The last line says 'N passed, M failed'.
"""
import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TRANSPORTS = {
    "tcp": {"UCX_TLS": "tcp"},
    "sm": {"UCX_TLS": "sm", "UCX_MM_ERROR_HANDLING": "y",
           "UCX_KEEPALIVE_INTERVAL": "100ms"},
    "posix,cma,self": {"UCX_TLS": "posix,cma,self",
                       "UCX_MM_ERROR_HANDLING": "y",
                       "UCX_KEEPALIVE_INTERVAL": "100ms"},
}

# The core's keepalive (suspect + probe timeouts) excludes a process that
# is silent too long, for good. On this 2-vCPU machine, shared with other
# jobs, a live rank can be descheduled for hundreds of ms: runs that test
# something else use generous timeouts, so that only real deaths (which UCX
# reports by itself) exclude anyone. The SIGSTOP runs, which test the
# keepalive, use short ones.
PATIENT = {"FTCOLL_SUSPECT_MS": "1000", "FTCOLL_PROBE_MS": "2000"}
STOP_SUSPECT_MS, STOP_PROBE_MS = 200, 300

ALL_PHASES = ("allreduce:corrected:1,reduce:corrected:1,bcast:corrected:1,"
              "allreduce:tree:0,reduce:tree:0,bcast:tree:0")

passed = 0
failed = 0
LINE = re.compile(r"^\[(\d+)\] (.*)$")


def expect(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}", flush=True)
    return cond


class Run:
    """What one job printed: per-rank summaries, fault events, stderr."""

    def __init__(self, rc, out, err, secs):
        self.rc = rc
        self.secs = secs
        self.summary = {}
        self.events = []
        self.err = err
        self.other = []
        for line in out.splitlines():
            m = LINE.match(line)
            body = m.group(2) if m else line
            i = body.find("{")
            if i < 0:
                self.other.append(line)
                continue
            try:
                d = json.loads(body[i:])
            except ValueError:
                self.other.append(line)
                continue
            if "event" in d:
                self.events.append(d)
            else:
                self.summary[d["rank"]] = d


def base_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("UCX_") and not k.startswith("FTCOLL_")}
    env.update(extra)
    # Sanitizer builds: UCX's own leak when a shared-memory peer dies is
    # not ours (tests/conformance/lsan.supp says which and why).
    if "suppressions=" not in env.get("LSAN_OPTIONS", ""):
        supp = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "conformance", "lsan.supp")
        env["LSAN_OPTIONS"] = ":".join(
            x for x in (env.get("LSAN_OPTIONS", ""),
                        "suppressions=" + os.path.normpath(supp)) if x)
    return env


def launch(opts, n, args, env_extra, timeout=60, may_fail=(), kill=None):
    env = base_env(env_extra)
    t0 = time.monotonic()
    if opts.ftcoll_run and os.path.exists(opts.ftcoll_run):
        cmd = [opts.ftcoll_run, "-n", str(n), "--timeout", str(timeout)]
        if may_fail:
            # ranks that kill or stop themselves
            cmd += ["--may-fail", ",".join(str(r) for r in may_fail)]
        if kill:
            # ftcoll-run kills a rank on a cue it prints (R@C:TEXT)
            cmd += ["--kill", kill]
        cmd += ["--", opts.rank] + args
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=timeout + 30)
        return Run(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
    return launch_fork(opts, n, args, env, timeout, t0)


def proc_stopped(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except OSError:
        return False


def launch_fork(opts, n, args, env, timeout, t0):
    """ftcoll-run's job, when it is not built: the file rendezvous, prompt
    reaping (a zombie keeps looking alive to UCX's shared-memory
    keepalive), SIGCONT for self-stopped ranks once the others are gone."""
    d = tempfile.mkdtemp(prefix="ftcoll-ucx-")
    token = secrets.token_hex(8)
    procs, files = [], []
    for r in range(n):
        e = dict(env, FTCOLL_RANK=str(r), FTCOLL_SIZE=str(n),
                 FTCOLL_RENDEZVOUS=d, FTCOLL_JOB_TOKEN=token,
                 FTCOLL_BACKEND="ucx")
        fo = tempfile.TemporaryFile(mode="w+")
        fe = tempfile.TemporaryFile(mode="w+")
        files.append((fo, fe))
        procs.append(subprocess.Popen([opts.rank] + args, env=e, stdout=fo,
                                      stderr=fe))
    rc = 0
    deadline = time.monotonic() + timeout
    resumed = False
    while True:
        alive = [p for p in procs if p.poll() is None]
        if not alive:
            break
        if time.monotonic() > deadline:
            for p in alive:
                p.kill()
            rc = 124
            continue
        if not resumed and all(proc_stopped(p.pid) for p in alive):
            for p in alive:
                os.kill(p.pid, signal.SIGCONT)
            resumed = True
        time.sleep(0.002)
    out, err = [], []
    for r, (fo, fe) in enumerate(files):
        fo.seek(0)
        fe.seek(0)
        out += [f"[{r}] {ln}" for ln in fo.read().splitlines()]
        err += [f"[{r}] {ln}" for ln in fe.read().splitlines()]
        p = procs[r]
        if rc == 0 and p.returncode not in (0, -signal.SIGKILL):
            rc = 1
    shutil.rmtree(d, ignore_errors=True)
    return Run(rc, "\n".join(out), "\n".join(err), time.monotonic() - t0)


def show_failure(run):
    tail = (run.err.strip().splitlines() + run.other)[-15:]
    for line in tail:
        print("    " + line)


def survivors(run, victims):
    return {r: s for r, s in run.summary.items() if r not in victims}


def killed(opts, run, victim, label):
    """The kill landed: the victim printed no summary and, under
    ftcoll-run (which names how each rank ended), died of SIGKILL."""
    ok = expect(victim not in run.summary,
                f"{label}: the victim lived on to print a summary")
    if opts.ftcoll_run and os.path.exists(opts.ftcoll_run):
        ok &= expect(f"ftcoll-run: rank {victim} was killed by SIGKILL"
                     in run.err, f"{label}: the victim did not die of SIGKILL")
    return ok


def check_agree(run, ranks, label):
    digests = {s["digest"] for r, s in run.summary.items() if r in ranks}
    expect(len(digests) == 1,
           f"{label}: survivors' allreduce results differ: {digests}")


# --- Scenarios ---------------------------------------------------------------

def correctness(opts, tname, n, count=1):
    label = f"correctness {tname} n={n}" + \
        (f" {8 * count}-byte" if count > 1 else "")
    run = launch(opts, n, ["--phases", ALL_PHASES, "--iters", "10",
                           "--count", str(count), "--linger", "50"],
                 dict(TRANSPORTS[tname], **PATIENT))
    ok = expect(run.rc == 0, f"{label}: exit {run.rc}")
    ok &= expect(len(run.summary) == n,
                 f"{label}: {len(run.summary)} of {n} ranks reported")
    for r, s in sorted(run.summary.items()):
        ok &= expect(s["wrong"] == 0, f"{label}: rank {r}: {s['first_wrong']}")
        ok &= expect(all(p["ok"] == p["done"] == 10 for p in s["phases"]),
                     f"{label}: rank {r}: not every collective succeeded")
    check_agree(run, set(range(n)), label)
    tl = run.summary.get(0, {}).get("transport", "?")
    print(f"  {label}: {'ok' if ok else 'FAILED'} ({tl}, {run.secs:.1f} s)",
          flush=True)
    if not ok:
        show_failure(run)


def kill_victim_times(run, victim, kill_iter, surv):
    """Per survivor: (detection ms, first result without the victim ms,
    path)."""
    ev = [e for e in run.events
          if e["rank"] == victim and e["event"] in ("kill", "stop")]
    if not ev:
        return None
    t_kill = ev[0]["t_ns"]
    vw = victim + 1
    out = {}
    for r, s in surv.items():
        vi = [v for v in s["victims"] if v["rank"] == victim][0]
        det = (vi["detected_ns"] - t_kill) / 1e6 if vi["ucx_reported"] else None
        deliver = None
        full = sum(k + 1 for k in range(s["n"]))
        for g, t, st, w in s["marks"]:
            if g < kill_iter:
                continue
            if st == 0 and w >= 0 and w == full - vw:
                deliver = (t - t_kill) / 1e6
                break
        path = "ucx" if vi["ucx_reported"] else "core"
        out[r] = (det, deliver, path)
    return out


def fmt_ms(x):
    return "-" if x is None else f"{x:.2f}"


def kill_test(opts, tname, n, victim, kill_iter=10, extra_env=None,
              results=None):
    label = f"kill {tname} n={n} victim={victim}"
    env = dict(TRANSPORTS[tname], **PATIENT)
    env.update(extra_env or {})
    run = launch(opts, n, ["--phases",
                           "allreduce:corrected:1,reduce:corrected:1,"
                           "bcast:corrected:1",
                           "--iters", "20", "--kill", f"{victim}@{kill_iter}",
                           "--linger", "50"], env, may_fail=[victim])
    surv = survivors(run, {victim})
    ok = expect(run.rc == 0, f"{label}: exit {run.rc}")
    ok &= killed(opts, run, victim, label)
    ok &= expect(len(surv) == n - 1,
                 f"{label}: {len(surv)} of {n - 1} survivors reported")
    for r, s in sorted(surv.items()):
        ok &= expect(s["wrong"] == 0, f"{label}: rank {r}: {s['first_wrong']}")
        # With the root (0) dead, reduce and bcast rooted at it end with
        # FTC_EROOT_FAILED (accepted by ucx_rank); allreduce moves on to
        # another root and must succeed.
        must = s["phases"] if victim != 0 else s["phases"][:1]
        ok &= expect(all(p["ok"] == p["done"] == 20 for p in must),
                     f"{label}: rank {r}: a collective failed")
        ok &= expect(all(p["done"] == 20 for p in s["phases"]),
                     f"{label}: rank {r}: a collective did not end")
        ok &= expect(victim in s["failed"],
                     f"{label}: rank {r} does not know {victim} failed")
    check_agree(run, set(surv), label)
    times = kill_victim_times(run, victim, kill_iter, surv)
    ok &= expect(times is not None, f"{label}: no kill event")
    if times:
        ok &= expect(all(t[1] is not None for t in times.values()),
                     f"{label}: a survivor never delivered a result "
                     f"without the victim")
        if tname == "tcp":
            ok &= expect(all(t[2] == "ucx" for t in times.values()),
                         f"{label}: over tcp UCX should report the death")
        det = [t[0] for t in times.values() if t[0] is not None]
        dl = [t[1] for t in times.values() if t[1] is not None]
        paths = sorted({t[2] for t in times.values()})
        print(f"  {label}: {'ok' if ok else 'FAILED'}: UCX report after "
              f"{fmt_ms(min(det) if det else None)}-"
              f"{fmt_ms(max(det) if det else None)} ms, result without it "
              f"after {fmt_ms(min(dl) if dl else None)}-"
              f"{fmt_ms(max(dl) if dl else None)} ms, path {'+'.join(paths)}",
              flush=True)
        if results is not None:
            results.append((tname, n, victim, det, dl, paths))
    if not ok:
        show_failure(run)


def stop_test(opts, tname, n, victim, stop_iter=10, results=None):
    label = f"stop {tname} n={n} victim={victim}"
    env = dict(TRANSPORTS[tname], FTCOLL_SUSPECT_MS=str(STOP_SUSPECT_MS),
               FTCOLL_PROBE_MS=str(STOP_PROBE_MS))
    run = launch(opts, n, ["--phases", "allreduce:corrected:1", "--iters",
                           "25", "--stop", f"{victim}@{stop_iter}",
                           "--linger", "50"], env, may_fail=[victim])
    surv = survivors(run, {victim})
    ok = expect(run.rc == 0, f"{label}: exit {run.rc}")
    ok &= expect(len(surv) == n - 1,
                 f"{label}: {len(surv)} of {n - 1} survivors reported")
    for r, s in sorted(surv.items()):
        ok &= expect(s["wrong"] == 0, f"{label}: rank {r}: {s['first_wrong']}")
        ok &= expect(s["phases"][0]["ok"] == 25,
                     f"{label}: rank {r}: a collective failed")
        vi = [v for v in s["victims"] if v["rank"] == victim][0]
        ok &= expect(vi["known"], f"{label}: rank {r} did not exclude it")
        ok &= expect(not vi["ucx_reported"],
                     f"{label}: UCX reported a stopped process (unexpected)")
    check_agree(run, set(surv), label)
    vs = run.summary.get(victim)
    ok &= expect(vs is not None and vs["excluded"],
                 f"{label}: the resumed rank did not learn it was excluded")
    times = kill_victim_times(run, victim, stop_iter, surv)
    dl = [t[1] for t in (times or {}).values() if t[1] is not None]
    ok &= expect(len(dl) == n - 1, f"{label}: no result without the victim")
    if dl:
        print(f"  {label}: {'ok' if ok else 'FAILED'}: result without it "
              f"after {min(dl):.1f}-{max(dl):.1f} ms (suspect "
              f"{STOP_SUSPECT_MS} + probe {STOP_PROBE_MS} ms), path core "
              f"keepalive", flush=True)
        if results is not None:
            results.append((tname, n, victim, None, dl, ["core"]))
    if not ok:
        show_failure(run)


def external_kill_test(opts, tname, n, victim):
    """SIGKILL from outside, during a stream of corrected allreduces: the
    survivors must agree, whatever the victim had sent. The point is
    random in progress, not in time (a job may be over before a time
    comes): the victim prints a cue at a random iteration g, ftcoll-run
    kills it on that cue, and it holds before iteration h = g + 200 until
    the kill has landed. Over shared memory the cue is the hold itself: a
    process killed inside a send wedges the peer it was writing to
    (docs/backends.md section 7)."""
    iters = 1000
    g = 50 + secrets.randbelow(400)
    h = g + 200
    shm = tname != "tcp"
    where = f"at its hold {h}" if shm else f"in {g}..{h}"
    label = f"external kill {tname} n={n} victim={victim} {where}"
    if not (opts.ftcoll_run and os.path.exists(opts.ftcoll_run)):
        print(f"  {label}: skipped (needs ftcoll-run)")
        return
    cue = (f'"hold","iter":{h}}}' if shm else f'"cue","iter":{g}}}')
    run = launch(opts, n, ["--phases", "allreduce:corrected:1", "--iters",
                           str(iters), "--victim", f"{victim}@{h}",
                           "--cue", f"{victim}@{g}", "--linger", "50"],
                 dict(TRANSPORTS[tname], **PATIENT),
                 kill=f"{victim}@{victim}:{cue}")
    surv = survivors(run, {victim})
    ok = killed(opts, run, victim, label)
    ok &= expect(run.rc == 0, f"{label}: exit {run.rc}")
    ok &= expect(len(surv) == n - 1,
                 f"{label}: {len(surv)} of {n - 1} survivors reported")
    for r, s in sorted(surv.items()):
        ok &= expect(s["wrong"] == 0, f"{label}: rank {r}: {s['first_wrong']}")
        ok &= expect(s["phases"][0]["ok"] == iters,
                     f"{label}: rank {r}: a collective failed")
        ok &= expect(victim in s["failed"],
                     f"{label}: rank {r} does not know {victim} failed")
    check_agree(run, set(surv), label)
    held = any(e["rank"] == victim and e["event"] == "hold"
               for e in run.events)
    print(f"  {label}: {'ok' if ok else 'FAILED'} "
          f"({'at its hold' if held else 'before its hold'})", flush=True)
    if not ok:
        show_failure(run)


def tree_kill_test(opts, tname, n, victim):
    """The baseline tree has no tolerance: with a victim its collectives
    end with FTC_EPEER_FAILED, never hang."""
    label = f"tree kill {tname} n={n} victim={victim}"
    run = launch(opts, n, ["--phases", "allreduce:tree:0,bcast:tree:0",
                           "--iters", "10", "--kill", f"{victim}@5",
                           "--linger", "50"],
                 dict(TRANSPORTS[tname], **PATIENT),
                 may_fail=[victim])
    surv = survivors(run, {victim})
    ok = expect(run.rc == 0, f"{label}: exit {run.rc}")
    ok &= killed(opts, run, victim, label)
    ok &= expect(len(surv) == n - 1,
                 f"{label}: {len(surv)} of {n - 1} survivors reported")
    errors = 0
    for r, s in sorted(surv.items()):
        ok &= expect(s["wrong"] == 0, f"{label}: rank {r}: {s['first_wrong']}")
        ok &= expect(all(p["done"] == 10 for p in s["phases"]),
                     f"{label}: rank {r}: a collective did not end")
        errors += sum(p["errors"] for p in s["phases"])
    ok &= expect(errors > 0, f"{label}: no collective saw the failure")
    print(f"  {label}: {'ok' if ok else 'FAILED'} ({errors} collectives "
          f"ended with FTC_EPEER_FAILED)", flush=True)
    if not ok:
        show_failure(run)


def startup_death_test(opts, tname, n, victim, extra_env=None, tag=""):
    """A rank dies right after the address exchange, before anyone
    connected to it (ucx_rank --die-after-exchange: the others connect only
    once its process is gone). Over tcp on one host their connect() is
    refused at once and UCX says "Destination is unreachable": that used to
    fail their set-up (exit 4, the whole job down). It is a failure like any
    other: the survivors run every collective without it and agree."""
    label = f"startup death {tname}{tag} n={n} victim={victim}"
    env = dict(TRANSPORTS[tname], **PATIENT)
    env.update(extra_env or {})
    run = launch(opts, n, ["--phases",
                           "allreduce:corrected:1,reduce:corrected:1,"
                           "bcast:corrected:1",
                           "--iters", "10", "--die-after-exchange",
                           str(victim), "--linger", "50"], env,
                 may_fail=[victim])
    surv = survivors(run, {victim})
    ok = expect(run.rc == 0, f"{label}: exit {run.rc}")
    ok &= expect(any(e["event"] == "died-after-exchange" for e in run.events),
                 f"{label}: the victim did not die where it should")
    ok &= expect(len(surv) == n - 1,
                 f"{label}: {len(surv)} of {n - 1} survivors reported")
    reported = 0
    for r, s in sorted(surv.items()):
        ok &= expect(s["wrong"] == 0, f"{label}: rank {r}: {s['first_wrong']}")
        # With the root (0) dead, reduce and bcast rooted at it end with
        # FTC_EROOT_FAILED; allreduce moves to another root.
        must = s["phases"] if victim != 0 else s["phases"][:1]
        ok &= expect(all(p["ok"] == p["done"] == 10 for p in must),
                     f"{label}: rank {r}: a collective failed")
        ok &= expect(all(p["done"] == 10 for p in s["phases"]),
                     f"{label}: rank {r}: a collective did not end")
        ok &= expect(victim in s["failed"],
                     f"{label}: rank {r} does not know {victim} failed")
        vi = [v for v in s["victims"] if v["rank"] == victim][0]
        reported += vi["ucx_reported"]
    if "FTCOLL_UCX_CONNECT" not in (extra_env or {}):
        # eager endpoints: every survivor's backend found it at set-up
        ok &= expect(reported == n - 1,
                     f"{label}: {reported} of {n - 1} backends reported it")
    check_agree(run, set(surv), label)
    print(f"  {label}: {'ok' if ok else 'FAILED'} (reported by "
          f"{reported} of {n - 1} backends, {run.secs:.1f} s)", flush=True)
    if not ok:
        show_failure(run)


def listen_test(opts, tname, n=2):
    """Where a rank of a single-host job listens: started by ftcoll-run
    (every rank on this host: ftc_bootstrap_single_host), its network
    transports must listen on the loopback interface only, not on every
    interface (UCX_NET_DEVICES=lo, chosen by the backend). ss, run by each
    rank once it is set up, says where its sockets are."""
    label = f"listen {tname} n={n}"
    if not shutil.which("ss"):
        print(f"  {label}: skipped (no ss)")
        return
    run = launch(opts, n, ["--phases", "allreduce:corrected:1", "--iters",
                           "5", "--report-listen", "--linger", "50"],
                 dict(TRANSPORTS[tname], **PATIENT))
    ev = {e["rank"]: e for e in run.events if e["event"] == "listen"}
    ok = expect(run.rc == 0, f"{label}: exit {run.rc}")
    ok &= expect(len(ev) == n, f"{label}: {len(ev)} of {n} ranks reported")
    for r, e in sorted(ev.items()):
        addrs = [a for a in e["addrs"].split(",") if a]
        ok &= expect(e["n"] > 0 and len(addrs) > 0,
                     f"{label}: rank {r} listens nowhere ({e})")
        ok &= expect(all(a.startswith("127.") or a.startswith("[::1]")
                         for a in addrs),
                     f"{label}: rank {r} listens on {e['addrs']} "
                     f"(UCX_NET_DEVICES={e['net_devices']})")
    some = ev.get(0, {})
    print(f"  {label}: {'ok' if ok else 'FAILED'} (rank 0: "
          f"{some.get('addrs', '?')}, UCX_NET_DEVICES="
          f"{some.get('net_devices', '?')})", flush=True)
    if not ok:
        show_failure(run)


def config_test(opts):
    label = "config UCX_TLS=sm without UCX_MM_ERROR_HANDLING"
    run = launch(opts, 2, ["--iters", "1"], {"UCX_TLS": "sm"}, timeout=30)
    ok = expect(run.rc != 0, f"{label}: should fail")
    ok &= expect("UCX_MM_ERROR_HANDLING=y" in run.err,
                 f"{label}: the message should name UCX_MM_ERROR_HANDLING=y")
    print(f"  {label}: {'ok' if ok else 'FAILED'}", flush=True)
    if not ok:
        show_failure(run)


def failure_summary(kills, stops):
    """Median, min and max over survivors and repeats, per (transport, n)."""
    def stats(xs):
        xs = sorted(xs)
        if not xs:
            return "-"
        return f"{xs[len(xs) // 2]:7.2f} [{xs[0]:.2f}-{xs[-1]:.2f}]"
    groups = {}
    for kind, rows in (("SIGKILL", kills), ("SIGSTOP", stops)):
        for tname, n, victim, det, dl, paths in rows:
            g = groups.setdefault((kind, tname, n, victim),
                                  {"det": [], "dl": [], "paths": set(),
                                   "runs": 0})
            g["det"] += det or []
            g["dl"] += dl
            g["paths"] |= set(paths)
            g["runs"] += 1
    if not groups:
        return
    print("\nFailure to report and to delivery, ms: median [min-max] over "
          "survivors and runs")
    print(f"{'fault':8} {'transport':15} {'n':>2} {'victim':>6} {'runs':>4} "
          f"{'UCX error callback':>26} {'first result without it':>26} path")
    for (kind, tname, n, victim), g in sorted(groups.items()):
        print(f"{kind:8} {tname:15} {n:2} {victim:6} {g['runs']:4} "
              f"{stats(g['det']):>26} {stats(g['dl']):>26} "
              f"{'+'.join(sorted(g['paths']))}")
    print()


# --- Measurements ------------------------------------------------------------

BENCH_PHASES = "allreduce:corrected:0,allreduce:corrected:1,allreduce:tree:0"


def bench(opts):
    rows = []
    for tname in opts.transports:
        for n in opts.sizes:
            for wait in opts.waits:
                iters = opts.bench_iters if n <= 2 else opts.bench_iters // 2
                args = ["--bench", "--phases", BENCH_PHASES, "--iters",
                        str(iters), "--warmup", str(iters // 10),
                        "--pingpong", str(opts.pingpong), "--wait", wait,
                        "--linger", "50"]
                env = dict(TRANSPORTS[tname], FTCOLL_SUSPECT_MS="5000",
                           FTCOLL_PROBE_MS="10000")
                run = launch(opts, n, args, env, timeout=300)
                label = f"bench {tname} n={n} {wait}"
                ok = expect(run.rc == 0 and len(run.summary) == n,
                            f"{label}: exit {run.rc}")
                ok &= expect(all(s["wrong"] == 0 for s in run.summary.values()),
                             f"{label}: wrong results")
                if not ok:
                    show_failure(run)
                    continue
                s0 = run.summary[0]
                pp = (s0["pingpong_us"], s0["pingpong_mean_us"])
                cells = []
                for i, p in enumerate(s0["phases"]):
                    p50s = [s["phases"][i]["p50_us"]
                            for s in run.summary.values()]
                    means = [s["phases"][i]["mean_us"]
                             for s in run.summary.values()]
                    cells.append((p["name"], max(p50s), max(means)))
                rows.append((tname, n, wait, s0["transport"], pp, cells))
                print(f"  {label}: ping-pong {pp[0]:.2f}/{pp[1]:.2f} us "
                      f"one-way; " +
                      "; ".join(f"{c[0]} p50 {c[1]:.2f} mean {c[2]:.2f} us"
                                for c in cells), flush=True)
    if rows:
        print("\n8-byte allreduce latency in us (worst rank's median / worst "
              "rank's mean), and\nraw UCX AM ping-pong between ranks 0 and 1, "
              "one-way us (median / mean):")
        print(f"{'transport':16} {'n':>2} {'wait':5} {'lane':14} "
              f"{'ping-pong':>15} {'corrected f=0':>15} {'corrected f=1':>15} "
              f"{'tree':>15}")
        for tname, n, wait, tl, pp, cells in rows:
            cols = " ".join(f"{c[1]:7.2f}/{c[2]:7.2f}" for c in cells)
            print(f"{tname:16} {n:2} {wait:5} {tl:14} {pp[0]:7.2f}/{pp[1]:7.2f} "
                  f"{cols}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rank", required=True, help="the ucx_rank program")
    ap.add_argument("--ftcoll-run", default="", help="the launcher, if built")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--only-bench", action="store_true")
    ap.add_argument("--transports", default=";".join(TRANSPORTS),
                    help="subset, separated by ';'")
    ap.add_argument("--sizes", default="2,4,8")
    ap.add_argument("--waits", default="spin,block")
    ap.add_argument("--bench-iters", type=int, default=2000)
    ap.add_argument("--pingpong", type=int, default=20000)
    ap.add_argument("--repeat-kill", type=int, default=1,
                    help="kill runs per (transport, n), for the statistics")
    opts = ap.parse_args()
    opts.transports = [t for t in opts.transports.split(";")
                       if t in TRANSPORTS]
    opts.sizes = [int(x) for x in opts.sizes.split(",")]
    opts.waits = opts.waits.split(",")
    launcher = opts.ftcoll_run if opts.ftcoll_run and \
        os.path.exists(opts.ftcoll_run) else "forked here"
    print(f"UCX backend tests; launcher: {launcher}", flush=True)
    t0 = time.monotonic()
    if not opts.only_bench:
        config_test(opts)
        listen_test(opts, "tcp")
        for tname in TRANSPORTS:
            for n in (2, 4, 8):
                correctness(opts, tname, n)
            # multi-fragment eager messages; sends UCX completes later
            correctness(opts, tname, 4, count=4096)
        kills, stops = [], []
        for tname in TRANSPORTS:
            for _ in range(opts.repeat_kill):
                kill_test(opts, tname, 4, 2, results=kills)
                kill_test(opts, tname, 8, 0, results=kills)
        for tname in ("tcp", "sm"):
            for _ in range(opts.repeat_kill):
                stop_test(opts, tname, 4, 1, results=stops)
        failure_summary(kills, stops)
        for tname in TRANSPORTS:
            startup_death_test(opts, tname, 4, 2)
        startup_death_test(opts, "tcp", 4, 0,
                           extra_env={"FTCOLL_UCX_CONNECT": "lazy"},
                           tag=" lazy")
        tree_kill_test(opts, "tcp", 4, 1)
        tree_kill_test(opts, "sm", 4, 3)
        external_kill_test(opts, "tcp", 4, 3)
        external_kill_test(opts, "sm", 8, 5)
    if opts.bench or opts.only_bench:
        bench(opts)
    print(f"({time.monotonic() - t0:.1f} s)")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
