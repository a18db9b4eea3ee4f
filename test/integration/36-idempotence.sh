#!/usr/bin/env bash
# Idempotent producers on a 3-broker cluster. InitProducerId (v0-v5) hands out distinct ids
# from every broker, each broker from its own block of 1000 reserved in ZooKeeper at
# /latest_producer_id_block (Kafka's JSON); an empty transactional id is INVALID_REQUEST, and a
# transactional one is served by its coordinator alone (NOT_COORDINATOR elsewhere), the epoch
# bumped when asked again. Hand-made batches against partition 0's leader: a retry
# is answered with the first append's offset and stores nothing, also for the oldest of five
# batches in flight; a gap or an old sequence is OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch
# INVALID_PRODUCER_EPOCH, a new epoch must start at sequence 0, a producer id without a
# sequence is INVALID_RECORD, and so are two batches of a producer for one partition; DescribeProducers on the leader gives the producer's epoch and
# last sequence (NOT_LEADER_OR_FOLLOWER on a follower). The retry is recognised by the
# follower that becomes leader when the leader is killed (it rebuilt the state from what it
# replicated) and by the killed broker, restarted, once it leads again (rebuilt from its log:
# no snapshot after a SIGKILL). Last, confluent-kafka's
# idempotent producer (acks=all, five requests in flight) streams numbered records while the
# leader of partition 0 is killed and restarted three times: every acknowledged record is at
# its offset, and no record is in the topic twice or out of order. The same for libstreamflow's
# producer (streamflow produce, idempotent by default) through two leader kills, and
# streamflow topic describe-producers shows it on every partition.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster min.insync.replicas=2
cd "$SF_TEST_DIR"
ZKHP=127.0.0.1:$ZK_PORT
idem() { "$PY" idempotence.py "$ZKHP" "$@"; }
state() { "$PY" cluster_state.py "$ZKHP" "$1" "${@:2}"; }
addr() { echo "127.0.0.1:${SF_BROKER_PORT[$1]}"; }

idem ids "$(addr b1)" "$(addr b2)" "$(addr b3)" || fail "InitProducerId"

create_topic seq 1 3 min.insync.replicas=2
last=$(idem batches seq "$ALL") || fail "sequence checks: $last"
log "sequence checks passed; last batch (pid epoch seq base): $last"

# The leader goes: the new one knows the producer from the batches it replicated.
leader=b$(state seq leader 0)
kill9_broker "$leader"
state seq wait-leader-not "${SF_BROKER_ID[$leader]}" 30 || fail "no new leader off $leader"
# shellcheck disable=SC2086 # four numbers
last=$(idem retry seq $last) || fail "the retry on the new leader: $last"
log "the new leader b$(state seq leader 0) answered the retry with the first offset"
start_broker "$leader"
state seq wait-isr 3 60 || fail "$leader did not rejoin the ISR"
controller=$("$PY" failover.py "$ZKHP" controller) || fail "no controller"
"$PY" elect_leaders.py "$(addr "b$controller")" 2 0 all >/dev/null || fail "ElectLeaders"
wait_until 30 "$leader leading seq-0 again" \
    bash -c "[[ \$('$PY' cluster_state.py '$ZKHP' seq leader 0) == ${SF_BROKER_ID[$leader]} ]]"
# shellcheck disable=SC2086
last=$(idem retry seq $last) || fail "the retry on the restarted broker: $last"
log "the restarted $leader, leading again, answered the retry from the state rebuilt from its log"

