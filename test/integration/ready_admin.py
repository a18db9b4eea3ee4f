#!/usr/bin/python3
"""22-ready-and-admin: raw requests right after a restart and admin requests at their limits.

    ready_admin.py metadata-after-restart HOST:PORT TOPIC NPARTS SECONDS
        connect as soon as the port accepts, then ask Metadata v4 (no auto-creation) for TOPIC
        again and again until every partition has a leader; fail if any answer calls TOPIC unknown or lists
        no partition for it, or if it is not served within SECONDS
    ready_admin.py create HOST:PORT TOPIC NPARTS VALIDATE_ONLY
        CreateTopics v4; prints "ERROR_CODE MESSAGE"
    ready_admin.py nul-names HOST:PORT
        a NUL inside a topic name in CreateTopics, Metadata (auto-create) and Produce is refused
        with INVALID_TOPIC_EXCEPTION (17); nothing named after the part before the NUL appears
    ready_admin.py admin-outage HOST:PORT TOPIC
        CreateTopics, DeleteTopics, CreatePartitions and AlterConfigs while ZooKeeper is down:
        each answers REQUEST_TIMED_OUT (7) or NOT_CONTROLLER (41)
"""
import socket
import struct
import sys
import time

import kwire
from kwire import Reader, i8, i16, i32, string

API_CREATE_TOPICS = 19
API_DELETE_TOPICS = 20
API_ALTER_CONFIGS = 33
API_CREATE_PARTITIONS = 37
UNKNOWN_TOPIC_OR_PARTITION = 3
REQUEST_TIMED_OUT = 7
INVALID_TOPIC_EXCEPTION = 17
NOT_CONTROLLER = 41
RETRIABLE_ADMIN = (REQUEST_TIMED_OUT, NOT_CONTROLLER)


def fail(msg):
    sys.stderr.write("FAIL: %s\n" % msg)
    sys.exit(1)


def nstring(r):
    n = r.i16()
    return None if n < 0 else r.take(n).decode("utf-8", "replace")


def call(conn, api, version, body):
    corr = conn.send(api, version, body)
    rcorr, resp = conn.recv()
    if rcorr != corr:
        fail("correlation id %d, expected %d" % (rcorr, corr))
    return Reader(resp)


def create_topics(conn, name, nparts, validate_only, rf=1):
    """CreateTopics v4 of one topic -> (error_code, message)."""
    topic = string(name) if isinstance(name, str) else i16(len(name)) + name
    body = (i32(1) + topic + i32(nparts) + i16(rf) + i32(0) + i32(0)
            + i32(30000) + i8(1 if validate_only else 0))
    r = call(conn, API_CREATE_TOPICS, 4, body)
    r.i32()  # ThrottleTimeMs
    if r.i32() != 1:
        fail("CreateTopics: not one topic in the response")
    r.string()
    return r.i16(), nstring(r)


def delete_topics(conn, name):
    r = call(conn, API_DELETE_TOPICS, 1, i32(1) + string(name) + i32(30000))
    r.i32()
    r.i32()
    r.string()
    return r.i16(), None


def create_partitions(conn, name, count):
    body = i32(1) + string(name) + i32(count) + i32(-1) + i32(30000) + i8(0)
    r = call(conn, API_CREATE_PARTITIONS, 1, body)
    r.i32()
    r.i32()
    r.string()
    return r.i16(), nstring(r)


def alter_configs(conn, name):
    body = (i32(1) + i8(2) + string(name) + i32(1) + string("retention.ms")
            + string("3600000") + i8(0))
    r = call(conn, API_ALTER_CONFIGS, 1, body)
    r.i32()
    r.i32()
    return r.i16(), nstring(r)


def metadata_v4(conn, topic):
    """Metadata v4 of @topic without auto-creation (as consumers ask) -> {name: (err, parts)}."""
    r = call(conn, kwire.API_METADATA, 4, i32(1) + string(topic) + i8(0))
    r.i32()  # ThrottleTimeMs
    for _ in range(r.i32()):
        r.i32(), r.string(), r.i32(), nstring(r)
    nstring(r)  # ClusterId
    r.i32()  # ControllerId
    topics = {}
    for _ in range(r.i32()):
        err, name, _internal = r.i16(), r.string(), r.i8()
        parts = {}
        for _ in range(r.i32()):
            perr, pid, leader = r.i16(), r.i32(), r.i32()
            [r.i32() for _ in range(r.i32())]
            [r.i32() for _ in range(r.i32())]
            parts[pid] = (perr, leader)
        topics[name] = (err, parts)
    return topics


def connect_soon(hp, seconds):
    deadline = time.time() + seconds
    while True:
        try:
            return kwire.Conn(hp, timeout=seconds)
        except OSError:
            if time.time() > deadline:
                fail("%s: no connection within %ds" % (hp, seconds))
            time.sleep(0.01)


