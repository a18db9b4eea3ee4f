#!/usr/bin/env bash
# Admin requests at their limits: a manual assignment naming a partition twice is refused
# (INVALID_REPLICA_ASSIGNMENT); duplicate topic names, config keys and resources are each
# flagged; requests with 200,000 topics or config keys and 60,000 resources get a full answer
# (no quadratic work on the event loop, no answer array lost to the request arena).
. "$(dirname "$0")/lib.sh"
start_zk
start_broker b1 num.partitions=1
cd "$SF_TEST_DIR"
"$PY" - "$BOOTSTRAP" <<'PYEOF' || fail "rvnet checks"
import struct, sys, time
import kwire
from kwire import i16, i32, string
c = kwire.Conn(sys.argv[1], timeout=60)
deadline = time.time() + 20
while True:
    _, _, topics = kwire.metadata_v1(c, ["rv-base"])
    err, parts = topics.get("rv-base", (-1, {}))
    if err == 0 and 0 in parts and parts[0][0] >= 0:
        break
    if time.time() > deadline: sys.exit("no leader")
    time.sleep(0.2)

def arr(items): return i32(len(items)) + b"".join(items)
def ct_topic(name, np, rf, assigns=(), cfgs=()):
    return (string(name) + i32(np) + i16(rf)
            + arr([i32(p) + arr([i32(b) for b in bs]) for p, bs in assigns])
            + arr([string(k) + string(v) for k, v in cfgs]))
def create(topics, validate=False, v=2):
    body = arr(topics) + i32(5000) + (b"\x01" if validate else b"\x00")
    corr = c.send(19, v, body); rc, r = c.recv(); assert rc == corr
    n, = struct.unpack(">i", r[4:8]); pos = 8; out = []
    for _ in range(n):
        l, = struct.unpack(">h", r[pos:pos+2]); name = r[pos+2:pos+2+l].decode(); pos += 2 + l
        e, ml = struct.unpack(">hh", r[pos:pos+4]); pos += 4
        msg = r[pos:pos+ml].decode() if ml >= 0 else None; pos += max(ml, 0)
        out.append((name, e, msg))
    return out

# duplicate partition index in a manual assignment: rejected (39), not partition 1 on broker 0
r = create([ct_topic("rv-dup-part", -1, -1, [(0, [1]), (0, [1])])])
print(r); assert r[0][1] == 39, r
r = create([ct_topic("rv-ok-assign", -1, -1, [(1, [1]), (0, [1])])], validate=True)
print(r); assert r[0][1] == 0, r
# duplicate topic names: both INVALID_REQUEST; the third is fine
r = create([ct_topic("rv-a", 1, 1), ct_topic("rv-b", 1, 1), ct_topic("rv-a", 1, 1)], validate=True)
print(r); assert [e for _, e, _ in r] == [42, 0, 42], r
# many distinct names, validate only: answered quickly
N = 200000
t0 = time.time()
r = create([ct_topic("rv-many-%d" % i, 1, 1) for i in range(N)] + [ct_topic("rv-many-7", 1, 1)], validate=True)
took = time.time() - t0
print("create %d: %.1fs" % (N, took))
assert len(r) == N + 1 and r[7][1] == 42 and r[N][1] == 42 and r[8][1] == 0, (r[7], r[8], r[N])

def alter(resources, v=0):
    body = arr([bytes([t]) + string(n) + arr([string(k) + (string(val) if val is not None else i16(-1)) for k, val in cfgs])
                for t, n, cfgs in resources]) + b"\x00"
    corr = c.send(33, v, body); rc, r = c.recv(); assert rc == corr
    n, = struct.unpack(">i", r[4:8]); pos = 8; out = []
    for _ in range(n):
        e, ml = struct.unpack(">hh", r[pos:pos+4]); pos += 4
        msg = r[pos:pos+ml].decode() if ml >= 0 else None; pos += max(ml, 0)
        t = r[pos]; pos += 1
        l, = struct.unpack(">h", r[pos:pos+2]); name = r[pos+2:pos+2+l].decode(); pos += 2 + l
        out.append((e, msg, t, name))
    return out
M = 200000
t0 = time.time()
r = alter([(2, "rv-base", [("x%d" % i, "1") for i in range(M)] + [("x5", "2")])])
print("alter %d: %.1fs %r" % (M, time.time() - t0, r))
assert r[0][0] == 42 and "x5 is named more than once" in r[0][1], r
r = alter([(2, "rv-base", [("retention.ms", "1000"), ("flush.ms", "5"), ("retention.ms", "3")])])
print(r); assert r[0][0] == 42 and "retention.ms is named more than once" in r[0][1], r
M = 60000
t0 = time.time()
r = alter([(2, "rv-r%d" % i, []) for i in range(M)] + [(2, "rv-r3", []), (4, "rv-r3", [])])
print("alter resources %d: %.1fs, %d answers" % (M, time.time() - t0, len(r)))
assert r[3][0] == 42 and r[M][0] == 42 and "more than once" in r[3][1] and r[4][0] == 3, (r[3], r[4], r[M])
assert "more than once" not in r[M + 1][1], r[M + 1]
print("ok")
PYEOF
broker_alive b1
pass
