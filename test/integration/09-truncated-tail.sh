#!/usr/bin/env bash
# Damaged segment tails: 7 bytes cut off the newest batch (after a clean stop), a tail cut
# inside the batch header (after kill -9), 4 KiB of zeros appended, and a flipped byte in the
# newest batch (CRC error). Each time, after a restart, exactly the records before the damaged
# batch are served, new records get the next offsets, and the segment on disk is a clean
# sequence of valid batches again.
. "$(dirname "$0")/lib.sh"
need_cmd kcat
need_py confluent_kafka
start_zk
start_broker b1
cd "$SF_TEST_DIR"
expected=$SF_TMP/expected.txt # "offset value" lines the partition must hold
: >"$expected"

# produce TAG COUNT: COUNT records "TAG00000".. in batches of ~10, appended to $expected
# at the offsets the broker acknowledged.
produce() {
    "$PY" - "$BOOTSTRAP" "$1" "$2" >>"$expected" <<'EOF' || fail "producing $1"
import sys
from sftest import produce
tag, n = sys.argv[2], int(sys.argv[3])
reps = produce(sys.argv[1], "tail", [(None, b"%s%05d" % (tag.encode(), i), None, 0, None) for i in range(n)],
               extra={"linger.ms": 50}, flush_every=10)
for (p, off, i) in reps:
    print("%d %s%05d" % (off, tag, i))
EOF
}

# check_log WHAT: the partition holds exactly $expected.
check_log() {
    kc -C -t tail -p 0 -o beginning -e -q -f '%o %s\n' >"$SF_TMP/got.txt" || fail "$1: kcat consumer failed"
    if ! cmp -s "$expected" "$SF_TMP/got.txt"; then
        echo "  expected $(wc -l <"$expected") records, got $(wc -l <"$SF_TMP/got.txt"); first difference:"
        diff "$expected" "$SF_TMP/got.txt" | head -n 6 | sed 's/^/    /'
        fail "$1: the partition does not hold the expected records"
    fi
    log "$1: $(wc -l <"$expected") records as expected"
}

segment() { find "$(broker_datadir b1)/tail-0" -name '*.log' | sort | tail -n 1; }
seginfo() { "$PY" segtool.py "$(segment)"; }
field() { sed -n "s/.*\b$1=\([-0-9]*\).*/\1/p" <<<"$2"; }

# keep_before OFFSET: the records before OFFSET are what must survive.
keep_before() {
    awk -v n="$1" '$1 < n' "$expected" >"$expected.new"
    mv "$expected.new" "$expected"
}

produce a 1000
check_log "initial"

# --- 1: clean stop, 7 bytes cut off the end ----------------------------------------------
stop_broker b1
info=$(seginfo)
log "newest segment $(basename "$(segment)"): $info"
last_base=$(field last_base "$info")
((last_base > 0)) || fail "unexpected segment layout: $info"
truncate -s -7 "$(segment)"
start_broker b1
keep_before "$last_base"
check_log "7 bytes cut after a clean stop"
produce b 10
assert_eq "$last_base" "$(grep ' b00000$' "$expected" | cut -d' ' -f1)" "offset of the first record after the cut"
check_log "appended after the cut"
stop_broker b1
"$PY" segtool.py "$(segment)" check || fail "segment after recovery and append"

# --- 2: kill -9, cut inside the newest batch's header ------------------------------------
start_broker b1
produce c 100
kill9_broker b1
info=$(seginfo)
last_base=$(field last_base "$info")
truncate -s "$(($(field last_pos "$info") + 30))" "$(segment)"
start_broker b1
keep_before "$last_base"
check_log "cut inside a batch header after kill -9"
produce d 10
check_log "appended after the header cut"

# --- 3: kill -9, 4 KiB of zeros after the last batch -------------------------------------
kill9_broker b1
head -c 4096 /dev/zero >>"$(segment)"
start_broker b1
check_log "zeros appended after kill -9"
produce e 10
check_log "appended after the zeros"

# --- 4: kill -9, one flipped byte in the newest batch (CRC error) ------------------------
kill9_broker b1
info=$(seginfo)
last_base=$(field last_base "$info")
"$PY" segtool.py "$(segment)" flip 3
"$PY" segtool.py "$(segment)" check >/dev/null && fail "flipping a byte did not break the CRC"
start_broker b1
keep_before "$last_base"
check_log "CRC error in the newest batch"
produce f 10
check_log "appended after the CRC error"
stop_broker b1
"$PY" segtool.py "$(segment)" check || fail "segment after the last recovery"
pass
