# Shared helpers for the integration tests; sourced by every NN-*.sh (and by bench/run).
#
# A test does:   . "$(dirname "$0")/lib.sh"
#                start_zk; start_broker b1 num.partitions=3; ...; pass
# Everything a test starts is recorded by PID and stopped by the EXIT trap, and the
# test's temp dir ($SF_TMP, under ${TMPDIR:-/tmp}) is removed (kept with SF_KEEP_TMP=1).
#
# Environment: SF_BUILD_DIR (default: <source>/build), SF_KEEP_TMP.

set -euo pipefail

SF_TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SF_SRC_DIR=$(cd "$SF_TEST_DIR/../.." && pwd)
SF_BUILD_DIR=$(cd "${SF_BUILD_DIR:-$SF_SRC_DIR/build}" 2>/dev/null && pwd || echo "${SF_BUILD_DIR:-$SF_SRC_DIR/build}")
STREAMFLOWD=${STREAMFLOWD:-$SF_BUILD_DIR/broker/streamflowd}
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1

SF_TEST_NAME=$(basename "$0" .sh)
SF_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sf-$SF_TEST_NAME.XXXXXX")
SF_PIDS=()           # every background process we started, in start order
declare -A SF_BROKER_PID=() SF_BROKER_PORT=() SF_BROKER_CONF=() SF_BROKER_LOG=() SF_BROKER_ID=()
declare -A SF_ZK_PID=() SF_ZK_PORT=() SF_ZK_DIR=()
ZK_PORT= ZK_CONNECT= BOOTSTRAP= BROKER_PORT=

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# fail MESSAGE: end the test as failed.
fail() {
    printf '[%s] FAIL: %s\n' "$(date +%H:%M:%S)" "$*"
    exit 1
}

# skip REASON: end the test as skipped (only when a prerequisite is genuinely absent).
skip() {
    printf '[%s] SKIP: %s\n' "$(date +%H:%M:%S)" "$*"
    exit 77
}

pass() {
    log "OK: $SF_TEST_NAME"
    exit 0
}

# need_cmd CMD...: skip unless every command exists.
need_cmd() {
    local c
    for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"; done
}

# need_py MODULE...: skip unless /usr/bin/python3 can import every module.
need_py() {
    local m
    for m in "$@"; do "$PY" -c "import $m" 2>/dev/null || skip "python3 module $m is not installed"; done
}

assert_eq() { # assert_eq EXPECTED ACTUAL WHAT
    [[ "$1" == "$2" ]] || fail "$3: expected '$1', got '$2'"
}

# wait_until SECONDS WHAT CMD...: poll CMD (every 0.2s) until it succeeds.
wait_until() {
    local limit=$1 what=$2 deadline
    shift 2
    deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || fail "timed out after ${limit}s waiting for $what"
        sleep 0.2
    done
}

# free_port: print a TCP port free on 127.0.0.1, outside the ephemeral range so that
# client connections cannot take it between here and the bind.
free_port() {
    local p i
    for i in $(seq 1 200); do
        p=$((20000 + RANDOM % 12000))
        # free_port runs in $(...) subshells: remember handed-out ports in a file.
        grep -qx "$p" "$SF_TMP/.ports" 2>/dev/null && continue
        if "$PY" -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.close()' "$p" 2>/dev/null; then
            echo "$p" >>"$SF_TMP/.ports"
            echo "$p"
            return 0
        fi
    done
    fail "no free port found"
}

# port_open PORT: true if something accepts TCP connections on 127.0.0.1:PORT.
port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# sf_bg CMD...: start CMD in the background, record its PID for cleanup; PID in $!.
# (Redirections on the sf_bg call apply to the caller: for FIFOs use "cmd <fifo &" directly.)
sf_bg() {
    "$@" &
    SF_PIDS+=("$!")
}

# alive PID
alive() { kill -0 "$1" 2>/dev/null; }

