#!/usr/bin/env bash
# Dynamic broker configs: IncrementalAlterConfigs and AlterConfigs on BROKER resources (the
# cluster default "" and broker 1 itself) land in ZooKeeper where Kafka keeps them
# (/config/brokers/<default>, /config/brokers/1, with change notifications), show in
# DescribeConfigs with their sources, and govern the running logs at once (LogAppendTime,
# retention) without a restart; refused changes write nothing. After a restart the broker
# reads them back from ZooKeeper.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
start_broker b1 log.retention.hours=100 log.retention.check.interval.ms=200
cd "$SF_TEST_DIR"
"$PY" dynamic_configs.py "$BOOTSTRAP" "127.0.0.1:$ZK_PORT" || fail "dynamic configs"
broker_alive b1
grep -q "dynamic broker config /config/brokers/<default>" "$(broker_log b1)" ||
    fail "the broker did not log the change of the cluster default"
grep -q "the cluster-wide dynamic broker config" "$(broker_log b1)" ||
    fail "the broker did not log the admin request"

# The broker reads them back from ZooKeeper when it starts.
stop_broker b1
start_broker b1
"$PY" dynamic_configs.py "$BOOTSTRAP" "127.0.0.1:$ZK_PORT" restarted ||
    fail "dynamic configs after a restart"
broker_alive b1
pass
