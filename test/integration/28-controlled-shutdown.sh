#!/usr/bin/env bash
# Controlled shutdown under load: each of three brokers in turn gets SIGTERM while an acks=all
# producer streams numbered records; before it stops it has the controller move leadership
# of every partition it leads to another in-sync replica, so it leads nothing when it exits;
# it comes back into every ISR after a restart; every acknowledged record is read back. Each
# broker stopped has checkpointed the high watermarks of its partitions.
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
    # Its high watermarks are checkpointed (Kafka's replication-offset-checkpoint), each within
    # its log: a restart as leader starts from them. (One not known yet is left out.)
    "$PY" - "$(broker_datadir "$n")" <<'EOF' || fail "$n did not checkpoint its high watermarks"
import os, sys
d = sys.argv[1]
lines = open(os.path.join(d, "replication-offset-checkpoint")).read().splitlines()
hw = {int(l.split()[1]): int(l.split()[2]) for l in lines[2:] if l.split()[0] == "cs"}
assert lines[0] == "0" and int(lines[1]) == len(lines) - 2, lines[:2]
assert set(hw) <= set(range(6)) and sum(hw.values()) > 0, hw
for p in range(6):
    part = os.path.join(d, "cs-%d" % p)
    logs = [f for f in os.listdir(part) if f.endswith(".log")]
    if any(os.path.getsize(os.path.join(part, f)) for f in logs):
        # A partition with records has a known high watermark, within its log.
        assert p in hw and hw[p] >= min(int(f[:-4]) for f in logs), (p, hw)
EOF
    more_acks 5000
    start_broker "$n"
    state wait-isr 3 60 || fail "$n did not rejoin the ISRs"
    more_acks 5000
done
stop_acked_producer cs
pass
