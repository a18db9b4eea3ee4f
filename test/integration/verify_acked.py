#!/usr/bin/python3
"""Check a topic against ACKED_FILE ("partition offset n" lines from acked_producer.py):
every acknowledged record is at its acknowledged offset, acknowledged records are in
production order within each partition, offsets have no holes, and reads starting in the
middle of the log (index lookups) return the right record.

    verify_acked.py BOOTSTRAP TOPIC ACKED_FILE [exactly-once]

"exactly-once" (an idempotent producer): besides, no record is in the topic twice and every
partition holds its records in production order, acknowledged or not.
"""
import sys

from confluent_kafka import Consumer, TopicPartition

from sftest import base_conf, check, consume_all, info

bootstrap, topic, acked_path = sys.argv[1:4]
acked = [tuple(int(x) for x in line.split()) for line in open(acked_path) if line.strip()]
got = consume_all(bootstrap, topic, timeout=240)
logs = {p: [(m.offset(), int(m.value())) for m in ms] for p, ms in got.items()}
for p, recs in logs.items():
    check([o for o, _ in recs] == list(range(len(recs))), "partition %d: offsets are not contiguous from 0" % p)

by_part = {}
for p, off, n in acked:
    check(p in logs, "acknowledged partition %d not in the topic" % p)
    check(off < len(logs[p]), "partition %d: acknowledged offset %d beyond the end (%d)" % (p, off, len(logs[p])))
    check(logs[p][off][1] == n, "partition %d offset %d holds %d, but %d was acknowledged there"
          % (p, off, logs[p][off][1], n))
    by_part.setdefault(p, []).append((off, n))
for p, v in by_part.items():
    ns = [n for _, n in sorted(v)]
    check(ns == sorted(ns), "partition %d: acknowledged records out of production order" % p)
acked_ns = {n for _, _, n in acked}
seen = [n for recs in logs.values() for _, n in recs]
dups = len(seen) - len(set(seen))
if len(sys.argv) > 4 and sys.argv[4] == "exactly-once":
    check(dups == 0, "%d records are in the topic twice" % dups)
    for p, recs in logs.items():
        ns = [n for _, n in recs]
        check(ns == sorted(ns), "partition %d: records out of production order" % p)
info("%d acknowledged records all present at their offsets; %d records in the log, "
     "%d not acknowledged (in flight at the kill), %d duplicates from retries"
     % (len(acked), len(seen), len(set(seen) - acked_ns), dups))

# Fetches that start in the middle of the log.
c = Consumer(base_conf(bootstrap, {"group.id": "sftest-mid", "enable.auto.commit": False}))
for p, recs in sorted(logs.items()):
    for off in sorted({0, len(recs) // 3, len(recs) // 2, len(recs) - 1}):
        if off < 0:
            continue
        c.assign([TopicPartition(topic, p, off)])
        m = None
        for _ in range(60):
            m = c.poll(1.0)
            if m is not None and not m.error():
                break
        check(m is not None and not m.error(), "partition %d: no record when fetching from offset %d" % (p, off))
        check(m.offset() == off and int(m.value()) == recs[off][1],
              "partition %d: fetch from %d returned offset %d value %s" % (p, off, m.offset(), m.value()))
        c.unassign()
c.close()
info("mid-log fetches ok")
print("acknowledged records verified")
