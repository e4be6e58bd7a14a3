#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs what is
# missing, builds in build/, runs every default test suite.
#   sh tests/run.sh                 default suites (a few minutes)
#   sh tests/run.sh --suite sweep   also any meson test arguments
set -eu
cd "$(dirname "$0")/.."
. ./tests/deps.sh
# shellcheck disable=SC2086
ftc_deps $FTC_BUILD_DEPS
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
rc=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || rc=$?
# One plain closing line, counted from meson's own log.
python3 - build/meson-logs/testlog.json <<'PY'
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
print(f"{ok} passed, {bad} failed, {skip} skipped")
PY
exit $rc
