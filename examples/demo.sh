#!/bin/sh
# The demo, from a fresh Debian 12 machine: builds ftcoll, then runs an
# allreduce in which some processes fail and the survivors agree on the
# result: first 16 ranks on the in-memory loopback backend, then 8 real
# processes over ZeroMQ, started by ftcoll-run, with one of them SIGKILLed.
set -eu
cd "$(dirname "$0")/.."
. ./tests/deps.sh
# shellcheck disable=SC2086
ftc_deps $FTC_BUILD_DEPS
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
echo "== loopback backend: 16 ranks in one process =="
./build/examples/allreduce_loopback 16 3
echo
echo "== ZeroMQ backend: 8 processes, rank 3 SIGKILLed during allreduce 5 =="
sh examples/demo_zmq.sh build
