#!/usr/bin/env bash
# suggest against a peer, zoxide 0.4.3 (Debian's package), a frecency tool of the command line, side by side.
#
# At N = 1k, 10k and 100k entries:
#   zoxide: N existing directories in a database built with `zoxide import` from a z-format file
#           (path|rank|epoch), ranks Zipf-distributed, with _ZO_MAXAGE=100000000 so that aging does not empty it;
#   suggest: a store of N conversations and 10·N donations (`suggest-bench generate`, then `suggest import`),
#           retention off (`suggest config --max-age-days 0 --idle-days 0`).
# Then, each pair in turn (A B A B ...) with the ratio taken pair by pair:
#   zoxide add DIR                against  suggest donate --conversation ID --direction outgoing
#   zoxide query KEYWORD          against  suggest list --limit 8   (d7: matches about a tenth of the entries)
#   zoxide query NOMATCH          against  suggest list --limit 8   (the form of performance-anchors.md)
# zoxide is A, so A/B reads directly as how many times faster suggest is.
#
# Environment: SUGGEST_BENCH_DIR (default /tmp/suggest-zoxide-bench), RUNS (default 21), SIZES (default
# "1k 10k 100k"), KEEP=1 to keep the scratch directory. Needs root or sudo for `apt-get install zoxide` once.
#
# By hand with public tools, for one size:
#   hyperfine -N --warmup 2 'zoxide add DIR' 'suggest donate --store S --conversation c-17'
#   hyperfine -N --warmup 2 'zoxide query d7' 'suggest list --store S --limit 8'
set -euo pipefail

cd "$(dirname "$0")/.."
WORK=${SUGGEST_BENCH_DIR:-/tmp/suggest-zoxide-bench}
RUNS=${RUNS:-21}
SIZES=${SIZES:-"1k 10k 100k"}
KEEP=${KEEP:-0}

note() { printf '%s\n' "$*" >&2; }

if ! command -v zoxide >/dev/null; then
    note "installing zoxide (Debian package)"
    if [ "$(id -u)" = 0 ]; then apt-get install -y zoxide >&2; else sudo apt-get install -y zoxide >&2; fi
fi
ZOXIDE=$(command -v zoxide)

# The build users are told to make (README): `swift build -c release`, which makes `suggest` one static executable
# (Package.swift). Product by product: the whole package with static flags fails, since `suggest-serve` links
# libmicrohttpd, whose static archive needs GnuTLS.
note "building: swift build -c release --product suggest (and suggest-bench)"
swift build -c release --product suggest >&2
swift build -c release --product suggest-bench >&2
BIN=$(swift build -c release --show-bin-path)
BENCH=$BIN/suggest-bench

rm -rf "$WORK"
mkdir -p "$WORK"
cleanup() { if [ "$KEEP" != 1 ]; then rm -rf "$WORK"; fi; }
trap cleanup EXIT
# Time the binary as the README installs it, copied out of the build directory. The copy is not a formality: the
# linker writes its output in small pieces, and a file cached that way costs every process start about 18% more to
# map than the same bytes written in one stream by `cp` (kernel 6.18, ext4; Benchmarks/README.md, "Process start").
# So $WORK must allow executables (not a noexec /tmp).
SUGGEST=$WORK/bin/suggest
install -D -m 755 "$BIN/suggest" "$SUGGEST"

count() { awk -v t="$1" 'BEGIN {
    n = t; if (t ~ /[kK]$/) n = substr(t, 1, length(t) - 1) * 1000; else if (t ~ /M$/) n = substr(t, 1, length(t) - 1) * 1000000
    print n }'; }

echo "## suggest against zoxide $("$ZOXIDE" --version | awk '{ print $2 }'), side by side ($RUNS runs each after 2 warm-up runs)"
echo
echo "- $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); kernel $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| A (zoxide) | A wall median (min–max) | B (suggest) | B wall median (min–max) | A/B = speed-up of suggest, median (min–max) | peak A | peak B |"
echo "|---|---|---|---|---|---|---|"
for size in $SIZES; do
    n=$(count "$size")
    dir=$WORK/$size
    mkdir -p "$dir/dirs" "$dir/zoxide"
    note "$size: creating $n directories and the zoxide database"
    (cd "$dir/dirs" && seq 1 "$n" | sed 's/^/d/' | xargs mkdir)
    now=$(date +%s)
    # z's format: path|rank|last access (epoch seconds). Rank ~ 1000/i (Zipf), last access within 90 days.
    awk -v n="$n" -v now="$now" -v root="$dir/dirs" 'BEGIN {
        srand(1)
        for (i = 1; i <= n; i++) printf "%s/d%d|%.3f|%d\n", root, i, 1000 / i + 1, now - int(rand() * 90 * 86400)
    }' >"$dir/z.txt"
    export _ZO_DATA_DIR=$dir/zoxide _ZO_MAXAGE=100000000
    "$ZOXIDE" import "$dir/z.txt" >/dev/null
    entries=$("$ZOXIDE" query -l | wc -l)
    if [ "$entries" -ne "$n" ]; then
        note "zoxide holds $entries entries, expected $n"
        exit 1
    fi

    note "$size: building the suggest store ($((n * 10)) donations over $n conversations)"
    store=$dir/store
    "$SUGGEST" config --store "$store" --max-age-days 0 --idle-days 0 >/dev/null
    "$BENCH" generate --donations $((n * 10)) --conversations "$n" --seed 1 --output "$dir/history.jsonl" 2>/dev/null
    "$SUGGEST" import --store "$store" --quiet "$dir/history.jsonl" >/dev/null
    rm -f "$dir/history.jsonl"
    # Creating the directories and importing leave hundreds of MB dirty at 100k: until they are written back, any
    # command that touches the file system (zoxide's rename, suggest's log index) queues behind the journal.
    note "$size: sync"
    sync
    sleep 2

    "$BENCH" time -n "$RUNS" --label "zoxide add, $size entries" \
        --vs "$SUGGEST donate --store $store --conversation c-17 --direction outgoing" \
        --vs-label "suggest donate, $size conversations" -- "$ZOXIDE" add "$dir/dirs/d17"
    "$BENCH" time -n "$RUNS" --label "zoxide query d7, $size entries" \
        --vs "$SUGGEST list --store $store --limit 8" --vs-label "suggest list --limit 8, $size conversations" \
        -- "$ZOXIDE" query d7
    # The anchors' form (performance-anchors.md): a keyword that matches nothing, so zoxide reads every entry.
    "$BENCH" time -n "$RUNS" --label "zoxide query (no match), $size entries" \
        --vs "$SUGGEST list --store $store --limit 8" --vs-label "suggest list --limit 8, $size conversations" \
        -- "$ZOXIDE" query nomatchxyz 2>/dev/null || true  # zoxide exits 1 on no match, as expected
    note "$size: zoxide database $(du -h "$dir/zoxide/db.zo" | cut -f1), suggest store $(du -sh --exclude="*-reserve" "$store" | cut -f1)"
    if [ "$KEEP" != 1 ]; then rm -rf "$dir"; fi
done
echo
