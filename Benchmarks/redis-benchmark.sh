#!/usr/bin/env bash
# The Redis Cluster store's figures: import, list and serve against a local 3+3 cluster, beside the SQLite store
# and redis-benchmark on the same machine in the same run.
#
#   Benchmarks/redis-benchmark.sh            (RUNS=5 imports, LIST_RUNS=60 list runs, 10 s of wrk)
#   BASE=1ab0f88 Benchmarks/redis-benchmark.sh   (the same, and list and serve of BASE's build in turn)
#
# Builds release (`suggest`, `suggest-serve`, `suggest-bench`; with BASE, BASE's `suggest` and `suggest-serve` too,
# in a temporary worktree), starts a cluster with scripts/redis-cluster.sh (appendonly yes, appendfsync always,
# one replica per master: the store WAITs for it), generates a seeded history (`suggest-bench generate --seed 1`:
# 100k donations over 20k conversations, one account), then:
#   import: RUNS times `suggest import` of the history into an emptied cluster (FLUSHALL on every master,
#           retention off) and into a new SQLite store; medians of the wall time; with BASE, BASE's import into
#           the emptied cluster before each of this tree's, in turn
#   list:   `suggest list` of that history as whole processes, the cluster against the SQLite store in turn
#           (`suggest-bench time --vs`: medians, the ratio pair by pair); with BASE, this tree's build against
#           BASE's on the same cluster, in turn
#   serve:  `suggest serve --store redis://...` and wrk -t1 -c32 -d10s of GET .../suggestions?limit=8 (with BASE,
#           BASE's server and this tree's in turn, twice each), then SERVE_ROUNDS times (default 3) this tree's
#           server and redis-benchmark -c 32 -n 200000 ZREVRANGE key 0 7 WITHSCORES on one of the cluster's masters
#           (a 100-member sorted set in a slot of its own) in turn: each pair's ratio, and their median
# Prints the figures on standard output; progress on standard error. Needs redis-server, redis-tools, wrk,
# python3, curl and about 1 GB under SCRATCH (default: a new directory in /tmp, removed at the end unless KEEP=1).
# Every node, server and worktree it started is stopped or removed on exit, also on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5}
LIST_RUNS=${LIST_RUNS:-60}
SERVE_ROUNDS=${SERVE_ROUNDS:-3}
BASE=${BASE:-}
SCRATCH=${SCRATCH:-$(mktemp -d /tmp/suggest-redis-bench.XXXXXX)}
SERVER_PID=

cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    "$ROOT/scripts/redis-cluster.sh" stop "$SCRATCH/cluster" >/dev/null 2>&1 || true
    if [ -d "$SCRATCH/base-tree" ]; then git -C "$ROOT" worktree remove --force "$SCRATCH/base-tree" >/dev/null 2>&1 || true; fi
    [ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH"
}
trap cleanup EXIT

for tool in redis-server redis-cli redis-benchmark wrk python3 curl; do
    command -v "$tool" >/dev/null || { echo "redis-benchmark.sh: $tool is not installed; scripts/setup.sh --bench installs it" >&2; exit 1; }
done

cd "$ROOT"
echo "building release" >&2
# `suggest serve` runs the suggest-serve beside it: built here too, so that it is this tree's.
swift build -c release --product suggest >&2
swift build -c release --product suggest-serve >&2
swift build -c release --product suggest-bench >&2
BIN=$(swift build -c release --show-bin-path)
# Both builds are timed from copies written now: the same executable ran 10-20% slower (CPU too) from a file
# written half an hour before than from a fresh copy of it, a page-cache effect larger than what is compared.
install -D -m 755 "$BIN/suggest" "$SCRATCH/new/suggest"
install -D -m 755 "$BIN/suggest-serve" "$SCRATCH/new/suggest-serve"
SUGGEST=$SCRATCH/new/suggest
BENCH=$BIN/suggest-bench
OLD=
if [ -n "$BASE" ]; then
    echo "building $BASE" >&2
    git worktree add --force --detach "$SCRATCH/base-tree" "$BASE" >/dev/null 2>&1
    (cd "$SCRATCH/base-tree" && swift build -c release --product suggest >&2 &&
        swift build -c release --product suggest-serve >&2)
    base_bin=$(cd "$SCRATCH/base-tree" && swift build -c release --show-bin-path)
    install -D -m 755 "$base_bin/suggest" "$SCRATCH/old/suggest"
    install -D -m 755 "$base_bin/suggest-serve" "$SCRATCH/old/suggest-serve"
    OLD=$SCRATCH/old/suggest
