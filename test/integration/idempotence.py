#!/usr/bin/python3
"""Test 36's checks of producer ids and idempotent produce, on the wire.

    idempotence.py ZK ids B1 B2 B3          InitProducerId on each broker, every version
    idempotence.py ZK batches TOPIC BOOT    sequence checks against partition 0's leader,
                                            DescribeProducers there and on a follower:
                                            prints "PID EPOCH SEQ BASE" of the last batch
    idempotence.py ZK retry TOPIC PID EPOCH SEQ BASE
                                            the same batch again (answered BASE, nothing
                                            stored), then the next: prints its "PID EPOCH SEQ
                                            BASE"
    idempotence.py ZK exactly-once TOPIC BOOT N
                                            the values 0..N-1 each once in TOPIC, in order
                                            in each partition
    idempotence.py - lines N                the lines 0..N-1, 20,000 a second
ZK is host:port (chroot /streamflow). Exit 1 with a message on failure.
"""
import json
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kwire  # noqa: E402
import zkq  # noqa: E402
from kwire import i8, i16, i32, i64, string  # noqa: E402

API_PRODUCE, API_LIST_OFFSETS, API_INIT_PRODUCER_ID, API_DESCRIBE_PRODUCERS = 0, 2, 22, 61
NONE, NOT_LEADER, NOT_COORDINATOR, INVALID_REQUEST = 0, 6, 16, 42
OUT_OF_ORDER, INVALID_PRODUCER_EPOCH, INVALID_RECORD = 45, 47, 87


