#!/usr/bin/python3
"""05-listoffsets: records with explicit timestamps, then ListOffsets earliest / latest /
by timestamp through confluent-kafka and kafka-python, checking exact offsets.

    list_offsets.py BOOTSTRAP produce|check
"""
import sys

import kafka
from confluent_kafka import Consumer, TopicPartition
from kafka.structs import TopicPartition as KTopicPartition

from sftest import base_conf, check, info, produce

bootstrap, phase = sys.argv[1], sys.argv[2]
BASE = 1600000000000    # 2020-09-13, ms
BASE2 = 1700000000000
NM = [5000, 1000, 3000, 7000, 2000, 6000]   # non-monotonic timestamps (offsets 0..5)
SEG_N = 3000

if phase == "produce":
    produce(bootstrap, "lo", [(b"k%d" % i, b"v%d" % i, None, 0, BASE + i * 1000) for i in range(100)],
            flush_every=25)
    produce(bootstrap, "lonm", [(None, b"nm%d" % i, None, 0, BASE + ts) for i, ts in enumerate(NM)],
            flush_every=2)
    produce(bootstrap, "loseg", [(None, b"%05d" % i + b"s" * 1019, None, 0, BASE2 + i * 10) for i in range(SEG_N)],
            flush_every=100)
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient(base_conf(bootstrap))
    for f in admin.create_topics([NewTopic("loempty", 1, 1)], request_timeout=60).values():
        f.result(timeout=60)
    info("produced lo (100), lonm (%d), loseg (%d)" % (len(NM), SEG_N))
    sys.exit(0)

# (topic, target timestamp, expected offset or -1 for "none", expected record timestamp)
cases = [
    ("lo", BASE - 1, 0, BASE),
    ("lo", BASE, 0, BASE),
    ("lo", BASE + 1, 1, BASE + 1000),
    ("lo", BASE + 10500, 11, BASE + 11000),
    ("lo", BASE + 25000, 25, BASE + 25000),   # first record of the second batch
    ("lo", BASE + 99000, 99, BASE + 99000),
    ("lo", BASE + 99001, -1, None),
    ("lonm", BASE + 500, 0, BASE + 5000),
    ("lonm", BASE + 2500, 0, BASE + 5000),
    ("lonm", BASE + 5500, 3, BASE + 7000),
    ("lonm", BASE + 7000, 3, BASE + 7000),
    ("lonm", BASE + 7001, -1, None),
    ("loseg", BASE2, 0, BASE2),
    ("loseg", BASE2 + 999 * 10, 999, BASE2 + 999 * 10),
    ("loseg", BASE2 + 1234 * 10 + 5, 1235, BASE2 + 1235 * 10),
    ("loseg", BASE2 + 2100 * 10, 2100, BASE2 + 2100 * 10),
    ("loseg", BASE2 + (SEG_N - 1) * 10, SEG_N - 1, BASE2 + (SEG_N - 1) * 10),
    ("loseg", BASE2 + SEG_N * 10, -1, None),
    ("loempty", 0, -1, None),
]
ends = {"lo": 100, "lonm": len(NM), "loseg": SEG_N, "loempty": 0}

# --- confluent-kafka ---------------------------------------------------------------------
c = Consumer(base_conf(bootstrap, {"group.id": "sftest-lo"}))
for t, end in ends.items():
    wm = c.get_watermark_offsets(TopicPartition(t, 0), timeout=10, cached=False)
    check(tuple(wm) == (0, end), "confluent watermarks of %s: %s, expected (0, %d)" % (t, wm, end))
for t, ts, want, _ in cases:
    r = c.offsets_for_times([TopicPartition(t, 0, ts)], timeout=10)[0]
    check(r.error is None, "confluent offsets_for_times(%s, %d): %s" % (t, ts, r.error))
    check(r.offset == want, "confluent offsets_for_times(%s, %d) = %d, expected %d" % (t, ts, r.offset, want))
c.close()
info("confluent-kafka: watermarks and %d timestamp lookups ok" % len(cases))

# --- kafka-python ------------------------------------------------------------------------
kc = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
tps = {t: KTopicPartition(t, 0) for t in ends}
beg = kc.beginning_offsets(list(tps.values()))
end = kc.end_offsets(list(tps.values()))
for t, n in ends.items():
    check(beg[tps[t]] == 0, "kafka-python beginning_offsets(%s) = %s" % (t, beg[tps[t]]))
    check(end[tps[t]] == n, "kafka-python end_offsets(%s) = %s, expected %d" % (t, end[tps[t]], n))
for t, ts, want, want_ts in cases:
    r = kc.offsets_for_times({tps[t]: ts})[tps[t]]
    if want < 0:
        check(r is None, "kafka-python offsets_for_times(%s, %d) = %s, expected None" % (t, ts, r))
    else:
        check(r is not None and r.offset == want and r.timestamp == want_ts,
              "kafka-python offsets_for_times(%s, %d) = %s, expected offset %d timestamp %d"
              % (t, ts, r, want, want_ts))
kc.close()
info("kafka-python: beginning/end offsets and %d timestamp lookups ok" % len(cases))
print("list offsets ok")
