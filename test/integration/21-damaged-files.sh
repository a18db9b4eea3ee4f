#!/usr/bin/env bash
# Damaged files and many segments. Every batch is its own segment (log.segment.bytes=14):
#   - 2,500 segments restart under a soft open-files limit of 256 (the descriptor cache keeps
#     older segments closed): the broker accepts connections and serves every record;
#   - .timeindex files deleted or emptied on closed segments are rebuilt: 20 timestamp
#     lookups give the exact offsets;
#   - a zeroed batch header at the tail of a log is cut at startup, with one log line naming
#     the file and the position; the records before it stay, new ones take its offsets;
#   - a zeroed batch header mid-log takes that partition offline: Produce, Fetch and
#     ListOffsets answer KAFKA_STORAGE_ERROR (56), the log line appears once however often
#     clients ask, no file changes, and the other partition of the topic keeps working.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
start_broker b1 log.segment.bytes=14 log.level=notice
cd "$SF_TEST_DIR"
data=$(broker_datadir b1)
export BOOTSTRAP

# produce TOPIC PARTITION COUNT TAG FLUSH_EVERY: acknowledged "offset value" lines to stdout.
produce() {
    "$PY" - "$BOOTSTRAP" "$@" <<'EOF' || fail "producing to $1-$2"
import sys
from sftest import produce
bs, topic, tag = sys.argv[1], sys.argv[2], sys.argv[5]
part, n, every = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[6])
recs = [(None, b"%s%05d" % (tag.encode(), i), None, part, 1700000000000 + i * 1000)
        for i in range(n)]
for (p, off, i) in produce(bs, topic, recs, extra={"linger.ms": 0}, flush_every=every):
    print("%d %s%05d" % (off, tag, i))
EOF
}

# check_log TOPIC PARTITION EXPECTED_FILE WHAT: the partition holds exactly those records.
check_log() {
    "$PY" - "$BOOTSTRAP" "$1" "$2" >"$SF_TMP/got.txt" <<'EOF' || fail "$4: consuming $1-$2"
import sys
from sftest import consume_all
out = consume_all(sys.argv[1], sys.argv[2], partitions=[int(sys.argv[3])])
for m in out[int(sys.argv[3])]:
    print("%d %s" % (m.offset(), m.value().decode()))
EOF
    if ! cmp -s "$3" "$SF_TMP/got.txt"; then
        diff "$3" "$SF_TMP/got.txt" | head -n 6 | sed 's/^/    /'
        fail "$4: $1-$2 does not hold the $(wc -l <"$3") acknowledged records"
    fi
    log "$4: $1-$2 holds its $(wc -l <"$3") acknowledged records"
}

# wire OP TOPIC PARTITION: the error code of one raw request (Fetch v4 / ListOffsets v1).
wire() {
    "$PY" - "$BOOTSTRAP" "$@" <<'EOF'
import sys
import kwire
from kwire import i8, i16, i32, i64, string
bs, op, topic, part = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = kwire.Conn(bs)
if op == "fetch":
    body = (i32(-1) + i32(0) + i32(1) + i32(1 << 20) + i8(0) + i32(1) + string(topic) + i32(1)
            + i32(part) + i64(0) + i32(1 << 20))
    c.send(kwire.API_FETCH, 4, body)
    r = kwire.Reader(c.recv()[1])
    r.i32(), r.i32(), r.string(), r.i32()
    assert r.i32() == part
    print(r.i16())
else:
    c.send(2, 1, i32(-1) + i32(1) + string(topic) + i32(1) + i32(part) + i64(-2))
    r = kwire.Reader(c.recv()[1])
    r.i32(), r.string(), r.i32()
    assert r.i32() == part
    print(r.i16())
EOF
}

# --- data: many segments, a tail topic, a two-partition topic --------------------------
"$PY" - "$BOOTSTRAP" <<'EOF' || fail "creating topics"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
from sftest import base_conf, partitions_of
a = AdminClient(base_conf(sys.argv[1]))
topics = [NewTopic("many", 1, 1), NewTopic("tailz", 1, 1), NewTopic("mid", 2, 1)]
for f in a.create_topics(topics).values():
    f.result(30)
for t in ("many", "tailz", "mid"):
    partitions_of(sys.argv[1], t)
EOF
produce many 0 2500 m 1 >"$SF_TMP/many.txt"
produce tailz 0 30 t 10 >"$SF_TMP/tailz.txt"
for p in 0 1; do produce mid $p 60 "p$p" 10 >"$SF_TMP/mid$p.txt"; done
nseg=$(find "$data/many-0" -name '*.log' | wc -l)
((nseg >= 2500)) || fail "many-0 has $nseg segments, expected one per record"
log "many-0 has $nseg segments"
stop_broker b1

