#!/usr/bin/python3
"""Raw Kafka wire-protocol helper for the integration tests.

Used as a module (tests import it to send exact bytes) and as a command:
    kwire.py ready HOST:PORT [--broker-id N] [--tls --cafile F [--cert F --key F]]
        one probe: ApiVersions v0 answered without error, then Metadata v1 lists
        broker N and a controller (if N is given); exit 0 if so, else 1 with the reason.
    kwire.py apiversions HOST:PORT      print the advertised version ranges
"""
import socket
import ssl
import struct
import sys
import zlib

API_PRODUCE = 0
API_FETCH = 1
API_METADATA = 3
API_APIVERSIONS = 18
ERR_UNSUPPORTED_VERSION = 35


class Closed(Exception):
    """The broker closed the connection."""


class Timeout(Exception):
    """No complete response in time."""


class Reader:
    """Bounds-checked reader over a response body."""

    def __init__(self, b):
        self.b, self.off = b, 0

    def take(self, n):
        if n < 0 or self.off + n > len(self.b):
            raise ValueError("response truncated at %d (+%d of %d)" % (self.off, n, len(self.b)))
        out = self.b[self.off:self.off + n]
        self.off += n
        return out

    def i8(self):
        return struct.unpack(">b", self.take(1))[0]

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def u32(self):
        return struct.unpack(">I", self.take(4))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def i64(self):
        return struct.unpack(">q", self.take(8))[0]

    def uvarint(self):
        shift = val = 0
        while True:
            byte = self.take(1)[0]
            val |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return val
            shift += 7
            if shift > 28:
                raise ValueError("varint too long")

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def kbytes(self):
        n = self.i32()
        return None if n < 0 else self.take(n)

    def compact_string(self):
        n = self.uvarint() - 1
        return None if n < 0 else self.take(n).decode()

    def tagged(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())

    def remaining(self):
        return len(self.b) - self.off


def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def string(s):
    if s is None:
        return i16(-1)
    b = s.encode()
    return i16(len(b)) + b


def kbytes(b):
    if b is None:
        return i32(-1)
    return i32(len(b)) + b


def uvarint(v):
    out = b""
    while True:
        if v < 0x80:
            return out + bytes([v])
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7


def compact_string(s):
    b = s.encode()
    return uvarint(len(b) + 1) + b


