#!/usr/bin/env bash
# The streamflow command's administration sub-commands against a real broker: topic
# create/list/describe/delete/alter, config get/set (topics, dynamic broker configs and the
# cluster-wide default), broker list, cluster status, in table and JSON output; command-line
# errors (exit 2), an unreachable bootstrap server (exit 3).
. "$(dirname "$0")/lib.sh"
SF=$SF_BUILD_DIR/admin/streamflow
[[ -x $SF ]] || fail "$SF not built (make admin/streamflow)"
start_zk
start_broker b1 num.partitions=2 log.retention.hours=100

OUT=$SF_TMP/out ERR=$SF_TMP/err
# run ARGS...: run streamflow against the test broker; stdout in $OUT, stderr in $ERR,
# exit status in $RC. runx ARGS...: the same without the bootstrap option.
runx() {
    RC=0
    timeout -k 5 60 "$SF" "$@" >"$OUT" 2>"$ERR" || RC=$?
}
run() { runx --bootstrap-server "$BOOTSTRAP" "$@"; }

# expect_rc CODE WHAT: the last run exited with CODE.
expect_rc() {
    if [[ $RC != "$1" ]]; then
        sed 's/^/  stdout| /' "$OUT" | head -n 20
        sed 's/^/  stderr| /' "$ERR" | head -n 20
        fail "$2: exit status $RC, expected $1"
    fi
}
# expect_out PATTERN WHAT / expect_err PATTERN WHAT: grep -E in the last stdout / stderr.
expect_out() {
    grep -Eq -- "$1" "$OUT" || { sed 's/^/  stdout| /' "$OUT" | head -n 30; fail "$2: stdout lacks /$1/"; }
}
expect_err() {
    grep -Eq -- "$1" "$ERR" || { sed 's/^/  stderr| /' "$ERR" | head -n 30; fail "$2: stderr lacks /$1/"; }
}
# jcheck WHAT PYTHON-EXPR: evaluate a Python expression over the last stdout parsed as JSON
# (bound to d); fails unless it is true.
jcheck() {
    "$PY" - "$OUT" "$2" <<'EOF' || fail "$1"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    print("  stdout is not JSON: %s" % e); print(open(sys.argv[1]).read()[:2000]); sys.exit(1)
ok = eval(sys.argv[2], {"d": d, "json": json})
if not ok:
    print("  false: %s" % sys.argv[2]); print(json.dumps(d, indent=1)[:3000]); sys.exit(1)
EOF
}

# --- version and help ---------------------------------------------------------------------
runx --version
expect_rc 0 "--version"
expect_out '^streamflow [0-9]+\.[0-9]+\.[0-9]+' "--version"
runx --help
expect_rc 0 "--help"
expect_out '^Usage: streamflow' "--help"
expect_out 'topic create' "--help lists the commands"
runx help topic
expect_rc 0 "help topic"
expect_out 'describe' "help topic"
for sub in "topic create" "topic list" "topic describe" "topic delete" "topic alter" \
    "config get" "config set" "broker list" "cluster status"; do
    # shellcheck disable=SC2086
    runx $sub --help
    expect_rc 0 "$sub --help"
    expect_out "^Usage: streamflow $sub" "$sub --help"
    # shellcheck disable=SC2086
    runx help $sub
    expect_rc 0 "help $sub"
    expect_out "^Usage: streamflow $sub" "help $sub"
done

