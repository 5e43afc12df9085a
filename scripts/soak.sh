#!/usr/bin/env bash
# Soak: several processes donating, importing, listing, exporting and deleting against one store at once, for a
# bounded time; then every acknowledged donation that was not deleted must be in `export` (none lost), none that was
# deleted may come back, and the ranking state must be consistent (top K equals brute force, and the store equals
# one rebuilt from its export: SoakCheckTests in the robustness tests).
#
#   scripts/soak.sh            30 s, 3 donors, 1 importer, 2 listers, 1 deleter
#   scripts/soak.sh 120        120 s
#   SOAK_DONORS=6 SOAK_LISTERS=3 scripts/soak.sh 60
#   SOAK_KEEP=1 scripts/soak.sh     keep the store and the logs (their directory is printed)
#   SOAK_STORE_URL=redis://127.0.0.1:7000 scripts/soak.sh
#                              the same against a Redis Cluster (its account "default" is emptied first); the
#                              ranking check, which reads a SQLite store's files, is left out
#
# Exit status: 0 when nothing was lost, nothing came back and the store is consistent; 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${1:-${SOAK_SECONDS:-30}}
donors=${SOAK_DONORS:-3}
listers=${SOAK_LISTERS:-2}

echo "building..."
swift build --build-tests 2>&1 | tail -1
bin=${SUGGEST_BINARY:-$(swift build --show-bin-path)/suggest}
work=$(mktemp -d /tmp/suggest-soak-XXXXXX)
store=${SOAK_STORE_URL:-$work/store}
logs=$work/logs
mkdir -p "$logs"
cleanup() { [[ ${SOAK_KEEP:-0} == 1 ]] || rm -rf "$work"; }
trap cleanup EXIT
export SWIFT_BACKTRACE=enable=no

