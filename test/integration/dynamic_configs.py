#!/usr/bin/python3
"""18-dynamic-configs: Kafka's dynamic broker configs, kept where Kafka keeps them in
ZooKeeper (/config/brokers/<default> and /config/brokers/<id>, with a change notification under
/config/changes) and applied by the running broker: IncrementalAlterConfigs v0/v1 and
AlterConfigs on BROKER resources ("" the cluster default, "1" the broker itself), checked in
ZooKeeper, through DescribeConfigs of the broker, of "" and of topics, and in what the running
logs do (LogAppendTime timestamps, retention). Refused changes write nothing.

    dynamic_configs.py BOOTSTRAP ZK_HOST:PORT            the changes
    dynamic_configs.py BOOTSTRAP ZK_HOST:PORT restarted  what must hold after a restart

The broker is broker 1 with log.retention.hours=100 in its file (a static broker config).
"""
import json
import struct
import sys
import time

from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

import kwire
import zkq
from sftest import base_conf, check, consume_all, fail, info, produce, watermarks

bootstrap, zkserver = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "changes"
admin = AdminClient(base_conf(bootstrap))

TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
ERR_INVALID_CONFIG, ERR_INVALID_REQUEST = 40, 42
SRC_TOPIC, SRC_DYNAMIC_BROKER, SRC_DYNAMIC_DEFAULT, SRC_STATIC, SRC_DEFAULT = 1, 2, 3, 4, 5
OLD_TS = 1000000000000  # 2001-09-09: a producer timestamp no broker clock gives


# --- ZooKeeper ------------------------------------------------------------------------------

def zk_get(path):
    s = zkq.Session(zkserver)
    try:
        return s.get("/streamflow" + path)[0]
    except zkq.NoNode:
        return None
    finally:
        s.close()


def zk_config(entity):
    """The config map in /config/brokers/<entity> (None when the znode does not exist)."""
    raw = zk_get("/config/brokers/" + entity)
    if raw is None:
        return None
    o = json.loads(raw)
    check(o.get("version") == 1, "/config/brokers/%s: %r" % (entity, raw))
    return o["config"]


def zk_changes(entity):
    """How many change notifications name brokers/<entity>."""
    s = zkq.Session(zkserver)
    try:
        n = 0
        for c in s.children("/streamflow/config/changes"):
            data, stat = s.get("/streamflow/config/changes/" + c)
            check(c.startswith("config_change_") and len(c) == 24 and stat["ephemeralOwner"] == 0,
                  "unexpected /config/changes/%s" % c)
            if json.loads(data) == {"version": 2, "entity_path": "brokers/" + entity}:
                n += 1
        return n
    finally:
        s.close()


def expect_zk(entity, want, what):
    got = zk_config(entity)
    check(got == want, "%s: /config/brokers/%s = %r, expected %r" % (what, entity, got, want))


# --- raw requests -------------------------------------------------------------------------

def request(api, version, body, flex):
    conn = kwire.Conn(bootstrap, timeout=60)
    try:
        corr = conn.send(api, version, body, flexible_header=flex)
        rcorr, resp = conn.recv()
    finally:
        conn.close()
    check(rcorr == corr, "api %d: correlation id %d, expected %d" % (api, rcorr, corr))
    r = kwire.Reader(resp)
    if flex:
        r.tagged()  # response header v1
    return r


def describe(rtype, name, keys=None):
    """DescribeConfigs v1 with synonyms: (error, message, {name: (value, source, read_only,
    [(synonym, value, source)])})."""
    body = kwire.i32(1) + kwire.i8(rtype) + kwire.string(name)
    if keys is None:
        body += kwire.i32(-1)
    else:
        body += kwire.i32(len(keys)) + b"".join(kwire.string(k) for k in keys)
    body += b"\1"  # IncludeSynonyms
    r = request(32, 1, body, False)
    r.i32()  # throttle time
    check(r.i32() == 1, "DescribeConfigs: not one result")
    err, msg, rt, rn = r.i16(), r.string(), r.i8(), r.string()
    check((rt, rn) == (rtype, name), "DescribeConfigs answered for %r" % ((rt, rn),))
    out = {}
    for _ in range(r.i32()):
        cname, value, ro, src, _sensitive = r.string(), r.string(), r.i8(), r.i8(), r.i8()
        syns = [(r.string(), r.string(), r.i8()) for _ in range(r.i32())]
        out[cname] = (value, src, bool(ro), syns)
    check(r.remaining() == 0, "DescribeConfigs: %d bytes after the response" % r.remaining())
    return err, msg, out