# --- command-line errors: exit 2 with a message ---------------------------------------------
runx
expect_rc 2 "no command"
expect_err 'no command' "no command"
runx frobnicate
expect_rc 2 "unknown command"
expect_err "unknown command 'frobnicate'" "unknown command"
runx topic frobnicate
expect_rc 2 "unknown sub-command"
expect_err "unknown sub-command 'frobnicate'" "unknown sub-command"
run topic create adm-x --frobnicate
expect_rc 2 "unknown option"
expect_err "unknown option '--frobnicate'" "unknown option"
run topic create
expect_rc 2 "missing topic name"
expect_err "missing the topic name" "missing topic name"
run topic create adm-x --partitions
expect_rc 2 "missing option value"
expect_err "'--partitions' needs a value" "missing option value"
run topic create adm-x --partitions abc
expect_rc 2 "bad number"
expect_err "invalid --partitions 'abc'" "bad number"
run topic create adm-x --partitions 0
expect_rc 2 "partitions 0"
run topic create adm-x --config retention.ms
expect_rc 2 "--config without ="
expect_err "expected KEY=VALUE" "--config without ="
run --output xml topic list
expect_rc 2 "bad --output"
expect_err "invalid --output 'xml'" "bad --output"
run --timeout -5 topic list
expect_rc 2 "bad --timeout"
run config get
expect_rc 2 "config get without --topic/--broker"
expect_err "exactly one of --topic NAME or --broker ID" "config get without a resource"
run config set --topic adm-x
expect_rc 2 "config set without changes"
run config set --broker '' log.retention.ms=1
expect_rc 2 "config set --broker ''"
expect_err "--broker needs a broker id; --broker-defaults" "config set --broker ''"
run config set --broker 1 --broker-defaults log.retention.ms=1
expect_rc 2 "config set with two resources"
expect_err "only one of --topic NAME, --broker ID or --broker-defaults" "two resources"
run config set --broker-defaults
expect_rc 2 "config set --broker-defaults without changes"
run topic alter adm-x
expect_rc 2 "alter without changes"
run -X no.such.client.property=1 topic list
expect_rc 2 "unknown -X property"
expect_err "no.such.client.property" "unknown -X property"
run --command-config "$SF_TMP/does-not-exist.properties" topic list
expect_rc 2 "missing --command-config file"
expect_err "does-not-exist.properties" "missing --command-config file"
# Nothing above may have created a topic.
[[ $(kc -L 2>/dev/null | grep -c 'topic "adm-x"' || true) == 0 ]] || fail "adm-x was created"

# --- unreachable bootstrap server: exit 3, bounded by --timeout ----------------------------
dead=$(free_port)
runx --bootstrap-server "127.0.0.1:$dead" --timeout 2000 topic list
expect_rc 3 "unreachable bootstrap"
expect_err "--bootstrap-server" "unreachable bootstrap hint"
runx --bootstrap-server "127.0.0.1:$dead" --timeout 2000 cluster status --output json
expect_rc 3 "unreachable bootstrap (cluster status)"

# --- topic create --------------------------------------------------------------------------
run topic create adm-t1 --partitions 3 --replication-factor 1 --config retention.ms=3600000
expect_rc 0 "topic create adm-t1"
expect_out '^Created topic adm-t1\.' "topic create adm-t1"
run topic create adm-t1 --partitions 3
expect_rc 1 "creating an existing topic"
expect_err "topic 'adm-t1' already exists \(TOPIC_ALREADY_EXISTS\); use --if-not-exists" \
    "creating an existing topic"
run topic create adm-t1 --if-not-exists
expect_rc 0 "create --if-not-exists"
run topic create adm-t1 --if-not-exists --output json
expect_rc 0 "create --if-not-exists (json)"
jcheck "create --if-not-exists json" 'd == {"topic": "adm-t1", "created": False}'
# Global options before the command, the rest after the sub-command; the broker's default
# partition count when --partitions is not given.
runx --output json -b "$BOOTSTRAP" topic create adm-t2
expect_rc 0 "topic create adm-t2 (json)"
jcheck "create json" 'd == {"topic": "adm-t2", "created": True}'
STREAMFLOW_BOOTSTRAP=$BOOTSTRAP runx topic create adm-t3 --partitions 1 \
    --config cleanup.policy=delete --config segment.bytes=1048576
