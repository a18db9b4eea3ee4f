#!/usr/bin/env bash
# streamflow cluster rebalance and streamflow topic reassign under load. A fourth broker joins
# three that hold every replica of a topic; the dry run shows the moves and changes nothing;
# --execute spreads replicas and preferred leaders evenly over the four (broker 4 gets its
# share, no broker holds two replicas more than another), and a second run finds nothing to
# move. Then a plan file in Kafka's format moves a partition (--execute prints the rollback
# plan; --verify exits 1 until the move is done, then 0), --cancel with nothing under way and
# bad plans are refused, and --generate proposes a plan; topic elect-leaders moves leadership
# to the preferred replica. Every acknowledged record is read back.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
SF=$SF_BUILD_DIR/admin/streamflow
[[ -x $SF ]] || fail "$SF not built (make admin/streamflow)"
start_cluster min.insync.replicas=2
cd "$SF_TEST_DIR"
create_topic rb 8 3 min.insync.replicas=2
start_broker b4 broker.id=4 zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=4000
wait_until 30 "broker 4 to register" \
    "$PY" zkq.py "127.0.0.1:$ZK_PORT" exists /streamflow/brokers/ids/4
start_acked_producer rb
more_acks 2000

OUT=$SF_TMP/out ERR=$SF_TMP/err
run() {
    RC=0
    timeout -k 5 120 "$SF" --bootstrap-server "$ALL" "$@" >"$OUT" 2>"$ERR" || RC=$?
}
expect_rc() {
    if [[ $RC != "$1" ]]; then
        sed 's/^/  stdout| /' "$OUT" | head -n 30
        sed 's/^/  stderr| /' "$ERR" | head -n 20
        fail "$2: exit status $RC, expected $1"
    fi
}
jcheck() {
    "$PY" - "$OUT" "$2" <<'EOF' || fail "$1"
import json, sys
d = json.load(open(sys.argv[1]))
if not eval(sys.argv[2]):
    print(json.dumps(d)[:2000])
    sys.exit(1)
EOF
}
topic_znode_of() { "$PY" zkq.py "127.0.0.1:$ZK_PORT" get "/streamflow/brokers/topics/$1"; }
topic_znode() { topic_znode_of rb; }

# The dry run: moves listed, broker 4 gets replicas in the plan, nothing written.
before=$(topic_znode)
run cluster rebalance
expect_rc 0 "cluster rebalance (dry run)"
grep -q "Dry run" "$ERR" || fail "the dry run did not say so: $(cat "$ERR")"
grep -Eq '^rb +[0-7] ' "$OUT" || fail "no move listed: $(cat "$OUT")"
run cluster rebalance --output json
expect_rc 0 "cluster rebalance --output json"
jcheck "broker 4 gets a quarter of the 24 replicas and 2 preferred leaders" \
    '([(b["replicas_before"], b["replicas_after"], b["leaders_after"])
      for b in d["brokers"] if b["id"] == 4] == [(0, 6, 2)] and not d["executed"])'
jcheck "every broker ends with 6 replicas and 2 preferred leaders" \
    'all(b["replicas_after"] == 6 and b["leaders_after"] == 2 for b in d["brokers"])'
[[ $(topic_znode) == "$before" ]] || fail "the dry run changed the topic znode"

# --execute, then wait until the moves are done.
run cluster rebalance --execute
expect_rc 0 "cluster rebalance --execute"
grep -q "Started the reassignment of" "$OUT" || fail "no start reported: $(cat "$OUT")"
wait_until 120 "the rebalance to finish" bash -c \
    "[[ \$('$SF' --bootstrap-server '$ALL' topic reassign --list --output json) == '[]' ]]"
