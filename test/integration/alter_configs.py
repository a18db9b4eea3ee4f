#!/usr/bin/python3
"""15-alter-configs: topic config changes through AlterConfigs (confluent-kafka's and
kafka-python's alter_configs) and IncrementalAlterConfigs v0 and v1 (raw requests: no client
in Debian speaks it yet), checked in ZooKeeper, through DescribeConfigs right after each
answer, and in the running partition logs (max.message.bytes, segment.bytes, retention.ms).

    alter_configs.py BOOTSTRAP ZK_HOST:PORT DATA_DIR            the changes
    alter_configs.py BOOTSTRAP ZK_HOST:PORT DATA_DIR restarted  what must hold after a restart
"""
import glob
import json
import os
import struct
import sys
import time

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

import kafka
from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType as KType

import kwire
import zkq
from sftest import base_conf, check, fail, info, watermarks

bootstrap, zkserver, datadir = sys.argv[1], sys.argv[2], sys.argv[3]
mode = sys.argv[4] if len(sys.argv) > 4 else "changes"
admin = AdminClient(base_conf(bootstrap))

TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
ERR_UNKNOWN_TOPIC, ERR_INVALID_CONFIG, ERR_INVALID_REQUEST = 3, 40, 42
SOURCE_TOPIC, SOURCE_DEFAULT = 1, 5


def zk_config(topic):
    """The override set in /config/topics/<topic>."""
    s = zkq.Session(zkserver)
    try:
        raw = s.get("/streamflow/config/topics/" + topic)[0]
    except zkq.NoNode:
        return None
    finally:
        s.close()
    return json.loads(raw)["config"]


def describe(topic):
    """{name: (value, source)} from DescribeConfigs (confluent-kafka)."""
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    try:
        entries = admin.describe_configs([res], request_timeout=30)[res].result(timeout=60)
    except KafkaException as e:
        fail("DescribeConfigs %s: %s" % (topic, e))
    return {n: (e.value, int(getattr(e.source, "value", e.source))) for n, e in entries.items()}


def expect_overrides(topic, want, what):
    """ZooKeeper holds exactly @want, and DescribeConfigs (asked right away) shows each of
    them as a topic override and every other key as a default."""
    got = zk_config(topic)
    check(got == want, "%s: /config/topics/%s = %r, expected %r" % (what, topic, got, want))
    desc = describe(topic)
    for name, (value, source) in desc.items():
        if name in want:
            check((value, source) == (want[name], SOURCE_TOPIC),
                  "%s: DescribeConfigs %s = %r (source %d), expected %r (source %d)"
                  % (what, name, value, source, want[name], SOURCE_TOPIC))
        else:
            check(source == SOURCE_DEFAULT, "%s: DescribeConfigs %s = %r has source %d, expected "
                  "the default (5)" % (what, name, value, source))
    for name in want:
        check(name in desc, "%s: DescribeConfigs lacks %s" % (what, name))


# --- confluent-kafka (librdkafka): AlterConfigs -------------------------------------------

def ck_alter(topic, configs, validate_only=False, rtype=ConfigResource.Type.TOPIC):
    """Return None on success, else (error code, message)."""
    res = ConfigResource(rtype, topic, set_config=configs)
    f = admin.alter_configs([res], validate_only=validate_only, request_timeout=30)[res]
    try:
        f.result(timeout=60)
        return None
    except KafkaException as e:
        err = e.args[0]
        return err.code(), err.str()
    except Exception as e:  # a timeout or the like is a test failure
        fail("AlterConfigs %s %r: %r" % (topic, configs, e))


def ck_expect_err(topic, configs, code, needle, what, **kw):
    r = ck_alter(topic, configs, **kw)
    check(r is not None, "%s succeeded, expected error %d" % (what, code))
    check(r[0] == code, "%s: got %r, expected error %d" % (what, r, code))
    check(needle in r[1], "%s: message %r does not mention %r" % (what, r[1], needle))


def produce_one(topic, size, key=b"k"):
    """Produce one record of @size bytes (with a key: compacted topics need one); return None or
    the delivery error code."""
    p = Producer(base_conf(bootstrap, {"linger.ms": 0, "message.timeout.ms": 20000, "retries": 0,
                                       "enable.idempotence": False}))
    out = []
    p.produce(topic, b"x" * size, key=key, partition=0,
              on_delivery=lambda err, msg: out.append(err.code() if err else None))
    check(p.flush(30) == 0, "a record to %s still undelivered after 30s" % topic)
    return out[0]


