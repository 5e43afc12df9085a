#!/usr/bin/env bash
# Whole-process benchmarks of the `suggest` command line, built as users are told to build it:
#   swift build -c release (one static executable, Package.swift)
#
# Builds a store of 1M donations / 100k conversations and one of 10M donations / 100k conversations with
# `suggest import` (the 10M one in ten 1M steps, each timed), then times `suggest list` and `suggest donate` on
# both, and `list` at 10M against `list` at 1M in turn (A B A B ...) for a ratio that machine drift cannot skew.
# Prints Markdown tables on standard output; progress goes to standard error.
#
# Needs about 4 GB free under $SUGGEST_BENCH_DIR (default /tmp/suggest-process-bench): a 10M store is about 0.7 GB,
# its log as much again while a step commits, and the history is generated 1M lines (about 480 MB) at a time.
# Everything is deleted at the end unless KEEP=1.
#
# Environment:
#   SUGGEST_BENCH_DIR  scratch directory (default /tmp/suggest-process-bench)
#   RUNS               timed runs per command (default 21, after 2 warm-up runs)
#   SIZES              store sizes in donations (default "1M 10M"; each over 100k conversations)
#   KEEP=1             keep the stores and do not delete the scratch directory
#
# The same figures by hand, with public tools (run each a few times and take the median):
#   /usr/bin/time -v suggest list --store DIR             (wall clock and "Maximum resident set size")
#   hyperfine -N --warmup 2 'suggest list --store DIR'    (Debian package hyperfine)
set -euo pipefail

cd "$(dirname "$0")/.."
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-process-bench}
RUNS=${RUNS:-21}
SIZES=${SIZES:-"1M 10M"}
KEEP=${KEEP:-0}
CONVERSATIONS=100k
SEED=1

note() { printf '%s\n' "$*" >&2; }

# The build users are told to make (README): `swift build -c release`, which makes `suggest` one static executable
# (Package.swift). Product by product: the whole package with static flags fails, since `suggest-serve` links
# libmicrohttpd, whose static archive needs GnuTLS.
note "building: swift build -c release --product suggest (and suggest-bench)"
swift build -c release --product suggest >&2
swift build -c release --product suggest-bench >&2
BIN=$(swift build -c release --show-bin-path)
BENCH=$BIN/suggest-bench

mkdir -p "$WORK"
cleanup() {
    if [ "$KEEP" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
available_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
if [ "$available_kb" -lt $((4 * 1024 * 1024)) ]; then
    note "only $((available_kb / 1024)) MB free under $WORK; the 10M store needs about 4 GB. Set SUGGEST_BENCH_DIR or SIZES=1M."
    exit 1
fi
# Time the binary as the README installs it, copied out of the build directory. The copy is not a formality: the
# linker writes its output in small pieces, and a file cached that way costs every process start about 18% more to
# map than the same bytes written in one stream by `cp` (kernel 6.18, ext4; Benchmarks/README.md, "Process start").
# So $WORK must allow executables (not a noexec /tmp).
SUGGEST=$WORK/bin/suggest
install -D -m 755 "$BIN/suggest" "$SUGGEST"

echo "## Machine"
echo
echo "- $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -h | awk '/^Mem:/ { print $2 }') memory"
echo "- kernel $(uname -r); $(swift --version 2>/dev/null | head -n1)"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
linked() {
    if ldd "$1" >/dev/null 2>&1; then ldd "$1" | awk '{ print $1 }' | grep -v vdso | xargs; else echo "nothing (a static executable)"; fi
}
echo "- suggest binary: $(du -h "$SUGGEST" | cut -f1), linked against: $(linked "$SUGGEST")"
echo

# `seconds donations` -> donations per second
rate() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%d", n / s }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.2f ms", s * 1000 }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

echo "## suggest import (one run per step; each step imports 1M donations in one process)"
echo
echo "| store | step | donations in the store after it | wall | donations/s | peak RSS |"
echo "|---|---|---|---|---|---|"
declare -A IMPORT_SECONDS
for size in $SIZES; do
    store=$WORK/store-$size
    rm -rf "$store"
    "$SUGGEST" config --store "$store" --max-age-days 0 --idle-days 0 >/dev/null
    note "generating $size donations over $CONVERSATIONS conversations (seed $SEED) in 1M-line chunks"
    rm -f "$WORK"/chunk-*
    "$BENCH" generate --donations "$size" --conversations "$CONVERSATIONS" --seed "$SEED" |
        split -l 1000000 -d -a 3 - "$WORK/chunk-"
    total=0
    step=0
    for chunk in "$WORK"/chunk-*; do
        step=$((step + 1))
        lines=$(wc -l <"$chunk")
        note "importing step $step of $size ($lines donations)"
        read -r wall _ peak < <("$BENCH" time --tsv -n 1 --warmup 0 -- "$SUGGEST" import --store "$store" --quiet "$chunk")
        total=$((total + lines))
        IMPORT_SECONDS[$size]=$(awk -v a="${IMPORT_SECONDS[$size]:-0}" -v b="$wall" 'BEGIN { print a + b }')
        echo "| $size | $step | $total | $(awk -v s="$wall" 'BEGIN { printf "%.1f s", s }') | $(rate "$wall" "$lines") | $(mb "$peak") |"
        rm -f "$chunk"
    done
    echo "| $size | all | $total | $(awk -v s="${IMPORT_SECONDS[$size]}" 'BEGIN { printf "%.1f s", s }') | $(rate "${IMPORT_SECONDS[$size]}" "$total") | |"
    note "store $size: $(du -sh --exclude="*-reserve" "$store" | cut -f1)"
done
echo
for size in $SIZES; do echo "- store of $size donations on disk: $(du -sh --exclude="*-reserve" "$WORK/store-$size" | cut -f1)"; done
echo

# The imports leave gigabytes of dirty pages: until they are written back, every fdatasync of `donate` queues
# behind them. Flush them first so that `donate` is timed as a user would see it.
note "sync: writing back what the imports left dirty"
sync
sleep 5

# A conversation that exists in every store: the generator's conversation numbers are 0..<100k.
echo "## suggest list and suggest donate (whole process, $RUNS runs after 2 warm-up runs)"
echo
echo "| command | wall median (min–max) | cpu median | peak RSS median |"
echo "|---|---|---|---|"
for size in $SIZES; do
    store=$WORK/store-$size
    "$BENCH" time -n "$RUNS" --label "suggest list, $size" -- "$SUGGEST" list --store "$store"
    "$BENCH" time -n "$RUNS" --label "suggest list --json --content-type public.jpeg --person p-17, $size" -- \
        "$SUGGEST" list --store "$store" --json --content-type public.jpeg --person p-17
    "$BENCH" time -n "$RUNS" --label "suggest donate, $size" -- \
        "$SUGGEST" donate --store "$store" --conversation c-17 --direction outgoing
done
"$BENCH" time -n "$RUNS" --label "/bin/true (process start floor)" -- /bin/true
echo

set -- $SIZES
if [ $# -ge 2 ]; then
    small=$1
    large=${!#}
    echo "## suggest list at $large against $small, in turn (A B A B ...), ratio pair by pair"
    echo
    echo "| A | A wall median (min–max) | B | B wall median (min–max) | A/B median (min–max) | peak A | peak B |"
    echo "|---|---|---|---|---|---|---|"
    "$BENCH" time -n "$RUNS" --label "list, $large" --vs "$SUGGEST list --store $WORK/store-$small" \
        --vs-label "list, $small" -- "$SUGGEST" list --store "$WORK/store-$large"
    echo
fi
