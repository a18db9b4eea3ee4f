#!/usr/bin/env bash
# streamflow cluster health: its checks and exit status as the cluster degrades: healthy (0),
# a lagging group (4, or 1 with --strict), a stopped broker (under-replicated: 4; fewer
# brokers than --brokers: 1), the ISR below min.insync.replicas (1), no broker at all (3).
. "$(dirname "$0")/lib.sh"
need_cmd kcat
need_py confluent_kafka
SF=$SF_BUILD_DIR/admin/streamflow
[[ -x $SF ]] || fail "$SF not built"
start_cluster
create_topic checked 3 3 min.insync.replicas=2
lines 'r%d' 10 | kc -P -t checked -p 0 || fail "producing"
"$PY" - "$ALL" <<'PY' || fail "committing"
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "slow", "broker.address.family": "v4"})
c.commit(offsets=[TopicPartition("checked", 0, 2)], asynchronous=False)
c.close()
PY

# health EXPECTED_EXIT ARGS...: run it, check the exit status, keep the output in $out.
health() {
    local want=$1 rc=0
    shift
    out=$("$SF" -b "$ALL" cluster health "$@" 2>&1) || rc=$?
    [[ $rc == "$want" ]] || fail "cluster health $*: exit $rc, expected $want: $out"
}
health 0 --brokers 3
grep -q '^OK  *brokers  *3 live of the 3 expected' <<<"$out" || fail "brokers line: $out"
health 0 --max-lag 8
health 4 --max-lag 7
grep -q '^WARNING  *consumer_lag .*1 of 1 groups more than 7 records behind; most behind: slow, 8' <<<"$out" ||
    fail "lag line: $out"
health 1 --max-lag 7 --strict
health 2 --brokers zero

stop_broker b3
wait_until 30 "the ISRs to lose broker 3" bash -c "'$SF' -b '$ALL' cluster health >/dev/null; [[ \$? == 4 ]]"
health 4
grep -q '^WARNING  *under_replicated_partitions  *3 under-replicated' <<<"$out" || fail "$out"
health 1 --brokers 3
health 1 --brokers 3 --output json
"$PY" -c 'import json,sys; d = json.loads(sys.argv[1]); assert d["status"] == "CRITICAL", d; assert {c["name"]: c["status"] for c in d["checks"]}["brokers"] == "CRITICAL", d' "$out" ||
    fail "JSON output: $out"
stop_broker b2
ALL=127.0.0.1:${SF_BROKER_PORT[b1]}
wait_until 30 "the ISRs to fall below min.insync.replicas" bash -c "'$SF' -b '$ALL' cluster health >/dev/null; [[ \$? == 1 ]]"
health 1
grep -q '^CRITICAL min_insync_replicas  *3 partitions with fewer in-sync replicas' <<<"$out" || fail "$out"
stop_broker b1
health 3 --timeout 2000
pass