def describe_ok(rtype, name, keys=None):
    err, msg, out = describe(rtype, name, keys)
    check(err == 0, "DescribeConfigs %d %r: error %d (%s)" % (rtype, name, err, msg))
    return out


def iac(resources, version=1, validate_only=False):
    """IncrementalAlterConfigs: resources = [(type, name, [(key, op, value)])] ->
    [(error, message, type, name)] in response order."""
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
    r = request(44, version, body, flex)
    return alter_response(r, flex)


def alter_response(r, flex):
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
    check(r.remaining() == 0, "%d bytes after the response" % r.remaining())
    return out


def alter_v0(resources, validate_only=False):
    """AlterConfigs v0: resources = [(type, name, {key: value})]."""
    body = kwire.i32(len(resources))
    for rtype, name, cfgs in resources:
        body += kwire.i8(rtype) + kwire.string(name) + kwire.i32(len(cfgs))
        for k, v in cfgs.items():
            body += kwire.string(k) + kwire.string(v)
    body += b"\1" if validate_only else b"\0"
    return alter_response(request(33, 0, body, False), False)


def iac_one(name, cfgs, version=1, validate_only=False):
    res = iac([(BROKER, name, cfgs)], version, validate_only)
    check(len(res) == 1 and res[0][2:] == (BROKER, name), "IncrementalAlterConfigs answered %r" % res)
    return res[0][:2]


def iac_ok(name, cfgs, version=1, validate_only=False):
    err, msg = iac_one(name, cfgs, version, validate_only)
    check(err == 0, "IncrementalAlterConfigs v%d broker %r %r: error %d (%s)"
          % (version, name, cfgs, err, msg))


def iac_err(name, cfgs, code, needles, what, version=1, validate_only=False):
    err, msg = iac_one(name, cfgs, version, validate_only)
    check(err == code, "%s: error %d (%s), expected %d" % (what, err, msg, code))
    for n in needles:
        check(msg is not None and n in msg, "%s: message %r does not mention %r" % (what, msg, n))


def ck_alter(rtype, name, configs, validate_only=False):
    """confluent-kafka alter_configs: None, or (error code, message)."""
    res = ConfigResource(rtype, name, set_config=configs)
    f = admin.alter_configs([res], validate_only=validate_only, request_timeout=30)[res]
    try:
        f.result(timeout=60)
        return None
    except KafkaException as e:
        return e.args[0].code(), e.args[0].str()


def ck_describe_broker(name):
    """confluent-kafka describe_configs of a broker: {name: ConfigEntry}."""
    res = ConfigResource(ConfigResource.Type.BROKER, name)
    try:
        return admin.describe_configs([res], request_timeout=30)[res].result(timeout=60)
    except KafkaException as e:
        fail("DescribeConfigs broker %s: %s" % (name, e))


def src(e):
    return int(getattr(e.source, "value", e.source))


def timestamps(topic):
    """(type, timestamp) of every record of partition 0."""
    return [m.timestamp() for m in consume_all(bootstrap, topic, [0])[0]]


# =============================================================================================