expect_rc 0 "topic create with STREAMFLOW_BOOTSTRAP"
run topic create adm-bad --config no.such.config=1
expect_rc 1 "create with an unknown config"
expect_err 'INVALID_CONFIG' "create with an unknown config"
run topic create adm-bad --replication-factor 3
expect_rc 1 "replication factor above the broker count"
expect_err 'INVALID_REPLICATION_FACTOR' "replication factor above the broker count"

# --- topic list ----------------------------------------------------------------------------
run topic list
expect_rc 0 "topic list"
expect_out '^TOPIC +PARTITIONS +REPLICATION-FACTOR$' "topic list header"
expect_out '^adm-t1 +3 +1$' "topic list adm-t1"
expect_out '^adm-t2 +2 +1$' "topic list adm-t2"
grep -q 'adm-bad' "$OUT" && fail "a failed create left adm-bad behind"
run topic list --output json
expect_rc 0 "topic list json"
jcheck "topic list json" '{t["name"]: (t["partitions"], t["replication_factor"]) for t in d["topics"]} == {"adm-t1": (3, 1), "adm-t2": (2, 1), "adm-t3": (1, 1)}'

# --- topic describe ------------------------------------------------------------------------
run topic describe adm-t1
expect_rc 0 "topic describe"
expect_out '^Topic: adm-t1 +Partitions: 3 +Replication factor: 1 +Configs: retention.ms=3600000' \
    "describe header"
expect_out '^PARTITION +LEADER +REPLICAS +ISR$' "describe table header"
for p in 0 1 2; do expect_out "^$p +1 +1 +1$" "describe partition $p"; done
run topic describe adm-t1 adm-t3 --output json
expect_rc 0 "topic describe json"
jcheck "describe json names" '[t["name"] for t in d["topics"]] == ["adm-t1", "adm-t3"]'
jcheck "describe json partitions" '[(p["partition"], p["leader"], p["replicas"], p["isr"]) for p in d["topics"][0]["partitions"]] == [(0, 1, [1], [1]), (1, 1, [1], [1]), (2, 1, [1], [1])]'
jcheck "describe json configs" 'd["topics"][0]["configs"] == {"retention.ms": "3600000"} and d["topics"][1]["configs"] == {"cleanup.policy": "delete", "segment.bytes": "1048576"}'
run topic describe --output json
expect_rc 0 "describe every topic"
jcheck "describe every topic" '{"adm-t1", "adm-t2", "adm-t3"} <= {t["name"] for t in d["topics"]}'
run topic describe adm-nope
expect_rc 1 "describe a missing topic"
expect_err "topic 'adm-nope' does not exist" "describe a missing topic"
run topic describe adm-t1 --unavailable-partitions --output json
expect_rc 0 "describe --unavailable-partitions"
jcheck "no unavailable partitions" 'd["topics"][0]["partitions"] == []'
# Describing never creates a topic.
run topic list --output json
jcheck "describe created adm-nope" '"adm-nope" not in [t["name"] for t in d["topics"]]'

# --- topic alter ---------------------------------------------------------------------------
run topic alter adm-t1 --partitions 5
expect_rc 0 "alter --partitions"
expect_out 'now has 5 partitions' "alter --partitions"
run topic describe adm-t1 --output json
jcheck "5 partitions after alter" 'd["topics"][0]["partition_count"] == 5 and [p["partition"] for p in d["topics"][0]["partitions"]] == [0, 1, 2, 3, 4]'
run topic alter adm-t1 --partitions 2
expect_rc 1 "shrinking partitions"
expect_err 'INVALID_PARTITIONS' "shrinking partitions"
run topic alter adm-nope --partitions 4
expect_rc 1 "alter a missing topic"
expect_err "topic 'adm-nope' does not exist" "alter a missing topic"
run topic alter adm-t1 --config retention.ms=7200000 --config max.message.bytes=200000 --output json
expect_rc 0 "alter --config"
jcheck "alter --config json" 'd["configs_set"] == {"retention.ms": "7200000", "max.message.bytes": "200000"}'
run topic alter adm-t1 --delete-config max.message.bytes
expect_rc 0 "alter --delete-config"
run topic alter adm-t1 --config retention.ms=notanumber
expect_rc 1 "alter with a bad value"
expect_err 'INVALID_CONFIG' "alter with a bad value"

