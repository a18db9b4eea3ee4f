#!/usr/bin/python3
"""17-protocol-versions: clients old and new against one broker.

kafka-python pinned to old broker versions (0.8.2: Produce v0 / Fetch v0 / ListOffsets v0 with
message format v0; 0.10: magic 1; 0.11 and later: record batches) produces and reads back,
plain and gzip; librdkafka (confluent-kafka) reads what the old clients wrote. Raw requests
cover the versions no installed client sends: Metadata v0 (empty = all topics) and v12, Fetch
v13+ by topic id, ListOffsets v0 and v7+ (MAX_TIMESTAMP), CreateTopics v0 and v7, DeleteTopics
v0 and v6 (by id), ApiVersions v4, Produce v9+.

    protocol_versions.py BOOTSTRAP
"""
import struct
import sys
import time
import zlib

import kafka
from kafka.structs import TopicPartition

import kwire
from kwire import Conn, Reader, compact_string, i8, i16, i32, i64, string, uvarint
from sftest import check, consume_all, info

bootstrap = sys.argv[1]


def kp_round_trip(api_version, compression):
    topic = "kp-%s-%s" % ("-".join(map(str, api_version)), compression or "none")
    values = [("%s value %d " % (topic, i)).encode() + b"z" * (i * 7) for i in range(25)]
    p = kafka.KafkaProducer(bootstrap_servers=bootstrap, api_version=api_version,
                            compression_type=compression, acks=1, linger_ms=20,
                            client_id="sftest-%s" % topic)
    futs = [p.send(topic, key=b"k%d" % i, value=v, partition=0) for i, v in enumerate(values)]
    p.flush(30)
    offsets = [f.get(timeout=30).offset for f in futs]
    p.close()
    check(offsets == list(range(len(values))), "%s: acknowledged offsets %s" % (topic, offsets[:5]))
    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, api_version=api_version, group_id=None,
                            enable_auto_commit=False, consumer_timeout_ms=10000,
                            client_id="sftest-%s-c" % topic)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    deadline = time.time() + 30
    while len(got) < len(values) and time.time() < deadline:
        for recs in c.poll(timeout_ms=1000).values():
            got.extend(recs)
    end = c.end_offsets([tp])[tp]
    c.close()
    check([(r.offset, r.key, r.value) for r in got] ==
          [(i, b"k%d" % i, v) for i, v in enumerate(values)],
          "%s: read back %d records, expected %d" % (topic, len(got), len(values)))
    check(end == len(values), "%s: end offset %d (ListOffsets), expected %d" % (topic, end, len(values)))
    # librdkafka reads the converted batches too.
    later = consume_all(bootstrap, topic)
    check([m.value() for m in later.get(0, [])] == values, "%s: librdkafka read differs" % topic)
    info("kafka-python %s %s: %d records in and out, librdkafka agrees"
         % (api_version, compression or "uncompressed", len(values)))


def flexible(conn, api, version, body):
    """Send a flexible request (header v2) and return the response body after header v1."""
    corr = conn.send(api, version, body, flexible_header=True)
    rcorr, resp = conn.recv()
    check(rcorr == corr, "api %d v%d: correlation id %d, expected %d" % (api, version, rcorr, corr))
    r = Reader(resp)
    if api != kwire.API_APIVERSIONS:
        r.tagged()
    return r


def metadata_v0_all(conn):
    corr = conn.send(kwire.API_METADATA, 0, i32(0))
    _, body = conn.recv()
    r = Reader(body)
    for _ in range(r.i32()):
        r.i32(), r.string(), r.i32()
    names = []
    for _ in range(r.i32()):
        r.i16()
        names.append(r.string())
        for _ in range(r.i32()):
            r.i16(), r.i32(), r.i32()
            [r.i32() for _ in range(r.i32())]
            [r.i32() for _ in range(r.i32())]
    check("kp-0-8-2-none" in names, "Metadata v0 with no topics listed %s, expected every topic" % names)
    return names


