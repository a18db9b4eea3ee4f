#!/usr/bin/python3
"""AlterPartitionReassignments (API 45) and ListPartitionReassignments (API 46) from the wire.

    reassign.py HOST:PORT alter TOPIC:P=ID,ID,... | TOPIC:P=cancel ...
        prints "top ERROR" and one line "TOPIC PARTITION ERROR" per result, sorted
    reassign.py HOST:PORT list
        prints "top ERROR" and one line "TOPIC PARTITION REPLICAS ADDING REMOVING" per
        reassignment under way (comma-separated ids, "-" for none), sorted
Exit 1 on a protocol error.
"""
import sys

import kwire

API_ALTER, API_LIST = 45, 46


def alter_body(moves):
    """moves: {topic: [(partition, [ids] or None)]}"""
    b = kwire.i32(60000) + kwire.uvarint(len(moves) + 1)
    for topic, parts in sorted(moves.items()):
        b += kwire.compact_string(topic) + kwire.uvarint(len(parts) + 1)
        for p, ids in parts:
            b += kwire.i32(p)
            if ids is None:
                b += kwire.uvarint(0)
            else:
                b += kwire.uvarint(len(ids) + 1) + b"".join(kwire.i32(i) for i in ids)
            b += b"\0"
        b += b"\0"
    return b + b"\0"


def ids(r):
    return [r.i32() for _ in range(r.uvarint() - 1)]


def call(hostport, api, body):
    c = kwire.Conn(hostport, timeout=70)
    try:
        corr = c.send(api, 0, body, flexible_header=True)
        rcorr, resp = c.recv()
    finally:
        c.close()
    if rcorr != corr:
        sys.exit("correlation id %d, expected %d" % (rcorr, corr))
    r = kwire.Reader(resp)
    r.tagged()
    r.i32()  # throttle
    top = r.i16()
    r.compact_string()
    return top, r


def done(r):
    r.tagged()
    if r.remaining():
        raise ValueError("%d bytes left over" % r.remaining())


def main(argv):
    hostport, cmd = argv[1], argv[2]
    out = []
    if cmd == "alter":
        moves = {}
        for arg in argv[3:]:
            tp, target = arg.split("=", 1)
            topic, p = tp.rsplit(":", 1)
            moves.setdefault(topic, []).append(
                (int(p), None if target == "cancel" else [int(i) for i in target.split(",")]))
        top, r = call(hostport, API_ALTER, alter_body(moves))
        for _ in range(r.uvarint() - 1):
            topic = r.compact_string()
            for _ in range(r.uvarint() - 1):
                p, err = r.i32(), r.i16()
                r.compact_string()
                r.tagged()
                out.append("%s %d %d" % (topic, p, err))
            r.tagged()
    else:
        top, r = call(hostport, API_LIST, kwire.i32(60000) + kwire.uvarint(0) + b"\0")
        for _ in range(r.uvarint() - 1):
            topic = r.compact_string()
            for _ in range(r.uvarint() - 1):
                p = r.i32()
                lists = [",".join(map(str, ids(r))) or "-" for _ in range(3)]
                r.tagged()
                out.append("%s %d %s" % (topic, p, " ".join(lists)))
            r.tagged()
    done(r)
    print("top", top)
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main(sys.argv)
