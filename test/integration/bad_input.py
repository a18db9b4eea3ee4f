#!/usr/bin/python3
"""10-bad-input: send one kind of bad (or tricky) input on a fresh connection and check the
broker answers with an error or closes the connection - never hangs, never misparses.

    bad_input.py BOOTSTRAP CASE        (bad_input.py list  prints the cases)
Exit 0 if the broker behaved, 1 (with a reason) if not.
"""
import random
import struct
import sys
import time
import zlib

import kwire
from kwire import Closed, Conn, Reader, Timeout, i16, i32, i64, string

TOPIC = "healthy"


def closed_or_response(conn, corr=None, what=""):
    """Acceptable: the connection is closed, or a response frame arrives (with corr, if given)
    and then anything. Not acceptable: silence for the whole timeout."""
    try:
        rcorr, _ = conn.recv()
    except Closed:
        return "closed"
    except Timeout:
        raise SystemExit("FAIL: %s: neither a response nor a close within %ds" % (what, conn.sock.gettimeout()))
    except ValueError as e:
        raise SystemExit("FAIL: %s: malformed response: %s" % (what, e))
    if corr is not None and rcorr != corr:
        raise SystemExit("FAIL: %s: response with correlation id %d, expected %d" % (what, rcorr, corr))
    return "error response"


def must_close(conn, what):
    if not conn.wait_closed():
        raise SystemExit("FAIL: %s: connection not closed within %ds" % (what, conn.sock.gettimeout()))
    return "closed"


