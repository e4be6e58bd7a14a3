#!/bin/sh
# Chapter 17's two examples as real processes over ZeroMQ, each with a
# worker SIGKILLed in the middle of an operation (examples/
# master_worker_zmq.c and refine_zmq.c say what they do):
#
#   sh examples/ulfm_zmq.sh [BUILD_DIR] [master-worker|refine|both]
#
# master-worker: 8 ranks, worker 3 dies in round 2; the master must finish
# every task with the right sum and name worker 3 failed.
# refine: 8 ranks, rank 3 dies in iteration 5; the 7 survivors must
# converge on a group of 7, all with the same x, and a small residual.
# Builds nothing; exit status 0 only when the outcome is right.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
which=${2:-both}
run=$build/backends/bootstrap/ftcoll-run
for prog in master_worker_zmq refine_zmq; do
    if [ ! -x "$build/examples/$prog" ] || [ ! -x "$run" ]; then
        echo "ulfm_zmq: $build/examples/$prog or $run is missing: build" \
             "ftcoll with ZeroMQ (libzmq3-dev) first" >&2
        exit 1
    fi
done

# The victim died of SIGKILL, as planned (ftcoll-run says how each rank
# ended): a run in which it did not die proves nothing.
killed() {
    if ! echo "$1" | grep -q "^ftcoll-run: rank $2 was killed by SIGKILL"; then
        echo "ulfm_zmq: rank $2 was not killed" >&2
        exit 1
    fi
}

if [ "$which" = master-worker ] || [ "$which" = both ]; then
    out=$("$run" -n 8 --may-fail 3 --timeout 60 -- \
          "$build/examples/master_worker_zmq" --tasks 40 --die 3@2 2>&1) || {
        echo "$out"; echo "ulfm_zmq: master/worker: a rank failed" >&2; exit 1; }
    echo "$out"
    killed "$out" 3
    line=$(echo "$out" | sed -n 's/^\[0\] master: //p')
    sum=$(echo "$line" | sed -n 's/.*sum \([0-9]*\) (expected \([0-9]*\)).*/\1 \2/p')
    set -- $sum
    if [ -z "$line" ] || [ "$#" -ne 2 ] || [ "$1" != "$2" ] \
       || ! echo "$line" | grep -q '^40 tasks done' \
       || ! echo "$line" | grep -q 'failed workers: 3;'; then
        echo "ulfm_zmq: the master did not finish the work: $line" >&2
        exit 1
    fi
    echo "ulfm_zmq: master/worker: every task done with worker 3 dead"
fi

if [ "$which" = refine ] || [ "$which" = both ]; then
    out=$("$run" -n 8 --may-fail 3 --timeout 60 -- \
          "$build/examples/refine_zmq" --size 64 --die 3@5 2>&1) || {
        echo "$out"; echo "ulfm_zmq: refine: a rank failed" >&2; exit 1; }
    echo "$out"
    killed "$out" 3
    lines=$(echo "$out" | grep -c 'converged after .* on a group of 7 (shrunk' \
            || true)
    distinct=$(echo "$out" | sed -n 's/.*: converged after //p' | sort -u \
               | wc -l)
    if [ "$lines" -ne 7 ] || [ "$distinct" -ne 1 ]; then
        echo "ulfm_zmq: the 7 survivors did not converge together on the" \
             "shrunk group ($lines lines, $distinct distinct)" >&2
        exit 1
    fi
    echo "ulfm_zmq: refinement: the 7 survivors converged on the shrunk group"
fi