def metadata_v12(conn, topic):
    """Metadata v12 by name; returns (topic id, partitions)."""
    body = uvarint(2) + b"\0" * 16 + compact_string(topic) + b"\0" + b"\x01" + b"\0" + b"\0"
    r = flexible(conn, kwire.API_METADATA, 12, body)
    r.i32()
    for _ in range(r.uvarint() - 1):
        r.i32(), r.compact_string(), r.i32(), r.compact_string(), r.tagged()
    r.compact_string(), r.i32()
    check(r.uvarint() - 1 == 1, "Metadata v12: expected one topic")
    err, name, tid, _internal = r.i16(), r.compact_string(), r.take(16), r.i8()
    check(err == 0 and name == topic, "Metadata v12: error %d for %s" % (err, name))
    nparts = r.uvarint() - 1
    check(tid != b"\0" * 16, "Metadata v12: zero topic id")
    return tid, nparts


def fetch_by_id(conn, version, tid):
    """Fetch v13+ of partition 0 from offset 0 by topic id; returns the records' byte count."""
    body = b""
    if version < 15:
        body += i32(-1)
    body += i32(100) + i32(1) + i32(1 << 20) + i8(0) + i32(0) + i32(-1)
    body += uvarint(2) + tid + uvarint(2) + i32(0) + i32(-1) + i64(0) + i32(-1) + i64(-1) \
        + i32(1 << 20) + b"\0" + b"\0"
    body += uvarint(1) + compact_string("") + b"\0"
    r = flexible(conn, kwire.API_FETCH, version, body)
    r.i32()
    check(r.i16() == 0, "Fetch v%d: top-level error" % version)
    r.i32()
    check(r.uvarint() - 1 == 1, "Fetch v%d: one topic expected" % version)
    check(r.take(16) == tid, "Fetch v%d: answered for another topic id" % version)
    check(r.uvarint() - 1 == 1, "Fetch v%d: one partition expected" % version)
    r.i32()
    err = r.i16()
    hw = r.i64()
    check(err == 0 and hw == 25, "Fetch v%d: error %d, high watermark %d" % (version, err, hw))
    r.i64(), r.i64()
    r.uvarint()  # aborted transactions (null)
    r.i32()
    n = r.uvarint() - 1
    check(n > 0, "Fetch v%d: no records" % version)
    return n


def list_offsets_v0(conn, topic):
    body = i32(-1) + i32(1) + string(topic) + i32(1) + i32(0) + i64(-1) + i32(1)
    conn.send(2, 0, body)
    _, resp = conn.recv()
    r = Reader(resp)
    r.i32(), r.string(), r.i32(), r.i32()
    err = r.i16()
    offs = [r.i64() for _ in range(r.i32())]
    check(err == 0 and offs == [25], "ListOffsets v0: error %d, offsets %s" % (err, offs))


def list_offsets_max_timestamp(conn, topic):
    body = i32(-1) + i8(0) + uvarint(2) + compact_string(topic) + uvarint(2) + i32(0) + i32(-1) \
        + i64(-3) + b"\0" + b"\0" + b"\0"
    r = flexible(conn, 2, 8, body)
    r.i32(), r.uvarint(), r.compact_string(), r.uvarint()
    r.i32()
    err, ts, off = r.i16(), r.i64(), r.i64()
    check(err == 0 and 0 <= off < 25 and ts > 0, "ListOffsets v8 MAX_TIMESTAMP: error %d offset %d ts %d"
          % (err, off, ts))


