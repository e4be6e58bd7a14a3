#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Iterations and messages per process to a 1e-15 target versus n, on the
# hypercube and the 3D torus, with a cap far above what the torus needs
# (docs/gossip.md, "Iterations to 1e-15 versus n"): writes to-target.dat
# and draws docs/gossip-to-target.svg with gnuplot
# (bench/gossip_to_target.gp). The paper's figure script
# (bench/gossip_figures.sh) caps its runs at 1500 iterations, which the
# 3D torus outgrows from n = 1024 on (it mixes in O(side^2) iterations).
#
#   bench/gossip_to_target.sh [--build DIR] [--sim PATH] [--out DIR]
#                             [--docs DIR] [--sizes "N1 N2 ..."]
#                             [--shapes "hypercube torus3d"]
#                             [--algos "pcf push-flow"] [--ops "avg sum"]
#                             [--seeds "1 2 3"] [--few-seeds-from N]
#                             [--cap K] [--pf-cap K] [--keep] [--no-plot]
#
#   --sizes LIST       n, powers of two (64 128 ... 32768); the order is
#                      the order of the runs
#   --algos LIST       pcf (to the target, cap --cap) and push-flow (on
#                      the torus only: it never passes a 1e-15 local test
#                      there, so it runs to --pf-cap and the row records
#                      the accuracy at that cap)
#   --seeds LIST       seeds for n below --few-seeds-from (1 2 3)
#   --few-seeds-from N from this n on only the first seed (8192)
#   --cap K            PCF's iteration cap (200000: not reached)
#   --pf-cap K         push-flow's iteration cap (20000, the library's)
#   --keep             add to the data file; a (algo shape op n seed) row
#                      already there is not run again, so a sweep can be
#                      done in parts
#
# Cost: a run hands the simulator about n x iterations messages, 1.5 to
# 4.5 us of processor time each; the 32^3 torus (about 9000 iterations)
# takes about twenty minutes of processor time per run.
#
# to-target.dat: algo shape sides op n seed iterations msgs_per_proc
#                max_err_vs_all at_cap at_floor cpu_s
#   iterations: the slowest process's; at_cap: processes stopped by the
#   cap (their local test never passed); at_floor: push-flow processes
#   whose test passed at their rounding floor, above the target
#   (docs/gossip.md, "Push-flow's rounding floor"); cpu_s: the run's
#   processor time.
set -eu

build=build-rel
sim=
out=
docs=docs
sizes="64 128 256 512 1024 2048 4096 8192 16384 32768"
shapes="hypercube torus3d"
algos="pcf push-flow"
ops="avg sum"
seeds="1 2 3"
few_from=8192
cap=200000
pf_cap=20000
keep=0
plot=1
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --sim) sim=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --docs) docs=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --algos) algos=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --few-seeds-from) few_from=$2; shift 2 ;;
    --cap) cap=$2; shift 2 ;;
    --pf-cap) pf_cap=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --no-plot) plot=0; shift ;;
    -h|--help) sed -n '3,40p' "$0"; exit 0 ;;
    *) echo "gossip_to_target.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$sim" ] || sim=$build/bench/ftcoll-sim
[ -x "$sim" ] || { echo "gossip_to_target.sh: no $sim (ninja -C $build)" >&2; exit 2; }
[ -n "$out" ] || out=$build/gossip-figures
command -v /usr/bin/time >/dev/null ||
    { echo "gossip_to_target.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
mkdir -p "$out"
dat=$out/to-target.dat
if [ "$keep" = 0 ] || [ ! -s "$dat" ]; then
    echo "# algo shape sides op n seed iterations msgs_per_proc max_err_vs_all at_cap at_floor cpu_s" >"$dat"
fi

# The sides ftcoll-sim picks for torus3d (bench/sim_gossip.c, auto_torus),
# for the theory's comparison: the torus mixes in O(longest side^2).
sides() {
    python3 -c 'import sys
n = int(sys.argv[1]); x = 1; a = 1
while a * a * a <= n:
    if n % a == 0: x = a
    a += 1
rest = n // x; y = 1; b = x
while b * b <= rest:
    if rest % b == 0: y = b
    b += 1
if y < x: y = 1
print("%dx%dx%d" % (x, y, rest // y))' "$1"
}
have_row() {
    awk -v a="$1" -v s="$2" -v o="$3" -v n="$4" -v e="$5" \
        '$1 == a && $2 == s && $4 == o && $5 == n && $6 == e { f = 1 } END { exit !f }' "$dat"
}
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.t"' EXIT
for n in $sizes; do
    run_seeds=$seeds
    [ "$n" -ge "$few_from" ] && run_seeds=${seeds%% *}
    for algo in $algos; do
        for shape in $shapes; do
            # Push-flow's hypercube columns are bench/gossip_figures.sh's
            # (it stops at any cap there too, Figure 3).
            [ "$algo" = push-flow ] && [ "$shape" != torus3d ] && continue
            k=$cap
            [ "$algo" = push-flow ] && k=$pf_cap
            sd=-
            [ "$shape" = torus3d ] && sd=$(sides "$n")
            for op in $ops; do
                for seed in $run_seeds; do
                    if have_row $algo $shape $op "$n" "$seed"; then
                        echo "$algo $shape $op $n seed $seed: already in $dat" >&2
                        continue
                    fi
                    /usr/bin/time -f %U -o "$tmp.t" "$sim" --algo $algo -n "$n" \
                        --neighbours $shape --op $op --seed "$seed" \
                        --target 1e-15 --max-iterations "$k" --no-check \
                        --json >"$tmp"
                    row=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); r = d["runs"][0]
print(r["iterations"], r["messages_per_process"], r["max_err_vs_all"],
      r["at_cap"], r["at_floor"])' "$tmp" "$k")
                    echo "$algo $shape $sd $op $n $seed $row $(tail -n 1 "$tmp.t")" | tee -a "$dat" >&2
                done
            done
        done
    done
done

if [ "$plot" = 1 ]; then
    command -v gnuplot >/dev/null || { echo "gossip_to_target.sh: no gnuplot (apt-get install gnuplot-nox); data in $dat" >&2; exit 0; }
    gnuplot -e "dir='$out'; docs='$docs'" bench/gossip_to_target.gp
    echo "picture: $docs/gossip-to-target.svg" >&2
fi
echo "data: $dat" >&2
