#!/usr/bin/python3
"""04-python-clients: confluent-kafka and kafka-python producers and consumers, 10,000
records each, content and per-partition order checked, each client reading the other's.

    py_clients.py BOOTSTRAP
"""
import sys
import time

import kafka
from kafka.structs import TopicPartition as KTopicPartition

from sftest import check, consume_all, fail, info, partitions_of, produce

bootstrap = sys.argv[1]
N = 10000


def records(tag):
    return [(("%s-key-%05d" % (tag, i)).encode(),
             ("%s-value-%05d-" % (tag, i)).encode() + b"x" * (i % 300),
             [("seq", str(i).encode()), ("client", tag.encode())])
            for i in range(N)]


def verify(tag, produced, reports, by_partition):
    """by_partition: {p: [(offset, key, value, headers)]} in offset order.
    reports: [(partition, offset)] per produced record."""
    want = {}
    for i, (p, off) in enumerate(reports):
        want.setdefault(p, []).append((off, i))
    total = 0
    for p, recs in sorted(by_partition.items()):
        exp = sorted(want.get(p, []))
        check(len(recs) == len(exp), "%s [%d]: consumed %d records, produced %d" % (tag, p, len(recs), len(exp)))
        for (off, key, value, headers), (eoff, i) in zip(recs, exp):
            k, v, h = produced[i]
            check(off == eoff, "%s [%d]: offset %d where record %d was acknowledged at %d" % (tag, p, off, i, eoff))
            check(key == k and value == v, "%s [%d] offset %d: got %r=%r, expected %r=%r"
                  % (tag, p, off, key, value[:40], k, v[:40]))
            check(headers == h, "%s [%d] offset %d: headers %r, expected %r" % (tag, p, off, headers, h))
        seqs = [i for _, i in exp]
        check(seqs == sorted(seqs), "%s [%d]: acknowledged offsets out of production order" % (tag, p))
        check([o for o, *_ in recs] == list(range(len(recs))), "%s [%d]: offsets not contiguous from 0" % (tag, p))
        total += len(recs)
    check(total == N, "%s: consumed %d records in total, expected %d" % (tag, total, N))


def confluent_read(topic):
    got = consume_all(bootstrap, topic)
    return {p: [(m.offset(), m.key(), m.value(), [(k, bytes(v)) for k, v in (m.headers() or [])])
                for m in msgs] for p, msgs in got.items()}


def kafkapython_read(topic):
    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                            auto_offset_reset="earliest", client_id="sftest-kafka-python")
    try:
        parts = sorted(c.partitions_for_topic(topic) or [])
        check(parts, "kafka-python sees no partitions for %s" % topic)
        tps = [KTopicPartition(topic, p) for p in parts]
        c.assign(tps)
        c.seek_to_beginning()
        end = c.end_offsets(tps)
        out = {p: [] for p in parts}
        deadline = time.time() + 120
        while sum(len(v) for v in out.values()) < sum(end.values()):
            check(time.time() < deadline, "kafka-python: timed out reading %s (%s of %s)"
                  % (topic, {p: len(v) for p, v in out.items()}, end))
            for tp, msgs in c.poll(timeout_ms=500, max_records=5000).items():
                for m in msgs:
                    out[tp.partition].append((m.offset, m.key, m.value, [(k, bytes(v)) for k, v in m.headers]))
        return out
    finally:
        c.close()


# --- confluent-kafka producer ------------------------------------------------------------
conf_recs = records("confluent")
reports = produce(bootstrap, "py-confluent", [(k, v, h, None, None) for k, v, h in conf_recs],
                  extra={"acks": "all"})
conf_reports = [(p, off) for p, off, _ in reports]
check(len({p for p, _ in conf_reports}) > 1, "confluent: all records went to one partition")
info("confluent-kafka produced %d records" % N)

# --- kafka-python producer (api_version detected from ApiVersions) -----------------------
prod = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, client_id="sftest-kafka-python")
detected = prod.config["api_version"]
info("kafka-python detected broker version %s" % (detected,))
check(detected >= (0, 11), "kafka-python detected %s: too old for record batch v2 (magic 2)" % (detected,))
kp_recs = records("kafkapython")
futures = [prod.send("py-kafkapython", key=k, value=v, headers=h) for k, v, h in kp_recs]
prod.flush(timeout=120)
kp_reports = []
for i, f in enumerate(futures):
    try:
        md = f.get(timeout=60)
    except Exception as e:
        fail("kafka-python: record %d not acknowledged: %r" % (i, e))
    kp_reports.append((md.partition, md.offset))
prod.close()
info("kafka-python produced %d records" % N)

check(partitions_of(bootstrap, "py-confluent") == [0, 1, 2], "py-confluent does not have 3 partitions")

# --- each consumer reads both topics -----------------------------------------------------
verify("confluent->confluent", conf_recs, conf_reports, confluent_read("py-confluent"))
verify("kafkapython->confluent", kp_recs, kp_reports, confluent_read("py-kafkapython"))
info("confluent-kafka consumer ok")
verify("confluent->kafkapython", conf_recs, conf_reports, kafkapython_read("py-confluent"))
verify("kafkapython->kafkapython", kp_recs, kp_reports, kafkapython_read("py-kafkapython"))
info("kafka-python consumer ok")
print("python clients ok")
