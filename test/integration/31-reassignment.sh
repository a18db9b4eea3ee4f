#!/usr/bin/env bash
# Partition reassignment under load: a fourth broker joins, and /admin/reassign_partitions
# (Kafka's ZooKeeper-era request) moves every partition of a topic from brokers {1,2,3} to
# {2,3,4} while an acks=all producer streams numbered records. The controller grows each
# replica set, waits for broker 4 to catch up and join the ISR, moves leadership off broker 1,
# shrinks the replica sets to the target and deletes the request; broker 1 deletes its
# copies. Then AlterPartitionReassignments (with Kafka's per-partition errors, and
# NOT_CONTROLLER elsewhere) moves two partitions back to broker 1, and
# ListPartitionReassignments lists what is under way. Every acknowledged record is read back.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster min.insync.replicas=2
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" ra "$@"; }
create_topic ra 6 3 min.insync.replicas=2
start_broker b4 broker.id=4 zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=4000
start_acked_producer ra
more_acks 3000

# Every partition to {2,3,4}, the preferred replica rotating so that leaders spread.
list= sep=
for p in 0 1 2 3 4 5; do
    case $(( p % 3 )) in 0) r=2,3,4 ;; 1) r=3,4,2 ;; *) r=4,2,3 ;; esac
    list+=$sep'{"topic":"ra","partition":'$p',"replicas":['$r']}' sep=,
done
"$PY" zkq.py "127.0.0.1:$ZK_PORT" create /streamflow/admin/reassign_partitions \
    "{\"version\":1,\"partitions\":[$list]}" || fail "writing /admin/reassign_partitions"

# wait_assignment JSON: wait until the topic znode shows these replicas, nothing being added
# or removed.
wait_assignment() {
    "$PY" - "127.0.0.1:$ZK_PORT" "$1" <<'PY' || fail "the reassignment did not finish"
import json, sys, time
from zkq import Session
want = json.loads(sys.argv[2])
deadline = time.time() + 120
while True:
    s = Session(sys.argv[1])
    t = json.loads(s.get("/streamflow/brokers/topics/ra")[0])
    s.close()
    if t["partitions"] == want and not t.get("adding_replicas") and not t.get("removing_replicas"):
        break
    if time.time() > deadline:
        sys.exit("topic znode: %s" % json.dumps(t))
    time.sleep(0.5)
PY
}
wait_assignment '{"0":[2,3,4],"1":[3,4,2],"2":[4,2,3],"3":[2,3,4],"4":[3,4,2],"5":[4,2,3]}'
wait_until 30 "/admin/reassign_partitions to be deleted" \
    bash -c "! '$PY' zkq.py 127.0.0.1:$ZK_PORT exists /streamflow/admin/reassign_partitions"
state wait-isr 3 60 -1 || fail "ISRs without all of the new replicas, or still with broker 1"
state wait-leader-not 1 30 || fail "broker 1 still leads partitions of ra"
grep -q 'reassignment of .* partition(s) of ra finished' "$SF_TMP"/b*/streamflowd.log ||
    fail "no controller logged a finished reassignment"
d1=$(broker_datadir b1)
wait_until 30 "broker 1 to delete its copies" bash -c "! ls -d '$d1'/ra-* 2>/dev/null | grep -q ."
ls -d "$(broker_datadir b4)"/ra-* >/dev/null 2>&1 || fail "broker 4 holds no partition of ra"
more_acks 3000
log "moved to {2,3,4} through /admin/reassign_partitions"

# AlterPartitionReassignments: Kafka's answers, then two partitions back to broker 1.
rp() { "$PY" reassign.py "127.0.0.1:${SF_BROKER_PORT[b$1]}" "${@:2}"; }
ctrl=$("$PY" failover.py "127.0.0.1:$ZK_PORT" controller) || fail "no controller"
other=$(( ctrl % 4 + 1 ))
out=$(rp "$other" alter ra:0=1,2,3) || fail "AlterPartitionReassignments to broker $other"
[[ $out == "top 41" ]] || fail "a broker that is not the controller answered: $out"
out=$(rp "$ctrl" alter ra:0=cancel ra:1=2,2 ra:2=2,3,9 ra:99=1,2,3 nosuch:0=1) ||
    fail "AlterPartitionReassignments"
want='top 0
nosuch 0 3
ra 0 85
ra 1 39
ra 2 39
ra 99 3'
[[ $out == "$want" ]] || fail "AlterPartitionReassignments answered: $(tr '\n' ';' <<<"$out")"
out=$(rp "$ctrl" alter ra:0=1,2,3 ra:1=3,1,2) || fail "AlterPartitionReassignments"
[[ $out == $'top 0\nra 0 0\nra 1 0' ]] || fail "the moves were answered: $(tr '\n' ';' <<<"$out")"
out=$(rp "$ctrl" list) || fail "ListPartitionReassignments"
head -1 <<<"$out" | grep -qx "top 0" || fail "ListPartitionReassignments answered: $out"
grep -v '^top' <<<"$out" | grep -vqE '^ra [01] ' && fail "unexpected reassignments listed: $out"
out=$(rp "$other" list) || fail "ListPartitionReassignments to broker $other"
[[ $out == "top 41" ]] || fail "a broker that is not the controller listed: $out"
wait_assignment '{"0":[1,2,3],"1":[3,1,2],"2":[4,2,3],"3":[2,3,4],"4":[3,4,2],"5":[4,2,3]}'
out=$(rp "$ctrl" list) || fail "ListPartitionReassignments"
[[ $out == "top 0" ]] || fail "finished reassignments still listed: $out"
wait_until 30 "broker 1 to hold ra-0 and ra-1 again" bash -c "[[ -d '$d1/ra-0' && -d '$d1/ra-1' ]]"
more_acks 3000
stop_acked_producer ra
for n in b1 b2 b3 b4; do broker_alive "$n"; done
pass