if mode == "restarted":
    # The configs left below are read from ZooKeeper at start-up and govern the reopened logs.
    d = describe_ok(BROKER, "1")
    check(d["log.message.timestamp.type"][:2] == ("LogAppendTime", SRC_DYNAMIC_DEFAULT) and
          d["log.retention.ms"][:2] == ("3600000", SRC_DYNAMIC_BROKER),
          "after restart: %r" % ({k: d[k] for k in ("log.message.timestamp.type",
                                                     "log.retention.ms")},))
    n = len(timestamps("dyn"))
    produce(bootstrap, "dyn", [(b"k", b"restarted", None, 0, OLD_TS)])
    ts = timestamps("dyn")
    check(len(ts) == n + 1 and ts[-1][0] == TIMESTAMP_LOG_APPEND_TIME and ts[-1][1] != OLD_TS,
          "after restart: dyn timestamps %r" % ts[-1:])
    info("the dynamic configs hold after a restart")
    print("dynamic configs after restart ok")
    sys.exit(0)

for f in admin.create_topics([NewTopic("dyn", 1, 1), NewTopic("dynovr", 1, 1, config={
        "message.timestamp.type": "CreateTime"}), NewTopic("dynret", 1, 1, config={
        "segment.bytes": "1024"})], request_timeout=60).values():
    f.result(timeout=60)

# --- before: nothing dynamic; every broker setting described is dynamic (not read-only) ------
expect_zk("<default>", None, "before")
expect_zk("1", None, "before")
d = describe_ok(BROKER, "1")
check(len(d) > 30, "DescribeConfigs broker 1: only %d entries" % len(d))
check(all(not ro for _, _, ro, _ in d.values()),
      "read-only broker configs: %r" % sorted(n for n, (_, _, ro, _) in d.items() if ro))
check(d["log.message.timestamp.type"][:2] == ("CreateTime", SRC_DEFAULT),
      "log.message.timestamp.type before: %r" % (d["log.message.timestamp.type"],))
check(d["log.retention.ms"][:2] == ("360000000", SRC_STATIC),
      "log.retention.ms before: %r" % (d["log.retention.ms"],))
check(describe_ok(BROKER, "") == {}, "the cluster default is not empty: %r" % describe_ok(BROKER, ""))
produce(bootstrap, "dyn", [(b"k", b"before", None, 0, OLD_TS)])
check(timestamps("dyn") == [(TIMESTAMP_CREATE_TIME, OLD_TS)],
      "before: dyn timestamps %r" % timestamps("dyn"))
info("no dynamic configs: broker settings are dynamic, CreateTime by default")

# --- the cluster default: log.message.timestamp.type=LogAppendTime --------------------------
iac_ok("", [("log.message.timestamp.type", SET, "LogAppendTime")])
expect_zk("<default>", {"log.message.timestamp.type": "LogAppendTime"}, "default set")
check(zk_changes("<default>") == 1, "%d change notifications for brokers/<default>, expected 1"
      % zk_changes("<default>"))
d = describe_ok(BROKER, "1")
v = d["log.message.timestamp.type"]
check(v[:3] == ("LogAppendTime", SRC_DYNAMIC_DEFAULT, False) and
      v[3] == [("log.message.timestamp.type", "LogAppendTime", SRC_DYNAMIC_DEFAULT),
               ("log.message.timestamp.type", "CreateTime", SRC_DEFAULT)],
      "broker 1 log.message.timestamp.type: %r" % (v,))
d = describe_ok(BROKER, "")
check(d == {"log.message.timestamp.type": ("LogAppendTime", SRC_DYNAMIC_DEFAULT, False, [
    ("log.message.timestamp.type", "LogAppendTime", SRC_DYNAMIC_DEFAULT)])},
      "DescribeConfigs of the default: %r" % d)
d = describe_ok(TOPIC, "dyn", ["message.timestamp.type"])
check(d["message.timestamp.type"][:2] == ("LogAppendTime", SRC_DYNAMIC_DEFAULT),
      "topic dyn message.timestamp.type: %r" % (d["message.timestamp.type"],))
d = describe_ok(TOPIC, "dynovr", ["message.timestamp.type"])
check(d["message.timestamp.type"][:2] == ("CreateTime", SRC_TOPIC),
      "topic dynovr message.timestamp.type: %r" % (d["message.timestamp.type"],))
