#!/usr/bin/python3
"""ElectLeaders (API 43) from the wire, for the preferred-leader tests.

    elect_leaders.py HOST:PORT VERSION TYPE all             every partition (a null list)
    elect_leaders.py HOST:PORT VERSION TYPE TOPIC:P[,P...]  the partitions named
TYPE 0 is a preferred election, 1 an unclean one (v1+). Prints "top ERROR" and then one line
"TOPIC PARTITION ERROR" per result, sorted. Exit 1 on a protocol error.
"""
import sys

import kwire

API_ELECT_LEADERS = 43


def body(version, etype, parts):
    """parts: None (all) or [(topic, [partition, ...])]."""
    flex = version >= 2
    b = kwire.i8(etype) if version >= 1 else b""
    if parts is None:
        b += kwire.uvarint(0) if flex else kwire.i32(-1)
    else:
        b += kwire.uvarint(len(parts) + 1) if flex else kwire.i32(len(parts))
        for topic, ps in parts:
            b += kwire.compact_string(topic) if flex else kwire.string(topic)
            b += kwire.uvarint(len(ps) + 1) if flex else kwire.i32(len(ps))
            b += b"".join(kwire.i32(p) for p in ps)
            if flex:
                b += b"\0"
    b += kwire.i32(30000)
    return b + (b"\0" if flex else b"")


def parse(version, resp):
    flex = version >= 2
    r = kwire.Reader(resp)
    if flex:
        r.tagged()
    r.i32()  # throttle
    top = r.i16() if version >= 1 else 0
    out = []
    for _ in range(r.uvarint() - 1 if flex else r.i32()):
        topic = r.compact_string() if flex else r.string()
        for _ in range(r.uvarint() - 1 if flex else r.i32()):
            p, err = r.i32(), r.i16()
            r.compact_string() if flex else r.string()
            if flex:
                r.tagged()
            out.append((topic, p, err))
        if flex:
            r.tagged()
    if flex:
        r.tagged()
    if r.remaining():
        raise ValueError("%d bytes left over" % r.remaining())
    return top, sorted(out)


def main(argv):
    hostport, version, etype, what = argv[1], int(argv[2]), int(argv[3]), argv[4]
    parts = None
    if what != "all":
        topic, ps = what.rsplit(":", 1)
        parts = [(topic, [int(p) for p in ps.split(",")])]
    c = kwire.Conn(hostport, timeout=40)
    try:
        corr = c.send(API_ELECT_LEADERS, version, body(version, etype, parts),
                      flexible_header=version >= 2)
        rcorr, resp = c.recv()
    finally:
        c.close()
    if rcorr != corr:
        sys.exit("correlation id %d, expected %d" % (rcorr, corr))
    top, results = parse(version, resp)
    print("top", top)
    for t, p, e in results:
        print(t, p, e)


if __name__ == "__main__":
    main(sys.argv)
