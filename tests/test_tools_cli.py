#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The command lines of ftcoll's tools (bench/cli.h and the examples).

For every tool: --help and -h exit 0 and print a usage; --version prints
the project's version; an unknown flag exits 2 naming the flag as unknown;
a flag missing its value exits 2 naming the flag. For the tools with
valued flags, --opt=value means --opt value, and a nonsensical value is
refused naming the flag. ftcoll-run hands everything after '--' (or from
PROGRAM on) to the program untouched.

  test_tools_cli.py VERSION --sim P --bench P --core P --run P [--info P]
                    --example P [--example-zmq P] [--foreign P]...

The last line says 'N passed, M failed'; exit status 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "support"))
from tally import check, finish  # noqa: E402


def run(argv, **kw):
    env = dict(os.environ)
    env.pop("FTCOLL_BACKEND", None)
    return subprocess.run(argv, capture_output=True, text=True, timeout=30,
                          env=env, **kw)


def common(prog, name, version):
    """What every tool does alike."""
    for h in ("--help", "-h"):
        r = run([prog, h])
        check(r.returncode == 0 and "usage" in r.stdout,
              f"{name} {h}: exit {r.returncode}, stdout {r.stdout[:80]!r}")
    for v in ("--version", "-V"):
        r = run([prog, v])
        check(r.returncode == 0 and version in r.stdout
              and name in r.stdout,
              f"{name} {v}: exit {r.returncode}, {r.stdout!r}")
    r = run([prog, "--no-such-flag"])
    check(r.returncode == 2 and "unknown" in r.stderr
          and "--no-such-flag" in r.stderr,
          f"{name} --no-such-flag: exit {r.returncode}, {r.stderr!r}")
    r = run([prog, "--no-such-flag=3"])
    check(r.returncode == 2 and "unknown" in r.stderr
          and "--no-such-flag" in r.stderr,
          f"{name} --no-such-flag=3: exit {r.returncode}, {r.stderr!r}")
    r = run([prog, "-Z"])
    check(r.returncode == 2 and "-Z" in r.stderr,
          f"{name} -Z: exit {r.returncode}, {r.stderr!r}")


def refuses(argv, flag, name, why=""):
    r = run(argv)
    return check(r.returncode == 2 and flag in r.stderr,
                 f"{name} {' '.join(argv[1:])}: want exit 2 naming {flag}"
                 f"{why}; got {r.returncode}, {r.stderr!r}")