def crc32c(data):
    """CRC-32C (Castagnoli), as record batches use."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def parse_hostport(hp):
    host, port = hp.rsplit(":", 1)
    return host, int(port)


class Conn:
    """One TCP (optionally TLS) connection to a broker."""

    def __init__(self, hostport, timeout=10.0, tls=False, cafile=None, cert=None, key=None):
        host, port = parse_hostport(hostport)
        sock = socket.create_connection((host, port), timeout=timeout)
        if tls:
            ctx = ssl.create_default_context(cafile=cafile)
            if cert:
                ctx.load_cert_chain(cert, key)
            sock = ctx.wrap_socket(sock, server_hostname=host)
        sock.settimeout(timeout)
        self.sock = sock
        self.corr = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send_raw(self, data):
        self.sock.sendall(data)

    def frame(self, api_key, version, body, corr=None, client_id="kwire", flexible_header=False):
        """Return a framed request; header v1 (or v2 when flexible_header)."""
        if corr is None:
            self.corr += 1
            corr = self.corr
        hdr = i16(api_key) + i16(version) + i32(corr) + string(client_id)
        if flexible_header:
            hdr += b"\0"  # no tagged fields
        payload = hdr + body
        return i32(len(payload)) + payload, corr

    def send(self, api_key, version, body, **kw):
        data, corr = self.frame(api_key, version, body, **kw)
        self.sock.sendall(data)
        return corr

    def _recvn(self, n):
        out = b""
        while len(out) < n:
            try:
                chunk = self.sock.recv(n - len(out))
            except socket.timeout:
                raise Timeout("no response within %.0fs" % self.sock.gettimeout())
            except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
                raise Closed("connection reset")
            if not chunk:
                raise Closed("connection closed (got %d of %d bytes)" % (len(out), n))
            out += chunk
        return out

    def recv(self, max_size=64 * 1024 * 1024):
        """Read one response frame; return (correlation id, rest of the frame)."""
        (n,) = struct.unpack(">i", self._recvn(4))
        if n < 4 or n > max_size:
            raise ValueError("bad response size %d" % n)
        b = self._recvn(n)
        return struct.unpack(">i", b[:4])[0], b[4:]

    def wait_closed(self):
        """Return True if the peer closes the connection (EOF/reset) before the timeout."""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
            return True


def parse_apiversions(body, version):
    """ApiVersions response body -> (error_code, {api_key: (min, max)})."""
    r = Reader(body)
    err = r.i16()
    apis = {}
    if version >= 3:
        n = r.uvarint() - 1
        for _ in range(max(n, 0)):
            k, lo, hi = r.i16(), r.i16(), r.i16()
            r.tagged()
            apis[k] = (lo, hi)
    else:
        n = r.i32()
        if n > r.remaining() // 6:
            raise ValueError("ApiKeys count %d larger than the response" % n)
        for _ in range(max(n, 0)):
            k, lo, hi = r.i16(), r.i16(), r.i16()
            apis[k] = (lo, hi)
    return err, apis


def apiversions(conn, version=0):
    if version >= 3:
        body = compact_string("kwire") + compact_string("1.0") + b"\0"
        corr = conn.send(API_APIVERSIONS, version, body, flexible_header=True)
    else:
        corr = conn.send(API_APIVERSIONS, version, b"")
    rcorr, body = conn.recv()
    if rcorr != corr:
        raise ValueError("correlation id %d, expected %d" % (rcorr, corr))
    return parse_apiversions(body, version)


def parse_metadata_v1(body):
    r = Reader(body)
    brokers = []
    for _ in range(r.i32()):
        node, host, port, rack = r.i32(), r.string(), r.i32(), r.string()
        brokers.append((node, host, port, rack))
    controller = r.i32()
    topics = {}
    for _ in range(r.i32()):
        err, name, _internal = r.i16(), r.string(), r.i8()
        parts = {}
        for _ in range(r.i32()):
            perr, pid, leader = r.i16(), r.i32(), r.i32()
            replicas = [r.i32() for _ in range(r.i32())]
            isr = [r.i32() for _ in range(r.i32())]
            parts[pid] = (perr, leader, replicas, isr)
        topics[name] = (err, parts)
    return brokers, controller, topics


def metadata_v1(conn, topics=None):
    body = i32(-1) if topics is None else i32(len(topics)) + b"".join(string(t) for t in topics)
    corr = conn.send(API_METADATA, 1, body)
    rcorr, resp = conn.recv()
    if rcorr != corr:
        raise ValueError("correlation id %d, expected %d" % (rcorr, corr))
    return parse_metadata_v1(resp)


def message_v0(key, value):
    """A magic-0 message (offset, size, crc, magic, attributes, key, value)."""
    inner = b"\0\0" + kbytes(key) + kbytes(value)  # magic 0, attributes 0
    crc = zlib.crc32(inner) & 0xFFFFFFFF
    msg = struct.pack(">I", crc) + inner
    return i64(0) + i32(len(msg)) + msg


def produce_v0_body(topic, partition, message_set, acks=1, timeout_ms=5000):
    return (i16(acks) + i32(timeout_ms) + i32(1) + string(topic) + i32(1) + i32(partition)
            + kbytes(message_set))


def parse_produce_v0(body):
    r = Reader(body)
    out = []
    for _ in range(r.i32()):
        name = r.string()
        for _ in range(r.i32()):
            pid, err, base = r.i32(), r.i16(), r.i64()
            out.append((name, pid, err, base))
    return out


def _tls_args(argv):
    kw = {}
    if "--tls" in argv:
        kw["tls"] = True
    for opt, name in (("--cafile", "cafile"), ("--cert", "cert"), ("--key", "key")):
        if opt in argv:
            kw[name] = argv[argv.index(opt) + 1]
    return kw


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 1
    cmd, hp = argv[1], argv[2]
    kw = _tls_args(argv)
    try:
        conn = Conn(hp, timeout=5.0, **kw)
        if cmd == "apiversions":
            err, apis = apiversions(conn, 0)
            print("error_code %d" % err)
            for k in sorted(apis):
                print("%d %d-%d" % (k, apis[k][0], apis[k][1]))
            return 0
        if cmd == "ready":
            err, apis = apiversions(conn, 0)
            if err != 0 or API_METADATA not in apis:
                sys.stderr.write("ApiVersions error %d, apis %s\n" % (err, sorted(apis)))
                return 1
            if "--broker-id" in argv:
                want = int(argv[argv.index("--broker-id") + 1])
                brokers, controller, _ = metadata_v1(conn, [])
                if want not in [b[0] for b in brokers]:
                    sys.stderr.write("Metadata lists brokers %s, not %d yet\n" % (brokers, want))
                    return 1
                # Admin clients (librdkafka) need a controller id in Metadata.
                if controller < 0:
                    sys.stderr.write("Metadata has no controller yet\n")
                    return 1
            return 0
        sys.stderr.write("kwire: unknown command %s\n" % cmd)
        return 1
    except (OSError, Closed, Timeout, ValueError, struct.error) as e:
        sys.stderr.write("kwire: %s: %s\n" % (hp, e))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
