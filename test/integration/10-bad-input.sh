#!/usr/bin/env bash
# Bad input on fresh connections while a kcat producer and a kcat consumer stay connected:
# garbage, an HTTP request, size prefixes 0x7fffffff / -1 / 0 / 3, a truncated request, a
# client_id overrunning the request, an array count of 0x7fffffff, an unknown API key,
# Produce v0 and v2 (UNSUPPORTED_VERSION), ApiVersions v99 (v0 reply with error 35),
# ApiVersions v3 and pipelined requests. After each: the broker is alive, its memory did not
# balloon, and the long-lived clients still produce and consume.
. "$(dirname "$0")/lib.sh"
need_cmd kcat
need_py confluent_kafka
start_zk
start_broker b1
cd "$SF_TEST_DIR"

# Long-lived clients: a producer fed line by line through a FIFO (confluent-kafka: kcat -P
# reads its input in large blocks) and a kcat consumer writing to a file.
echo "first" | kc -P -t healthy || fail "creating the healthy topic"
mkfifo "$SF_TMP/feed"
"$PY" -c '
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4", "linger.ms": 0})
for line in iter(sys.stdin.buffer.readline, b""):
    p.produce("healthy", line.rstrip(b"\n"))
    if p.flush(30):
        sys.exit("long-lived producer: record not delivered within 30s")
' "$BOOTSTRAP" <"$SF_TMP/feed" &
SF_PIDS+=("$!")
exec 7>"$SF_TMP/feed"
kc -C -t healthy -o beginning -u -q -f '%s\n' >"$SF_TMP/consumed.txt" &
SF_PIDS+=("$!")
healthy() {
    echo "alive-$1" >&7
    wait_until 30 "the long-lived clients to round-trip alive-$1" grep -qx "alive-$1" "$SF_TMP/consumed.txt"
}
healthy start
rss0=$(broker_rss_kb b1)

cases=(garbage http oversize negative-size zero-size short-header truncated client-id-overrun
    array-bomb unknown-api produce-v0 produce-v2 apiversions-99 apiversions-v3 pipelined)
for c in "${cases[@]}"; do
    "$PY" bad_input.py "$BOOTSTRAP" "$c" || fail "bad input '$c'"
    broker_alive b1
    rss=$(broker_rss_kb b1)
    ((rss < rss0 + 262144)) || fail "after '$c' the broker's RSS grew from ${rss0} KiB to ${rss} KiB"
    healthy "$c"
done
log "all ${#cases[@]} cases handled; RSS ${rss0} -> $(broker_rss_kb b1) KiB"

# The same inputs again, all at once on parallel connections.
for c in "${cases[@]}"; do
    "$PY" bad_input.py "$BOOTSTRAP" "$c" >"$SF_TMP/par-$c.txt" 2>&1 &
    SF_PIDS+=("$!")
done
wait_all_ok=1
for pid in "${SF_PIDS[@]: -${#cases[@]}}"; do
    wait "$pid" || wait_all_ok=0
done
((wait_all_ok)) || fail "a bad input failed when sent in parallel: $(grep -h FAIL "$SF_TMP"/par-*.txt)"
broker_alive b1
healthy parallel
exec 7>&-
pass