# --- kafka-python: AlterConfigs --------------------------------------------------------------

def kp_alter(topic, configs):
    """[(error code, message)] for one topic resource through KafkaAdminClient.alter_configs."""
    kadmin = kafka.KafkaAdminClient(bootstrap_servers=bootstrap, client_id="sftest-kafka-python")
    try:
        resp = kadmin.alter_configs([KConfigResource(KType.TOPIC, topic, configs=configs)])
    finally:
        kadmin.close()
    check(resp.API_VERSION == 1, "kafka-python used AlterConfigs v%d, expected v1" % resp.API_VERSION)
    return [(r[0], r[1]) for r in resp.resources if r[3] == topic]


# --- IncrementalAlterConfigs as raw requests ---------------------------------------------------

def iac(resources, version=1, validate_only=False):
    """Send IncrementalAlterConfigs: resources = [(type, name, [(key, op, value)])].
    Returns [(error code, message, type, name)] in response order."""
    flex = version >= 1

    def s(x):
        if flex:
            return b"\0" if x is None else kwire.compact_string(x)
        return kwire.string(x)

    def arr(n):
        return kwire.uvarint(n + 1) if flex else kwire.i32(n)

    tags = b"\0" if flex else b""
    body = arr(len(resources))
    for rtype, name, cfgs in resources:
        body += struct.pack(">b", rtype) + s(name) + arr(len(cfgs))
        for key, op, value in cfgs:
            body += s(key) + struct.pack(">b", op) + s(value) + tags
        body += tags
    body += (b"\1" if validate_only else b"\0") + tags
    conn = kwire.Conn(bootstrap, timeout=60)
    try:
        corr = conn.send(44, version, body, flexible_header=flex)
        rcorr, resp = conn.recv()
    finally:
        conn.close()
    check(rcorr == corr, "IncrementalAlterConfigs: correlation id %d, expected %d" % (rcorr, corr))
    r = kwire.Reader(resp)
    if flex:
        r.tagged()  # response header v1
    r.i32()  # throttle time
    out = []
    for _ in range(r.uvarint() - 1 if flex else r.i32()):
        err = r.i16()
        msg = r.compact_string() if flex else r.string()
        rtype = r.i8()
        name = r.compact_string() if flex else r.string()
        if flex:
            r.tagged()
        out.append((err, msg, rtype, name))
    if flex:
        r.tagged()
    check(r.remaining() == 0, "IncrementalAlterConfigs v%d: %d bytes after the response"
          % (version, r.remaining()))
    return out


def iac_one(topic, cfgs, version=1, validate_only=False):
    res = iac([(TOPIC, topic, cfgs)], version, validate_only)
    check(len(res) == 1 and res[0][2:] == (TOPIC, topic), "IncrementalAlterConfigs answered %r" % res)
    return res[0][:2]


def iac_ok(topic, cfgs, version=1, validate_only=False):
    err, msg = iac_one(topic, cfgs, version, validate_only)
    check(err == 0, "IncrementalAlterConfigs v%d %s %r: error %d (%s)" % (version, topic, cfgs, err, msg))


def iac_err(topic, cfgs, code, needle, what, version=1):
    err, msg = iac_one(topic, cfgs, version)
    check(err == code, "%s: error %d (%s), expected %d" % (what, err, msg, code))
    check(msg is not None and needle in msg, "%s: message %r does not mention %r" % (what, msg, needle))


def segments(topic):
    return len(glob.glob(os.path.join(datadir, topic + "-0", "*.log")))


# =============================================================================================

if mode == "restarted":
    # The last override set survives the restart and governs the reopened log.
    expect_overrides("acfg", {"max.message.bytes": "2000", "retention.ms": "86400000"}, "after restart")
    check(produce_one("acfg", 5000) == KafkaError.MSG_SIZE_TOO_LARGE,
          "after restart a 5000-byte record was taken with max.message.bytes=2000")
    check(produce_one("acfg", 100) is None, "after restart a 100-byte record was refused")
    info("the overrides hold after a restart")
    print("alter configs after restart ok")
    sys.exit(0)