def metadata_after_restart(hp, topic, nparts, seconds):
    deadline = time.time() + seconds
    conn = connect_soon(hp, seconds)
    answers = 0
    while True:
        try:
            topics = metadata_v4(conn, topic)
        except (kwire.Closed, kwire.Timeout, OSError) as e:
            # Not serving yet may also mean a closed connection: connect again.
            conn.close()
            if time.time() > deadline:
                fail("Metadata: %s" % e)
            conn = connect_soon(hp, seconds)
            continue
        answers += 1
        err, parts = topics.get(topic, (None, {}))
        if err == UNKNOWN_TOPIC_OR_PARTITION:
            fail("answer %d: Metadata calls existing topic %s unknown" % (answers, topic))
        if err is None:
            fail("answer %d: Metadata leaves out %s" % (answers, topic))
        if err == 0 and len(parts) != nparts:
            fail("answer %d: %s has %d partitions, expected %d" % (answers, topic, len(parts),
                                                                    nparts))
        if err == 0 and all(p[0] == 0 and p[1] >= 0 for p in parts.values()):
            print("served after %d Metadata answers" % answers)
            return 0
        if time.time() > deadline:
            fail("%s not served within %ds (last error %d)" % (topic, seconds, err))
        time.sleep(0.02)


def nul_names(hp):
    conn = kwire.Conn(hp)
    err, msg = create_topics(conn, b"nul\0tail", 1, False)
    if err != INVALID_TOPIC_EXCEPTION:
        fail("CreateTopics nul\\0tail: error %d (%s), expected 17" % (err, msg))
    err, msg = create_topics(conn, b"nul\0tail", 1, True)
    if err != INVALID_TOPIC_EXCEPTION:
        fail("CreateTopics nul\\0tail validate-only: error %d (%s), expected 17" % (err, msg))
    # Metadata v1 (auto-create allowed) and Produce v0.
    body = i32(1) + i16(9) + b"auto\0tail"
    r = call(conn, kwire.API_METADATA, 1, body)
    _b, _c, topics = kwire.parse_metadata_v1(r.b)
    errs = [t[0] for t in topics.values()]
    if errs != [INVALID_TOPIC_EXCEPTION]:
        fail("Metadata auto\\0tail: errors %s, expected [17]" % errs)
    ms = kwire.message_v0(b"k", b"v")
    body = (i16(1) + i32(5000) + i32(1) + i16(9) + b"prod\0tail" + i32(1) + i32(0)
            + kwire.kbytes(ms))
    r = call(conn, kwire.API_PRODUCE, 0, body)
    out = kwire.parse_produce_v0(r.b)
    if [o[2] for o in out] != [INVALID_TOPIC_EXCEPTION]:
        fail("Produce prod\\0tail: %s, expected error 17" % out)
    time.sleep(1)  # an auto-create would have shown by now
    _b, _c, topics = kwire.metadata_v1(conn, None)
    for bad in ("nul", "auto", "prod"):
        if bad in topics:
            fail("topic %r was created from a name with a NUL" % bad)
    print("NUL refused in CreateTopics, Metadata and Produce")
    return 0


def admin_outage(hp, topic):
    conn = kwire.Conn(hp, timeout=60)
    calls = (("CreateTopics", lambda: create_topics(conn, "outage-new", 1, False)),
             ("CreateTopics validate-only", lambda: create_topics(conn, "outage-new", 1, True)),
             ("DeleteTopics", lambda: delete_topics(conn, topic)),
             ("CreatePartitions", lambda: create_partitions(conn, topic, 4)),
             ("AlterConfigs", lambda: alter_configs(conn, topic)))
    for what, fn in calls:
        err, msg = fn()
        if err not in RETRIABLE_ADMIN:
            fail("%s during the ZooKeeper outage: error %d (%s), expected 7 or 41" %
                 (what, err, msg))
        print("%s: error %d (%s)" % (what, err, msg))
    return 0


def main(argv):
    cmd, hp = argv[1], argv[2]
    if cmd == "metadata-after-restart":
        return metadata_after_restart(hp, argv[3], int(argv[4]), int(argv[5]))
    if cmd == "create":
        err, msg = create_topics(kwire.Conn(hp, timeout=60), argv[3], int(argv[4]),
                                 argv[5] == "1")
        print("%d %s" % (err, msg))
        return 0
    if cmd == "nul-names":
        return nul_names(hp)
    if cmd == "admin-outage":
        return admin_outage(hp, argv[3])
    fail("unknown command %s" % cmd)
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (kwire.Closed, kwire.Timeout, ValueError, struct.error, socket.error) as e:
        fail("%s" % e)
