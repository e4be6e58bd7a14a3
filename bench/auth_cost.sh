#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What the job key's MAC costs per operation over real backends: ftcoll-bench
# allreduce, n = 2, 8 B and 64 KiB, with authentication on and off
# (--no-auth) in interleaved pairs, so that a change in the machine's load
# falls on both alike. Prints one line per run, then the median of each.
#
#   bench/auth_cost.sh BUILD_DIR [PAIRS] [ITERS]
#
# Backends: ZeroMQ over TCP and UCX over shared memory (UCX_TLS=sm), the
# ones in docs/security.md's table. Ranks block on their descriptor
# (--wait block): on shared cores, spinning would measure the scheduler.
set -eu
build=${1:?usage: auth_cost.sh BUILD_DIR [PAIRS] [ITERS]}
pairs=${2:-7}
iters=${3:-2000}
run=$build/backends/bootstrap/ftcoll-run
bench=$build/bench/ftcoll-bench
out=$(mktemp)
trap 'rm -f "$out"' EXIT
one() { # backend auth-flag env...
    be=$1; flag=$2; shift 2
    env "$@" "$run" -n 2 --backend "$be" -- "$bench" --sizes 8,65536 \
        --iters "$iters" --warmup 200 --quiet --csv $flag |
        sed -n "s/^\[0\] csv,allreduce,/$be,${flag:-auth},/p"
}
for i in $(seq "$pairs"); do
    for be in zmq ucx; do
        # UCX sm as conformance.py runs it (docs/ucx.md: it reports a dead
        # peer only with these).
        e=""
        [ "$be" = ucx ] && e="UCX_TLS=sm UCX_MM_ERROR_HANDLING=y
            UCX_KEEPALIVE_INTERVAL=100ms"
        # shellcheck disable=SC2086 # e is a list of assignments
        one "$be" "" $e | tee -a "$out"
        # shellcheck disable=SC2086
        one "$be" --no-auth $e | tee -a "$out"
    done
done
# backend,mode,algo,f,n,size,avg,min,max,p50,p99: per backend, mode and
# size, the median over runs of the mean (column 7) and of the p50
# (column 10); p50 is the robust one on a shared machine.
echo "# backend,mode,size: median over runs of mean and of p50 (us)"
for key in $(cut -d, -f1,2,6 "$out" | sort -u); do
    be=${key%%,*}; rest=${key#*,}; mode=${rest%%,*}; size=${rest#*,}
    awk -F, -v be="$be" -v mode="$mode" -v size="$size" '
        $1 == be && $2 == mode && $6 == size { a[++k] = $7; p[k] = $10 }
        function median(v, k,   i, j, t) {
            for (i = 1; i <= k; i++)
                for (j = i + 1; j <= k; j++)
                    if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            return v[int((k + 1) / 2)]
        }
        END { printf "%s,%s,%s mean %.1f p50 %.1f (%d runs)\n", be, mode,
                     size, median(a, k), median(p, k), k }' "$out"
done
