#!/usr/bin/env bash
# The HTTP API of `suggest serve` under load, against redis-benchmark on the same machine in the same run.
#
# Builds release (`swift build -c release`: `suggest` and `suggest-serve`), generates seeded histories of 1M and
# 10M donations over 100k conversations (`suggest-bench generate --seed 1`, straight into `suggest import -`, no
# file), retention off, and copies the 1M store for the donation runs, so that the GET runs always read 1M and 10M.
# Then, ROUNDS times, in this order (so that every configuration and redis see the same stretch of the machine):
#   for each store size and each --workers N:
#     redis-benchmark -c 32 -n REDIS_REQUESTS ZREVRANGE key 0 7 WITHSCORES  (a 100-member sorted set, on a
#         redis-server this script starts on a free loopback port, no persistence)
#     suggest serve --store S --port 0 --no-access-log --workers N, a 2 s warm-up, then
#     wrk -t1 -c32 -d10s --latency  GET /v1/accounts/default/suggestions?limit=8
#                                   GET ...?limit=8&contentType=public.jpeg
#                                   GET ...?limit=8&person=p-17     (p-17: c-17's recipient, in every history)
#                                   GET ...?limit=8&exclude=fresh-N  (a new context each request: nothing kept
#                                                                     answers it; Benchmarks/serve-wrk/fresh.lua)
#     the server's peak RSS (VmHWM) after those three runs; the server stopped (SIGTERM, exit 0 checked)
#   for each --workers N, on the copy of the 1M store:
#     wrk -t1 -c4 POSTs of JSON Lines bodies of BATCH donations (application/x-ndjson), their conversations drawn
#         by the generator's Zipf law, then again drawn uniformly (the worst case: every donation another block)
#     wrk -t1 -c8 POSTs of one donation each (application/json), Zipf
#     the server's peak RSS (VmHWM) after those three runs
#     every donation with an identifier no other request uses (Benchmarks/serve-wrk/donations.lua); their p50
#     and p99 from the server's own latency histogram (`/metrics`, read before and after), not from wrk
#   the copy's donations counted (`suggest export | wc -l`): the growth must be at least what the server
#   acknowledged (201, "recorded" summed) and at most that plus the requests in flight when wrk stopped.
# Last, with PROFILE=1, perf on the server (--workers PROFILE_WORKERS): `perf record -g` during a plain GET run,
# then `perf record --call-graph dwarf` (which unwinds through Debian's libraries too) during a plain, a
# contentType and a person GET run, the three POST runs; each reported by component (self time), by function,
# and for chosen frames with their children.
#
# Prints Markdown on standard output (medians with min–max over the rounds, ratios pair by pair, RSS, the store
# checks, the profiles); progress goes to standard error. Every wrk line, the perf reports and a TSV of all runs
# are kept in RESULTS. Each wrk run also notes the CPU the server, wrk and the whole machine used (from /proc), so
# that a figure can be read against what else the shared machine was doing.
#
# Needs about 4 GB free under SUGGEST_BENCH_DIR (measured: the 10M store 0.7 GB, the 1M store and its copy 0.2 GB
# each, the copy growing by about 0.2M donations a round, a perf record with dwarf stacks up to 0.3 GB until it is
# reported), about 1.3 GB of memory for the 10M import, python3 (to find a free port for redis-server), and the
# Debian packages wrk, redis-server, redis-tools, curl, and linux-perf for the profiles (installed with apt-get
# when missing and this runs as root). Takes about 5 minutes a round, 3 for the stores and 6 for the profiles
# (ROUNDS=5: 35 minutes). The scratch directory is deleted at the end unless KEEP=1; every server, redis-server
# and perf it started is stopped on exit, also on failure or Ctrl-C.
#
# Environment:
#   SUGGEST_BENCH_DIR  scratch directory (default /tmp/suggest-serve-bench); must allow executables
#   RESULTS            where the raw results go (default $SUGGEST_BENCH_DIR-results; kept)
#   ROUNDS             rounds (default 3)
#   WORKERS            the --workers values to try (default "1 2")
#   SIZES              store sizes in donations (default "1M 10M")
#   CONVERSATIONS      conversations in each history (default 100k; a quick trial: SIZES="20k 40k" CONVERSATIONS=1k)
#   DURATION           each wrk run (default 10s)
#   REDIS_REQUESTS     requests per redis-benchmark run (default 600000, about 10 s at 60k/s)
#   BATCH              donations per JSON Lines body (default 1000)
#   PROFILE=0          skip the perf profile; PROFILE_WORKERS the server's --workers there (default 2)
#   KEEP=1             keep the stores
#
# One run by hand, with the same public tools:
#   suggest serve --store S --port 0 --no-access-log --workers 2     # prints: listening on http://127.0.0.1:PORT
#   wrk -t1 -c32 -d10s --latency 'http://127.0.0.1:PORT/v1/accounts/default/suggestions?limit=8'
#   redis-benchmark -p RPORT -c 32 -n 600000 ZREVRANGE key 0 7 WITHSCORES
#   wrk -t1 -c4 -d10s -s Benchmarks/serve-wrk/donations.lua http://127.0.0.1:PORT/v1/accounts/default/donations -- TAG batch 1000
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-serve-bench}
RESULTS=${RESULTS:-$WORK-results}
ROUNDS=${ROUNDS:-3}
WORKERS=${WORKERS:-"1 2"}
SIZES=${SIZES:-"1M 10M"}
DURATION=${DURATION:-10s}
REDIS_REQUESTS=${REDIS_REQUESTS:-600000}
BATCH=${BATCH:-1000}
BATCH_CONNECTIONS=4
SINGLE_CONNECTIONS=8
PROFILE=${PROFILE:-1}
PROFILE_WORKERS=${PROFILE_WORKERS:-2}
KEEP=${KEEP:-0}
CONVERSATIONS=${CONVERSATIONS:-100k}
SEED=1
PERSON=p-17
LUA=$ROOT/Benchmarks/serve-wrk
# shellcheck source=Benchmarks/serve-latency.sh
. "$ROOT/Benchmarks/serve-latency.sh"

