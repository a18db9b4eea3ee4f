"""The hostile record batches of the hardening issue, sent with Produce v8 to a real broker:
each gets Kafka's error code and stores nothing, and a consumer then reads exactly the good
records.

usage: hostile_batches.py BOOTSTRAP
"""
import ctypes
import gzip
import struct
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kwire
from kwire import i8, i16, i32, i64, string

CORRUPT_MESSAGE, INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE = 2, 87, 76
TOPIC = "hostile"

bootstrap = sys.argv[1]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def varint(v):
    return kwire.uvarint((v << 1) ^ (v >> 63))


def records(n, now):
    out = b""
    for i in range(n):
        value = b"value-%d" % i
        body = i8(0) + varint(i) + varint(i) + varint(-1) + varint(len(value)) + value + varint(0)
        out += varint(len(body)) + body
    return out


def batch(section, count, attrs=0, last_delta=None, pid=-1, now=None):
    """A v2 batch around @section (records, maybe compressed) claiming @count records."""
    now = now or int(time.time() * 1000)
    last = count - 1 if last_delta is None else last_delta
    tail = (i16(attrs) + i32(last) + i64(now) + i64(now) + i64(pid) + i16(-1) + i32(-1) +
            i32(count) + section)
    crc = kwire.crc32c(tail)
    head = i32(-1) + i8(2) + struct.pack(">I", crc)
    return i64(0) + i32(len(head) + len(tail)) + head + tail


def zstd(data):
    lib = ctypes.CDLL("libzstd.so.1")
    lib.ZSTD_compressBound.restype = ctypes.c_size_t
    lib.ZSTD_compress.restype = ctypes.c_size_t
    cap = lib.ZSTD_compressBound(ctypes.c_size_t(len(data)))
    buf = ctypes.create_string_buffer(cap)
    n = lib.ZSTD_compress(buf, ctypes.c_size_t(cap), data, ctypes.c_size_t(len(data)), 3)
    return buf.raw[:n]


def produce(conn, records_bytes):
    """(error code, base offset) of a Produce v8 of @records_bytes to partition 0."""
    body = (i16(-1) + i16(1) + i32(5000) + i32(1) + string(TOPIC) + i32(1) + i32(0) +
            i32(len(records_bytes)) + records_bytes)
    corr = conn.send(kwire.API_PRODUCE, 8, body)
    got, resp = conn.recv()
    if got != corr:
        fail("correlation id mismatch")
    r = kwire.Reader(resp)
    r.i32(), r.string(), r.i32(), r.i32()  # topics, name, partitions, index
    return r.i16(), r.i64()


def high_watermark():
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused"})
    try:
        return c.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)[1]
    finally:
        c.close()


admin = AdminClient({"bootstrap.servers": bootstrap})
for f in admin.create_topics([NewTopic(TOPIC, 1, 1)]).values():
    f.result(15)
conn = kwire.Conn(bootstrap)
three = records(3, 0)
cases = [
    ("zstd, ~100 bytes claiming 2^31-1 records", batch(zstd(records(1, 0)), 2**31 - 1, attrs=4),
     (INVALID_RECORD, CORRUPT_MESSAGE)),
    ("a producer-set control bit", batch(three, 3, attrs=0x20), (INVALID_RECORD,)),
    ("a gzip flag over garbage", batch(b"this is not gzip at all" * 3, 3, attrs=1),
     (CORRUPT_MESSAGE,)),
    ("RecordCount 10^6 holding 3 records", batch(three, 10**6), (INVALID_RECORD,)),
    ("RecordCount 10^6 holding 3 gzip records", batch(gzip.compress(three), 10**6, attrs=1),
     (INVALID_RECORD,)),
    ("codec 5", batch(three, 3, attrs=5), (UNSUPPORTED_COMPRESSION_TYPE,)),
    ("codec 7", batch(three, 3, attrs=7), (UNSUPPORTED_COMPRESSION_TYPE,)),
    ("the transactional bit without a producer id", batch(three, 3, attrs=0x10),
     (INVALID_RECORD,)),
    ("LastOffsetDelta not RecordCount - 1", batch(three, 3, last_delta=7), (INVALID_RECORD,)),
]
for what, data, codes in cases:
    err, base = produce(conn, data)
    if err not in codes or base != -1:
        fail(f"{what}: error {err}, base offset {base} (expected {codes} and -1)")
    if high_watermark() != 0:
        fail(f"{what}: something was stored")

# Good batches after all that: plain and gzip, stored at 0 and 3, and a consumer reads the six
# records without stalling.
for i, data in enumerate([batch(three, 3), batch(gzip.compress(three), 3, attrs=1)]):
    err, base = produce(conn, data)
    if err != 0 or base != 3 * i:
        fail(f"good batch {i}: error {err}, base offset {base}")
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
c.assign([TopicPartition(TOPIC, 0, 0)])
values = []
deadline = time.time() + 20
while len(values) < 6 and time.time() < deadline:
    m = c.poll(1)
    if m is not None and not m.error():
        values.append(m.value())
c.close()
if values != [b"value-0", b"value-1", b"value-2"] * 2:
    fail(f"the consumer read {values}")
print("hostile batches ok: %d refused, nothing stored, good records read" % len(cases))
