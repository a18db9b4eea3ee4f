#!/usr/bin/env bash
# The streamflow command's data sub-commands against a real broker: produce and consume
# byte for byte both ways with kcat (keys, headers, binary values, every compression codec),
# consume's start and stop options and JSON output, request/respond, perf, and a producer
# that keeps every acknowledged record while the broker restarts under it.
. "$(dirname "$0")/lib.sh"
need_cmd kcat
SFCLI=$SF_BUILD_DIR/admin/streamflow
[[ -x $SFCLI ]] || fail "$SFCLI not built"
start_zk
start_broker b1 num.partitions=3
export STREAMFLOW_BOOTSTRAP=$BOOTSTRAP
sf() { "$SFCLI" "$@"; }
T=$SF_TMP

# gen FILE N SEED KEYED NUL EMPTY: N lines of "key-NNNNN:value" (KEYED=1) or "value" lines
# with binary bytes (everything but newline; NUL only when NUL=1), a few empty values (when
# EMPTY=1: kcat skips empty lines) and one 200 KB value.
gen() {
    "$PY" - "$@" <<'EOF'
import random, sys
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
keyed, nul, empty = sys.argv[4] == "1", sys.argv[5] == "1", sys.argv[6] == "1"
r = random.Random(seed)
alphabet = bytes(b for b in range(0 if nul else 1, 256) if b != 0x0a)
with open(path, "wb") as f:
    for i in range(n):
        size = 200000 if i == n // 2 else (0 if empty and i % 97 == 5 else r.randrange(1, 300))
        v = b"v%05d-" % i + bytes(r.choice(alphabet) for _ in range(size)) if size else b""
        f.write((b"key-%05d\xc3\xa9:" % i if keyed else b"") + v + b"\n")
EOF
}

# verify INPUT OUTPUT HEADERS KEYSEP: OUTPUT holds records formatted as
# "KEYLEN\tVALUELEN\tPARTITION\tOFFSET\tHEADERS\tKEYVALUE\n" (kcat '%K\t%S\t%p\t%o\t%h\t%k%s\n',
# streamflow '%S\t%s\t%p\t%o\t%h\t%k%v\n'); they must be exactly the INPUT lines (split at the
# first KEYSEP into key and value; no KEYSEP: null keys), each with HEADERS, in input order
# within each partition, offsets contiguous from 0.
verify() {
    "$PY" - "$@" <<'EOF'
import collections, sys
inp, outp, headers, sep = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
lines = open(inp, "rb").read().split(b"\n")[:-1]
want = [tuple(l.split(sep, 1)) if sep else (None, l) for l in lines]
index = {w: i for i, w in enumerate(want)}
data = open(outp, "rb").read()
recs, i = [], 0
try:
    while i < len(data):
        f = []
        for _ in range(5):
            j = data.index(b"\t", i)
            f.append(data[i:j])
            i = j + 1
        kl, vl, p, o, h = int(f[0]), int(f[1]), int(f[2]), int(f[3]), f[4]
        k = data[i:i + kl] if kl >= 0 else None
        i += max(kl, 0)
        v = data[i:i + vl] if vl >= 0 else None
        i += max(vl, 0)
        if data[i:i + 1] != b"\n":
            sys.exit("  record %d: no newline after the value" % len(recs))
        i += 1
        recs.append((p, o, k, v, h))
except ValueError as e:
    sys.exit("  malformed output after %d records: %s" % (len(recs), e))
if len(recs) != len(want):
    sys.exit("  %d records read, %d produced" % (len(recs), len(want)))
parts = collections.defaultdict(list)
for p, o, k, v, h in recs:
    if (k, v) not in index:
        sys.exit("  partition %d offset %d: a record that was not produced: %r:%r" % (p, o, k and k[:40], v and v[:40]))
    if h != headers:
        sys.exit("  partition %d offset %d: headers %r, expected %r" % (p, o, h, headers))
    parts[p].append((o, index[(k, v)]))
if sorted(x for l in parts.values() for _, x in l) != list(range(len(want))):
    sys.exit("  duplicates or missing records")
for p, l in parts.items():
    l.sort()
    if [o for o, _ in l] != list(range(len(l))):
        sys.exit("  partition %d: offsets not contiguous from 0" % p)
    if [x for _, x in l] != sorted(x for _, x in l):
        sys.exit("  partition %d: not in input order" % p)
print("  %d records identical (per partition: %s)" % (len(recs), {p: len(l) for p, l in sorted(parts.items())}))
EOF
}

