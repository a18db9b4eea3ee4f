#!/usr/bin/env bash
# connections.max.idle.ms: a connection that sends nothing, one that stops after a request,
# and a TLS handshake that never finishes are closed once idle; a long-poll Fetch parked for
# longer than the idle time is answered on its connection, not cut off.
. "$(dirname "$0")/lib.sh"
need_cmd openssl
pki=$SF_TMP/pki
bash "$SF_TEST_DIR/gen-test-ca.sh" "$pki" || fail "generating the test CA"
start_zk
p_plain=$(free_port)
p_ssl=$(free_port)
start_broker b1 "listeners=PLAINTEXT://127.0.0.1:$p_plain,SSL://127.0.0.1:$p_ssl" \
    "ssl.keystore.location=$pki/server-keystore.pem" connections.max.idle.ms=1500
cd "$SF_TEST_DIR"

"$PY" - "$BOOTSTRAP" "127.0.0.1:$p_ssl" <<'PYEOF' || fail "idle connections"
import socket, struct, sys, time
import kwire

plain, tls = sys.argv[1], sys.argv[2]

def closed_within(conn, seconds, what):
    conn.sock.settimeout(seconds)
    if not conn.wait_closed():
        sys.exit("%s: still open after %ds of idleness (connections.max.idle.ms=1500)" % (what, seconds))
    print("  %s: closed" % what)

# 1. Connected, never sent a byte.
closed_within(kwire.Conn(plain), 10, "silent plaintext connection")

# 2. One request answered, then silence.
c = kwire.Conn(plain)
err, _ = kwire.apiversions(c)
assert err == 0, err
closed_within(c, 10, "plaintext connection idle after ApiVersions")

# 3. TCP connection to the TLS listener with no ClientHello: a stalled handshake.
host, port = kwire.parse_hostport(tls)
s = socket.create_connection((host, port), timeout=10)
s.settimeout(10)
t0 = time.time()
try:
    data = s.recv(1)
except (ConnectionResetError, socket.timeout) as e:
    data = None if isinstance(e, ConnectionResetError) else b"timeout"
if data not in (b"", None):
    sys.exit("stalled TLS handshake: connection still open after %.0fs" % (time.time() - t0))
print("  stalled TLS handshake: closed")

# 4. A Fetch v4 with max_wait 4000 ms (> idle 1500 ms) on an empty partition is parked, then
#    answered with no records on the same connection.
c = kwire.Conn(plain, timeout=15)
deadline = time.time() + 20
while True:  # Metadata v1 auto-creates the topic; wait for its leader
    _, _, topics = kwire.metadata_v1(c, ["idle-fetch"])
    err, parts = topics.get("idle-fetch", (-1, {}))
    if err == 0 and 0 in parts and parts[0][0] == 0 and parts[0][1] >= 0:
        break
    if time.time() > deadline:
        sys.exit("topic idle-fetch has no leader after 20s: %r" % (topics,))
    time.sleep(0.2)
body = (struct.pack(">iiiib", -1, 4000, 1, 1 << 20, 0) + struct.pack(">i", 1) + kwire.string("idle-fetch")
        + struct.pack(">i", 1) + struct.pack(">iqi", 0, 0, 1 << 20))
t0 = time.time()
corr = c.send(1, 4, body)
rcorr, resp = c.recv()
took = time.time() - t0
if rcorr != corr:
    sys.exit("fetch: correlation id %d, expected %d" % (rcorr, corr))
if took < 3.0:
    sys.exit("fetch answered after %.1fs: it was not parked for its max_wait" % took)
print("  parked fetch answered after %.1fs on a connection idle past 1.5s" % took)
PYEOF
broker_alive b1
pass