# --- config get / set ----------------------------------------------------------------------
run config get --topic adm-t1
expect_rc 0 "config get"
expect_out '^NAME +VALUE +SOURCE$' "config get header"
expect_out '^retention\.ms +7200000 +DYNAMIC_TOPIC_CONFIG$' "config get override"
expect_out '^max\.message\.bytes +[0-9]+ +DEFAULT_CONFIG$' "config get default after delete"
run config get --topic adm-t1 retention.ms segment.bytes --output json
expect_rc 0 "config get KEY... json"
jcheck "config get KEY... json" '[(c["name"], c["source"]) for c in sorted(d["configs"], key=lambda c: c["name"])] == [("retention.ms", "DYNAMIC_TOPIC_CONFIG"), ("segment.bytes", "DEFAULT_CONFIG")] and d["resource_type"] == "topic"'
jcheck "config get value" '[c["value"] for c in d["configs"] if c["name"] == "retention.ms"] == ["7200000"]'
run config get --topic adm-t1 --overrides --output json
jcheck "config get --overrides" '[c["name"] for c in d["configs"]] == ["retention.ms"]'
run config get --topic adm-t1 no.such.key
expect_rc 1 "config get an unknown key"
expect_err "no config 'no.such.key'" "config get an unknown key"
run config get --topic adm-nope
expect_rc 1 "config get a missing topic"
expect_err "topic 'adm-nope' does not exist" "config get a missing topic"
run config set --topic adm-t2 retention.ms=60000 segment.ms=3600000
expect_rc 0 "config set"
expect_out 'Set retention\.ms=60000 on topic adm-t2' "config set"
run config get --topic adm-t2 --overrides --output json
jcheck "config set applied" '{c["name"]: c["value"] for c in d["configs"]} == {"retention.ms": "60000", "segment.ms": "3600000"}'
run config set --topic adm-t2 --delete segment.ms --output json
expect_rc 0 "config set --delete"
jcheck "config set --delete json" 'd == {"topic": "adm-t2", "set": {}, "deleted": ["segment.ms"]}'
run config get --topic adm-t2 --overrides --output json
jcheck "config set --delete applied" '{c["name"]: c["value"] for c in d["configs"]} == {"retention.ms": "60000"}'
run config set --topic adm-t2 no.such.config=1
expect_rc 1 "config set an unknown key"
expect_err 'INVALID_CONFIG' "config set an unknown key"
run config set --topic adm-nope retention.ms=1
expect_rc 1 "config set on a missing topic"
run config get --broker 1
expect_rc 0 "config get --broker"
expect_out 'STATIC_BROKER_CONFIG' "config get --broker"
run config get --broker 1 --output json
# The broker settings behind topic configs are dynamic broker configs: none is read-only.
jcheck "config get --broker json" 'd["resource_type"] == "broker" and d["resource_name"] == "1" and len(d["configs"]) > 0 and all(c["source"] in ("STATIC_BROKER_CONFIG", "DEFAULT_CONFIG") and not c["read_only"] for c in d["configs"])'
# What the file sets is a static broker config (log.retention.hours, in ms); the rest defaults.
jcheck "config get --broker sources" '{c["name"]: (c["value"], c["source"]) for c in d["configs"]}["log.retention.ms"] == ("360000000", "STATIC_BROKER_CONFIG") and {c["name"]: c["source"] for c in d["configs"]}["log.segment.bytes"] == "DEFAULT_CONFIG"'
# Broker resources are named with the broker's keys, not the topic configs they back.
jcheck "config get --broker names" 'any(c["name"] == "log.retention.ms" for c in d["configs"]) and not any(c["name"] == "retention.ms" for c in d["configs"])'
run config get --broker 1x
expect_rc 2 "config get --broker with a bad id"
run config get --broker ''
expect_rc 2 "config get --broker ''"