KC_FMT='%K\t%S\t%p\t%o\t%h\t%k%s\n'
SF_FMT='%S\t%s\t%p\t%o\t%h\t%k%v\n'
read_kcat() { kc -C -t "$1" -o beginning -e -q -f "$KC_FMT"; }
read_sf() { sf consume "$1" --from-beginning --to-end --quiet --format "$SF_FMT"; }

# --- help and usage ----------------------------------------------------------------------
for c in produce consume request respond "perf produce" "perf consume" "perf e2e"; do
    # shellcheck disable=SC2086
    out=$(sf $c --help) || fail "streamflow $c --help exited with status $?"
    grep -q "^Usage: streamflow $c" <<<"$out" || fail "streamflow $c --help: no usage line"
done
rc=0
sf consume --no-such-option t 2>"$T/err" || rc=$?
assert_eq 2 "$rc" "exit status of an unknown option"
grep -q "unknown option" "$T/err" || fail "unknown option: $(cat "$T/err")"

# --- streamflow produce -> kcat and streamflow consume -----------------------------------
gen "$T/keyed.txt" 2000 1 1 1 1
log "streamflow produce: 2,000 keyed lines with two headers"
sf produce cli-keyed --key-separator : --header h1=v1 --header "h2=second header" \
    --verbose <"$T/keyed.txt" 2>"$T/err" || fail "streamflow produce exited with status $?: $(cat "$T/err")"
grep -qx "2000 records produced" "$T/err" || fail "--verbose: $(cat "$T/err")"
read_kcat cli-keyed >"$T/out-kcat.txt" || fail "kcat consumer exited with status $?"
verify "$T/keyed.txt" "$T/out-kcat.txt" "h1=v1,h2=second header" : || fail "kcat read of streamflow produce"
read_sf cli-keyed >"$T/out-sf.txt" || fail "streamflow consume exited with status $?"
verify "$T/keyed.txt" "$T/out-sf.txt" "h1=v1,h2=second header" : || fail "streamflow consume of streamflow produce"

# --- kcat -> streamflow consume ----------------------------------------------------------
gen "$T/kc.txt" 2000 2 1 0 1
log "kcat produces 2,000 keyed lines; streamflow consume reads them"
kc -P -t cli-kc -K: -H hk=hv -X linger.ms=5 <"$T/kc.txt" || fail "kcat producer exited with status $?"
read_sf cli-kc >"$T/out-sf2.txt" 2>"$T/err" || fail "streamflow consume exited with status $?: $(cat "$T/err")"
verify "$T/kc.txt" "$T/out-sf2.txt" "hk=hv" : || fail "streamflow consume of kcat's records"
grep -qx "Processed a total of 2000 messages" <(sf consume cli-kc --from-beginning --to-end 2>&1 >/dev/null) ||
    fail "the 'Processed a total' line"

# Unkeyed values on one partition: the default output is the input, byte for byte.
gen "$T/values-kc.txt" 1000 3 0 0 0
kc -P -t cli-values -p 0 <"$T/values-kc.txt" || fail "kcat producer (values) exited with status $?"
sf consume cli-values --partition 0 --from-beginning --to-end --quiet >"$T/out-values.txt" ||
    fail "streamflow consume (values) exited with status $?"