def create_delete(conn):
    # CreateTopics v0 (no ValidateOnly), then DeleteTopics v0.
    body = i32(1) + string("cv0") + i32(2) + i16(1) + i32(0) + i32(0) + i32(10000)
    conn.send(19, 0, body)
    _, resp = conn.recv()
    r = Reader(resp)
    r.i32()
    check((r.string(), r.i16()) == ("cv0", 0), "CreateTopics v0 failed")
    conn.send(20, 0, i32(1) + string("cv0") + i32(10000))
    _, resp = conn.recv()
    r = Reader(resp)
    r.i32()
    check((r.string(), r.i16()) == ("cv0", 0), "DeleteTopics v0 failed")
    # CreateTopics v7 answers with the topic id and configs; DeleteTopics v6 deletes by id.
    body = uvarint(2) + compact_string("cv7") + i32(3) + i16(1) + uvarint(1) + uvarint(2) \
        + compact_string("retention.ms") + compact_string("3600000") + b"\0" + b"\0" + i32(10000) \
        + i8(0) + b"\0"
    r = flexible(conn, 19, 7, body)
    r.i32()
    check(r.uvarint() - 1 == 1, "CreateTopics v7: one result expected")
    name, tid, err = r.compact_string(), r.take(16), r.i16()
    msg = r.compact_string()
    check(name == "cv7" and err == 0 and tid != b"\0" * 16, "CreateTopics v7: %s error %d %s"
          % (name, err, msg))
    nparts, rf = r.i32(), r.i16()
    check((nparts, rf) == (3, 1), "CreateTopics v7: %d partitions, rf %d" % (nparts, rf))
    configs = {}
    for _ in range(r.uvarint() - 1):
        k, v = r.compact_string(), r.compact_string()
        r.i8(), r.i8(), r.i8()
        r.tagged()
        configs[k] = v
    check(configs.get("retention.ms") == "3600000", "CreateTopics v7: configs %s" % configs)
    body = uvarint(2) + uvarint(0) + tid + b"\0" + i32(10000) + b"\0"
    r = flexible(conn, 20, 6, body)
    r.i32()
    check(r.uvarint() - 1 == 1, "DeleteTopics v6: one result expected")
    name, rtid, err = r.compact_string(), r.take(16), r.i16()
    check(name == "cv7" and rtid == tid and err == 0, "DeleteTopics v6 by id: %s error %d" % (name, err))


def apiversions_v4(conn):
    body = compact_string("sftest") + compact_string("1.0") + b"\0"
    r = flexible(conn, kwire.API_APIVERSIONS, 4, body)
    check(r.i16() == 0, "ApiVersions v4: error")
    n = r.uvarint() - 1
    apis = {}
    for _ in range(n):
        k, lo, hi = r.i16(), r.i16(), r.i16()
        r.tagged()
        apis[k] = (lo, hi)
    check(apis.get(0) == (0, 11) and apis.get(1, (9, 9))[0] == 0, "ApiVersions v4: %s" % apis)


def produce_v11(conn, topic):
    """Produce v11 (flexible) of one uncompressed batch; returns the base offset."""
    rec = i8(0) + bytes([0, 0]) + bytes([2]) + b"k" + bytes([2]) + b"v" + bytes([0])
    rec = bytes([len(rec) * 2]) + rec
    now = int(time.time() * 1000)
    after_crc = i16(0) + i32(0) + i64(now) + i64(now) + i64(-1) + i16(-1) + i32(-1) + i32(1) + rec
    crc = kwire.crc32c(after_crc)
    batch = i64(0) + i32(len(after_crc) + 9) + i32(-1) + i8(2) + struct.pack(">I", crc) + after_crc
    body = uvarint(0) + i16(1) + i32(5000) + uvarint(2) + compact_string(topic) + uvarint(2) \
        + i32(0) + uvarint(len(batch) + 1) + batch + b"\0" + b"\0" + b"\0"
    r = flexible(conn, kwire.API_PRODUCE, 11, body)
    r.uvarint(), r.compact_string(), r.uvarint()
    r.i32()
    err, base = r.i16(), r.i64()
    check(err == 0 and base == 25, "Produce v11: error %d base offset %d" % (err, base))


def main():
    for v in [(0, 8, 2), (0, 10, 0), (0, 10, 2), (0, 11, 0), (1, 0, 0), (2, 0, 0)]:
        kp_round_trip(v, None)
    for v in [(0, 8, 2), (0, 10, 0), (1, 0, 0)]:
        kp_round_trip(v, "gzip")
    conn = Conn(bootstrap, timeout=10)
    metadata_v0_all(conn)
    tid, nparts = metadata_v12(conn, "kp-0-8-2-none")
    check(nparts == 1, "Metadata v12: %d partitions" % nparts)
    for v in (13, 15, 17):
        fetch_by_id(conn, v, tid)
    list_offsets_v0(conn, "kp-0-8-2-none")
    list_offsets_max_timestamp(conn, "kp-0-10-0-none")
    apiversions_v4(conn)
    produce_v11(conn, "kp-0-8-2-none")
    create_delete(conn)
    info("raw: Metadata v0/v12, Fetch v13/v15/v17 by id, ListOffsets v0/v8, ApiVersions v4, "
         "Produce v11, CreateTopics v0/v7, DeleteTopics v0/v6")


if __name__ == "__main__":
    main()