fi

echo "starting a 3+3 cluster in $SCRATCH/cluster" >&2
SEEDS=$("$ROOT/scripts/redis-cluster.sh" start "$SCRATCH/cluster" 3 1)
URL=redis://$SEEDS

masters() {
    local seed port
    for seed in ${SEEDS//,/ }; do
        port=${seed#*:}
        # No grep -q or head in a pipe here: with pipefail, the writer's SIGPIPE would end the script.
        [ "$(redis-cli -p "$port" role | awk 'NR == 1')" = master ] && echo "$port"
    done
    return 0
}

empty_cluster() {
    local port
    for port in $(masters); do redis-cli -p "$port" flushall >/dev/null; done
    "$SUGGEST" config --store "$URL" --max-age-days 0 --idle-days 0 >/dev/null
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

"$BENCH" generate --donations 100k --conversations 20k --seed 1 >"$SCRATCH/h100k.jsonl" 2>/dev/null

echo "import: $RUNS runs of 100k donations in each store${OLD:+, and into the cluster by the build of $BASE in turn}" >&2
: >"$SCRATCH/import-redis" && : >"$SCRATCH/import-sqlite" && : >"$SCRATCH/import-base"
for _ in $(seq "$RUNS"); do
    if [ -n "$OLD" ]; then
        empty_cluster
        /usr/bin/time -f %e -a -o "$SCRATCH/import-base" "$OLD" import --quiet --store "$URL" "$SCRATCH/h100k.jsonl"
    fi
    empty_cluster
    /usr/bin/time -f %e -a -o "$SCRATCH/import-redis" "$SUGGEST" import --quiet --store "$URL" "$SCRATCH/h100k.jsonl"
    rm -rf "$SCRATCH/s100k" && mkdir "$SCRATCH/s100k"
    "$SUGGEST" config --store "$SCRATCH/s100k" --max-age-days 0 --idle-days 0 >/dev/null
    /usr/bin/time -f %e -a -o "$SCRATCH/import-sqlite" "$SUGGEST" import --quiet --store "$SCRATCH/s100k" \
        "$SCRATCH/h100k.jsonl"
done
redis_import=$(median <"$SCRATCH/import-redis")
sqlite_import=$(median <"$SCRATCH/import-sqlite")
echo "import 100k: redis median ${redis_import} s ($(python3 -c "print(round(100000 / $redis_import))")/s)," \
    "sqlite median ${sqlite_import} s ($(python3 -c "print(round(100000 / $sqlite_import))")/s)"
echo "import 100k runs: redis $(tr '\n' ' ' <"$SCRATCH/import-redis"); sqlite $(tr '\n' ' ' <"$SCRATCH/import-sqlite")"
if [ -n "$OLD" ]; then
    base_import=$(median <"$SCRATCH/import-base")
    echo "import 100k into the cluster by $BASE, in turn: median ${base_import} s" \
        "($(python3 -c "print(round(100000 / $base_import))")/s; runs $(tr '\n' ' ' <"$SCRATCH/import-base"));" \
        "new/old time $(python3 -c "print(round($redis_import / $base_import, 3))")"
fi

# The last import's stores hold the history: the cluster and $SCRATCH/s100k.
echo "list: the 100k history, whole processes, in turn" >&2
echo "list 100k, $LIST_RUNS runs each in turn (| A | A wall | B | B wall | A/B pair by pair | peak A | peak B |):"
"$BENCH" time -n "$LIST_RUNS" --warmup 5 --label "redis $(git rev-parse --short HEAD)" \
    --vs "$SUGGEST list --store $SCRATCH/s100k" --vs-label sqlite -- "$SUGGEST" list --store "$URL"
if [ -n "$OLD" ]; then
    "$BENCH" time -n "$LIST_RUNS" --warmup 5 --label "redis $(git rev-parse --short HEAD)" \
        --vs "$OLD list --store $URL" --vs-label "redis $BASE" -- "$SUGGEST" list --store "$URL"
    "$BENCH" time -n "$LIST_RUNS" --warmup 5 --label "redis $BASE" \
        --vs "$SUGGEST list --store $SCRATCH/s100k" --vs-label sqlite -- "$OLD" list --store "$URL"
fi

echo "serve: wrk against suggest serve on the cluster, then redis-benchmark" >&2
# RATE: GET requests per second of one server binary (started, warmed up, 10 s of wrk, stopped). Called in this
# shell, not in $(...), so that the trap sees SERVER_PID and stops the server if anything fails.
serve_rate() {
    local binary=$1 port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$binary" serve --store "$URL" --port "$port" --no-access-log >"$SCRATCH/serve.log" 2>&1 &
    SERVER_PID=$!
    local up=0
    for _ in $(seq 200); do
        if curl -sf "http://127.0.0.1:$port/v1/accounts/default/suggestions?limit=8" >/dev/null 2>&1; then
            up=1
            break
        fi
        sleep 0.1
    done
    [ $up = 1 ] || { echo "redis-benchmark.sh: $binary serve did not answer within 20 s:" >&2; cat "$SCRATCH/serve.log" >&2; exit 1; }
    # Enough queries for a server with a ranking mirror to read the account, and time for its next checkpoint
    # to do it, so that wrk measures the steady state.
    for _ in $(seq 8); do curl -sf "http://127.0.0.1:$port/v1/accounts/default/suggestions?limit=8" >/dev/null; done
    sleep 2
    wrk -t1 -c32 -d10s "http://127.0.0.1:$port/v1/accounts/default/suggestions?limit=8" >"$SCRATCH/wrk.txt"
    # Where the queries were answered (a server without a mirror prints nothing here).
    curl -sf "http://127.0.0.1:$port/metrics" | grep '^suggest_ranking_mirror_queries_total' | tr '\n' ' ' >&2 || true
    echo >&2
    kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
    RATE=$(awk '/Requests\/sec/ { print $2 }' "$SCRATCH/wrk.txt")
}
if [ -n "$OLD" ]; then
    for round in 1 2; do
        serve_rate "$OLD"
        old_rate=$RATE
        serve_rate "$SUGGEST"
        echo "serve round $round: $BASE $old_rate requests/s, $(git rev-parse --short HEAD) $RATE requests/s"
    done
fi
port=$(masters | awk 'NR == 1')
members=()
for i in $(seq 100); do members+=("$i" "m$i"); done
# A key this master serves (redis-benchmark follows no redirection): the first tag whose ZADD it accepts.
slotkey=
for i in $(seq 1000); do
    if [ "$(redis-cli -p "$port" zadd "bench{$i}" "${members[@]}" 2>&1)" = 100 ]; then
        slotkey="bench{$i}"
        break
    fi
done
[ -n "$slotkey" ] || { echo "redis-benchmark.sh: found no key of master $port" >&2; exit 1; }
# The server and redis-benchmark in turn, SERVE_ROUNDS times: the ratio of each pair, then their median.
ratios=()
for round in $(seq "$SERVE_ROUNDS"); do
    serve_rate "$SUGGEST"
    serve=$RATE
    redis-benchmark -p "$port" -c 32 -n 200000 -q ZREVRANGE "$slotkey" 0 7 WITHSCORES >"$SCRATCH/redis-benchmark.txt" 2>&1
    # The number before "requests per second" (redis-benchmark 7 appends p50=...; earlier ones end there).
    redis=$(tr '\r' '\n' <"$SCRATCH/redis-benchmark.txt" |
        awk '/requests per second/ { for (i = 2; i <= NF; i++) if ($i == "requests" && $(i + 1) == "per") v = $(i - 1) } END { print v }')
    ratio=$(python3 -c "print(round($serve / $redis, 3))")
    ratios+=("$ratio")
    echo "serve round $round: suggest serve on the cluster ${serve} requests/s; redis-benchmark ZREVRANGE ${redis} requests/s (${ratio}x)"
done
echo "serve: the median of $SERVE_ROUNDS ratios $(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ x[NR] = $1 } END { print (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2) }')x of redis-benchmark (target 0.25x)"
