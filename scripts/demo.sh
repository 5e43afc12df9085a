#!/usr/bin/env bash
# The main job on the bundled sample data: installs what is missing, builds suggest, and runs its tour in a
# throwaway store (suggest demo), printing every command it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release --product suggest >&2
exec .build/release/suggest demo "$@"
