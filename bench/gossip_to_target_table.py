#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tables of docs/gossip.md, "Iterations to 1e-15 versus n", from
bench/gossip_to_target.sh's to-target.dat.

    python3 bench/gossip_to_target_table.py DIR/to-target.dat            # print
    python3 bench/gossip_to_target_table.py DIR/to-target.dat --doc docs/gossip.md

With --doc the tables between the markers <!-- to-target tables ... -->
and <!-- end of to-target tables --> are replaced. A cell is the median
over the seeds of the slowest process's iterations (the range in
brackets when there are several seeds), the median messages per process
and the largest error against the exact aggregate; "(cap)" marks a seed
stopped by the cap.
"""
import argparse
import collections
import re
import statistics
import sys

BEGIN = "<!-- to-target tables: bench/gossip_to_target.sh, bench/gossip_to_target_table.py -->"
END = "<!-- end of to-target tables -->"


def load(path):
    rows = collections.defaultdict(list)
    sides = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        algo, shape, side, op, n = f[0], f[1], f[2], f[3], int(f[4])
        rows[algo, shape, op, n].append({
            "iterations": int(f[6]), "msgs": float(f[7]), "err": float(f[8]),
            "at_cap": int(f[9]), "at_floor": int(f[10])})
        if shape == "torus3d":
            sides[n] = " × ".join(side.split("x"))
    return rows, sides


def median(xs):
    m = statistics.median(xs)
    return int(m) if m == int(m) else m


def cell(runs, floor=False):
    if not runs:
        return "—"
    its = [r["iterations"] for r in runs]
    s = f"{median(its)}"
    if len(runs) > 1:
        s += f" ({min(its)}–{max(its)})"
    s += f", {median([r['msgs'] for r in runs]):.0f}"
    s += f", {max(r['err'] for r in runs):.1e}"
    if any(r["at_cap"] > 0 for r in runs):
        s += " (cap)"
    if floor:
        fl = [r["at_floor"] for r in runs]
        s += f", {min(fl)}" if min(fl) == max(fl) else f", {min(fl)}–{max(fl)}"
    return s


def tables(rows, sides):
    ns = sorted({k[3] for k in rows if k[0] == "pcf"})
    out = ["PCF: iterations (range), messages per process, largest error; "
           "\"(cap)\": a seed at the cap.", "",
           "| n | torus | hypercube avg | hypercube sum | torus avg | torus sum |",
           "|---|---|---|---|---|---|"]
    for n in ns:
        out.append(f"| {n} | {sides.get(n, '—')} | "
                   + " | ".join(cell(rows.get(("pcf", s, o, n), []))
                                for s, o in (("hypercube", "avg"),
                                             ("hypercube", "sum"),
                                             ("torus3d", "avg"),
                                             ("torus3d", "sum"))) + " |")
    pns = sorted({k[3] for k in rows if k[0] == "push-flow"})
    if pns:
        out += ["", "Push-flow on the 3D torus (library cap 20000): iterations "
                "(range), messages per process, largest error, processes that "
                "reported `FTC_GOSSIP_AT_FLOOR` (of n).", "",
                "| n | torus | push-flow avg | push-flow sum |", "|---|---|---|---|"]
        for n in pns:
            out.append(f"| {n} | {sides.get(n, '—')} | "
                       + " | ".join(cell(rows.get(("push-flow", "torus3d", o, n), []),
                                         floor=True) for o in ("avg", "sum")) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dat")
    ap.add_argument("--doc", help="replace the tables in this file")
    a = ap.parse_args()
    text = tables(*load(a.dat))
    if not a.doc:
        print(text)
        return 0
    doc = open(a.doc).read()
    m = re.search(r"<!-- to-target tables[^>]*-->\n.*?" + re.escape(END), doc, re.S)
    if m is None:
        print(f"{a.doc}: no to-target markers", file=sys.stderr)
        return 1
    doc = doc[:m.start()] + BEGIN + "\n" + text + "\n" + END + doc[m.end():]
    open(a.doc, "w").write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
