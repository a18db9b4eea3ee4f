#!/usr/bin/python3
"""03-createtopics: CreateTopics / Metadata / CreatePartitions / DescribeConfigs /
DeleteTopics through confluent-kafka's AdminClient, with ZooKeeper checked directly.

    admin_ops.py BOOTSTRAP ZK_HOST:PORT
"""
import json
import sys
import time

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

import zkq
from sftest import base_conf, check, consume_all, error_code, fail, info, produce

bootstrap, zkserver = sys.argv[1], sys.argv[2]
admin = AdminClient(base_conf(bootstrap))
CHROOT = "/streamflow"


def zk_get(path):
    s = zkq.Session(zkserver)
    try:
        return s.get(CHROOT + path)[0]
    except zkq.NoNode:
        return None
    finally:
        s.close()


def result(futures, what):
    """Wait for every future; return {key: exception or None}."""
    out = {}
    for k, f in futures.items():
        try:
            f.result(timeout=60)
            out[k] = None
        except KafkaException as e:
            out[k] = e
        except Exception as e:  # timeouts and the like
            fail("%s %s: %r" % (what, k, e))
    return out


def expect_ok(futures, what):
    for k, e in result(futures, what).items():
        check(e is None, "%s %s failed: %s" % (what, k, e))


def expect_err(futures, code, what):
    for k, e in result(futures, what).items():
        check(e is not None, "%s %s succeeded, expected %s" % (what, k, KafkaError(code).name()))
        check(error_code(e) == code, "%s %s: got %s, expected %s" % (what, k, e, KafkaError(code).name()))


def metadata(topic):
    return admin.list_topics(topic=topic, timeout=15).topics.get(topic)


def wait_partitions(topic, n, timeout=30):
    deadline = time.time() + timeout
    while True:
        t = metadata(topic)
        if t is not None and t.error is None and len(t.partitions) == n:
            return t
        if time.time() > deadline:
            fail("%s: metadata shows %s, expected %d partitions" %
                 (topic, None if t is None else (t.error, sorted(t.partitions)), n))
        time.sleep(0.2)


def all_topics():
    return set(admin.list_topics(timeout=15).topics)


# --- CreateTopics ------------------------------------------------------------------------
expect_ok(admin.create_topics([NewTopic("t3", num_partitions=3, replication_factor=1),
                               NewTopic("t3cfg", num_partitions=1, replication_factor=1,
                                        config={"retention.ms": "123456789"})],
                              operation_timeout=30, request_timeout=60), "CreateTopics")
t = wait_partitions("t3", 3)
for pid, p in sorted(t.partitions.items()):
    check(p.error is None, "t3 [%d] error %s" % (pid, p.error))
    check(p.leader == 1, "t3 [%d] leader %d, expected 1" % (pid, p.leader))
    check(list(p.replicas) == [1] and list(p.isrs) == [1],
          "t3 [%d] replicas %s isr %s, expected [1] [1]" % (pid, p.replicas, p.isrs))
info("t3 created with 3 partitions, leader 1")

raw = zk_get("/brokers/topics/t3")
check(raw is not None, "/brokers/topics/t3 not in ZooKeeper")
parts = json.loads(raw).get("partitions")
check(parts == {"0": [1], "1": [1], "2": [1]}, "/brokers/topics/t3 partitions = %r" % parts)
raw = zk_get("/config/topics/t3cfg")
check(raw is not None and json.loads(raw).get("config", {}).get("retention.ms") == "123456789",
      "/config/topics/t3cfg = %r, expected retention.ms 123456789" % raw)

expect_err(admin.create_topics([NewTopic("t3", 3, 1)], request_timeout=60),
           KafkaError.TOPIC_ALREADY_EXISTS, "CreateTopics(existing)")
expect_err(admin.create_topics([NewTopic("bad/name", 1, 1)], request_timeout=60),
           KafkaError.TOPIC_EXCEPTION, "CreateTopics(bad/name)")
expect_err(admin.create_topics([NewTopic("too-many-replicas", 1, 3)], request_timeout=60),
           KafkaError.INVALID_REPLICATION_FACTOR, "CreateTopics(replication factor 3 on 1 broker)")
expect_ok(admin.create_topics([NewTopic("validate-only", 2, 1)], validate_only=True,
                              request_timeout=60), "CreateTopics(validate_only)")
