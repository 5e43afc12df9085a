#!/usr/bin/env bash
# How fast the SQLite store records the server benchmark's donations when one transaction holds W of them.
#
#   Benchmarks/fold-window.sh                 # W = 1,000 10,000 50,000 100,000 200,000 500,000, two runs each
#   SIZES="1000 200000" RUNS=3 Benchmarks/fold-window.sh
#
# Builds release, imports the 1M-donation store of serve-benchmark.sh (`suggest-bench generate --seed 1`, 100k
# conversations, nothing expired), then for each W writes W donations drawn as serve-wrk/donations.lua draws them
# (Zipf of exponent 1 over the 100k conversations, a new identifier each, dated now) and times `suggest import` of
# them into a fresh copy of the store: one transaction, the import's page cache, the whole process's wall time.
# Prints a Markdown table; the README's "How many donations one transaction must fold" quotes one run.
# Needs python3 and about 2.5 GB of disk in $WORK (default: a temporary directory, removed at the end).
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1000 10000 50000 100000 200000 500000"}
RUNS=${RUNS:-2}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT

swift build -c release --product suggest >&2
swift build -c release --product suggest-bench >&2
BIN=$(swift build -c release --show-bin-path)

echo "importing the 1M store into $WORK/base" >&2
"$BIN/suggest" config --store "$WORK/base" --max-age-days 0 --idle-days 0 >/dev/null
"$BIN/suggest-bench" generate --donations 1M --conversations 100k --seed 1 2>/dev/null |
    "$BIN/suggest" import - --store "$WORK/base" --quiet >&2

# The donations of one transaction, and how many conversations they touch (on standard error).
draw() {
    python3 - "$1" <<'PYTHON'
import bisect, random, sys, time
count, conversations = int(sys.argv[1]), 100_000
cumulative, total = [], 0.0
for k in range(1, conversations + 1):
    total += 1 / k
    cumulative.append(total)
random.seed(7)
date = int(time.time()) - 100
touched = set()
out = sys.stdout
for i in range(count):
    c = bisect.bisect_left(cumulative, random.random() * total)
    touched.add(c)
    direction = "outgoing" if i % 2 == 0 else "incoming"
    out.write('{"identifier":"w-%d","date":%d,"direction":"%s","intent":{"conversationIdentifier":"c-%d",'
              '"serviceName":"chat.example","sender":{"customIdentifier":"me","isMe":true},'
              '"recipients":[{"customIdentifier":"p-%d","displayName":"Person %d",'
              '"personHandle":{"value":"p%d@example.com","type":"emailAddress"}}]}}\n'
              % (i, date, direction, c, c, c, c))
print(len(touched), file=sys.stderr)
PYTHON
}

echo "| W, donations in the transaction | conversations among them | seconds | donations/s |"
echo "|---:|---:|---:|---:|"
for size in $SIZES; do
    touched=$(draw "$size" 2>&1 >"$WORK/batch.jsonl")
    seconds=()
    for _ in $(seq "$RUNS"); do
        rm -rf "$WORK/copy"
        cp -r "$WORK/base" "$WORK/copy"
        sync
        start=$(date +%s.%N)
        "$BIN/suggest" import "$WORK/batch.jsonl" --store "$WORK/copy" --quiet >/dev/null
        end=$(date +%s.%N)
        seconds+=("$(python3 -c "print(round($end - $start, 3))")")
    done
    python3 - "$size" "$touched" "${seconds[@]}" <<'PYTHON'
import sys
size, touched, times = int(sys.argv[1]), int(sys.argv[2]), [float(t) for t in sys.argv[3:]]
print(f"| {size:,} | {touched:,} | {min(times):.2f}–{max(times):.2f} | "
      f"{size / max(times):,.0f}–{size / min(times):,.0f} |")
PYTHON
done
