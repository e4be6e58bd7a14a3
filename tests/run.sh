#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs what is
# missing, builds in build/, runs every default test suite.
#   sh tests/run.sh                 default suites (a few minutes)
#   sh tests/run.sh --suite sweep   also any meson test arguments
#   sh tests/run.sh --repeat N      the conformance suites N times (with
#                                   --suite X: suite X N times)
#   sh tests/run.sh --load          while stress-ng keeps every core busy
#                                   (or FTCOLL_TEST_LOAD=1)
set -eu
cd "$(dirname "$0")/.."

# Our options; everything else goes to meson test as it came.
repeat=""
load="${FTCOLL_TEST_LOAD:-}"
[ "$load" = 0 ] && load=""
suite=""
n=$#
while [ "$n" -gt 0 ]; do
    a=$1
    shift
    n=$((n - 1))
    case $a in
    --repeat)
        [ "$n" -gt 0 ] || { echo "tests/run.sh: --repeat needs a count" >&2; exit 2; }
        repeat=$1
        shift
        n=$((n - 1))
        ;;
    --repeat=*) repeat=${a#--repeat=} ;;
    --load) load=1 ;;
    *)
        case $a in --suite | --suite=*) suite=1 ;; esac
        set -- "$@" "$a"
        ;;
    esac
done
if [ -n "$repeat" ]; then
    case $repeat in
    '' | *[!0-9]* | 0) echo "tests/run.sh: --repeat wants a count > 0" >&2; exit 2 ;;
    esac
    [ -n "$suite" ] || set -- --suite conformance "$@"
    set -- --repeat "$repeat" "$@"
fi

. ./tests/deps.sh
# shellcheck disable=SC2086
ftc_deps $FTC_BUILD_DEPS
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build

# --load: one CPU-bound stress-ng worker per core for as long as the tests
# run, stopped however we leave (stress-ng ends its workers on SIGTERM).
load_pid=""
stop_load() {
    if [ -n "$load_pid" ]; then
        kill -TERM "$load_pid" 2>/dev/null || true
        wait "$load_pid" 2>/dev/null || true
        load_pid=""
    fi
}
if [ -n "$load" ]; then
    cpus=$(nproc)
    trap 'stop_load' EXIT
    trap 'stop_load; exit 130' INT
    trap 'stop_load; exit 143' TERM
    trap 'stop_load; exit 129' HUP
    stress-ng --cpu "$cpus" --quiet &
    load_pid=$!
    # Started when its workers run (or it died): no fixed pause.
    until pgrep -P "$load_pid" >/dev/null 2>&1; do
        kill -0 "$load_pid" 2>/dev/null \
            || { echo "tests/run.sh: stress-ng did not start" >&2; exit 1; }
        sleep 0.05
    done
    echo "ftcoll: tests under load: stress-ng --cpu $cpus (pid $load_pid)"
fi

rc=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || rc=$?
stop_load
# One plain closing line, counted from meson's own log.
python3 - build/meson-logs/testlog.json "$load" "$repeat" <<'PY'
import json, sys
ok = bad = skip = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r == "SKIP":
        skip += 1
    else:
        bad += 1
how = []
if sys.argv[3]:
    how.append("each test %s times" % sys.argv[3])
if sys.argv[2]:
    how.append("under load")
print(f"{ok} passed, {bad} failed, {skip} skipped"
      + (" (%s)" % ", ".join(how) if how else ""))
PY
exit $rc
