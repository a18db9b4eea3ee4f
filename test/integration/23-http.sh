#!/usr/bin/env bash
# The HTTP server (http.listeners): /health/live and /health/ready, Prometheus metrics that
# move as records flow, the REST API's cluster, brokers, topics and partitions in the REST
# Proxy v3 format, JSON errors for unknown resources, a body past http.max.body.bytes refused
# without harm to the broker, and the shipped alert rules and Grafana dashboard naming only
# metrics the broker exports.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
need_py yaml
need_cmd curl
start_zk
hport=$(free_port)
start_broker b1 http.listeners="http://127.0.0.1:$hport" http.max.body.bytes=4096 \
    num.partitions=3
cd "$SF_TEST_DIR"
"$PY" http_api.py "$BOOTSTRAP" "http://127.0.0.1:$hport" || fail "HTTP API"

# The shipped alert rules and dashboard name only metrics the broker exports.
mon=$SF_SRC_DIR/packaging/monitoring
"$PY" monitoring_check.py "http://127.0.0.1:$hport" "$mon/streamflow-alerts.yml" \
    "$mon/streamflow-dashboard.json" || fail "alert rules or dashboard"
if command -v promtool >/dev/null; then
    promtool check rules "$mon/streamflow-alerts.yml" || fail "promtool check rules"
    sed "s|RULES|$mon/streamflow-alerts.yml|" monitoring_rules_test.yml >"$SF_TMP/rules_test.yml"
    promtool test rules "$SF_TMP/rules_test.yml" || fail "promtool test rules"
fi

# A body past http.max.body.bytes: refused (413), and the broker keeps serving.
code=$(head -c 100000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' --data-binary @- \
    -H 'Content-Type: application/json' "http://127.0.0.1:$hport/v3/clusters")
[[ $code == 413 || $code == 400 ]] || fail "an oversized body got HTTP $code"
curl -sf "http://127.0.0.1:$hport/health/live" | grep -q '"UP"' || fail "not live after a big body"
broker_alive b1

# Without http.listeners nothing listens on HTTP.
stop_broker b1
port_open "$hport" && fail "HTTP still served after the broker stopped"
start_broker b2
port_open "$hport" && fail "HTTP served without http.listeners"
broker_alive b2
pass