cmp -s "$T/values-kc.txt" "$T/out-values.txt" || fail "default output differs from the produced lines"
gen "$T/values.txt" 1000 4 0 1 1
sf produce cli-values2 --partition 1 <"$T/values.txt" || fail "streamflow produce (values) exited with status $?"
kc -C -t cli-values2 -p 1 -o beginning -e -q -D '\n' >"$T/out-values2.txt" || fail "kcat consumer exited with status $?"
cmp -s "$T/values.txt" "$T/out-values2.txt" || fail "kcat read of unkeyed streamflow records differs"
log "unkeyed binary values identical both ways"

# --- compression, both ways --------------------------------------------------------------
# batch_codecs TOPIC: the compression codec ids (attributes & 7) of the batches stored for
# TOPIC, e.g. "1" (gzip); the broker keeps produced batches as they came.
batch_codecs() {
    "$PY" - "$(broker_datadir b1)" "$1" <<'EOF'
import glob, struct, sys
codecs = set()
for path in glob.glob("%s/%s-[0-9]*/*.log" % (sys.argv[1], sys.argv[2])):
    d, pos = open(path, "rb").read(), 0
    while pos + 61 <= len(d):
        length = struct.unpack(">i", d[pos + 8:pos + 12])[0]
        if length <= 0:
            break
        codecs.add(struct.unpack(">h", d[pos + 21:pos + 23])[0] & 7)
        pos += 12 + length
print(" ".join(str(c) for c in sorted(codecs)))
EOF
}
declare -A codec_id=([gzip]=1 [snappy]=2 [lz4]=3 [zstd]=4)
"$PY" -c 'import sys
for i in range(3000): print("k%05d:%05d-%s" % (i, i, "compressible text " * (i % 30)))' >"$T/comp.txt"
for codec in gzip snappy lz4 zstd; do
    sf produce "cli-z-$codec" --compression "$codec" --linger-ms 20 --key-separator : \
        --header "codec=$codec" <"$T/comp.txt" || fail "streamflow produce --compression $codec: status $?"
    read_kcat "cli-z-$codec" >"$T/out-z.txt" || fail "kcat consumer ($codec) exited with status $?"
    verify "$T/comp.txt" "$T/out-z.txt" "codec=$codec" : || fail "kcat read of streamflow produce --compression $codec"
    assert_eq "${codec_id[$codec]}" "$(batch_codecs "cli-z-$codec")" "codecs of the batches stored by --compression $codec"
    kc -P -t "cli-kz-$codec" -K: -H "codec=$codec" -z "$codec" -X linger.ms=20 <"$T/comp.txt" ||
        fail "kcat producer ($codec) exited with status $?"
    read_sf "cli-kz-$codec" >"$T/out-kz.txt" || fail "streamflow consume ($codec) exited with status $?"
    verify "$T/comp.txt" "$T/out-kz.txt" "codec=$codec" : || fail "streamflow consume of kcat -z $codec"
    log "$codec ok both ways"
done
rc=0
sf produce cli-bad --compression brotli </dev/null 2>"$T/err" || rc=$?
assert_eq 2 "$rc" "exit status of --compression brotli"

# --- a line without the key separator ----------------------------------------------------
rc=0
printf 'a:1\nb:2\nno separator here\nc:3\n' | sf produce cli-nosep --key-separator : 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "exit status for a line without the key separator"
grep -q "line 3" "$T/err" || fail "the error does not name line 3: $(cat "$T/err")"
got=$(sf consume cli-nosep --from-beginning --to-end --quiet --print-key | sort | tr '\t\n' '= ')
assert_eq "a=1 b=2 " "$got" "records before the bad line"