"$PY" - "127.0.0.1:$ZK_PORT" <<'PY' || fail "the topic is not spread over the four brokers"
import json, sys, time
from zkq import Session
deadline = time.time() + 60
while True:
    s = Session(sys.argv[1])
    t = json.loads(s.get("/streamflow/brokers/topics/rb")[0])
    s.close()
    reps = [b for r in t["partitions"].values() for b in r]
    leads = [r[0] for r in t["partitions"].values()]
    even = all(reps.count(b) == 6 and leads.count(b) == 2 for b in (1, 2, 3, 4))
    if even and not t.get("adding_replicas"):
        break
    if time.time() > deadline:
        sys.exit("topic znode: %s" % json.dumps(t))
    time.sleep(0.5)
PY
"$PY" cluster_state.py "127.0.0.1:$ZK_PORT" rb wait-isr 3 60 || fail "ISRs without all replicas"
ls -d "$(broker_datadir b4)"/rb-* >/dev/null 2>&1 || fail "broker 4 holds no partition of rb"
run cluster rebalance --output json
expect_rc 0 "cluster rebalance after the rebalance"
jcheck "a balanced cluster has nothing to move" 'd["moves"]["partitions"] == []'
more_acks 2000
log "rebalanced onto four brokers"

# A plan file: partition 0 onto three brokers other than now, or in another order.
part0() {
    topic_znode | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["partitions"]["0"])'
}
cur=$(part0)
target='[1, 2, 3]'
[[ $cur == "$target" ]] && target='[2, 3, 4]'
plan='{"topic":"rb","partition":0,"replicas":'$target',"log_dirs":["any","any","any"]}'
echo '{"version":1,"partitions":['"$plan"']}' >"$SF_TMP/plan.json"
run topic reassign --execute "$SF_TMP/plan.json"
expect_rc 0 "topic reassign --execute"
grep -q "\"replicas\":\[$(tr -d ' []' <<<"$cur")\]" "$OUT" ||
    fail "no rollback plan printed: $(cat "$OUT")"
grep -q "Started the reassignment of 1 partition" "$OUT" || fail "no start reported: $(cat "$OUT")"
wait_until 60 "topic reassign --verify to report completion" \
    "$SF" --bootstrap-server "$ALL" topic reassign --verify "$SF_TMP/plan.json"
run topic reassign --verify "$SF_TMP/plan.json" --output json
expect_rc 0 "topic reassign --verify"
jcheck "verify says completed" 'd == [{"topic": "rb", "partition": 0, "status": "completed"}]'
[[ $(part0) == "$target" ]] || fail "partition 0 is on $(part0), not $target"

# Leadership to the preferred replica of partition 0 (the plan's first), then nothing to do.
first=$("$PY" -c "import sys; print($target[0])")
run topic elect-leaders --topic rb --partition 0
expect_rc 0 "topic elect-leaders"
grep -Eq "Preferred leader election: (1 partition\(s\) elected, 0|0 partition\(s\) elected, 1)" "$OUT" ||
    fail "elect-leaders answered: $(cat "$OUT")"
leads_first() { [[ $("$PY" cluster_state.py "127.0.0.1:$ZK_PORT" rb leader 0) == "$first" ]]; }
wait_until 30 "broker $first to lead rb-0" leads_first
run topic elect-leaders --topic rb --output json
expect_rc 0 "topic elect-leaders of every partition"
jcheck "partition 0 needs no election now" \
    '[r["result"] for r in d if r["partition"] == 0] == ["ELECTION_NOT_NEEDED"] and len(d) == 8'
run topic elect-leaders --topic nosuch
expect_rc 1 "elect-leaders of a topic that does not exist"
run topic elect-leaders --topic rb --all-topics
expect_rc 2 "elect-leaders with --topic and --all-topics"

# What is refused.
run topic reassign --cancel "$SF_TMP/plan.json"
expect_rc 1 "cancelling with nothing under way"
grep -q "NO_REASSIGNMENT_IN_PROGRESS" "$ERR" || fail "cancel without a move: $(cat "$ERR")"
echo '{"version":1,"partitions":[{"topic":"rb","partition":0,"replicas":[1,2,9]}]}' \
    >"$SF_TMP/bad.json"
