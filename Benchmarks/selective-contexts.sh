#!/usr/bin/env bash
# What a context costs beside a plain `suggest list`, on a wide, even history, as whole processes.
#
# A context that admits few conversations (a service nobody uses) or lifts some (a content kind being shared)
# must not make the top-K walk meet most of the history. Zipf histories hide that: a few conversations lead by
# far, so the walk stops early whatever the context. Here every conversation is about as busy as every other:
# 500,000 donations spread evenly over 60 days and 20,000 conversations (`--zipf 0 --hot-share 0`), ranked an
# hour after the last one (the latest exchanges still lead) and a day after it (the share sheet opened the next
# morning: every score has faded to about the same, and a loose bound meets most of the history).
#
# Each context is timed against the plain list in turn (A B A B ...), and the ratio is taken pair by pair, so
# machine drift does not skew it. With BASE=<git revision>, the same table is measured for that revision too
# (built in a temporary worktree, its own store imported from the same file), for the figures before a change.
#
# Environment:
#   SUGGEST_BENCH_DIR  scratch directory (default /tmp/suggest-selective-bench; about 1 GB)
#   RUNS               timed runs per command (default 21, after 2 warm-up runs)
#   BASE               a git revision to measure beside this tree (optional)
#   KEEP=1             keep the scratch directory
set -euo pipefail

cd "$(dirname "$0")/.."
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-selective-bench}
RUNS=${RUNS:-21}
KEEP=${KEEP:-0}
note() { printf '%s\n' "$*" >&2; }

mkdir -p "$WORK"
cleanup() {
    if [ -n "${BASE:-}" ] && [ -d "$WORK/base-tree" ]; then git worktree remove --force "$WORK/base-tree" || true; fi
    if [ "$KEEP" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

note "building suggest and suggest-bench (release)"
swift build -c release --product suggest >&2
swift build -c release --product suggest-bench >&2
BIN=$(swift build -c release --show-bin-path)
BENCH=$BIN/suggest-bench
install -D -m 755 "$BIN/suggest" "$WORK/bin/suggest"

END=$(date -u +%Y-%m-%dT00:00:00Z)
MOMENTS=("$(date -u -d "$END + 1 hour" +%Y-%m-%dT%H:%M:%SZ)" "$(date -u -d "$END + 1 day" +%Y-%m-%dT%H:%M:%SZ)")
HISTORY=$WORK/wide.jsonl
note "generating the wide history (500k donations, 20k conversations, 60 days to $END)"
"$BENCH" generate --donations 500k --conversations 20k --seed 1 --span-days 60 --zipf 0 --hot-share 0 \
    --end "$END" >"$HISTORY"

# 32 content types, the most a context may name: 29 that nothing in the history carries and three that much does.
MANY_TYPES=()
for i in $(seq 1 29); do MANY_TYPES+=(--content-type "com.example.kind$i"); done
MANY_TYPES+=(--content-type public.jpeg --content-type public.url --content-type com.adobe.pdf)
EXCLUDED=()
for i in $(seq 0 99); do EXCLUDED+=(--exclude "c-$i"); done

# label | arguments after `suggest list --store STORE --at AT`
CASES=(
    "--service nomatch (no conversation)|--service nomatch"
    "--service sms (a tenth of them)|--service sms"
    "--content-type public.jpeg|--content-type public.jpeg"
    "--content-type com.adobe.pdf (rare)|--content-type com.adobe.pdf"
    "--content-type public.data (every kind)|--content-type public.data"
    "32 content types|${MANY_TYPES[*]}"
    "--content-type public.jpeg --service sms|--content-type public.jpeg --service sms"
    "--person p-17 --person p-4242|--person p-17 --person p-4242"
    "100 --exclude|${EXCLUDED[*]}"
)

measure() {
    local suggest=$1 store=$2 at
    for at in "${MOMENTS[@]}"; do
        echo "Ranked at $at:"
        echo
        echo "| context | context: wall median (min–max) | plain list: wall median (min–max) | context / plain, pair by pair |"
        echo "|---|---|---|---|"
        "$BENCH" time -n "$RUNS" --tsv -- "$suggest" list --store "$store" --at "$at" >/dev/null # warm the cache
        for entry in "${CASES[@]}"; do
            local label=${entry%%|*} arguments=${entry#*|}
            # shellcheck disable=SC2086 # the arguments are words without spaces
            "$BENCH" time -n "$RUNS" --label "$label" --vs "$suggest list --store $store --at $at" --vs-label "plain" \
                -- "$suggest" list --store "$store" --at "$at" $arguments |
                awk -F' \\| ' '/^\|/ { printf "| %s | %s | %s | %s |\n", substr($1, 3), $2, $4, $5 }'
        done
        echo
    done
}

echo "## Contexts beside a plain list: 500,000 donations, 20,000 conversations, 60 even days"
echo
echo "- $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- the last donation at $END; $RUNS runs after 2 warm-up runs; whole processes"
echo
note "importing into this tree's store"
"$WORK/bin/suggest" import --store "$WORK/store" --quiet "$HISTORY" >&2
echo "### $(git rev-parse --short HEAD) (this tree)"
echo
measure "$WORK/bin/suggest" "$WORK/store"

if [ -n "${BASE:-}" ]; then
    note "building $BASE in a temporary worktree"
    git worktree add --force --detach "$WORK/base-tree" "$BASE" >&2
    (cd "$WORK/base-tree" && swift build -c release --product suggest >&2)
    install -D -m 755 "$(cd "$WORK/base-tree" && swift build -c release --show-bin-path)/suggest" "$WORK/bin/suggest-base"
    "$WORK/bin/suggest-base" import --store "$WORK/store-base" --quiet "$HISTORY" >&2
    echo "### $(git rev-parse --short "$BASE") (BASE)"
    echo
    measure "$WORK/bin/suggest-base" "$WORK/store-base"
fi
