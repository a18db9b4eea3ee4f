#!/usr/bin/env bash
# Controlled shutdown under load: each of three brokers in turn gets SIGTERM while an acks=all
# producer streams numbered records; before it stops it has the controller move leadership
# of every partition it leads to another in-sync replica, so it leads nothing when it exits;
# it comes back into every ISR after a restart; every acknowledged record is read back.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster min.insync.replicas=2 controlled.shutdown.retry.backoff.ms=500
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" cs "$@"; }
create_topic cs 6 3 min.insync.replicas=2
start_acked_producer cs
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
stop_acked_producer cs
pass
