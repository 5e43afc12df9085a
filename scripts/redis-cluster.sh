#!/usr/bin/env bash
# A local Redis Cluster on loopback, for trying the Redis store and measuring it.
#
#   scripts/redis-cluster.sh start DIR [MASTERS] [REPLICAS_PER_MASTER]   (default 3 masters, 1 replica each)
#   scripts/redis-cluster.sh stop DIR
#
# `start` runs one redis-server per node, each in DIR/<port>/ (config, AOF, nodes.conf, log, pid), on free ports whose
# cluster bus port (port + 10000) is free too; joins them with `redis-cli --cluster create`, waits for
# cluster_state:ok on every node and prints the seed list (127.0.0.1:P1,127.0.0.1:P2,...) on standard output.
# The nodes keep running after the script ends; `stop` ends them. Installs nothing: it needs redis-server and
# redis-cli (Debian: redis-server, redis-tools).
set -euo pipefail

usage() {
    echo "usage: $0 start DIR [MASTERS] [REPLICAS_PER_MASTER] | $0 stop DIR" >&2
    exit 64
}

fail() {
    echo "redis-cluster.sh: $*" >&2
    exit 1
}

# Whether something listens on a loopback port (bash's /dev/tcp connects; a refused connection fails).
port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# The pids of the nodes started in DIR, one per line.
node_pids() {
    local file
    for file in "$1"/*/redis.pid; do
        [ -f "$file" ] && cat "$file"
    done
    return 0
}

start() {
    local dir=$1 masters=${2:-3} replicas=${3:-1}
    command -v redis-server >/dev/null 2>&1 ||
        fail "redis-server is not installed (Debian: apt-get install redis-server); nothing was started"
    command -v redis-cli >/dev/null 2>&1 ||
        fail "redis-cli is not installed (Debian: apt-get install redis-tools); nothing was started"
    [[ $masters =~ ^[0-9]+$ && $masters -ge 3 ]] ||
        fail "MASTERS must be a number of at least 3 (a cluster needs 3 masters), not '$masters'"
    [[ $replicas =~ ^[0-9]+$ ]] || fail "REPLICAS_PER_MASTER must be a number, not '$replicas'"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -n "$(node_pids "$dir")" ]; then
        fail "$dir already holds nodes; run '$0 stop $dir' first"
    fi

    local count=$((masters * (1 + replicas))) port=$((15000 + RANDOM % 5000)) tries=0
    local -a ports=()
    while [ ${#ports[@]} -lt "$count" ]; do
        tries=$((tries + 1))
        [ $tries -le 500 ] || fail "found no free pair of ports (port and port+10000) after 500 tries"
        port=$((port + 1))
        [ $port -lt 22000 ] || port=15000
        if port_in_use "$port" || port_in_use $((port + 10000)); then continue; fi
        mkdir -p "$dir/$port"
        cat >"$dir/$port/redis.conf" <<EOF
port $port
bind 127.0.0.1
dir $dir/$port
daemonize yes
pidfile $dir/$port/redis.pid
logfile $dir/$port/redis.log
cluster-enabled yes
cluster-config-file nodes.conf
cluster-node-timeout 2000
repl-diskless-sync-delay 0
appendonly yes
appendfsync always
save ""
EOF
        if ! redis-server "$dir/$port/redis.conf" >/dev/null 2>&1; then
            rm -rf "${dir:?}/$port"
            continue
        fi
        # Up when it answers PING; a node that lost the race for its port exits and is skipped.
        local up=0 attempt
        for attempt in $(seq 1 100); do
            if [ "$(redis-cli -p "$port" ping 2>/dev/null)" = "PONG" ]; then
                up=1
                break
            fi
            sleep 0.05
        done
        if [ $up -eq 1 ]; then
            ports+=("$port")
        else
            [ -f "$dir/$port/redis.pid" ] && kill -9 "$(cat "$dir/$port/redis.pid")" 2>/dev/null || true
            rm -rf "${dir:?}/$port"
        fi
    done

    local -a addresses=()
    for port in "${ports[@]}"; do addresses+=("127.0.0.1:$port"); done
    if ! redis-cli --cluster create "${addresses[@]}" --cluster-replicas "$replicas" --cluster-yes \
        >"$dir/create.log" 2>&1; then
        fail "redis-cli --cluster create failed (see $dir/create.log); stop the nodes with '$0 stop $dir'"
    fi
    for port in "${ports[@]}"; do
        local ok=0 attempt
        for attempt in $(seq 1 200); do
            if redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; then
                ok=1
                break
            fi
            sleep 0.05
        done
        [ $ok -eq 1 ] || fail "node $port did not reach cluster_state:ok within 10 s; stop with '$0 stop $dir'"
    done
    # Every node must also know every replica as one (gossip takes a moment after `create`).
    local expected=$((masters * replicas))
    for port in "${ports[@]}"; do
        local known=0 attempt
        for attempt in $(seq 1 200); do
            known=$(redis-cli -p "$port" cluster nodes 2>/dev/null | awk '$3 ~ /slave/' | wc -l)
            [ "$known" -eq "$expected" ] && break
            sleep 0.05
        done
        [ "$known" -eq "$expected" ] ||
            fail "node $port knows $known replicas, not $expected, after 10 s; stop with '$0 stop $dir'"
    done
    # Redis 7.0 lists a replica in CLUSTER SLOTS only once its master has written something (replication offset
    # above 0): a FLUSHALL on each new, empty master does, and clients then see the replicas too.
    if [ "$replicas" -gt 0 ]; then
        for port in "${ports[@]}"; do
            if redis-cli -p "$port" role 2>/dev/null | head -1 | grep -q '^master$'; then
                redis-cli -p "$port" flushall >/dev/null
            fi
        done
        for port in "${ports[@]}"; do
            local listed=0 attempt
            for attempt in $(seq 1 200); do
                listed=$(redis-cli -p "$port" cluster slots 2>/dev/null | grep -cE '^[0-9a-f]{40}$' || true)
                [ "$listed" -eq "$count" ] && break
                sleep 0.05
            done
            [ "$listed" -eq "$count" ] ||
                fail "node $port lists $listed nodes in CLUSTER SLOTS, not $count, after 10 s; stop with '$0 stop $dir'"
        done
    fi
    local IFS=,
    echo "${addresses[*]}"
}

stop() {
    local dir=$1 pid
    [ -d "$dir" ] || fail "$dir does not exist"
    local -a pids=()
    while read -r pid; do [ -n "$pid" ] && pids+=("$pid"); done < <(node_pids "$dir")
    [ ${#pids[@]} -gt 0 ] || { echo "no nodes in $dir" >&2; return 0; }
    kill -TERM "${pids[@]}" 2>/dev/null || true
    local attempt
    for attempt in $(seq 1 100); do
        local alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.05
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    rm -f "$dir"/*/redis.pid
}

[ $# -ge 2 ] || usage
case $1 in
start) start "$2" "${3:-3}" "${4:-1}" ;;
stop) [ $# -eq 2 ] || usage; stop "$2" ;;
*) usage ;;
esac