# --- config set --broker / --broker-defaults: dynamic broker configs -------------------------
# jsrc KEY: the (value, source) of KEY in the last `config get --output json`.
jsrc() { echo "[(c[\"value\"], c[\"source\"]) for c in d[\"configs\"] if c[\"name\"] == \"$1\"]"; }
run config get --broker-defaults --output json
expect_rc 0 "config get --broker-defaults"
jcheck "no cluster-wide default yet" 'd == {"resource_type": "broker", "resource_name": "", "configs": []}'
run config set --broker 1 log.retention.ms=7200000
expect_rc 0 "config set --broker 1"
expect_out '^Set log\.retention\.ms=7200000 on broker 1\.$' "config set --broker 1"
run config get --broker 1 log.retention.ms
expect_rc 0 "config get --broker 1 KEY"
expect_out '^log\.retention\.ms +7200000 +DYNAMIC_BROKER_CONFIG$' "a dynamic broker config"
run config get --broker 1 --output json
jcheck "dynamic log.retention.ms" "$(jsrc log.retention.ms) == [('7200000', 'DYNAMIC_BROKER_CONFIG')] and $(jsrc log.segment.bytes) == [('1073741824', 'DEFAULT_CONFIG')]"
run config get --topic adm-t3 retention.ms --output json
jcheck "a topic without an override follows broker 1" "$(jsrc retention.ms) == [('7200000', 'DYNAMIC_BROKER_CONFIG')]"
# A static key: refused by the broker, with its message and what to do instead; a request
# that mixes it with a dynamic key changes nothing.
run config set --broker 1 log.dirs=/tmp/elsewhere
expect_rc 1 "config set --broker 1 log.dirs"
expect_err "changing the configs of broker 1: log\.dirs cannot be updated dynamically.*\(INVALID_REQUEST\); 'streamflow config get --broker ID' lists the keys that can" "static key refused"
expect_err "configuration file and restart it" "static key refused"
run config set --broker 1 log.retention.bytes=1000000 log.dirs=/tmp/elsewhere
expect_rc 1 "a static key among dynamic ones"
run config get --broker 1 --output json
jcheck "a refused request changes nothing" "$(jsrc log.retention.bytes) == [('-1', 'DEFAULT_CONFIG')]"
run config set --broker 1 log.retention.ms=soon
expect_rc 1 "a bad dynamic value"
expect_err 'INVALID_CONFIG' "a bad dynamic value"
run config set --broker 7 log.retention.ms=1
expect_rc 1 "config set on a broker not in the cluster"
expect_err "broker 7 is not in the cluster" "config set on a broker not in the cluster"
# The cluster-wide default: every broker's, below each broker's own.
run config set --broker-defaults log.segment.bytes=2097152 log.retention.ms=60000
expect_rc 0 "config set --broker-defaults"
expect_out '^Set log\.segment\.bytes=2097152 on the cluster-wide broker default\.$' \
    "config set --broker-defaults"
