#!/usr/bin/env bash
# Memory bounded across connections, and connection and descriptor limits:
# (a) 10 TLS connections, then 20 plaintext ones, each send most of a 100 MB request: the
#     broker's RSS stays far under what they send (queued.max.request.bytes; buffers grow
#     with the bytes that arrive) and a fresh client is served;
# (b) 40 connections pipeline Metadata for 200 topics without reading the answers: RSS stays
#     bounded (queued.max.response.bytes) and a fresh client is served;
# (c) max.connections, max.connections.per.ip and its overrides close the extra connections
#     at accept while the established ones keep working, each limit logged once;
# (d) at its descriptor limit the broker logs once, does not spin on accept, and accepts
#     again once descriptors are available.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
need_cmd openssl
pki=$SF_TMP/pki
bash "$SF_TEST_DIR/gen-test-ca.sh" "$pki" || fail "generating the test CA"
start_zk
p_ssl=$(free_port)
start_broker b1 "listeners=PLAINTEXT://127.0.0.1:$(free_port),SSL://127.0.0.1:$p_ssl" \
    "ssl.keystore.location=$pki/server-keystore.pem" \
    queued.max.request.bytes=209715200 queued.max.response.bytes=67108864
pid=$(broker_pid b1)
cd "$SF_TEST_DIR"
mb() { "$PY" "$SF_TEST_DIR/memory_bounds.py" "$@"; }

log "(a) over TLS: 10 connections x 60 MB of 100 MB requests"
mb frames "$BOOTSTRAP" "$pid" 10 100000000 60000000 600 "127.0.0.1:$p_ssl" "$pki/ca.pem" ||
    fail "request flood over TLS"
log "(a) 20 connections x 95 MB of 100 MB requests"
mb frames "$BOOTSTRAP" "$pid" 20 100000000 95000000 600 || fail "request flood"
broker_alive b1
n=$(grep -c "queued.max.request.bytes (209715200) reached" "$(broker_log b1)" || true)
((n >= 1)) || fail "queued.max.request.bytes: the limit was not logged"

log "(b) 40 connections pipelining Metadata for 200 topics"
mb create-topics "$BOOTSTRAP" 200 mb- || fail "creating topics"
mb metadata "$BOOTSTRAP" "$pid" 40 4000 600 || fail "metadata flood"
broker_alive b1
grep -q "queued.max.response.bytes (67108864) reached" "$(broker_log b1)" ||
    fail "queued.max.response.bytes: the limit was not logged"

log "(d) descriptor limit"
mb fd-limit "$BOOTSTRAP" "$pid" || fail "descriptor limit"
n=$(grep -c "cannot accept connections: Too many open files" "$(broker_log b1)" || true)
assert_eq 1 "$n" "lines logged about the descriptor limit"
grep -q "accepting connections again" "$(broker_log b1)" || fail "no line when accepting resumed"
broker_alive b1

log "(c) connection limits"
stop_broker b1
start_broker b2 broker.id=2 max.connections=6 max.connections.per.ip=4 \
    max.connections.per.ip.overrides=127.0.0.2:1
mb conn-limits "$BOOTSTRAP" || fail "connection limits"
assert_eq 1 "$(grep -c 'max.connections (6) reached' "$(broker_log b2)" || true)" \
    "lines logged about max.connections"
grep -q "max.connections.per.ip: 127.0.0.1 has 4 connections" "$(broker_log b2)" ||
    fail "max.connections.per.ip was not logged"
broker_alive b2
pass
