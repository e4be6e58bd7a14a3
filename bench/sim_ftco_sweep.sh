#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The ftco family in the LogP simulator with Margolin & Barak's model
# (L = 10, o = 1, the k-nomial radix of least latency per P, detection by
# the per-message timeouts only, the spread rows included):
# their Figures 7-10 and Table 2, its
# first row and its spread rows (docs/ftco.md, "In the simulator").
# Writes CSV files and draws docs/ftco-*.svg with gnuplot
# (bench/sim_ftco_plots.gp).
#
#   bench/sim_ftco_sweep.sh [--build DIR] [--out DIR] [--docs DIR]
#                           [--runs N] [--spread-n P] [--with-64k]
#                           [--no-plot] [--spread-only]
#
#   --build DIR   meson build directory holding bench/ftcoll-sim (build)
#   --out DIR     where the CSV files go (build/sim-ftco)
#   --docs DIR    where the pictures go (docs)
#   --runs N      seeded runs per faulty point (5; the paper took 10,000)
#   --spread-n P  processes of the arrival-spread rows (65536, the
#                 paper's; about a minute of CPU for the 16 runs, most
#                 of it the two W = 16,384 rows)
#   --spread-only only Table 2's spread rows (spread.csv) and their
#                 picture, docs/ftco-spread.svg
#   --with-64k    also P = 65,536: Table 2's row 0 on the multi-root
#                 9-nomial tree (under a second of CPU and 300 MB per run)
set -eu

build=build
out=
docs=docs
runs=5
spread_n=65536
big=0
plot=1
spread_only=0
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --docs) docs=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --spread-n) spread_n=$2; shift 2 ;;
    --with-64k) big=1; shift ;;
    --no-plot) plot=0; shift ;;
    --spread-only) spread_only=1; shift ;;
    -h|--help) sed -n '3,22p' "$0"; exit 0 ;;
    *) echo "sim_ftco_sweep.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out=$build/sim-ftco
sim=$build/bench/ftcoll-sim
[ -x "$sim" ] || { echo "sim_ftco_sweep.sh: no $sim (run ninja -C $build)" >&2; exit 2; }
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)

# The paper's model: a hop costs L + 2o = 12 steps. The per-message
# timeout base is one DATA-ACK round trip, 2 (L + 2o) = 24 steps
# (docs/ftco.md, "The timeout base").
model="--model logp -L 10 -o 1 -g 1 --count 1 --summary --csv --detect never"
ftco="--algo ftco --tree knomial -k best --ack-timeout 24"

# One CSV row per configuration: the label, ftcoll-sim's columns (the
# "mean" row when there are several runs), then the min and max of the
# latency (FinishTime_last - StartTime_last) over the runs.
row() {
    label=$1; shift
    "$sim" $model "$@" 2>/dev/null | awk -F, -v l="$label" '
        NR == 1 { next }
        $1 == "mean" { mean = $0; next }
        $1 == "min" { a0 = $31; next }
        $1 == "max" { a1 = $31; next }
        { last = $0; a0 = a1 = $31 }
        END { print l "," (mean != "" ? mean : last) "," a0 "," a1 }'
}

header() {
    printf 'label,'
    "$sim" $model -n 2 -f 0 --coll bcast --algo tree | head -1 | tr -d '\n'
    echo ',latency_min,latency_max'
}

sizes="1024 2048 4096 8192 16384"

if [ $spread_only = 0 ]; then
# Figure 7: fault-free latency against P, ftco beside the plain tree on
# the same k-nomial tree and the corrected family (binomial, f = 1).
f=$out/scale.csv
header > "$f"
for n in $sizes; do
    echo "  P = $n" >&2
    for c in bcast reduce allreduce; do
        row "ftco-$c" $ftco --coll $c -n "$n" >> "$f"
    done
    row tree-bcast --algo tree --tree knomial -k best --coll bcast -n "$n" -f 0 >> "$f"
    row tree-allreduce --algo tree --tree knomial -k best --coll allreduce -n "$n" -f 0 >> "$f"
    row corrected-allreduce --algo corrected --coll allreduce -n "$n" -f 1 >> "$f"
done

# Figures 8 and 9: K = 1, 10, 100 inactive (failed before the operation)
# processes at random places, never the root; penalty per inactive
# process in latency and in messages per process.
f=$out/inactive.csv
header > "$f"
for n in 1024 2048 4096 8192; do
    echo "  inactive, P = $n" >&2
    row "inactive-0" $ftco -n "$n" >> "$f"
    for k in 1 10 100; do
        row "inactive-$k" $ftco -n "$n" --faults $k --runs $runs >> "$f"
    done
done

# Figure 10: inactive processes and run-time crashes together (crash
# times uniform over the first 200 steps of the operation), P = 4,096.
f=$out/combined.csv
header > "$f"
for i in 0 1 10; do
    for c in 0 1 10; do
        echo "  inactive $i, crashes $c" >&2
        row "i$i-c$c" $ftco -n 4096 --faults $i --crashes $c --crash-window 200 --runs $runs >> "$f"
    done
done
fi

# Table 2's spread rows: arrival times uniform in [0, W] or normal
# (mean W/2, deviation W/6, clamped to [0, W]), at P = $spread_n on the
# paper's multi-root 9-nomial tree. A late process receives before it
# starts and ACKs early DATA and KEEPALIVEs (Appendix B). Detection is
# the paper's: per-message timeouts with base 32 (a DATA-ACK round trip,
# 24, and a third), every waiting process KEEPALIVEing the neighbours it
# waits on once per f_timeout; the core's monitor never speaks. W = 0 is
# Table 2's row 0 with the same timeouts (nothing is late: no KEEPALIVE).
spread_t="--ack-timeout 32 --suspect 100000000 --probe 100000000"
f=$out/spread.csv
header > "$f"
for w in 0 256 512 1024 2048 4096 8192 16384; do
    echo "  spread $w, P = $spread_n" >&2
    row "uniform-$w" --algo ftco --tree knomial-multiroot -k 9 -n $spread_n \
        --spread uniform:$w $spread_t >> "$f"
    # normal:S starts at 3S + S Z, clamped to [0, 6S]: S = W/6 spans W
    row "normal-$w" --algo ftco --tree knomial-multiroot -k 9 -n $spread_n \
        --spread normal:$((w / 6)) $spread_t >> "$f"
done

# Table 2, row 0: P = 65,536, all start together; the receive orders.
if [ $big = 1 ]; then
    f=$out/table2.csv
    header > "$f"
    for q in "--queue fifo" "--service disd" "--service rsd"; do
        echo "  P = 65536 $q" >&2
        row "table2$(echo $q | tr -d ' -')" --algo ftco --tree knomial-multiroot -k 9 -n 65536 $q >> "$f"
    done
fi

echo "CSV in $out" >&2
if [ $plot = 1 ]; then
    command -v gnuplot >/dev/null || {
        echo "sim_ftco_sweep.sh: gnuplot missing (apt-get install gnuplot-nox)" >&2
        exit 2
    }
    mkdir -p "$docs"
    only=all
    [ $spread_only = 0 ] || only=spread
    gnuplot -e "dir='$out'; docs='$docs'; only='$only'" "$here/sim_ftco_plots.gp"
    echo "pictures: $docs/ftco-*.svg" >&2
fi
