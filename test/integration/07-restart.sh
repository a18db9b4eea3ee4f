#!/usr/bin/env bash
# Restarts: 50,000 records survive a clean broker restart byte for byte and offsets go on
# from there; the broker keeps serving while ZooKeeper restarts (SIGTERM and SIGKILL) and
# is registered afterwards; after its ZooKeeper session expired (broker SIGSTOPped) it
# registers again under a new session.
. "$(dirname "$0")/lib.sh"
need_cmd kcat
start_zk
start_broker b1 num.partitions=3 zookeeper.session.timeout.ms=6000
node=/streamflow/brokers/ids/1

dump() { kc -C -t restart -o beginning -e -q -f '%p\t%o\t%k:%s\n' | sort -t$'\t' -k1,1n -k2,2n; }

# check_dump FILE N: N records, offsets contiguous from 0 in every partition.
check_dump() {
    "$PY" - "$1" "$2" <<'EOF'
import collections, sys
lines = open(sys.argv[1]).read().splitlines()
if len(lines) != int(sys.argv[2]):
    print("  %d records, expected %s" % (len(lines), sys.argv[2])); sys.exit(1)
offs = collections.defaultdict(list)
for l in lines:
    p, o, _ = l.split("\t", 2)
    offs[int(p)].append(int(o))
for p, v in offs.items():
    if v != list(range(len(v))):
        print("  partition %d: offsets not contiguous from 0" % p); sys.exit(1)
EOF
}

# --- clean restart -----------------------------------------------------------------------
"$PY" -c 'for i in range(50000): print("r%06d:restart-%06d-%s" % (i, i, "y" * (i % 150)))' >"$SF_TMP/in.txt"
kc -P -t restart -K: -X acks=1 -X linger.ms=5 <"$SF_TMP/in.txt" || fail "kcat producer exited with status $?"
dump >"$SF_TMP/before.txt"
check_dump "$SF_TMP/before.txt" 50000 || fail "before the restart"
stop_broker b1
start_broker b1
dump >"$SF_TMP/after.txt"
cmp -s "$SF_TMP/before.txt" "$SF_TMP/after.txt" ||
    fail "records after the restart differ: $(diff "$SF_TMP/before.txt" "$SF_TMP/after.txt" | head -n 5)"
log "50,000 records identical after a clean restart"

# New records continue each partition's offsets.
lines 'n%05d:after-restart-%05d' 1000 | kc -P -t restart -K: || fail "producing after the restart"
dump >"$SF_TMP/after2.txt"
check_dump "$SF_TMP/after2.txt" 51000 || fail "after producing 1,000 more"
grep -c 'after-restart' "$SF_TMP/after2.txt" | grep -qx 1000 || fail "the 1,000 new records are not all there"

# produce_and_read TAG: 100 records in, all of them read back.
produce_and_read() {
    lines "$1%05d:$1-%05d" 100 | kc -P -t restart -K: -X message.timeout.ms=30000 ||
        fail "producing ($1) failed"
    local n
    n=$(kc -C -t restart -o beginning -e -q -f '%s\n' | grep -c "^$1-" || true)
    assert_eq 100 "$n" "records tagged $1 read back"
}

# --- ZooKeeper restarts while the broker runs --------------------------------------------
stop_zk
produce_and_read zkdown
broker_alive b1
log "serving while ZooKeeper is down"
start_zk
wait_until 60 "broker 1 registered after the ZooKeeper restart" zk exists "$node"
produce_and_read zkup
kill9_zk
sleep 1
start_zk
wait_until 60 "broker 1 registered after ZooKeeper was killed" zk exists "$node"
produce_and_read zkkill
broker_alive b1
log "ZooKeeper restart (SIGTERM and SIGKILL): still serving and registered"

# --- session expiry ----------------------------------------------------------------------
owner1=$(zk stat "$node" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["ephemeralOwner"])')
kill -STOP "$(broker_pid b1)"
# The node goes away when ZooKeeper expires the stopped broker's session (6s timeout).
expired=0
for ((i = 0; i < 80; i++)); do
    if ! zk exists "$node" 2>/dev/null; then
        expired=1
        break
    fi
    sleep 0.5
done
kill -CONT "$(broker_pid b1)"
((expired)) || fail "ZooKeeper did not expire the stopped broker's session within 40s"
log "session expired while the broker was stopped; resumed it"
wait_until 60 "broker 1 to register again after session expiry" zk exists "$node"
owner2=$(zk stat "$node" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["ephemeralOwner"])')
[[ $owner2 != 0 && $owner2 != "$owner1" ]] || fail "registration after expiry has owner $owner2 (before: $owner1)"
produce_and_read expired
broker_alive b1
log "re-registered under a new session and serving"
stop_broker b1
pass
