#!/usr/bin/env bash
# `suggest serve` of this tree against an earlier revision's, side by side in one run:
#
#   Benchmarks/serve-compare.sh BASE        (BASE: a git revision, e.g. 1ab0f88)
#
# Builds both in release (BASE in a temporary worktree) and imports one seeded history of 1M donations over 100k
# conversations. Then, ROUNDS times, for each build in turn (old, new, old, new, ...), each run on a server of its
# own (`suggest serve --workers WORKERS`) started on a fresh copy of that store and stopped by SIGTERM (exit 0
# checked):
#   get     `GET .../suggestions?limit=8` from 32 connections, after 8 queries and a 2 s warm-up have put the account in
#           the server's ranking mirror;
#   single  single-donation POSTs (`application/json`) from 8 connections;
#   batch   JSON Lines POSTs of 1,000 donations from 4 connections;
#   uniform the same, their conversations drawn uniformly (each batch touches about 1,000 of them);
#   mixed   the `get` query from 8 connections while 2 connections POST JSON Lines bodies of 1,000 donations (started
#           a second before, ending a second after): how reads fare while writes take the store
#   CxB     (e.g. 32x1000) JSON Lines bodies of B donations from C connections, the rate being what the server's
#           `suggest_donations_recorded_total` grew by between its first and its last change within SHAPE_SECONDS
#           after 3 s of warm-up (read every 0.2 s): the requests in flight commit together, so the count moves in
#           steps of up to C x B donations, too coarse for wrk's count of answers or for a count over a fixed span
#           (a step of 64,000 is 3,600/s of an 18 s run); the CPU a donation is over the fixed span
# (Benchmarks/serve-wrk/donations.lua: conversations drawn by a Zipf law, identifiers never repeated). Reports, for
# each run, what was answered per second (requests for `get`, donations acknowledged otherwise), the p50 and p99
# (wrk's for the GETs; for the donations the server's own, as upper bounds of its histogram: serve-latency.sh),
# the server's CPU time (user + system, from /proc) per request or donation (for `mixed`: the GETs, and the
# CPU of both per GET), and the server's peak resident memory (VmHWM) when the run ends; then the medians and the
# new/old ratios of the medians. Markdown on standard output, progress on standard error.
#
# Environment:
#   SUGGEST_BENCH_DIR  scratch directory (default /tmp/suggest-serve-compare; about 1.5 GB)
#   ROUNDS             rounds (default 5)
#   SECONDS_PER_RUN    seconds of each wrk run (default 6)
#   SHAPE_SECONDS      seconds a CxB shape is counted for (default 18)
#   WORKERS            the server's --workers (default 2)
#   SINGLE_CONNECTIONS wrk's connections for the single-donation POSTs (default 8)
#   FORMS              which runs, of "get single batch uniform mixed" and CxB shapes (default "get single batch mixed")
#   KEEP=1             keep the scratch directory
set -euo pipefail

cd "$(dirname "$0")/.."
BASE=${1:?usage: Benchmarks/serve-compare.sh BASE-REVISION}
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-serve-compare}
ROUNDS=${ROUNDS:-5}
RUN_SECONDS=${SECONDS_PER_RUN:-6}
SHAPE_SECONDS=${SHAPE_SECONDS:-18}
WORKERS=${WORKERS:-2}
SINGLE_CONNECTIONS=${SINGLE_CONNECTIONS:-8}
FORMS=${FORMS:-get single batch mixed}
KEEP=${KEEP:-0}
LUA=$PWD/Benchmarks/serve-wrk/donations.lua
REPORT=$PWD/Benchmarks/serve-wrk/report.lua
# shellcheck source=Benchmarks/serve-latency.sh
. "$PWD/Benchmarks/serve-latency.sh"
note() { printf '%s\n' "$*" >&2; }
command -v wrk >/dev/null || { note "wrk is missing: scripts/setup.sh --bench installs it"; exit 1; }

