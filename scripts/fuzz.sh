#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (a package of its own, so the main build never sees sanitizer flags) and runs
# each for a bounded time on its committed seed corpus.
#
#   scripts/fuzz.sh                      every target, 60 s each
#   scripts/fuzz.sh 300 DonationJSON     one target, 300 s
#   FUZZ_SECONDS=30 scripts/fuzz.sh      every target, 30 s each
#   FUZZ_MERGE=1 scripts/fuzz.sh         afterwards, merge inputs that add coverage into Fuzz/corpus/<target>/
#   SUGGEST_FUZZ_KNOWN_BUGS=1 ...        the command-line target stops skipping the known, unfixed bugs
#
# Targets: DonationJSON (Interaction(jsonBytes:) against JSONParser + Interaction(json:)), CommandLine (SuggestCommandLine.run on a throwaway store),
# ActivationPredicate (NSExtensionActivationRule predicates), PropertyList (XML and binary Info.plist).
# The working corpus and any crash-* artifact go to fuzz-out/<target>/ (ignored by git); a crash is also copied to
# Fuzz/regressions/<target>/ so that it can be committed with its fix (the robustness tests replay that directory).
# Exit status: 0 when no target found a problem, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${FUZZ_SECONDS:-60}
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi
all=(DonationJSON CommandLine ActivationPredicate PropertyList)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")

# -sanitize=fuzzer instruments for coverage and links libFuzzer; address adds ASan. SwiftPM points `main` at each
# executable's own entry point, which then calls LLVMFuzzerRunDriver; gold cannot link that (duplicate main), lld can.
echo "building the fuzz targets (debug, -sanitize=fuzzer,address)..."
(cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld \
    2>&1 | grep -v "Cannot export local symbol" | tail -3)
bin=$(cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld \
    --show-bin-path)

declare -A max_len=([DonationJSON]=4096 [CommandLine]=1024 [ActivationPredicate]=2048 [PropertyList]=8192)
failed=0
summary=()
for target in "${targets[@]}"; do
    [[ -n ${max_len[$target]:-} ]] || { echo "unknown target $target (known: ${all[*]})" >&2; exit 64; }
    out="$root/fuzz-out/$target"
    rm -rf "$out/work"
    mkdir -p "$out/corpus" "$out/work"
    log="$out/fuzz.log"
    echo "fuzzing $target for $seconds s (log: fuzz-out/$target/fuzz.log)..."
    rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*
    # The command-line target runs commands in process: give it an empty working and temporary directory (its
    # scratch stores go there; libFuzzer exits without cleaning up). The Swift backtracer
    # is off (a crash should end the run at once), and leak checking too (the Swift runtime keeps caches).
    set +e
    (cd "$out/work" && TMPDIR="$out/work" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
        "$bin/Fuzz$target" "$out/corpus" "$root/Fuzz/corpus/$target" \
        -dict="$root/Fuzz/dictionaries/$target.dict" -max_total_time="$seconds" -max_len="${max_len[$target]}" \
        -timeout=20 -rss_limit_mb=4096 -artifact_prefix="$out/" -print_final_stats=1 >"$log" 2>&1)
    status=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    corpus=$(find "$out/corpus" -type f | wc -l)
    artifacts=$(find "$out" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
    if [[ $status -ne 0 || $artifacts -gt 0 ]]; then
        failed=1
        mkdir -p "Fuzz/regressions/$target"
        for artifact in "$out"/crash-* "$out"/timeout-* "$out"/oom-*; do
            [[ -e $artifact ]] && cp "$artifact" "Fuzz/regressions/$target/"
        done
        echo "  $target: FOUND A PROBLEM (exit $status); the input is in Fuzz/regressions/$target/:"
        grep -E "Fatal error|ERROR: |SUMMARY" "$log" | head -5 | sed 's/^/    /'
    fi
    if [[ ${FUZZ_MERGE:-0} == 1 ]]; then
        (cd "$out/work" && SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$bin/Fuzz$target" -merge=1 \
            -max_len="${max_len[$target]}" "$root/Fuzz/corpus/$target" "$out/corpus" >>"$log" 2>&1) || true
    fi
    summary+=("$(printf '%-20s %6s s %12s runs %8s/s %6s inputs in corpus %s' "$target" "$seconds" "${runs:-?}" \
        "${rate:-?}" "$corpus" "$([[ $status -ne 0 || $artifacts -gt 0 ]] && echo PROBLEM || echo ok)")")
done
echo
printf '%s\n' "${summary[@]}"
exit $failed
