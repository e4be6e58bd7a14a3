#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Markdown table of docs/ftco.md, "Side by side with the corrected
family", from bench/sim_side_by_side.sh's side.csv.

  python3 bench/sim_side_by_side_table.py build/sim-side/side.csv

One row per (P, faults); per collective, ftco's and corrected's latency
in steps (the mean over the runs) and messages per process. A cell of
corrected beyond f (f = 1 with more failures) says what its survivors
delivered: "err" when every survivor (allreduce) or the root (reduce)
delivered an error instead of a result.
"""
import csv
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sim_side_by_side_table.py SIDE.CSV")
    rows = {}
    with open(sys.argv[1], newline="") as f:
        for r in csv.DictReader(f):
            key = (int(r["P"]), int(r["inactive"]), int(r["crashes"]),
                   r["coll"], r["variant"])
            rows[key] = r
    points = sorted({k[:3] for k in rows},
                    key=lambda k: (k[0], k[2] > 0, k[1], k[2]))
    colls = ("reduce", "bcast", "allreduce")
    print("| P | faults | f | " + " | ".join(
        "%s: ftco | corrected | corrected f=1" % c for c in colls) + " |")
    print("|---|---|---|" + "---|---|---|" * len(colls))

    def cell(r, beyond=False):
        if r is None:
            return "—"
        s = "%.0f (%.1f)" % (float(r["latency"]), float(r["msgs_per_proc"]))
        bad = float(r["bad_status"])
        if beyond and bad > 0:
            s += " err"
        if float(r["violations"]) > 0:
            s += " VIOLATION"
        return s

    for p, k, c in points:
        faults = "%d inactive" % k if c == 0 else \
            "%d crash%s" % (c, "es" if c > 1 else "")
        if k == 0 and c == 0:
            faults = "none"
        f = max(1, k + c)
        cells = []
        for coll in colls:
            cells.append(cell(rows.get((p, k, c, coll, "ftco"))))
            cells.append(cell(rows.get((p, k, c, coll, "corrected"))))
            cells.append(cell(rows.get((p, k, c, coll, "corrected-f1")),
                              True) if k + c > 1 else "(same)")
        print("| %dK | %s | %d | %s |" % (p // 1024, faults, f,
                                          " | ".join(cells)))


if __name__ == "__main__":
    main()