# ApiVersions advertises both APIs.
conn = kwire.Conn(bootstrap)
err, apis = kwire.apiversions(conn, 0)
conn.close()
check(apis.get(33) == (0, 2), "ApiVersions: AlterConfigs %r, expected (0, 2)" % (apis.get(33),))
check(apis.get(44) == (0, 1), "ApiVersions: IncrementalAlterConfigs %r, expected (0, 1)" % (apis.get(44),))

for t in admin.create_topics([NewTopic("acfg", 1, 1, config={"retention.ms": "123456789",
                                                            "cleanup.policy": "delete"}),
                              NewTopic("acseg", 1, 1)], request_timeout=60).values():
    t.result(timeout=60)
expect_overrides("acfg", {"retention.ms": "123456789", "cleanup.policy": "delete"}, "created")

# CreateTopics checks config values the same way.
fut = admin.create_topics([NewTopic("acbad", 1, 1, config={"retention.ms": "soon"})],
                          request_timeout=60)["acbad"]
try:
    fut.result(timeout=60)
    check(False, "CreateTopics took retention.ms=soon")
except KafkaException as e:
    err = e.args[0]
    check(err.code() == KafkaError.INVALID_CONFIG and "retention.ms" in err.str(),
          "CreateTopics retention.ms=soon: %s" % err)
info("CreateTopics refuses an invalid config value: INVALID_CONFIG naming the key")

# --- AlterConfigs (confluent-kafka): the whole override set is replaced ---------------------
check(ck_alter("acfg", {"retention.ms": "86400000", "max.message.bytes": "2000"}) is None,
      "AlterConfigs acfg failed")
expect_overrides("acfg", {"retention.ms": "86400000", "max.message.bytes": "2000"},
                 "confluent-kafka AlterConfigs")
info("confluent-kafka alter_configs replaced the overrides; DescribeConfigs shows them")

# The running log uses the new limit at once: max.message.bytes=2000.
check(produce_one("acfg", 5000) == KafkaError.MSG_SIZE_TOO_LARGE,
      "a 5000-byte record was taken with max.message.bytes=2000")
check(produce_one("acfg", 100) is None, "a 100-byte record was refused")
info("max.message.bytes applies to the running log")

before = zk_config("acfg")
check(ck_alter("acfg", {"retention.ms": "1"}, validate_only=True) is None, "validate-only AlterConfigs failed")
ck_expect_err("acfg", {"no.such.config": "1"}, ERR_INVALID_CONFIG, "no.such.config", "unknown key")
ck_expect_err("acfg", {"retention.ms": "soon"}, ERR_INVALID_CONFIG, "retention.ms", "retention.ms=soon")
ck_expect_err("acfg", {"segment.bytes": "10"}, ERR_INVALID_CONFIG, "segment.bytes", "segment.bytes=10")
ck_expect_err("acfg", {"min.insync.replicas": "3000000000"}, ERR_INVALID_CONFIG, "min.insync.replicas",
              "min.insync.replicas past 32 bits")
ck_expect_err("acfg", {"compression.type": "brotli"}, ERR_INVALID_CONFIG, "compression.type",
              "compression.type=brotli")
ck_expect_err("acfg", {"cleanup.policy": "delete,shred"}, ERR_INVALID_CONFIG, "cleanup.policy",
              "cleanup.policy=delete,shred")
ck_expect_err("no-such-topic", {"retention.ms": "1"}, KafkaError.UNKNOWN_TOPIC_OR_PART, "", "unknown topic")
# Broker resources take the dynamic broker configs (18-dynamic-configs), not the other settings.
ck_expect_err("1", {"log.dirs": "/tmp/x"}, ERR_INVALID_REQUEST, "cannot be updated dynamically",
              "a static broker setting", rtype=ConfigResource.Type.BROKER)
check(zk_config("acfg") == before, "a refused or validate-only AlterConfigs changed /config/topics/acfg")
info("AlterConfigs errors and validate_only ok")

# --- AlterConfigs (kafka-python) -------------------------------------------------------------
r = kp_alter("acfg", {"retention.ms": "3600000", "cleanup.policy": "compact,delete"})
check(r == [(0, None)], "kafka-python alter_configs: %r" % r)
expect_overrides("acfg", {"retention.ms": "3600000", "cleanup.policy": "compact,delete"},
                 "kafka-python AlterConfigs")
