#!/bin/sh
# The ZeroMQ demo: 8 real processes started by ftcoll-run run allreduces;
# rank 3 SIGKILLs itself in the middle of allreduce number 5. The 7
# survivors deliver that allreduce and all later ones, print the same
# results and name the failed rank. Builds nothing:
#
#   sh examples/demo_zmq.sh [BUILD_DIR]        (default: build)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
run=$build/backends/bootstrap/ftcoll-run
prog=$build/examples/allreduce_zmq
if [ ! -x "$run" ] || [ ! -x "$prog" ]; then
    echo "demo_zmq: $prog or $run is missing: build ftcoll with ZeroMQ" \
         "(libzmq3-dev) first: meson setup $build && ninja -C $build" >&2
    exit 1
fi

out=$("$run" -n 8 --may-fail 3 --timeout 60 -- "$prog" --iters 10 --die 3@5)
echo "$out"
# Every survivor must print the same line but for its rank.
lines=$(echo "$out" | grep -c 'allreduces, at 5:' || true)
distinct=$(echo "$out" | sed -n 's/^\[[0-9]*\] rank [0-9]*: //p' | sort -u | wc -l)
if [ "$lines" -ne 7 ] || [ "$distinct" -ne 1 ]; then
    echo "demo_zmq: the survivors do not agree ($lines lines)" >&2
    exit 1
fi
echo "demo_zmq: the 7 survivors agree; rank 3 failed during allreduce 5"
