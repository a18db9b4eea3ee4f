#!/usr/bin/python3
"""26-leader-epochs: OffsetForLeaderEpoch over the wire against one broker, across a leader
epoch bump written to ZooKeeper, a restart and a rebuilt epoch checkpoint.

    leader_epochs.py BOOTSTRAP ZK_HOST:PORT produce|bump|after-bump|restarted
"""
import json
import sys
import time

import kwire
import zkq
from kwire import Reader, compact_string, i32, string, uvarint
from sftest import check, consume_all, fail, info, produce

bootstrap, zkserver, phase = sys.argv[1], sys.argv[2], sys.argv[3]
TOPIC = "le"
STATE = "/streamflow/brokers/topics/%s/partitions/0/state" % TOPIC
API = 23
NONE, FENCED, UNKNOWN_EPOCH, UNKNOWN_TOPIC = 0, 74, 75, 3


def request(v, epoch, current=-1, replica=-1, topic=TOPIC, partition=0):
    """Body of an OffsetForLeaderEpoch request for one partition."""
    if v >= 4:
        part = i32(partition) + i32(current) + i32(epoch) + b"\0"
        return (i32(replica) + uvarint(2) + compact_string(topic) + uvarint(2) + part + b"\0" +
                b"\0")
    part = i32(partition) + (i32(current) if v >= 2 else b"") + i32(epoch)
    return (i32(replica) if v >= 3 else b"") + i32(1) + string(topic) + i32(1) + part


def ask(v, epoch, **kw):
    """(ErrorCode, LeaderEpoch or None for v0, EndOffset) for one partition."""
    conn = kwire.Conn(bootstrap)
    try:
        corr = conn.send(API, v, request(v, epoch, **kw), flexible_header=v >= 4)
        got, body = conn.recv()
    finally:
        conn.close()
    check(got == corr, "OffsetForLeaderEpoch v%d: correlation %d, sent %d" % (v, got, corr))
    r = Reader(body)
    if v >= 4:
        r.tagged()
    if v >= 2:
        r.i32()  # ThrottleTimeMs
    count = r.uvarint() - 1 if v >= 4 else r.i32()
    check(count == 1, "v%d: %d topics" % (v, count))
    name = r.compact_string() if v >= 4 else r.string()
    check(name == kw.get("topic", TOPIC), "v%d: topic %r" % (v, name))
    count = r.uvarint() - 1 if v >= 4 else r.i32()
    check(count == 1, "v%d: %d partitions" % (v, count))
    err, part = r.i16(), r.i32()
    check(part == kw.get("partition", 0), "v%d: partition %d" % (v, part))
    leader_epoch = r.i32() if v >= 1 else None
    end = r.i64()
    return err, leader_epoch, end


def expect(v, epoch, want_err, want_epoch, want_end, **kw):
    got = ask(v, epoch, **kw)
    want = (want_err, want_epoch if v >= 1 else None, want_end)
    check(got == want, "OffsetForLeaderEpoch v%d epoch %d %s: got %s, want %s"
          % (v, epoch, kw, got, want))


def zk_state():
    s = zkq.Session(zkserver)
    try:
        return json.loads(s.get(STATE)[0])
    finally:
        s.close()


def zk_set_epoch(epoch):
    s = zkq.Session(zkserver)
    try:
        data, stat = s.get(STATE)
        state = json.loads(data)
        state["leader_epoch"] = epoch
        s.set(STATE, json.dumps(state).encode(), stat["version"])
    finally:
        s.close()


def values(n):
    got = consume_all(bootstrap, TOPIC)[0]
    check([m.value() for m in got] == [b"v%d" % i for i in range(n)],
          "read back %d records: %s" % (n, [m.value() for m in got][:20]))


if phase == "produce":
    produce(bootstrap, TOPIC, [(None, b"v%d" % i, None, 0, None) for i in range(10)],
            flush_every=5)
    for v in range(5):
        expect(v, 0, NONE, 0, 10)
        expect(v, 1, NONE, -1, -1)  # above the latest epoch
        expect(v, -1, NONE, -1, -1)
    expect(2, 0, UNKNOWN_EPOCH, -1, -1, current=1)
    expect(4, 0, NONE, 0, 10, current=0)
    expect(4, 0, UNKNOWN_TOPIC, -1, -1, topic="nosuch")
    expect(4, 0, UNKNOWN_TOPIC, -1, -1, partition=5)
    info("OffsetForLeaderEpoch v0-v4 at epoch 0")
elif phase == "bump":
    # What a leader election writes: the same leader, a new epoch.
    zk_set_epoch(3)
    deadline = time.time() + 30
    while ask(4, 3, current=3)[0] != NONE:
        if time.time() > deadline:
            fail("the leader epoch 3 written to ZooKeeper never reached the broker")
        time.sleep(0.2)
    # Recorded at the LEO before any write of the new epoch.
    expect(4, 3, NONE, 3, 10, current=3)
    expect(4, 0, NONE, 0, 10, current=3)
    expect(4, 2, NONE, 0, 10)
    expect(4, 0, FENCED, -1, -1, current=0)
    expect(3, 0, UNKNOWN_EPOCH, -1, -1, current=4)
    produce(bootstrap, TOPIC, [(None, b"v%d" % i, None, 0, None) for i in range(10, 15)])
    expect(4, 3, NONE, 3, 15, current=3)
    expect(1, 0, NONE, 0, 10)
    values(15)
    info("epoch 3 from offset 10")
elif phase == "restarted":
    current = zk_state()["leader_epoch"]
    check(current >= 3, "leader epoch %d after the restart" % current)
    expect(4, 0, NONE, 0, 10)
    expect(4, 3, NONE, 3, 15)
    expect(4, current, NONE, current, 15)
    values(15)
    info("epochs as before (current epoch %d)" % current)
else:
    fail("unknown phase " + phase)
