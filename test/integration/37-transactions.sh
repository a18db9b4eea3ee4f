#!/usr/bin/env bash
# Transactions on a 3-broker cluster with confluent-kafka's transactional producer: committed
# and aborted transactions (read_committed sees only the committed records, read_uncommitted
# all, control batches reach no application; through confluent-kafka and libstreamflow's
# consumer), fencing by a second producer with the same
# transactional.id, a transaction that commits through its coordinator's failover (kill -9),
# and a transaction left open aborted by its coordinator at its timeout; streamflow
# transactions list|describe show them; libstreamflow's transactional producer (streamflow
# produce --transactional-id), killed with a transaction open; a transaction's first batch on
# a partition refused until the coordinator confirms the partition is in it (KIP-890).
# The state of each transactional id is in ZooKeeper at /transactions/<id>.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster min.insync.replicas=2 transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
cd "$SF_TEST_DIR"
ZKHP=127.0.0.1:$ZK_PORT
txn() { "$PY" transactions.py "$ALL" "$@"; }
addr() { echo "127.0.0.1:${SF_BROKER_PORT[$1]}"; }

create_topic tca 3 3 min.insync.replicas=2
txn commit-abort tca || fail "commit and abort"
state=$("$PY" zkq.py "$ZKHP" get /streamflow/transactions/txn-ca) || fail "no /transactions/txn-ca"
[[ $state == *'"state":"CompleteCommit"'* ]] || fail "txn-ca in ZooKeeper: $state"
log "txn-ca in ZooKeeper: $state"

# libstreamflow's consumer (streamflow consume) reads the same topic both ways; --to-end ends
# although each partition's last offset is a marker.
SF=("$SF_BUILD_DIR/admin/streamflow" -b "$ALL")
"${SF[@]}" consume tca --from-beginning --to-end --isolation-level read_committed -q \
    >"$SF_TMP/rc.txt" || fail "streamflow consume --isolation-level read_committed: status $?"
want=$( (seq 0 99; seq 200 299) | sort -n | md5sum)
[[ $(sort -n "$SF_TMP/rc.txt" | md5sum) == "$want" ]] ||
    fail "read_committed through libstreamflow: $(wc -l <"$SF_TMP/rc.txt") records"
"${SF[@]}" consume tca --from-beginning --to-end -q >"$SF_TMP/ru.txt" ||
    fail "streamflow consume (read_uncommitted): status $?"
[[ $(sort -n "$SF_TMP/ru.txt" | md5sum) == "$(seq 0 299 | md5sum)" ]] ||
    fail "read_uncommitted through libstreamflow: $(wc -l <"$SF_TMP/ru.txt") records"
log "streamflow consume: read_committed 200 records, read_uncommitted 300"

create_topic tfence 3 3
txn fence tfence || fail "fencing"

# Transaction verification: a leader appends a transaction's first batch only once the
# coordinator confirms the partition is in the transaction (raw requests).
create_topic tverify 1 3
"$PY" txn_verify.py "$ZKHP" "$ALL" tverify || fail "transaction verification"

# streamflow transactions list|describe: every id with its state, from any broker.
"${SF[@]}" transactions list --output json >"$SF_TMP/tl.json" ||
    fail "streamflow transactions list: status $?"
"$PY" - "$SF_TMP/tl.json" <<'PY' || fail "transactions list: $(cat "$SF_TMP/tl.json")"
import json, sys
d = {t["transactional_id"]: t for t in json.load(open(sys.argv[1]))["transactions"]}
assert d["txn-ca"]["state"] == "CompleteCommit" and d["txn-fence"]["producer_id"] >= 0, d
PY
out=$("${SF[@]}" transactions describe txn-ca) || fail "transactions describe txn-ca: status $?"
grep -q '^STATE  *CompleteCommit$' <<<"$out" || fail "transactions describe txn-ca: $out"
if "${SF[@]}" transactions describe no-such-txn >"$SF_TMP/nf.txt" 2>&1; then
    fail "describing an unknown transactional id succeeded"
fi
grep -q TRANSACTIONAL_ID_NOT_FOUND "$SF_TMP/nf.txt" || fail "unknown id: $(cat "$SF_TMP/nf.txt")"

# The coordinator of txn-fo is killed while a transaction is open; the next owner of its
# bucket loads the state from ZooKeeper and the commit goes through there.
create_topic tfo 3 3 min.insync.replicas=2
sf_bg "$PY" transactions.py "$ALL" failover tfo "$SF_TMP/ready" "$SF_TMP/go"
FO=$!
wait_until 60 "the second transaction to be open" test -e "$SF_TMP/ready"
"${SF[@]}" transactions describe txn-fo --output json >"$SF_TMP/fo.json" ||
    fail "transactions describe txn-fo: status $?"
"$PY" - "$SF_TMP/fo.json" <<'PY' || fail "the open transaction: $(cat "$SF_TMP/fo.json")"
import json, sys
d = json.load(open(sys.argv[1]))
parts = sorted((p["topic"], p["partition"]) for p in d["partitions"])
assert d["state"] == "Ongoing" and d["start_time_ms"] > 0, d
assert parts == [("tfo", 0), ("tfo", 1), ("tfo", 2)], parts
PY
coord=$("$PY" groups.py coordinator "$ZKHP" txn-fo "$(addr b1)" "$(addr b2)" "$(addr b3)") ||
    fail "no coordinator of txn-fo"
victim=b${coord%% *}
kill9_broker "$victim"
touch "$SF_TMP/go"
wait "$FO" || fail "the transaction across the coordinator's failover"
start_broker "$victim"

create_topic thang 3 3
txn hanging thang || fail "a timed-out transaction"

# libstreamflow's transactional producer: streamflow produce --transactional-id commits every
# 100 lines. A producer killed with a transaction open (its records written) is fenced by the
# next one with the id, whose init aborts that transaction: read_committed never sees it.
create_topic tcli 3 3 min.insync.replicas=2
seq 1 1000 | "${SF[@]}" produce tcli --transactional-id cli-txn --transaction-size 100 ||
    fail "streamflow produce --transactional-id: status $?"
mkfifo "$SF_TMP/in"
exec 3<>"$SF_TMP/in" # open both ends: neither open below waits for the other
"${SF[@]}" produce tcli --transactional-id cli-txn --transaction-size 100000 <"$SF_TMP/in" &
CLIP=$!
SF_PIDS+=("$CLIP")
seq 5001 5050 >&3
wait_until 30 "the open transaction's records" bash -c \
    "'${SF[0]}' -b '$ALL' consume tcli --from-beginning --to-end -q | grep -qx 5050"
kill -9 "$CLIP"
wait "$CLIP" 2>/dev/null || true
exec 3>&-
seq 2001 2100 | "${SF[@]}" produce tcli --transactional-id cli-txn --transaction-size 30 ||
    fail "the second streamflow produce --transactional-id: status $?"
"${SF[@]}" consume tcli --from-beginning --to-end --isolation-level read_committed -q \
    >"$SF_TMP/cli.txt" || fail "reading tcli: status $?"
[[ $(sort -n "$SF_TMP/cli.txt" | md5sum) == "$( (seq 1 1000; seq 2001 2100) | md5sum)" ]] ||
    fail "libstreamflow's transactions: read_committed got $(wc -l <"$SF_TMP/cli.txt") records"
log "streamflow produce --transactional-id: 1,100 records committed, the killed one's 50 not"
pass
