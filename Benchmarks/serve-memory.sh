#!/usr/bin/env bash
# The server's resident memory while it writes, and what clients can make it hold.
#
#   ROUNDS=3 Benchmarks/serve-memory.sh > results.md
#
# On a store of 1M donations over 100k conversations (`suggest-bench generate --seed 1`, as serve-benchmark.sh),
# ROUNDS rounds, each in turn for two heap settings of the same binary:
#   default              what `suggest serve` does: two malloc heaps (suggest-serve's main.swift)
#   MALLOC_ARENA_MAX=16  glibc's own default on 2 cores (8 a core): what the server did before it chose
# and for each, on a fresh copy of the store, `suggest serve --workers 2`:
#   wrk -t1 -c4 -d10s  JSON Lines POSTs of 1,000 donations (Benchmarks/serve-wrk/donations.lua, Zipf)
#   wrk -t1 -c8 -d10s  single-donation POSTs
# reporting the server's peak resident memory (VmHWM) after each run and the donations acknowledged a second.
# Then 12 JSON Lines bodies of 9,999 donations (5 MB each) posted at once to a fresh copy of the 1M store, the
# server's peak memory and what it keeps after. Last, with a keys file, FLOOD_CONNECTIONS connections (default 64)
# that each POST a 30 MB body whole: with a wrong key (401 after each body, which is read and dropped, never
# kept), and with the right key (at most --max-body-memory is held; the rest get 503): peak memory and answers.
#
# Needs wrk, python3 (Debian; installed when missing and run as root) and about 1 GB under SUGGEST_BENCH_DIR.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-serve-memory}
ROUNDS=${ROUNDS:-3}
FLOOD_CONNECTIONS=${FLOOD_CONNECTIONS:-64}
LUA=$ROOT/Benchmarks/serve-wrk

note() { printf '%s\n' "$*" >&2; }
fail() { note "serve-memory: $*"; exit 1; }

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || fail "missing Debian packages: ${need[*]}; install them (apt-get install ${need[*]})"
    apt-get install -y "${need[@]}" >&2
fi

note "building: swift build -c release"
swift build -c release >&2
BIN=$(swift build -c release --show-bin-path)
rm -rf "$WORK"
mkdir -p "$WORK/bin"
for program in suggest suggest-serve suggest-bench; do install -m 755 "$BIN/$program" "$WORK/bin/$program"; done
SUGGEST=$WORK/bin/suggest
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

note "generating and importing 1M donations over 100k conversations"
"$SUGGEST" config --store "$WORK/store" --max-age-days 0 --idle-days 0 >/dev/null
"$WORK/bin/suggest-bench" generate --donations 1M --conversations 100k --seed 1 2>/dev/null |
    "$SUGGEST" import - --store "$WORK/store" --quiet >&2

