#!/usr/bin/env bash
# Topic config changes: AlterConfigs through confluent-kafka and kafka-python,
# IncrementalAlterConfigs v0 and v1 as raw requests. ZooKeeper, DescribeConfigs and the
# running partition logs (max.message.bytes, segment.bytes, retention.ms) follow each
# change; refused changes change nothing; the overrides hold after a restart.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka kafka
start_zk
start_broker b1 log.retention.check.interval.ms=200
cd "$SF_TEST_DIR"
"$PY" alter_configs.py "$BOOTSTRAP" "127.0.0.1:$ZK_PORT" "$(broker_datadir b1)" || fail "alter configs"
broker_alive b1
grep -q "the config of acfg" "$(broker_log b1)" || fail "the broker did not log the config changes"

stop_broker b1
start_broker b1
"$PY" alter_configs.py "$BOOTSTRAP" "127.0.0.1:$ZK_PORT" "$(broker_datadir b1)" restarted ||
    fail "alter configs after a restart"
broker_alive b1
pass