t0 = int(time.time() * 1000)
produce(bootstrap, "dyn", [(b"k", b"after", None, 0, OLD_TS)])
produce(bootstrap, "dynovr", [(b"k", b"after", None, 0, OLD_TS)])
t1 = int(time.time() * 1000)
ts = timestamps("dyn")
check(len(ts) == 2 and ts[0] == (TIMESTAMP_CREATE_TIME, OLD_TS) and
      ts[1][0] == TIMESTAMP_LOG_APPEND_TIME and t0 - 1000 <= ts[1][1] <= t1 + 1000,
      "dyn after the default changed: %r (produced between %d and %d)" % (ts, t0, t1))
check(timestamps("dynovr") == [(TIMESTAMP_CREATE_TIME, OLD_TS)],
      "dynovr (CreateTime override): %r" % timestamps("dynovr"))
info("the cluster default applies at once: LogAppendTime (%d), the topic override wins" % ts[1][1])

# --- this broker's own: log.retention.ms ------------------------------------------------------
iac_ok("1", [("log.retention.ms", SET, "7200000")], version=0)
expect_zk("1", {"log.retention.ms": "7200000"}, "broker 1 set")
check(zk_changes("1") == 1, "no change notification for brokers/1")
d = describe_ok(BROKER, "1")
v = d["log.retention.ms"]
check(v[:3] == ("7200000", SRC_DYNAMIC_BROKER, False) and
      v[3][:2] == [("log.retention.ms", "7200000", SRC_DYNAMIC_BROKER),
                   ("log.retention.hours", "360000000", SRC_STATIC)],
      "broker 1 log.retention.ms: %r" % (v,))
e = ck_describe_broker("1")["log.retention.ms"]
check(e.value == "7200000" and src(e) == SRC_DYNAMIC_BROKER and not e.is_read_only,
      "confluent-kafka: log.retention.ms %r source %d read-only %r" % (e.value, src(e), e.is_read_only))
d = describe_ok(TOPIC, "dyn", ["retention.ms"])
check(d["retention.ms"][:2] == ("7200000", SRC_DYNAMIC_BROKER),
      "topic dyn retention.ms: %r" % (d["retention.ms"],))
info("broker 1's own log.retention.ms: DYNAMIC_BROKER_CONFIG, topics follow")

# The running logs follow it: retention.ms=1 deletes dynret's closed segments.
for i in range(12):
    produce(bootstrap, "dynret", [(b"k", b"x" * 300, None, 0, None)])
lo, hi = watermarks(bootstrap, "dynret", 0)
check((lo, hi) == (0, 12), "dynret watermarks (%d, %d) before retention" % (lo, hi))
iac_ok("1", [("log.retention.ms", SET, "1")])
deadline = time.time() + 60
while watermarks(bootstrap, "dynret", 0)[0] == 0:
    check(time.time() < deadline, "dynret log start offset still 0 60s after log.retention.ms=1")
    time.sleep(0.3)
info("a dynamic log.retention.ms applies to the running logs")

iac_ok("1", [("log.retention.ms", DELETE, None)])
expect_zk("1", {}, "broker 1 DELETE")
d = describe_ok(BROKER, "1")
check(d["log.retention.ms"][:2] == ("360000000", SRC_STATIC), "after DELETE: %r" % (d["log.retention.ms"],))
d = describe_ok(TOPIC, "dyn", ["retention.ms"])
check(d["retention.ms"][:2] == ("360000000", SRC_STATIC), "topic after DELETE: %r" % (d["retention.ms"],))
info("DELETE removes it: back to the static config")

# Another unit, converted as in the configuration file.
iac_ok("1", [("log.retention.hours", SET, "2")])
expect_zk("1", {"log.retention.hours": "2"}, "log.retention.hours")
v = describe_ok(BROKER, "1")["log.retention.ms"]
check(v[:2] == ("7200000", SRC_DYNAMIC_BROKER) and v[3][0] == ("log.retention.hours", "7200000",
                                                               SRC_DYNAMIC_BROKER),
      "log.retention.hours=2: %r" % (v,))

