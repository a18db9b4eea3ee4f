#!/usr/bin/env bash
# confluent-kafka-python and kafka-python (api_version auto-detection) produce and consume
# 10,000 records each; content, headers, offsets and per-partition order are checked.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka kafka
start_zk
start_broker b1 num.partitions=3
cd "$SF_TEST_DIR"
"$PY" py_clients.py "$BOOTSTRAP" || fail "python clients"
broker_alive b1
pass