check(produce_one("acfg", 5000) is None, "max.message.bytes still applies after AlterConfigs removed it")
# cleanup.policy now includes compact: a record without a key is refused, as Kafka does.
check(produce_one("acfg", 10, key=None) == KafkaError.INVALID_RECORD,
      "a keyless record was accepted on a compacted topic")
r = kp_alter("acfg", {"flush.ms": "-5"})
check(len(r) == 1 and r[0][0] == ERR_INVALID_CONFIG and "flush.ms" in (r[0][1] or ""),
      "kafka-python alter_configs flush.ms=-5: %r" % r)
r = kp_alter("no-such-topic", {"retention.ms": "1"})
check(len(r) == 1 and r[0][0] == ERR_UNKNOWN_TOPIC, "kafka-python alter_configs on an unknown topic: %r" % r)
info("kafka-python alter_configs ok")

# --- IncrementalAlterConfigs v1 (flexible) and v0 -----------------------------------------
iac_ok("acfg", [("segment.bytes", SET, "104857600"), ("retention.ms", DELETE, None)])
expect_overrides("acfg", {"cleanup.policy": "compact,delete", "segment.bytes": "104857600"}, "v1 SET+DELETE")
iac_ok("acfg", [("cleanup.policy", SUBTRACT, "compact")], version=0)
expect_overrides("acfg", {"cleanup.policy": "delete", "segment.bytes": "104857600"}, "v0 SUBTRACT")
iac_ok("acfg", [("cleanup.policy", DELETE, None), ("retention.bytes", SET, "-1")])
iac_ok("acfg", [("cleanup.policy", APPEND, "compact")], version=0)  # from the default, delete
expect_overrides("acfg", {"cleanup.policy": "delete,compact", "segment.bytes": "104857600",
                          "retention.bytes": "-1"}, "v0 APPEND to the default")
iac_ok("acfg", [("cleanup.policy", APPEND, "delete")])  # already there: unchanged
check(zk_config("acfg")["cleanup.policy"] == "delete,compact", "APPEND duplicated an item")
iac_ok("acfg", [("cleanup.policy", SET, " compact ,  delete ")])
check(zk_config("acfg")["cleanup.policy"] == "compact,delete",
      "cleanup.policy stored as %r" % zk_config("acfg")["cleanup.policy"])
iac_ok("acfg", [("retention.ms", SET, "1")], validate_only=True)
check("retention.ms" not in zk_config("acfg"), "validate-only IncrementalAlterConfigs wrote")
info("IncrementalAlterConfigs SET / DELETE / APPEND / SUBTRACT / validate_only ok (v0 and v1)")

before = zk_config("acfg")
for v in (0, 1):
    iac_err("acfg", [("retention.ms", APPEND, "5")], ERR_INVALID_REQUEST, "retention.ms",
            "APPEND to a non-list config", version=v)
    iac_err("acfg", [("retention.ms", SET, None)], ERR_INVALID_REQUEST, "retention.ms", "SET null", version=v)
    iac_err("acfg", [("retention.ms", 7, "5")], ERR_INVALID_REQUEST, "retention.ms", "operation 7", version=v)
    iac_err("acfg", [("no.such.config", DELETE, None)], ERR_INVALID_CONFIG, "no.such.config",
            "DELETE of an unknown key", version=v)
    iac_err("acfg", [("segment.ms", SET, "0")], ERR_INVALID_CONFIG, "segment.ms", "segment.ms=0", version=v)
    iac_err("acfg", [("message.timestamp.type", SET, "Now")], ERR_INVALID_CONFIG,
            "message.timestamp.type", "message.timestamp.type=Now", version=v)
    iac_err("acfg", [("cleanup.policy", APPEND, "compact,shred")], ERR_INVALID_CONFIG,
            "cleanup.policy", "APPEND of an unknown item", version=v)
    iac_err("acfg", [("cleanup.policy", APPEND, ",".join("p%d" % i for i in range(4000)))],
            ERR_INVALID_CONFIG, "cleanup.policy", "APPEND of 4000 items", version=v)
    iac_ok("acfg", [("cleanup.policy", SUBTRACT, ",".join("p%d" % i for i in range(4000)))],
           version=v, validate_only=True)
    iac_err("acfg", [("cleanup.policy", SUBTRACT, "delete,compact")], ERR_INVALID_CONFIG,
            "cleanup.policy", "SUBTRACT to an empty list", version=v)
    iac_err("acfg", [("flush.ms", SET, "1"), ("flush.ms", DELETE, None)], ERR_INVALID_REQUEST,
            "flush.ms", "a key named twice", version=v)
    # One bad change fails the resource as a whole.
    iac_err("acfg", [("flush.ms", SET, "1"), ("retention.ms", SET, "x")], ERR_INVALID_CONFIG,
            "retention.ms", "a good and a bad change", version=v)
    iac_err("no-such-topic", [("flush.ms", SET, "1")], ERR_UNKNOWN_TOPIC, "", "unknown topic", version=v)
