"""Shared helpers for the Python parts of the integration tests (imported, not run).

All clients talk to 127.0.0.1 over IPv4 and fail the test (exit 1 with a FAIL: line)
instead of raising, so the shell test shows one clear reason.
"""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def info(msg):
    print("  " + msg, flush=True)


def base_conf(bootstrap, extra=None):
    conf = {"bootstrap.servers": bootstrap, "broker.address.family": "v4"}
    conf.update(extra or {})
    return conf


def error_code(exc):
    """KafkaError code from a KafkaException (or None)."""
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0].code()
    return None


def produce(bootstrap, topic, records, extra=None, flush_every=None):
    """Produce (key, value, headers, partition, timestamp) tuples (None = unset) with
    confluent-kafka; return the delivery reports [(partition, offset, index)] in record order.
    Fails the test on any delivery error."""
    conf = base_conf(bootstrap, {"linger.ms": 5, "acks": "all", "enable.idempotence": False,
                                 "message.timeout.ms": 60000})
    conf.update(extra or {})
    p = Producer(conf)
    reports = [None] * len(records)
    errors = []

    def make_cb(i):
        def cb(err, msg):
            if err is not None:
                errors.append((i, err))
            else:
                reports[i] = (msg.partition(), msg.offset(), i)
        return cb

    for i, (key, value, headers, partition, ts) in enumerate(records):
        kw = {"key": key, "value": value, "on_delivery": make_cb(i)}
        if headers is not None:
            kw["headers"] = headers
        if partition is not None:
            kw["partition"] = partition
        if ts is not None:
            kw["timestamp"] = ts
        while True:
            try:
                p.produce(topic, **kw)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
        if flush_every and (i + 1) % flush_every == 0:
            p.flush(60)
    left = p.flush(120)
    check(left == 0, "%d records still undelivered after 120s" % left)
    if errors:
        fail("%d delivery errors producing to %s, first: record %d: %s"
             % (len(errors), topic, errors[0][0], errors[0][1]))
    check(all(r is not None for r in reports), "missing delivery reports")
    return reports


def partitions_of(bootstrap, topic, timeout=30, extra=None):
    """Partition ids of topic from Metadata (waits until the topic is known)."""
    conf = base_conf(bootstrap, {"group.id": "sftest-meta"})
    conf.update(extra or {})
    c = Consumer(conf)
    try:
        deadline = time.time() + timeout
        while True:
            md = c.list_topics(topic, timeout=10)
            t = md.topics.get(topic)
            if t is not None and t.error is None and t.partitions:
                return sorted(t.partitions)
            if time.time() > deadline:
                fail("topic %s not in metadata after %ds (%s)" % (topic, timeout, t and t.error))
            time.sleep(0.2)
    finally:
        c.close()


def consume_all(bootstrap, topic, partitions=None, timeout=120, extra=None):
    """Read every given partition (default: all) from the beginning up to the high watermark
    observed at the start, with an assign()-only confluent-kafka consumer (no group
    features, no commits). Returns {partition: [Message]} in offset order."""
    conf = base_conf(bootstrap, {"group.id": "sftest-assign", "enable.auto.commit": False,
                                 "enable.auto.offset.store": False, "auto.offset.reset": "error"})
    conf.update(extra or {})
    c = Consumer(conf)
    try:
        if partitions is None:
            partitions = partitions_of(bootstrap, topic, extra=extra)
        hw = {}
        for p in partitions:
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)
            hw[p] = hi
        out = {p: [] for p in partitions}
        todo = {p for p in partitions if hw[p] > 0}
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        deadline = time.time() + timeout
        while todo:
            if time.time() > deadline:
                fail("consume %s: timed out; still waiting for partitions %s (have %s of %s)"
                     % (topic, sorted(todo), {p: len(out[p]) for p in todo}, {p: hw[p] for p in todo}))
            for m in c.consume(num_messages=10000, timeout=0.5):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    fail("consume %s: %s" % (topic, m.error()))
                p = m.partition()
                if p in todo:
                    out[p].append(m)
                    if m.offset() >= hw[p] - 1:
                        todo.discard(p)
        return out
    finally:
        c.close()


def watermarks(bootstrap, topic, partition):
    c = Consumer(base_conf(bootstrap, {"group.id": "sftest-wm"}))
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10, cached=False)
    finally:
        c.close()
