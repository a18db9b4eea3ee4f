#!/usr/bin/python3
"""Exactly-once consume-transform-produce with confluent-kafka (librdkafka).

    eos.py BOOTSTRAP fill TOPIC N
        N numbered records (values 0..N-1) into TOPIC's partitions, idempotently.
    eos.py BOOTSTRAP pipeline IN OUT GROUP PROGRESS
        Copy IN to OUT in transactions that also commit the consumer's offsets
        (send_offsets_to_transaction), up to a thousand records each, writing the number of
        committed transactions to PROGRESS after each; exit once every partition of IN is
        consumed and committed. A second run (after a kill -9) fences the first's producer and
        goes on from the committed offsets.
    eos.py BOOTSTRAP verify OUT N
        read_committed sees every value 0..N-1 exactly once.
    eos.py BOOTSTRAP offsets TOPIC GROUP ZK
        Offsets sent to a transaction stay pending until it ends: a read_committed consumer's
        committed() (OffsetFetch RequireStable) gets no answer meanwhile, and the pending
        znode is in ZooKeeper; an abort drops them, a commit makes them the group's (offsets
        sent twice in one transaction: the later ones win).
"""
import os
import subprocess
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def conf(bootstrap, **kw):
    c = {"bootstrap.servers": bootstrap, "broker.address.family": "v4"}
    c.update({k.replace("_", "."): v for k, v in kw.items()})
    return c


def consumer(bootstrap, group, **kw):
    return Consumer(conf(bootstrap, group_id=group, isolation_level="read_committed",
                         auto_offset_reset="earliest", enable_auto_commit=False, **kw))


def fill(bootstrap, topic, n):
    p = Producer(conf(bootstrap, enable_idempotence=True, linger_ms=5))
    for i in range(int(n)):
        p.produce(topic, value=b"%d" % i, partition=i % 3)
        if i % 10000 == 0:
            p.poll(0)
    if p.flush(60):
        fail("records not delivered")


def caught_up(c, parts):
    for tp in c.position(parts):
        lo, hi = c.get_watermark_offsets(tp, timeout=10, cached=False)
        if tp.offset < hi:
            return False
    return True


def pipeline(bootstrap, src, dst, group, progress):
    c = consumer(bootstrap, group)
    p = Producer(conf(bootstrap, transactional_id="eos-" + group, linger_ms=5,
                      transaction_timeout_ms=20000))
    p.init_transactions(60)
    parts = [TopicPartition(src, i) for i in c.list_topics(src, timeout=10).topics[src].partitions]
    c.assign(parts)
    done = 0
    while True:
        msgs = [m for m in c.consume(1000, 1.0) if not m.error()]
        if not msgs:
            if caught_up(c, parts):
                break
            continue
        p.begin_transaction()
        for m in msgs:
            p.produce(dst, value=m.value(), partition=m.partition())
        p.send_offsets_to_transaction(c.position(parts), c.consumer_group_metadata(), 30)
        p.commit_transaction(60)
        done += 1
        with open(progress + ".tmp", "w") as f:
            f.write("%d\n" % done)
        os.replace(progress + ".tmp", progress)
    c.close()
    print("  pipeline: %d transactions" % done)


def verify(bootstrap, topic, n):
    n = int(n)
    c = consumer(bootstrap, "verify-%f" % time.time(), enable_partition_eof=True)
    md = c.list_topics(topic, timeout=10).topics[topic]
    c.assign([TopicPartition(topic, i, 0) for i in md.partitions])
    seen, eof, deadline = {}, set(), time.time() + 120
    while time.time() < deadline and len(eof) < len(md.partitions):
        for m in c.consume(1000, 0.5):
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    eof.add(m.partition())
                    continue
                fail("consumer: %s" % m.error())
            eof.discard(m.partition())
            v = int(m.value())
            seen[v] = seen.get(v, 0) + 1
    c.close()
    dups = sum(1 for k in seen.values() if k > 1)
    missing = n - sum(1 for v in range(n) if v in seen)
    if dups or missing or len(seen) != n:
        fail("%s: %d values seen, %d duplicated, %d missing" % (topic, len(seen), dups, missing))
    print("  %s: each of %d values exactly once" % (topic, n))


def java_bucket(s, n):
    h = 0
    for ch in s.encode("utf-16-be").decode("utf-16-be"):
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % n


def pending_znodes(zk, group):
    out = subprocess.run([sys.executable, os.path.join(HERE, "zkq.py"), zk, "get",
                          "/streamflow/coordinators/groups"], capture_output=True, text=True)
    import json
    b = java_bucket(group, len(json.loads(out.stdout)["buckets"]))
    out = subprocess.run([sys.executable, os.path.join(HERE, "zkq.py"), zk, "children",
                          "/streamflow/coordinators/groups/%d" % b], capture_output=True,
                         text=True)
    return [z for z in out.stdout.split() if z.endswith("-" + group)]


def committed(bootstrap, topic, group, timeout):
    """The group's committed offsets of partitions 0 and 1 (-1001: none), or the error."""
    c = consumer(bootstrap, group)
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)],
                                                timeout=timeout)]
    except KafkaException as e:
        return "error: %s" % e.args[0]
    finally:
        c.close()


def offsets(bootstrap, topic, group, zk):
    meta = consumer(bootstrap, group)
    p = Producer(conf(bootstrap, transactional_id="eos-offsets", linger_ms=5))
    p.init_transactions(30)
    # Each transaction sends offsets twice: the second over the first where they overlap.
    for sends, end, want in (([(0, 5)], [(1, 9)]), "abort", [-1001, -1001]), \
                            (([(0, 6), (1, 3)], [(0, 7)]), "commit", [7, 3]):
        p.begin_transaction()
        p.produce(topic, value=b"x", partition=2)
        for s in sends:
            p.send_offsets_to_transaction([TopicPartition(topic, q, o) for q, o in s],
                                          meta.consumer_group_metadata(), 30)
        zs = pending_znodes(zk, group)
        if len(zs) != 1:
            fail("pending offsets in ZooKeeper: %s" % zs)
        # UNSTABLE_OFFSET_COMMIT, which librdkafka retries until the call times out.
        got = committed(bootstrap, topic, group, 3)
        if not isinstance(got, str):
            fail("read_committed got offsets %s while a transaction holds them" % got)
        print("  open transaction (offsets pending in %s): committed() gives %s" % (zs[0], got))
        if end == "abort":
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
        got = committed(bootstrap, topic, group, 10)
        if got != want:
            fail("after the %s committed() gives %s, expected %s" % (end, got, want))
        if pending_znodes(zk, group):
            fail("pending offsets left in ZooKeeper after the %s" % end)
        print("  after the %s: committed() gives %s" % (end, got))
    meta.close()


if __name__ == "__main__":
    bootstrap, cmd = sys.argv[1:3]
    {"fill": fill, "pipeline": pipeline, "verify": verify,
     "offsets": offsets}[cmd](bootstrap, *sys.argv[3:])
