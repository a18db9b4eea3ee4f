#!/usr/bin/python3
"""Transactions with confluent-kafka (librdkafka).

    transactions.py BOOTSTRAP commit-abort TOPIC
        Three transactions of 100 records each: committed, aborted, committed. A read_committed
        consumer gets exactly the 200 committed records, in order, and no control record; a
        read_uncommitted one gets all 300; the partitions' last stable offsets reach their ends.
    transactions.py BOOTSTRAP fence TOPIC
        Two producers with one transactional.id: the second one's init fences the first, whose
        next commit fails as fenced; the first's open transaction was aborted, so its records
        are invisible to read_committed.
    transactions.py BOOTSTRAP failover TOPIC READY_FILE GO_FILE
        A committed transaction, then one whose coordinator is killed (by the caller, between
        READY_FILE appearing and GO_FILE) before it commits, then one more: read_committed
        gets each of the 150 records once.
    transactions.py BOOTSTRAP hanging TOPIC
        A transaction left open (the producer process gone) holds read_committed consumers back
        until the coordinator aborts it at its timeout; then its records stay invisible.
"""
import os
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def producer(bootstrap, txn_id, timeout_ms=60000):
    p = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                  "transactional.id": txn_id, "transaction.timeout.ms": timeout_ms,
                  "linger.ms": 5})
    p.init_transactions(30)
    return p


def send(p, topic, first, n, partitions=3):
    for i in range(first, first + n):
        p.produce(topic, key=b"%d" % i, value=b"%d" % i, partition=i % partitions)
    p.flush(30)


def read_all(bootstrap, topic, isolation, expect_at_least=0, seconds=30):
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                  "group.id": "reader-%s-%f" % (isolation, time.time()),
                  "isolation.level": isolation, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    md = c.list_topics(topic, timeout=10).topics[topic]
    c.assign([TopicPartition(topic, p, 0) for p in md.partitions])
    got, eof, deadline = [], set(), time.time() + seconds
    while time.time() < deadline and (len(eof) < len(md.partitions) or len(got) < expect_at_least):
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                eof.add(m.partition())
                continue
            fail("%s consumer: %s" % (isolation, m.error()))
        eof.discard(m.partition())
        got.append((m.partition(), m.offset(), int(m.value())))
    c.close()
    return got


def last_stable_offsets(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                  "group.id": "lso", "isolation.level": "read_committed"})
    md = c.list_topics(topic, timeout=10).topics[topic]
    out = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
           for p in md.partitions}
    c.close()
    return out


def check_order(got, what):
    last = {}
    for part, off, v in got:
        if part in last and (off <= last[part][0] or v <= last[part][1]):
            fail("%s: partition %d out of order at offset %d" % (what, part, off))
        last[part] = (off, v)


def commit_abort(bootstrap, topic):
    p = producer(bootstrap, "txn-ca")
    for k, commit in enumerate((True, False, True)):
        p.begin_transaction()
        send(p, topic, k * 100, 100)
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
    committed = read_all(bootstrap, topic, "read_committed", 200)
    values = sorted(v for _, _, v in committed)
    if values != list(range(0, 100)) + list(range(200, 300)):
        fail("read_committed got %d records: %s..." % (len(values), values[:5]))
    check_order(committed, "read_committed")
    everything = read_all(bootstrap, topic, "read_uncommitted", 300)
    if sorted(v for _, _, v in everything) != list(range(300)):
        fail("read_uncommitted got %d records, expected 300" % len(everything))
    lso = last_stable_offsets(bootstrap, topic)
    # 100 records and one marker per transaction and partition: the ends are past them all.
    for part, end in lso.items():
        mine = [o for pp, o, _ in everything if pp == part]
        if end <= max(mine):
            fail("partition %d: last stable offset %d not past %d" % (part, end, max(mine)))
    print("  3 transactions: read_committed 200 records, read_uncommitted 300; LSO %s" % lso)


def fence(bootstrap, topic):
    p1 = producer(bootstrap, "txn-fence")
    p1.begin_transaction()
    send(p1, topic, 0, 30)
    p2 = producer(bootstrap, "txn-fence")  # fences p1 and aborts its transaction
    try:
        p1.commit_transaction(30)
        fail("the fenced producer committed")
    except KafkaException as e:
        err = e.args[0]
        if not (err.fatal() or "fenced" in str(err).lower()):
            fail("the fenced producer's commit failed with %s" % err)
        print("  the first producer's commit: %s" % err)
    p2.begin_transaction()
    send(p2, topic, 1000, 30)
    p2.commit_transaction(30)
    got = read_all(bootstrap, topic, "read_committed", 30)
    if sorted(v for _, _, v in got) != list(range(1000, 1030)):
        fail("after fencing, read_committed got %s" % sorted(v for _, _, v in got)[:10])
    print("  the second producer fenced the first: only its 30 records are committed")


def failover(bootstrap, topic, ready, go):
    p = producer(bootstrap, "txn-fo")
    p.begin_transaction()
    send(p, topic, 0, 50)
    p.commit_transaction(30)
    p.begin_transaction()
    send(p, topic, 50, 50)
    open(ready, "w").close()
    deadline = time.time() + 60
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.1)
    p.commit_transaction(90)
    p.begin_transaction()
    send(p, topic, 100, 50)
    p.commit_transaction(90)
    got = read_all(bootstrap, topic, "read_committed", 150)
    values = sorted(v for _, _, v in got)
    if values != list(range(150)):
        fail("after the coordinator failover read_committed got %d records (%d distinct)"
             % (len(values), len(set(values))))
    check_order(got, "read_committed")
    print("  the transaction committed through its coordinator's failover: 150 records once")


def hanging(bootstrap, topic):
    p = producer(bootstrap, "txn-hang", timeout_ms=5000)
    p.begin_transaction()
    send(p, topic, 0, 20)
    del p  # gone without a commit or an abort (the destructor does not end it)
    start = time.time()
    lso = last_stable_offsets(bootstrap, topic)
    if max(lso.values()) != 0:
        fail("the open transaction does not hold the last stable offsets back: %s" % lso)
    while min(lso.values()) == 0 and time.time() < start + 60:
        time.sleep(0.5)
        lso = last_stable_offsets(bootstrap, topic)
    if min(lso.values()) == 0:
        fail("the timed-out transaction still holds the LSO: %s" % lso)
    got = read_all(bootstrap, topic, "read_committed", 0)
    if got:
        fail("read_committed saw %d records of the aborted transaction" % len(got))
    print("  the open transaction was aborted after %.0f s; nothing visible, LSO %s"
          % (time.time() - start, lso))


if __name__ == "__main__":
    bootstrap, cmd, topic = sys.argv[1:4]
    {"commit-abort": commit_abort, "fence": fence, "hanging": hanging,
     "failover": failover}[cmd](bootstrap, topic, *sys.argv[4:])
