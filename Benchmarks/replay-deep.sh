#!/usr/bin/env bash
# Replay of one account whose sends rank deep, against `suggest import` of the same file (issue 17: eval within 2×
# the import), for this tree and for an earlier revision, in turn:
#
#   Benchmarks/replay-deep.sh BASE             (BASE: a git revision, e.g. ae20fbc)
#   RUNS=5 POLICIES=default,fixed Benchmarks/replay-deep.sh BASE
#
# Two histories of one account, 1M donations over 100k conversations, Zipf 1.1, sent one at a time at random
# (no bursts, no hot set), so that about 40% of the sends go to a conversation ranked below 100:
#   full.jsonl     suggest-bench generate --burst 1 --hot-share 0 --group-share 0 --content-share 0 (names, people,
#                  a service: a dearer import)
#   minimal.jsonl  the same draw with nothing but an identifier, a date, a direction and the conversation (the
#                  cheapest import, so the hardest ratio), written by the Python below
#   sends.jsonl    minimal.jsonl with every donation outgoing: twice the ranks, each as deep
# For each history, RUNS rounds of `suggest-bench replay FILE --runs 1` with the new build, then the old: each
# round times the import and every policy's eval as whole processes. Prints Markdown: per policy the median eval
# wall time of each build, their ratio round by round, and each build's eval / import.
#
# Environment: SUGGEST_BENCH_DIR (default /tmp/suggest-replay-deep; about 1.7 GB), RUNS (default 3), POLICIES
# (default all), HISTORIES (default "full minimal sends"), KEEP=1 keeps the scratch directory.
set -euo pipefail

cd "$(dirname "$0")/.."
BASE=${1:?usage: Benchmarks/replay-deep.sh BASE-REVISION}
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-replay-deep}
RUNS=${RUNS:-3}
POLICIES=${POLICIES:-all}
note() { printf '%s\n' "$*" >&2; }

. Benchmarks/lib/build.sh
build_new_and_base "$BASE" "$WORK"

note "writing the histories"
"$BENCH" generate --donations 1M --conversations 100k --zipf 1.1 --seed 1 --burst 1 --hot-share 0 \
    --group-share 0 --content-share 0 --output "$WORK/full.jsonl" 2>/dev/null
python3 - "$WORK/minimal.jsonl" <<'PYTHON'
import bisect, random, sys
count, conversations, exponent = 1_000_000, 100_000, 1.1
random.seed(11)
cumulative, total = [], 0.0
for k in range(1, conversations + 1):
    total += k ** -exponent
    cumulative.append(total)
date = 1_700_000_000
with open(sys.argv[1], "w") as out:
    for i in range(count):
        c = bisect.bisect_left(cumulative, random.random() * total)
        date += random.randint(1, 60)
        direction = "outgoing" if random.random() < 0.5 else "incoming"
        out.write('{"identifier":"d%d","date":%d,"direction":"%s","intent":{"conversationIdentifier":"c%d"}}\n'
                  % (i, date, direction, c))
PYTHON
sed 's/"direction":"incoming"/"direction":"outgoing"/' "$WORK/minimal.jsonl" >"$WORK/sends.jsonl"

echo "## replay of deep sends: $(git rev-parse --short HEAD) (new) against $(git rev-parse --short "$BASE") (old)"
echo
echo "- $(nproc) cores; load at start $(cut -d' ' -f1-3 /proc/loadavg); $RUNS rounds, new then old in each"
for history in ${HISTORIES:-full minimal sends}; do
    : >"$WORK/$history.rows"
    for round in $(seq "$RUNS"); do
        for build in new old; do
            note "$history, round $round, $build"
            # Keep the rows of the table: "| eval default | 6.27 s (...) | ..." and the import's.
            "$BENCH" replay "$WORK/$history.jsonl" --runs 1 --policies "$POLICIES" --suggest "$WORK/$build/suggest" \
                --store "$WORK/store" 2>/dev/null | awk -v b="$build" -v r="$round" -F'|' \
                '/^\| (import|eval)/ { gsub(/^ +| +$/, "", $2); split($3, t, " "); print b, r, $2, t[1] }' \
                >>"$WORK/$history.rows"
        done
    done
    python3 - "$WORK/$history.rows" "$history" <<'PYTHON'
import statistics, sys
rows = [line.split(" ", 2) for line in open(sys.argv[1]).read().splitlines()]
times = {}
for build, rnd, rest in rows:
    name, seconds = rest.rsplit(" ", 1)
    times.setdefault((build, name), {})[int(rnd)] = float(seconds)
names = [n for (b, n) in times if b == "new"]
print(f"\n### {sys.argv[2]}.jsonl\n")
print("| command | new | old | new / old, round by round | new / import | old / import |")
print("|---|---|---|---|---|---|")
def med(values): return statistics.median(values)
for name in names:
    new, old = times[("new", name)], times[("old", name)]
    rounds = sorted(set(new) & set(old))
    ratio = [new[r] / old[r] for r in rounds]
    cell = f"{med(ratio):.2f} ({min(ratio):.2f}–{max(ratio):.2f})"
    if name == "import":
        print(f"| {name} | {med(new.values()):.2f} s | {med(old.values()):.2f} s | {cell} | | |")
        continue
    ni = [new[r] / times[("new", "import")][r] for r in rounds]
    oi = [old[r] / times[("old", "import")][r] for r in rounds]
    print(f"| {name} | {med(new.values()):.2f} s | {med(old.values()):.2f} s | {cell} | "
          f"{med(ni):.2f} ({min(ni):.2f}–{max(ni):.2f}) | {med(oi):.2f} ({min(oi):.2f}–{max(oi):.2f}) |")
PYTHON
done