# stop_pid PID [SECONDS]: SIGTERM, wait, SIGKILL after the timeout. Returns the exit status
# (or 137 when it had to be killed).
stop_pid() {
    local pid=$1 limit=${2:-20} i st=0
    alive "$pid" || { wait "$pid" 2>/dev/null || st=$?; return $st; }
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < limit * 10; i++)); do
        alive "$pid" || break
        sleep 0.1
    done
    if alive "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        return 137
    fi
    wait "$pid" 2>/dev/null || st=$?
    return $st
}

# ---------------------------------------------------------------------------------------
# ZooKeeper (Debian's package, standalone, our own config, loopback only)

zk_classpath() {
    local cp="$1:/usr/share/java/zookeeper.jar" j
    # zookeeper.jar's manifest names its dependencies; add a logging binding if present.
    for j in /usr/share/java/slf4j-simple.jar; do [[ -f $j ]] && cp+=":$j"; done
    echo "$cp"
}

# start_zk [NAME]: start (or restart, same port and data) a standalone ZooKeeper.
# Sets ZK_PORT and ZK_CONNECT (with the /streamflow chroot).
start_zk() {
    local name=${1:-zk} dir port pid
    [[ -f /usr/share/java/zookeeper.jar ]] || skip "ZooKeeper (Debian package zookeeper) is not installed"
    command -v java >/dev/null || skip "java is not installed"
    dir=${SF_ZK_DIR[$name]:-$SF_TMP/$name}
    if [[ -z ${SF_ZK_PORT[$name]:-} ]]; then
        port=$(free_port)
        mkdir -p "$dir/data"
        cat >"$dir/zoo.cfg" <<EOF
tickTime=500
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
minSessionTimeout=1000
maxSessionTimeout=60000
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
EOF
        SF_ZK_PORT[$name]=$port
        SF_ZK_DIR[$name]=$dir
    fi
    port=${SF_ZK_PORT[$name]}
    if port_open "$port"; then
        fail "ZooKeeper port $port is already taken"
    fi
    local javacmd
    javacmd=$(printf '%q ' java -Xmx256m -XX:+UseSerialGC -Dzookeeper.admin.enableServer=false \
        -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -cp "$(zk_classpath "$dir")" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg")
    (cd "$dir" && eval "exec $javacmd") >>"$dir/zookeeper.log" 2>&1 &
    pid=$!
    SF_PIDS+=("$pid")
    SF_ZK_PID[$name]=$pid
    echo "$pid" >"$dir/zk.pid"
    # $dir/restart.sh: SIGKILL this ZooKeeper and start it again (same port and data), for
    # programs that restart ZooKeeper themselves (zkcheck --restart-cmd). The new PID goes to
    # $dir/zk.pid and $SF_TMP/.pids (stopped by the cleanup).
    cat >"$dir/restart.sh" <<RESTART
#!/usr/bin/env bash
set -e
old=\$(cat "$dir/zk.pid")
kill -KILL "\$old" 2>/dev/null || true
# (the old process may stay a zombie of the test shell: wait for the port to close instead)
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do sleep 0.05; done
cd "$dir"
$javacmd >>"$dir/zookeeper.log" 2>&1 </dev/null &
echo \$! >"$dir/zk.pid"
echo \$! >>"$SF_TMP/.pids"
exec "$PY" "$SF_TEST_DIR/zkq.py" 127.0.0.1:$port wait 30
RESTART
    chmod +x "$dir/restart.sh"
    if ! "$PY" "$SF_TEST_DIR/zkq.py" "127.0.0.1:$port" wait 60; then
        tail -n 20 "$dir/zookeeper.log" | sed 's/^/  zk| /'
        fail "ZooKeeper did not start on port $port"
    fi
    ZK_PORT=$port
    ZK_CONNECT="127.0.0.1:$port/streamflow"
    log "ZooKeeper $name up on 127.0.0.1:$port (pid $pid)"
}

# stop_zk [NAME]: SIGTERM and wait.
stop_zk() {
    local name=${1:-zk}
    stop_pid "${SF_ZK_PID[$name]}" 20 || true
    log "ZooKeeper $name stopped"
}

kill9_zk() {
    local name=${1:-zk}
    kill -KILL "${SF_ZK_PID[$name]}" 2>/dev/null || true
    wait "${SF_ZK_PID[$name]}" 2>/dev/null || true
    log "ZooKeeper $name killed (SIGKILL)"
}

# zk CMD PATH: query the test ZooKeeper (see zkq.py); paths are absolute (include /streamflow).
zk() {
    "$PY" "$SF_TEST_DIR/zkq.py" "127.0.0.1:$ZK_PORT" "$@"
}

# ---------------------------------------------------------------------------------------
# streamflowd

need_broker() {
    [[ -x $STREAMFLOWD ]] || fail "$STREAMFLOWD not built (set SF_BUILD_DIR or run make)"
}

# write_config FILE KEY=VALUE...: the default test config, each KEY=VALUE replacing the
# default (or appended). A KEY= with an empty value removes the key.
write_config() {
    local file=$1 dir
    shift
    dir=$(dirname "$file")
    mkdir -p "$dir"
    {
        echo "broker.id=1"
        echo "listeners=PLAINTEXT://127.0.0.1:$(free_port)"
        echo "log.dirs=$dir/data"
        echo "zookeeper.connect=${ZK_CONNECT:-127.0.0.1:1/streamflow}"
        echo "zookeeper.session.timeout.ms=6000"
        echo "num.partitions=1"
        echo "default.replication.factor=1"
        echo "auto.create.topics.enable=true"
        echo "log.level=info"
        local kv
        for kv in "$@"; do echo "$kv"; done
    } | awk -F= '
        { k = $1; v = substr($0, length(k) + 2) }
        !(k in val) { order[n++] = k }
        { val[k] = v }
        END { for (i = 0; i < n; i++) if (val[order[i]] != "") print order[i] "=" val[order[i]] }
    ' >"$file"
}

# conf_get FILE KEY
conf_get() {
    sed -n "s/^$2=//p" "$1" | tail -n 1
}

# start_broker NAME [KEY=VALUE...]: start streamflowd NAME. The first start writes its
# config (defaults + overrides); a restart reuses it, with overrides applied on top.
# Waits until it answers ApiVersions and lists itself in Metadata. Sets BOOTSTRAP and
# BROKER_PORT (the PLAINTEXT listener, if any).
start_broker() {
    local name=${1:-b1} conf dir logf pid port id listeners
    shift || true
    need_broker
    dir=$SF_TMP/$name
    conf=$dir/server.properties
    if [[ ! -f $conf ]]; then
        write_config "$conf" "$@"
    elif (($#)); then
        local old
        old=$(grep -v '^#' "$conf")
        # shellcheck disable=SC2046
        mapfile -t _kv <<<"$old"
        write_config "$conf.new" "${_kv[@]}" "$@"
        mv "$conf.new" "$conf"
    fi
    listeners=$(conf_get "$conf" listeners)
    port=$(sed -n 's/.*PLAINTEXT:\/\/[^:,]*:\([0-9]*\).*/\1/p' <<<"$listeners")
    id=$(conf_get "$conf" broker.id)
    logf=$dir/streamflowd.log
    echo "=== start $(date +%H:%M:%S.%N)" >>"$logf"
    "$STREAMFLOWD" -c "$conf" >>"$logf" 2>&1 &
    pid=$!
    SF_PIDS+=("$pid")
    SF_BROKER_PID[$name]=$pid SF_BROKER_CONF[$name]=$conf SF_BROKER_LOG[$name]=$logf
    SF_BROKER_PORT[$name]=$port SF_BROKER_ID[$name]=$id
    local deadline=$((SECONDS + 60)) ok=0 why=""
    while ((SECONDS < deadline)); do
        if ! alive "$pid"; then
            wait "$pid" 2>/dev/null || true
            tail -n 30 "$logf" | sed 's/^/  broker| /'
            fail "streamflowd $name exited during start-up"
        fi
        if [[ -n $port ]]; then
            if why=$("$PY" "$SF_TEST_DIR/kwire.py" ready "127.0.0.1:$port" --broker-id "$id" 2>&1); then
                ok=1
                break
            fi
        else
            # SSL-only listeners: wait for the first listener port to accept connections.
            local p1
            p1=$(sed -n 's/^[A-Z_]*:\/\/[^:,]*:\([0-9]*\).*/\1/p' <<<"$listeners")
            if port_open "$p1"; then ok=1; break; fi
        fi
        sleep 0.2
    done
    if ((ok == 0)); then
        echo "  last probe: $why"
        tail -n 30 "$logf" | sed 's/^/  broker| /'
        fail "streamflowd $name did not become ready within 60s"
    fi
    BROKER_PORT=$port
    BOOTSTRAP=127.0.0.1:$port
    log "streamflowd $name up on ${listeners} (pid $pid)"
}

# broker_pid NAME / broker_log NAME / broker_conf NAME
broker_pid() { echo "${SF_BROKER_PID[${1:-b1}]}"; }
broker_log() { echo "${SF_BROKER_LOG[${1:-b1}]}"; }
broker_conf() { echo "${SF_BROKER_CONF[${1:-b1}]}"; }
broker_datadir() { conf_get "${SF_BROKER_CONF[${1:-b1}]}" log.dirs | cut -d, -f1; }

# stop_broker NAME: SIGTERM; fails the test unless it exits with status 0 within 30s.
stop_broker() {
    local name=${1:-b1} pid st=0
    pid=${SF_BROKER_PID[$name]}
    stop_pid "$pid" 30 || st=$?
    if ((st == 137)); then
        tail -n 20 "${SF_BROKER_LOG[$name]}" | sed 's/^/  broker| /'
        fail "streamflowd $name did not exit within 30s of SIGTERM (killed)"
    fi
    if ((st != 0)); then
        tail -n 20 "${SF_BROKER_LOG[$name]}" | sed 's/^/  broker| /'
        fail "streamflowd $name exited with status $st after SIGTERM"
    fi
    log "streamflowd $name stopped cleanly"
}

# kill9_broker NAME
kill9_broker() {
    local name=${1:-b1} pid
    pid=${SF_BROKER_PID[$name]}
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    log "streamflowd $name killed (SIGKILL)"
}

# broker_alive NAME: fails the test (with the log tail) if the broker process is gone.
broker_alive() {
    local name=${1:-b1}
    if ! alive "${SF_BROKER_PID[$name]}"; then
        local st=0
        wait "${SF_BROKER_PID[$name]}" 2>/dev/null || st=$?
        tail -n 30 "${SF_BROKER_LOG[$name]}" | sed 's/^/  broker| /'
        fail "streamflowd $name died (exit status $st)"
    fi
}

# broker_rss_kb NAME
broker_rss_kb() { ps -o rss= -p "${SF_BROKER_PID[${1:-b1}]}" | tr -d ' '; }

# lines FORMAT N: N lines, FORMAT (printf, every conversion a number) applied to 1..N.
lines() { awk -v fmt="$1\n" -v n="$2" 'BEGIN { for (i = 1; i <= n; i++) printf fmt, i, i, i, i }'; }

# kcat with the test bootstrap and IPv4 only; extra args follow.
kc() { kcat -b "$BOOTSTRAP" -X broker.address.family=v4 "$@"; }

# ---------------------------------------------------------------------------------------
# replicated clusters

# start_cluster [KEY=VALUE...]: ZooKeeper and brokers b1..b3 (ids 1..3, 6 s sessions, a 4 s
# replica lag, 6 partitions of 3 replicas by default), with the overrides. Sets ALL, the
# bootstrap list of the three.
# With CLUSTER_HTTP=1 each broker also serves HTTP on http://127.0.0.1:${HP[i]}.
declare -A HP
start_cluster() {
    local i http
    start_zk
    for i in 1 2 3; do
        http=()
        if [[ ${CLUSTER_HTTP:-0} == 1 ]]; then
            HP[$i]=$(free_port)
            http=("http.listeners=http://127.0.0.1:${HP[$i]}")
        fi
        start_broker "b$i" broker.id=$i zookeeper.session.timeout.ms=6000 \
            replica.lag.time.max.ms=4000 num.partitions=6 default.replication.factor=3 \
            "${http[@]}" "$@"
    done
    ALL=127.0.0.1:${SF_BROKER_PORT[b1]},127.0.0.1:${SF_BROKER_PORT[b2]},127.0.0.1:${SF_BROKER_PORT[b3]}
}

# create_topic TOPIC PARTITIONS REPLICAS [KEY=VALUE...]: CreateTopics (confluent-kafka) to
# ALL, then wait until every ISR has all the replicas.
create_topic() {
    local topic=$1
    "$PY" - "$ALL" "$@" <<'PY' || fail "creating topic $topic"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
boot, topic, n, rf = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
config = dict(kv.split("=", 1) for kv in sys.argv[5:])
a = AdminClient({"bootstrap.servers": boot, "broker.address.family": "v4"})
a.create_topics([NewTopic(topic, n, rf, config=config)])[topic].result(30)
PY
    "$PY" "$SF_TEST_DIR/cluster_state.py" "127.0.0.1:$ZK_PORT" "$topic" wait-isr "$3" 30 ||
        fail "the ISRs of $topic did not start with all $3 replicas"
}

# start_acked_producer TOPIC: an acks=all producer of numbered records, each acknowledged one
# written to $ACKED, until $SF_TMP/stop exists. Sets ACKED and PROD (its PID).
start_acked_producer() {
    ACKED=$SF_TMP/acked.txt
    : >"$ACKED"
    sf_bg "$PY" "$SF_TEST_DIR/acked_producer.py" "$ALL" "$1" "$ACKED" "$SF_TMP/stop" all 100000000
    PROD=$!
}

# more_acks N: wait (up to 120 s) for N more acknowledgements in $ACKED.
more_acks() {
    local from
    from=$(wc -l <"$ACKED")
    wait_until 120 "$1 more acknowledgements" bash -c "(( \$(wc -l <'$ACKED') >= $from + $1 ))"
}

# stop_acked_producer TOPIC: stop it and read every acknowledged record back.
stop_acked_producer() {
    touch "$SF_TMP/stop"
    wait "$PROD" || fail "the producer exited with status $?"
    log "$(wc -l <"$ACKED") records acknowledged in total"
    "$PY" "$SF_TEST_DIR/verify_acked.py" "$ALL" "$1" "$ACKED" || fail "acknowledged records of $1"
}

# ---------------------------------------------------------------------------------------
# cleanup

sf_cleanup() {
    local st=$? i pid
    trap - EXIT INT TERM
    set +e
    # Processes started by helper scripts (not children of this shell) list their PIDs here.
    if [[ -f $SF_TMP/.pids ]]; then
        while read -r pid; do SF_PIDS+=("$pid"); done <"$SF_TMP/.pids"
    fi
    # Stop in reverse start order: clients, then brokers, then ZooKeeper.
    for ((i = ${#SF_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${SF_PIDS[$i]}
        alive "$pid" && kill -TERM "$pid" 2>/dev/null
    done
    for ((i = 0; i < 100; i++)); do
        local any=0
        for pid in "${SF_PIDS[@]}"; do alive "$pid" && any=1; done
        ((any)) || break
        sleep 0.1
    done
    for pid in "${SF_PIDS[@]}"; do
        if alive "$pid"; then kill -KILL "$pid" 2>/dev/null; fi
        wait "$pid" 2>/dev/null
    done
    if ((st != 0 && st != 77)); then
        local name
        for name in "${!SF_BROKER_LOG[@]}"; do
            echo "--- last lines of streamflowd $name log (${SF_BROKER_LOG[$name]}):"
            tail -n 40 "${SF_BROKER_LOG[$name]}" | sed 's/^/  broker| /'
        done
    fi
    if [[ ${SF_KEEP_TMP:-0} == 1 ]]; then
        echo "temp dir kept: $SF_TMP"
    else
        rm -rf "$SF_TMP"
    fi
    exit "$st"
}
trap sf_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