# Lists: APPEND to what the default inherits ("delete"), SUBTRACT, DELETE.
iac_ok("", [("log.cleanup.policy", APPEND, "compact")], version=0)
expect_zk("<default>", {"log.message.timestamp.type": "LogAppendTime",
                        "log.cleanup.policy": "delete,compact"}, "APPEND")
iac_ok("", [("log.cleanup.policy", SUBTRACT, "delete")])
expect_zk("<default>", {"log.message.timestamp.type": "LogAppendTime",
                        "log.cleanup.policy": "compact"}, "SUBTRACT")
iac_ok("", [("log.cleanup.policy", DELETE, None)])
expect_zk("<default>", {"log.message.timestamp.type": "LogAppendTime"}, "DELETE of the list")
info("IncrementalAlterConfigs SET / DELETE / APPEND / SUBTRACT on broker resources (v0 and v1)")

# --- AlterConfigs replaces the whole set ---------------------------------------------------------
r = ck_alter(ConfigResource.Type.BROKER, "1", {"log.segment.bytes": "1048576",
                                               "compression.type": "zstd"})
check(r is None, "confluent-kafka AlterConfigs broker 1: %r" % (r,))
expect_zk("1", {"log.segment.bytes": "1048576", "compression.type": "zstd"}, "AlterConfigs broker 1")
d = describe_ok(BROKER, "1")
check(d["log.segment.bytes"][:2] == ("1048576", SRC_DYNAMIC_BROKER) and
      d["compression.type"][:2] == ("zstd", SRC_DYNAMIC_BROKER) and
      d["log.retention.ms"][:2] == ("360000000", SRC_STATIC),
      "after AlterConfigs: %r" % ({k: d[k] for k in ("log.segment.bytes", "compression.type",
                                                       "log.retention.ms")},))
res = alter_v0([(BROKER, "", {"log.roll.ms": "3600000"})])
check([x[0] for x in res] == [0], "AlterConfigs v0 of the default: %r" % res)
expect_zk("<default>", {"log.roll.ms": "3600000"}, "AlterConfigs of the default")
d = describe_ok(TOPIC, "dyn", ["message.timestamp.type", "segment.ms"])
check(d["message.timestamp.type"][:2] == ("CreateTime", SRC_DEFAULT) and
      d["segment.ms"][:2] == ("3600000", SRC_DYNAMIC_DEFAULT), "topic after AlterConfigs: %r" % d)
info("AlterConfigs replaces the whole set (confluent-kafka and v0)")

# --- refusals: nothing written ------------------------------------------------------------------
before = (zk_config("<default>"), zk_config("1"), zk_changes("<default>"), zk_changes("1"))
for v in (0, 1):
    iac_err("1", [("log.dirs", SET, "/tmp/x"), ("retention.ms", SET, "1"),
                  ("log.retention.ms", SET, "1")], ERR_INVALID_REQUEST,
            ["log.dirs", "retention.ms", "cannot be updated dynamically"], "not dynamic", v)
    iac_err("", [("num.network.threads", DELETE, None)], ERR_INVALID_REQUEST,
            ["num.network.threads", "cannot be updated dynamically"], "DELETE of a static key", v)
    iac_err("", [("log.message.timestamp.type", SET, "Now")], ERR_INVALID_CONFIG,
            ["log.message.timestamp.type"], "a bad value", v)
    iac_err("1", [("log.retention.hours", SET, "soon")], ERR_INVALID_CONFIG,
            ["log.retention.hours"], "hours not a number", v)
    iac_err("1", [("log.segment.bytes", SET, "10")], ERR_INVALID_CONFIG, ["log.segment.bytes"],
            "log.segment.bytes=10", v)
    iac_err("1", [("log.retention.ms", APPEND, "5")], ERR_INVALID_REQUEST, ["log.retention.ms"],
            "APPEND to a non-list", v)
    iac_err("1", [("log.retention.ms", SET, None)], ERR_INVALID_REQUEST, ["log.retention.ms"],
            "SET null", v)
    iac_err("2", [("log.retention.ms", SET, "1")], ERR_INVALID_REQUEST, ["2", "broker 1"],
            "another broker's id", v)
    iac_err("one", [("log.retention.ms", SET, "1")], ERR_INVALID_REQUEST, ["integer"],
            "a name that is not a broker id", v)
    iac_err("", [("log.message.timestamp.type", SET, "Now")], ERR_INVALID_CONFIG,
            ["log.message.timestamp.type"], "a bad value, validate_only", v, validate_only=True)
    iac_ok("", [("log.retention.ms", SET, "1")], v, validate_only=True)
    iac_ok("1", [("log.retention.ms", SET, "1")], v, validate_only=True)