def test_sim(prog, version):
    common(prog, "ftcoll-sim", version)
    a = run([prog, "-n", "8", "--coll", "bcast", "--json"])
    b = run([prog, "-n8", "--coll=bcast", "--json"])
    norm = lambda s: [x for x in s.split(",") if "_s\"" not in x
                      and "peak_rss" not in x]
    check(a.returncode == 0 and b.returncode == 0
          and norm(a.stdout) == norm(b.stdout),
          f"ftcoll-sim --coll=bcast means --coll bcast ({b.returncode})")
    refuses([prog, "--coll"], "--coll", "ftcoll-sim", " needs a value")
    refuses([prog, "--json=yes"], "--json", "ftcoll-sim", " takes no value")
    refuses([prog, "-n", "0"], "-n", "ftcoll-sim")
    refuses([prog, "--coll=gather"], "--coll", "ftcoll-sim")
    refuses([prog, "-n", "4", "-f", "4"], "-f", "ftcoll-sim")
    refuses([prog, "--co", "bcast"], "--co", "ftcoll-sim", " (ambiguous)")
    refuses([prog, "stray"], "stray", "ftcoll-sim")
    refuses([prog, "--model", "loopback", "-L", "3"], "-L", "ftcoll-sim")
    # ftco's flags (docs/ftco.md, "In the simulator")
    refuses([prog, "--service", "disd"], "--service", "ftcoll-sim",
            " (belongs to --algo ftco)")
    refuses([prog, "--algo", "ftco", "--service", "fast"], "--service",
            "ftcoll-sim")
    refuses([prog, "--ack-timeout", "5"], "--ack-timeout", "ftcoll-sim")
    refuses([prog, "--model", "logp", "--order", "data-first"], "--order",
            "ftcoll-sim", " (belongs to --algo ftco)")
    refuses([prog, "--model", "logp", "--algo", "ftco", "--order", "last"],
            "--order", "ftcoll-sim")
    refuses([prog, "--algo", "ftco", "--tree", "binomial"], "--tree",
            "ftcoll-sim")
    refuses([prog, "--algo", "ftco", "-n", "8", "-k", "8"], "-k",
            "ftcoll-sim", " (k >= n)")
    refuses([prog, "--algo", "ftco", "-k", "1"], "-k", "ftcoll-sim")
    refuses([prog, "-k", "bestest"], "-k", "ftcoll-sim")
    r = run([prog, "--algo", "ftco", "-L", "10", "-o", "1", "-n", "64",
             "-k", "best", "--service", "rsd", "--ack-timeout", "48",
             "--faults", "2", "--summary"])
    check(r.returncode == 0 and "all properties hold" in r.stdout
          and "k = " in r.stderr,
          f"ftcoll-sim --algo ftco -k best --service rsd: {r.returncode}, "
          f"{r.stdout[-200:]!r} {r.stderr!r}")
    # --schedule: the faults drawn do not depend on the algorithm, and
    # each one took place.
    lines = []
    for algo in (["--algo", "ftco"], ["--algo", "corrected", "-f", "4"]):
        r = run([prog, "-n", "64", "-L", "10", "--faults", "3", "--crashes",
                 "1", "--crash-window", "50", "--seed", "5", "--schedule",
                 "--summary"] + algo)
        got = [x for x in r.stderr.splitlines() if x.startswith("schedule:")]
        check(r.returncode == 0 and len(got) == 1
              and "happened 3/3 1/1" in got[0] and "MISMATCH" not in got[0],
              f"ftcoll-sim --schedule {' '.join(algo)}: {r.returncode}, "
              f"{r.stderr!r}")
        lines += got
    check(len(lines) == 2 and lines[0] == lines[1],
          f"ftcoll-sim --schedule: ftco and corrected met the same faults "
          f"({lines!r})")
    # A value larger than the library's default segment leaves as a
    # train of segments and credits: the exact message counts of a
    # failure-free run are the algorithm's messages, not the wire's, and
    # the run holds every property.
    for algo in (["--algo", "tree"], ["--algo", "corrected"]):
        for coll in ("reduce", "bcast", "allreduce"):
            r = run([prog, "-n", "4", "-f", "1", "--coll", coll, "--count",
                     "131072", "--dtype", "int64", "--summary"] + algo)
            check(r.returncode == 0 and "all properties hold" in r.stdout,
                  f"ftcoll-sim {' '.join(algo)} --coll {coll}, 1 MiB: "
                  f"{r.returncode}, {r.stdout[-300:]!r}")
    test_sim_ulfm(prog)


def sim_json(prog, args):
    """ftcoll-sim ARGS --json: (exit status, the object or None)."""
    import json
    r = run([prog] + args + ["--json"])
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        return r.returncode, None


