#!/usr/bin/env bash
# Controlled shutdown under load: each of three brokers in turn gets SIGTERM while an acks=all
# producer streams numbered records; before it stops it has the controller move leadership
# of every partition it leads to another in-sync replica, so it leads nothing when it exits;
# it comes back into every ISR after a restart; every acknowledged record is read back.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
common=(zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=4000 num.partitions=6
        default.replication.factor=3 min.insync.replicas=2 controlled.shutdown.retry.backoff.ms=500)
for i in 1 2 3; do start_broker "b$i" broker.id=$i "${common[@]}"; done
all=127.0.0.1:${SF_BROKER_PORT[b1]},127.0.0.1:${SF_BROKER_PORT[b2]},127.0.0.1:${SF_BROKER_PORT[b3]}
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" cs "$@"; }

"$PY" - "$all" <<'PY' || fail "topic creation"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4"})
a.create_topics([NewTopic("cs", 6, 3, config={"min.insync.replicas": "2"})])["cs"].result(30)
PY
state wait-isr 3 30 || fail "the ISRs did not start with all three replicas"

acked=$SF_TMP/acked.txt
: >"$acked"
sf_bg "$PY" acked_producer.py "$all" cs "$acked" "$SF_TMP/stop" all 100000000
prod=$!
more_acks() { # more_acks N: wait for N more acknowledgements
    local from
    from=$(wc -l <"$acked")
    wait_until 120 "$1 more acknowledgements" bash -c "(( \$(wc -l <'$acked') >= $from + $1 ))"
}
more_acks 5000
for n in b1 b2 b3; do
    id=${SF_BROKER_ID[$n]}
    stop_broker "$n"
    grep -q 'controlled shutdown: leadership moved off this broker' "$(broker_log "$n")" ||
        fail "$n stopped without handing its leadership over"
    # The hand-over happened before the exit: no waiting for the session to expire.
    state wait-leader-not "$id" 2 || fail "$n still leads partitions after its controlled shutdown"
    more_acks 5000
    start_broker "$n"
    state wait-isr 3 60 || fail "$n did not rejoin the ISRs"
    more_acks 5000
done
touch "$SF_TMP/stop"
wait "$prod" || fail "the producer exited with status $?"
log "$(wc -l <"$acked") records acknowledged in total"
"$PY" verify_acked.py "$all" cs "$acked" || fail "acknowledged records after the controlled shutdowns"
pass