def die(msg):
    print("  " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        die(msg)


def varint(v):
    return kwire.uvarint((v << 1) ^ (v >> 63))


def batch(pid, epoch, seq, values):
    """A v2 batch of @values from producer @pid at @epoch, first sequence @seq."""
    now = int(time.time() * 1000)
    recs = b""
    for i, v in enumerate(values):
        body = i8(0) + varint(0) + varint(i) + varint(-1) + varint(len(v)) + v + varint(0)
        recs += varint(len(body)) + body
    n = len(values)
    tail = (i16(0) + i32(n - 1) + i64(now) + i64(now) + i64(pid) + i16(epoch) + i32(seq) +
            i32(n) + recs)
    head = i32(-1) + i8(2) + struct.pack(">I", kwire.crc32c(tail))
    return i64(0) + i32(len(head) + len(tail)) + head + tail


def produce(hostport, topic, data):
    """(error, base offset) of a Produce v8 (acks=all) of @data to partition 0."""
    c = kwire.Conn(hostport)
    try:
        body = (i16(-1) + i16(-1) + i32(10000) + i32(1) + string(topic) + i32(1) + i32(0) +
                i32(len(data)) + data)
        corr = c.send(API_PRODUCE, 8, body)
        got, resp = c.recv()
    finally:
        c.close()
    check(got == corr, "Produce: correlation id %d, expected %d" % (got, corr))
    r = kwire.Reader(resp)
    r.i32(), r.string(), r.i32(), r.i32()  # topics, name, partitions, index
    return r.i16(), r.i64()


def log_end(hostport, topic):
    c = kwire.Conn(hostport)
    try:
        body = i32(-1) + i32(1) + string(topic) + i32(1) + i32(0) + i64(-1)
        c.send(API_LIST_OFFSETS, 1, body)
        _, resp = c.recv()
    finally:
        c.close()
    r = kwire.Reader(resp)
    r.i32(), r.string(), r.i32(), r.i32()
    err = r.i16()
    r.i64()
    off = r.i64()
    check(err == NONE, "ListOffsets: error %d" % err)
    return off


def init_producer_id(hostport, version, txn_id=None):
    c = kwire.Conn(hostport)
    try:
        flexible = version >= 2
        if flexible:
            tid = b"\0" if txn_id is None else kwire.compact_string(txn_id)
        else:
            tid = i16(-1) if txn_id is None else string(txn_id)
        body = tid + i32(60000)
        if version >= 3:
            body += i64(-1) + i16(-1)
        if flexible:
            body += b"\0"
        corr = c.send(API_INIT_PRODUCER_ID, version, body, flexible_header=flexible)
        got, resp = c.recv()
    finally:
        c.close()
    check(got == corr, "InitProducerId v%d: correlation id %d" % (version, got))
    r = kwire.Reader(resp)
    if flexible:
        r.tagged()
    r.i32()
    return r.i16(), r.i64(), r.i16()


def describe_producers(hostport, topic, partition):
    """(error, {producer id: (epoch, last sequence)}) of DescribeProducers v0."""
    c = kwire.Conn(hostport)
    try:
        body = (kwire.uvarint(2) + kwire.compact_string(topic) + kwire.uvarint(2) +
                i32(partition) + b"\0" + b"\0")
        corr = c.send(API_DESCRIBE_PRODUCERS, 0, body, flexible_header=True)
        got, resp = c.recv()
    finally:
        c.close()
    check(got == corr, "DescribeProducers: correlation id %d" % got)
    r = kwire.Reader(resp)
    r.tagged()
    r.i32()
    check(r.uvarint() == 2, "DescribeProducers: not one topic")
    r.compact_string()
    check(r.uvarint() == 2, "DescribeProducers: not one partition")
    r.i32()
    err = r.i16()
    r.compact_string()
    out = {}
    for _ in range(r.uvarint() - 1):
        pid, epoch, seq = r.i64(), r.i32(), r.i32()
        r.i64(), r.i32(), r.i64()
        r.tagged()
        out[pid] = (epoch, seq)
    return err, out


def cmd_ids(zk, brokers):
    seen = {}
    for b in brokers:
        for v in range(6):
            err, pid, epoch = init_producer_id(b, v)
            check(err == NONE, "InitProducerId v%d on %s: error %d" % (v, b, err))
            check(pid >= 0 and epoch == 0, "InitProducerId v%d on %s: id %d epoch %d"
                  % (v, b, pid, epoch))
            check(pid not in seen, "producer id %d handed out twice (%s and %s)"
                  % (pid, seen.get(pid), b))
            seen[pid] = b
    s = zkq.Session(zk)
    try:
        data, _ = s.get("/streamflow/latest_producer_id_block")
    finally:
        s.close()
    blk = json.loads(data)
    check(blk.get("version") == 1 and isinstance(blk.get("broker"), int) and
          isinstance(blk.get("block_start"), str) and isinstance(blk.get("block_end"), str),
          "the block znode is not Kafka's layout: %s" % data)
    start, end = int(blk["block_start"]), int(blk["block_end"])
    check(end - start == 999, "the block %d..%d does not hold 1000 ids" % (start, end))
    check(max(seen) <= end, "id %d beyond the latest block's end %d" % (max(seen), end))
    blocks = {pid // 1000 for pid in seen}
    check(len(blocks) == len(brokers), "ids of %d brokers in %d blocks: %s"
          % (len(brokers), len(blocks), sorted(seen)))
    answered = []
    for b in brokers:
        err, _, _ = init_producer_id(b, 4, "")
        check(err == INVALID_REQUEST, "an empty transactional id: error %d" % err)
        err, pid, epoch = init_producer_id(b, 1, "txn-1")
        check(err in (NONE, NOT_COORDINATOR), "a transactional id: error %d" % err)
        if err == NONE:
            answered.append((b, pid, epoch))
    # Only its coordinator serves a transactional id; asked again, it bumps the epoch.
    check(len(answered) == 1, "transactional id txn-1 served by %s" % answered)
    b, pid, epoch = answered[0]
    err, pid2, epoch2 = init_producer_id(b, 1, "txn-1")
    check(err == NONE and pid2 == pid and epoch2 == epoch + 1,
          "txn-1 again: error %d, producer %d epoch %d after %d/%d" % (err, pid2, epoch2, pid, epoch))
    print("  %d producer ids from %d blocks; latest block %d..%d of broker %d"
          % (len(seen), len(blocks), start, end, blk["broker"]))


def cmd_batches(zk, topic, boot):
    leader = leader_addr(zk, topic)
    err, pid, epoch = init_producer_id(leader, 4)
    check(err == NONE, "InitProducerId: error %d" % err)

    def send(ep, seq, n, want, what):
        end = log_end(leader, topic)
        e, base = produce(leader, topic, batch(pid, ep, seq, [b"%d-%d" % (seq, i)
                                                              for i in range(n)]))
        check(e == want, "%s: error %d, expected %d" % (what, e, want))
        grew = log_end(leader, topic) - end
        check(grew == (n if want == NONE else 0), "%s: the log grew by %d" % (what, grew))
        return base

    b0 = send(0, 0, 3, NONE, "the first batch")
    e, base = produce(leader, topic, batch(pid, 0, 0, [b"x", b"y", b"z"]))
    check(e == NONE and base == b0, "the first batch again: error %d base %d, expected %d"
          % (e, base, b0))
    send(0, 3, 2, NONE, "the next batch")
    send(0, 10, 1, OUT_OF_ORDER, "a gap in the sequence")
    send(0, 2, 1, OUT_OF_ORDER, "an old sequence no batch had")
    send(0, 5, 1, NONE, "the batch after the gap was refused")
    send(1, 0, 2, NONE, "a new epoch from sequence 0")
    send(0, 6, 1, INVALID_PRODUCER_EPOCH, "the old epoch")
    send(2, 5, 1, OUT_OF_ORDER, "a new epoch not from sequence 0")
    end = log_end(leader, topic)
    e, _ = produce(leader, topic, batch(pid, 1, -1, [b"q"]))
    check(e == INVALID_RECORD and log_end(leader, topic) == end,
          "a producer id without a sequence: error %d" % e)
    # A producer's batch must be alone: a retry is answered with its first offsets only.
    end = log_end(leader, topic)
    e, _ = produce(leader, topic, batch(pid, 1, 2, [b"a"]) + batch(pid, 1, 3, [b"b"]))
    check(e == INVALID_RECORD and log_end(leader, topic) == end,
          "two batches of a producer in one partition: error %d" % e)
    # Five batches in flight are remembered: the oldest of the last five is still a duplicate.
    bases = [send(1, 2 + i, 1, NONE, "batch %d of five" % i) for i in range(5)]
    e, base = produce(leader, topic, batch(pid, 1, 2, [b"again"]))
    check(e == NONE and base == bases[0], "the oldest of five again: error %d base %d, "
          "expected %d" % (e, base, bases[0]))
    err, producers = describe_producers(leader, topic, 0)
    check(err == NONE and producers.get(pid) == (1, 6),
          "DescribeProducers on the leader: error %d, %s" % (err, producers))
    follower = next(a for a in boot.split(",") if a != leader)
    err, _ = describe_producers(follower, topic, 0)
    check(err == NOT_LEADER, "DescribeProducers on a follower: error %d" % err)
    print("%d %d %d %d" % (pid, 1, 6, bases[-1]))


def cmd_retry(zk, topic, pid, epoch, seq, want_base):
    leader = leader_addr(zk, topic)
    # The batch was the last one: a new leader's high watermark gets there once its
    # followers fetch.
    deadline = time.time() + 15
    while (end := log_end(leader, topic)) != want_base + 1 and time.time() < deadline:
        time.sleep(0.2)
    check(end == want_base + 1, "the log on %s ends at %d, not after the batch at %d"
          % (leader, end, want_base))
    e, base = produce(leader, topic, batch(pid, epoch, seq, [b"retried"]))
    check(e == NONE and base == want_base, "the retried batch on %s: error %d base %d, "
          "expected base %d" % (leader, e, base, want_base))
    check(log_end(leader, topic) == end, "the retried batch was stored again")
    e, base = produce(leader, topic, batch(pid, epoch, seq + 1, [b"next"]))
    check(e == NONE and base == end, "the batch after the retry: error %d base %d, expected %d"
          % (e, base, end))
    print("%d %d %d %d" % (pid, epoch, seq + 1, base))


def cmd_exactly_once(topic, boot, n):
    """Each of the numbers 0..n-1 (the record values) once in the topic, in order per
    partition."""
    from sftest import consume_all
    # Right after a failover the new leader's high watermark can trail what the old one
    # acknowledged until its followers fetch again: read again while records are missing.
    deadline = time.time() + 60
    while True:
        got = consume_all(boot, topic, timeout=180)
        total = sum(len(msgs) for msgs in got.values())
        if total >= n or time.time() > deadline:
            break
        print("  %d of %d records below the high watermarks; reading again" % (total, n))
        time.sleep(1)
    seen = {}
    for p, msgs in got.items():
        vals = [int(m.value()) for m in msgs]
        check(vals == sorted(vals), "partition %d: records out of order" % p)
        for v in vals:
            check(v not in seen, "record %d twice (partitions %s and %d)" % (v, seen.get(v), p))
            seen[v] = p
    missing = sorted(set(range(n)) - set(seen))
    check(not missing, "%d records missing, e.g. %s" % (len(missing), missing[:5]))
    check(len(seen) == n, "%d records, %d produced" % (len(seen), n))
    print("  %d records, each once, in order in %d partitions" % (n, len(got)))


def leader_addr(zk, topic):
    s = zkq.Session(zk)
    try:
        st, _ = s.get("/streamflow/brokers/topics/%s/partitions/0/state" % topic)
        leader = json.loads(st)["leader"]
        reg, _ = s.get("/streamflow/brokers/ids/%d" % leader)
    finally:
        s.close()
    ep = json.loads(reg)["endpoints"][0]
    return ep.split("://", 1)[1]


def main(argv):
    zk, cmd = argv[1], argv[2]
    if cmd == "ids":
        cmd_ids(zk, argv[3:])
    elif cmd == "batches":
        cmd_batches(zk, argv[3], argv[4])
    elif cmd == "lines":
        for i in range(int(argv[3])):
            sys.stdout.write("%d\n" % i)
            if i % 2000 == 1999:
                sys.stdout.flush()
                time.sleep(0.1)
    elif cmd == "exactly-once":
        cmd_exactly_once(argv[3], argv[4], int(argv[5]))
    elif cmd == "retry":
        cmd_retry(zk, argv[3], *(int(x) for x in argv[4:8]))
    else:
        die("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