run config get --broker-defaults --output json
jcheck "config get --broker-defaults" 'sorted((c["name"], c["value"], c["source"]) for c in d["configs"]) == [("log.retention.ms", "60000", "DYNAMIC_DEFAULT_BROKER_CONFIG"), ("log.segment.bytes", "2097152", "DYNAMIC_DEFAULT_BROKER_CONFIG")] and d["resource_name"] == ""'
run config get --broker 1 --output json
jcheck "broker 1 under the default" "$(jsrc log.segment.bytes) == [('2097152', 'DYNAMIC_DEFAULT_BROKER_CONFIG')] and $(jsrc log.retention.ms) == [('7200000', 'DYNAMIC_BROKER_CONFIG')]"
run config set --broker-defaults log.dirs=/tmp/elsewhere
expect_rc 1 "config set --broker-defaults log.dirs"
expect_err "changing the configs of the cluster-wide broker default: log\.dirs cannot be updated dynamically.*\(INVALID_REQUEST\)" "static key refused for the default"
run config set --broker 1 --delete log.retention.ms --output json
expect_rc 0 "config set --broker 1 --delete"
jcheck "config set --broker --delete json" 'd == {"broker": "1", "set": {}, "deleted": ["log.retention.ms"]}'
run config get --broker 1 --output json
jcheck "the default after the broker's own is removed" "$(jsrc log.retention.ms) == [('60000', 'DYNAMIC_DEFAULT_BROKER_CONFIG')]"
run config set --broker-defaults --delete log.retention.ms --delete log.segment.bytes
expect_rc 0 "config set --broker-defaults --delete"
expect_out '^Removed log\.segment\.bytes from the cluster-wide broker default\.$' \
    "config set --broker-defaults --delete"
run config get --broker-defaults --output json
jcheck "the default removed" 'd["configs"] == []'
run config get --broker 1 --output json
jcheck "back to the file" "$(jsrc log.retention.ms) == [('360000000', 'STATIC_BROKER_CONFIG')] and $(jsrc log.segment.bytes) == [('1073741824', 'DEFAULT_CONFIG')]"

# --- broker list, cluster status ------------------------------------------------------------
run broker list
expect_rc 0 "broker list"
expect_out '^ID +HOST +PORT +RACK +CONTROLLER$' "broker list header"
expect_out "^1 +127\.0\.0\.1 +$BROKER_PORT +- +yes$" "broker list row"
run broker list --output json
jcheck "broker list json" "d == {'controller_id': 1, 'brokers': [{'id': 1, 'host': '127.0.0.1', 'port': $BROKER_PORT, 'rack': None, 'controller': True}]}"
run cluster status
expect_rc 0 "cluster status"
expect_out '^Controller: +1 \(127\.0\.0\.1:'"$BROKER_PORT"'\)$' "cluster status controller"
expect_out '^Brokers: +1 \(1\)$' "cluster status brokers"
expect_out '^Topics: +3$' "cluster status topics"
expect_out '^Partitions: +8$' "cluster status partitions"
expect_out '^Partitions without a leader: +0$' "cluster status offline"
expect_out '^Under-replicated partitions: +0$' "cluster status under-replicated"
run cluster status --output json
jcheck "cluster status json" 'd["controller_id"] == 1 and d["brokers"] == [1] and d["topic_count"] == 3 and d["partition_count"] == 8 and d["offline_partition_count"] == 0 and d["under_replicated_partition_count"] == 0 and isinstance(d["cluster_id"], str) and d["cluster_id"]'

# --- topic delete ---------------------------------------------------------------------------
run topic delete adm-t2
expect_rc 0 "topic delete"
expect_out '^Deleted topic adm-t2\.' "topic delete"
gone() {
    "$SF" -b "$BOOTSTRAP" topic list --output json | "$PY" -c \
        'import json, sys; sys.exit("adm-t2" in [t["name"] for t in json.load(sys.stdin)["topics"]])'
}
wait_until 30 "adm-t2 to disappear from the topic list" gone
run topic delete adm-t2
expect_rc 1 "deleting a missing topic"
expect_err "topic 'adm-t2' does not exist \(UNKNOWN_TOPIC_OR_PARTITION\); use --if-exists" \
    "deleting a missing topic"
run topic delete adm-t2 --if-exists --output json
expect_rc 0 "delete --if-exists"
jcheck "delete --if-exists json" 'd == {"topics": [{"topic": "adm-t2", "deleted": False}]}'
run topic delete adm-t1 adm-t3 --output json
expect_rc 0 "deleting two topics"
jcheck "delete json" 'd == {"topics": [{"topic": "adm-t1", "deleted": True}, {"topic": "adm-t3", "deleted": True}]}'

