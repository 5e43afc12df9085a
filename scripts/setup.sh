#!/usr/bin/env bash
# Installs what building and testing suggest needs on Debian, once: the C libraries' headers, the Redis server
# and tools the tests start a local cluster with, strace (which injects failed system calls in the robustness
# tests), and schemathesis (PyPI), which the server's tests run against it.
# Everything else comes with the Swift toolchain. Safe to run again: it installs only what is missing.
#
#   scripts/setup.sh            build and test dependencies
#   scripts/setup.sh --bench    also what Benchmarks/ uses (wrk, hyperfine, zoxide, curl, perf)
set -euo pipefail

packages=()
[ -f /usr/include/sqlite3.h ] || packages+=(libsqlite3-dev)
[ -f /usr/include/microhttpd.h ] || packages+=(libmicrohttpd-dev)
[ -f /usr/include/hiredis/hiredis.h ] || packages+=(libhiredis-dev)
command -v redis-server >/dev/null 2>&1 || packages+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || packages+=(redis-tools)
command -v setpriv >/dev/null 2>&1 || packages+=(util-linux)
command -v strace >/dev/null 2>&1 || packages+=(strace)
if [ "${1:-}" = "--bench" ]; then
    command -v wrk >/dev/null 2>&1 || packages+=(wrk)
    command -v hyperfine >/dev/null 2>&1 || packages+=(hyperfine)
    command -v zoxide >/dev/null 2>&1 || packages+=(zoxide)
    command -v redis-benchmark >/dev/null 2>&1 || packages+=(redis-tools)
    command -v curl >/dev/null 2>&1 || packages+=(curl)
    command -v perf >/dev/null 2>&1 || packages+=(linux-perf)
fi
if [ ${#packages[@]} -gt 0 ]; then
    echo "setup: installing ${packages[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
if ! command -v schemathesis >/dev/null 2>&1; then
    echo "setup: installing schemathesis (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check schemathesis
    command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
fi