note() { printf '%s\n' "$*" >&2; }
fail() { note "serve-benchmark: $*"; exit 1; }

# --- Tools ------------------------------------------------------------------------------------------------------
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-benchmark >/dev/null && command -v redis-cli >/dev/null || need+=(redis-tools)
command -v curl >/dev/null || need+=(curl)
if [ "$PROFILE" = 1 ] && ! command -v perf >/dev/null; then need+=(linux-perf); fi
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || fail "missing Debian packages: ${need[*]}; install them (apt-get install ${need[*]})"
    note "installing ${need[*]}"
    apt-get install -y "${need[@]}" >&2
fi
# This machine's VM exposes no hardware counters (`perf stat -e instructions true` says <not supported>): the
# profile then samples the kernel's cpu-clock timer instead of cycles.
PERF_EVENT=cycles
if [ "$PROFILE" = 1 ] && ! perf stat -x, -e cycles true 2>&1 >/dev/null | grep -q '^[0-9]'; then PERF_EVENT=cpu-clock; fi

# --- Build ------------------------------------------------------------------------------------------------------
BUILD=(swift build -c release)
note "building: ${BUILD[*]}"
"${BUILD[@]}" >&2
BIN=$("${BUILD[@]}" --show-bin-path)

rm -rf "$WORK"
mkdir -p "$WORK/bin" "$RESULTS/raw"
: >"$RESULTS/runs.tsv"
SERVER_PID=
REDIS_PID=
PERF_PID=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        local status=0
        wait "$SERVER_PID" || status=$?
        SERVER_PID=
        [ "$status" = 0 ] || note "the server exited $status after SIGTERM (expected 0); its stderr: $SERVER_ERR"
    fi
}
cleanup() {
    [ -n "$PERF_PID" ] && kill -INT "$PERF_PID" 2>/dev/null && wait "$PERF_PID" 2>/dev/null
    stop_server
    if [ -n "$REDIS_PID" ]; then kill -TERM "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; fi
    if [ "$KEEP" != 1 ]; then rm -rf "$WORK"; fi
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

available_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
[ "$available_kb" -ge $((4 * 1024 * 1024)) ] ||
    fail "only $((available_kb / 1024)) MB free under $WORK; this needs about 4 GB. Set SUGGEST_BENCH_DIR or SIZES=1M."
# `suggest serve` runs the suggest-serve beside it; both are timed as installed, copied out of the build directory.
for program in suggest suggest-serve suggest-bench; do install -m 755 "$BIN/$program" "$WORK/bin/$program"; done
SUGGEST=$WORK/bin/suggest
BENCH=$WORK/bin/suggest-bench

count() { awk -v t="$1" 'BEGIN {
    n = t; if (t ~ /[kK]$/) n = substr(t, 1, length(t) - 1) * 1000; else if (t ~ /M$/) n = substr(t, 1, length(t) - 1) * 1000000
    print n }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now_ns() { date +%s%N; }

echo "## suggest serve under load"
echo
echo "- $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -h | awk '/^Mem:/ { print $2 }') memory; kernel $(uname -r)"
echo "- $(swift --version 2>/dev/null | head -n1); $(wrk -v 2>&1 | head -n1 | cut -d' ' -f1-2); $(redis-server --version | cut -d' ' -f1-3); libsqlite3 $(dpkg-query -W -f='${Version}' libsqlite3-0 2>/dev/null), libmicrohttpd $(dpkg-query -W -f='${Version}' libmicrohttpd12 2>/dev/null)"
echo "- commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' (with uncommitted changes to Sources)'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $ROUNDS rounds; wrk -t1 -c32 -d$DURATION --latency for GETs; redis-benchmark -c 32 -n $REDIS_REQUESTS; donations: -c$BATCH_CONNECTIONS bodies of $BATCH, -c$SINGLE_CONNECTIONS single"
echo

# --- Stores -----------------------------------------------------------------------------------------------------
echo "### Stores"
echo
echo "| store | import wall | donations/s | on disk |"
echo "|---|---|---|---|"
for size in $SIZES; do
    store=$WORK/store-$size
    "$SUGGEST" config --store "$store" --max-age-days 0 --idle-days 0 >/dev/null
    note "generating and importing $size donations over $CONVERSATIONS conversations (seed $SEED)"
    start=$(now_ns)
    "$BENCH" generate --donations "$size" --conversations "$CONVERSATIONS" --seed "$SEED" 2>/dev/null |
        "$SUGGEST" import - --store "$store" --quiet >&2
    seconds=$(awk -v a="$start" -v b="$(now_ns)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    echo "| $size | $seconds s (generating in the same pipe) | $(awk -v n="$(count "$size")" -v s="$seconds" 'BEGIN { printf "%d", n / s }') | $(du -sh --exclude="*-reserve" "$store" | cut -f1) |"
done
set -- $SIZES
POST_STORE=$WORK/store-post
cp -a "$WORK/store-$1" "$POST_STORE"
post_count=$("$SUGGEST" export --store "$POST_STORE" | wc -l)
echo
echo "Donation runs write to a copy of the $1 store ($post_count donations at the start)."
echo
note "sync: writing back what the imports left dirty"
sync
sleep 3

# --- redis-server and redis-benchmark ---------------------------------------------------------------------------
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --daemonize no \
    --logfile "$WORK/redis.log" &
REDIS_PID=$!
for _ in $(seq 100); do
    redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break
    sleep 0.1
done
members=()
for i in $(seq 1 100); do members+=("$i" "member-$i"); done
redis-cli -p "$REDIS_PORT" ZADD bench:zset "${members[@]}" >/dev/null
[ "$(redis-cli -p "$REDIS_PORT" ZCARD bench:zset)" = 100 ] || fail "redis-server on port $REDIS_PORT did not take the sorted set"

# Machine-wide CPU busy time and a process's CPU time, in clock ticks, for the CPU columns of every run.
TICKS=$(getconf CLK_TCK)
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
process_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# Appends one TSV row: round size workers kind and the measurements as key=value pairs.
record() { printf '%s\n' "$*" | tr ' ' '\t' >>"$RESULTS/runs.tsv"; }

redis_run() { # round size workers
    local out=$RESULTS/raw/redis-r$1-$2-w$3.csv m0 r0 m1 r1
    m0=$(machine_ticks); r0=$(process_ticks "$REDIS_PID")
    redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c 32 -n "$REDIS_REQUESTS" --csv ZREVRANGE bench:zset 0 7 WITHSCORES >"$out"
    m1=$(machine_ticks); r1=$(process_ticks "$REDIS_PID")
    # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    awk -F'"' -v r="$1" -v s="$2" -v w="$3" -v mt="$((m1 - m0))" -v st="$((r1 - r0))" -v hz="$TICKS" -v n="$REDIS_REQUESTS" \
        'NR == 2 { secs = n / $4; printf "round=%s size=%s workers=%s kind=redis rps=%s p50_us=%d p99_us=%d server_cores=%.2f machine_cores=%.2f\n",
            r, s, w, $4, $10 * 1000, $14 * 1000, st / hz / secs, mt / hz / secs }' "$out" | tr ' ' '\t' >>"$RESULTS/runs.tsv"
    note "  redis-benchmark: $(awk -F'"' 'NR == 2 { print $4 "/s, p99 " $14 " ms" }' "$out")"
}

# start_server STORE WORKERS: starts `suggest serve`, reads its port from the `listening on` line.
SERVERS=0
start_server() {
    local start
    start=$(now_ns)
    # A file of its own: the next server's line is not in the last one's file, even before its shell redirects.
    SERVERS=$((SERVERS + 1))
    SERVER_ERR=$RESULTS/raw/server-$SERVERS.err
    rm -f "$SERVER_ERR"
    "$SUGGEST" serve --store "$1" --port 0 --no-access-log --workers "$2" 2>"$SERVER_ERR" &
    SERVER_PID=$!
    PORT=
    for _ in $(seq 1200); do
        [ -f "$SERVER_ERR" ] && PORT=$(sed -n 's|^listening on http://[^ ]*:\([0-9][0-9]*\)$|\1|p' "$SERVER_ERR")
        [ -n "$PORT" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || fail "the server did not start: $(tail -n3 "$SERVER_ERR")"
        sleep 0.1
    done
    [ -n "$PORT" ] || fail "the server printed no 'listening on' line in 120 s: $(tail -n3 "$SERVER_ERR")"
    START_SECONDS=$(awk -v a="$start" -v b="$(now_ns)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    BASE=http://127.0.0.1:$PORT/v1/accounts/default
}
rss_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# wrk_run ROUND SIZE WORKERS KIND CONNECTIONS URL [SCRIPT [ARGS...]]
wrk_run() {
    local round=$1 size=$2 workers=$3 kind=$4 connections=$5 url=$6 script=${7:-$LUA/report.lua}
    shift 7 || shift $#
    local out=$RESULTS/raw/wrk-r$round-$size-w$workers-$kind.txt m0 s0 m1 s1 t0 t1 line
    local args=()
    [ $# -gt 0 ] && args=(-- "$@")
    # POSTs' latencies are read from the server (serve-latency.sh says why).
    local route=/v1/accounts/{account}/donations histogram_before='' server_latency=''
    [ "$size" = post ] && histogram_before=$(route_histogram "http://127.0.0.1:$PORT" "$route")
    m0=$(machine_ticks); s0=$(process_ticks "$SERVER_PID"); t0=$(now_ns)
    # wrk's own CPU time from bash's `times` of a child: user and system seconds.
    local TIMEFORMAT='%U %S'
    { time wrk -t1 -c"$connections" -d"$DURATION" --timeout 30s --latency -s "$script" "$url" "${args[@]}" >"$out" 2>&1 || true; } 2>"$out.time"
    m1=$(machine_ticks); s1=$(process_ticks "$SERVER_PID"); t1=$(now_ns)
    [ "$size" = post ] && server_latency=$(server_quantiles "$histogram_before" "$(route_histogram "http://127.0.0.1:$PORT" "$route")")
    line=$(sed -n 's/^wrk-result //p' "$out")
    [ -n "$line" ] || fail "wrk printed no result for $kind: $(tail -n5 "$out"); the server's stderr: $(tail -n3 "$SERVER_ERR")"
    local secs wrk_cpu
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')
    wrk_cpu=$(awk '{ print $1 + $2 }' "$out.time")
    record "round=$round size=$size workers=$workers kind=$kind $line $server_latency" \
        "$(awk -v s="$((s1 - s0))" -v m="$((m1 - m0))" -v hz="$TICKS" -v secs="$secs" -v w="$wrk_cpu" -v line="$line" 'BEGIN {
            n = split(line, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); v[p[1]] = p[2] }
            per = v["requests"] > 0 ? s / hz * 1e6 / v["requests"] : 0
            printf "server_cores=%.2f wrk_cores=%.2f machine_cores=%.2f server_cpu_us=%.1f", s / hz / secs, w / secs,
                m / hz / secs, per }')"
    note "  $kind: $(printf '%s' "$line" | cut -d' ' -f3,6,8,9)"
}

# Every query answers 8 suggestions with a 200 before it is timed: a benchmark of an error page proves nothing.
check_query() {
    local body
    body=$(curl -sf "$1") || fail "GET $1 failed"
    [ "$(printf '%s' "$body" | grep -o '"rank":' | wc -l)" = 8 ] || fail "GET $1 did not answer 8 suggestions: ${body:0:200}"
}

QUERIES=("plain:limit=8" "contentType:limit=8&contentType=public.jpeg" "person:limit=8&person=$PERSON")
TAG=run$(date +%s)
INFLIGHT_MAX=0
for round in $(seq 1 "$ROUNDS"); do
    note "round $round of $ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    for size in $SIZES; do
        for workers in $WORKERS; do
            redis_run "$round" "$size" "$workers"
            start_server "$WORK/store-$size" "$workers"
            note "  server on $size, --workers $workers: listening after $START_SECONDS s, RSS $(rss_kb "$SERVER_PID" VmRSS) kB"
            record "round=$round size=$size workers=$workers kind=start seconds=$START_SECONDS rss_kb=$(rss_kb "$SERVER_PID" VmRSS)"
            for query in "${QUERIES[@]}"; do check_query "$BASE/suggestions?${query#*:}"; done
            wrk -t1 -c32 -d2s "$BASE/suggestions?limit=8" >/dev/null || fail "the warm-up run failed"
            for query in "${QUERIES[@]}"; do
                wrk_run "$round" "$size" "$workers" "${query%%:*}" 32 "$BASE/suggestions?${query#*:}"
            done
            # The plain query as a new context each time: nothing kept can answer it (serve-wrk/fresh.lua).
            wrk_run "$round" "$size" "$workers" fresh 32 "$BASE/suggestions?limit=8" "$LUA/fresh.lua"
            record "round=$round size=$size workers=$workers kind=rss hwm_kb=$(rss_kb "$SERVER_PID" VmHWM) rss_kb=$(rss_kb "$SERVER_PID" VmRSS)"
            stop_server
        done
    done
    before=$post_count
    for workers in $WORKERS; do
        start_server "$POST_STORE" "$workers"
        wrk_run "$round" post "$workers" batch "$BATCH_CONNECTIONS" "$BASE/donations" "$LUA/donations.lua" \
            "$TAG-r$round-w$workers-b" batch "$BATCH" zipf
        wrk_run "$round" post "$workers" batchUniform "$BATCH_CONNECTIONS" "$BASE/donations" "$LUA/donations.lua" \
            "$TAG-r$round-w$workers-u" batch "$BATCH" uniform
        wrk_run "$round" post "$workers" single "$SINGLE_CONNECTIONS" "$BASE/donations" "$LUA/donations.lua" \
            "$TAG-r$round-w$workers-s" single 1 zipf
        record "round=$round size=post workers=$workers kind=rss hwm_kb=$(rss_kb "$SERVER_PID" VmHWM) rss_kb=$(rss_kb "$SERVER_PID" VmRSS)"
        stop_server
        INFLIGHT_MAX=$((INFLIGHT_MAX + 2 * BATCH_CONNECTIONS * BATCH + SINGLE_CONNECTIONS))
    done
    post_count=$("$SUGGEST" export --store "$POST_STORE" | wc -l)
    record "round=$round size=post workers=all kind=count before=$before after=$post_count"
    note "  the donation store: $before -> $post_count donations"
done

# --- Summary ----------------------------------------------------------------------------------------------------
# field ROW NAME: the value of NAME in a TSV row.
tsv() { awk -F'\t' -v want="$*" 'BEGIN { n = split(want, w, " ") }
    { delete v; for (i = 1; i <= NF; i++) { split($i, p, "="); v[p[1]] = p[2] }
      ok = 1; for (i = 1; i <= n; i++) { split(w[i], q, "="); if (v[q[1]] != q[2]) ok = 0 }
      if (ok) print }' "$RESULTS/runs.tsv"; }
values() { awk -F'\t' -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, p, "="); if (p[1] == k) print p[2] } }'; }
# median (min–max) of numbers on standard input, with FORMAT for each.
stats() { sort -g | awk -v f="${1:-%.0f}" '{ x[NR] = $1 } END {
    if (NR == 0) { print "–"; exit }
    m = NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2
    printf f " (" f "–" f ")\n", m, x[1], x[NR] }'; }
# ratio A B KEY FORMAT: pair by pair over the rounds, A's KEY over B's, as median (min–max).
ratio() { paste <(tsv "$1" | values "$3") <(tsv "$2" | values "$3") | awk '$2 > 0 { print $1 / $2 }' | stats "${4:-%.2f}"; }

echo "### GET /v1/accounts/default/suggestions (wrk -t1 -c32 -d$DURATION), $ROUNDS rounds: median (min–max)"
echo
echo "| store | --workers | query | requests/s | p50 | p99 | non-2xx | server CPU (cores) | wrk CPU | machine busy (of $(nproc)) | server CPU per request |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for size in $SIZES; do for workers in $WORKERS; do
    echo "| $size | $workers | redis-benchmark ZREVRANGE 0 7 WITHSCORES, -c 32 | $(tsv size=$size workers=$workers kind=redis | values rps | stats) | $(tsv size=$size workers=$workers kind=redis | values p50_us | stats '%.0f µs') | $(tsv size=$size workers=$workers kind=redis | values p99_us | stats '%.0f µs') | | $(tsv size=$size workers=$workers kind=redis | values server_cores | stats '%.2f') (redis-server) | | $(tsv size=$size workers=$workers kind=redis | values machine_cores | stats '%.2f') | |"
    for query in "${QUERIES[@]}" "fresh:limit=8&exclude=fresh-N (a new context each request)"; do
        kind=${query%%:*}
        rows() { tsv size=$size workers=$workers kind=$kind | values "$1"; }
        echo "| $size | $workers | \`${query#*:}\` | $(rows rps | stats) | $(rows p50_us | awk '{ print $1 / 1000 }' | stats '%.2f ms') | $(rows p99_us | awk '{ print $1 / 1000 }' | stats '%.2f ms') | $(rows non2xx | stats) | $(rows server_cores | stats '%.2f') | $(rows wrk_cores | stats '%.2f') | $(rows machine_cores | stats '%.2f') | $(rows server_cpu_us | stats '%.1f µs') |"
    done
done; done
echo
echo "### Ratios, pair by pair in each round: median (min–max)"
echo
echo "| store | --workers | plain GET / redis-benchmark (target ≥ 0.5) | a new context each GET / redis-benchmark | plain / contentType requests/s (target ≤ 1.5) | plain / person requests/s (target ≤ 1.5) | contentType p99 / plain p99 | person p99 / plain p99 |"
echo "|---|---|---|---|---|---|---|---|"
for size in $SIZES; do for workers in $WORKERS; do
    k="size=$size workers=$workers"
    echo "| $size | $workers | $(ratio "$k kind=plain" "$k kind=redis" rps) | $(ratio "$k kind=fresh" "$k kind=redis" rps) | $(ratio "$k kind=plain" "$k kind=contentType" rps) | $(ratio "$k kind=plain" "$k kind=person" rps) | $(ratio "$k kind=contentType" "$k kind=plain" p99_us) | $(ratio "$k kind=person" "$k kind=plain" p99_us) |"
done; done
echo
echo "### Server memory: median (min–max) over the rounds"
echo
echo "| store | --workers | start to 'listening on' | RSS after start | peak RSS (VmHWM) after the GET runs | RSS then |"
echo "|---|---|---|---|---|---|"
for size in $SIZES; do for workers in $WORKERS; do
    k="size=$size workers=$workers"
    echo "| $size | $workers | $(tsv $k kind=start | values seconds | stats '%.2f s') | $(tsv $k kind=start | values rss_kb | awk '{ print $1 / 1024 }' | stats '%.1f MB') | $(tsv $k kind=rss | values hwm_kb | awk '{ print $1 / 1024 }' | stats '%.1f MB') | $(tsv $k kind=rss | values rss_kb | awk '{ print $1 / 1024 }' | stats '%.1f MB') |"
done; done
for workers in $WORKERS; do
    k="size=post workers=$workers kind=rss"
    echo "| 1M copy, under the donation runs | $workers | – | – | $(tsv $k | values hwm_kb | awk '{ print $1 / 1024 }' | stats '%.1f MB') (after the donation runs) | $(tsv $k | values rss_kb | awk '{ print $1 / 1024 }' | stats '%.1f MB') |"
done
echo "(MB = 2^20 bytes.)"
echo
echo "### POST /v1/accounts/default/donations: donations acknowledged per second, median (min–max)"
echo
echo "Latencies as the server timed them (\`/metrics\`: the upper bound of the histogram bucket that holds the 50th and the 99th percentile; wrk's own are left out, Benchmarks/serve-latency.sh says why)."
echo
echo "| --workers | form | connections | donations/s (acknowledged) | requests/s | p50 within | p99 within | non-2xx | duplicates | server CPU (cores) | wrk CPU | machine busy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for workers in $WORKERS; do
    for kind in batch batchUniform single; do
        rows() { tsv size=post workers=$workers kind=$kind | values "$1"; }
        connections=$([ $kind = single ] && echo $SINGLE_CONNECTIONS || echo $BATCH_CONNECTIONS)
        case $kind in
        batch) form="JSON Lines, $BATCH a body, Zipf" ;;
        batchUniform) form="JSON Lines, $BATCH a body, uniform" ;;
        *) form="one donation (application/json), Zipf" ;;
        esac
        echo "| $workers | $form | $connections | $(paste <(rows recorded) <(rows seconds) | awk '{ print $1 / $2 }' | stats) | $(rows rps | stats) | $(rows server_p50_us | awk '{ print $1 / 1000 }' | stats '%.2f ms') | $(rows server_p99_us | awk '{ print $1 / 1000 }' | stats '%.2f ms') | $(rows non2xx | stats) | $(rows duplicates | stats) | $(rows server_cores | stats '%.2f') | $(rows wrk_cores | stats '%.2f') | $(rows machine_cores | stats '%.2f') |"
    done
