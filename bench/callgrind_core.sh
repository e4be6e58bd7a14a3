#!/bin/sh
# Instructions per message, core only, counted by callgrind (repeatable,
# unlike time). Sums the instructions of the functions defined in lib/ (the
# core: every code symbol of build/lib/libftcoll.a, so a release build
# without debug information counts too) and of the C library's functions
# they call (memcpy, memset, malloc, free), and divides by the messages
# sent. The loopback backend, the bench and their own libc calls are out.
#
#   sh bench/callgrind_core.sh [BUILD_DIR] [N]
#       one corrected f=1 allreduce of bench_core at N ranks (default 1024)
#   sh bench/callgrind_core.sh [BUILD_DIR] [N] ALGO:F [ITERS] [BENCH_ARGS...]
#       bench_core --steady: back-to-back allreduces at N ranks (e.g. 2
#       tree:0; ftcot:0 is ftco with its per-message timeouts), an
#       inline transport like a real backend's fast path; only the
#       measured loop is counted (warm-up and set-up are not); BENCH_ARGS
#       go to bench_core (e.g. --timeout 1000000000: every operation with
#       a timeout, the core's deadlines)
set -eu
build=${1:-build}
n=${2:-1024}
steady=${3:-}
iters=${4:-20000}
[ $# -gt 4 ] && shift 4 || set --
out=$(mktemp -d)
if [ -n "$steady" ]; then
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
        --toggle-collect='steady_loop*' \
        "$build/bench/bench_core" --steady "$steady" --n "$n" \
        --iters "$iters" "$@" >"$out/bench.txt" 2>/dev/null
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
# The core's functions: every code symbol of the core's library (static
# ones too, and gcc's .part/.constprop clones), so that the count needs no
# debug information (a release build has none: by source file it was 0).
lib=$(ls "$build"/lib/libftcoll.a 2>/dev/null || true)
if [ -z "$lib" ]; then
    echo "callgrind_core.sh: no $build/lib/libftcoll.a (build the core first)" >&2
    exit 2
fi
nm --defined-only "$lib" 2>/dev/null | awk '$2 ~ /^[tTwW]$/ {print $3}' \
    | sort -u >"$out/core_syms.txt"
python3 - "$out/cg.out" "$msgs" "$what" "$out/core_syms.txt" <<'PY'
# Reads callgrind's own output format (not callgrind_annotate's, which
# names a function by its source file: "???" without debug info).
#   core  = the self cost of the core's functions, plus everything the C
#           library runs for them (memcpy, memset, malloc, free: the
#           inclusive cost of their calls into libc), which is the core's
#           work even though the code is libc's;
#   libc  = the rest of libc (the transport's and the bench's calls).
import re, sys
cg, msgs, what, syms = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
core_names = set(l.strip() for l in open(syms) if l.strip())
names = {"ob": {}, "fl": {}, "fn": {}}
space = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl",
         "cfi": "fl", "cfl": "fl", "fn": "fn", "cfn": "fn"}
def name(kind, v):
    m = re.match(r"\((\d+)\)(?: (.*))?$", v)
    if not m:
        return v
    table = names[space[kind]]
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
    return table.get(m.group(1), "?")
def is_libc(obj):
    return re.search(r"/libc[.-]", obj) is not None
total = core_self = core_libc = libc = 0
ob = fn = cob = cfn = ""
after_calls = False
for line in open(cg):
    line = line.rstrip("\n")
    if not line:
        continue
    c = line[0]
    if c.isdigit() or c in "+-*":
        parts = line.split()
        ir = int(parts[1]) if len(parts) > 1 else 0
        if after_calls:
            after_calls = False
            # An inclusive cost: the core's calls into libc are the core's.
            if fn in core_names and is_libc(cob):
                core_libc += ir
            cob = ob    # a call without cob= stays in the caller's object
            continue
        total += ir
        if is_libc(ob):
            libc += ir
        elif fn in core_names:
            core_self += ir
        continue
    if "=" not in line:
        continue
    key, v = line.split("=", 1)
    if key == "ob":
        ob = name(key, v)
    elif key == "fn":
        fn = name(key, v)
        cob = ob
    elif key == "cob":
        cob = name(key, v)
    elif key == "cfn":
        cfn = name(key, v)
    elif key in ("fl", "fi", "fe", "cfi", "cfl"):
        name(key, v)
    elif key == "calls":
        after_calls = True
    elif key == "summary" or key == "totals":
        pass
core = core_self + core_libc
libc_rest = libc - core_libc
print(f"callgrind, {what}: {msgs} messages")
print(f"  program total  {total:>12,} Ir  {total / msgs:8.0f} Ir/message (core + transport + libc)")
print(f"  core (lib/)    {core:>12,} Ir  {core / msgs:8.0f} Ir/message"
      f" (its own code {core_self / msgs:.0f}, the libc it calls {core_libc / msgs:.0f})")
print(f"  libc for the rest (transport, bench) {libc_rest:,} Ir  {libc_rest / msgs:.0f} Ir/message")
PY
if [ -n "${KEEP_CG:-}" ]; then cp "$out/cg.out" "$KEEP_CG"; fi
rm -rf "$out"
