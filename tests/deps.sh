#!/bin/sh
# Install the Debian packages ftcoll needs that are missing; sourced by
# tests/run.sh and examples/demo.sh. Usage: ftc_deps pkg...
ftc_deps() {
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
            || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    echo "ftcoll: installing$missing" >&2
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# What every build needs, plus each backend's library (optional in
# meson, installed here so the demo and the tests cover them): ZeroMQ,
# UCX, libfabric, PMIx with Open MPI's mpirun as its launcher; the peers
# bench/bandwidth.py compares with (Open MPI's MPI_Allreduce, Gloo, which
# is C++); and stress-ng, the load of tests/run.sh --load.
FTC_BUILD_DEPS="gcc libc6-dev meson ninja-build pkg-config python3 procps \
  libzmq3-dev libucx-dev ucx-utils libfabric-dev libfabric-bin \
  libpmix-dev openmpi-bin libopenmpi-dev g++ libgloo-dev stress-ng"
