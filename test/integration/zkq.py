#!/usr/bin/python3
"""Minimal ZooKeeper client for the integration tests (no JVM start-up per query).

Speaks the ZooKeeper client protocol (jute) directly:
    zkq.py HOST:PORT wait [SECONDS]      wait until the server accepts a session
    zkq.py HOST:PORT get PATH            print the node's data; exit 2 if it does not exist
    zkq.py HOST:PORT stat PATH           print the node's Stat as JSON; exit 2 if absent
    zkq.py HOST:PORT children PATH       print the children, one per line; exit 2 if absent
    zkq.py HOST:PORT exists PATH         exit 0 if the node exists, 2 if not
    zkq.py HOST:PORT create PATH DATA    create a persistent node (open ACL) holding DATA
Exit 1 on a connection or protocol error.
"""
import json
import socket
import struct
import sys
import time

OP_CREATE = 1
OP_EXISTS = 3
OP_GETDATA = 4
OP_SETDATA = 5
OP_GETCHILDREN = 8
OP_CLOSE = -11
ERR_NONODE = -101


class ZkError(Exception):
    pass


class NoNode(Exception):
    pass


def _string(s):
    b = s.encode()
    return struct.pack(">i", len(b)) + b


class Session:
    def __init__(self, server, timeout=5.0):
        host, port = server.rsplit(":", 1)
        if "/" in port:
            raise ZkError("no chroot here; give full paths instead: " + server)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock.settimeout(timeout)
        self.xid = 0
        # ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly
        req = struct.pack(">iqiq", 0, 0, 10000, 0) + struct.pack(">i", 16) + b"\0" * 16 + b"\0"
        self._send(req)
        resp = self._recv()
        if len(resp) < 20:
            raise ZkError("short ConnectResponse")
        _, _, session_id = struct.unpack_from(">iiq", resp, 0)
        if session_id == 0:
            raise ZkError("session refused")

    def _send(self, payload):
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def _recvn(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ZkError("connection closed by server")
            out += chunk
        return out

    def _recv(self):
        (n,) = struct.unpack(">i", self._recvn(4))
        if n < 0 or n > 64 * 1024 * 1024:
            raise ZkError("bad frame length %d" % n)
        return self._recvn(n)

    def call(self, op, body):
        self.xid += 1
        self._send(struct.pack(">ii", self.xid, op) + body)
        while True:
            resp = self._recv()
            xid, _zxid, err = struct.unpack_from(">iqi", resp, 0)
            if xid in (-1, -2):  # watch event or ping reply
                continue
            if xid != self.xid:
                raise ZkError("xid mismatch %d != %d" % (xid, self.xid))
            if err == ERR_NONODE:
                raise NoNode()
            if err != 0:
                raise ZkError("ZooKeeper error %d" % err)
            return resp[16:]

    @staticmethod
    def _stat(b, off):
        f = struct.unpack_from(">qqqqiiiqiiq", b, off)
        keys = ["czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
                "ephemeralOwner", "dataLength", "numChildren", "pzxid"]
        return dict(zip(keys, f))

    def get(self, path):
        b = self.call(OP_GETDATA, _string(path) + b"\0")
        (n,) = struct.unpack_from(">i", b, 0)
        data = b"" if n < 0 else b[4:4 + n]
        return data, self._stat(b, 4 + max(n, 0))

    def set(self, path, data, version=-1):
        """Replace the node's data (at @version, -1 for any); returns the new Stat."""
        b = self.call(OP_SETDATA, _string(path) + struct.pack(">i", len(data)) + data +
                      struct.pack(">i", version))
        return self._stat(b, 0)

    def create(self, path, data):
        """A persistent node with the open ACL (world:anyone, all permissions)."""
        acl = struct.pack(">ii", 1, 31) + _string("world") + _string("anyone")
        self.call(OP_CREATE, _string(path) + struct.pack(">i", len(data)) + data + acl +
                  struct.pack(">i", 0))

    def exists(self, path):
        try:
            b = self.call(OP_EXISTS, _string(path) + b"\0")
        except NoNode:
            return None
        return self._stat(b, 0)

    def children(self, path):
        b = self.call(OP_GETCHILDREN, _string(path) + b"\0")
        (cnt,) = struct.unpack_from(">i", b, 0)
        off, out = 4, []
        for _ in range(cnt):
            (n,) = struct.unpack_from(">i", b, off)
            out.append(b[off + 4:off + 4 + n].decode())
            off += 4 + n
        return sorted(out)

    def close(self):
        try:
            self.xid += 1
            self._send(struct.pack(">ii", self.xid, OP_CLOSE))
            self._recv()
        except (OSError, ZkError):
            pass
        self.sock.close()


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 1
    server, cmd = argv[1], argv[2]
    if cmd == "wait":
        limit = float(argv[3]) if len(argv) > 3 else 30.0
        deadline = time.time() + limit
        last = None
        while time.time() < deadline:
            try:
                Session(server, timeout=2.0).close()
                return 0
            except (OSError, ZkError) as e:
                last = e
                time.sleep(0.2)
        sys.stderr.write("zkq: ZooKeeper at %s not ready after %.0fs: %s\n" % (server, limit, last))
        return 1
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 1
    path = argv[3]
    try:
        zk = Session(server)
        try:
            if cmd == "get":
                data, _ = zk.get(path)
                sys.stdout.write(data.decode(errors="replace") + "\n")
            elif cmd == "stat":
                st = zk.exists(path)
                if st is None:
                    raise NoNode()
                print(json.dumps(st))
            elif cmd == "children":
                for c in zk.children(path):
                    print(c)
            elif cmd == "create" and len(argv) > 4:
                zk.create(path, argv[4].encode())
            elif cmd == "exists":
                if zk.exists(path) is None:
                    raise NoNode()
            else:
                sys.stderr.write("zkq: unknown command %s\n" % cmd)
                return 1
        finally:
            zk.close()
    except NoNode:
        sys.stderr.write("zkq: %s does not exist\n" % path)
        return 2
    except (OSError, ZkError) as e:
        sys.stderr.write("zkq: %s: %s\n" % (server, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