def test_sim_ulfm(prog):
    """--coll agree|shrink|invalidate and --input allbut (sim_ulfm.c)."""
    allbut8 = (1 << 64) - 1 - 0xFF  # every rank of 8 contributed
    rc, d = sim_json(prog, ["--coll", "agree", "-n", "8"])
    check(rc == 0 and d is not None and d["violations"] == 0
          and d["coll"] == "agree"
          and all(x["status"] == "FTC_OK" and x["value"] == [allbut8]
                  and x["failed_seen"] == [] for x in d["ranks"]),
          f"ftcoll-sim --coll agree -n 8: every rank ANDs all 8 ({rc})")
    # Rank 3 dead before the call: its bit stays set, it is in every
    # rank's failed set, and the checker agrees.
    rc, d = sim_json(prog, ["--coll", "agree", "-n", "8", "--fail", "3"])
    live = [x for x in d["ranks"] if not x["failed"]] if d else []
    check(rc == 0 and len(live) == 7
          and all(x["value"] == [allbut8 | 8] and x["failed_seen"] == [3]
                  for x in live),
          f"ftcoll-sim --coll agree --fail 3: value and failed set ({rc})")
    rc, d = sim_json(prog, ["--coll", "shrink", "-n", "6", "--fail", "2",
                            "--crash", "4:1"])
    ok = rc == 0 and d is not None and d["violations"] == 0
    for x in d["ranks"] if d else []:
        if x["delivered"] and x["status"] == "FTC_OK":
            g = x["group"]
            want = [r for r in range(6) if r not in x["failed_seen"]]
            ok = ok and g["id"] == 2 and g["epoch"] == 1 \
                and g["members"] == want and 2 in x["failed_seen"]
        elif not x["failed"]:
            ok = False
    check(ok, f"ftcoll-sim --coll shrink --fail 2: new group (2, 1) of "
              f"the others at every survivor ({rc})")
    rc, d = sim_json(prog, ["--coll", "agree", "-n", "1"])
    check(rc == 0 and d is not None and d["ranks"][0]["value"] == [(1 << 64) - 2],
          f"ftcoll-sim --coll agree -n 1: -f does not apply ({rc})")
    rc, d = sim_json(prog, ["--coll", "invalidate", "-n", "8"])
    check(rc == 0 and d is not None and d["coll"] == "invalidate"
          and all(x["invalidated"] and x["status"] == "FTC_EINVALIDATED"
                  for x in d["ranks"]),
          f"ftcoll-sim --coll invalidate: every rank learns it ({rc})")
    r = run([prog, "--coll", "agree", "--model", "logp", "-n", "64",
             "--crashes", "5", "--fault-root", "any", "--runs", "3", "--csv"])
    rows = r.stdout.splitlines()
    check(r.returncode == 0 and len(rows) == 7
          and all(",agree,ulfm,logp,64," in x for x in rows[1:]),
          f"ftcoll-sim --coll agree --runs 3 --csv: {r.returncode}, "
          f"{len(rows)} lines")
    # The agreement's failure-free round, chosen at run time: each one
    # passes the checker, which counts its messages by its own formula.
    for rnd in ("rd2", "rd4", "tree"):
        rc, d = sim_json(prog, ["--coll", "agree", "-n", "8",
                                "--agree-round", rnd])
        check(rc == 0 and d is not None and d["violations"] == 0
              and all(x["status"] == "FTC_OK" and x["value"] == [allbut8]
                      for x in d["ranks"]),
              f"ftcoll-sim --coll agree --agree-round {rnd}: checked ({rc})")
    rc, d = sim_json(prog, ["--coll", "shrink", "-n", "6", "--fail", "2",
                            "--crash", "4:1", "--agree-round", "tree"])
    check(rc == 0 and d is not None and d["violations"] == 0,
          f"ftcoll-sim --coll shrink --agree-round tree: checked ({rc})")
    refuses([prog, "--agree-round", "tree"], "--agree-round", "ftcoll-sim",
            " (the allreduce has no agreement)")
    refuses([prog, "--coll", "invalidate", "--agree-round", "rd4"],
            "--agree-round", "ftcoll-sim", " (invalidate)")
    refuses([prog, "--coll", "agree", "--agree-round", "rd3"],
            "--agree-round", "ftcoll-sim")
    refuses([prog, "--coll", "shrink", "-n", "4"], "--coll", "ftcoll-sim",
            " (shrink with no failure known before it)")
    refuses([prog, "--coll", "agreed"], "--coll", "ftcoll-sim")
    refuses([prog, "--input", "allbut", "--dtype", "float"], "--input",
            "ftcoll-sim", " (allbut on floats)")
    refuses([prog, "--input", "allbutt"], "--input", "ftcoll-sim")


