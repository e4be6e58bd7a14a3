#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# What a user of an installed ftcoll does, in a staging tree: install the
# build there (meson install --destdir), then compile each example with
# nothing but the compiler and `pkg-config --cflags --libs` of the
# installed pkg-config files, and run the loopback one. Catches a header
# or library left out of the install, a .pc file that names the wrong
# library or include directory, and an installed library that misses a
# symbol of the core.
#
#   check_install.sh BUILD_ROOT SOURCE_ROOT SANITIZE CC [CC_ARGS...]
#
# SANITIZE is meson's b_sanitize ("none", "address,undefined", ...): an
# instrumented libftcoll needs the same runtime in the program.
set -eu
build=$1 src=$2 sanitize=$3 CC_CMD=$4
shift 4
CC_ARGS="$*"
stage=$(mktemp -d "${TMPDIR:-/tmp}/ftcoll-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT INT TERM

meson install -C "$build" --no-rebuild --destdir "$stage" --quiet \
    >"$stage/install.log" 2>&1 || { cat "$stage/install.log"; exit 1; }

pc=$(find "$stage" -name ftcoll.pc -path '*/pkgconfig/*' | head -n 1)
if [ -z "$pc" ]; then
    echo "FAIL: meson install put no ftcoll.pc under $stage" >&2
    exit 1
fi
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
# The .pc files name the configured prefix; the staging tree holds it
# below $stage. PKG_CONFIG_SYSROOT_DIR is pkg-config's own way to say so.
export PKG_CONFIG_PATH="$pcdir"
export PKG_CONFIG_SYSROOT_DIR="$stage"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

san=""
if [ "$sanitize" != "none" ] && [ -n "$sanitize" ]; then
    san="-fsanitize=$sanitize"
fi

passed=0 failed=0
# build NAME PKGS...: compile examples/NAME.c against the staged install.
build_example() {
    name=$1
    shift
    if ! flags=$(pkg-config --cflags --libs "$@"); then
        echo "FAIL: pkg-config $* (in $pcdir)" >&2
        failed=$((failed + 1))
        return 1
    fi
    # shellcheck disable=SC2086 # flags are words by design
    if "$CC_CMD" $CC_ARGS $san -std=c11 \
            -o "$stage/$name" "$src/examples/$name.c" $flags; then
        echo "ok: $name builds with pkg-config $*"
        passed=$((passed + 1))
        return 0
    fi
    echo "FAIL: $name does not build with: $CC_CMD $san $flags" >&2
    failed=$((failed + 1))
    return 1
}


if build_example allreduce_loopback ftcoll-loopback; then
    if "$stage/allreduce_loopback" >"$stage/run.log" 2>&1; then
        echo "ok: the installed allreduce_loopback runs"
        passed=$((passed + 1))
    else
        cat "$stage/run.log" >&2
        echo "FAIL: the installed allreduce_loopback exits non-zero" >&2
        failed=$((failed + 1))
    fi
fi
if [ -f "$pcdir/ftcoll-zmq.pc" ]; then
    build_example allreduce_zmq ftcoll-zmq ftcoll-bootstrap || :
else
    echo "skip: allreduce_zmq (this build has no ZeroMQ backend)"
fi
# Every installed .pc resolves (its Requires are installed too).
for f in "$pcdir"/ftcoll*.pc; do
    p=$(basename "$f" .pc)
    if pkg-config --exists --print-errors "$p"; then
        passed=$((passed + 1))
    else
        echo "FAIL: pkg-config $p" >&2
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
