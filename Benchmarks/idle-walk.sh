#!/usr/bin/env bash
# What `suggest list` costs on an account whose conversations are nearly all idle, for this tree and an earlier
# revision, side by side in one run:
#
#   Benchmarks/idle-walk.sh BASE        (BASE: a git revision, e.g. 8bc07ef)
#
# A store keeps a conversation that has been quiet for `--idle-days` (30 by default) but does not suggest it. An
# account with fewer recent conversations than `--limit` asks for is the case that finds out whether the top-K walk
# can tell where the idle ones start: 1M donations over 300k conversations that all end 40 days before the query
# (`--max-age-days 0` keeps them), then one donation to each of three new conversations in the last week.
#
# Builds both in release (BASE in a temporary worktree), imports the history once with this tree's binary (the
# store's format is the same for both), then times `list` on it, BASE and this tree in turn (A B A B ..., the ratio
# pair by pair, so machine drift does not skew it), plainly, with a content type and under a service, and checks
# that both print the same bytes. Prints Markdown on standard output, progress on standard error.
#
# Environment:
#   SUGGEST_BENCH_DIR  scratch directory (default /tmp/suggest-idle-bench; about 1 GB)
#   RUNS               timed pairs per case (default 11, after one warm-up pair)
#   KEEP=1             keep the scratch directory
set -euo pipefail

cd "$(dirname "$0")/.."
BASE=${1:?usage: Benchmarks/idle-walk.sh BASE-REVISION}
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-idle-bench}
RUNS=${RUNS:-11}
note() { printf '%s\n' "$*" >&2; }
[ "$RUNS" -ge 1 ] 2>/dev/null || { note "RUNS must be a whole number of pairs, 1 or more"; exit 64; }

. Benchmarks/lib/build.sh
build_new_and_base "$BASE" "$WORK"

AT=$(date -u +%Y-%m-%dT00:00:00Z)
QUIET_SINCE=$(date -u -d "$AT - 40 days" +%Y-%m-%dT00:00:00Z)
STORE=$WORK/store
rm -rf "$STORE"
note "importing 1M donations over 300k conversations, the last at $QUIET_SINCE"
"$NEW" config --store "$STORE" --max-age-days 0 --idle-days 30 >/dev/null
"$BENCH" generate --donations 1M --conversations 300k --seed 3 --span-days 200 --end "$QUIET_SINCE" \
    2>"$WORK/generate.log" | "$NEW" import --store "$STORE" - >/dev/null
# One of the three on the service of the `--service sms` case, so that it has an answer to find.
for day in 1 3 5; do
    service=$([ "$day" = 1 ] && echo sms || echo chat.example)
    printf '{"date":"%s","direction":"outgoing","intent":{"conversationIdentifier":"recent-%d","serviceName":"%s"}}\n' \
        "$(date -u -d "$AT - $day days" +%Y-%m-%dT10:00:00Z)" "$day" "$service"
done | "$NEW" import --store "$STORE" - >/dev/null

# Wall time of one command, in microseconds; a command that fails ends the script (the caller's assignment fails).
wall() {
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null || return 1
    end=$(date +%s%N)
    echo $(((end - start) / 1000))
}

echo "## \`list\` with 300k idle conversations: $(git rev-parse --short HEAD) (new) against $(git rev-parse --short "$BASE") (old)"
echo
echo "- $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- 1M donations over 300k conversations (\`suggest-bench generate --seed 3 --span-days 200\`), the last 40 days before $AT, and three in the week before; \`--idle-days 30\`; $RUNS pairs after one warm-up pair"
echo
# One table row from lines of "old new" microseconds: medians, spreads, and the ratio pair by pair.
SUMMARY='
import statistics, sys
label, same = sys.argv[1], sys.argv[2]
rows = [tuple(map(int, line.split())) for line in sys.stdin if line.strip()]
old, new = [r[0] / 1000 for r in rows], [r[1] / 1000 for r in rows]
ratios = [r[1] / r[0] for r in rows]
def spread(values):
    return f"{statistics.median(values):.2f} ms ({min(values):.2f}–{max(values):.2f})"
ratio = f"{statistics.median(ratios):.4f} ({min(ratios):.4f}–{max(ratios):.4f})"
print(f"| {label} | {spread(old)} | {spread(new)} | {ratio} | {same} |")
'

echo "| \`list --at $AT\` | old: wall median (min–max) | new: wall median (min–max) | new / old, pair by pair | same output |"
echo "|---|---:|---:|---:|---|"
for case in "plain|" "--content-type public.jpeg|--content-type public.jpeg" "--service sms|--service sms"; do
    label=${case%%|*}
    read -r -a arguments <<<"${case#*|}"
    command=(list --store "$STORE" --at "$AT" "${arguments[@]}")
    "$OLD" "${command[@]}" >"$WORK/old.out"
    "$NEW" "${command[@]}" >"$WORK/new.out"
    same=yes
    cmp -s "$WORK/old.out" "$WORK/new.out" || same=NO
    note "timing $label"
    pairs=""
    for run in $(seq 0 "$RUNS"); do
        old=$(wall "$OLD" "${command[@]}")
        new=$(wall "$NEW" "${command[@]}")
        if [ "$run" -gt 0 ]; then pairs+="$old $new"$'\n'; fi
    done
    printf '%s' "$pairs" | python3 -c "$SUMMARY" "$label" "$same"
done