def test_sim_gossip(prog):
    """ftcoll-sim --algo push-sum|push-flow|pcf: the gossip family's flags
    (bench/sim_gossip.c)."""
    r = run([prog, "--algo", "pcf", "--help"])
    check(r.returncode == 0 and "--neighbours" in r.stdout,
          f"ftcoll-sim --algo pcf --help: {r.returncode}")
    refuses([prog, "--algo", "pcf", "--bogus"], "--bogus", "ftcoll-sim")
    refuses([prog, "--algo", "pcf", "--dtype", "int64"], "--dtype",
            "ftcoll-sim")
    refuses([prog, "--algo", "pcf", "--target", "-1"], "--target",
            "ftcoll-sim")
    refuses([prog, "--algo", "pcf", "-n", "6", "--neighbours", "hypercube"],
            "hypercube", "ftcoll-sim")
    refuses([prog, "--algo", "pcf", "-n", "8", "--link-fail", "0-9@3"],
            "--link-fail", "ftcoll-sim")
    refuses([prog, "--algo", "pcf", "-n", "8", "--link-fail-reported"],
            "--link-fail-reported", "ftcoll-sim")
    refuses([prog, "--algo", "pcf", "-n", "8", "--neighbours", "torus3d",
             "--torus", "2x2x3"], "--torus", "ftcoll-sim")
    refuses([prog, "--algo", "pcf", "--crashes", "8"], "--crashes",
            "ftcoll-sim")
    for algo in ("push-sum", "push-flow", "pcf"):
        r = run([prog, "--algo", algo, "-n", "16", "--neighbours",
                 "hypercube", "--json"])
        ok = r.returncode == 0
        if ok:
            d = json.loads(r.stdout)
            run0 = d["runs"][0]
            ok = (d["algo"] == algo and run0["ok"]
                  and run0["max_rel_error"] <= 1e-13
                  and run0["iterations"] > 0
                  and run0["messages_per_process"] > 0)
        check(ok, f"ftcoll-sim --algo {algo} -n 16 --json: {r.returncode} "
                  f"{r.stdout[:200]!r} {r.stderr[:200]!r}")
    # A link failure must have happened and been survived.
    r = run([prog, "--algo", "push-flow", "-n", "16", "--neighbours",
             "hypercube", "--link-fail", "0-1@30", "--json"])
    ok = r.returncode == 0
    if ok:
        run0 = json.loads(r.stdout)["runs"][0]
        ok = (run0["ok"] and run0["cuts"] == 1 and run0["dropped_cut"] > 0
              and run0["max_err_vs_all"] <= 1e-12)
    check(ok, f"ftcoll-sim --algo push-flow --link-fail 0-1@30: "
              f"{r.returncode} {r.stdout[:300]!r}")
    # Reported to both ends at once (the paper's Figure 4 handling): the
    # cut happened and push-flow still ends with everyone's aggregate.
    r = run([prog, "--algo", "push-flow", "-n", "16", "--neighbours",
             "hypercube", "--link-fail", "0-1@30", "--link-fail-reported",
             "--json"])
    ok = r.returncode == 0
    if ok:
        run0 = json.loads(r.stdout)["runs"][0]
        ok = (run0["ok"] and run0["cuts"] == 1
              and run0["max_err_vs_all"] <= 1e-12)
    check(ok, f"ftcoll-sim --algo push-flow --link-fail 0-1@30 "
              f"--link-fail-reported: {r.returncode} {r.stdout[:300]!r}")
    # Crashes that must happen: two random ranks, checked.
    r = run([prog, "--algo", "pcf", "-n", "16", "--crashes", "2", "--runs",
             "3", "--json"])
    ok = r.returncode == 0
    if ok:
        runs = json.loads(r.stdout)["runs"]
        ok = all(x["ok"] and x["crashed"] == 2 for x in runs)
    check(ok, f"ftcoll-sim --algo pcf --crashes 2: {r.returncode} "
              f"{r.stdout[:300]!r}")


def test_bench(prog, version):
    common(prog, "ftcoll-bench", version)
    # Parsing ends before the bootstrap: a refusal needs no launcher.
    refuses([prog, "--coll=gather"], "--coll", "ftcoll-bench")
    refuses([prog, "--iters"], "--iters", "ftcoll-bench", " needs a value")
    refuses([prog, "--sizes", "0"], "--sizes", "ftcoll-bench")
    refuses([prog, "--kill", "3"], "--kill", "ftcoll-bench")
    refuses([prog, "--ack-timeout-us", "100"], "--ack-timeout-us",
            "ftcoll-bench", " (belongs to --algo ftco)")
    refuses([prog, "--quiet=1"], "--quiet", "ftcoll-bench")
    refuses([prog, "-f", "x"], "-f", "ftcoll-bench")
    refuses([prog, "--bad-arg=nonsense@1"], "--bad-arg", "ftcoll-bench")
    refuses([prog, "--no-auth=yes"], "--no-auth", "ftcoll-bench")
    refuses([prog, "--die-after-exchange", "-1"], "--die-after-exchange",
            "ftcoll-bench")
    # Agreement and shrink (bench/bench_ulfm.c).
    refuses([prog, "--coll", "agree", "--crash-sends", "1@2"],
            "--crash-sends", "ftcoll-bench")
    refuses([prog, "--coll", "shrink", "--crash-sends", "1@2:0"],
            "--crash-sends", "ftcoll-bench")
    refuses([prog, "--coll", "agree", "--invalidate", "x"], "--invalidate",
            "ftcoll-bench")
    refuses([prog, "--with-allreduce"], "--with-allreduce", "ftcoll-bench")
    refuses([prog, "--agree-round", "tree"], "--agree-round", "ftcoll-bench",
            " (the allreduce has no agreement)")
    refuses([prog, "--coll", "agree", "--agree-round", "rd8"],
            "--agree-round", "ftcoll-bench")
    # One tree for the tree families (bench/bench_tree.h).
    refuses([prog, "--tree", "star"], "--tree", "ftcoll-bench")
    refuses([prog, "--tree", "lame"], "--tree", "ftcoll-bench",
            " (not a tree ftco runs)")
    refuses([prog, "-k", "3"], "-k", "ftcoll-bench", " (without --tree)")
    refuses([prog, "--tree", "knomial", "-k", "1"], "-k", "ftcoll-bench")
    refuses([prog, "--tree", "binomial", "-k", "4"], "-k", "ftcoll-bench",
            " (binomial takes no k)")
    refuses([prog, "--algo", "push-sum", "--tree", "binomial"], "--tree",
            "ftcoll-bench", " (not a tree family)")
    # Uniform mode: the corrected allreduce only (it agrees on the root).
    for argv, why in ((["--coll", "bcast"], "bcast"),
                      (["--coll", "agree"], "agree"),
                      (["--algo", "ftco"], "ftco: no deciding root"),
                      (["--algo", "push-sum"], "gossip: no deciding root"),
                      (["--checked"], "with --checked")):
        refuses([prog, "--uniform"] + argv, "--uniform", "ftcoll-bench",
                " (" + why + ")")