r = ck_alter(ConfigResource.Type.BROKER, "1", {"log.flush.interval.ms": "-3"})
check(r is not None and r[0] == ERR_INVALID_CONFIG and "log.flush.interval.ms" in r[1],
      "confluent-kafka AlterConfigs log.flush.interval.ms=-3: %r" % (r,))
check(ck_alter(ConfigResource.Type.BROKER, "1", {"log.retention.ms": "1"}, validate_only=True) is None,
      "confluent-kafka validate-only AlterConfigs failed")
res = alter_v0([(BROKER, "", {"log.retention.ms": "1"})], validate_only=True)
check([x[0] for x in res] == [0], "validate-only AlterConfigs v0 of the default: %r" % res)
# One resource per entity: "1" and "01" are the same broker.
res = iac([(BROKER, "1", [("log.retention.ms", SET, "1")]), (BROKER, "01", [("log.roll.ms", SET, "1")]),
           (BROKER, "", [("log.retention.ms", SET, "1")]), (BROKER, "", [("log.roll.ms", SET, "1")])])
check([(e, n) for e, _, _, n in res] == [(ERR_INVALID_REQUEST, "1"), (ERR_INVALID_REQUEST, "01"),
                                         (ERR_INVALID_REQUEST, ""), (ERR_INVALID_REQUEST, "")],
      "entities named twice: %r" % res)
err, msg, _ = describe(BROKER, "2")
check(err == ERR_INVALID_REQUEST, "DescribeConfigs broker 2: %d %r" % (err, msg))
after = (zk_config("<default>"), zk_config("1"), zk_changes("<default>"), zk_changes("1"))
check(after == before, "a refused or validate-only change wrote: %r -> %r" % (before, after))
info("refusals (not dynamic: INVALID_REQUEST, bad value: INVALID_CONFIG, another broker: "
     "INVALID_REQUEST) and validate_only write nothing")

# --- a topic resource and a broker resource in one request -------------------------------------
res = iac([(TOPIC, "dyn", [("retention.ms", SET, "86400000")]),
           (BROKER, "1", [("log.retention.ms", SET, "3600000")])])
check([x[0] for x in res] == [0, 0], "mixed request: %r" % res)
d = describe_ok(TOPIC, "dyn", ["retention.ms"])
check(d["retention.ms"][:2] == ("86400000", SRC_TOPIC), "topic override beside a broker change: %r" % d)
expect_zk("1", {"log.segment.bytes": "1048576", "compression.type": "zstd",
                "log.retention.ms": "3600000"}, "mixed request")

# --- clean up: empty sets ------------------------------------------------------------------------
res = alter_v0([(BROKER, "", {}), (BROKER, "1", {})])
check([x[0] for x in res] == [0, 0], "clearing: %r" % res)
expect_zk("<default>", {}, "cleared")
expect_zk("1", {}, "cleared")
d = describe_ok(BROKER, "1")
check(all(s in (SRC_STATIC, SRC_DEFAULT) for _, s, _, _ in d.values()),
      "dynamic sources left: %r" % {n: s for n, (_, s, _, _) in d.items() if s not in (4, 5)})
check(describe_ok(BROKER, "") == {}, "the default is not empty after clearing")

# The state the restart check expects.
iac_ok("", [("log.message.timestamp.type", SET, "LogAppendTime")])
iac_ok("1", [("log.retention.ms", SET, "3600000")])
print("dynamic configs ok")
