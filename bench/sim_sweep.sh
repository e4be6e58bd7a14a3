#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Sweeps of the LogP simulator (docs/simulator.md): P from 1K to 64K (and
# 1M with --with-1m), the plain and corrected algorithms, and failure
# counts; writes CSV files and draws docs/sim-*.svg with gnuplot
# (bench/sim_plots.gp).
#
#   bench/sim_sweep.sh [--build DIR] [--out DIR] [--docs DIR] [--quick]
#                      [--with-1m] [--png] [--no-plot]
#
#   --build DIR   meson build directory holding bench/ftcoll-sim (build)
#   --out DIR     where the CSV files go (build/sim-sweep)
#   --docs DIR    where the pictures go (docs)
#   --quick       P up to 8K, fewer repetitions (a smoke test: seconds)
#   --with-1m     add P = 262,144 and 1,048,576 (minutes, about 3.5 GB)
#   --png         PNG pictures instead of SVG
#
# Model: L = 2, o = 1, g = 1, parallelism 1 (the authors' campaign used
# these L, o, g); one element (--count 1); f = 1 unless said otherwise.
set -eu

build=build
out=
docs=docs
quick=0
big=0
plot=1
ext=svg
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --docs) docs=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --with-1m) big=1; shift ;;
    --no-plot) plot=0; shift ;;
    --png) ext=png; shift ;;
    -h|--help) sed -n '3,20p' "$0"; exit 0 ;;
    *) echo "sim_sweep.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out=$build/sim-sweep
sim=$build/bench/ftcoll-sim
[ -x "$sim" ] || { echo "sim_sweep.sh: no $sim (run ninja -C $build)" >&2; exit 2; }
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)

if [ $quick = 1 ]; then
    sizes="1024 2048 4096 8192"
    runs=2
    pen_n=4096
else
    sizes="1024 2048 4096 8192 16384 32768 65536"
    runs=5
    pen_n=16384
fi
[ $big = 1 ] && sizes="$sizes 262144 1048576"
model="--model logp -L 2 -o 1 -g 1 --count 1 --summary --csv"

# One CSV row per configuration: the label, ftcoll-sim's columns (the
# "mean" row when there are several runs), then the min and max of reach
# and finish over the runs.
row() {
    label=$1; shift
    "$sim" $model "$@" | awk -F, -v l="$label" '
        NR == 1 { next }
        $1 == "mean" { mean = $0; next }
        $1 == "min" { r0 = $12; f0 = $13; next }
        $1 == "max" { r1 = $12; f1 = $13; next }
        { last = $0; r0 = r1 = $12; f0 = f1 = $13 }
        END { print l "," (mean != "" ? mean : last) "," r0 "," r1 "," f0 "," f1 }'
}

header() {
    printf 'label,'
    "$sim" $model -n 2 -f 0 --coll bcast --algo tree | head -1 | tr -d '\n'
    echo ',reach_min,reach_max,finish_min,finish_max'
}

# 1. Latency and messages per process against P, failure-free.
f=$out/scale.csv
header > "$f"
for n in $sizes; do
    echo "  P = $n" >&2
    row tree-bcast --coll bcast --algo tree -n "$n" -f 0 >> "$f"
    row corrected-bcast-checked --coll bcast -f 1 -n "$n" >> "$f"
    row corrected-bcast-opportunistic --coll bcast -f 1 --correction opportunistic -d 2 -n "$n" >> "$f"
    row tree-reduce --coll reduce --algo tree -n "$n" -f 0 >> "$f"
    row corrected-reduce --coll reduce -f 1 -n "$n" >> "$f"
    row tree-allreduce --coll allreduce --algo tree -n "$n" -f 0 >> "$f"
    row corrected-allreduce-checked --coll allreduce -f 1 -n "$n" >> "$f"
    row corrected-allreduce-opportunistic --coll allreduce -f 1 --correction opportunistic -d 2 -n "$n" >> "$f"
done

# 2. Latency penalty per failure: K random failures, K = 0..8, f = 8,
#    before the operation (failure reports 100 units after the crash) and
#    during it (at uniformly random times in its first 100 units).
f=$out/failures.csv
header > "$f"
for k in 0 1 2 3 4 5 6 7 8; do
    echo "  K = $k" >&2
    row pre-allreduce --coll allreduce -f 8 -n $pen_n --faults $k --runs $runs >> "$f"
    row pre-reduce --coll reduce -f 8 -n $pen_n --faults $k --runs $runs >> "$f"
    row pre-bcast --coll bcast -f 8 -n $pen_n --faults $k --runs $runs >> "$f"
    row inop-allreduce --coll allreduce -f 8 -n $pen_n --crashes $k --crash-window 100 --runs $runs >> "$f"
done

# 3. Parallelism and queue policy at one size (a table, no picture).
f=$out/variants.csv
header > "$f"
n=$(echo $sizes | awk '{ x = $NF; if (x > 65536) x = 65536; print x }')
for par in 1 2; do
    for q in fifo kind; do
        row "allreduce-par$par-$q" --coll allreduce -f 1 -n "$n" --parallelism $par --queue $q >> "$f"
        row "allreduce-par$par-$q-faults2" --coll allreduce -f 2 -n "$n" --parallelism $par --queue $q --faults 2 --runs $runs >> "$f"
    done
done

echo "CSV in $out: scale.csv failures.csv variants.csv" >&2
if [ $plot = 1 ]; then
    command -v gnuplot >/dev/null || {
        echo "sim_sweep.sh: gnuplot missing (apt-get install gnuplot-nox)" >&2
        exit 2
    }
    mkdir -p "$docs"
    gnuplot -e "dir='$out'; docs='$docs'; ext='$ext'" "$here/sim_plots.gp"
    echo "pictures: $docs/sim-latency.$ext $docs/sim-messages.$ext $docs/sim-failures.$ext" >&2
fi
