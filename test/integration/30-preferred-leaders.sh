#!/usr/bin/env bash
# Preferred leaders: after a broker is killed and comes back, the partitions it was the
# preferred replica of stay led by others (auto.leader.rebalance.enable=false) until
# ElectLeaders asks for preferred elections, or /admin/preferred_replica_election lists them
# (then the controller deletes it); Kafka's per-partition answers (none needed,
# preferred replica not available, unknown partition, NOT_CONTROLLER away from the
# controller) in versions 0 to 2, and unclean elections (type 1) of partitions with a live
# leader need none. Then the brokers restart with the automatic rebalance on, and the
# controller gives every partition back to its preferred replica by itself.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster auto.leader.rebalance.enable=false
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" pl "$@"; }
controller() { "$PY" failover.py "127.0.0.1:$ZK_PORT" controller; }
# el BROKER_ID VERSION TYPE WHAT: ElectLeaders to that broker; its answer lines
el() { "$PY" elect_leaders.py "127.0.0.1:${SF_BROKER_PORT[b$1]}" "$2" "$3" "$4"; }
# expect_result OUTPUT PARTITION ERROR
expect_result() {
    grep -qx "pl $2 $3" <<<"$1" || fail "partition $2: expected error $3, got: $(tr '\n' ';' <<<"$1")"
}
# bounce ID: kill -9 broker ID, and start it again once the others lead its partitions; sets
# moved, the partitions then not led by their preferred replica.
bounce() {
    kill9_broker "b$1"
    state wait-leader-not "$1" 30 || fail "leadership did not move off b$1"
    start_broker "b$1"
    state wait-isr 3 60 || fail "b$1 did not rejoin the ISRs"
    moved=$(state not-preferred)
    [[ -n $moved ]] || fail "no partition was left led by another broker"
}
create_topic pl 6 3
state wait-preferred 10 || fail "new partitions are not led by their preferred replicas"

# The preferred leader of partition 0 dies and comes back: its partitions stay moved.
victim=$(state leader 0)
bounce "$victim"
log "partitions not led by their preferred replica: $moved"

ctrl=$(controller) || fail "no controller"
other=$(( ctrl % 3 + 1 ))
out=$(el "$other" 2 0 pl:0) || fail "ElectLeaders to broker $other"
expect_result "$out" 0 41 # NOT_CONTROLLER
[[ $(state not-preferred) == "$moved" ]] || fail "a broker that is not the controller elected"

out=$(el "$ctrl" 0 0 pl:0,1,2,3,4,5,99) || fail "ElectLeaders v0"
for p in 0 1 2 3 4 5; do
    if grep -qw "$p" <<<"$moved"; then expect_result "$out" "$p" 0; else expect_result "$out" "$p" 84; fi
done
expect_result "$out" 99 3 # UNKNOWN_TOPIC_OR_PARTITION
[[ -z $(state not-preferred) ]] || fail "partitions still not led by their preferred replica"
log "ElectLeaders v0 moved $moved back"

# Kafka's tools' way: the controller elects what /admin/preferred_replica_election lists, then
# deletes it.
bounce "$victim"
list= sep=
for p in $moved; do list+=$sep'{"topic":"pl","partition":'$p'}' sep=,; done
"$PY" zkq.py "127.0.0.1:$ZK_PORT" create /streamflow/admin/preferred_replica_election \
    "{\"version\":1,\"partitions\":[$list]}" || fail "writing /admin/preferred_replica_election"
state wait-preferred 30 || fail "the listed partitions did not get their preferred leaders"
wait_until 30 "/admin/preferred_replica_election to be deleted" \
    bash -c "! '$PY' zkq.py 127.0.0.1:$ZK_PORT exists /streamflow/admin/preferred_replica_election"
log "/admin/preferred_replica_election moved $moved back"
ctrl=$(controller) || fail "no controller"

out=$(el "$ctrl" 2 0 all) || fail "ElectLeaders v2 (all)"
[[ $out == "top 0" ]] || fail "a null list with nothing to elect answered: $out"
out=$(el "$ctrl" 1 1 pl:2) || fail "ElectLeaders v1 (unclean)"
expect_result "$out" 2 84 # ELECTION_NOT_NEEDED: the leader is live

# A preferred replica that is down cannot be elected; nor can anyone lead a partition whose
# only replica is down, even in an unclean election.
down=$(( ctrl % 3 + 1 ))
"$PY" - "$ALL" "$down" <<'PY' || fail "creating topic one"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4"})
a.create_topics([NewTopic("one", 1, replica_assignment=[[int(sys.argv[2])]])])["one"].result(30)
PY
"$PY" cluster_state.py "127.0.0.1:$ZK_PORT" one wait-isr 1 30 || fail "topic one has no leader"
kill9_broker "b$down"
state wait-leader-not "$down" 30 || fail "leadership did not move off b$down"
wait_until 30 "topic one offline" \
    bash -c "'$PY' cluster_state.py 127.0.0.1:$ZK_PORT one show | grep -q '^0 -1 '"
out=$(el "$ctrl" 1 1 one:0) || fail "ElectLeaders v1 (unclean, offline)"
grep -qx "one 0 83" <<<"$out" || fail "an offline partition's unclean election answered: $out"
p=$("$PY" - "127.0.0.1:$ZK_PORT" "$down" <<'PY'
import sys
from cluster_state import preferred
print(min(p for p, r in preferred(sys.argv[1], "pl").items() if r == int(sys.argv[2])))
PY
) || fail "no partition prefers b$down"
out=$(el "$ctrl" 2 0 "pl:$p") || fail "ElectLeaders v2"
expect_result "$out" "$p" 80 # PREFERRED_LEADER_NOT_AVAILABLE
start_broker "b$down"
state wait-isr 3 60 || fail "b$down did not rejoin the ISRs"

# The automatic rebalance: every broker restarts with it on (each restart moves leadership
# off the broker), and the controller moves every partition back by itself.
for i in 1 2 3; do
    stop_broker "b$i"
    start_broker "b$i" auto.leader.rebalance.enable=true leader.imbalance.check.interval.seconds=1
    state wait-isr 3 60 || fail "b$i did not rejoin the ISRs"
done
state wait-preferred 60 || fail "the automatic rebalance did not restore the preferred leaders"
grep -q 'leader rebalance: moving leadership' "$SF_TMP"/b*/streamflowd.log ||
    fail "no controller logged a rebalance"
for n in b1 b2 b3; do broker_alive "$n"; done
pass
