#!/bin/sh
# Instructions per message, core only: runs one corrected f=1 allreduce of
# bench_core under callgrind (instruction counts are repeatable, unlike
# time), sums the exclusive instructions of the functions defined in lib/
# (the core; the loopback backend and libc excluded, malloc included as
# libc is not) and divides by the messages sent.
#   sh bench/callgrind_core.sh [BUILD_DIR] [N]
set -eu
build=${1:-build}
n=${2:-1024}
out=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
    "$build/bench/bench_core" --n "$n" --reps 1 --single >"$out/bench.txt" 2>/dev/null
msgs=$(awk '$1 == "allreduce" {print $4; exit}' "$out/bench.txt")
callgrind_annotate --threshold=100 "$out/cg.out" >"$out/ann.txt" 2>/dev/null
python3 - "$out/ann.txt" "$msgs" "$n" <<'PY'
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
msgs, n = int(sys.argv[2]), sys.argv[3]
print(f"callgrind, one corrected allreduce, n = {n}, f = 1, 8 bytes: {msgs} messages")
print(f"  program total  {total:>12,} Ir  {total / msgs:8.0f} Ir/message (core + loopback + libc)")
print(f"  core (lib/)    {core:>12,} Ir  {core / msgs:8.0f} Ir/message")
print(f"  libc (malloc, memcpy, ...) {libc:,} Ir  {libc / msgs:.0f} Ir/message")
PY
rm -rf "$out"