# --- consume: offsets, timestamps, counts, idle timeout, JSON ----------------------------
lines 'rec-%03d' 100 | sf produce cli-offsets --partition 0 || fail "producing cli-offsets"
got=$(sf consume cli-offsets --partition 0 --offset 40 --max-messages 5 --quiet | tr '\n' ' ')
assert_eq "rec-041 rec-042 rec-043 rec-044 rec-045 " "$got" "--offset 40 --max-messages 5"
got=$(sf consume cli-offsets --partition 0 --offset -3 --to-end --quiet | tr '\n' ' ')
assert_eq "rec-098 rec-099 rec-100 " "$got" "--offset -3 --to-end"
got=$(sf consume cli-offsets --partition 0 --offset beginning --max-messages 2 --quiet --print-offset | tr '\t\n' ': ')
assert_eq "Offset:0:rec-001 Offset:1:rec-002 " "$got" "--offset beginning --print-offset"
got=$(sf consume cli-offsets --partition 0 --offset end --timeout-ms 1000 --quiet | wc -l)
assert_eq 0 "$got" "--offset end --timeout-ms (no new records)"
got=$(sf consume cli-offsets --from-beginning --max-messages 7 --quiet | wc -l)
assert_eq 7 "$got" "--max-messages 7"
sf_bg "$SFCLI" consume cli-offsets --from-beginning >"$T/sigint.out" 2>"$T/sigint.err"
pid=$!
wait_until 30 "100 records from a consumer that runs until SIGINT" \
    bash -c "(( \$(wc -l <'$T/sigint.out') == 100 ))"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq 0 "$rc" "exit status of consume after SIGINT"
grep -qx "Processed a total of 100 messages" "$T/sigint.err" || fail "after SIGINT: $(cat "$T/sigint.err")"

