#!/usr/bin/env bash
# A follower that was away while its leader's retention deleted everything it had: its log
# ends below the leader's log start, so it cannot fetch from where it is (OFFSET_OUT_OF_RANGE).
# It starts its log over at the leader's log start, as Kafka's follower does, catches up and
# joins the ISR again; the records the leader still has are served by it once it leads.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster log.retention.check.interval.ms=200
cd "$SF_TEST_DIR"
state() { "$PY" cluster_state.py "127.0.0.1:$ZK_PORT" lag "$@"; }
create_topic lag 1 3 segment.bytes=16384 retention.bytes=1 min.insync.replicas=1

# produce N TAG: N acknowledged records tagged TAG on lag-0.
produce() {
    "$PY" - "$ALL" "$1" "$2" <<'PY' || fail "producing $1 records"
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4", "acks": "all",
              "linger.ms": 5, "batch.size": 4096})  # small batches: many 16 KB segments
for i in range(int(sys.argv[2])):
    p.produce("lag", ("%s-%06d-" % (sys.argv[3], i)) + "x" * 200, partition=0)
    p.poll(0)
assert p.flush(60) == 0
PY
}

# start_offset: the leader's log start offset of lag-0 (ListOffsets earliest).
start_offset() {
    "$PY" - "$ALL" <<'PY'
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4", "group.id": "x"})
print(c.get_watermark_offsets(TopicPartition("lag", 0), timeout=10)[0])
c.close()
PY
}

produce 100 early
leader=$(state leader 0)
follower=$(( leader % 3 + 1 ))
stop_broker "b$follower"
produce 3000 late
past_100() { (( $(start_offset) > 100 )); }
wait_until 30 "retention on the leader to pass offset 100" past_100
log "broker $follower stopped at offset 100; the leader's log now starts at $(start_offset)"

start_broker "b$follower"
state wait-isr 3 60 || fail "broker $follower did not rejoin the ISR"
grep -Eq "lag-0: offset [0-9]+ is below the leader's log start" "$(broker_log "b$follower")" ||
    fail "broker $follower did not start its log over at the leader's log start"

# It holds what the leader holds: made leader (the others stopped), it serves the last records.
produce 10 final
for n in b1 b2 b3; do [[ $n == "b$follower" ]] || stop_broker "$n"; done
leads() { [[ $(state leader 0) == "$follower" ]]; }
wait_until 30 "broker $follower to lead lag-0" leads
"$PY" - "127.0.0.1:${SF_BROKER_PORT[b$follower]}" <<'PY' || fail "reading from broker $follower"
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4", "group.id": "r",
              "enable.auto.commit": False})
lo, hi = c.get_watermark_offsets(TopicPartition("lag", 0), timeout=10)
c.assign([TopicPartition("lag", 0, lo)])
seen = []
while len(seen) < hi - lo:
    m = c.poll(10)
    assert m is not None, "nothing more after %d of %d records" % (len(seen), hi - lo)
    assert not m.error(), m.error()
    seen.append(m.value().decode()[:12])
assert seen[-10:] == ["final-%06d" % i for i in range(10)], seen[-10:]
assert all(s.startswith(("late-", "final-")) for s in seen), seen[:3]
c.close()
PY
pass
