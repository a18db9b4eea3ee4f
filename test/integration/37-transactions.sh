#!/usr/bin/env bash
# Transactions on a 3-broker cluster with confluent-kafka's transactional producer: committed
# and aborted transactions (read_committed sees only the committed records, read_uncommitted
# all, control batches reach no application), fencing by a second producer with the same
# transactional.id, a transaction that commits through its coordinator's failover (kill -9),
# and a transaction left open aborted by its coordinator at its timeout.
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

create_topic tfence 3 3
txn fence tfence || fail "fencing"

# The coordinator of txn-fo is killed while a transaction is open; the next owner of its
# bucket loads the state from ZooKeeper and the commit goes through there.
create_topic tfo 3 3 min.insync.replicas=2
sf_bg "$PY" transactions.py "$ALL" failover tfo "$SF_TMP/ready" "$SF_TMP/go"
FO=$!
wait_until 60 "the second transaction to be open" test -e "$SF_TMP/ready"
coord=$("$PY" groups.py coordinator "$ZKHP" txn-fo "$(addr b1)" "$(addr b2)" "$(addr b3)") ||
    fail "no coordinator of txn-fo"
victim=b${coord%% *}
kill9_broker "$victim"
touch "$SF_TMP/go"
wait "$FO" || fail "the transaction across the coordinator's failover"
start_broker "$victim"

create_topic thang 3 3
txn hanging thang || fail "a timed-out transaction"
pass