mkdir -p "$WORK"
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; fi
    if [ -d "$WORK/base-tree" ]; then git worktree remove --force "$WORK/base-tree" >/dev/null 2>&1 || true; fi
    if [ "$KEEP" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

build() {
    local tree=$1 out=$2
    (cd "$tree" && swift build -c release >&2)
    local bin
    bin=$(cd "$tree" && swift build -c release --show-bin-path)
    mkdir -p "$out"
    install -m 755 "$bin/suggest" "$bin/suggest-serve" "$out/"
}
note "building this tree"
build . "$WORK/new"
install -m 755 "$(swift build -c release --show-bin-path)/suggest-bench" "$WORK/suggest-bench"
note "building $BASE"
git worktree add --force --detach "$WORK/base-tree" "$BASE" >/dev/null 2>&1
build "$WORK/base-tree" "$WORK/old"

STORE=$WORK/store
# Written by the old build, so that both can open it: a newer build migrates an older store (on its copy, as the
# server starts), never the reverse.
note "importing 1M donations over 100k conversations"
"$WORK/old/suggest" config --store "$STORE" --max-age-days 0 --idle-days 0 >/dev/null
"$WORK/suggest-bench" generate --donations 1M --conversations 100k --seed 1 2>/dev/null |
    "$WORK/old/suggest" import - --store "$STORE" --quiet >&2
# Each build serves a store it has brought up to date: a newer build's first command migrates an older store and,
# when the policy changed, rebuilds its state, which a server does in background steps for a minute or more while
# every step's commit sends its queries past its ranking mirror (a run of 0.65x the GETs at 541b65d measured that,
# not the server). Done once, untimed, on the new build's own copy.
cp -a "$STORE" "$WORK/store-new"
"$WORK/new/suggest" list --store "$WORK/store-new" --limit 1 >/dev/null 2>&1
TICKS=$(getconf CLK_TCK)

# One server on a fresh copy of the store, one wrk run against it: prints "rate p50_us p99_us cpu_us peak_kb
# refused", the rate, the CPU per request (get) or per acknowledged donation (the other forms), the server's peak
# RSS, and the requests it refused (CxB shapes only; any refusal ends the other forms).
measure() {
    local build=$1 form=$2 copy=$WORK/copy log=$WORK/server.log source=$STORE refused=0 rate=
    [ "$build" = new ] && source=$WORK/store-new
    rm -rf "$copy"
    cp -a "$source" "$copy"
    sync
    "$WORK/$build/suggest-serve" serve --port 0 --store "$copy" --no-access-log --workers "$WORKERS" >"$log" 2>&1 &
    SERVER_PID=$!
    local url=
    # Up to 60 s: a store of an older schema is migrated first.
    for _ in $(seq 600); do
        url=$(grep -o 'http://[0-9.:]*' "$log" | head -1 || true)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { note "the $build server did not start: $(cat "$log")"; exit 1; }
    local before after result
    if [ "$form" = get ] || [ "$form" = mixed ]; then
        local query="$url/v1/accounts/default/suggestions?limit=8" readers=32 writer=
        for _ in $(seq 8); do curl -fs "$query" >/dev/null; done
        sleep 2  # the mirror is rebuilt by the server's task every second
        wrk -t1 -c32 -d2s "$query" >/dev/null
        if [ "$form" = mixed ]; then
            readers=8
            wrk -t1 -c2 -d"$((RUN_SECONDS + 2))s" -s "$LUA" "$url/v1/accounts/default/donations" \
                -- "cmp-$build-$form-$RANDOM$RANDOM" batch 1000 zipf >"$WORK/writer.out" 2>&1 &
            writer=$!
            sleep 1
        fi
        before=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
        result=$(wrk -t1 -c"$readers" -d"${RUN_SECONDS}s" --latency -s "$REPORT" "$query" 2>&1 | grep '^wrk-result' || true)
        after=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
        if [ -n "$writer" ]; then
            wait "$writer"
            grep -q 'non2xx=0 ' "$WORK/writer.out" || { note "the $build server refused batches: $(cat "$WORK/writer.out")"; exit 1; }
        fi
    elif [[ "$form" =~ ^([0-9]+)x([0-9]+)$ ]]; then
        local connections=${BASH_REMATCH[1]} body=${BASH_REMATCH[2]} route=/v1/accounts/{account}/donations histogram
        local first last loader
        histogram=$(route_histogram "$url" "$route")
        wrk -t1 -c"$connections" -d"$((SHAPE_SECONDS + 5))s" --timeout 60s -s "$LUA" "$url/v1/accounts/default/donations" \
            -- "cmp-$build-$form-$RANDOM$RANDOM" batch "$body" zipf >"$WORK/loader.out" 2>&1 &
        loader=$!
        sleep 3
        local changes
        before=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
        changes=$(counter_changes "$url" "$SHAPE_SECONDS")
        after=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
        first=$(head -n1 <<<"$changes" | cut -d' ' -f2)
        last=$(tail -n1 <<<"$changes" | cut -d' ' -f2)
        rate=$(step_rate <<<"$changes")
        wait "$loader"
        # Requests the server turned away (503 `busy` when the bodies held at once would pass --max-body-memory)
        # are counted, not fatal: how many a shape gets is part of what it measures.
        refused=$(grep -o 'non2xx=[0-9]*' "$WORK/loader.out" | cut -d= -f2)
        grep -q 'socket_errors=0 ' "$WORK/loader.out" || { note "the $build server dropped connections: $(cat "$WORK/loader.out")"; exit 1; }
        result="recorded=$((last - first)) non2xx=0 $(server_quantiles "$histogram" "$(route_histogram "$url" "$route")" | sed 's/server_//g')"
    else
        local connections=$SINGLE_CONNECTIONS args=(single 1 zipf)
        if [ "$form" = batch ]; then connections=4; args=(batch 1000 zipf); fi
        if [ "$form" = uniform ]; then connections=4; args=(batch 1000 uniform); fi
        local route=/v1/accounts/{account}/donations histogram
        histogram=$(route_histogram "$url" "$route")
        before=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
        result=$(wrk -t1 -c"$connections" -d"${RUN_SECONDS}s" --latency -s "$LUA" "$url/v1/accounts/default/donations" \
            -- "cmp-$build-$form-$RANDOM$RANDOM" "${args[@]}" 2>&1 | grep '^wrk-result' || true)
        after=$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat")
        # The donations' latencies as the server timed them (serve-latency.sh says why not wrk's).
        result="$result $(server_quantiles "$histogram" "$(route_histogram "$url" "$route")" | sed 's/server_//g')"
    fi
    [ -n "$result" ] || { note "wrk printed no result against the $build server ($form)"; exit 1; }
    local peak
    peak=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$SERVER_PID/status")
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" || { note "the $build server did not exit 0"; exit 1; }
    SERVER_PID=
    local recorded non2xx p50 p99
    if [ "$form" = get ] || [ "$form" = mixed ]; then
        recorded=$(grep -o 'requests=[0-9]*' <<<"$result" | cut -d= -f2)
    else
        recorded=$(grep -o 'recorded=[0-9]*' <<<"$result" | cut -d= -f2)
    fi
    non2xx=$(grep -o 'non2xx=[0-9]*' <<<"$result" | cut -d= -f2)
    [ "$non2xx" = 0 ] || { note "the $build server answered $non2xx non-2xx"; exit 1; }
    # The last of each: for the donation runs, the server's.
    p50=$(grep -o 'p50_us=-*[0-9]*' <<<"$result" | tail -n1 | cut -d= -f2)
    p99=$(grep -o 'p99_us=-*[0-9]*' <<<"$result" | tail -n1 | cut -d= -f2)
    local seconds=$RUN_SECONDS
    [[ "$form" =~ ^[0-9]+x[0-9]+$ ]] && seconds=$SHAPE_SECONDS
    awk -v n="$recorded" -v s="$seconds" -v a="$before" -v b="$after" -v t="$TICKS" -v p50="$p50" -v p99="$p99" \
        -v peak="$peak" -v refused="$refused" -v rate="$rate" \
        'BEGIN { printf "%d %d %d %d %d %d\n", rate != "" ? rate : n / s, p50, p99, (b - a) / t * 1e6 / (n > 0 ? n : 1), peak, refused }'
}

# The donations the server has acknowledged since it started (its /metrics counter).
recorded_total() {
    curl -fs "$1/metrics" | awk '$1 == "suggest_donations_recorded_total" { print $2 }'
}

# The counter read every 0.2 s for $2 seconds: "time count" for the first reading, each change and the last reading.
counter_changes() {
    local url=$1 end previous= now value
    end=$(awk -v s="$2" -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + s }')
    while :; do
        now=$(date +%s.%N)
        # A reading that failed (the server too busy to answer in time) is skipped.
        value=$(recorded_total "$url" || true)
        [ -n "$value" ] || value=$previous
        if [ -n "$value" ] && [ "$value" != "$previous" ]; then echo "$now $value"; fi
        previous=$value
        if awk -v n="$now" -v e="$end" 'BEGIN { exit !(n >= e) }'; then
            echo "$now $value"
            break
        fi
        sleep 0.2
    done
}

# The rate between the first and the last change of the counter (`counter_changes` on standard input): a group
# commits its requests' donations at once, so a count over a fixed span is off by up to a group (3,555/s of an 18 s
# count at 16 x 4,000), where the time between two commits is known to 0.2 s. Empty when it changed fewer than twice.
step_rate() {
    awk 'NR > 1 && $2 != last { if (!t1) { t1 = $1; c1 = $2 } t2 = $1; c2 = $2 }
         { last = $2 }
         END { if (t2 > t1) printf "%d", (c2 - c1) / (t2 - t1) }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "## suggest serve: $(git rev-parse --short HEAD) (new) against $(git rev-parse --short "$BASE") (old)"
echo
echo "- $(nproc) cores; load at start $(cut -d' ' -f1-3 /proc/loadavg); \`--workers $WORKERS\`, single POSTs from $SINGLE_CONNECTIONS connections; $ROUNDS rounds of ${RUN_SECONDS} s runs, old and new in turn; CxB shapes: the rate between the first and the last commit seen in ${SHAPE_SECONDS} s, the CPU over all of them"
echo "- a fresh copy of one 1M-donation store (100k conversations, written by the old build; the new build's copy brought up to its schema and policy once, untimed) for every run"
echo
echo "| round | form | build | per second | p50 | p99 | server CPU per request (get) or donation | server peak RSS | refused |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
results=$WORK/results
: >"$results"
for round in $(seq "$ROUNDS"); do
    for form in $FORMS; do
        for build in old new; do
            note "round $round: $form, $build"
            # In this shell, not a subshell: the trap must know the server to stop it if anything fails.
            measure "$build" "$form" >"$WORK/measured"
            read -r rate p50 p99 cpu peak refused <"$WORK/measured"
            echo "$form $build $rate $p50 $p99 $cpu $peak" >>"$results"
            echo "| $round | $form | $build | $rate | $(awk -v v="$p50" 'BEGIN { printf "%.1f", v / 1000 }') ms | $(awk -v v="$p99" 'BEGIN { printf "%.1f", v / 1000 }') ms | $cpu µs | $(awk -v v="$peak" 'BEGIN { printf "%.1f", v / 1024 }') MB | $refused |"
        done
    done
done
echo
echo "| form | old per second | new per second | new/old | old CPU each | new CPU each | new/old | old peak RSS | new peak RSS |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for form in $FORMS; do
    old_rate=$(awk -v f="$form" '$1 == f && $2 == "old" { print $3 }' "$results" | median)
    new_rate=$(awk -v f="$form" '$1 == f && $2 == "new" { print $3 }' "$results" | median)
    old_cpu=$(awk -v f="$form" '$1 == f && $2 == "old" { print $6 }' "$results" | median)
    new_cpu=$(awk -v f="$form" '$1 == f && $2 == "new" { print $6 }' "$results" | median)
    old_peak=$(awk -v f="$form" '$1 == f && $2 == "old" { print $7 }' "$results" | median)
    new_peak=$(awk -v f="$form" '$1 == f && $2 == "new" { print $7 }' "$results" | median)
    awk -v f="$form" -v a="$old_rate" -v b="$new_rate" -v c="$old_cpu" -v d="$new_cpu" -v e="$old_peak" -v g="$new_peak" \
        'BEGIN { printf "| %s | %d | %d | %.2f | %d µs | %d µs | %.2f | %.1f MB | %.1f MB |\n", f, a, b, b / a, c, d, d / c, e / 1024, g / 1024 }'
done
