#!/bin/sh
# Instructions per message, core only, counted by callgrind (repeatable,
# unlike time). Sums the exclusive instructions of the functions defined in
# lib/ (the core; the loopback backend and libc excluded, malloc included as
# libc is not) and divides by the messages sent.
#
#   sh bench/callgrind_core.sh [BUILD_DIR] [N]
#       one corrected f=1 allreduce of bench_core at N ranks (default 1024)
#   sh bench/callgrind_core.sh [BUILD_DIR] [N] ALGO:F [ITERS]
#       bench_core --steady: back-to-back allreduces at N ranks (e.g. 2
#       tree:0), an inline transport like a real backend's fast path;
#       only the measured loop is counted (warm-up and set-up are not)
set -eu
build=${1:-build}
n=${2:-1024}
steady=${3:-}
iters=${4:-20000}
out=$(mktemp -d)
if [ -n "$steady" ]; then
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
        --toggle-collect='steady_loop*' \
        "$build/bench/bench_core" --steady "$steady" --n "$n" \
        --iters "$iters" >"$out/bench.txt" 2>/dev/null
    msgs=$(awk '$1 ~ /:/ && NF == 6 {print $4; exit}' "$out/bench.txt")
    # The warm-up loop is collected too: scale by its share of messages.
    what="steady $steady, n = $n, $iters allreduces (+ warm-up)"
    msgs=$(awk -v m="$msgs" -v k="$iters" \
        'BEGIN {w = int(k / 10) + 1; printf "%d", m * (k + w) / k}')
else
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
        "$build/bench/bench_core" --n "$n" --reps 1 --single >"$out/bench.txt" 2>/dev/null
    msgs=$(awk '$1 == "allreduce" {print $4; exit}' "$out/bench.txt")
    what="one corrected allreduce, n = $n, f = 1, 8 bytes"
fi
callgrind_annotate --threshold=100 "$out/cg.out" >"$out/ann.txt" 2>/dev/null
python3 - "$out/ann.txt" "$msgs" "$what" <<'PY'
import re, sys
total = core = libc = 0
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S+):(\S+)", line)
    if not m:
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
        continue
    ir = int(m.group(1).replace(",", ""))
    path = m.group(2)
    if "/lib/" in path and "/usr/" not in path:
        core += ir
    elif "libc" in path or "malloc" in path:
        libc += ir
msgs, what = int(sys.argv[2]), sys.argv[3]
print(f"callgrind, {what}: {msgs} messages")
print(f"  program total  {total:>12,} Ir  {total / msgs:8.0f} Ir/message (core + transport + libc)")
print(f"  core (lib/)    {core:>12,} Ir  {core / msgs:8.0f} Ir/message")
print(f"  libc (malloc, memcpy, ...) {libc:,} Ir  {libc / msgs:.0f} Ir/message")
PY
if [ -n "${KEEP_CG:-}" ]; then cp "$out/cg.out" "$KEEP_CG"; fi
rm -rf "$out"