# --- damage, with the broker stopped ------------------------------------------------------
segs=("$data"/many-0/*.log)
for i in $(seq 100 109); do rm -f "${segs[$i]%.log}.timeindex"; done
for i in $(seq 1200 1209); do : >"${segs[$i]%.log}.timeindex"; done
zero_header() { dd if=/dev/zero of="$1" bs=1 seek="$2" count=61 conv=notrunc status=none; }
tail_seg=$(find "$data/tailz-0" -name '*.log' | sort | tail -n 1)
tail_base=$((10#$(basename "$tail_seg" .log)))
zero_header "$tail_seg" 0
mid_segs=("$data"/mid-0/*.log)
mid_seg=${mid_segs[2]}
zero_header "$mid_seg" 0
mid_sum=$(cat "$data"/mid-0/*.log | md5sum)

# --- restart with few descriptors ---------------------------------------------------------
hard=$(ulimit -Hn)
ulimit -Sn 256
start_broker b1
ulimit -Sn "$hard"
blog=$(broker_log b1)
fds=$(ls "/proc/$(broker_pid b1)/fd" | wc -l)
((fds < 256)) || fail "the broker holds $fds descriptors"
log "restarted with 2,500+ segments under ulimit -n 256: $fds descriptors open"
check_log many 0 "$SF_TMP/many.txt" "many segments, after a restart"
grep -q "Too many open files" "$blog" && fail "the broker ran out of descriptors"
fds=$(ls "/proc/$(broker_pid b1)/fd" | wc -l)
((fds < 256)) || fail "the broker holds $fds descriptors after reading every segment"

# Timestamp lookups: record i has timestamp 1700000000000 + i*1000; ask for i*1000 - 500.
"$PY" - "$BOOTSTRAP" <<'EOF' || fail "timestamp lookups after rebuilding time indexes"
import sys
from confluent_kafka import Consumer, TopicPartition
from sftest import base_conf, check
c = Consumer(base_conf(sys.argv[1], {"group.id": "ts"}))
idx = [1, 50, 99, 100, 101, 104, 105, 109, 110, 111, 500, 1199, 1200, 1201, 1205, 1209, 1210,
       1211, 2000, 2499]
got = [c.offsets_for_times([TopicPartition("many", 0, 1700000000000 + i * 1000 - 500)],
                           timeout=20)[0].offset for i in idx]
bad = [(i, g) for i, g in zip(idx, got) if g != i]
check(not bad, "lookups that went wrong (record, answer): %s" % bad)
c.close()
EOF
log "20 timestamp lookups exact after deleted and empty .timeindex files"

# --- tail damage: cut, one line, earlier records kept -------------------------------------
n=$(grep -c "$(basename "$tail_seg"): .* at position 0; truncating" "$blog")
assert_eq 1 "$n" "log lines about the cut tail of $tail_seg"
awk -v n="$tail_base" '$1 < n' "$SF_TMP/tailz.txt" >"$SF_TMP/tailz.kept"
check_log tailz 0 "$SF_TMP/tailz.kept" "zeroed header at the tail"
produce tailz 0 5 u 5 >>"$SF_TMP/tailz.kept"
assert_eq "$tail_base" "$(grep ' u00000$' "$SF_TMP/tailz.kept" | cut -d' ' -f1)" \
    "offset of the first record after the cut"
check_log tailz 0 "$SF_TMP/tailz.kept" "appended after the cut"

# --- mid-log damage: offline, KAFKA_STORAGE_ERROR, one line -------------------------------
assert_eq 56 "$(wire fetch mid 0)" "Fetch error code on the damaged partition"
assert_eq 56 "$(wire listoffsets mid 0)" "ListOffsets error code on the damaged partition"
"$PY" - "$BOOTSTRAP" <<'EOF' || fail "producing to the damaged partition"
import sys
from confluent_kafka import Producer, KafkaError
from sftest import base_conf, check
errs = []
p = Producer(base_conf(sys.argv[1], {"retries": 0, "enable.idempotence": False, "acks": 1,
                                     "message.timeout.ms": 10000}))
p.produce("mid", b"x", partition=0, on_delivery=lambda e, m: errs.append(e))
p.flush(15)
check(len(errs) == 1 and errs[0] is not None
      and errs[0].code() == KafkaError.KAFKA_STORAGE_ERROR, "delivery result: %s" % errs)
EOF
# A consumer that keeps asking for a few seconds.
"$PY" - "$BOOTSTRAP" <<'EOF'
import sys, time
from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
from sftest import base_conf
c = Consumer(base_conf(sys.argv[1], {"group.id": "mid", "enable.auto.commit": False}))
c.assign([TopicPartition("mid", 0, OFFSET_BEGINNING)])
end = time.time() + 4
while time.time() < end:
    c.poll(0.2)
c.close()
EOF
for i in 1 2 3; do wire fetch mid 0 >/dev/null; done
n=$(grep -c "mid-0: partition offline" "$blog")
assert_eq 1 "$n" "log lines about the offline partition"
grep "mid-0: partition offline" "$blog" | grep -q "$(basename "$mid_seg")" ||
    fail "the offline line does not name $(basename "$mid_seg")"
assert_eq "$mid_sum" "$(cat "$data"/mid-0/*.log | md5sum)" "mid-0 segment files after going offline"
assert_eq 0 "$(wire fetch mid 1)" "Fetch error code on the other partition"
check_log mid 1 "$SF_TMP/mid1.txt" "the other partition"
produce mid 1 5 q 5 >>"$SF_TMP/mid1.txt"
check_log mid 1 "$SF_TMP/mid1.txt" "the other partition after an append"
broker_alive b1
stop_broker b1
pass