def test_core(prog, version):
    common(prog, "bench_core", version)
    refuses([prog, "--n", "0"], "--n", "bench_core")
    refuses([prog, "--reps=x"], "--reps", "bench_core")
    refuses([prog, "--steady", "nonsense:1"], "--steady", "bench_core")
    refuses([prog, "--steady", "exchange:1", "--phase", "5"], "--phase",
            "bench_core")
    refuses([prog, "--phase", "1"], "--phase", "bench_core")
    refuses([prog, "--steady", "tree:0", "--timeout", "0"], "--timeout", "bench_core")
    r = run([prog, "--steady=tree:0", "--n=2", "--iters=50"])
    check(r.returncode == 0 and "tree:0" in r.stdout,
          f"bench_core --steady=tree:0 --n=2 --iters=50: {r.returncode} "
          f"{r.stderr!r}")


def test_run(prog, version):
    common(prog, "ftcoll-run", version)
    refuses([prog, "-n", "0", "true"], "-n", "ftcoll-run")
    refuses([prog, "--timeout=-1", "-n", "1", "true"], "--timeout",
            "ftcoll-run")
    refuses([prog, "--backend", "tcp", "-n", "1", "true"], "--backend",
            "ftcoll-run")
    refuses([prog, "-n", "2", "--kill", "5@1", "true"], "--kill",
            "ftcoll-run", " (rank not below -n)")
    # The program's arguments, flags of ftcoll-run's among them, reach it
    # untouched and in order, after '--' and without it.
    tail = ["--help", "-n", "9", "--", "--version", "a b", "--x=y"]
    for sep in (["--"], []):
        r = run([prog, "-n", "1", "--timeout=20"] + sep +
                [sys.executable, "-c",
                 "import sys; print(repr(sys.argv[1:]))"] + tail)
        check(r.returncode == 0 and repr(tail) in r.stdout,
              f"ftcoll-run {'-- ' if sep else ''}PROGRAM ARGS: "
              f"{r.returncode} {r.stdout!r} {r.stderr!r}")
    r = run([prog, "-np", "2", "--timeout", "20", "--", "true"])
    check(r.returncode == 0, f"ftcoll-run -np 2: {r.returncode} {r.stderr!r}")


def test_examples(prog, prog_zmq, version):
    common(prog, "allreduce_loopback", version)
    refuses([prog, "4"], "N", "allreduce_loopback")
    refuses([prog, "16", "99"], "F", "allreduce_loopback")
    if prog_zmq:
        common(prog_zmq, "allreduce_zmq", version)
        refuses([prog_zmq, "--iters=0"], "--iters", "allreduce_zmq")
        refuses([prog_zmq, "--die", "3"], "--die", "allreduce_zmq")


def test_foreign(prog, version):
    name = os.path.basename(prog)
    common(prog, name, version)
    refuses([prog, "/nonexistent", "0"], "N", name)
    refuses([prog, "/nonexistent"], "operands", name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--sim", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--core", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--info")
    ap.add_argument("--example", required=True)
    ap.add_argument("--example-zmq")
    ap.add_argument("--foreign", action="append", default=[])
    a = ap.parse_args()
    test_sim(a.sim, a.version)
    test_sim_gossip(a.sim)
    test_bench(a.bench, a.version)
    test_core(a.core, a.version)
    test_run(a.run, a.version)
    if a.info:
        common(a.info, "ftcoll-info", a.version)
    test_examples(a.example, a.example_zmq, a.version)
    for f in a.foreign:
        test_foreign(f, a.version)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
