#!/usr/bin/env bash
# The tests, from a clean clone: installs what is missing (scripts/setup.sh), builds everything as users are told
# to (release, warnings are errors), and runs every test. The tests start their own servers (a Redis Cluster of 3
# masters and 3 replicas, suggest serve) on free loopback ports, and stop them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift --version
# The build users install: suggest as one static executable, suggest-serve beside it.
swift build -c release
swift test "$@"
