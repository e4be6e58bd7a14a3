#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ftcoll-info against the tables it reads (tests/info_expect.c).

It lists every registered algorithm (as many as ftc_algo_count) with its
collectives and its parameters, and every entry of every knob table under
its owner, in text and in JSON; --json is valid JSON; a section flag gives
that section only; an unknown flag or a stray operand exits 2 naming it.

  test_info.py FTCOLL_INFO INFO_EXPECT VERSION

The last line says 'N passed, M failed'; exit status 1 on any failure.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "support"))
from tally import check, finish  # noqa: E402


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def expected(helper):
    r = run([helper])
    if r.returncode != 0:
        sys.exit(f"{helper}: exit {r.returncode} {r.stderr!r}")
    algos, knobs = {}, []
    for line in r.stdout.splitlines():
        kind, *rest = line.split()
        if kind == "algo":
            algos[rest[0]] = (int(rest[1]), rest[2:])
        elif kind == "knob":
            knobs.append((rest[0], rest[1]))
    return algos, knobs


def main():
    info, helper, version = sys.argv[1:4]
    algos, knobs = expected(helper)
    check(len(algos) >= 2 and len(knobs) >= 10,
          f"the helper sees {len(algos)} algorithms and {len(knobs)} knobs")

    # JSON: valid, and holding exactly what the tables hold.
    r = run([info, "--json"])
    check(r.returncode == 0, f"--json: exit {r.returncode} {r.stderr!r}")
    try:
        doc = json.loads(r.stdout)
    except ValueError as e:
        check(False, f"--json is not JSON: {e}: {r.stdout[:200]!r}")
        doc = {}
    check(doc.get("version") == version,
          f"--json version {doc.get('version')!r}, want {version}")
    got_algos = {a["name"]: a for a in doc.get("algorithms", [])}
    check(len(doc.get("algorithms", [])) == len(algos)
          and set(got_algos) == set(algos),
          f"--json algorithms {sorted(got_algos)}, want {sorted(algos)}")
    for name, (nparams, colls) in algos.items():
        a = got_algos.get(name, {})
        check(a.get("collectives") == colls,
              f"{name}: collectives {a.get('collectives')}, want {colls}")
        check(len(colls) > 0 and "?" not in colls,
              f"{name}: provides named collectives {colls}")
        params = a.get("params", [])
        check(len(params) == nparams
              and all(p.get("name") and p.get("default") and p.get("meaning")
                      for p in params),
              f"{name}: {len(params)} parameters with name, default and "
              f"meaning, want {nparams}")
    got_knobs = [(k.get("owner"), k.get("name")) for k in doc.get("knobs", [])]
    check(sorted(got_knobs) == sorted(knobs),
          f"--json knobs: missing {sorted(set(knobs) - set(got_knobs))}, "
          f"extra {sorted(set(got_knobs) - set(knobs))}")
    check(all(k.get("default") and k.get("meaning")
              for k in doc.get("knobs", [])),
          "every knob has a default and a meaning in --json")
    backends = {b["name"]: b for b in doc.get("backends", [])}
    check("loopback" in backends and backends["loopback"]["built"],
          f"--json backends list loopback as built: {sorted(backends)}")
    check(all(b["library"] for b in backends.values() if b["built"]),
          "every built backend names its library")

    # Text: every algorithm and every knob, under its table's heading.
    r = run([info])
    check(r.returncode == 0 and r.stdout.startswith(f"ftcoll {version}"),
          f"no flag: exit {r.returncode}, {r.stdout[:40]!r}")
    text = r.stdout
    for name in algos:
        check(f"\n  {name} " in text, f"text lists algorithm {name}")
    sections = {}
    owner = None
    for line in text[text.find("\nKnobs"):].splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            owner = line.split()[0]
        elif line.startswith("    FTCOLL_"):
            sections.setdefault(owner, []).append(line.split()[0])
    check(sorted((o, n) for o, ns in sections.items() for n in ns)
          == sorted(knobs), f"text knobs by table: {sections}")

    # A section flag gives that section only.
    for flag, key in (("--algos", "algorithms"), ("--knobs", "knobs"),
                      ("--backends", "backends")):
        r = run([info, flag, "--json"])
        try:
            keys = set(json.loads(r.stdout))
        except ValueError:
            keys = None
        check(r.returncode == 0 and keys == {"version", key},
              f"{flag} --json: exit {r.returncode}, members {keys}")

    # Bad command lines: exit 2, the culprit named.
    for argv, culprit in ((["--no-such-flag"], "--no-such-flag"),
                          (["-Z"], "-Z"), (["--json=1"], "--json"),
                          (["stray"], "stray")):
        r = run([info] + argv)
        check(r.returncode == 2 and culprit in r.stderr and r.stdout == "",
              f"{' '.join(argv)}: exit {r.returncode}, {r.stderr!r}")
    r = run([info, "--help"])
    check(r.returncode == 0 and "usage" in r.stdout, "--help")

    return finish()


if __name__ == "__main__":
    sys.exit(main())
