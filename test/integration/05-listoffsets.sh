#!/usr/bin/env bash
# ListOffsets: earliest, latest and by timestamp (monotonic, non-monotonic, across
# segments, empty partition) via confluent-kafka, kafka-python and kcat, exact offsets.
. "$(dirname "$0")/lib.sh"
need_cmd kcat
need_py confluent_kafka kafka
start_zk
# Small segments so that timestamp lookups cross segment boundaries (~1000 records each).
start_broker b1 log.segment.bytes=1048576
cd "$SF_TEST_DIR"
"$PY" list_offsets.py "$BOOTSTRAP" produce || fail "producing timestamped records"
nseg=$(find "$(broker_datadir b1)/loseg-0" -name '*.log' | wc -l)
((nseg >= 3)) || fail "loseg-0 has $nseg segment(s) after 3 MiB with log.segment.bytes=1048576"
log "loseg-0 has $nseg segments"
"$PY" list_offsets.py "$BOOTSTRAP" check || fail "ListOffsets checks"

# kcat: -o s@TIMESTAMP starts at the first offset whose timestamp is >= TIMESTAMP,
# -o -N starts N before the end (ListOffsets latest).
first() { kc -C -t "$1" -p 0 -o "$2" -e -q -f '%o %T\n' | head -n 1; }
assert_eq "11 1600000011000" "$(first lo s@1600000010500)" "kcat -o s@ on lo"
assert_eq "1235 1700000012350" "$(first loseg s@1700000012345)" "kcat -o s@ on loseg"
assert_eq "3 1600000007000" "$(first lonm s@1600000005500)" "kcat -o s@ on lonm"
got=$(kc -C -t lo -p 0 -o -10 -e -q -f '%o\n' | tr '\n' ' ')
assert_eq "90 91 92 93 94 95 96 97 98 99 " "$got" "kcat -o -10 on lo"
got=$(kc -C -t loseg -p 0 -o beginning -e -q -f '%o\n' | wc -l)
assert_eq 3000 "$got" "records read from loseg across segments"
broker_alive b1
pass