# --- a second broker: two brokers listed, a replicated topic, partitions losing their leader --
B1=$BOOTSTRAP B1_PORT=$BROKER_PORT
start_broker b2 broker.id=2
B2_PORT=$BROKER_PORT BOOTSTRAP=$B1 BROKER_PORT=$B1_PORT
run broker list --output json
expect_rc 0 "broker list, two brokers"
jcheck "broker list, two brokers" "[(b['id'], b['port'], b['controller']) for b in d['brokers']] == [(1, $B1_PORT, True), (2, $B2_PORT, False)]"
run topic create adm-r2 --partitions 4 --replication-factor 2
expect_rc 0 "create with replication factor 2"
run topic describe adm-r2 --output json
jcheck "replication factor 2" 'd["topics"][0]["replication_factor"] == 2 and all(sorted(p["replicas"]) == [1, 2] for p in d["topics"][0]["partitions"])'
cp "$OUT" "$SF_TMP/r2-before.json"
run cluster status --output json
jcheck "two brokers in cluster status" 'd["brokers"] == [1, 2] and d["offline_partition_count"] == 0'
stop_broker b2
b2_gone() {
    "$SF" -b "$B1" broker list --output json | "$PY" -c \
        'import json, sys; sys.exit([b["id"] for b in json.load(sys.stdin)["brokers"]] != [1])'
}
wait_until 30 "broker 2 to leave the broker list" b2_gone
# Partitions broker 2 led have no leader now (or a new one on broker 1): cluster status and
# topic describe --unavailable-partitions agree on which.
run topic describe adm-r2 --unavailable-partitions --output json
expect_rc 0 "describe --unavailable-partitions"
cp "$OUT" "$SF_TMP/r2-unavailable.json"
"$PY" - "$SF_TMP/r2-before.json" "$SF_TMP/r2-unavailable.json" <<'EOF' || fail "unavailable partitions"
import json, sys
before = json.load(open(sys.argv[1]))["topics"][0]["partitions"]
unavail = json.load(open(sys.argv[2]))["topics"][0]["partitions"]
led_by_2 = {p["partition"] for p in before if p["leader"] == 2}
got = {p["partition"] for p in unavail}
if not got <= led_by_2 or any(p["leader"] != -1 for p in unavail):
    print("  unavailable %s, led by broker 2 before %s" % (sorted(got), sorted(led_by_2))); sys.exit(1)
print("  adm-r2 partitions without a leader after broker 2 stopped: %s" % sorted(got))
EOF
run cluster status --output json
jcheck "cluster status after broker 2 left" "d['brokers'] == [1] and sorted(p['partition'] for p in d['offline_partitions'] if p['topic'] == 'adm-r2') == sorted(p['partition'] for p in json.load(open('$SF_TMP/r2-unavailable.json'))['topics'][0]['partitions']) and d['offline_partition_count'] == len(d['offline_partitions'])"
run cluster status
expect_rc 0 "cluster status after broker 2 left"
expect_out '^Brokers: +1 \(1\)$' "cluster status after broker 2 left"
for p in $("$PY" -c 'import json, sys; print(" ".join(str(p["partition"]) for p in json.load(open(sys.argv[1]))["topics"][0]["partitions"]))' "$SF_TMP/r2-unavailable.json"); do
    expect_out "^  no leader: adm-r2-$p$" "cluster status lists adm-r2-$p"
done

# --command-config: a properties file; -X overrides it.
printf 'client.id=adm-cli-test\nrequest.timeout.ms=10000\n' >"$SF_TMP/client.properties"
run --command-config "$SF_TMP/client.properties" -X client.id=adm-other topic list
expect_rc 0 "--command-config"
broker_alive b1
pass