done
echo
echo "### Every acknowledged donation is in the store"
echo
echo "| round | donations before | after | growth | acknowledged (201, \"recorded\" summed) | sent in requests unanswered when wrk stopped (growth − acknowledged; at most $((INFLIGHT_MAX / ROUNDS))) | verdict |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
    before=$(tsv round=$round kind=count | values before)
    after=$(tsv round=$round kind=count | values after)
    acknowledged=$(tsv round=$round size=post | values recorded | awk '{ s += $1 } END { print s + 0 }')
    duplicates=$(tsv round=$round size=post | values duplicates | awk '{ s += $1 } END { print s + 0 }')
    growth=$((after - before))
    extra=$((growth - acknowledged))
    verdict=ok
    if [ "$extra" -lt 0 ] || [ "$extra" -gt $((INFLIGHT_MAX / ROUNDS)) ] || [ "$duplicates" != 0 ]; then verdict="**FAILED** (duplicates $duplicates)"; fi
    echo "| $round | $before | $after | $growth | $acknowledged | $extra | $verdict |"
done
echo

# --- Profile ----------------------------------------------------------------------------------------------------
# Self time by component: the library a sample fell in, and for suggest-serve's own code (the Swift runtime and
# standard library are linked into it) the module or the kind of work its demangled name says.
components() {
    swift demangle | awk -F'\t' '
    function add(c) { share[c] += $1 }
    {
        sub(/%$/, "", $1); dso = $2; sym = $3
        if (dso ~ /kernel/) add("kernel (TCP over loopback, epoll, scheduling, page faults)")
        else if (dso ~ /libmicrohttpd/) add("libmicrohttpd (HTTP parsing, connection handling)")
        else if (dso ~ /libsqlite3/) add("SQLite")
        else if (dso ~ /^(libc|libm|ld-linux)/) {
            if (sym ~ /malloc|free|realloc|calloc|_int_|tcache|arena/) add("libc malloc and free")
            else if (sym ~ /mem(cpy|move|set|cmp)|str/) add("libc memcpy, memcmp, string functions")
            else if (sym ~ /pthread|lll_|mutex|futex/) add("libc locks")
            else { add("libc, other"); other[sym] += $1 }
        }
        else if (dso !~ /suggest-serve/) add("other libraries (" dso ")")
        else if (sym ~ /^swift_|^_swift|^swift::|^__swift|[Mm]etadata|witness/) add("Swift runtime (retain/release, allocation, metadata, casts)")
        else if (sym ~ /JSON/) add("JSON (decoding donations, writing responses)")
        else if (sym ~ /TopKRanker|Scorer|RankingIndex|RankingContext|LogSpace|Channel|ConversationState|BoundedRanking|Int64KeyTable/) add("ranking: the top-K walk and scoring")
        else if (sym ~ /SuggestSQLiteStore/) add("the SQLite store, Swift side (statements, blocks, snapshots)")
        else if (sym ~ /SuggestServer/) add("routes, router, metrics (SuggestServer)")
        else if (sym ~ /HTTPServer/) add("HTTP layer, Swift side (HTTPServer)")
        else if (sym ~ /SuggestCore/) add("SuggestCore, other (model, timestamps, interaction decoding)")
        else if (sym ~ /^(\(extension in )?Swift\.|generic specialization|merged |outlined |Swift\./) add("Swift standard library (String, Array, Dictionary, hashing)")
        else add("suggest-serve, other")
    }
    END {
        # The largest of the rest of libc, by name (exp and log1p are the scores arithmetic).
        names = ""
        for (k = 0; k < 3; k++) {
            best = ""; for (o in other) if (best == "" || other[o] > other[best]) best = o
            if (best == "") break
            names = names (names == "" ? "" : ", ") best; delete other[best]
        }
        for (c in share) printf "| %s | %.1f%% |\n", c == "libc, other" ? c " (" names ", ...)" : c, share[c]
    }' | sort -t'|' -k3 -gr
}
# profile_run KIND MODE CONNECTIONS URL [SCRIPT ARGS...]: perf on the running server during one wrk run. MODE fp is
# `perf record -g` (frame pointers); dwarf unwinds from a copy of each sample's stack instead, which also sees
# through libsqlite3, libmicrohttpd and libc (Debian builds them without frame pointers, so with -g the samples
# inside them are not charged to the Swift frames that called them). Self time is the same in both.
profile_run() {
    local kind=$1 mode=$2 connections=$3 url=$4 script=${5:-$LUA/report.lua}
    shift 5 || shift $#
    local args=() graph=(-g) name=$kind-$mode
    [ $# -gt 0 ] && args=(-- "$@")
    [ "$mode" = dwarf ] && graph=(--call-graph dwarf,16384)
    local data=$WORK/perf-$name.data out=$RESULTS/raw/profile-$name.txt
    note "  profiling $kind ($mode)"
    perf record -e "$PERF_EVENT" -F 999 "${graph[@]}" -p "$SERVER_PID" -o "$data" -- sleep "${DURATION%s}" \
        2>"$RESULTS/raw/perf-$name.err" &
    PERF_PID=$!
    sleep 0.3
    wrk -t1 -c"$connections" -d"$DURATION" --timeout 30s --latency -s "$script" "$url" "${args[@]}" >"$out" 2>&1 || true
    wait "$PERF_PID" || true
    PERF_PID=
    local self=$RESULTS/raw/profile-$name-self.txt children=$RESULTS/raw/profile-$name-children.txt
    perf report -i "$data" --stdio --no-children -g none --sort dso,sym -F overhead,dso,sym --field-separator=$'\t' \
        2>/dev/null | swift demangle --simplified >"$self" || true
    perf report -i "$data" --stdio --children -g none --sort sym 2>/dev/null | grep -v '^#' | grep '%' |
        grep -v '\] 0x[0-9a-f]*$' | swift demangle --simplified >"$children" || true
    local samples
    samples=$(sed -n 's/^# Samples: \([0-9.kKM]*\).*/\1/p' "$self" | head -n1 || true)
    echo "#### $kind, perf record $([ "$mode" = dwarf ] && echo '--call-graph dwarf' || echo '-g'): $(sed -n 's/^wrk-result //p' "$out" | cut -d' ' -f3,6) under perf; $samples samples of $PERF_EVENT at 999 Hz"
    echo
    echo "| component (self time) | share of the server's samples |"
    echo "|---|---|"
    # The component table reads the mangled names: the module is part of them.
    perf report -i "$data" --stdio --no-children -g none --sort dso,sym -F overhead,dso,sym --field-separator=$'\t' \
        2>/dev/null | grep -v '^#' | grep -v '^$' | sed 's/\[[.k]\] //' |
        awk -F'\t' 'NF >= 3 { for (i = 1; i <= 3; i++) gsub(/^ +| +$/, "", $i); print $1 "\t" $2 "\t" $3 }' | components || true
    rm -f "$data"
    echo
    echo "Top functions by self time (all of them: $self):"
    echo
    echo '```'
    grep -v '^#' "$self" | grep '%' | sed 's/^ *//' | sort -t$'\t' -k1,1 -gr | sed 's/\t/  /g' | head -n 15 | cut -c1-150 || true
    echo '```'
    echo
    echo "Frames with their children (share of the samples with the frame on the stack; all of them: $children):"
    echo
    echo "| frame | with children | self |"
    echo "|---|---|---|"
    local frame line
    # Each frame as a regular expression on the demangled name after perf's "[.] " or "[k] ".
    for frame in 'static Routes\.suggestions$' 'static Routes\.recordDonations$' '^RankingEngine\.suggestions<' \
        '^TopKRanker\.top<A>\(in:explain:statistics:\)$' '^Database\.read<A>\(_:\)$' '^SuggestionList\.write\(to:\)$' \
        '^SQLiteDonationStore\.importDonations\(' '^SQLiteDonationStore\.record\(' '^Interaction\.init\(jsonBytes:' \
        '^sqlite3_step$' '^__x64_sys_fdatasync$' '^__x64_sys_pwrite64$' '^__x64_sys_pread64$' '^__x64_sys_ftruncate$' \
        '^__x64_sys_fcntl$' '^__x64_sys_sendmsg$' '^__x64_sys_recvfrom$' '^__x64_sys_epoll_wait$' '^__x64_sys_futex$' \
        '^swift_release$' '^swift_retain$' '^malloc$' '^free$'; do
        FRAME=$frame awk '{ sub(/^ +/, ""); s = $0; sub(/^[^]]*\] /, "", s)
            if (s ~ ENVIRON["FRAME"]) { printf "| `%s` | %s | %s |\n", substr(s, 1, 160), $1, $2; exit } }' "$children"
    done
    echo
}
if [ "$PROFILE" = 1 ]; then
    set -- $SIZES
    echo "### Profiles of the server (--workers $PROFILE_WORKERS), $PERF_EVENT sampled at 999 Hz"
    echo
    note "profiling"
    start_server "$WORK/store-$1" "$PROFILE_WORKERS"
    wrk -t1 -c32 -d2s "$BASE/suggestions?limit=8" >/dev/null
    echo "GETs on the $1 store (wrk -t1 -c32)."
    echo
    profile_run plain fp 32 "$BASE/suggestions?limit=8"
    profile_run plain dwarf 32 "$BASE/suggestions?limit=8"
    profile_run contentType dwarf 32 "$BASE/suggestions?limit=8&contentType=public.jpeg"
    profile_run person dwarf 32 "$BASE/suggestions?limit=8&person=$PERSON"
    stop_server
    start_server "$POST_STORE" "$PROFILE_WORKERS"
    echo "Donations into the copy of the $1 store."
    echo
    profile_run batch dwarf "$BATCH_CONNECTIONS" "$BASE/donations" "$LUA/donations.lua" "$TAG-profile-b" batch "$BATCH" zipf
    profile_run batchUniform dwarf "$BATCH_CONNECTIONS" "$BASE/donations" "$LUA/donations.lua" "$TAG-profile-u" batch "$BATCH" uniform
    profile_run single dwarf "$SINGLE_CONNECTIONS" "$BASE/donations" "$LUA/donations.lua" "$TAG-profile-s" single 1 zipf
    stop_server
fi
echo "Raw results: $RESULTS (runs.tsv: one row per run; raw/: wrk's output, redis-benchmark's CSV, perf's reports)."
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
