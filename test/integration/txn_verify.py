#!/usr/bin/python3
"""Test 37's check of transaction verification (KIP-890) on the wire.

    txn_verify.py ZK BOOTSTRAP TOPIC

With raw requests, as a transactional producer that skips a step would send them: a
transactional batch to partition 0 of TOPIC before AddPartitionsToTxn is refused with
INVALID_TXN_STATE, after it accepted; a plain batch of that producer inside the transaction
is refused; TxnOffsetCommit is refused before AddOffsetsToTxn; after the transaction is
aborted, a late batch of it (a retry that arrived after the markers) is refused and leaves
the last stable offset where it was, and so is a late TxnOffsetCommit. ZK is host:port
(chroot /streamflow). Exit 1 with a message on failure.
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import idempotence  # noqa: E402
import kwire  # noqa: E402
from idempotence import check, varint  # noqa: E402
from kwire import i8, i16, i32, i64, string  # noqa: E402

API_PRODUCE, API_LIST_OFFSETS, API_FIND_COORDINATOR = 0, 2, 10
API_ADD_PARTITIONS, API_ADD_OFFSETS, API_END_TXN, API_TXN_OFFSET_COMMIT = 24, 25, 26, 28
NONE, LOAD_IN_PROGRESS, NOT_ENOUGH_REPLICAS, INVALID_TXN_STATE = 0, 14, 19, 48
TXN_ID = "txn-verify"
GROUP = "g-verify"
ATTR_TRANSACTIONAL = 0x10


def call(hostport, api, version, body):
    c = kwire.Conn(hostport)
    try:
        corr = c.send(api, version, body)
        got, resp = c.recv()
    finally:
        c.close()
    check(got == corr, "api %d: correlation id %d, expected %d" % (api, got, corr))
    return kwire.Reader(resp)


def coordinator(bootstrap, key=TXN_ID, key_type=1):
    """host:port of the coordinator of @key (FindCoordinator v1: 1 transaction, 0 group)."""
    deadline = time.time() + 30
    while True:
        r = call(bootstrap.split(",")[0], API_FIND_COORDINATOR, 1, string(key) + i8(key_type))
        r.i32()
        err = r.i16()
        r.string()
        r.i32()
        host, port = r.string(), r.i32()
        if err == NONE:
            return "%s:%d" % (host, port)
        check(time.time() < deadline, "FindCoordinator: error %d" % err)
        time.sleep(0.5)


def batch(pid, epoch, seq, value, transactional):
    now = int(time.time() * 1000)
    body = i8(0) + varint(0) + varint(0) + varint(-1) + varint(len(value)) + value + varint(0)
    recs = varint(len(body)) + body
    attrs = ATTR_TRANSACTIONAL if transactional else 0
    tail = (i16(attrs) + i32(0) + i64(now) + i64(now) + i64(pid) + i16(epoch) + i32(seq) +
            i32(1) + recs)
    head = i32(-1) + i8(2) + struct.pack(">I", kwire.crc32c(tail))
    return i64(0) + i32(len(head) + len(tail)) + head + tail


def produce(leader, topic, data):
    """The error of a Produce v8 (acks=all, transactional id TXN_ID) to partition 0."""
    body = (string(TXN_ID) + i16(-1) + i32(10000) + i32(1) + string(topic) + i32(1) + i32(0) +
            i32(len(data)) + data)
    r = call(leader, API_PRODUCE, 8, body)
    r.i32(), r.string(), r.i32(), r.i32()
    return r.i16()


def add_partition(coord, topic, pid, epoch):
    body = string(TXN_ID) + i64(pid) + i16(epoch) + i32(1) + string(topic) + i32(1) + i32(0)
    r = call(coord, API_ADD_PARTITIONS, 1, body)
    r.i32(), r.i32(), r.string(), r.i32(), r.i32()
    return r.i16()


def add_offsets(coord, pid, epoch):
    r = call(coord, API_ADD_OFFSETS, 1, string(TXN_ID) + i64(pid) + i16(epoch) + string(GROUP))
    r.i32()
    return r.i16()


def txn_offset_commit(group_coord, topic, pid, epoch, offset):
    """The error of a TxnOffsetCommit v0 of @offset for partition 0 of @topic in GROUP."""
    body = (string(TXN_ID) + string(GROUP) + i64(pid) + i16(epoch) + i32(1) + string(topic) +
            i32(1) + i32(0) + i64(offset) + i16(-1))
    r = call(group_coord, API_TXN_OFFSET_COMMIT, 0, body)
    r.i32(), r.i32(), r.string(), r.i32(), r.i32()
    return r.i16()


def retried(fn, *retriable):
    """fn() again while it answers one of @retriable (a coordinator finishing a transition)."""
    deadline = time.time() + 30
    err = fn()
    while err in retriable and time.time() < deadline:
        time.sleep(0.05)
        err = fn()
    return err


def end_txn(coord, pid, epoch, commit):
    r = call(coord, API_END_TXN, 1, string(TXN_ID) + i64(pid) + i16(epoch) + i8(commit))
    r.i32()
    return r.i16()


def offsets(leader, topic):
    """(last stable offset, log end offset) of partition 0 (ListOffsets v2 latest)."""
    out = []
    for isolation in (1, 0):
        body = i32(-1) + i8(isolation) + i32(1) + string(topic) + i32(1) + i32(0) + i64(-1)
        r = call(leader, API_LIST_OFFSETS, 2, body)
        r.i32(), r.i32(), r.string(), r.i32(), r.i32()
        err = r.i16()
        r.i64()
        out.append(r.i64())
        check(err == NONE, "ListOffsets: error %d" % err)
    return tuple(out)


def main(zk, bootstrap, topic):
    coord = coordinator(bootstrap)
    err, pid, epoch = idempotence.init_producer_id(coord, 1, TXN_ID)
    check(err == NONE, "InitProducerId: error %d" % err)
    leader = idempotence.leader_addr(zk, topic)
    err = produce(leader, topic, batch(pid, epoch, 0, b"early", True))
    check(err == INVALID_TXN_STATE,
          "a transactional batch before AddPartitionsToTxn: error %d, expected %d" %
          (err, INVALID_TXN_STATE))
    lso, leo = offsets(leader, topic)
    check(lso == leo, "the refused batch moved the offsets: LSO %d, LEO %d" % (lso, leo))
    print("  a transactional batch before AddPartitionsToTxn: INVALID_TXN_STATE, not stored")
    check(add_partition(coord, topic, pid, epoch) == NONE, "AddPartitionsToTxn failed")
    err = produce(leader, topic, batch(pid, epoch, 0, b"in", True))
    check(err == NONE, "a transactional batch after AddPartitionsToTxn: error %d" % err)
    err = produce(leader, topic, batch(pid, epoch, 1, b"plain", False))
    check(err == INVALID_TXN_STATE, "a plain batch inside the transaction: error %d" % err)
    lso, leo = offsets(leader, topic)
    check(lso < leo, "the open transaction does not hold the LSO: %d, LEO %d" % (lso, leo))
    print("  after AddPartitionsToTxn the batch is stored; a plain batch then is refused")
    group_coord = coordinator(bootstrap, GROUP, 0)
    err = txn_offset_commit(group_coord, topic, pid, epoch, 1)
    check(err == INVALID_TXN_STATE, "TxnOffsetCommit before AddOffsetsToTxn: error %d" % err)
    check(add_offsets(coord, pid, epoch) == NONE, "AddOffsetsToTxn failed")
    err = txn_offset_commit(group_coord, topic, pid, epoch, 1)
    check(err == NONE, "TxnOffsetCommit after AddOffsetsToTxn: error %d" % err)
    print("  TxnOffsetCommit: refused before AddOffsetsToTxn, accepted after")
    check(end_txn(coord, pid, epoch, 0) == NONE, "EndTxn (abort) failed")
    deadline = time.time() + 30
    while True:
        lso, leo = offsets(leader, topic)
        if lso == leo:
            break
        check(time.time() < deadline, "the abort marker never came: LSO %d, LEO %d" % (lso, leo))
        time.sleep(0.2)
    # NOT_ENOUGH_REPLICAS (retriable) while the coordinator finishes the abort.
    err = retried(lambda: produce(leader, topic, batch(pid, epoch, 1, b"late", True)),
                  NOT_ENOUGH_REPLICAS)
    check(err == INVALID_TXN_STATE, "a late batch of the aborted transaction: error %d" % err)
    after = offsets(leader, topic)
    check(after == (lso, leo), "the late batch moved the offsets: %s, was %s" % (after, (lso, leo)))
    print("  a late batch of the aborted transaction: INVALID_TXN_STATE, LSO stays at %d" % lso)
    err = retried(lambda: txn_offset_commit(group_coord, topic, pid, epoch, 2), LOAD_IN_PROGRESS)
    check(err == INVALID_TXN_STATE, "a late TxnOffsetCommit of the aborted transaction: error %d"
          % err)
    print("  a late TxnOffsetCommit of the aborted transaction: INVALID_TXN_STATE")


if __name__ == "__main__":
    main(*sys.argv[1:4])