lines 'early-%02d' 20 | sf produce cli-ts || fail "producing the early records"
sleep 1.2
ts=$(date +%s%3N)
sleep 0.1
lines 'late-%02d' 20 | sf produce cli-ts || fail "producing the late records"
got=$(sf consume cli-ts --from-timestamp "$ts" --to-end --quiet | sort | tr '\n' ' ')
assert_eq "$(lines 'late-%02d' 20 | tr '\n' ' ')" "$got" "--from-timestamp $ts"
iso=$(date -u -d "@$((ts / 1000)).$(printf %03d $((ts % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ)
got=$(sf consume cli-ts --from-timestamp "$iso" --to-end --quiet | sort | tr '\n' ' ')
assert_eq "$(lines 'late-%02d' 20 | tr '\n' ' ')" "$got" "--from-timestamp $iso"
got=$(sf consume cli-ts --from-timestamp 0 --to-end --quiet | wc -l)
assert_eq 40 "$got" "--from-timestamp 0"
got=$(sf consume cli-ts --from-timestamp "${iso%Z}+00:00" --to-end --quiet | sort | tr '\n' ' ')
assert_eq "$(lines 'late-%02d' 20 | tr '\n' ' ')" "$got" "--from-timestamp ${iso%Z}+00:00"
# A zone offset is two digits each for hours (up to 23) and minutes (up to 59), nothing else.
for bad in "${iso%Z}+-1" "${iso%Z}+ 1" "${iso%Z}+99:00" "${iso%Z}+02:" "${iso%Z}+02:7x" \
    99999999999999999999; do
    rc=0
    sf consume cli-ts --from-timestamp "$bad" --to-end --quiet >/dev/null 2>"$T/err" || rc=$?
    assert_eq 2 "$rc" "exit status of --from-timestamp '$bad'"
    grep -q "invalid --from-timestamp" "$T/err" || fail "--from-timestamp '$bad': $(cat "$T/err")"
done

printf 'jk:\xff\xfe binary\nk2:h\xc3\xa9llo\n' | sf produce cli-json --partition 0 --key-separator : --header hk=hv ||
    fail "producing cli-json"
printf 'no key\n' | kc -P -t cli-json -p 0 || fail "kcat producer (cli-json)"
sf consume cli-json --from-beginning --to-end --quiet --output json >"$T/json.txt" || fail "consume --output json"
"$PY" - "$T/json.txt" <<'EOF' || fail "--output json"
import base64, json, sys
recs = [json.loads(l) for l in open(sys.argv[1], "rb")]
assert len(recs) == 3, recs
a, b, c = recs
for r in recs:
    assert r["topic"] == "cli-json" and r["partition"] == 0, r
    assert isinstance(r["timestamp"], int) and r["timestamp"] > 0, r
    assert r["timestamp_type"] == "CreateTime", r
assert [r["offset"] for r in recs] == [0, 1, 2], recs
assert a["key"] == "jk" and "key_base64" not in a, a
assert a.get("value_base64") is True and base64.b64decode(a["value"]) == b"\xff\xfe binary", a
assert a["headers"] == [{"key": "hk", "value": "hv"}], a
assert b["value"] == "h\u00e9llo" and "value_base64" not in b, b
assert c["key"] is None and c["value"] == "no key" and c["headers"] == [], c
print("  JSON records ok")
EOF

# --- request / respond -------------------------------------------------------------------
sf_bg "$SFCLI" respond cli-rr --echo 2>"$T/echo-err"
echo_pid=$!
# Once it says so, the responder sees every request sent.
wait_until 60 "the echo responder" grep -q "^Waiting for requests on cli-rr$" "$T/echo-err"
out=$(sf request cli-rr --timeout-ms 10000 ping) || fail "request exited with status $?"
assert_eq "ping" "$out" "echo reply"
out=$(sf request cli-rr --key k1 --header a=b "hello world") || fail "request exited with status $?"
assert_eq "hello world" "$out" "echo reply"
printf 'two\nlines\x01' | sf request cli-rr - >"$T/reply.txt" || fail "request - exited with status $?"
printf 'two\nlines\x01\n' | cmp -s - "$T/reply.txt" || fail "request - : reply differs"

sf_bg "$SFCLI" respond cli-rr-exec --exec 'tr a-z A-Z; printf " [%s]" "$STREAMFLOW_KEY"' --max-requests 3 2>"$T/exec-err"
exec_pid=$!
wait_until 60 "the --exec responder" grep -q "^Waiting for requests on cli-rr-exec$" "$T/exec-err"
out=$(sf request cli-rr-exec --key kk --timeout-ms 10000 "up") || fail "first --exec request"
assert_eq "UP [kk]" "$out" "--exec reply"
out=$(sf request cli-rr-exec --key x "second") || fail "second --exec request"
assert_eq "SECOND [x]" "$out" "--exec reply"
out=$(sf request cli-rr-exec --key y "third") || fail "third --exec request"
assert_eq "THIRD [y]" "$out" "--exec reply"
rc=0
wait "$exec_pid" || rc=$?
assert_eq 0 "$rc" "exit status of respond --max-requests 3"
grep -q "Processed a total of 3 requests" "$T/exec-err" || fail "respond summary: $(cat "$T/exec-err")"

rc=0
sf request cli-rr-nobody --timeout-ms 1500 "anyone?" >"$T/out" 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "exit status of a request without a responder"
grep -q "no reply within 1500 ms" "$T/err" || fail "timeout message: $(cat "$T/err")"
[[ ! -s $T/out ]] || fail "a timed-out request printed a reply"
kill -INT "$echo_pid"
rc=0
wait "$echo_pid" || rc=$?
assert_eq 0 "$rc" "exit status of respond --echo after SIGINT"
log "request/respond ok"

# --- perf --------------------------------------------------------------------------------
out=$(sf perf produce cli-perf --records 5000 --record-size 100 --acks 1 --linger-ms 5) ||
    fail "perf produce exited with status $?"
grep -Eq '^5000 records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency, [0-9.]+ ms 50th, [0-9.]+ ms 95th, [0-9.]+ ms 99th, [0-9.]+ ms 99.9th\.$' <<<"$out" ||
    fail "perf produce output: $out"
sf perf produce cli-perf --records 1000 --record-size 1024 --throughput 5000 --output json >"$T/perf.json" ||
    fail "perf produce --output json exited with status $?"
"$PY" - "$T/perf.json" <<'EOF' || fail "perf produce --output json: $(cat "$T/perf.json")"
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("records", "records_per_sec", "mb_per_sec", "latency_avg_ms", "latency_p50_ms",
          "latency_p95_ms", "latency_p99_ms", "latency_p999_ms", "latency_max_ms", "errors"):
    assert k in j, k
assert j["records"] == 1000 and j["errors"] == 0 and j["test"] == "produce", j
EOF
out=$(sf perf consume cli-perf --records 6000) || fail "perf consume exited with status $?"
grep -Eq '^6000 records received, [0-9.]+ records/sec \([0-9.]+ MB/sec\)' <<<"$out" || fail "perf consume output: $out"
rc=0
sf perf consume cli-perf --records 7000 --timeout-ms 1000 >/dev/null 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "perf consume of more records than there are"
grep -q "only 6000 of 7000" "$T/err" || fail "perf consume shortfall message: $(cat "$T/err")"
out=$(sf perf e2e cli-e2e --records 300 --rate 500 --record-size 64) || fail "perf e2e exited with status $?"
grep -Eq '^300 records received of 300 sent \(0 duplicates\), 64 bytes each, end-to-end: [0-9.]+ ms avg latency, [0-9.]+ ms max latency, [0-9.]+ ms 50th, [0-9.]+ ms 95th, [0-9.]+ ms 99th, [0-9.]+ ms 99.9th\.$' <<<"$out" ||
    fail "perf e2e output: $out"
log "perf ok"

# --- a broker restart under a slow acks=all producer -------------------------------------
N=1500
feed() { for ((i = 1; i <= N; i++)); do printf 'line-%05d\n' "$i"; sleep 0.005; done; }
produce_slowly() { feed | "$SFCLI" produce cli-restart --acks all --report-file "$T/acked.txt" --verbose; }
lines 'warm-%d' 3 | sf produce cli-restart || fail "creating cli-restart"
sf_bg produce_slowly 2>"$T/restart-err"
prod=$!
wait_until 60 "the first acknowledgements" test -s "$T/acked.txt"
stop_broker b1
log "broker stopped after $(wc -l <"$T/acked.txt") acknowledgements"
sleep 2
start_broker b1
rc=0
wait "$prod" || rc=$?
assert_eq 0 "$rc" "exit status of the producer across the restart ($(cat "$T/restart-err"))"
grep -qx "$N records produced" "$T/restart-err" || fail "producer summary: $(cat "$T/restart-err")"
kc -C -t cli-restart -o beginning -e -q -f '%p\t%o\t%s\n' >"$T/restart-out.txt" || fail "kcat consumer (restart)"
"$PY" - "$T/acked.txt" "$T/restart-out.txt" "$N" <<'EOF' || fail "records across the restart"
import sys
acked = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
n = int(sys.argv[3])
log = {}
for l in open(sys.argv[2]).read().splitlines():
    p, o, v = l.split("\t")
    log[(int(p), int(o))] = v
assert len(acked) == n, "%d acknowledged, %d produced" % (len(acked), n)
for line, p, o in acked:
    want = "line-%05d" % int(line)
    got = log.get((int(p), int(o)))
    assert got == want, "line %s acknowledged at %s/%s, which holds %r" % (line, p, o, got)
values = [v for v in log.values() if v.startswith("line-")]
missing = set("line-%05d" % i for i in range(1, n + 1)) - set(values)
assert not missing, "%d lines missing, e.g. %s" % (len(missing), sorted(missing)[:3])
print("  all %d lines acknowledged and read back at their offsets (%d duplicates)" % (n, len(values) - len(set(values))))
EOF
broker_alive b1
pass