check(zk_config("acfg") == before, "a refused IncrementalAlterConfigs changed /config/topics/acfg")

# Several resources in one request: each gets its own answer, in order.
res = iac([(BROKER, "1", [("log.dirs", SET, "/tmp/x")]),
           (TOPIC, "acseg", [("flush.messages", SET, "1000")]),
           (8, "1", [("root", SET, "DEBUG")]),
           (3, "x", []),
           (TOPIC, "acfg", [("flush.ms", SET, "5")]),
           (TOPIC, "acfg", [("flush.ms", SET, "6")])])
check([(e, t, n) for e, _, t, n in res] ==
      [(ERR_INVALID_REQUEST, BROKER, "1"), (0, TOPIC, "acseg"), (ERR_INVALID_REQUEST, 8, "1"),
       (ERR_INVALID_REQUEST, 3, "x"), (ERR_INVALID_REQUEST, TOPIC, "acfg"),
       (ERR_INVALID_REQUEST, TOPIC, "acfg")], "mixed IncrementalAlterConfigs: %r" % res)
check("log.dirs cannot be updated dynamically" in res[0][1], "broker resource message: %r" % res[0][1])
expect_overrides("acseg", {"flush.messages": "1000"}, "mixed request")
check(zk_config("acfg") == before, "a duplicated resource was applied")
info("per-resource answers ok (a static broker setting, unknown types, duplicates)")

# A truncated request closes that connection and nothing else.
conn = kwire.Conn(bootstrap)
conn.send(44, 1, kwire.uvarint(2) + b"\x02\x05ab", flexible_header=True)
check(conn.wait_closed(), "a truncated IncrementalAlterConfigs did not close the connection")
conn.close()
iac_ok("acseg", [("flush.messages", DELETE, None)])
expect_overrides("acseg", {}, "after a truncated request")

# --- The running log follows segment.bytes and retention.ms ------------------------------
for i in range(5):
    check(produce_one("acseg", 300) is None, "producing to acseg")
check(segments("acseg") == 1, "acseg has %d segments before segment.bytes changed" % segments("acseg"))
iac_ok("acseg", [("segment.bytes", SET, "1024")])
for i in range(12):
    check(produce_one("acseg", 300) is None, "producing to acseg")
n = segments("acseg")
check(n >= 3, "acseg has %d segment(s) after 12 x 300 bytes with segment.bytes=1024" % n)
info("segment.bytes applies to the running log: %d segments" % n)
lo, hi = watermarks(bootstrap, "acseg", 0)
check(lo == 0 and hi == 17, "acseg watermarks (%d, %d) before retention, expected (0, 17)" % (lo, hi))
iac_ok("acseg", [("retention.ms", SET, "1")], version=0)
deadline = time.time() + 60
while True:
    lo, hi = watermarks(bootstrap, "acseg", 0)
    if lo > 0:
        break
    check(time.time() < deadline, "acseg log start offset still 0 60s after retention.ms=1")
    time.sleep(0.3)
check(hi == 17 and lo <= hi, "acseg watermarks (%d, %d) after retention" % (lo, hi))
info("retention.ms applies to the running log: log start offset %d" % lo)

# The state the restart check expects.
check(ck_alter("acfg", {"retention.ms": "86400000", "max.message.bytes": "2000"}) is None,
      "AlterConfigs acfg failed")
print("alter configs ok")
