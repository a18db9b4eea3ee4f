#!/usr/bin/env bash
# Consuming over HTTP on a three-broker cluster (http_consumers.py: the plain API's events and
# Server-Sent Event streams, groups and members, REST Proxy v2's consumer instances); clients
# that drop their streams leave the brokers serving, and an HTTP consumer dies with its broker.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
need_cmd curl
CLUSTER_HTTP=1 start_cluster num.partitions=3
cd "$SF_TEST_DIR"
"$PY" http_consumers.py "$ALL" "http://127.0.0.1:${HP[1]}" "http://127.0.0.1:${HP[2]}" ||
    fail "HTTP consumers"

# Streams cut by their clients (curl killed) and a consumer instance left behind: the broker
# still answers, and stops cleanly with them.
h1=http://127.0.0.1:${HP[1]}
for i in 1 2 3; do
    curl -sN "$h1/api/topics/feed/subscribe" >/dev/null &
    pids+=($!)
done
curl -sf -X POST -H 'Content-Type: application/json' -d '{"name": "left"}' "$h1/consumers/lg" >/dev/null ||
    fail "creating a consumer instance"
curl -sf -X POST -H 'Content-Type: application/json' -d '{"topics": ["feed"]}' \
    "$h1/consumers/lg/instances/left/subscription" || fail "subscribing it"
sleep 1
kill -9 "${pids[@]}"
wait "${pids[@]}" 2>/dev/null || true
curl -sf "$h1/api/nodes" >/dev/null || fail "the broker does not answer after dropped streams"
# Its network threads' busy time and the requests waiting are exported.
curl -sf "$h1/metrics" | grep -q '^streamflow_network_thread_cpu_seconds_total{thread="0"} [0-9.]*$' ||
    fail "no network thread CPU time in the metrics"
curl -sf "$h1/metrics" | grep -q '^streamflow_purgatory_size{thread="metadata"} [0-9]*$' ||
    fail "no purgatory size in the metrics"
curl -sf "$h1/metrics" | grep -q '^streamflow_log_flush_duration_seconds_count [0-9]*$' ||
    fail "no log flush histogram in the metrics"
broker_alive b1
# A stream and an instance still open when the broker stops: it stops cleanly all the same.
curl -sN "$h1/api/topics/feed/subscribe" >/dev/null &
open_stream=$!
curl -sf -X POST -H 'Content-Type: application/json' -d '{"name": "m9", "topics": ["feed"]}' \
    "$h1/api/groups/g9/members" >/dev/null || fail "adding a member"
curl -sN "$h1/api/groups/g9/members/m9/events" >/dev/null &
member_stream=$!
sleep 1
stop_broker b1
wait "$open_stream" "$member_stream" 2>/dev/null || true
port_open "${HP[1]}" && fail "HTTP still served after the broker stopped"
broker_alive b2
pass