run topic reassign --execute "$SF_TMP/bad.json"
expect_rc 1 "a plan naming an unknown broker"
grep -q "INVALID_REPLICA_ASSIGNMENT" "$ERR" || fail "unknown broker: $(cat "$ERR")"
echo '{"version":1,"partitions":[{"topic":"rb","partition":0,"replicas":"x"}]}' >"$SF_TMP/bad.json"
run topic reassign --execute "$SF_TMP/bad.json"
expect_rc 2 "a plan that is not one"
run topic reassign --verify
expect_rc 2 "--verify without a plan"
run cluster rebalance --brokers 1,2
expect_rc 1 "three replicas on two brokers"
run cluster rebalance --brokers 7
expect_rc 2 "a broker that is not live"

# A throttled move: 24 MB of partition big-0 from broker 1 to broker 2 at 2 MB/s takes
# seconds, not a fraction of one; --verify then removes the throttle.
create_topic big 1 1 min.insync.replicas=1
"$PY" - "$ALL" <<'PY' || fail "writing 24 MB to big"
import os, sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4", "acks": "all",
              "compression.type": "none", "linger.ms": 5})
for _ in range(24 * 16):
    p.produce("big", os.urandom(65536), partition=0)
    p.poll(0)
assert p.flush(60) == 0
PY
from=$(topic_znode_of big | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["partitions"]["0"][0])')
to=$(( from % 4 + 1 ))
echo '{"version":1,"partitions":[{"topic":"big","partition":0,"replicas":['$to']}]}' \
    >"$SF_TMP/big.json"
run topic reassign --execute "$SF_TMP/big.json" --throttle 2000000
expect_rc 0 "topic reassign --execute --throttle"
grep -q "Throttled the moves at 2000000 bytes per second" "$OUT" || fail "no throttle: $(cat "$OUT")"
run config get --topic big --output json
jcheck "the topic names the moving replicas" \
    '{c["name"]: c["value"] for c in d["configs"]}.get("follower.replication.throttled.replicas") == "0:'$to'"'
# Once the copy is under way it grows by about 2 MB/s (plus a second's worth of burst on each
# side); unthrottled, a local copy of 24 MB is done before the first look.
copied() { cat "$(broker_datadir "b$to")"/big-0/*.log 2>/dev/null | wc -c; }
started() { (( $(copied) > 0 )); }
wait_until 30 "broker $to to start copying big-0" started
c0=$(copied)
sleep 3
c1=$(copied)
log "broker $to holds $c0 bytes of big-0, 3 s later $c1 (throttled at 2 MB/s)"
(( c0 < 12 * 1024 * 1024 && c1 > c0 && c1 - c0 < 12 * 1024 * 1024 )) ||
    fail "the throttle did not hold the copy back: $c0 bytes, then $c1 3 s later"
wait_until 90 "the throttled move to finish" \
    "$SF" --bootstrap-server "$ALL" topic reassign --verify "$SF_TMP/big.json"
run topic reassign --verify "$SF_TMP/big.json"
expect_rc 0 "topic reassign --verify after the move"
grep -q "throttle is removed" "$OUT" || fail "verify did not remove the throttle: $(cat "$OUT")"
run config get --topic big --output json
jcheck "the throttled replica lists are gone" \
    '"follower.replication.throttled.replicas" not in {c["name"]: c["value"] for c in d["configs"] if c["source"] == "DYNAMIC_TOPIC_CONFIG"}'
run config get --broker "$to" --output json
jcheck "the rates are gone" \
    '[c["source"] for c in d["configs"] if c["name"].endswith("throttled.rate")] == ["DEFAULT_CONFIG"] * 2'

# --generate: the topic onto brokers 2, 3, 4 only.
run topic reassign --generate --topics rb --brokers 2,3,4 --output json
expect_rc 0 "topic reassign --generate"
jcheck "the proposal uses brokers 2, 3, 4 only and keeps three replicas" \
    '(all(sorted(p["replicas"]) == [2, 3, 4] for p in d["proposed"]["partitions"])
      and len(d["current"]["partitions"]) == 8)'
more_acks 2000
stop_acked_producer rb
for n in b1 b2 b3 b4; do broker_alive "$n"; done
pass
