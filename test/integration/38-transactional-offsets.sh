#!/usr/bin/env bash
# Transactional offsets on a 3-broker cluster (confluent-kafka): offsets sent to a transaction
# stay pending (in ZooKeeper, under the group's coordinator bucket) until the transaction ends,
# a read_committed consumer's committed() does not see them meanwhile, an abort drops them and
# a commit makes them the group's. Then a consume-transform-produce pipeline copies 100,000
# numbered records in transactions that commit the consumer's offsets, through a kill -9 of
# the pipeline (its restart fences the first producer and goes on from the committed offsets)
# and of the group's coordinator: the output holds every record exactly once. Then the same
# through libstreamflow's consumer and transactional producer (eoscopy), killed and restarted;
# offsets sent with the group metadata of a generation the member left are refused (KIP-447).
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster min.insync.replicas=2
cd "$SF_TEST_DIR"
ZKHP=127.0.0.1:$ZK_PORT
eos() { "$PY" eos.py "$ALL" "$@"; }
addr() { echo "127.0.0.1:${SF_BROKER_PORT[$1]}"; }
progress() { cat "$SF_TMP/progress" 2>/dev/null || echo 0; }

create_topic toffs 3 3
eos offsets toffs g-offsets "$ZKHP" || fail "pending transactional offsets"

N=100000
create_topic ein 3 3
create_topic eout 3 3 min.insync.replicas=2
eos fill ein "$N" || fail "filling ein"

# The pipeline is killed after a few transactions, then restarted.
sf_bg "$PY" eos.py "$ALL" pipeline ein eout g-eos "$SF_TMP/progress"
PIPE=$!
wait_until 60 "5 transactions" bash -c "(( \$(cat '$SF_TMP/progress' 2>/dev/null || echo 0) >= 5 ))"
kill -9 "$PIPE"
wait "$PIPE" 2>/dev/null || true
log "pipeline killed after $(progress) transactions"
rm -f "$SF_TMP/progress"
sf_bg "$PY" eos.py "$ALL" pipeline ein eout g-eos "$SF_TMP/progress"
PIPE=$!
# The coordinator of the group goes too, while transactions go on.
wait_until 60 "3 more transactions" bash -c "(( \$(cat '$SF_TMP/progress' 2>/dev/null || echo 0) >= 3 ))"
coord=$("$PY" groups.py coordinator "$ZKHP" g-eos "$(addr b1)" "$(addr b2)" "$(addr b3)") ||
    fail "no coordinator of g-eos"
victim=b${coord%% *}
kill9_broker "$victim"
log "killed $victim, the coordinator of g-eos, after $(progress) transactions"
wait "$PIPE" || fail "the pipeline across the coordinator's failover"
start_broker "$victim"
eos verify eout "$N" || fail "exactly once"

# The same pipeline on libstreamflow (eoscopy), killed after a few transactions and run again.
EOSCOPY=$SF_BUILD_DIR/test/integration/eoscopy
create_topic lout 3 3 min.insync.replicas=2
"$EOSCOPY" "$ALL" ein lout g-lsf lsf-copy "$SF_TMP/lprogress" &
PIPE=$!
SF_PIDS+=("$PIPE")
wait_until 60 "5 libstreamflow transactions" \
    bash -c "(( \$(cat '$SF_TMP/lprogress' 2>/dev/null || echo 0) >= 5 ))"
kill -9 "$PIPE"
wait "$PIPE" 2>/dev/null || true
log "libstreamflow pipeline killed after $(cat "$SF_TMP/lprogress") transactions"
"$EOSCOPY" "$ALL" ein lout g-lsf lsf-copy "$SF_TMP/lprogress" ||
    fail "the libstreamflow pipeline's second run: status $?"
eos verify lout "$N" || fail "exactly once through libstreamflow"

# KIP-447: offsets sent with the group metadata of a generation the member has left (another
# member joined since) are refused; with the current metadata they are accepted.
"$EOSCOPY" "$ALL" ein lout g-stale lsf-stale --stale-generation ||
    fail "offsets of a left generation"
pass
