#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The gossip paper's evidence, reproduced with ftcoll-sim on the loopback
# (docs/gossip.md, "The paper's figures"): writes data files and draws
# docs/gossip-*.svg with gnuplot (bench/gossip_plots.gp).
#
#   bench/gossip_figures.sh [--build DIR] [--out DIR] [--docs DIR]
#                           [--nmax N] [--sizes "N1 N2 ..."] [--keep]
#                           [--sim PATH] [--no-plot] [--link-only]
#                           [--algos "A1 A2 ..."]
#
#   --build DIR   meson build directory holding bench/ftcoll-sim (build)
#   --sim PATH    the ftcoll-sim to run (BUILD/bench/ftcoll-sim); a copy
#                 lets a long sweep run while the build directory changes
#   --out DIR     where the data files go (BUILD/gossip-figures)
#   --docs DIR    where the pictures go (docs)
#   --nmax N      largest n, a power of two (32768): the sizes are
#                 16, 64, 256, ... below it and N itself
#   --sizes LIST  these n instead, in this order (the largest first lets
#                 a sweep cut short still have the size that matters)
#   --keep        add to the data files instead of starting them again,
#                 so a sweep can be done in parts; an algorithm's runs at a
#                 size are made only if the data files have no row of it
#                 at that size yet
#   --algos LIST  only these of pcf, push-flow (the accuracy runs and
#                 their iterations rows) and push-sum (its iterations
#                 row); all three by default
#   --link-only   only the link-failure runs and their picture (a minute)
#
# One n = 32768 run takes one to four minutes of processor time (the
# torus runs always run the 1500 iterations: the 32^3 torus needs about
# 6600, bench/gossip_to_target.sh), and as many times longer as the host
# is loaded. Push-flow passes its test at its rounding floor
# (docs/gossip.md, "Push-flow's rounding floor") wherever it mixes fast
# enough, so its hypercube runs end well before the cap.
#
# accuracy.dat    final largest relative error against the exact aggregate
#                 (Figures 3 and 6): push-flow and PCF, hypercube and 3D
#                 torus, sum and average, n = 16 .. nmax, target 1e-15,
#                 at most 1500 iterations, seed 1;
# link-PF75.dat ... the error over the iterations after one permanent link
#                 failure at iteration 75 or 175 of a 6-D hypercube (n = 64),
#                 handled by both ends then (reported at once, as in the
#                 paper), the same seed for push-flow and PCF (Figures 4
#                 and 7);
# iterations.dat  iterations and messages per process to 1e-15 on the
#                 hypercube versus n (push-sum, push-flow, PCF).
set -eu

build=build
out=
docs=docs
nmax=32768
sizes=
keep=0
sim=
plot=1
link_only=0
algos="pcf push-flow push-sum"
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --docs) docs=$2; shift 2 ;;
    --nmax) nmax=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --sim) sim=$2; shift 2 ;;
    --no-plot) plot=0; shift ;;
    --link-only) link_only=1; shift ;;
    --algos) algos=$2; shift 2 ;;
    -h|--help) sed -n '3,45p' "$0"; exit 0 ;;
    *) echo "gossip_figures.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$sim" ] || sim=$build/bench/ftcoll-sim
[ -x "$sim" ] || { echo "gossip_figures.sh: no $sim (ninja -C $build)" >&2; exit 2; }
[ -n "$out" ] || out=$build/gossip-figures
for a in $algos; do
    case "$a" in
    pcf|push-flow|push-sum) ;;
    *) echo "gossip_figures.sh: --algos: unknown algorithm $a (pcf, push-flow, push-sum)" >&2; exit 2 ;;
    esac
