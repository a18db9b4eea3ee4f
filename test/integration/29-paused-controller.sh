#!/usr/bin/env bash
# A controller paused past its ZooKeeper session (SIGSTOP) while an acks=all producer streams
# numbered records: another broker becomes the controller and moves the paused broker's
# leadership to in-sync replicas; when it resumes, the old controller learns its session
# expired, stops acting as the controller (its queued partition-state writes fail instead of
# landing), registers again, catches up where its log diverged, and rejoins every ISR. Twice,
# so the second pause hits the new controller. Every acknowledged record is read back.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
common=(zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=4000 num.partitions=6
        default.replication.factor=3 min.insync.replicas=2)
for i in 1 2 3; do start_broker "b$i" broker.id=$i "${common[@]}"; done
all=127.0.0.1:${SF_BROKER_PORT[b1]},127.0.0.1:${SF_BROKER_PORT[b2]},127.0.0.1:${SF_BROKER_PORT[b3]}
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" pc "$@"; }
controller() { "$PY" failover.py "127.0.0.1:$ZK_PORT" controller; }

"$PY" - "$all" <<'PY' || fail "topic creation"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4"})
a.create_topics([NewTopic("pc", 6, 3, config={"min.insync.replicas": "2"})])["pc"].result(30)
PY
state wait-isr 3 30 || fail "the ISRs did not start with all three replicas"

acked=$SF_TMP/acked.txt
: >"$acked"
sf_bg "$PY" acked_producer.py "$all" pc "$acked" "$SF_TMP/stop" all 100000000
prod=$!
more_acks() { # more_acks N: wait for N more acknowledgements
    local from
    from=$(wc -l <"$acked")
    wait_until 120 "$1 more acknowledgements" bash -c "(( \$(wc -l <'$acked') >= $from + $1 ))"
}
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
touch "$SF_TMP/stop"
wait "$prod" || fail "the producer exited with status $?"
log "$(wc -l <"$acked") records acknowledged in total"
"$PY" verify_acked.py "$all" pc "$acked" || fail "acknowledged records after the pauses"
for n in b1 b2 b3; do broker_alive "$n"; done
pass
