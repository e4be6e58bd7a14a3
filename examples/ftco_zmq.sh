#!/bin/sh
# The ftco family over real processes (examples/ftco_zmq.c says what the
# program does): 8 ranks under ftcoll-run run 20 allreduces of doubles.
# Rank 3 is SIGKILLed by the launcher when it reaches allreduce 6, and
# rank 5 SIGSTOPped when it reaches allreduce 12 (each says so and waits:
# the faults are tied to the stream's progress, never to a time).
#
#   sh examples/ftco_zmq.sh [BUILD_DIR]        (default: build)
#
# Asserts from the printed lines: every survivor ends with every result
# exact (the exact sum over the ranks it counts), the survivors' results
# of each allreduce agree and name the same ranks, rank 3 died of SIGKILL
# and rank 5 was stopped, and the allreduces from 6 (12) on miss rank 3
# (5). Builds nothing; exit status 0 only when all of that holds.
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

n=8 iters=20 killed=3 kill_at=6 stopped=5 stop_at=12
out=
die() {
    echo "$out"
    echo "ftco_zmq: $*" >&2
    exit 1
}

status=0
out=$("$run" -n $n --timeout 120 \
      --kill "$killed@$killed:allreduce $kill_at: waiting for a signal" \
      --stop "$stopped@$stopped:allreduce $stop_at: waiting for a signal" -- \
      "$prog" --iters $iters --wait $killed@$kill_at \
      --wait $stopped@$stop_at 2>&1) || status=$?
[ $status -eq 0 ] \
    || die "a survivor failed or did not end (ftcoll-run's status $status)"

# The faults happened, as planned: ftcoll-run says what it did and how
# each rank ended.
echo "$out" | grep -q "^ftcoll-run: rank $killed was killed by SIGKILL" \
    || die "rank $killed was not killed by SIGKILL"
echo "$out" | grep -q "^ftcoll-run: stopped rank $stopped at" \
    || die "rank $stopped was not stopped"

# Every survivor ended with every result exact.
survivors=$((n - 2))
others="^\[\($killed\|$stopped\)\] "
ended=$(echo "$out" | grep -v "$others" \
        | grep -c '^\[[0-9]*\] done: every result exact$' || true)
[ "$ended" -eq "$survivors" ] \
    || die "$ended of $survivors survivors ended with every result exact"

# Each allreduce: one line per survivor, all the same but for the rank
# (the victims' own lines are left out).
i=0
while [ $i -lt $iters ]; do
    lines=$(echo "$out" | grep -v "$others" \
            | sed -n "s/^\[[0-9]*\] allreduce $i: //p")
    count=$(echo "$lines" | grep -c ': exact$' || true)
    distinct=$(echo "$lines" | sort -u | wc -l)
    [ "$count" -eq "$survivors" ] && [ "$distinct" -eq 1 ] \
        || die "allreduce $i: $count exact results of $survivors," \
               "$distinct distinct"
    i=$((i + 1))
done

# The allreduces the faults came at, and every later one, miss the
# victims (the results are the same everywhere: rank 0's will do).
misses() {
    echo "$out" | sed -n "s/^\[0\] allreduce \([0-9]*\): .* misses \(.*\): exact$/\1 ,\2,/p" \
        | awk -v r=",$1," -v from="$2" \
              'index($2, r) { if ($1 >= from) later++; else early++ }
               END { print later + 0, early + 0 }'
}
set -- $(misses $killed $kill_at)
[ "$1" -eq $((iters - kill_at)) ] && [ "$2" -eq 0 ] \
    || die "$1 allreduces from $kill_at on miss rank $killed (and $2 before)"
set -- $(misses $stopped $stop_at)
[ "$1" -eq $((iters - stop_at)) ] && [ "$2" -eq 0 ] \
    || die "$1 allreduces from $stop_at on miss rank $stopped (and $2 before)"

echo "$out"
echo "ftco_zmq: the $survivors survivors agree on all $iters allreduces," \
     "each exact over the ranks it counts; rank $killed was SIGKILLed at" \
     "allreduce $kill_at and rank $stopped SIGSTOPped at $stop_at, and" \
     "every allreduce from there on misses them"
