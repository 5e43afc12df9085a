#!/usr/bin/env bash
# The Redis Cluster store's figures: import, list and serve against a local 3+3 cluster, beside the SQLite store
# and redis-benchmark on the same machine in the same run.
#
#   Benchmarks/redis-benchmark.sh            (RUNS=5 imports, 60 list runs, 10 s of wrk)
#
# Builds release (`suggest`, `suggest-bench`), starts a cluster with scripts/redis-cluster.sh (appendonly yes,
# appendfsync always, one replica per master: the store WAITs for it), generates seeded histories
# (`suggest-bench generate --seed 1`: 100k donations over 20k conversations, 1M over 100k), then:
#   import: RUNS times `suggest import` of the 100k history into an emptied cluster (FLUSHALL on every master,
#           retention off) and into a new SQLite store; medians of the wall time
#   list:   the 1M history in both stores; `hyperfine -N --runs 60 suggest list --store ...` for each (whole
#           processes, medians)
#   serve:  `suggest serve --store redis://...` and wrk -t1 -c32 -d10s of GET .../suggestions?limit=8, then
#           redis-benchmark -c 32 -n 200000 ZREVRANGE key 0 7 WITHSCORES on one of the cluster's masters
#           (a 100-member sorted set in a slot of its own)
# Prints the figures on standard output; progress on standard error. Needs redis-server, redis-tools, hyperfine,
# wrk, python3 and about 2 GB under SCRATCH (default: a new directory in /tmp, removed at the end unless KEEP=1).
# Every node and server it started is stopped on exit, also on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5}
SCRATCH=${SCRATCH:-$(mktemp -d /tmp/suggest-redis-bench.XXXXXX)}
SERVER_PID=

cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    "$ROOT/scripts/redis-cluster.sh" stop "$SCRATCH/cluster" >/dev/null 2>&1 || true
    [ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH"
}
trap cleanup EXIT

for tool in redis-server redis-cli redis-benchmark hyperfine wrk python3; do
    command -v "$tool" >/dev/null || { echo "redis-benchmark.sh: $tool is not installed" >&2; exit 1; }
done

cd "$ROOT"
echo "building release" >&2
swift build -c release --product suggest >&2
swift build -c release --product suggest-bench >&2
BIN=$(swift build -c release --show-bin-path)
SUGGEST=$BIN/suggest

echo "starting a 3+3 cluster in $SCRATCH/cluster" >&2
SEEDS=$("$ROOT/scripts/redis-cluster.sh" start "$SCRATCH/cluster" 3 1)
URL=redis://$SEEDS

masters() {
    local seed port
    for seed in ${SEEDS//,/ }; do
        port=${seed#*:}
        redis-cli -p "$port" role | head -1 | grep -q master && echo "$port"
    done
    return 0
}

empty_cluster() {
    local port
    for port in $(masters); do redis-cli -p "$port" flushall >/dev/null; done
    "$SUGGEST" config --store "$URL" --max-age-days 0 --idle-days 0 >/dev/null
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

"$BIN/suggest-bench" generate --donations 100k --conversations 20k --seed 1 >"$SCRATCH/h100k.jsonl" 2>/dev/null
"$BIN/suggest-bench" generate --donations 1M --conversations 100k --seed 1 >"$SCRATCH/h1m.jsonl" 2>/dev/null

echo "import: $RUNS runs of 100k donations in each store" >&2
: >"$SCRATCH/import-redis" && : >"$SCRATCH/import-sqlite"
for _ in $(seq "$RUNS"); do
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

echo "list: the 1M history in both stores" >&2
empty_cluster
"$SUGGEST" import --quiet --store "$URL" "$SCRATCH/h1m.jsonl"
mkdir -p "$SCRATCH/s1m"
"$SUGGEST" config --store "$SCRATCH/s1m" --max-age-days 0 --idle-days 0 >/dev/null
"$SUGGEST" import --quiet --store "$SCRATCH/s1m" "$SCRATCH/h1m.jsonl"
hyperfine -N --warmup 5 --runs 60 --export-json "$SCRATCH/list.json" \
    "$SUGGEST list --store $SCRATCH/s1m" "$SUGGEST list --store $URL" >/dev/null 2>&1
python3 - "$SCRATCH/list.json" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
sqlite, redis = (r["median"] * 1000 for r in results)
print(f"list 1M: sqlite median {sqlite:.2f} ms, redis median {redis:.2f} ms ({redis / sqlite:.2f}x)")
EOF

echo "serve: wrk against suggest serve on the cluster, then redis-benchmark" >&2
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$SUGGEST" serve --store "$URL" --port "$PORT" --no-access-log >"$SCRATCH/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$PORT/v1/accounts/default/suggestions?limit=8" >/dev/null 2>&1 && break
    sleep 0.1
done
sleep 2
wrk -t1 -c32 -d10s "http://127.0.0.1:$PORT/v1/accounts/default/suggestions?limit=8" >"$SCRATCH/wrk.txt"
kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=
port=$(masters | head -1)
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
redis-benchmark -p "$port" -c 32 -n 200000 -q ZREVRANGE "$slotkey" 0 7 WITHSCORES >"$SCRATCH/redis-benchmark.txt" 2>&1
serve=$(awk '/Requests\/sec/ { print $2 }' "$SCRATCH/wrk.txt")
redis=$(tr '\r' '\n' <"$SCRATCH/redis-benchmark.txt" | awk '/requests per second/ { v = $(NF - 4) } END { print v }')
echo "serve: suggest serve on the cluster ${serve} requests/s; redis-benchmark ZREVRANGE ${redis} requests/s" \
    "($(python3 -c "print(round($serve / $redis, 3))")x; target 0.25x)"
