#!/usr/bin/env bash
# TLS listener: certificate chain and name, Metadata advertising the SSL endpoint, kcat and
# confluent-kafka round trips over TLS, untrusted server, plaintext client on the TLS port,
# and ssl.client.auth=required with no / CA-signed / foreign client certificates.
. "$(dirname "$0")/lib.sh"
need_cmd kcat openssl
need_py confluent_kafka
pki=$SF_TMP/pki
bash "$SF_TEST_DIR/gen-test-ca.sh" "$pki" || fail "generating the test CA"

start_zk
p_plain=$(free_port)
p_ssl=$(free_port)
SSL=127.0.0.1:$p_ssl
start_broker b1 "listeners=PLAINTEXT://127.0.0.1:$p_plain,SSL://127.0.0.1:$p_ssl" \
    "ssl.keystore.location=$pki/server-keystore.pem" "ssl.truststore.location=$pki/ca.pem" \
    ssl.client.auth=none num.partitions=2
tls=(-X security.protocol=ssl -X "ssl.ca.location=$pki/ca.pem")
ktls() { kcat -b "$SSL" -X broker.address.family=v4 "${tls[@]}" "$@"; }

# --- the server side of the handshake ----------------------------------------------------
out=$(openssl s_client -connect "$SSL" -CAfile "$pki/ca.pem" -verify_return_error -verify_ip 127.0.0.1 \
    </dev/null 2>&1) || fail "openssl s_client could not verify the broker: $(tail -n 5 <<<"$out")"
grep -q "Verify return code: 0" <<<"$out" || fail "certificate verification: $(grep -i verify <<<"$out")"
log "openssl s_client: chain and IP SAN verified"
zk get /streamflow/brokers/ids/1 | grep -qF "SSL://127.0.0.1:$p_ssl" || fail "registration lacks the SSL endpoint"

# --- Metadata over TLS advertises the TLS endpoint ---------------------------------------
out=$(ktls -L -m 10 2>&1) || fail "kcat -L over TLS failed: $out"
grep -qF "broker 1 at 127.0.0.1:$p_ssl" <<<"$out" || fail "Metadata over TLS does not advertise 127.0.0.1:$p_ssl: $out"
out=$(kc -L -m 10 2>&1) || fail "kcat -L over plaintext failed: $out"
grep -qF "broker 1 at 127.0.0.1:$p_plain" <<<"$out" || fail "Metadata over plaintext does not advertise 127.0.0.1:$p_plain: $out"

# --- kcat round trip over TLS ------------------------------------------------------------
lines 'key%05d:tls-record-%05d' 5000 >"$SF_TMP/in.txt"
ktls -P -t tls-kcat -K: <"$SF_TMP/in.txt" || fail "kcat produce over TLS"
ktls -C -t tls-kcat -o beginning -e -q -f '%k:%s\n' | sort >"$SF_TMP/out-tls.txt" || fail "kcat consume over TLS"
kc -C -t tls-kcat -o beginning -e -q -f '%k:%s\n' | sort >"$SF_TMP/out-plain.txt" || fail "kcat consume over plaintext"
sort "$SF_TMP/in.txt" | cmp -s - "$SF_TMP/out-tls.txt" || fail "records read over TLS differ from those produced"
cmp -s "$SF_TMP/out-tls.txt" "$SF_TMP/out-plain.txt" || fail "records read over plaintext differ from those read over TLS"
log "kcat round trip over TLS ok (5000 records)"

# --- confluent-kafka over TLS ------------------------------------------------------------
cd "$SF_TEST_DIR"
"$PY" - "$SSL" "$pki" <<'EOF' || fail "confluent-kafka over TLS"
import sys
from sftest import produce, consume_all, check
ssl = {"security.protocol": "ssl", "ssl.ca.location": sys.argv[2] + "/ca.pem"}
recs = [(b"k%d" % i, b"confluent-tls-%d" % i, None, None, None) for i in range(2000)]
produce(sys.argv[1], "tls-confluent", recs, extra=ssl)
got = consume_all(sys.argv[1], "tls-confluent", extra=ssl)
vals = sorted(m.value() for ms in got.values() for m in ms)
check(vals == sorted(r[1] for r in recs), "confluent-kafka over TLS: %d records back of %d" % (len(vals), len(recs)))
print("  confluent-kafka over TLS ok")
EOF

# --- failures that must stay failures ----------------------------------------------------
if kcat -b "$SSL" -X broker.address.family=v4 -X security.protocol=ssl -X "ssl.ca.location=$pki/rogue-ca.pem" \
    -L -m 5 >/dev/null 2>&1; then
    fail "a client that does not trust the broker's CA connected"
fi
if kcat -b "$SSL" -X broker.address.family=v4 -L -m 5 >/dev/null 2>&1; then
    fail "a plaintext client got metadata from the TLS port"