"$bin" config --store "$store" --max-age-days 0 --idle-days 0 >/dev/null
[[ $store == redis://* ]] && "$bin" delete --all --store "$store" >/dev/null
deadline=$(($(date +%s) + seconds))
now() { date +%s%N; }

# A donor records one donation per process. Every fifth goes to one of the "del-K" conversations the deleter
# removes whole. Log lines: "sent ID CONV START", then "ack ID CONV START END" or "error ID".
donor() {
    local worker=$1 n=0 id conversation start output
    while (($(date +%s) < deadline)); do
        n=$((n + 1))
        id="w$worker-$n"
        if ((n % 5 == 0)); then conversation="del-$((RANDOM % 4))"; else conversation="c-$((RANDOM % 40))"; fi
        start=$(now)
        echo "sent $id $conversation $start" >>"$logs/donor-$worker"
        if output=$("$bin" donate --store "$store" --conversation "$conversation" --identifier "$id" \
            --group-name "Group $conversation" --recipient "p-$((RANDOM % 20))=Person $((RANDOM % 20))" \
            2>>"$logs/errors-donor-$worker"); then
            if [[ $output == "recorded $id" ]]; then
                echo "ack $id $conversation $start $(now)" >>"$logs/donor-$worker"
            else
                echo "error $id unexpected output: $output" >>"$logs/donor-$worker"
            fi
        else
            echo "error $id" >>"$logs/donor-$worker"
        fi
    done
}

# The importer records batches of 40 donations in one `import` each (all or nothing).
importer() {
    local batch=0 start k line
    while (($(date +%s) < deadline)); do
        batch=$((batch + 1))
        start=$(now)
        : >"$logs/batch"
        for k in $(seq 1 40); do
            echo "sent imp-$batch-$k c-$((k % 40)) $start" >>"$logs/importer"
            line="{\"identifier\":\"imp-$batch-$k\",\"date\":$(date +%s),\"direction\":\"incoming\","
            line+="\"intent\":{\"conversationIdentifier\":\"c-$((k % 40))\",\"contentTypes\":[\"public.jpeg\"]}}"
            echo "$line" >>"$logs/batch"
        done
        if "$bin" import - --quiet --store "$store" <"$logs/batch" >/dev/null 2>>"$logs/errors-importer"; then
            local end
            end=$(now)
            for k in $(seq 1 40); do echo "ack imp-$batch-$k c-$((k % 40)) $start $end" >>"$logs/importer"; done
        else
            echo "error batch $batch" >>"$logs/importer"
        fi
    done
}

# A lister asks what the share sheet asks, and now and then exports everything.
lister() {
    local worker=$1 n=0
    while (($(date +%s) < deadline)); do
        n=$((n + 1))
        if "$bin" list --json --limit 8 --store "$store" >/dev/null 2>>"$logs/errors-lister-$worker"; then
            echo ok >>"$logs/lister-$worker"
        else
            echo error >>"$logs/lister-$worker"
        fi
        if ((n % 10 == 0)); then
            "$bin" export --store "$store" >/dev/null 2>>"$logs/errors-lister-$worker" && echo ok >>"$logs/lister-$worker" \
                || echo error >>"$logs/lister-$worker"
        fi
    done
}

# The deleter removes acknowledged donations by identifier, and whole "del-K" conversations, logging when each
# delete started and ended: "deleted-id ID" and "deleted-conversation CONV START END".
deleter() {
    local n=0 victim conversation start
    while (($(date +%s) < deadline)); do
        n=$((n + 1))
        sleep 0.2
        if ((n % 2 == 0)); then
            victim=$(cat "$logs"/donor-* 2>/dev/null | awk '$1 == "ack" && $3 !~ /^del-/ { print $2 }' | shuf -n 1 || true)
            [[ -n $victim ]] || continue
            if "$bin" delete --identifier "$victim" --store "$store" >/dev/null 2>>"$logs/errors-deleter"; then
                echo "deleted-id $victim" >>"$logs/deleter"
            else
                echo "error delete $victim" >>"$logs/deleter"
            fi
        else
            conversation="del-$((RANDOM % 4))"
            start=$(now)
            if "$bin" delete --conversation "$conversation" --store "$store" >/dev/null 2>>"$logs/errors-deleter"; then
                echo "deleted-conversation $conversation $start $(now)" >>"$logs/deleter"
            else
                echo "error delete $conversation" >>"$logs/deleter"
            fi
        fi
    done
}

echo "soaking $store for $seconds s: $donors donors, 1 importer, $listers listers, 1 deleter..."
pids=()
for worker in $(seq 1 "$donors"); do donor "$worker" & pids+=($!); done
importer & pids+=($!)
for worker in $(seq 1 "$listers"); do lister "$worker" & pids+=($!); done
deleter & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
touch "$logs/deleter" "$logs/importer"

"$bin" export --store "$store" | grep -o '"identifier":"[^"]*"' | sed 's/"identifier":"//; s/"$//' >"$logs/exported"

# Every acknowledged donation is stored unless it was deleted: by identifier, or by a delete of its conversation
# that started after it was acknowledged. A donation of a deleted conversation whose delete overlapped it may be
# either; one acknowledged after every delete of its conversation had ended must be there.
set +e
awk '
    FILENAME ~ /exported$/ { stored[$1] = 1; nstored++; next }
    $1 == "sent" { sent++; next }
    $1 == "ack" { acked[$2] = $3; ackstart[$2] = $4; ackend[$2] = $5; nacked++; next }
    $1 == "error" { errors++; next }
    $1 == "deleted-id" { deletedid[$2] = 1; ndeletedid++; next }
    $1 == "deleted-conversation" { n = ++ndel[$2]; dstart[$2, n] = $3; dend[$2, n] = $4; nconvdeletes++; next }
    END {
        for (id in acked) {
            conversation = acked[id]
            mustgo = (id in deletedid); mustkeep = !mustgo
            for (i = 1; i <= ndel[conversation]; i++) {
                if (dstart[conversation, i] > ackend[id]) mustgo = 1
                else if (dend[conversation, i] >= ackstart[id]) mustkeep = 0
            }
            if (mustgo && (id in stored)) { zombies++; print "came back after its delete: " id > "/dev/stderr" }
            else if (!mustgo && mustkeep && !(id in stored)) { lost++; print "lost: " id > "/dev/stderr" }
            if (mustgo) gone++
        }
        for (id in stored) if (!(id in acked)) unacked++
        printf "donations sent:          %d\n", sent
        printf "acknowledged:            %d\n", nacked
        printf "stored at the end:       %d\n", nstored
        printf "deleted (by identifier): %d\n", ndeletedid
        printf "conversation deletes:    %d (acknowledged donations deleted in all: %d)\n", nconvdeletes, gone
        printf "stored, not acknowledged: %d\n", unacked
        printf "LOST:                    %d\n", lost
        printf "CAME BACK AFTER DELETE:  %d\n", zombies
        printf "failed writes:           %d\n", errors
        exit (lost > 0 || zombies > 0 || errors > 0) ? 1 : 0
    }
' "$logs/exported" "$logs"/donor-* "$logs/importer" "$logs/deleter" | tee "$logs/summary"
verdict=${PIPESTATUS[0]}
set -e

lists=$(cat "$logs"/lister-* 2>/dev/null | grep -c '^ok' || true)
list_errors=$(cat "$logs"/lister-* 2>/dev/null | grep -c '^error' || true)
locked=$(cat "$logs"/errors-* 2>/dev/null | grep -ci 'locked' || true)
echo "lists and exports:       $lists ok, $list_errors failed"
echo "'locked' on stderr:      $locked"
if [[ -n $(cat "$logs"/errors-* 2>/dev/null) ]]; then
    echo "stderr of failed commands (first lines):"
    cat "$logs"/errors-* | sort | uniq -c | sort -rn | head -5 | sed 's/^/  /'
fi

if [[ $store == redis://* ]]; then
    echo "ranking state: not checked on Redis (RedisConformanceTests compare it with the reference)"
else
    echo "checking the ranking state (SoakCheckTests)..."
    if SOAK_STORE=$store swift test --skip-build --filter SuggestRobustnessTests.SoakCheckTests 2>&1 | tee "$logs/check" \
        | grep -E "soak check:|Expectation failed" ; then :; fi
    grep -q "passed after" "$logs/check" || verdict=1
fi
[[ $list_errors == 0 && $locked == 0 ]] || verdict=1
[[ ${SOAK_KEEP:-0} == 1 ]] && echo "store and logs kept in $work"
if [[ $verdict == 0 ]]; then echo "soak: OK"; else echo "soak: FAILED"; fi
exit "$verdict"