def case_http(c):
    c.send_raw(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return must_close(c, "HTTP request (size prefix 0x47455420)")


def case_garbage(c):
    rnd = random.Random(10)
    body = bytes(rnd.randrange(256) for _ in range(40))
    body = i16(0x7ABC) + body[2:]   # an api key no Kafka version defines
    c.send_raw(i32(len(body)) + body)
    return closed_or_response(c, what="40 garbage bytes")


def case_oversize(c):
    c.send_raw(struct.pack(">I", 0x7FFFFFFF))
    try:
        chunk = b"\0" * 65536
        for _ in range(16):   # 1 MiB of "body"
            c.send_raw(chunk)
    except (BrokenPipeError, ConnectionResetError):
        return "closed while sending"
    return must_close(c, "size prefix 0x7fffffff")


def case_negative_size(c):
    c.send_raw(struct.pack(">I", 0xFFFFFFFF) + b"\0" * 16)
    return must_close(c, "size prefix -1")


def case_zero_size(c):
    c.send_raw(i32(0))
    return must_close(c, "size prefix 0")


def case_short_header(c):
    c.send_raw(i32(3) + b"\0\x12\0")
    return must_close(c, "3-byte request (no complete header)")


def case_truncated(c):
    # The size says 100 bytes; 10 arrive, then the client goes away.
    c.send_raw(i32(100) + i16(18) + i16(0) + i32(1) + b"\0\0")
    c.sock.settimeout(2)
    try:
        rcorr, _ = c.recv()
        raise SystemExit("FAIL: truncated request: the broker answered (correlation %d) before the "
                         "request was complete" % rcorr)
    except (Timeout, Closed):
        pass
    c.close()
    return "client closed mid-request"


def case_client_id_overrun(c):
    # client_id length 1000 in a 20-byte request
    body = i16(18) + i16(0) + i32(5) + i16(1000) + b"abcdefghij"
    c.send_raw(i32(len(body)) + body)
    return closed_or_response(c, 5, "client_id length beyond the request")


def case_array_bomb(c):
    # Metadata v1 claiming 0x7fffffff topics, with no topic data.
    corr = c.send(kwire.API_METADATA, 1, i32(0x7FFFFFFF))
    return closed_or_response(c, corr, "Metadata with topic count 0x7fffffff")


def case_unknown_api(c):
    # Kafka closes the connection on an API key it does not know; so does StreamFlow.
    c.send(9999, 0, b"\0" * 8)
    return must_close(c, "unknown API key 9999")


def case_unsupported_version(c):
    # A known API at a version past the newest: closed, as Kafka does (only ApiVersions
    # answers every version).
    c.send(kwire.API_METADATA, 99, i32(0))
    return must_close(c, "Metadata v99")


def _fetch_old(c, version, offset):
    """Fetch v0-v3 of TOPIC-0 at @offset; the message set of the response."""
    body = i32(-1) + i32(100) + i32(1)
    if version >= 3:
        body += i32(1 << 20)
    body += i32(1) + string(TOPIC) + i32(1) + i32(0) + i64(offset) + i32(1 << 20)
    corr = c.send(kwire.API_FETCH, version, body)
    rcorr, resp = c.recv()
    if rcorr != corr:
        raise SystemExit("FAIL: Fetch v%d: correlation id %d, expected %d" % (version, rcorr, corr))
    r = Reader(resp)
    if version >= 1:
        r.i32()  # throttle time
    r.i32()
    r.string()
    r.i32()
    r.i32()
    err = r.i16()
    r.i64()
    if err:
        raise SystemExit("FAIL: Fetch v%d: error %d" % (version, err))
    return r.kbytes()


def _produce_old(c, version):
    """Produce v0-v2 with a message set of magic 0 (v0-v1) or 1 (v2): stored (converted to a
    record batch) and read back with Fetch of the same format."""
    magic = 1 if version >= 2 else 0
    ts = int(time.time() * 1000)
    value = b"old format v%d" % version
    if magic:
        inner = b"\x01\0" + i64(ts) + kwire.kbytes(b"k") + kwire.kbytes(value)
        msg = struct.pack(">I", zlib.crc32(inner) & 0xFFFFFFFF) + inner
        message_set = i64(0) + i32(len(msg)) + msg
    else:
        message_set = kwire.message_v0(b"k", value)
    corr = c.send(kwire.API_PRODUCE, version, kwire.produce_v0_body(TOPIC, 0, message_set))
    try:
        rcorr, body = c.recv()
    except (Closed, Timeout) as e:
        raise SystemExit("FAIL: Produce v%d: no response (%s)" % (version, e))
    if rcorr != corr:
        raise SystemExit("FAIL: Produce v%d: correlation id %d, expected %d" % (version, rcorr, corr))
    r = Reader(body)
    r.i32()
    r.string()
    r.i32()
    r.i32()
    err, base = r.i16(), r.i64()
    if err or base < 0:
        raise SystemExit("FAIL: Produce v%d: error %d, base offset %d" % (version, err, base))
    # Read it back in the format the version speaks, and as a v2 batch through kcat later.
    ms = _fetch_old(c, 2 if magic else 0, base)
    m = Reader(ms)
    off, size = m.i64(), m.i32()
    crc, got_magic, _attr = m.u32(), m.i8(), m.i8()
    got_ts = m.i64() if got_magic else None
    key, val = m.kbytes(), m.kbytes()
    if (off, got_magic, key, val) != (base, magic, b"k", value):
        raise SystemExit("FAIL: Produce v%d: read back offset %d magic %d %r=%r, expected %d %d %r"
                         % (version, off, got_magic, key, val, base, magic, value))
    if magic and got_ts != ts:
        raise SystemExit("FAIL: Produce v%d: timestamp %s, expected %d" % (version, got_ts, ts))
    if crc != zlib.crc32(ms[16:12 + size]) & 0xFFFFFFFF:
        raise SystemExit("FAIL: Fetch v%d: message CRC does not match" % (2 if magic else 0))
    return "stored at offset %d, read back as magic %d" % (base, magic)


def case_produce_v0(c):
    return _produce_old(c, 0)


def case_produce_v2(c):
    return _produce_old(c, 2)


def case_apiversions_99(c):
    corr = c.send(kwire.API_APIVERSIONS, 99, b"")
    try:
        rcorr, body = c.recv()
    except (Closed, Timeout) as e:
        raise SystemExit("FAIL: ApiVersions v99: %s; expected a v0 response with error 35" % e)
    if rcorr != corr:
        raise SystemExit("FAIL: ApiVersions v99: correlation id %d, expected %d" % (rcorr, corr))
    try:
        err, apis = kwire.parse_apiversions(body, 0)
    except ValueError as e:
        raise SystemExit("FAIL: ApiVersions v99: response is not in v0 format: %s (%r)" % (e, body[:40]))
    if err != kwire.ERR_UNSUPPORTED_VERSION:
        raise SystemExit("FAIL: ApiVersions v99: error code %d, expected 35" % err)
    if apis.get(kwire.API_APIVERSIONS, (0, 0))[1] < 4 or apis[kwire.API_APIVERSIONS][0] != 0:
        raise SystemExit("FAIL: ApiVersions v99: ApiVersions range %s, expected 0-4" % (apis.get(18),))
    # The connection stays usable.
    err, apis = kwire.apiversions(c, 0)
    if err != 0 or kwire.API_PRODUCE not in apis:
        raise SystemExit("FAIL: ApiVersions v0 after v99 on the same connection: error %d" % err)
    return "v0 response with error 35, connection kept"


def case_apiversions_v3(c):
    err, apis = kwire.apiversions(c, 3)
    if err != 0:
        raise SystemExit("FAIL: ApiVersions v3: error %d" % err)
    # Kafka 3.9's ranges in ZooKeeper mode, oldest to newest of the spec.
    want = {0: (0, 11), 1: (0, 17), 2: (0, 10), 3: (0, 12), 18: (0, 4), 19: (0, 7), 20: (0, 6),
            21: (0, 2), 23: (0, 4), 32: (0, 4), 33: (0, 2), 37: (0, 3), 44: (0, 1), 60: (0, 1)}
    for k, (lo, hi) in want.items():
        if k not in apis or apis[k][0] > lo or apis[k][1] < hi:
            raise SystemExit("FAIL: ApiVersions v3: API %d range %s, expected at least %d-%d"
                             % (k, apis.get(k), lo, hi))
    return "flexible response ok (%d APIs)" % len(apis)


def case_pipelined(c):
    # kafka-python sends ApiVersions v0 and Metadata v0 back to back; then a burst of 50.
    a, ca = c.frame(kwire.API_APIVERSIONS, 0, b"")
    m, cm = c.frame(kwire.API_METADATA, 0, i32(0))
    burst = [c.frame(kwire.API_METADATA, 1, i32(1) + string(TOPIC)) for _ in range(50)]
    c.send_raw(a + m + b"".join(f for f, _ in burst))
    order = [c.recv()[0] for _ in range(52)]
    want = [ca, cm] + [x for _, x in burst]
    if order != want:
        raise SystemExit("FAIL: pipelined requests answered as %s, expected %s" % (order[:8], want[:8]))
    return "52 pipelined responses in order"


CASES = {name[5:].replace("_", "-"): fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def main(argv):
    if argv[1] == "list":
        print("\n".join(CASES))
        return 0
    bootstrap, case = argv[1], argv[2]
    try:
        c = Conn(bootstrap, timeout=10)
    except OSError as e:
        print("FAIL: %s: cannot connect: %s" % (case, e))
        return 1
    try:
        outcome = CASES[case](c)
    except SystemExit as e:
        print(e)
        return 1
    finally:
        c.close()
    print("  %s: %s" % (case, outcome))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