done
wanted() { case " $algos " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$out"

# One run's JSON -> "max_rel_error iterations messages_per_process wall_s".
field() {
    python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["runs"][0]
print(r["max_err_vs_all"], r["iterations"], r["messages_per_process"], d["wall_s"])'
}

[ "$link_only" = 1 ] && sizes=none
if [ -z "$sizes" ]; then
    n=16
    while [ "$n" -lt "$nmax" ]; do sizes="$sizes $n"; n=$((n * 4)); done
    sizes="$sizes $nmax"
fi
if [ "$link_only" = 0 ] && { [ "$keep" = 0 ] || [ ! -s "$out/accuracy.dat" ]; }; then
    echo "# algo shape op n max_err_vs_all iterations msgs_per_proc wall_s" >"$out/accuracy.dat"
    echo "# algo n iterations msgs_per_proc max_err_vs_all wall_s" >"$out/iterations.dat"
fi
# Whether file has a row with algo in its first column and n in column col.
have_row() {
    awk -v a="$1" -v n="$2" -v c="$3" '$1 == a && $c == n { found = 1 } END { exit !found }' "$4"
}
for n in $sizes; do
    [ "$n" = none ] && break
    # PCF first: its rows are the ones the figures' claims rest on.
    for algo in pcf push-flow; do
        wanted $algo || continue
        if have_row $algo "$n" 4 "$out/accuracy.dat"; then
            echo "$algo n = $n: already in $out/accuracy.dat" >&2
            continue
        fi
        for shape in hypercube torus3d; do
            for op in avg sum; do
                r=$("$sim" --algo $algo -n $n --neighbours $shape --op $op \
                    --target 1e-15 --max-iterations 1500 --no-check --json | field)
                echo "$algo $shape $op $n $r" >>"$out/accuracy.dat"
                echo "$algo $shape $op $n $r" >&2
                if [ $shape = hypercube ] && [ $op = avg ]; then
                    # The same run as the iterations' (average is the default).
                    set -- $r
                    echo "$algo $n $2 $3 $1 $4" >>"$out/iterations.dat"
                fi
            done
        done
    done
    wanted push-sum || continue
    if have_row push-sum "$n" 2 "$out/iterations.dat"; then
        echo "push-sum n = $n: already in $out/iterations.dat" >&2
        continue
    fi
    set -- $("$sim" --algo push-sum -n $n --neighbours hypercube \
             --target 1e-15 --max-iterations 1500 --no-check --json | field)
    echo "push-sum $n $2 $3 $1 $4" >>"$out/iterations.dat"
done

for at in 75 175; do
    for algo in push-flow pcf; do
        [ "$keep" = 1 ] && [ -s "$out/link-$( [ $algo = pcf ] && echo PCF || echo PF )$at.dat" ] && continue
        tag=$( [ $algo = pcf ] && echo PCF || echo PF )
        "$sim" --algo $algo -n 64 --neighbours hypercube --seed 2 \
            --target 1e-15 --link-fail 0-1@$at --link-fail-reported \
            --trace-error 1 --no-check \
            | grep -v '^#' | awk 'NF == 3' >"$out/link-$tag$at.dat"
    done
done
[ "$keep" = 1 ] && [ -s "$out/link-none.dat" ] ||
"$sim" --algo pcf -n 64 --neighbours hypercube --seed 2 --target 1e-15 \
    --trace-error 1 --no-check | grep -v '^#' | awk 'NF == 3' >"$out/link-none.dat"

if [ "$plot" = 1 ]; then
    command -v gnuplot >/dev/null || { echo "gossip_figures.sh: no gnuplot (apt-get install gnuplot-nox); data in $out" >&2; exit 0; }
    if [ "$link_only" = 1 ]; then
        gnuplot -e "dir='$out'; docs='$docs'" bench/gossip_link_plot.gp
        echo "picture: $docs/gossip-link-failure.svg" >&2
    else
        gnuplot -e "dir='$out'; docs='$docs'" bench/gossip_plots.gp
        echo "pictures: $docs/gossip-accuracy.svg $docs/gossip-link-failure.svg $docs/gossip-iterations.svg" >&2
    fi
fi
echo "data: $out" >&2
