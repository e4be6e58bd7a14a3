#!/bin/sh
# Instructions per operation and rank of a steady stream, by phase
# (bench/phase_marks.h), counted by callgrind: what lies between a peer's
# message and the rank's next send (phases 1 to 3), which every operation
# of a stream waits for, against what overlaps the hop (phase 4). All the
# process's instructions in a phase count: the core's, the C library's and
# bench_core's inline transport (a real backend's send and receive come on
# top). callgrind_core.sh counts the core's instructions per message,
# wherever they lie.
#
#   sh bench/callgrind_phases.sh [BUILD_DIR] [N] [ALGO:F] [ITERS] [ARGS...]
#       defaults: build 2 exchange:1 5000; ARGS go to bench_core
#       (e.g. --auth: every message MACed)
#
# At n = 2 the exchange's critical path is exactly 1 + 2 + 3: the one
# message a rank receives completes its operation, and its answer is the
# next operation's send. With more ranks, phase 1 also holds messages that
# complete nothing, and a tree's path runs through several ranks.
set -eu
build=${1:-build}
n=${2:-2}
algo=${3:-exchange:1}
iters=${4:-5000}
[ $# -gt 4 ] && shift 4 || set --
bench="$build/bench/bench_core"
if [ ! -x "$bench" ]; then
    echo "callgrind_phases.sh: no $bench (build the bench first)" >&2
    exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total=0
echo "callgrind, steady $algo, n = $n, $iters operations a rank${*:+, $*}:"
echo "instructions per operation and rank"
for k in 1 2 3 4; do
    valgrind --tool=callgrind --collect-atstart=no \
        --callgrind-out-file="$out/p$k.out" \
        "$bench" --steady "$algo" --n "$n" --iters "$iters" --phase "$k" \
        "$@" >"$out/p$k.txt" 2>"$out/p$k.err" || {
        cat "$out/p$k.err" >&2
        exit 1
    }
    ir=$(awk '$1 == "totals:" || $1 == "summary:" {print $2; exit}' \
        "$out/p$k.out")
    per=$(awk -v ir="$ir" -v n="$n" -v k="$iters" \
        'BEGIN {printf "%d", ir / (n * k) + 0.5}')
    case $k in
    1) what="1 receive: a message's arrival to the delivery" ;;
    2) what="2 return: the delivery's callback to the return" ;;
    3) what="3 start: ftc_init_* to the first send" ;;
    4) what="4 after send: the first send to ftc_init_*'s return" ;;
    esac
    printf '  %-52s %6d\n' "$what" "$per"
    [ "$k" -le 3 ] && total=$((total + per))
done
printf '  %-52s %6d\n' "before the next send (1 + 2 + 3)" "$total"
