#!/usr/bin/env bash
# streamflowd start-up: command line, configuration errors, unreachable ZooKeeper,
# registration in ZooKeeper, duplicate broker.id, clean shutdown.
. "$(dirname "$0")/lib.sh"
need_broker

# --- command line ------------------------------------------------------------------------
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$SF_BUILD_DIR/config.h")
out=$("$STREAMFLOWD" --version 2>&1) || fail "--version exited with status $?"
[[ $out == *streamflowd* && $out == *"$version"* ]] || fail "--version printed '$out'; expected 'streamflowd' and '$version'"
out=$("$STREAMFLOWD" --help 2>&1) || fail "--help exited with status $?"
grep -qE -- '(^|[^-])-c\b' <<<"$out" || fail "--help does not mention -c: $out"
grep -q -- '--check-config' <<<"$out" || fail "--help does not mention --check-config: $out"
if "$STREAMFLOWD" --no-such-option >/dev/null 2>&1; then fail "an unknown option was accepted"; fi
log "command line ok"

# --- --check-config ----------------------------------------------------------------------
good=$SF_TMP/good/server.properties
write_config "$good"
out=$("$STREAMFLOWD" --check-config -c "$good" 2>&1) || fail "--check-config rejected a good config: $out"
log "good config accepted"

# bad_config NAME KEY OVERRIDES...: --check-config must exit non-zero with a short message
# (at most 3 lines) naming the key (KEY is an extended regex).
bad_config() {
    local name=$1 key=$2 conf out st=0
    shift 2
    conf=$SF_TMP/$name/server.properties
    write_config "$conf" "$@"
    out=$(timeout 30 "$STREAMFLOWD" --check-config -c "$conf" 2>&1) || st=$?
    ((st != 0)) || fail "$name: --check-config accepted a config with $*"
    ((st != 124)) || fail "$name: --check-config hung"
    grep -qE -- "$key" <<<"$out" || fail "$name: the error does not name '$key': $out"
    (($(grep -c . <<<"$out") <= 3)) || fail "$name: expected one clear line, got: $out"
    log "$name rejected: $(grep -E -- "$key" <<<"$out" | head -n 1)"
}
bad_config unknown-key 'no\.such\.key' no.such.key=1
bad_config bad-broker-id 'broker\.id' broker.id=abc
bad_config bad-partitions 'num\.partitions' num.partitions=zero
bad_config bad-segment-bytes 'log\.segment\.bytes' log.segment.bytes=-5
bad_config bad-client-auth 'ssl\.client\.auth' ssl.client.auth=sometimes
bad_config bad-listener 'listeners' "listeners=GOPHER://127.0.0.1:70"
# (naming the directory is as good as naming the key here)
bad_config missing-logdir-parent 'log\.dirs|/nonexistent-sf-test/a/data' log.dirs=/nonexistent-sf-test/a/data
bad_config missing-zk 'zookeeper\.connect' zookeeper.connect=

st=0
out=$("$STREAMFLOWD" --check-config -c "$SF_TMP/does-not-exist.properties" 2>&1) || st=$?
((st != 0)) || fail "a missing config file was accepted"
grep -qF "does-not-exist.properties" <<<"$out" || fail "missing config file: the error does not name the file: $out"

# The same check happens on a real start, before anything else.
st=0
out=$(timeout 30 "$STREAMFLOWD" -c "$SF_TMP/unknown-key/server.properties" 2>&1) || st=$?
((st != 0 && st != 124)) || fail "streamflowd started with an unknown key (status $st)"
grep -qF no.such.key <<<"$out" || fail "start with an unknown key: the error does not name it: $out"
log "bad configs rejected"

# --- unreachable ZooKeeper ---------------------------------------------------------------
closed=$(free_port)
conf=$SF_TMP/nozk/server.properties
write_config "$conf" "zookeeper.connect=127.0.0.1:$closed/streamflow" zookeeper.session.timeout.ms=3000
st=0
out=$(timeout 60 "$STREAMFLOWD" -c "$conf" 2>&1) || st=$?
((st != 124)) || fail "streamflowd kept running for 60s with ZooKeeper unreachable: $(tail -n 3 <<<"$out")"
((st != 0)) || fail "streamflowd exited with status 0 although ZooKeeper is unreachable"
grep -qiE 'error.*zookeeper' <<<"$out" || fail "unreachable ZooKeeper: no error mentioning ZooKeeper: $(tail -n 5 <<<"$out")"
log "unreachable ZooKeeper: exit $st: $(grep -iE 'error.*zookeeper' <<<"$out" | tail -n 1)"

# --- registration ------------------------------------------------------------------------
start_zk
start_broker b1
node=/streamflow/brokers/ids/1
json=$(zk get "$node") || fail "$node does not exist"
log "$node = $json"
"$PY" - "$json" "$BROKER_PORT" <<'EOF' || fail "registration node content is wrong"
import json, sys
d = json.loads(sys.argv[1]); port = int(sys.argv[2])
ok = True
def want(cond, what):
    global ok
    if not cond:
        print("  " + what); ok = False
want(d.get("host") == "127.0.0.1", "host is %r, expected 127.0.0.1" % d.get("host"))
want(d.get("port") == port, "port is %r, expected %d" % (d.get("port"), port))
want("PLAINTEXT://127.0.0.1:%d" % port in (d.get("endpoints") or []),
     "endpoints %r lack PLAINTEXT://127.0.0.1:%d" % (d.get("endpoints"), port))
want(isinstance(d.get("version"), int), "no integer version")
sys.exit(0 if ok else 1)
EOF
owner=$(zk stat "$node" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["ephemeralOwner"])')
[[ $owner != 0 ]] || fail "$node is not ephemeral"
zk get /streamflow/cluster/id >/dev/null || fail "/streamflow/cluster/id was not created"
[[ -d $(broker_datadir b1) ]] || fail "log dir $(broker_datadir b1) was not created"

# --- a second broker with the same broker.id must refuse to start --------------------------
conf=$SF_TMP/dup/server.properties
write_config "$conf" "zookeeper.connect=$ZK_CONNECT"
st=0
out=$(timeout 60 "$STREAMFLOWD" -c "$conf" 2>&1) || st=$?
((st != 124)) || fail "a second broker with broker.id=1 kept running"
((st != 0)) || fail "a second broker with broker.id=1 exited with status 0"
dup_re='error.*(broker\.id|already registered)'
grep -qiE "$dup_re" <<<"$out" || fail "duplicate broker.id: no error naming it: $(tail -n 5 <<<"$out")"
log "duplicate broker.id refused: $(grep -iE "$dup_re" <<<"$out" | head -n 1)"
json2=$(zk get "$node") || fail "$node vanished after the duplicate start attempt"
assert_eq "$json" "$json2" "registration of broker 1 after the duplicate attempt"
broker_alive b1

# --- clean shutdown removes the registration ---------------------------------------------
stop_broker b1
wait_until 30 "$node to disappear after shutdown" bash -c "! \"$PY\" \"$SF_TEST_DIR/zkq.py\" 127.0.0.1:$ZK_PORT exists $node"
log "registration removed on shutdown"
pass
