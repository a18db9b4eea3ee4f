#!/usr/bin/env bash
# The HTTP API over TLS (an https:// listener with the broker's keystore, next to an http://
# one) and basic authentication (http.auth.file, {SHA} and {SHA256} lines): every resource but
# /health needs a listed user with the right password, on both listeners; a bad credentials
# file stops the broker at start-up with a clear message.
. "$(dirname "$0")/lib.sh"
need_cmd curl openssl
pki=$SF_TMP/pki
bash "$SF_TEST_DIR/gen-test-ca.sh" "$pki" || fail "generating the test CA"
auth=$SF_TMP/http-users
"$PY" - "$auth" <<'PY'
import base64, hashlib, sys
b64 = lambda h: base64.b64encode(h).decode()
with open(sys.argv[1], "w") as f:
    f.write("# HTTP users\n\n")
    f.write("ops:{SHA}" + b64(hashlib.sha1(b"s3cret").digest()) + "\n")
    f.write("ci:{SHA256}" + b64(hashlib.sha256(b"p:ss w0rd").digest()) + "\n")
PY
start_zk
hp=$(free_port)
hs=$(free_port)
start_broker b1 num.partitions=1 "ssl.keystore.location=$pki/server-keystore.pem" \
    "http.listeners=http://127.0.0.1:$hp,https://127.0.0.1:$hs" "http.auth.file=$auth"

code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$pki/ca.pem" "$@"; }
for base in "http://127.0.0.1:$hp" "https://127.0.0.1:$hs"; do
    assert_eq 200 "$(code "$base/health/live")" "$base/health/live without a user"
    assert_eq 200 "$(code "$base/health/ready")" "$base/health/ready without a user"
    assert_eq 401 "$(code "$base/metrics")" "$base/metrics without a user"
    assert_eq 401 "$(code -u ops:wrong "$base/metrics")" "$base/metrics with a wrong password"
    assert_eq 401 "$(code -u nobody:s3cret "$base/v3/clusters")" "an unknown user"
    assert_eq 401 "$(code -H 'Authorization: Basic %%%%' "$base/v3/clusters")" "a malformed header"
    assert_eq 200 "$(code -u ops:s3cret "$base/metrics")" "$base/metrics as ops"
    assert_eq 200 "$(code -u 'ci:p:ss w0rd' "$base/api/nodes")" "$base/api/nodes as ci"
    curl -s "$base/v3/clusters" --cacert "$pki/ca.pem" -D - -o "$SF_TMP/body" |
        grep -qi '^WWW-Authenticate: Basic' || fail "no WWW-Authenticate on a 401"
    grep -q '"error_code":401' "$SF_TMP/body" || fail "the 401 is not a JSON error"
done
# TLS really is TLS: the certificate verifies for 127.0.0.1; plain HTTP on it gets nothing.
curl -sf -u ops:s3cret --cacert "$pki/ca.pem" "https://127.0.0.1:$hs/api/nodes" | grep -q '"nodes"' ||
    fail "HTTPS with certificate verification"
code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$hs/health/live" || true)
[[ $code != 200 ]] || fail "plain HTTP answered on the HTTPS listener"
broker_alive b1
stop_broker b1

# A credentials line the broker does not understand: it refuses to start, naming the line.
echo "plain:password" >>"$auth"
out=$("$STREAMFLOWD" -c "$(broker_conf b1)" 2>&1) && fail "started with a bad credentials file"
grep -q "http.auth.file: $auth line 5" <<<"$out" || fail "the error does not name the line: $out"
pass
