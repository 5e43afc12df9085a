#!/usr/bin/env bash
# The command line's main figures for this tree and for an earlier revision, side by side in one run:
#
#   Benchmarks/compare-revisions.sh BASE        (BASE: a git revision, e.g. 609ec37)
#
# Builds both in release (BASE in a temporary worktree), generates one seeded history of 1M donations over 100k
# conversations, and for each binary in turn: imports it into a store of its own (twice, alternating, each into a
# fresh store), then times on its own store, A against B in turn (A B A B ..., the ratio pair by pair, so machine
# drift does not skew it): `list`, `list` with a content type and a person, `donate`, `share` with an activation
# rule, and `eval` of the whole history. Last, the in-process benchmarks `apply` and `topk` of each tree's
# suggest-bench. Prints Markdown on standard output, progress on standard error.
#
# Environment:
#   SUGGEST_BENCH_DIR  scratch directory (default /tmp/suggest-compare; about 2 GB)
#   RUNS               timed runs per whole-process command (default 21)
#   KEEP=1             keep the scratch directory
set -euo pipefail

cd "$(dirname "$0")/.."
BASE=${1:?usage: Benchmarks/compare-revisions.sh BASE-REVISION}
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-compare}
RUNS=${RUNS:-21}
note() { printf '%s\n' "$*" >&2; }

. Benchmarks/lib/build.sh
build_new_and_base "$BASE" "$WORK"

HISTORY=$WORK/history.jsonl
note "generating 1M donations over 100k conversations"
"$BENCH" generate --donations 1M --conversations 100k --seed 1 --end "$(date -u +%Y-%m-%dT00:00:00Z)" >"$HISTORY" 2>/dev/null

echo "## $(git rev-parse --short HEAD) (new) against $(git rev-parse --short "$BASE") (old)"
echo
echo "- $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- one history: \`suggest-bench generate --donations 1M --conversations 100k --seed 1\`; each binary its own store"
echo

echo "### suggest import of 1M donations into a new store (two runs each, in turn)"
echo
echo "| run | new: wall, donations/s | old: wall, donations/s |"
echo "|---|---|---|"
for run in 1 2; do
    row="| $run |"
    for side in new old; do
        binary=$NEW
        [ "$side" = old ] && binary=$OLD
        rm -rf "$WORK/store-$side"
        read -r wall _ _ < <("$BENCH" time --tsv -n 1 --warmup 0 -- "$binary" import --store "$WORK/store-$side" --quiet "$HISTORY")
        row="$row $(awk -v s="$wall" 'BEGIN { printf "%.1f s, %d", s, 1000000 / s }') |"
    done
    echo "$row"
done
echo
sync

echo "### Whole processes, new against old in turn ($RUNS runs each)"
echo
echo "| command | new: wall median (min–max) | old: wall median (min–max) | new / old, pair by pair | peak RSS new | peak RSS old |"
echo "|---|---|---|---|---|---|"
compare() {
    local label=$1
    shift
    # "$@" is the command after the binary; {store} stands for each side's store.
    local new_args=() old_args=()
    for word in "$@"; do
        new_args+=("${word//\{store\}/$WORK/store-new}")
        old_args+=("${word//\{store\}/$WORK/store-old}")
    done
    "$BENCH" time -n "$RUNS" --label "$label" --vs "$OLD ${old_args[*]}" --vs-label old -- "$NEW" "${new_args[@]}" |
        awk -F' \\| ' '/^\|/ { printf "| %s | %s | %s | %s | %s | %s\n", substr($1, 3), $2, $4, $5, $6, $7 }'
}
compare "list" list --store {store}
compare "list --content-type public.jpeg --person p-17" list --store {store} --content-type public.jpeg --person p-17
compare "list --json --limit 100" list --store {store} --json --limit 100
compare "donate" donate --store {store} --conversation c-17 --direction outgoing
compare "share (Signal's rule, a photo, the top suggestion)" share --store {store} \
    --extension SampleData/extensions/signal.plist --attachment public.jpeg=beach.jpg --pick 1 --json-output
echo
echo "### suggest eval of the 1M history (one run each, in turn; the policies differ: new 'default' learns)"
echo
echo "| binary | wall | peak RSS |"
echo "|---|---|---|"
for side in new old; do
    binary=$NEW
    [ "$side" = old ] && binary=$OLD
    read -r wall _ peak < <("$BENCH" time --tsv -n 1 --warmup 0 -- "$binary" eval "$HISTORY")
    echo "| $side | $(awk -v s="$wall" 'BEGIN { printf "%.2f s", s }') | $(awk -v b="$peak" 'BEGIN { printf "%.1f MB", b / 1e6 }') |"
done
echo
echo "### In memory: suggest-bench apply and topk of each tree"
echo
for side in new old; do
    echo "#### $side"
    echo
    "$WORK/$side/suggest-bench" apply --runs 3 2>/dev/null || echo "(apply failed)"
    echo
    "$WORK/$side/suggest-bench" topk --queries 300 --brute 3 2>/dev/null || echo "(topk failed)"
    echo
done
