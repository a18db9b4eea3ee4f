#!/usr/bin/env bash
# kcat round trip: 100,000 keyed records with headers into an auto-created 3-partition
# topic and back, byte for byte; every compression codec; records of 300 KB.
. "$(dirname "$0")/lib.sh"
need_cmd kcat
start_zk
start_broker b1 num.partitions=3

# check_roundtrip INPUT OUTPUT HEADERS: OUTPUT lines are "partition<TAB>offset<TAB>key:value<TAB>headers".
check_roundtrip() {
    "$PY" - "$@" <<'EOF'
import collections, sys
inp, outp, headers = sys.argv[1], sys.argv[2], sys.argv[3]
want = open(inp, "rb").read().split(b"\n")[:-1]
got = open(outp, "rb").read().split(b"\n")[:-1]
if len(got) != len(want):
    print("  consumed %d records, produced %d" % (len(got), len(want))); sys.exit(1)
seq = {line: i for i, line in enumerate(want)}
parts = collections.defaultdict(list)
for line in got:
    f = line.split(b"\t")
    if len(f) != 4:
        print("  malformed output line %r" % line[:200]); sys.exit(1)
    p, off, kv, hdr = int(f[0]), int(f[1]), f[2], f[3].decode()
    if kv not in seq:
        print("  consumed a record that was never produced: %r" % kv[:200]); sys.exit(1)
    if hdr != headers:
        print("  record %r has headers %r, expected %r" % (kv[:40], hdr, headers)); sys.exit(1)
    parts[p].append((off, seq[kv]))
if sorted(x for v in parts.values() for _, x in v) != list(range(len(want))):
    print("  the consumed records are not exactly the produced ones (duplicates/missing)"); sys.exit(1)
for p, recs in sorted(parts.items()):
    offs = [o for o, _ in recs]
    if offs != list(range(len(recs))):
        print("  partition %d: offsets are not 0..%d in order" % (p, len(recs) - 1)); sys.exit(1)
    order = [i for _, i in recs]
    if order != sorted(order):
        print("  partition %d: records out of production order" % p); sys.exit(1)
print("  %d records ok, per partition %s" % (len(got), {p: len(v) for p, v in sorted(parts.items())}))
EOF
}

# --- 100,000 keyed records with two headers ----------------------------------------------
in=$SF_TMP/in.txt
"$PY" - "$in" <<'EOF'
import random, sys
rnd = random.Random(2)
alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,;!@#$%^&*()"
with open(sys.argv[1], "w") as f:
    for i in range(100000):
        n = rnd.randrange(0, 200)
        f.write("key-%06d:v%06d-%s\n" % (i, i, "".join(rnd.choice(alphabet) for _ in range(n))))
EOF
log "producing 100,000 records"
kc -P -t roundtrip -K: -H h1=v1 -H "h2=second header" -X linger.ms=5 <"$in" ||
    fail "kcat producer exited with status $?"
log "consuming them back"
kc -C -t roundtrip -o beginning -e -q -f '%p\t%o\t%k:%s\t%h\n' >"$SF_TMP/out.txt" ||
    fail "kcat consumer exited with status $?"
check_roundtrip "$in" "$SF_TMP/out.txt" "h1=v1,h2=second header" || fail "100,000-record round trip differs"
zk get /streamflow/brokers/topics/roundtrip >/dev/null || fail "auto-created topic not in ZooKeeper"
broker_alive b1

# --- every compression codec -------------------------------------------------------------
for codec in gzip snappy lz4 zstd; do
    in=$SF_TMP/in-$codec.txt
    "$PY" -c 'import sys
for i in range(3000): print("k%05d:%s-%05d-%s" % (i, sys.argv[1], i, "compressible " * (i % 20)))' "$codec" >"$in"
    kc -P -t "rt-$codec" -K: -H codec="$codec" -z "$codec" -X linger.ms=20 <"$in" ||
        fail "kcat producer ($codec) exited with status $?"
    kc -C -t "rt-$codec" -o beginning -e -q -f '%p\t%o\t%k:%s\t%h\n' >"$SF_TMP/out-$codec.txt" ||
        fail "kcat consumer ($codec) exited with status $?"
    check_roundtrip "$in" "$SF_TMP/out-$codec.txt" "codec=$codec" || fail "$codec round trip differs"
    log "$codec ok"
done

# --- large records -----------------------------------------------------------------------
in=$SF_TMP/in-large.txt
"$PY" -c 'import random
r = random.Random(5)
for i in range(8): print("big%d:%s" % (i, "".join(r.choice("abcdefghij") for _ in range(300000))))' >"$in"
kc -P -t rt-large -K: -H big=yes <"$in" || fail "kcat producer (large) exited with status $?"
kc -C -t rt-large -o beginning -e -q -f '%p\t%o\t%k:%s\t%h\n' >"$SF_TMP/out-large.txt" ||
    fail "kcat consumer (large) exited with status $?"
check_roundtrip "$in" "$SF_TMP/out-large.txt" "big=yes" || fail "large-record round trip differs"
broker_alive b1
pass
