#!/usr/bin/env bash
# Three brokers, a topic with 6 partitions, replication factor 3 and min.insync.replicas 2:
# followers copy their leaders (the ISR is all three), a producer with acks=all streams
# numbered records while the leader of partition 0 is killed with kill -9 and restarted five
# times, then the controller, and every acknowledged record is read back at its acknowledged
# offset, in order. A restarted broker truncates what it had that the new leader has not and
# rejoins every ISR. A follower stopped with SIGSTOP leaves the ISRs it is in once
# replica.lag.time.max.ms passes, and comes back after SIGCONT.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster min.insync.replicas=2
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" rep "$@"; }
name_of() { echo "b$1"; }
create_topic rep 6 3 min.insync.replicas=2
state show
start_acked_producer rep
count() { wc -l <"$ACKED"; }
more_acks 10000
state wait-isr 3 30 || fail "a follower fell out of the ISR under load"

# kill -9 the leader of partition 0 five times in a row, bringing it back each time, and then
# the controller.
controller() { "$PY" failover.py "127.0.0.1:$ZK_PORT" controller; }
for round in 1 2 3 4 5 6; do
    if ((round < 6)); then
        victim=$(name_of "$(state leader 0)") what="leader of partition 0"
    else
        victim=$(name_of "$(controller)") what="the controller"
    fi
    kill9_broker "$victim"
    log "round $round: killed $victim ($what) after $(count) acknowledgements"
    state wait-leader-not "${SF_BROKER_ID[$victim]}" 30 || fail "leadership did not move off $victim"
    more_acks 5000
    start_broker "$victim"
    state wait-isr 3 60 || fail "$victim did not rejoin the ISRs"
    more_acks 2000
done
grep -q 'truncating to offset' "$SF_TMP"/b*/streamflowd.log && log "a restarted broker truncated its log"

# SIGSTOP a follower of partition 0 past replica.lag.time.max.ms: it leaves the ISRs.
lead=$(state leader 0)
for n in b1 b2 b3; do [[ ${SF_BROKER_ID[$n]} != "$lead" ]] && { frozen=$n; break; }; done
kill -STOP "${SF_BROKER_PID[$frozen]}"
log "stopped $frozen (a follower)"
fid=${SF_BROKER_ID[$frozen]}
"$PY" cluster_state.py "127.0.0.1:$ZK_PORT" rep wait-isr 2 60 "-$fid" || {
    kill -CONT "${SF_BROKER_PID[$frozen]}"; fail "the stopped follower stayed in the ISR"; }
more_acks 2000
kill -CONT "${SF_BROKER_PID[$frozen]}"
state wait-isr 3 90 || fail "the follower did not come back into the ISRs"

stop_acked_producer rep
state show
for n in b1 b2 b3; do broker_alive "$n"; done
pass