time.sleep(1)
check("validate-only" not in all_topics(), "validate_only created the topic")
check(zk_get("/brokers/topics/validate-only") is None, "validate_only wrote to ZooKeeper")
info("CreateTopics errors ok")

# Every partition takes records.
recs = [(b"k%d" % i, b"v%d" % i, None, i % 3, None) for i in range(30)]
produce(bootstrap, "t3", recs)
got = consume_all(bootstrap, "t3", [0, 1, 2])
for p in range(3):
    vals = [m.value() for m in got[p]]
    check(vals == [b"v%d" % i for i in range(p, 30, 3)], "t3 [%d] holds %r" % (p, vals))

# --- CreatePartitions --------------------------------------------------------------------
expect_ok(admin.create_partitions([NewPartitions("t3", 5)], request_timeout=60), "CreatePartitions(t3 -> 5)")
wait_partitions("t3", 5)
parts = json.loads(zk_get("/brokers/topics/t3")).get("partitions")
check(sorted(parts) == ["0", "1", "2", "3", "4"], "/brokers/topics/t3 partitions after growing: %r" % parts)
produce(bootstrap, "t3", [(b"new", b"in partition 4", None, 4, None)])
got = consume_all(bootstrap, "t3", [4])
check([m.value() for m in got[4]] == [b"in partition 4"], "t3 [4] holds %r" % [m.value() for m in got[4]])
expect_err(admin.create_partitions([NewPartitions("t3", 2)], request_timeout=60),
           KafkaError.INVALID_PARTITIONS, "CreatePartitions(t3 -> 2)")
expect_err(admin.create_partitions([NewPartitions("no-such-topic", 4)], request_timeout=60),
           KafkaError.UNKNOWN_TOPIC_OR_PART, "CreatePartitions(unknown topic)")
info("CreatePartitions ok")

# --- DescribeConfigs ---------------------------------------------------------------------
for res, f in admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "t3cfg"),
                                      ConfigResource(ConfigResource.Type.TOPIC, "t3")],
                                     request_timeout=60).items():
    try:
        entries = f.result(timeout=60)
    except KafkaException as e:
        fail("DescribeConfigs %s: %s" % (res, e))
    check(len(entries) > 0, "DescribeConfigs %s returned no entries" % res)
    if res.name == "t3cfg":
        e = entries.get("retention.ms")
        check(e is not None and e.value == "123456789",
              "t3cfg retention.ms = %r, expected 123456789" % (e and e.value))
        check(not e.is_default, "t3cfg retention.ms reported as a default")
    info("DescribeConfigs %s: %d entries, e.g. %s" % (res.name, len(entries), sorted(entries)[:5]))

# --- DeleteTopics ------------------------------------------------------------------------
expect_ok(admin.delete_topics(["t3"], operation_timeout=30, request_timeout=60), "DeleteTopics(t3)")
deadline = time.time() + 30
while "t3" in all_topics() or zk_get("/brokers/topics/t3") is not None:
    check(time.time() < deadline, "t3 still present 30s after DeleteTopics")
    time.sleep(0.2)
expect_err(admin.delete_topics(["t3"], request_timeout=60), KafkaError.UNKNOWN_TOPIC_OR_PART,
           "DeleteTopics(deleted topic)")
info("t3 deleted")

# Re-created under the same name, the topic starts empty: the old log is gone.
deadline = time.time() + 30
while True:
    errs = result(admin.create_topics([NewTopic("t3", 2, 1)], request_timeout=60), "CreateTopics(t3 again)")
    e = errs["t3"]
    if e is None:
        break
    check(error_code(e) == KafkaError.TOPIC_ALREADY_EXISTS and time.time() < deadline,
          "re-creating t3: %s" % e)
    time.sleep(0.5)
wait_partitions("t3", 2)
got = consume_all(bootstrap, "t3", [0, 1])
check(not got[0] and not got[1], "re-created t3 holds old records: %r" % {p: len(v) for p, v in got.items()})
produce(bootstrap, "t3", [(None, b"fresh", None, 0, None)])
got = consume_all(bootstrap, "t3", [0])
check([(m.offset(), m.value()) for m in got[0]] == [(0, b"fresh")],
      "re-created t3 [0]: %r" % [(m.offset(), m.value()) for m in got[0]])
info("re-created t3 is empty and usable")
print("admin operations ok")
