"""Floods for 20-memory-bounds.sh: each command floods a broker, samples its resident memory
(VmRSS) while the flood holds, checks that a fresh client is still served, and exits non-zero
with a message when a bound is broken.

  frames HOST:PORT PID CONNS FRAME_BYTES SEND_BYTES MAX_RSS_MB [TLS_HOST:PORT CAFILE]
      CONNS connections each announce a FRAME_BYTES request and send SEND_BYTES of it (over
      TLS to the second address when given; the fresh client uses the first).
  metadata HOST:PORT PID CONNS REQUESTS MAX_RSS_MB
      CONNS connections each pipeline REQUESTS Metadata (all topics) and read nothing.
  create-topics HOST:PORT COUNT PREFIX
      COUNT topics with one partition, named PREFIX + a long suffix (large Metadata answers).
  conn-limits HOST:PORT
      max.connections=6, max.connections.per.ip=4 and the override 127.0.0.2:1 (see the test).
  fd-limit HOST:PORT PID
      Lowers the broker's descriptor limit to a few more than it has open, connects past it,
      checks the broker stays idle and serves the others, then restores the limit.
"""
import os
import resource
import socket
import ssl
import struct
import sys
import threading
import time

import kwire


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


class Sampler(threading.Thread):
    """The largest VmRSS of @pid seen while running."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.max_kb, self.stop = pid, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.max_kb = max(self.max_kb, rss_kb(self.pid))
            time.sleep(0.05)

    def done(self):
        self.stop.set()
        self.join()
        self.max_kb = max(self.max_kb, rss_kb(self.pid))
        return self.max_kb


def served(hostport, what):
    """A fresh client gets ApiVersions and Metadata answered."""
    c = kwire.Conn(hostport, timeout=15)
    try:
        err, apis = kwire.apiversions(c)
        if err != 0 or not apis:
            sys.exit("%s: ApiVersions error %d" % (what, err))
        brokers, _, _ = kwire.metadata_v1(c, [])
        if not brokers:
            sys.exit("%s: Metadata lists no broker" % what)
    except (kwire.Timeout, kwire.Closed) as e:
        sys.exit("%s: a fresh client is not served: %s" % (what, e))
    finally:
        c.close()
    print("  %s: a fresh client is served" % what)


def blast(sock, data, total, sent, i):
    """Send @total bytes (@data over and over) until done or the peer stops reading; the count
    goes to sent[@i]."""
    view = memoryview(data)
    try:
        while sent[i] < total:
            off = sent[i] % len(data)
            sent[i] += sock.send(view[off: off + min(len(data) - off, total - sent[i])])
    except (socket.timeout, OSError):
        pass  # the broker stopped reading (or closed): that is the point


def connect(host, port, rcvbuf=None, cafile=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(3)
    s.connect((host, port))
    if cafile:
        s = ssl.create_default_context(cafile=cafile).wrap_socket(s, server_hostname=host)
        s.settimeout(3)
    return s


def cmd_frames(hostport, pid, conns, frame, send, max_mb, tls=None, cafile=None):
    host, port = kwire.parse_hostport(tls or hostport)
    base = rss_kb(pid)
    sampler = Sampler(pid)
    sampler.start()
    socks, threads, sent = [], [], [0] * conns
    # ApiVersions header, then zeros: nothing is parsed before the frame is complete.
    head = struct.pack(">ihhi", frame, 18, 0, 1) + kwire.string("flood")
    chunk = b"\0" * (1 << 20)
    for i in range(conns):
        s = connect(host, port, cafile=cafile)
        s.sendall(head)
        socks.append(s)
        t = threading.Thread(target=blast, args=(s, chunk, send - len(head), sent, i), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    time.sleep(1.0)  # what the broker took is in its buffers now
    served(hostport, "frames")
    peak = sampler.done()
    total = sum(sent) + conns * len(head)
    print("  frames%s: %d connections sent %.0f MB of %d-byte frames; broker RSS %d MB before, "
          "%d MB at most during" % (" over TLS" if tls else "", conns, total / 1e6, frame, base // 1024, peak // 1024))
    for s in socks:
        s.close()
    if peak > max_mb * 1024:
        sys.exit("frames: broker RSS reached %d MB (bound %d MB)" % (peak // 1024, max_mb))


def cmd_metadata(hostport, pid, conns, requests, max_mb):
    host, port = kwire.parse_hostport(hostport)
    base = rss_kb(pid)
    sampler = Sampler(pid)
    sampler.start()
    probe = kwire.Conn(hostport)
    req, _ = probe.frame(kwire.API_METADATA, 1, kwire.i32(-1), corr=7)
    probe.send_raw(req)
    _, one = probe.recv()
    probe.close()
    socks, threads, sent = [], [], [0] * conns
    for i in range(conns):
        s = connect(host, port, rcvbuf=4096)  # the answers stay on the broker
        socks.append(s)
        t = threading.Thread(target=blast, args=(s, req * requests, len(req) * requests, sent, i),
                             daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    time.sleep(2.0)
    served(hostport, "metadata")
    peak = sampler.done()
    asked = sum(sent) // len(req)
    print("  metadata: %d connections pipelined %d requests for %d-byte answers (%.0f MB); broker "
          "RSS %d MB before, %d MB at most during" % (conns, asked, len(one), asked * len(one) / 1e6,
                                                     base // 1024, peak // 1024))
    for s in socks:
        s.close()
    if peak > max_mb * 1024:
        sys.exit("metadata: broker RSS reached %d MB (bound %d MB)" % (peak // 1024, max_mb))


def cmd_create_topics(hostport, count, prefix):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": hostport, "broker.address.family": "v4"})
    names = ["%s%03d-%s" % (prefix, i, "x" * 200) for i in range(count)]
    futs = admin.create_topics([NewTopic(n, 1, 1) for n in names], request_timeout=60)
    for n, f in futs.items():
        f.result(60)
    print("  created %d topics" % count)


def connect_from(hostport, src):
    host, port = kwire.parse_hostport(hostport)
    s = socket.create_connection((host, port), timeout=5, source_address=(src, 0))
    c = kwire.Conn.__new__(kwire.Conn)
    c.sock, c.corr = s, 0
    return c


def answered(c):
    try:
        err, _ = kwire.apiversions(c)
        return err == 0
    except (kwire.Timeout, kwire.Closed, OSError):
        return False


def open_ok(hostport, src, what):
    """A connection from @src that is served (retried: the broker counts closes after they
    reach it)."""
    for _ in range(50):
        c = connect_from(hostport, src)
        if answered(c):
            return c
        c.close()
        time.sleep(0.1)
    sys.exit("conn-limits: %s: refused" % what)


def refused(hostport, src, what):
    c = connect_from(hostport, src)
    c.sock.settimeout(5)
    if answered(c):
        sys.exit("conn-limits: %s: served, expected to be closed at accept" % what)
    c.close()
    print("  %s: closed at accept" % what)


def cmd_conn_limits(hostport):
    # max.connections=6, max.connections.per.ip=4, max.connections.per.ip.overrides=127.0.0.2:1
    held = [open_ok(hostport, "127.0.0.1", "connection %d from 127.0.0.1" % i) for i in range(4)]
    refused(hostport, "127.0.0.1", "5th connection from 127.0.0.1 (max.connections.per.ip=4)")
    held.append(open_ok(hostport, "127.0.0.2", "connection from 127.0.0.2"))
    refused(hostport, "127.0.0.2", "2nd connection from 127.0.0.2 (override 127.0.0.2:1)")
    held.append(open_ok(hostport, "127.0.0.3", "connection from 127.0.0.3"))
    refused(hostport, "127.0.0.4", "7th connection (max.connections=6)")
    refused(hostport, "127.0.0.5", "8th connection (max.connections=6)")
    for i, c in enumerate(held):
        if not answered(c):
            sys.exit("conn-limits: established connection %d is no longer served" % i)
    print("  the 6 established connections are still served")
    held.pop(0).close()
    held.append(open_ok(hostport, "127.0.0.1", "a connection after one closed"))
    print("  after one closed, a new one is served")
    for c in held:
        c.close()


def cmd_fd_limit(hostport, pid):
    host, port = kwire.parse_hostport(hostport)
    old = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    # Connections of earlier floods may still be closing: wait for the count to settle.
    nfds, deadline = -1, time.time() + 20
    while time.time() < deadline:
        n = len(os.listdir("/proc/%d/fd" % pid))
        if n == nfds:
            break
        nfds = n
        time.sleep(1.0)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (nfds + 3, old[1]))
    try:
        conns = []
        for _ in range(12):
            s = socket.create_connection((host, port), timeout=5)
            c = kwire.Conn.__new__(kwire.Conn)
            c.sock, c.corr = s, 0
            conns.append(c)
        time.sleep(0.5)
        cpu0 = cpu_seconds(pid)
        t0 = time.time()
        ok, stuck = [], []
        for c in conns:
            c.sock.settimeout(0.5 if ok else 5)
            (ok if answered(c) else stuck).append(c)
        time.sleep(max(0.0, 4.0 - (time.time() - t0)))
        cpu = cpu_seconds(pid) - cpu0
        elapsed = time.time() - t0
        print("  descriptor limit %d (%d open): %d connections served, %d waiting; broker used "
              "%.2fs of CPU in %.1fs" % (nfds + 3, nfds, len(ok), len(stuck), cpu, elapsed))
        if not ok or not stuck:
            sys.exit("fd-limit: expected some connections served and some not accepted")
        # A broker spinning on accept burns a whole core.
        if cpu > elapsed / 4:
            sys.exit("fd-limit: the broker used %.2fs of CPU in %.1fs at its descriptor limit"
                     % (cpu, elapsed))
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, old)
    for c in ok:
        c.close()
    # Accepting resumes (the backoff is at most 5 s); the waiting connections get answers.
    for c in stuck:
        c.sock.settimeout(15)
        try:
            c.recv()  # the answer to the ApiVersions sent while it waited
        except (kwire.Timeout, kwire.Closed, OSError) as e:
            sys.exit("fd-limit: a connection left waiting was not served after the limit was "
                     "raised: %s" % e)
        c.close()
    print("  after the limit was raised, the %d waiting connections were served" % len(stuck))


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "frames":
        cmd_frames(args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4]), int(args[5]),
                   *args[6:8])
    elif cmd == "metadata":
        cmd_metadata(args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4]))
    elif cmd == "create-topics":
        cmd_create_topics(args[0], int(args[1]), args[2])
    elif cmd == "conn-limits":
        cmd_conn_limits(args[0])
    elif cmd == "fd-limit":
        cmd_fd_limit(args[0], int(args[1]))
    else:
        sys.exit("unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
