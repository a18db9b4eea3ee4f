#!/usr/bin/python3
"""Produce numbered records (acks=1, or ACKS) until STOP_FILE appears; append "partition
offset n" to ACKED_FILE for every record whose delivery report confirmed it.

    acked_producer.py BOOTSTRAP TOPIC ACKED_FILE STOP_FILE [ACKS [MAX_RECORDS [idempotent]]]

"idempotent": enable.idempotence with five requests in flight.
"""
import os
import sys

from confluent_kafka import Producer

bootstrap, topic, acked_path, stop_path = sys.argv[1:5]
acks = sys.argv[5] if len(sys.argv) > 5 else "1"
max_records = int(sys.argv[6]) if len(sys.argv) > 6 else 3000000
# One request in flight: without idempotence a producer may reorder batches when it retries
# them after a lost connection, and the checker asserts production order per partition.
idempotent = len(sys.argv) > 7 and sys.argv[7] == "idempotent"
p = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "acks": acks,
              "linger.ms": 5, "enable.idempotence": idempotent, "message.timeout.ms": 120000,
              "max.in.flight.requests.per.connection": 5 if idempotent else 1,
              "reconnect.backoff.max.ms": 500})
acked = open(acked_path, "w", buffering=1 << 16)
stats = {"ok": 0, "failed": 0}


def on_delivery(err, msg):
    if err is not None:
        stats["failed"] += 1
        return
    stats["ok"] += 1
    acked.write("%d %d %s\n" % (msg.partition(), msg.offset(), msg.value().decode()))


n = 0
while not os.path.exists(stop_path) and n < max_records:
    try:
        p.produce(topic, key=b"%d" % n, value=b"%d" % n, on_delivery=on_delivery)
        n += 1
    except BufferError:
        p.poll(0.05)
        acked.flush()
        continue
    if len(p) > 20000:   # keep the backlog bounded while the broker is down
        p.poll(0.01)
        acked.flush()
    elif n % 1000 == 0:
        p.poll(0)
        acked.flush()
left = p.flush(60)
acked.close()
print("acked_producer: sent %d, acknowledged %d, failed %d, unresolved %d" % (n, stats["ok"], stats["failed"], left))
