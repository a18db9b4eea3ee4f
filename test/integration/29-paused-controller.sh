#!/usr/bin/env bash
# A controller paused past its ZooKeeper session (SIGSTOP) while an acks=all producer streams
# numbered records: another broker becomes the controller and moves the paused broker's
# leadership to in-sync replicas; when it resumes, the old controller learns its session
# expired, stops acting as the controller (its queued partition-state writes fail instead of
# landing), registers again, catches up where its log diverged, and rejoins every ISR. Twice,
# so the second pause hits the new controller. Every acknowledged record is read back.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster min.insync.replicas=2
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" pc "$@"; }
controller() { "$PY" failover.py "127.0.0.1:$ZK_PORT" controller; }
create_topic pc 6 3 min.insync.replicas=2
start_acked_producer pc
more_acks 5000
for round in 1 2; do
    id=$(controller) || fail "no controller"
    paused=b$id
    resigned=$(grep -c 'is no longer the controller' "$(broker_log "$paused")" || true)
    kill -STOP "${SF_BROKER_PID[$paused]}"
    log "round $round: paused $paused, the controller"
    # Past the session timeout: another broker takes over and leads what $paused led.
    wait_until 30 "another controller" \
        bash -c "c=\$('$PY' failover.py 127.0.0.1:$ZK_PORT controller) && [[ \$c != $id ]]"
    state wait-leader-not "$id" 30 ||
        { kill -CONT "${SF_BROKER_PID[$paused]}"; fail "leadership stayed on the paused broker"; }
    more_acks 2000
    kill -CONT "${SF_BROKER_PID[$paused]}"
    log "round $round: resumed $paused"
    wait_until 30 "$paused to notice its expired session" \
        bash -c "(( \$(grep -c 'is no longer the controller' '$(broker_log "$paused")') > $resigned ))"
    [[ $(controller) != "$id" ]] || fail "the resumed broker took the controller back"
    state wait-isr 3 60 || fail "round $round: $paused did not rejoin the ISRs"
    broker_alive "$paused"
    more_acks 2000
done
stop_acked_producer pc
for n in b1 b2 b3; do broker_alive "$n"; done
pass
