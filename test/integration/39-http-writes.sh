#!/usr/bin/env bash
# The REST API's writes on a three-broker cluster (http_writes.py: topics, configs, records,
# consumer groups, bad input, concurrent HTTP producers, each acknowledged record read back
# with a Kafka client); then a follower stops fetching and the leaders' metrics and readiness
# show it, a record for a partition led by another broker is forwarded to its leader, and a
# broker's HTTP API goes away with the broker.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
need_cmd curl
CLUSTER_HTTP=1 start_cluster zookeeper.session.timeout.ms=10000 num.partitions=3 \
    replica.lag.time.max.ms=2000 health.max.consumer.lag=0
cd "$SF_TEST_DIR"
"$PY" http_writes.py "$ALL" "http://127.0.0.1:${HP[1]}" "http://127.0.0.1:${HP[2]}" \
    "http://127.0.0.1:${HP[3]}" || fail "HTTP writes"

# A one-replica topic on broker 3 only, written through broker 1.
h1=http://127.0.0.1:${HP[1]}
cluster=$(curl -sf "$h1/v3/clusters" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["cluster_id"])')
c=$h1/v3/clusters/$cluster

# A follower that stops fetching (SIGSTOP, within its ZooKeeper session): the leaders' metrics
# show their partitions under-replicated and count the ISR shrink, then the expansion.
curl -sf -X POST -H 'Content-Type: application/json' "$c/topics" \
    -d '{"topic_name": "watched", "partitions_count": 3, "replication_factor": 3}' >/dev/null ||
    fail "creating watched"
"$PY" "$SF_TEST_DIR/cluster_state.py" "127.0.0.1:$ZK_PORT" watched wait-isr 3 30 || fail "watched ISR"
metric() { # metric NAME: its value summed over brokers 1 and 3
    { curl -sf "$h1/metrics"; curl -sf "http://127.0.0.1:${HP[3]}/metrics"; } |
        awk -v m="$1" '$1 == m { s += $2 } END { print s + 0 }'
}
kill -STOP "$(broker_pid b2)"
wait_until 20 "under-replicated partitions in the metrics" \
    bash -c "$(declare -f metric); h1=$h1; hp3=${HP[3]}; $(declare -p HP); (( \$(metric streamflow_under_replicated_partitions) > 0 ))"
# ... and their readiness reports it as a warning, still ready.
ready=$(curl -s -w ' %{http_code}' "$h1/health/ready"; curl -s -w ' %{http_code}' "http://127.0.0.1:${HP[3]}/health/ready")
grep -q '"name":"replication","status":"WARN"' <<<"$ready" || fail "no replication warning: $ready"
[[ $ready != *" 503"* ]] || fail "an under-replicated leader is not ready: $ready"
wait_until 10 "the ISR shrinks in the metrics" \
    bash -c "$(declare -f metric); h1=$h1; $(declare -p HP); (( \$(metric streamflow_isr_shrinks_total) > 0 ))"
kill -CONT "$(broker_pid b2)"
wait_until 30 "the ISR expansions in the metrics" \
    bash -c "$(declare -f metric); h1=$h1; $(declare -p HP); (( \$(metric streamflow_isr_expands_total) > 0 ))"
# A record for a partition another broker leads, produced through broker 1, lands there.
part=$(kc -L -t watched -J | "$PY" -c 'import json,sys
ps = json.load(sys.stdin)["topics"][0]["partitions"]
print([p["partition"] for p in ps if p["leader"] != 1][0])') || fail "every partition of watched is led by broker 1"
out=$(curl -s -X POST -H 'Content-Type: application/json' "$c/topics/watched/records" \
    -d "{\"partition_id\": $part, \"value\": {\"type\": \"STRING\", \"data\": \"forwarded\"}}")
grep -q '"error_code":200' <<<"$out" || fail "producing through a broker that does not lead: $out"
got=$(kc -C -t watched -p "$part" -o beginning -c 1 -e -q -f '%s')
assert_eq forwarded "$got" "the record produced through broker 1"

stop_broker b1
port_open "${HP[1]}" && fail "HTTP still served after the broker stopped"
broker_alive b3

# The lag of a group without members (spread-g, from http_writes.py) follows its coordinator:
# the broker that takes the group's bucket over loads the group at once.
exports_lag() { # exports_lag N: broker N's /metrics has spread-g's lag
    curl -sf "http://127.0.0.1:${HP[$1]}/metrics" | grep -q '^streamflow_consumergroup_lag{group="spread-g"'
}
wait_until 20 "a coordinator exporting spread-g's lag" bash -c \
    "$(declare -f exports_lag); $(declare -p HP); exports_lag 2 || exports_lag 3"
if exports_lag 2; then coord=2 other=3; else coord=3 other=2; fi
stop_broker "b$coord"
wait_until 30 "spread-g's lag on its new coordinator" bash -c \
    "$(declare -f exports_lag); $(declare -p HP); exports_lag $other"
pass