# An idempotent client through three leader kills.
create_topic idem 3 3 min.insync.replicas=2
ACKED=$SF_TMP/acked.txt
: >"$ACKED"
sf_bg "$PY" acked_producer.py "$ALL" idem "$ACKED" "$SF_TMP/stop" all 100000000 idempotent
PROD=$!
more_acks 5000
for round in 1 2 3; do
    victim=b$(state idem leader 0)
    kill9_broker "$victim"
    log "round $round: killed $victim (leader of idem-0) after $(wc -l <"$ACKED") acknowledgements"
    state idem wait-leader-not "${SF_BROKER_ID[$victim]}" 30 || fail "leadership stayed on $victim"
    more_acks 3000
    start_broker "$victim"
    state idem wait-isr 3 60 || fail "$victim did not rejoin the ISRs"
    more_acks 2000
done
touch "$SF_TMP/stop"
wait "$PROD" || fail "the idempotent producer exited with status $?"
log "$(wc -l <"$ACKED") records acknowledged"
"$PY" verify_acked.py "$ALL" idem "$ACKED" exactly-once || fail "exactly once, in order"

# libstreamflow's producer (idempotent by default with acks=all) through two leader kills:
# streamflow produce exits 0 once every record is acknowledged.
create_topic cli-idem 3 3 min.insync.replicas=2
N=400000
# 20,000 numbered lines a second for 20 s (a background job's stdin would be /dev/null: the
# pipe is made inside the job).
sf_bg bash -c '"$1" idempotence.py - lines "$2" | "$3" produce cli-idem -b "$4" --verbose' \
    _ "$PY" "$N" "$SF_BUILD_DIR/admin/streamflow" "$ALL" >"$SF_TMP/cli.out" 2>&1
CLI=$!
for round in 1 2; do
    sleep 4
    alive "$CLI" || fail "streamflow produce ended before kill $round: $(tail -3 "$SF_TMP/cli.out")"
    victim=b$(state cli-idem leader 0)
    kill9_broker "$victim"
    log "streamflow produce: round $round, killed $victim (leader of cli-idem-0)"
    state cli-idem wait-leader-not "${SF_BROKER_ID[$victim]}" 30 || fail "leadership stayed on $victim"
    start_broker "$victim"
    state cli-idem wait-isr 3 60 || fail "$victim did not rejoin the ISRs"
done
wait "$CLI" || fail "streamflow produce exited with status $?: $(tail -5 "$SF_TMP/cli.out")"
grep -qx "$N records produced" "$SF_TMP/cli.out" || fail "streamflow produce: $(tail -3 "$SF_TMP/cli.out")"
idem exactly-once cli-idem "$ALL" "$N" || fail "libstreamflow: exactly once, in order"

# streamflow topic describe-producers: the leaders know the producer on every partition.
SF=("$SF_BUILD_DIR/admin/streamflow")
"${SF[@]}" topic describe-producers cli-idem -b "$ALL" --output json >"$SF_TMP/dp.json" ||
    fail "streamflow topic describe-producers exited with status $?"
"$PY" - "$SF_TMP/dp.json" <<'PY' || fail "describe-producers: $(cat "$SF_TMP/dp.json")"
import json, sys
d = json.load(open(sys.argv[1]))
parts = {p["partition"] for p in d["producers"] if p["last_sequence"] >= 0 and p["epoch"] >= 0}
assert d["topic"] == "cli-idem" and parts == {0, 1, 2}, d
PY
out=$("${SF[@]}" topic describe-producers cli-idem -b "$ALL" --partition 1) ||
    fail "describe-producers --partition 1: status $?"
[[ $(head -n 1 <<<"$out") == PARTITION* ]] && ! grep -q '^[02] ' <<<"$out" ||
    fail "describe-producers --partition 1: $out"
"${SF[@]}" topic describe-producers no-such-topic -b "$ALL" --timeout 5000 2>"$SF_TMP/dp.err" &&
    fail "describe-producers of a missing topic succeeded"
grep -q UNKNOWN_TOPIC_OR_PARTITION "$SF_TMP/dp.err" || fail "describe-producers: $(cat "$SF_TMP/dp.err")"
log "streamflow topic describe-producers lists the producer on every partition"

for n in b1 b2 b3; do broker_alive "$n"; done
pass
