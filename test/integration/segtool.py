#!/usr/bin/python3
"""Inspect a partition's .log segment (record batches v2, as produced).

    segtool.py FILE          print "batches=N last_base=B last_count=C last_pos=P size=S end_offset=E"
    segtool.py FILE check    also verify every batch (length, magic 2, CRC32C, offsets
                             contiguous) and that the file ends exactly after the last batch
    segtool.py FILE flip N   flip the bits of the byte N bytes before the end of the last
                             batch's records (a CRC error inside the newest batch)
Exit 1 with a reason if the file is not a clean sequence of batches (check) or unreadable.
"""
import struct
import sys

_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def batches(data, strict):
    pos, out, expect = 0, [], None
    while pos + 12 <= len(data):
        base, blen = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + blen
        if blen < 49 or end > len(data):
            if strict:
                raise ValueError("torn batch at byte %d (length %d, file %d)" % (pos, blen, len(data)))
            break
        magic = data[pos + 16]
        crc, = struct.unpack_from(">I", data, pos + 17)
        last_delta, = struct.unpack_from(">i", data, pos + 23)
        count, = struct.unpack_from(">i", data, pos + 57)
        if strict:
            if magic != 2:
                raise ValueError("batch at byte %d has magic %d" % (pos, magic))
            if crc32c(data[pos + 21:end]) != crc:
                raise ValueError("batch at byte %d fails its CRC" % pos)
            if last_delta + 1 != count:
                raise ValueError("batch at byte %d: lastOffsetDelta %d, %d records" % (pos, last_delta, count))
            if expect is not None and base != expect:
                raise ValueError("batch at byte %d has base offset %d, expected %d" % (pos, base, expect))
        out.append((pos, base, count, end))
        expect = base + last_delta + 1
        pos = end
    if strict and pos != len(data):
        raise ValueError("%d stray bytes after the last batch (byte %d)" % (len(data) - pos, pos))
    return out


def main(argv):
    path = argv[1]
    data = open(path, "rb").read()
    mode = argv[2] if len(argv) > 2 else "info"
    try:
        bs = batches(data, mode == "check")
    except ValueError as e:
        print("segtool: %s: %s" % (path, e))
        return 1
    if not bs:
        print("batches=0 last_base=-1 last_count=0 last_pos=0 size=%d end_offset=-1" % len(data))
        return 0
    pos, base, count, end = bs[-1]
    if mode == "flip":
        n = int(argv[3])
        b = bytearray(data)
        b[end - n] ^= 0xFF
        open(path, "r+b").write(bytes(b))
        return 0
    print("batches=%d last_base=%d last_count=%d last_pos=%d size=%d end_offset=%d"
          % (len(bs), base, count, pos, len(data), base + count))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
