#!/bin/sh
# The ftco family over real processes (examples/ftco_zmq.c says what the
# program does): 8 ranks under ftcoll-run run 20 allreduces of doubles;
# rank 3 is SIGKILLed by the launcher when it reaches allreduce 6 (it says
# so and waits: the kill is tied to the stream's progress, not to a time).
#
#   sh examples/ftco_zmq.sh [BUILD_DIR]        (default: build)
#
# Asserts from the printed lines: every survivor ends with every result
# exact (the exact sum over the ranks it counts), the survivors' results
# of each allreduce agree and name the same ranks, the victim died of
# SIGKILL, and some allreduce misses it. Builds nothing; exit status 0
# only when all of that holds.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
run=$build/backends/bootstrap/ftcoll-run
prog=$build/examples/ftco_zmq
if [ ! -x "$run" ] || [ ! -x "$prog" ]; then
    echo "ftco_zmq: $prog or $run is missing: build ftcoll with ZeroMQ" \
         "(libzmq3-dev) first: meson setup $build && ninja -C $build" >&2
    exit 1
fi

n=8 iters=20 victim=3 at=6
die() {
    echo "$out"
    echo "ftco_zmq: $*" >&2
    exit 1
}

out=$("$run" -n $n --timeout 120 \
      --kill "$victim@$victim:allreduce $at: waiting to be killed" -- \
      "$prog" --iters $iters --victim $victim@$at 2>&1) \
    || die "a survivor failed or did not end (ftcoll-run's status $?)"

# The kill happened, as planned: ftcoll-run says how each rank ended.
echo "$out" | grep -q "^ftcoll-run: rank $victim was killed by SIGKILL" \
    || die "rank $victim was not killed by SIGKILL"

# Every survivor ended with every result exact.
survivors=$((n - 1))
ended=$(echo "$out" | grep -c '^\[[0-9]*\] done: every result exact$' \
        || true)
[ "$ended" -eq "$survivors" ] \
    || die "$ended of $survivors survivors ended with every result exact"

# Each allreduce: one line per survivor, all the same but for the rank
# (the victim's own lines, before it died, are left out).
i=0
while [ $i -lt $iters ]; do
    lines=$(echo "$out" | grep -v "^\[$victim\] " \
            | sed -n "s/^\[[0-9]*\] allreduce $i: //p")
    count=$(echo "$lines" | grep -c ': exact$' || true)
    distinct=$(echo "$lines" | sort -u | wc -l)
    [ "$count" -eq "$survivors" ] && [ "$distinct" -eq 1 ] \
        || die "allreduce $i: $count exact results of $survivors," \
               "$distinct distinct"
    i=$((i + 1))
done

# Some allreduce misses the victim (from allreduce $at on, all must).
missed=$(echo "$out" | sed -n "s/^\[0\] allreduce [0-9]*: .* misses //p" \
         | grep -c "^\(.*,\)\{0,1\}$victim\(,.*\)\{0,1\}: exact$" || true)
[ "$missed" -ge $((iters - at)) ] \
    || die "only $missed allreduces miss rank $victim"

echo "$out"
echo "ftco_zmq: the $survivors survivors agree on all $iters allreduces," \
     "each exact over the ranks it counts; rank $victim was SIGKILLed at" \
     "allreduce $at and $missed results miss it"
