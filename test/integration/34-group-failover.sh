#!/usr/bin/env bash
# Group coordination that survives restarts and failover. Two static members (KIP-345,
# group.instance.id) share a topic; one is closed and started again under the same instance
# id and gets its partitions back without the other being rebalanced. Then the group's
# coordinator is killed (SIGKILL): the controller gives its bucket to another broker, which
# takes the generation and the members over from ZooKeeper (/consumers/<group>/group), so
# neither member is rebalanced, and records produced afterwards all arrive, each once.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster
cd "$SF_TEST_DIR"
create_topic gt 6 3
st=$SF_TMP/status
"$PY" group_failover.py "$ALL" "$st" &
py=$!
wait_until 90 "the static members to settle" grep -q READY "$st"
victim=
for n in b1 b2 b3; do
    if grep -q "group gs: generation [0-9]* is stable" "$(broker_log "$n")"; then victim=$n; fi
done
[[ -n $victim ]] || fail "no broker logged a stable group gs"
log "killing gs's coordinator $victim"
kill9_broker "$victim"
echo KILLED >>"$st"
wait "$py" || fail "static members and coordinator failover"
grep -q "group gs: generation [0-9]* with 2 member(s) taken over" "$SF_TMP"/b*/streamflowd.log ||
    fail "no broker took group gs's members over"
pass