fi
"$PY" - "$SSL" <<'EOF' || fail "garbage on the TLS port"
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=10)
s.sendall(b"\x00\x00\x00\x10this is not TLS at all")
try:
    while s.recv(4096):
        pass
except (ConnectionResetError, socket.timeout):
    pass
EOF
broker_alive b1
log "untrusted CA, plaintext and garbage on the TLS port refused"

# --- the streamflow command (libstreamflow) over TLS, settings from --command-config -------
SFCLI=$SF_BUILD_DIR/admin/streamflow
[[ -x $SFCLI ]] || fail "$SFCLI not built"
printf 'security.protocol=SSL\nssl.truststore.location=%s\n' "$pki/ca.pem" >"$SF_TMP/tls.properties"
sftls() { "$SFCLI" --bootstrap-server "$SSL" --command-config "$SF_TMP/tls.properties" --timeout 10000 "$@"; }
lines 'sf%05d:streamflow-tls-%05d' 1000 >"$SF_TMP/in3.txt"
sftls produce tls-cli --key-separator : <"$SF_TMP/in3.txt" || fail "streamflow produce over TLS"
sftls consume tls-cli --from-beginning --max-messages 1000 --format '%k:%v\n' | sort >"$SF_TMP/out3.txt" ||
    fail "streamflow consume over TLS"
sort "$SF_TMP/in3.txt" | cmp -s - "$SF_TMP/out3.txt" || fail "streamflow TLS round trip differs"
kc -C -t tls-cli -o beginning -e -q -f '%k:%s\n' | sort | cmp -s - "$SF_TMP/out3.txt" ||
    fail "kcat over plaintext reads other records than streamflow wrote over TLS"
printf 'security.protocol=SSL\nssl.truststore.location=%s\n' "$pki/rogue-ca.pem" >"$SF_TMP/rogue.properties"
if out=$("$SFCLI" --bootstrap-server "$SSL" --command-config "$SF_TMP/rogue.properties" --timeout 5000 \
    topic list 2>&1); then
    fail "streamflow trusted a broker certificate from another CA"
fi
grep -qi "tls\|certificate" <<<"$out" || fail "untrusted broker: the error does not say TLS: $out"
log "streamflow over TLS: 1000 records round trip; an untrusted broker is refused"

# --- ssl.client.auth=required ------------------------------------------------------------
stop_broker b1
start_broker b1 ssl.client.auth=required
if ktls -L -m 5 >/dev/null 2>&1; then
    fail "ssl.client.auth=required: a client without a certificate got metadata"
fi
if ktls -X "ssl.certificate.location=$pki/rogue-client.pem" -X "ssl.key.location=$pki/rogue-client.key" \
    -L -m 5 >/dev/null 2>&1; then
    fail "ssl.client.auth=required: a client certificate from a foreign CA was accepted"
fi
cert=(-X "ssl.certificate.location=$pki/client.pem" -X "ssl.key.location=$pki/client.key")
lines 'mtls%05d:mutual-tls-%05d' 1000 >"$SF_TMP/in2.txt"
ktls "${cert[@]}" -P -t tls-mutual -K: <"$SF_TMP/in2.txt" || fail "kcat produce with a client certificate"
ktls "${cert[@]}" -C -t tls-mutual -o beginning -e -q -f '%k:%s\n' | sort >"$SF_TMP/out2.txt" ||
    fail "kcat consume with a client certificate"
sort "$SF_TMP/in2.txt" | cmp -s - "$SF_TMP/out2.txt" || fail "mutual TLS round trip differs"
"$PY" "$SF_TEST_DIR/kwire.py" ready "$SSL" --broker-id 1 --tls --cafile "$pki/ca.pem" \
    --cert "$pki/client.pem" --key "$pki/client.key" || fail "ApiVersions + Metadata over mutual TLS (python ssl)"
# Data written before the restart is still readable over TLS with the certificate.
n=$(ktls "${cert[@]}" -C -t tls-kcat -o beginning -e -q -f '%o\n' | wc -l)
assert_eq 5000 "$n" "records of tls-kcat read with a client certificate"
if sftls topic list >/dev/null 2>&1; then
    fail "ssl.client.auth=required: streamflow without a certificate listed topics"
fi
printf 'ssl.keystore.location=%s\nssl.key.location=%s\n' "$pki/client.pem" "$pki/client.key" >>"$SF_TMP/tls.properties"
n=$(sftls consume tls-cli --from-beginning --max-messages 1000 --format '%o\n' | wc -l)
assert_eq 1000 "$n" "records of tls-cli read by streamflow with a client certificate"
broker_alive b1
log "ssl.client.auth=required: no cert and foreign cert refused, CA-signed cert works"
pass
