#!/usr/bin/env bash
# Leader failover (ZooKeeper mode): a topic of 6 partitions on 3 brokers starts with every
# replica in the ISR; when the leader of partition 0 is killed, and then the controller, the
# (new) controller moves leadership to a live ISR member, drops the dead broker from every ISR
# and bumps the leader epochs, within the session timeout and a margin; Metadata shows the
# same; a killed broker registers again on restart. Then AlterPartition against the
# controller: Kafka's error codes for each wrong field, and a valid ISR change written with
# the state znode's new version returned. Last, ControlledShutdown: the leader of partition 0
# hands every partition it leads to another ISR member and leaves every ISR.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
for i in 1 2 3; do
    start_broker b$i broker.id=$i zookeeper.session.timeout.ms=6000
done
ZKHP=127.0.0.1:$ZK_PORT
fo() { "$PY" "$SF_TEST_DIR/failover.py" "$ZKHP" "$@"; }
addr() { echo "127.0.0.1:${SF_BROKER_PORT[b$1]}"; }
# first_other ID: the first broker id of 1..3 other than ID whose process runs.
first_other() {
    local i
    for i in 1 2 3; do
        if ((i != $1)) && alive "${SF_BROKER_PID[b$i]}"; then
            echo "$i"
            return 0
        fi
    done
    return 1
}

fo create "$(addr 1),$(addr 2),$(addr 3)" fo 6 3 || fail "creating the topic"
log "6 partitions, every state with ISR = the 3 replicas, leader epoch 0"

# kill_and_check ID: SIGKILL broker ID, wait for the failover, restart it.
kill_and_check() {
    local id=$1 survivor
    fo save fo "$SF_TMP/before-$id.json" || fail "reading the states"
    survivor=$(first_other "$id") || fail "no broker left besides $id"
    kill9_broker "b$id"
    fo failed-over fo "$SF_TMP/before-$id.json" "$id" "$(addr "$survivor")" 16 ||
        fail "no failover off broker $id"
    grep -h "moving leadership" "$SF_TMP"/b*/streamflowd.log | tail -n 1 | sed 's/^/  /'
    start_broker "b$id"
    wait_until 15 "broker $id registered again" zk exists "/streamflow/brokers/ids/$id"
    log "broker $id registered again"
    # Back in every ISR before the next kill: an ISR that grows after "save" would make a
    # leader elected from the grown ISR look like one from outside the old ISR.
    "$PY" "$SF_TEST_DIR/cluster_state.py" "$ZKHP" fo wait-isr 3 60 ||
        fail "broker $id did not rejoin the ISRs"
}

leader0=$(fo leader fo 0) || fail "no leader for partition 0"
controller=$(fo controller) || fail "no controller"
log "partition 0 led by broker $leader0; the controller is broker $controller"
kill_and_check "$leader0"

controller=$(fo controller) || fail "no controller"
log "killing the controller, broker $controller"
kill_and_check "$controller"
new_controller=$(fo controller) || fail "no controller after killing broker $controller"
[[ $new_controller != "$controller" ]] || fail "broker $controller is the controller again"
log "broker $new_controller is the controller now"

other=$(first_other "$new_controller") || fail "no broker besides the controller"
# The restarted brokers back in every ISR and leading what they prefer (ElectLeaders), so
# that some partition is led by a broker other than the controller.
"$PY" "$SF_TEST_DIR/cluster_state.py" "$ZKHP" fo wait-isr 3 60 || fail "the ISRs did not recover"
"$PY" "$SF_TEST_DIR/elect_leaders.py" "$(addr "$new_controller")" 2 0 all >/dev/null ||
    fail "ElectLeaders"
# The leader of the partition asks for ISR changes of its own: it is held stopped meanwhile.
read -r part lead < <(fo alter-target fo "$new_controller") || fail "no partition to alter"
for i in 1 2 3; do ((i != new_controller && i != lead)) && third=$i; done
kill -STOP "${SF_BROKER_PID[b$lead]}"
st=0
fo alter fo "$(addr "$new_controller")" "$(addr "$third")" "$part" || st=$?
kill -CONT "${SF_BROKER_PID[b$lead]}"
((st == 0)) || fail "AlterPartition"
brokers=
for i in 1 2 3; do brokers+=${brokers:+,}$i=$(addr $i)=${SF_BROKER_PID[b$i]}; done
fo shutdown fo "$(addr "$new_controller")" "$brokers" || fail "ControlledShutdown"

for i in 1 2 3; do broker_alive "b$i"; done
pass