# start_server STORE [ARGUMENTS...]: `suggest serve` with the environment's heap setting; sets PORT.
start_server() {
    local store=$1
    shift
    rm -f "$WORK/server.err"
    "$SUGGEST" serve --store "$store" --port 0 --no-access-log --workers 2 "$@" 2>"$WORK/server.err" &
    SERVER_PID=$!
    PORT=
    for _ in $(seq 600); do
        PORT=$(sed -n 's|^listening on http://[^ ]*:\([0-9][0-9]*\)$|\1|p' "$WORK/server.err" 2>/dev/null)
        [ -n "$PORT" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || fail "the server did not start: $(tail -n3 "$WORK/server.err")"
        sleep 0.1
    done
    [ -n "$PORT" ] || fail "the server printed no 'listening on' line"
}
stop_server() {
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" || fail "the server exited $? after SIGTERM (expected 0)"
    SERVER_PID=
}
peak_mb() { awk '$1 == "VmHWM:" { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status"; }

echo "## The server's memory under donations"
echo
echo "- $(nproc) cores; commit $(git rev-parse --short HEAD); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $ROUNDS rounds; each setting on a fresh copy of the 1M store; wrk -t1 -d10s; peak RSS = VmHWM after the run"
echo
echo "| round | heaps | form | donations/s (acknowledged) | server peak RSS |"
echo "|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
    for setting in default MALLOC_ARENA_MAX=16; do
        for form in batch single; do
            rm -rf "$WORK/copy"
            cp -a "$WORK/store" "$WORK/copy"
            if [ "$setting" = default ]; then unset MALLOC_ARENA_MAX; else export "$setting"; fi
            start_server "$WORK/copy"
            unset MALLOC_ARENA_MAX
            if [ "$form" = batch ]; then connections=4; arguments=(batch 1000 zipf); else connections=8; arguments=(single 1 zipf); fi
            output=$(wrk -t1 -c"$connections" -d10s -s "$LUA/donations.lua" "http://127.0.0.1:$PORT/v1/accounts/default/donations" \
                -- "mem-$round-$setting-$form-$$" "${arguments[@]}")
            # serve-wrk/report.lua's line: `wrk-result ... seconds=S ... recorded=N ...`.
            recorded=$(sed -n 's/^wrk-result.* recorded=\([0-9]*\).*/\1/p' <<<"$output")
            seconds=$(sed -n 's/^wrk-result.* seconds=\([0-9.]*\).*/\1/p' <<<"$output")
            rate=$(awk -v r="${recorded:-0}" -v s="${seconds:-10}" 'BEGIN { printf "%d", r / s }')
            echo "| $round | $setting | $form | $rate | $(peak_mb) MB |"
            stop_server
        done
    done
done
echo

# Twelve large batches at once.
"$WORK/bin/suggest-bench" generate --donations 9999 --conversations 5000 --seed 9 2>/dev/null >"$WORK/batch.jsonl"
rm -rf "$WORK/copy"
cp -a "$WORK/store" "$WORK/copy"
start_server "$WORK/copy"
CURLS=()
for i in $(seq 12); do
    curl -s -o "$WORK/batch-$i.out" -w '%{http_code}\n' -H 'Content-Type: application/x-ndjson' \
        --data-binary @"$WORK/batch.jsonl" "http://127.0.0.1:$PORT/v1/accounts/default/donations" >"$WORK/batch-$i.code" &
    CURLS+=($!)
done
for pid in "${CURLS[@]}"; do wait "$pid" || true; done
echo "### 12 JSON Lines bodies of 9,999 donations (5 MB each) at once, into the 1M store"
echo
echo "| answers | server peak RSS | RSS after |"
echo "|---|---|---|"
echo "| $(cat "$WORK"/batch-*.code | sort | uniq -c | awk '{ printf "%s%d × %s", (NR > 1 ? "; " : ""), $1, $2 }') | $(peak_mb) MB | $(awk '$1 == "VmRSS:" { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status") MB |"
echo
stop_server

# A keys file, and clients that send 30 MB bodies over many connections at once.
KEY=c2b7f0d1e9a84b6f93e1d0c4a7b2e8f1
printf '{"keys": [{"tenant": "acme", "key": "%s"}]}' "$KEY" >"$WORK/keys.json"
chmod 600 "$WORK/keys.json"
cat >"$WORK/flood.py" <<'EOF'
import collections, socket, sys, threading
port, connections, size, key = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].encode()
chunk, answers, lock = b"x" * (1 << 20), collections.Counter(), threading.Lock()
def one():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/accounts/a/donations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
              b"Content-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n" % (key, size))
    sent = 0
    try:
        while sent < size:
            s.sendall(chunk[:min(len(chunk), size - sent)]); sent += min(len(chunk), size - sent)
    except OSError:
        pass
    s.settimeout(60)
    try:
        status = s.recv(64).split(b"\r\n")[0].decode()
    except OSError as error:
        status = type(error).__name__
    with lock:
        answers[status] += 1
    s.close()
threads = [threading.Thread(target=one) for _ in range(connections)]
for t in threads: t.start()
for t in threads: t.join()
print("; ".join("%d × %s" % (n, status) for status, n in sorted(answers.items())))
EOF
echo "### $FLOOD_CONNECTIONS connections that each POST a body of 30 MB (the limit is 32 MiB)"
echo
echo "| key | answers | server peak RSS |"
echo "|---|---|---|"
for key in wrong "$KEY"; do
    rm -rf "$WORK/flood-store"
    start_server "$WORK/flood-store" --keys "$WORK/keys.json"
    answers=$(python3 "$WORK/flood.py" "$PORT" "$FLOOD_CONNECTIONS" 30000000 "$key")
    echo "| $([ "$key" = wrong ] && echo "a wrong one" || echo "the tenant's") | $answers | $(peak_mb) MB |"
    stop_server
done
